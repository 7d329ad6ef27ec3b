//! Changelog Markdown transcripts (github.com/thechangelog/transcripts, CC BY-SA 4.0).
//!
//! A paragraph opens with the speaker's name in bold (`**Jerod Santo:** …`); a paragraph without one
//! continues the last speaker. Anchors such as `\[04:33\]` or `\[00:04:01.06\]` stand in front of the
//! words they time, every few minutes. An anchor starts a new segment whose start is measured; every
//! other time is interpolated by character count between the surrounding anchors (after the last
//! anchor, at the episode's own measured speaking rate) and marked estimated. Bold labels that are not
//! people (`**Break**: \[24:52\]`) are kept only as timing points.

use crate::quotes::transcript::Segment;
use crate::quotes::transcript::import::ms;

/// Characters per second when an episode has too few anchors to measure its own rate.
const DEFAULT_CHARS_PER_SECOND: f64 = 15.0;
const NON_SPEECH_LABELS: &[&str] =
    &["break", "jingle", "outro", "intro", "sample", "song", "ad", "sponsor", "music"];

/// One piece of speech (or a bare timing point when `text` is empty).
struct Piece {
    speaker: String,
    text: String,
    anchor: Option<f64>,
}

/// `\[mm:ss\]`, `\[hh:mm:ss\]`, optional `.fraction`, at the start of `text`, also behind a
/// transcriber's word for what could not be written (`\[unintelligible 00:57:17.06\]`, `\[jingle
/// 01:02\]`): the seconds, the mark's length, and that word, which stays in the text without its time.
fn anchor_at(text: &str) -> Option<(f64, usize, Option<&str>)> {
    let rest = text.strip_prefix("\\[")?;
    let close = rest.find("\\]")?;
    let inner = &rest[..close];
    let (label, time) = match inner.rsplit_once(' ') {
        Some((label, time)) if !label.is_empty() && label.chars().all(|c| c.is_alphabetic() || c == ' ') => {
            (Some(label), time)
        }
        _ => (None, inner),
    };
    if time.is_empty() || !time.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.') {
        return None;
    }
    let parts: Vec<&str> = time.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let mut seconds = 0.0;
    for part in &parts {
        seconds = seconds * 60.0 + part.parse::<f64>().ok()?;
    }
    Some((seconds, 2 + close + 2, label))
}

/// Markdown to plain speech: links keep their text, emphasis marks and escapes go.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut idx = 0;
    while idx < chars.len() {
        let c = chars[idx];
        match c {
            '\\' if idx + 1 < chars.len() => {
                out.push(chars[idx + 1]);
                idx += 2;
                continue;
            }
            '*' => {}
            '[' => {
                // `[text](url)` → `text`
                if let Some(close) = chars[idx + 1..].iter().position(|&c| c == ']') {
                    let after = idx + 1 + close + 1;
                    if chars.get(after) == Some(&'(')
                        && let Some(paren) = chars[after..].iter().position(|&c| c == ')')
                    {
                        out.extend(&chars[idx + 1..idx + 1 + close]);
                        idx = after + paren + 1;
                        continue;
                    }
                }
                out.push(c);
            }
            _ => out.push(c),
        }
        idx += 1;
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The speaker label a paragraph opens with, and the rest of it. `Some(None)` is a non-speech label.
fn speaker_of(paragraph: &str) -> Option<(Option<String>, &str)> {
    let rest = paragraph.trim_start_matches('#').trim_start().strip_prefix("**")?;
    let close = rest.find("**")?;
    let label = rest[..close].trim();
    let after = &rest[close + 2..];
    let (label, after) = match label.strip_suffix(':') {
        Some(label) => (label.trim(), after),
        None => match after.strip_prefix(':') {
            Some(after) => (label, after),
            None => return Some((None, after)),
        },
    };
    if label.is_empty() || NON_SPEECH_LABELS.contains(&label.to_lowercase().as_str()) {
        return Some((None, after));
    }
    Some((Some(label.to_string()), after))
}

/// Splits a paragraph at its anchors.
fn split_at_anchors(text: &str) -> Vec<(Option<f64>, String)> {
    let mut out: Vec<(Option<f64>, String)> = vec![(None, String::new())];
    let mut rest = text;
    while !rest.is_empty() {
        if let Some((seconds, len, label)) = anchor_at(rest) {
            out.push((Some(seconds), label.map(|label| format!("\\[{label}\\] ")).unwrap_or_default()));
            rest = &rest[len..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        out.last_mut().expect("one entry at least").1.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.into_iter()
        .map(|(anchor, text)| (anchor, plain(&text)))
        .filter(|(anchor, text)| anchor.is_some() || !text.is_empty())
        .collect()
}

/// Parses a Changelog transcript into segments labelled with the speakers' names.
pub fn parse_changelog(markdown: &str) -> Vec<Segment> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut current: Option<String> = None;
    for paragraph in markdown.split("\n\n") {
        // A stray control character (the corpus has U+001D) is no text: it separates like a space.
        let paragraph: String = paragraph.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let paragraph = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
        if paragraph.is_empty() {
            continue;
        }
        let (speaker, body) = match speaker_of(&paragraph) {
            Some((Some(name), body)) => {
                current = Some(name.clone());
                (Some(name), body.to_string())
            }
            Some((None, body)) => {
                current = None;
                (None, body.to_string())
            }
            None if paragraph.starts_with('#') => (None, paragraph.clone()),
            None => (current.clone(), paragraph.clone()),
        };
        for (anchor, text) in split_at_anchors(&body) {
            match &speaker {
                Some(name) if !text.is_empty() => pieces.push(Piece { speaker: name.clone(), text, anchor }),
                // Non-speech or an anchor with no words after it: a timing point only.
                _ if anchor.is_some() => {
                    pieces.push(Piece { speaker: String::new(), text: String::new(), anchor })
                }
                _ => {}
            }
        }
    }
    time_pieces(pieces)
}

/// Gives every piece a start and end: measured at anchors, interpolated by characters elsewhere.
fn time_pieces(mut pieces: Vec<Piece>) -> Vec<Segment> {
    // An anchor earlier than one before it is a typo in the source: ignore it.
    let mut latest = f64::NEG_INFINITY;
    for piece in &mut pieces {
        if let Some(anchor) = piece.anchor {
            if anchor < latest {
                piece.anchor = None;
            } else {
                latest = anchor;
            }
        }
    }
    let mut offsets = Vec::with_capacity(pieces.len() + 1);
    let mut chars = 0usize;
    for piece in &pieces {
        offsets.push(chars);
        chars += piece.text.chars().count() + 1;
    }
    offsets.push(chars);
    let anchors: Vec<(usize, f64)> =
        pieces.iter().enumerate().filter_map(|(idx, p)| p.anchor.map(|a| (offsets[idx], a))).collect();
    let rate = match (anchors.first(), anchors.last()) {
        (Some(first), Some(last)) if last.1 - first.1 > 60.0 && last.0 > first.0 => {
            (last.0 - first.0) as f64 / (last.1 - first.1)
        }
        _ => DEFAULT_CHARS_PER_SECOND,
    };
    // The time at a character offset: between the anchors around it, else extrapolated at `rate`.
    let time_at = |offset: usize| -> f64 {
        let after = anchors.partition_point(|(at, _)| *at <= offset);
        match (after.checked_sub(1).map(|i| anchors[i]), anchors.get(after)) {
            (Some((a_off, a_t)), Some((b_off, b_t))) => {
                a_t + (b_t - a_t) * (offset - a_off) as f64 / (*b_off - a_off).max(1) as f64
            }
            (Some((a_off, a_t)), None) => a_t + (offset - a_off) as f64 / rate,
            (None, Some((b_off, b_t))) => (b_t - (*b_off - offset) as f64 / rate).max(0.0),
            (None, None) => offset as f64 / rate,
        }
    };
    let mut segments = Vec::new();
    for (idx, piece) in pieces.iter().enumerate() {
        if piece.text.is_empty() {
            continue;
        }
        let start_s = piece.anchor.unwrap_or_else(|| time_at(offsets[idx]));
        let next = pieces.get(idx + 1);
        let end_s = match next.and_then(|next| next.anchor) {
            Some(anchor) => anchor,
            None => time_at(offsets[idx + 1] - 1),
        };
        segments.push(Segment {
            speaker: piece.speaker.clone(),
            start_s: ms(start_s),
            end_s: ms(end_s.max(start_s)),
            text: piece.text.clone(),
            start_estimated: piece.anchor.is_none(),
            end_estimated: next.and_then(|next| next.anchor).is_none(),
            words: None,
        });
    }
    segments
}

/// The episode page of a file in the transcripts repository: `podcast/the-changelog-500.md` →
/// `https://changelog.com/podcast/500`. The episode slug is what follows the show's name in the file
/// name; `name_prefix` is that name (such as `the-changelog`) when known, else the last `-` part is used.
pub fn changelog_source_url(path: &str, name_prefix: Option<&str>) -> Option<String> {
    let (show, file) = path.trim_start_matches("./").rsplit_once('/')?;
    let show = show.rsplit('/').next()?;
    let stem = file.strip_suffix(".md")?;
    let slug = match name_prefix.and_then(|prefix| stem.strip_prefix(prefix)?.strip_prefix('-')) {
        Some(slug) => slug,
        None => stem.rsplit('-').next()?,
    };
    (!slug.is_empty()).then(|| format!("https://changelog.com/{show}/{slug}"))
}
