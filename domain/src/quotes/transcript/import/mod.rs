//! Importers: one transcript file in a known format becomes the segments of one pipeline run.
//!
//! Each importer is a pure function of the file's text (the builder reads the file and writes the run).
//! Speech-recognition formats give measured times; where a format leaves a word untimed, its times are
//! interpolated and marked `estimated`. The Changelog Markdown importer is the interesting one: the
//! text is human-edited but timed only by sparse anchors, so everything between anchors is estimated.

mod changelog;
mod json;
mod timed_text;

use crate::clean::{self, TextKind};
use crate::quotes::transcript::{RunKind, Segment, Word};

pub use changelog::{changelog_source_url, parse_changelog};
pub use json::{parse_assemblyai, parse_deepgram, parse_podcasting20, parse_whisperx};
pub use timed_text::{parse_rttm, parse_srt, parse_webvtt};

/// The formats `builder import --format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    ChangelogMd,
    Whisperx,
    Assemblyai,
    Deepgram,
    Podcasting20,
    Webvtt,
    /// SubRip, as publishers put it in a feed (`<podcast:transcript type="application/x-subrip">`).
    Srt,
    /// pyannote RTTM speaker turns joined with a timed text transcript (WebVTT or SRT).
    Rttm,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::ChangelogMd,
        Format::Whisperx,
        Format::Assemblyai,
        Format::Deepgram,
        Format::Podcasting20,
        Format::Webvtt,
        Format::Srt,
        Format::Rttm,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Format::ChangelogMd => "changelog-md",
            Format::Whisperx => "whisperx",
            Format::Assemblyai => "assemblyai",
            Format::Deepgram => "deepgram",
            Format::Podcasting20 => "podcasting20",
            Format::Webvtt => "webvtt",
            Format::Srt => "srt",
            Format::Rttm => "rttm",
        }
    }

    pub fn parse(code: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.code() == code)
    }

    /// Human-edited formats make human-edited runs.
    pub fn kind(self) -> RunKind {
        match self {
            Format::ChangelogMd => RunKind::HumanEdited,
            _ => RunKind::Asr,
        }
    }

    /// The pipeline id a run gets when the importer is not told one.
    pub fn default_pipeline(self) -> &'static str {
        match self {
            Format::ChangelogMd => "changelog-human",
            Format::Rttm => "pyannote+text",
            other => other.code(),
        }
    }
}

/// Imports one file. `companion` is the text transcript an RTTM file is joined with.
pub fn import(format: Format, text: &str, companion: Option<&str>) -> Result<Vec<Segment>, String> {
    let segments = match format {
        Format::ChangelogMd => parse_changelog(text),
        Format::Whisperx => parse_whisperx(text)?,
        Format::Assemblyai => parse_assemblyai(text)?,
        Format::Deepgram => parse_deepgram(text)?,
        Format::Podcasting20 => parse_podcasting20(text)?,
        Format::Webvtt => parse_webvtt(text)?,
        Format::Srt => parse_srt(text)?,
        Format::Rttm => {
            let companion = companion.ok_or("an RTTM file needs --text, a WebVTT or SRT transcript")?;
            parse_rttm(text, companion)?
        }
    };
    let segments = tidy(segments);
    if segments.is_empty() {
        return Err("the file holds no speech".into());
    }
    Ok(segments)
}

/// Segments a machine wrote, made to pass the rules of stored text ([`clean::tidied`]): an invisible
/// character in a service's words (a soft hyphen, a zero width space) is left out rather than
/// refusing the whole transcript. A word or a segment left empty goes; a speaker label left empty
/// is `UNKNOWN`, so its speech stays.
pub fn tidy(segments: Vec<Segment>) -> Vec<Segment> {
    segments
        .into_iter()
        .map(|mut segment| {
            segment.speaker = clean::tidied(&segment.speaker, TextKind::Line);
            if segment.speaker.trim().is_empty() {
                segment.speaker = "UNKNOWN".into();
            }
            segment.text = clean::tidied(&segment.text, TextKind::Prose);
            if let Some(words) = &mut segment.words {
                for word in words.iter_mut() {
                    word.w = clean::tidied(&word.w, TextKind::Line);
                }
                words.retain(|word| !word.w.trim().is_empty());
            }
            segment
        })
        .filter(|segment| !segment.text.trim().is_empty())
        .collect()
}

/// Rounds to milliseconds, so imported files stay readable and diff well.
fn ms(seconds: f64) -> f64 {
    super::round_ms(seconds)
}

/// Fills in untimed words (`None` times) by interpolating between their timed neighbours inside the
/// segment, and marks them estimated.
fn interpolate_words(words: Vec<(String, Option<f64>, Option<f64>)>, start_s: f64, end_s: f64) -> Vec<Word> {
    let n = words.len();
    let mut out: Vec<Word> = Vec::with_capacity(n);
    for idx in 0..n {
        let (w, start, end) = &words[idx];
        match (start, end) {
            (Some(start), Some(end)) => {
                out.push(Word { w: w.clone(), start_s: ms(*start), end_s: ms(*end), estimated: false })
            }
            _ => {
                let before = out.last().map_or(start_s, |word| word.end_s);
                let after =
                    words[idx + 1..].iter().find_map(|(_, start, _)| *start).unwrap_or(end_s).max(before);
                let untimed_run =
                    words[idx..].iter().take_while(|(_, start, _)| start.is_none()).count().max(1);
                let step = (after - before) / untimed_run as f64;
                out.push(Word {
                    w: w.clone(),
                    start_s: ms(before),
                    end_s: ms(before + step),
                    estimated: true,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
