//! The editors' review queue: every speaker label of a canonical transcript whose name is neither
//! `confident` nor `human`, with every source's vote and evidence and the label's first turns, most
//! cited first.
//!
//! "Cited" counts the label's turns in the canonical transcript: each turn is a passage an
//! attribution or a search can answer with, so a label with many turns stands behind many answers.
//! The build publishes the queue of its episodes in parts of [`PART`] entries, most cited first
//! (`episodes/review.json`, then `episodes/review/{n}.json`), so a page of the queue reads the first
//! part or two, not the whole; the Worker drops the labels editors have decided since and adds the
//! episodes the intake took in.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::names::{NameState, Vote};
use super::{EpisodeRecord, Run};

/// The first turns of a label a queue entry shows, and how much of each.
pub const FIRST_TURNS: usize = 3;
const TURN_CHARS: usize = 240;

/// One turn, cut short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Turn {
    pub start_s: f64,
    pub text: String,
}

/// One label for an editor to decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Entry {
    pub episode: String,
    pub title: String,
    pub show: String,
    pub published: String,
    pub label: String,
    pub name: Option<String>,
    pub name_state: NameState,
    /// The label's turns in the canonical transcript.
    pub turns: usize,
    /// The words the label speaks there: how much an answer can quote, so how many answers its
    /// name may decide. The queue's order, most first.
    #[serde(default)]
    pub words: usize,
    pub first_turns: Vec<Turn>,
    pub votes: Vec<Vote>,
    /// The episode's audio, when known: each turn plays from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_url: Option<String>,
}

/// Entries in each published part of the queue: more than a page shows, so decisions since the build
/// seldom make a page read a second part.
pub const PART: usize = 200;

/// The whole queue, as the build makes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Queue {
    /// Most cited first (most words, then most turns); then by episode and label.
    pub entries: Vec<Entry>,
    /// Per show, the people it already knows (rosters, and names that are confident or decided):
    /// what the queue suggests.
    pub known: BTreeMap<String, Vec<String>>,
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(TURN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn canonical(record: &EpisodeRecord) -> Option<&Run> {
    record.runs.iter().find(|run| run.pipeline == record.canonical_run)
}

/// The entries of one episode (its names as the record has them), and the people it knows.
pub fn entries(record: &EpisodeRecord, audio_url: Option<&str>) -> (Vec<Entry>, BTreeSet<String>) {
    let mut known: BTreeSet<String> = record.roster.iter().map(|person| person.name.clone()).collect();
    let mut out = Vec::new();
    let Some(run) = canonical(record) else { return (out, known) };
    let mut labels: Vec<&str> = run.segments.iter().map(|s| s.speaker.as_str()).collect();
    crate::sorted::sort(&mut labels);
    labels.dedup();
    for label in labels {
        let Some(report) = record.names.get(label) else { continue };
        if report.name_state.is_trustworthy() {
            known.extend(report.name.clone());
            continue;
        }
        let said: Vec<_> = run.segments.iter().filter(|s| s.speaker == label).collect();
        out.push(Entry {
            episode: record.id.clone(),
            title: record.title.clone(),
            show: record.show.clone(),
            published: record.published.clone(),
            label: label.to_string(),
            name: report.name.clone(),
            name_state: report.name_state,
            turns: said.len(),
            words: said.iter().map(|s| s.text.split_whitespace().count()).sum(),
            first_turns: said
                .iter()
                .take(FIRST_TURNS)
                .map(|s| Turn { start_s: s.start_s, text: cut(&s.text) })
                .collect(),
            votes: report.votes.clone(),
            audio_url: audio_url.map(str::to_string),
        });
    }
    (out, known)
}

/// `episodes/review.json`: the queue as built, its first part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueueHead {
    /// Entries in the whole queue.
    #[serde(default)]
    pub total: usize,
    /// How many parts follow this one: `episodes/review/1.json` to `episodes/review/{parts}.json`.
    #[serde(default)]
    pub parts: usize,
    /// Per show, the people it already knows (rosters, and names that are confident or decided):
    /// what the queue suggests.
    pub known: BTreeMap<String, Vec<String>>,
    /// The most cited [`PART`] entries.
    pub entries: Vec<Entry>,
}

/// `episodes/review/{n}.json`: the next [`PART`] entries of the queue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueuePart {
    pub entries: Vec<Entry>,
}

impl Queue {
    /// The queue, sorted, as its published files: the head, then the parts.
    pub fn published(mut self) -> (QueueHead, Vec<QueuePart>) {
        self.sort();
        let total = self.entries.len();
        let mut parts: Vec<QueuePart> =
            self.entries.chunks(PART).map(|entries| QueuePart { entries: entries.to_vec() }).collect();
        let first = if parts.is_empty() { QueuePart::default() } else { parts.remove(0) };
        let head = QueueHead { total, parts: parts.len(), known: self.known, entries: first.entries };
        (head, parts)
    }

    /// Adds an episode's entries and known people.
    pub fn add(&mut self, record: &EpisodeRecord, audio_url: Option<&str>) {
        let (entries, known) = entries(record, audio_url);
        self.entries.extend(entries);
        let people = self.known.entry(record.show.clone()).or_default();
        people.extend(known);
        crate::sorted::sort(people);
        people.dedup();
    }

    /// Most cited first: most words spoken, then most turns.
    pub fn sort(&mut self) {
        crate::sorted::sort_by(&mut self.entries, |a, b| {
            (b.words, b.turns)
                .cmp(&(a.words, a.turns))
                .then_with(|| a.episode.cmp(&b.episode))
                .then_with(|| a.label.cmp(&b.label))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::transcript::names::{LabelReport, Vote, VoteSource};
    use crate::quotes::transcript::{Person, Role, RunKind, Segment};

    fn record(id: &str, turns: &[(&str, &str)], names: &[(&str, Option<&str>, NameState)]) -> EpisodeRecord {
        let segments = turns
            .iter()
            .enumerate()
            .map(|(i, (label, text))| Segment::said(label, i as f64, i as f64 + 1.0, text))
            .collect();
        EpisodeRecord {
            id: id.into(),
            show: "show".into(),
            title: format!("Episode {id}"),
            source_url: format!("https://example.org/{id}"),
            normalised_url: format!("https://example.org/{id}"),
            published: "2026-01-01".into(),
            roster: vec![Person { name: "Ana Lima".into(), role: Role::Host, no_voiceprint: false }],
            licence: "CC0-1.0".into(),
            attribution: None,
            derived_from: None,
            audio_url: None,
            canonical_run: "asr".into(),
            duration_s: turns.len() as f64,
            names: names
                .iter()
                .map(|(label, name, state)| {
                    let votes = vec![Vote::new(VoteSource::LanguageModel, name.map(String::from), "said so")];
                    let report =
                        LabelReport { name: name.map(String::from), name_state: *state, votes, human: None };
                    (label.to_string(), report)
                })
                .collect(),
            downloads: Default::default(),
            runs: vec![Run {
                pipeline: "asr".into(),
                kind: RunKind::Asr,
                created: "2026-01-01".into(),
                imported_from: None,
                segments,
                speaker_embeddings: None,
                speaker_names: None,
            }],
        }
    }

    #[test]
    fn only_names_neither_confident_nor_decided_are_queued_most_cited_first() {
        let mut queue = Queue::default();
        queue.add(
            &record(
                "ep_a",
                &[("A", "Hello."), ("B", "Hi."), ("A", "Welcome.")],
                &[
                    ("A", Some("Ana Lima"), NameState::Confident),
                    ("B", Some("Rui Tavares"), NameState::Tentative),
                ],
            ),
            None,
        );
        queue.add(
            &record(
                "ep_b",
                &[("X", "One."), ("X", "Two."), ("Y", "Three.")],
                &[("X", None, NameState::Withheld), ("Y", None, NameState::Unknown)],
            ),
            Some("https://example.org/b.mp3"),
        );
        queue.sort();
        let order: Vec<(&str, &str, usize)> =
            queue.entries.iter().map(|e| (e.episode.as_str(), e.label.as_str(), e.turns)).collect();
        assert_eq!(order, [("ep_b", "X", 2), ("ep_a", "B", 1), ("ep_b", "Y", 1)]);
        assert_eq!(queue.entries[0].first_turns.len(), 2);
        assert_eq!(queue.entries[0].audio_url.as_deref(), Some("https://example.org/b.mp3"));
        // The show knows its roster and its confident names, not the unconfirmed ones.
        assert_eq!(queue.known["show"], ["Ana Lima"]);

        // Published in parts, most cited first: the head says how many entries and parts in all.
        let mut many = queue.clone();
        for n in 0..PART {
            many.add(
                &record(&format!("ep_{n:03}"), &[("Z", "Again.")], &[("Z", None, NameState::Unknown)]),
                None,
            );
        }
        let (head, parts) = many.published();
        assert_eq!((head.total, head.parts, head.entries.len(), parts.len()), (PART + 3, 1, PART, 1));
        assert_eq!((head.entries[0].episode.as_str(), parts[0].entries.len()), ("ep_b", 3));
        assert_eq!(head.known["show"], ["Ana Lima"]);
    }

    #[test]
    fn a_voice_that_says_more_comes_before_one_that_only_answers_often() {
        let mut queue = Queue::default();
        let long = "the harbour vote was never about the harbour, it was about who pays for it";
        queue.add(
            &record(
                "ep_c",
                &[("A", "Yes."), ("B", long), ("A", "Right."), ("A", "Sure."), ("B", long)],
                &[("A", None, NameState::Unknown), ("B", None, NameState::Unknown)],
            ),
            None,
        );
        queue.sort();
        let order: Vec<(&str, usize, usize)> =
            queue.entries.iter().map(|e| (e.label.as_str(), e.turns, e.words)).collect();
        assert_eq!(order, [("B", 2, 30), ("A", 3, 3)]);
    }
}
