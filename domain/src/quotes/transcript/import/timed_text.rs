//! Timed text: WebVTT with voice tags (`<v Name>`), SRT, and pyannote RTTM speaker turns joined with a
//! WebVTT or SRT transcript that has times but no speakers.

use crate::quotes::transcript::Segment;
use crate::quotes::transcript::import::ms;

/// `hh:mm:ss.ttt`, `mm:ss.ttt`, with `.` or `,` (SRT) before the fraction.
fn timestamp(text: &str) -> Option<f64> {
    let text = text.trim().replace(',', ".");
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let mut seconds = 0.0;
    for part in parts {
        let value: f64 = part.parse().ok()?;
        seconds = seconds * 60.0 + value;
    }
    Some(seconds)
}

/// One cue: times and text lines.
struct Cue {
    start: f64,
    end: f64,
    lines: Vec<String>,
}

fn cues(text: &str) -> Result<Vec<Cue>, String> {
    let normalised = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    for block in normalised.split("\n\n") {
        let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
        let Some(timing_idx) = lines.iter().position(|line| line.contains("-->")) else { continue };
        let timing = lines[timing_idx];
        let (start, rest) = timing.split_once("-->").expect("contains -->");
        let end = rest.split_whitespace().next().unwrap_or_default();
        let (Some(start), Some(end)) = (timestamp(start), timestamp(end)) else {
            return Err(format!("bad cue timing `{timing}`"));
        };
        out.push(Cue { start, end, lines: lines[timing_idx + 1..].iter().map(|l| l.to_string()).collect() });
    }
    Ok(out)
}

/// The voice of a cue line and its text without tags: `<v Ana Lima>Hello</v>` → (`Ana Lima`, `Hello`).
fn voice_and_text(line: &str) -> (Option<String>, String) {
    let mut voice = None;
    let mut text = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            text.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let tag = &rest[open + 1..open + close];
        if let Some(spec) = tag.strip_prefix('v') {
            // `<v Name>` or `<v.class Name>`
            if let Some((_, name)) = spec.split_once(' ') {
                voice = Some(name.trim().to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    let text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    (voice, text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// WebVTT: each cue line with a voice becomes a segment of that voice; a line without one continues
/// the cue's previous voice. Lines of one cue share its time in proportion to their length.
pub fn parse_webvtt(text: &str) -> Result<Vec<Segment>, String> {
    if !text.trim_start_matches('\u{feff}').starts_with("WEBVTT") {
        return Err("a WebVTT file starts with `WEBVTT`".into());
    }
    Ok(voiced(cues(text)?))
}

/// SRT (SubRip): numbered cues, `,` before the fraction, no header. Its lines are read as WebVTT's
/// are, so a publisher's `<v Name>` is kept; a cue without one is `UNKNOWN`'s.
pub fn parse_srt(text: &str) -> Result<Vec<Segment>, String> {
    Ok(voiced(cues(text.trim_start_matches('\u{feff}'))?))
}

/// Cues as segments, one per voice of each cue.
fn voiced(cues: Vec<Cue>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for cue in cues {
        let mut parts: Vec<(String, String)> = Vec::new();
        for line in &cue.lines {
            let (voice, text) = voice_and_text(line);
            if text.is_empty() {
                continue;
            }
            match (voice, parts.last_mut()) {
                (None, Some(last)) => {
                    last.1.push(' ');
                    last.1.push_str(&text);
                }
                (voice, _) => parts.push((voice.unwrap_or_else(|| "UNKNOWN".into()), text)),
            }
        }
        let total: usize = parts.iter().map(|(_, t)| t.chars().count()).sum::<usize>().max(1);
        let mut at = cue.start;
        for (speaker, text) in parts {
            let end = at + (cue.end - cue.start) * text.chars().count() as f64 / total as f64;
            let estimated_cut = end < cue.end - 1e-9;
            let start_estimated = at > cue.start + 1e-9;
            out.push(Segment {
                speaker,
                start_s: ms(at),
                end_s: ms(end),
                text,
                start_estimated,
                end_estimated: estimated_cut,
                words: None,
            });
            at = end;
        }
    }
    out
}

/// RTTM turns (`SPEAKER file 1 start duration <NA> <NA> label <NA> <NA>`) joined with a timed
/// transcript: each cue goes to the speaker whose turns overlap it most.
pub fn parse_rttm(rttm: &str, transcript: &str) -> Result<Vec<Segment>, String> {
    let mut turns: Vec<(f64, f64, String)> = Vec::new();
    for (idx, line) in rttm.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || fields[0] != "SPEAKER" {
            continue;
        }
        let (Some(start), Some(duration), Some(label)) = (
            fields.get(3).and_then(|f| f.parse::<f64>().ok()),
            fields.get(4).and_then(|f| f.parse::<f64>().ok()),
            fields.get(7),
        ) else {
            return Err(format!(
                "RTTM line {} is not `SPEAKER file chan start dur <NA> <NA> label …`",
                idx + 1
            ));
        };
        turns.push((start, start + duration, label.to_string()));
    }
    if turns.is_empty() {
        return Err("the RTTM file has no SPEAKER lines".into());
    }
    let body = if transcript.trim_start_matches('\u{feff}').starts_with("WEBVTT") {
        transcript.to_string()
    } else {
        format!("WEBVTT\n\n{transcript}")
    };
    let mut out: Vec<Segment> = Vec::new();
    for cue in cues(&body)? {
        let text = cue.lines.iter().map(|l| voice_and_text(l).1).collect::<Vec<_>>().join(" ");
        if text.trim().is_empty() {
            continue;
        }
        let overlap =
            |(start, end, _): &(f64, f64, String)| (end.min(cue.end) - start.max(cue.start)).max(0.0);
        let nearest = |(start, end, _): &(f64, f64, String)| {
            let middle = (cue.start + cue.end) / 2.0;
            -((start + end) / 2.0 - middle).abs()
        };
        let best = turns
            .iter()
            .max_by(|a, b| overlap(a).total_cmp(&overlap(b)).then(nearest(a).total_cmp(&nearest(b))))
            .expect("turns is not empty");
        out.push(Segment {
            speaker: best.2.clone(),
            start_s: ms(cue.start),
            end_s: ms(cue.end),
            text,
            start_estimated: false,
            end_estimated: false,
            words: None,
        });
    }
    Ok(out)
}
