//! JSON formats of speech-recognition services: WhisperX, AssemblyAI, Deepgram, and the Podcasting 2.0
//! transcript JSON (`application/json` in the `podcast:transcript` tag).
//!
//! They are read through `serde_json::Value` rather than typed structs: each service adds and renames
//! fields between versions, and we need only a handful.

use serde_json::Value;

use crate::quotes::transcript::import::{interpolate_words, ms};
use crate::quotes::transcript::{Segment, Word};

fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text)
        .map_err(|err| format!("not JSON: line {} column {}: {err}", err.line(), err.column()))
}

fn number(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64).filter(|n| n.is_finite())
}

fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// A label from a string or a number (`0` → `speaker_0`).
fn label(value: Option<&Value>, prefix: &str) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(format!("{prefix}{n}")),
        _ => None,
    }
}

fn segment(speaker: String, start_s: f64, end_s: f64, text: &str, words: Option<Vec<Word>>) -> Segment {
    Segment {
        speaker,
        start_s: ms(start_s),
        end_s: ms(end_s.max(start_s)),
        text: text.split_whitespace().collect::<Vec<_>>().join(" "),
        start_estimated: false,
        end_estimated: false,
        words,
    }
}

/// WhisperX: `segments[]` with `start`, `end`, `text`, `speaker` and `words[]` (`word`, `start`, `end`);
/// numerals often come without word times, which are then interpolated.
pub fn parse_whisperx(text: &str) -> Result<Vec<Segment>, String> {
    let root = parse(text)?;
    let items = root.get("segments").and_then(Value::as_array).ok_or("no `segments` array")?;
    let mut out = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let (Some(start), Some(end)) = (number(item, "start"), number(item, "end")) else {
            return Err(format!("segments[{idx}] has no start or end"));
        };
        let text = string(item, "text").unwrap_or_default();
        if text.trim().is_empty() {
            continue;
        }
        let speaker = label(item.get("speaker"), "SPEAKER_").unwrap_or_else(|| "UNKNOWN".into());
        let words = item.get("words").and_then(Value::as_array).map(|words| {
            let raw = words
                .iter()
                .filter_map(|w| {
                    Some((string(w, "word")?.trim().to_string(), number(w, "start"), number(w, "end")))
                })
                .filter(|(w, ..)| !w.is_empty())
                .collect();
            interpolate_words(raw, start, end)
        });
        out.push(segment(speaker, start, end, text, words));
    }
    Ok(out)
}

/// AssemblyAI: `utterances[]` with `speaker` (`A`, `B`, …), `start`/`end` in milliseconds, `text`, `words[]`.
pub fn parse_assemblyai(text: &str) -> Result<Vec<Segment>, String> {
    let root = parse(text)?;
    let items = root
        .get("utterances")
        .and_then(Value::as_array)
        .ok_or("no `utterances` array (turn on speaker_labels)")?;
    let mut out = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let (Some(start), Some(end)) = (number(item, "start"), number(item, "end")) else {
            return Err(format!("utterances[{idx}] has no start or end"));
        };
        let speaker = label(item.get("speaker"), "").ok_or(format!("utterances[{idx}] has no speaker"))?;
        let words = item.get("words").and_then(Value::as_array).map(|words| {
            words
                .iter()
                .filter_map(|w| {
                    Some(Word {
                        w: string(w, "text")?.to_string(),
                        start_s: ms(number(w, "start")? / 1000.0),
                        end_s: ms(number(w, "end")? / 1000.0),
                        estimated: false,
                    })
                })
                .collect()
        });
        out.push(segment(
            speaker,
            start / 1000.0,
            end / 1000.0,
            string(item, "text").unwrap_or_default(),
            words,
        ));
    }
    Ok(out.into_iter().filter(|s| !s.text.is_empty()).collect())
}

/// Deepgram: `results.utterances[]` when requested with `utterances=true`, else the words of the first
/// channel's first alternative grouped into turns by their `speaker`.
pub fn parse_deepgram(text: &str) -> Result<Vec<Segment>, String> {
    let root = parse(text)?;
    let results = root.get("results").ok_or("no `results` object")?;
    let word_of = |w: &Value| -> Option<Word> {
        Some(Word {
            w: string(w, "punctuated_word").or_else(|| string(w, "word"))?.to_string(),
            start_s: ms(number(w, "start")?),
            end_s: ms(number(w, "end")?),
            estimated: false,
        })
    };
    if let Some(utterances) = results.get("utterances").and_then(Value::as_array) {
        let mut out = Vec::new();
        for (idx, item) in utterances.iter().enumerate() {
            let (Some(start), Some(end)) = (number(item, "start"), number(item, "end")) else {
                return Err(format!("results.utterances[{idx}] has no start or end"));
            };
            let speaker = label(item.get("speaker"), "speaker_").unwrap_or_else(|| "speaker_0".into());
            let words: Option<Vec<Word>> = item
                .get("words")
                .and_then(Value::as_array)
                .map(|words| words.iter().filter_map(word_of).collect());
            out.push(segment(speaker, start, end, string(item, "transcript").unwrap_or_default(), words));
        }
        return Ok(out.into_iter().filter(|s| !s.text.is_empty()).collect());
    }
    let words = results
        .pointer("/channels/0/alternatives/0/words")
        .and_then(Value::as_array)
        .ok_or("neither `results.utterances` nor `results.channels[0].alternatives[0].words`")?;
    let mut out: Vec<Segment> = Vec::new();
    for w in words {
        let Some(word) = word_of(w) else { continue };
        let speaker = label(w.get("speaker"), "speaker_").unwrap_or_else(|| "speaker_0".into());
        match out.last_mut() {
            Some(last) if last.speaker == speaker => {
                last.end_s = word.end_s;
                last.text.push(' ');
                last.text.push_str(&word.w);
                last.words.get_or_insert_with(Vec::new).push(word);
            }
            _ => out.push(segment(speaker, word.start_s, word.end_s, &word.w.clone(), Some(vec![word]))),
        }
    }
    Ok(out)
}

/// Podcasting 2.0 JSON: `segments[]` of `speaker`, `startTime`, `endTime`, `body`, often one word each;
/// consecutive pieces of one speaker become one segment whose words are the pieces.
pub fn parse_podcasting20(text: &str) -> Result<Vec<Segment>, String> {
    let root = parse(text)?;
    let items = root.get("segments").and_then(Value::as_array).ok_or("no `segments` array")?;
    let mut out: Vec<Segment> = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let (Some(start), Some(end)) = (number(item, "startTime"), number(item, "endTime")) else {
            return Err(format!("segments[{idx}] has no startTime or endTime"));
        };
        let body = string(item, "body").unwrap_or_default().trim();
        if body.is_empty() {
            continue;
        }
        let speaker = label(item.get("speaker"), "").unwrap_or_else(|| "UNKNOWN".into());
        let word = Word { w: body.to_string(), start_s: ms(start), end_s: ms(end), estimated: false };
        match out.last_mut() {
            Some(last) if last.speaker == speaker => {
                last.end_s = last.end_s.max(word.end_s);
                last.text.push(' ');
                last.text.push_str(body);
                last.words.get_or_insert_with(Vec::new).push(word);
            }
            _ => out.push(segment(speaker, start, end, body, Some(vec![word]))),
        }
    }
    Ok(out)
}
