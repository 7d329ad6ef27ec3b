//! Shows, episodes, pipeline runs and speaker-name votes: the quote service's content.
//!
//! A contributor writes `content/shows/<show>/show.json`, `<show>/<episode>/episode.json`,
//! `<episode>/runs/<pipeline>.json` and `<episode>/names.json`; [`validate_run`] and friends report every
//! problem with its field, like the recipe validator. Times are seconds as `f64`. A run marks which of its
//! times were measured and which were estimated (`start_estimated`, `end_estimated`, per word
//! `estimated`), so an estimate is never presented as a measurement.

pub mod compare;
pub mod export;
pub mod hearing;
pub mod identify;
pub mod import;
pub mod llm;
pub mod names;
pub mod normalise;
pub mod publish;
pub mod review;
pub mod url;
pub mod voice;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::clean::{self, TextKind};

pub use names::{LabelVotes, NameState, Names, ResolvedName, Vote, VoteSource};
pub use url::{episode_id, normalise_source_url};

/// Seconds rounded to the millisecond, the precision of every time we write or answer.
pub(crate) fn round_ms(seconds: f64) -> f64 {
    rounded(seconds, 1000.0)
}

/// `value` rounded to a multiple of `1 / steps`, and never `-0.0`: JSON keeps the sign (an empty window
/// once answered `"speech_s": -0.0`), and both an empty `f64` sum and a small negative value rounded
/// are `-0.0`. Adding `0.0` turns `-0.0` into `0.0` and leaves every other value as it is.
pub(crate) fn rounded(value: f64, steps: f64) -> f64 {
    (value * steps).round() / steps + 0.0
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// `content/shows/<show>/show.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Show {
    pub title: String,
    /// The show's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// SPDX id of the licence of the show's transcripts, such as `CC-BY-SA-4.0`. Episodes inherit it.
    pub licence: String,
    /// The credit line the licence asks for, such as `© Changelog Media LLC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    /// The show's RSS feed, which the site follows: new items are taken in as they appear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_url: Option<String>,
}

/// Whether a person hosts or visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Host,
    Guest,
}

/// One person known to take part in an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub role: Role,
    /// The person asked that no voiceprint be made of their voice (or an editor withdrew it): no label
    /// named as them adds to one, and one already made is dropped, whichever episode says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_voiceprint: bool,
}

impl Person {
    /// The roster of an episode from its speakers' names in order of first turn: the first hosts,
    /// the others visit.
    pub fn roster(names: &[String]) -> Vec<Person> {
        names
            .iter()
            .enumerate()
            .map(|(idx, name)| Person {
                name: name.clone(),
                role: if idx == 0 { Role::Host } else { Role::Guest },
                no_voiceprint: false,
            })
            .collect()
    }
}

/// `content/shows/<show>/<episode>/episode.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Episode {
    pub title: String,
    /// Where the episode is published; its normalised form gives the episode id.
    pub source_url: String,
    /// `YYYY-MM-DD`.
    pub published: String,
    #[serde(default)]
    pub roster: Vec<Person>,
    /// The run to publish as the transcript; absent means a human-edited run, else the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_run: Option<String>,
    /// Overrides the show's licence (SPDX id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub licence: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    /// Where the text came from, such as the upstream transcript file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    /// The episode's audio file or player page (http or https): answers then link to the second
    /// a quote starts at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_url: Option<String>,
}

/// How a run was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// Speech recognition and diarization, untouched by a person.
    Asr,
    /// Text and speaker turns checked by a person.
    HumanEdited,
}

/// One word with its times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Word {
    pub w: String,
    pub start_s: f64,
    pub end_s: f64,
    /// The times were interpolated, not measured.
    #[serde(default, skip_serializing_if = "is_false")]
    pub estimated: bool,
}

/// One speaker turn (or a part of one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Segment {
    /// The diarization label of the voice, such as `SPEAKER_00`; names are decided in `names.json`.
    pub speaker: String,
    pub start_s: f64,
    pub end_s: f64,
    pub text: String,
    /// `start_s` was estimated, not measured.
    #[serde(default, skip_serializing_if = "is_false")]
    pub start_estimated: bool,
    /// `end_s` was estimated, not measured.
    #[serde(default, skip_serializing_if = "is_false")]
    pub end_estimated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<Word>>,
}

impl Segment {
    /// A turn of measured times and no word times.
    pub fn said(speaker: &str, start_s: f64, end_s: f64, text: &str) -> Segment {
        Segment {
            speaker: speaker.to_string(),
            start_s,
            end_s,
            text: text.to_string(),
            start_estimated: false,
            end_estimated: false,
            words: None,
        }
    }
}

/// `…/runs/<pipeline>.json`: what one processing pipeline made of an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Such as `whisperx-3.1+pyannote-3.1`; equals the file name without `.json`.
    pub pipeline: String,
    pub kind: RunKind,
    /// `YYYY-MM-DD`: when the run was made; the newest run is canonical when no other rule decides.
    pub created: String,
    /// The format the run was imported from (`whisperx`, `changelog-md`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
    pub segments: Vec<Segment>,
    /// One speaker embedding per label, when the diarization pipeline exported them (voice
    /// match compares them with voiceprints of earlier episodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker_embeddings: Option<SpeakerEmbeddings>,
    /// The names a transcription service gave its own labels (AssemblyAI's speaker identification:
    /// label → name), kept beside the labels so the service's naming is one source's vote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker_names: Option<BTreeMap<String, String>>,
}

/// Per-label speaker embeddings of one run, and the model that made them: vectors of different models
/// are not comparable, so a voiceprint is only ever matched against one of the same model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpeakerEmbeddings {
    /// Such as `pyannote/wespeaker-voxceleb-resnet34-LM`.
    pub model: String,
    /// Label → embedding; every vector has the same length.
    pub labels: BTreeMap<String, Vec<f32>>,
    /// Label → the seconds of speech its embedding was made from, when the maker says
    /// (`builder identify` does).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seconds: BTreeMap<String, f64>,
}

/// A pipeline id: lower-case letters, digits and `.+_-`, starting with a letter or digit.
pub fn is_valid_pipeline(id: &str) -> bool {
    (1..=80).contains(&id.len())
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".+_-".contains(c))
}

/// A date in `YYYY-MM-DD` form (the calendar is not checked beyond month 1-12 and day 1-31).
pub fn is_valid_date(date: &str) -> bool {
    let parts: Vec<&str> = date.split('-').collect();
    let number = |s: &str, len: usize| s.len() == len && s.chars().all(|c| c.is_ascii_digit());
    matches!(parts.as_slice(), [y, m, d] if number(y, 4) && number(m, 2) && number(d, 2)
        && (1..=12).contains(&m.parse::<u8>().unwrap_or(0)) && (1..=31).contains(&d.parse::<u8>().unwrap_or(0)))
}

pub fn validate_show(show: &Show) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if show.title.trim().is_empty() {
        problems.push(Diagnostic::new("title", "must not be empty"));
    }
    if show.licence.trim().is_empty() || show.licence.contains(char::is_whitespace) {
        problems.push(Diagnostic::new("licence", "must be an SPDX licence id such as CC-BY-SA-4.0"));
    }
    problems.extend(clean::check("title", &show.title, TextKind::Line));
    problems.extend(clean::check("description", &show.description, TextKind::Prose));
    for (field, text) in [("url", &show.url), ("attribution", &show.attribution)] {
        problems.extend(text.as_deref().and_then(|text| clean::check(field, text, TextKind::Line)));
    }
    let web = |url: &str| ::url::Url::parse(url).is_ok_and(|url| matches!(url.scheme(), "http" | "https"));
    if show.feed_url.as_deref().is_some_and(|url| !web(url)) {
        problems.push(Diagnostic::new("feed_url", "must be the http(s) address of the show's RSS feed"));
    }
    problems
}

pub fn validate_episode(episode: &Episode) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if episode.title.trim().is_empty() {
        problems.push(Diagnostic::new("title", "must not be empty"));
    }
    problems.extend(clean::check("title", &episode.title, TextKind::Line));
    for (field, text) in [("attribution", &episode.attribution), ("derived_from", &episode.derived_from)] {
        problems.extend(text.as_deref().and_then(|text| clean::check(field, text, TextKind::Line)));
    }
    if normalise_source_url(&episode.source_url).is_none() {
        problems.push(Diagnostic::new("source_url", "must be an http(s) URL with a host"));
    }
    if !is_valid_date(&episode.published) {
        problems.push(Diagnostic::new("published", "must be a date YYYY-MM-DD"));
    }
    if episode.audio_url.as_deref().is_some_and(|url| normalise_source_url(url).is_none()) {
        problems.push(Diagnostic::new("audio_url", "must be an http(s) URL with a host"));
    }
    for (idx, person) in episode.roster.iter().enumerate() {
        let field = format!("roster[{idx}].name");
        if person.name.trim().is_empty() {
            problems.push(Diagnostic::new(field, "must not be empty"));
        } else {
            problems.extend(clean::check(&field, &person.name, TextKind::Line));
        }
    }
    if let Some(run) = &episode.canonical_run
        && !is_valid_pipeline(run)
    {
        problems.push(Diagnostic::new("canonical_run", "must be a pipeline id"));
    }
    problems
}

/// Every problem of a run: times out of order, empty text, words outside their segment.
pub fn validate_run(run: &Run) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if !is_valid_pipeline(&run.pipeline) {
        problems.push(Diagnostic::new("pipeline", "must be lower-case letters, digits and . + _ -"));
    }
    if !is_valid_date(&run.created) {
        problems.push(Diagnostic::new("created", "must be a date YYYY-MM-DD"));
    }
    if run.segments.is_empty() {
        problems.push(Diagnostic::new("segments", "a run has at least one segment"));
    }
    if let Some(format) = &run.imported_from {
        problems.extend(clean::check("imported_from", format, TextKind::Line));
    }
    if let Some(embeddings) = &run.speaker_embeddings {
        problems.extend(validate_embeddings(embeddings, &run.segments));
    }
    let mut previous_start = 0.0;
    for (idx, segment) in run.segments.iter().enumerate() {
        let field = |name: &str| format!("segments[{idx}].{name}");
        if segment.speaker.trim().is_empty() {
            problems.push(Diagnostic::new(field("speaker"), "must not be empty"));
        }
        problems.extend(clean::check(&field("speaker"), &segment.speaker, TextKind::Line));
        if segment.text.trim().is_empty() {
            problems.push(Diagnostic::new(field("text"), "must not be empty"));
        }
        problems.extend(clean::check(&field("text"), &segment.text, TextKind::Prose));
        if !(segment.start_s.is_finite() && segment.start_s >= 0.0) {
            problems.push(Diagnostic::new(field("start_s"), "must be a number of seconds, 0 or more"));
        }
        if !(segment.end_s.is_finite() && segment.end_s >= segment.start_s) {
            problems.push(Diagnostic::new(field("end_s"), "must not be before start_s"));
        }
        if segment.start_s < previous_start {
            problems.push(Diagnostic::new(field("start_s"), "segments must be in order of start time"));
        }
        previous_start = segment.start_s;
        for (word_idx, word) in segment.words.iter().flatten().enumerate() {
            problems.extend(clean::check(
                &format!("segments[{idx}].words[{word_idx}].w"),
                &word.w,
                TextKind::Line,
            ));
            let inside = word.start_s >= segment.start_s - 0.5
                && word.end_s <= segment.end_s + 0.5
                && word.end_s >= word.start_s;
            if !inside {
                problems.push(Diagnostic::new(
                    format!("segments[{idx}].words[{word_idx}]"),
                    "word times must lie inside the segment and not run backwards",
                ));
            }
        }
    }
    problems
}

fn validate_embeddings(embeddings: &SpeakerEmbeddings, segments: &[Segment]) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if embeddings.model.trim().is_empty() {
        problems.push(Diagnostic::new("speaker_embeddings.model", "must name the embedding model"));
    }
    problems.extend(clean::check("speaker_embeddings.model", &embeddings.model, TextKind::Line));
    let dims = embeddings.labels.values().next().map_or(0, Vec::len);
    for (label, vector) in &embeddings.labels {
        let field = format!("speaker_embeddings.labels.{label}");
        if !segments.iter().any(|segment| &segment.speaker == label) {
            problems.push(Diagnostic::new(field.clone(), "no segment has this speaker label"));
        }
        if vector.is_empty() || vector.len() != dims {
            problems.push(Diagnostic::new(
                field.clone(),
                format!("every embedding has the same length ({dims})"),
            ));
        }
        if vector.iter().any(|x| !x.is_finite()) || vector.iter().all(|x| *x == 0.0) {
            problems.push(Diagnostic::new(field, "must be finite and not all zero"));
        }
    }
    for (label, seconds) in &embeddings.seconds {
        let field = format!("speaker_embeddings.seconds.{label}");
        if !embeddings.labels.contains_key(label) {
            problems.push(Diagnostic::new(field.clone(), "names a label that has no embedding"));
        }
        if !(seconds.is_finite() && *seconds > 0.0) {
            problems.push(Diagnostic::new(field, "must be a number of seconds above 0"));
        }
    }
    problems
}

/// The end of the pipeline id of a run `builder identify` made by separating the voices of another
/// (`publisher-webvtt+voices`): the same text and times, each turn under the voice heard in it.
pub const SEPARATED: &str = "+voices";

/// Whether `run` was made by separating the voices of the run its pipeline id starts with.
pub fn is_separated(run: &Run) -> bool {
    run.pipeline.ends_with(SEPARATED)
}

/// The run published as the transcript: the one the episode names, else a human-edited
/// run, else the newest (on the same day a run of separated voices before the one it was made from,
/// then by pipeline id so the choice is stable).
pub fn canonical_run<'r>(episode: &Episode, runs: &'r [Run]) -> Option<&'r Run> {
    if let Some(named) = &episode.canonical_run
        && let Some(run) = runs.iter().find(|run| &run.pipeline == named)
    {
        return Some(run);
    }
    let newest = |kind: Option<RunKind>| {
        runs.iter().filter(|run| kind.is_none_or(|kind| run.kind == kind)).max_by(|a, b| {
            (a.created.cmp(&b.created))
                .then_with(|| is_separated(a).cmp(&is_separated(b)))
                .then_with(|| b.pipeline.cmp(&a.pipeline))
        })
    };
    newest(Some(RunKind::HumanEdited)).or_else(|| newest(None))
}

/// The episode as answers refer to it; the licence and credit travel with every piece of its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodeRef {
    pub id: String,
    pub title: String,
    pub source_url: String,
    pub show: String,
    pub licence: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    /// The show's title, for a citation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_title: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// The episode's audio, when the content names it: where a `listen_url` points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_url: Option<String>,
}

/// A speaker label with its resolved name, as answers show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Speaker {
    pub name: Option<String>,
    pub name_state: NameState,
}

/// `dist/e/<id>/transcript.json`: the canonical run with names resolved. The Worker answers the
/// transcript, speakers and attribution calls from this one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Canonical {
    pub episode: EpisodeRef,
    pub pipeline: String,
    pub kind: RunKind,
    pub speakers: BTreeMap<String, Speaker>,
    pub segments: Vec<Segment>,
}

impl Canonical {
    pub fn speaker(&self, label: &str) -> Speaker {
        self.speakers.get(label).cloned().unwrap_or(Speaker { name: None, name_state: NameState::Unknown })
    }
}

/// `dist/e/<id>.json` and `GET /api/episodes/:id`: everything about one episode, every run included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodeRecord {
    pub id: String,
    pub show: String,
    pub title: String,
    pub source_url: String,
    pub normalised_url: String,
    pub published: String,
    pub roster: Vec<Person>,
    pub licence: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    /// The episode's audio, when the content names it (`audio_url` of `episode.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_url: Option<String>,
    pub canonical_run: String,
    pub duration_s: f64,
    /// Per label: resolved name, state, and every vote with its evidence.
    pub names: BTreeMap<String, names::LabelReport>,
    /// Download links of the canonical transcript.
    pub downloads: BTreeMap<String, String>,
    pub runs: Vec<Run>,
}

/// `episodes/<id>/head.json`: what an episode's pages show besides its transcript — the record without
/// its runs' turns, and how its canonical run differs from the first other one — so a page reads a few
/// KiB rather than every run.
/// A record read as a head skips the turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodeHead {
    pub id: String,
    pub title: String,
    pub canonical_run: String,
    pub duration_s: f64,
    /// Per label, as built: resolved name, state, and every vote with its evidence.
    pub names: BTreeMap<String, names::LabelReport>,
    /// Download links of the canonical transcript.
    pub downloads: BTreeMap<String, String>,
    pub runs: Vec<RunHead>,
    /// The canonical run compared with the first other one, the pair a comparison shows unless asked
    /// for another; none with one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared: Option<compare::Compared>,
}

/// A run as an episode's pages list it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunHead {
    pub pipeline: String,
    pub kind: RunKind,
    /// `YYYY-MM-DD`.
    pub created: String,
}

impl EpisodeHead {
    /// The head of a record, its canonical run compared with the first other one.
    pub fn of(record: &EpisodeRecord) -> EpisodeHead {
        let mut head = EpisodeHead {
            id: record.id.clone(),
            title: record.title.clone(),
            canonical_run: record.canonical_run.clone(),
            duration_s: record.duration_s,
            names: record.names.clone(),
            downloads: record.downloads.clone(),
            runs: record
                .runs
                .iter()
                .map(|run| RunHead {
                    pipeline: run.pipeline.clone(),
                    kind: run.kind,
                    created: run.created.clone(),
                })
                .collect(),
            compared: None,
        };
        let run = |pipeline: &str| record.runs.iter().find(|run| run.pipeline == pipeline);
        if let Some(second) = head.other_than(&head.canonical_run).and_then(run)
            && let Some(first) = run(&head.canonical_run)
        {
            head.compared = Some(compare::Compared {
                first: first.pipeline.clone(),
                second: second.pipeline.clone(),
                comparison: compare::compare(first, second),
            });
        }
        head
    }

    /// The first run other than `pipeline`: what it is compared with unless another is asked for.
    pub fn other_than(&self, pipeline: &str) -> Option<&str> {
        self.runs.iter().map(|run| run.pipeline.as_str()).find(|p| *p != pipeline)
    }
}

/// One line of `/api/episodes` and `episodes.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodeSummary {
    pub id: String,
    pub show: String,
    pub title: String,
    pub source_url: String,
    pub published: String,
    pub licence: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    pub duration_s: f64,
    pub pipelines: Vec<String>,
    pub canonical_run: String,
    pub url: String,
}

/// One line of `/api/shows`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShowSummary {
    pub id: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub description: String,
    pub licence: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    pub episode_count: usize,
    /// The feed the site follows for this show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_url: Option<String>,
}

impl ShowSummary {
    /// The show's record (`show.json`) this summary was made from.
    pub fn record(self) -> Show {
        Show {
            title: self.title,
            url: self.url,
            description: self.description,
            licence: self.licence,
            attribution: self.attribution,
            feed_url: self.feed_url,
        }
    }
}

/// The licence's deed, for links in llms.txt and datapackage.json.
pub fn licence_url(spdx: &str) -> Option<&'static str> {
    match spdx {
        "CC0-1.0" => Some("https://creativecommons.org/publicdomain/zero/1.0/"),
        "CC-BY-4.0" => Some("https://creativecommons.org/licenses/by/4.0/"),
        "CC-BY-SA-4.0" => Some("https://creativecommons.org/licenses/by-sa/4.0/"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pipeline: &str, kind: RunKind, created: &str) -> Run {
        Run {
            pipeline: pipeline.into(),
            kind,
            created: created.into(),
            imported_from: None,
            segments: vec![],
            speaker_embeddings: None,
            speaker_names: None,
        }
    }

    fn episode(canonical: Option<&str>) -> Episode {
        Episode {
            title: "t".into(),
            source_url: "https://example.com/1".into(),
            published: "2024-01-01".into(),
            roster: vec![],
            canonical_run: canonical.map(str::to_string),
            licence: None,
            attribution: None,
            derived_from: None,
            audio_url: None,
        }
    }

    #[test]
    fn rounding_never_gives_a_negative_zero() {
        let values = [-0.0, -0.0001, 0.0, 12.3456, -1.5];
        let json = serde_json::to_string(&values.map(round_ms)).unwrap();
        expect_test::expect!["[0.0,0.0,0.0,12.346,-1.5]"].assert_eq(&json);
    }

    #[test]
    fn canonical_run_prefers_named_then_human_then_newest() {
        let runs = vec![
            run("whisperx", RunKind::Asr, "2024-05-01"),
            run("changelog-human", RunKind::HumanEdited, "2023-01-01"),
            run("deepgram", RunKind::Asr, "2024-06-01"),
        ];
        assert_eq!(canonical_run(&episode(Some("whisperx")), &runs).unwrap().pipeline, "whisperx");
        assert_eq!(canonical_run(&episode(None), &runs).unwrap().pipeline, "changelog-human");
        assert_eq!(canonical_run(&episode(Some("gone")), &runs[..1]).unwrap().pipeline, "whisperx");
        assert_eq!(
            canonical_run(&episode(None), &[runs[0].clone(), runs[2].clone()]).unwrap().pipeline,
            "deepgram"
        );
    }

    #[test]
    fn text_fields_of_shows_episodes_and_runs_are_clean() {
        let show = Show {
            title: "Kitchen\u{0}Table".into(),
            url: None,
            description: "Talk \u{202E}about food.".into(),
            licence: "CC0-1.0".into(),
            attribution: Some("\u{200B}Us".into()),
            feed_url: Some("feed:kitchen-table".into()),
        };
        let mut episode = episode(None);
        episode.title = "\u{2067}Soup\u{2069}".into();
        episode.roster = vec![Person { name: "Ana\u{1B}".into(), role: Role::Host, no_voiceprint: false }];
        let mut run = run("whisperx", RunKind::Asr, "2024-01-01");
        run.segments = vec![Segment {
            speaker: "SPEAKER\u{FE0F}".into(),
            start_s: 0.0,
            end_s: 1.0,
            text: "Hi\u{7}".into(),
            start_estimated: false,
            end_estimated: false,
            words: Some(vec![Word { w: "Hi\u{85}".into(), start_s: 0.0, end_s: 0.5, estimated: false }]),
        }];
        let problems: Vec<String> = [validate_show(&show), validate_episode(&episode), validate_run(&run)]
            .concat()
            .iter()
            .map(ToString::to_string)
            .collect();
        expect_test::expect![[r#"
            [
                "title: character 8 is the control character U+0000; a single line takes none",
                "description: the bidirectional control U+202E at character 6 is not closed by U+202C in the same line",
                "attribution: character 1 is the invisible U+200B; leave it out",
                "feed_url: must be the http(s) address of the show's RSS feed",
                "title: character 1 is the bidirectional control U+2067; leave it out: the page isolates this text already",
                "roster[0].name: character 4 is the control character U+001B; a single line takes none",
                "segments[0].speaker: the variation selector U+FE0F at character 8 follows no character it can modify",
                "segments[0].text: character 3 is the control character U+0007; only newline and tab may appear",
                "segments[0].words[0].w: character 3 is the control character U+0085; a single line takes none",
            ]
        "#]].assert_debug_eq(&problems);
    }

    #[test]
    fn run_validation_names_every_problem() {
        let bad = Run {
            pipeline: "WhisperX 3".into(),
            kind: RunKind::Asr,
            created: "2024-13-01".into(),
            imported_from: None,
            speaker_embeddings: None,
            speaker_names: None,
            segments: vec![
                Segment {
                    speaker: "A".into(),
                    start_s: 5.0,
                    end_s: 4.0,
                    text: "hi".into(),
                    start_estimated: false,
                    end_estimated: false,
                    words: None,
                },
                Segment {
                    speaker: "".into(),
                    start_s: 1.0,
                    end_s: 2.0,
                    text: " ".into(),
                    start_estimated: false,
                    end_estimated: false,
                    words: None,
                },
            ],
        };
        let problems: Vec<String> = validate_run(&bad).iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "pipeline: must be lower-case letters, digits and . + _ -",
                "created: must be a date YYYY-MM-DD",
                "segments[0].end_s: must not be before start_s",
                "segments[1].speaker: must not be empty",
                "segments[1].text: must not be empty",
                "segments[1].start_s: segments must be in order of start time",
            ]
        "#]]
        .assert_debug_eq(&problems);
    }
}
