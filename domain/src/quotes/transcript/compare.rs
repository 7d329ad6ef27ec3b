//! Two runs of one episode side by side: where their words differ, and where the same words are
//! given to different people.
//!
//! Words are compared as the quote matcher reads them (`normalise::tokens`: case, punctuation and
//! fillers do not count), aligned by a patience diff (`similar`), which anchors on words each run
//! says once and fills the gaps with Myers, so two hour-long runs align in milliseconds. Each run has
//! its own speaker labels (`A`, `SPEAKER_00`): a label of the second run stands for the label of the
//! first run that says most of its aligned words, and a turn differs where an aligned word's label is
//! not the one its label stands for. Times are the first run's, estimated inside a segment by the
//! word's place in it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::normalise::tokens;
use super::{Run, Segment};

/// The changes a page lists of each kind, at most; the counts cover them all.
pub const MAX_LISTED: usize = 200;

/// One word of a run: its folded form, what was said, its label, and its estimated time.
#[derive(Debug, Clone)]
struct Word<'r> {
    norm: String,
    said: &'r str,
    speaker: &'r str,
    at_s: f64,
}

fn words(run: &Run) -> Vec<Word<'_>> {
    run.segments.iter().flat_map(segment_words).collect()
}

fn segment_words(segment: &Segment) -> Vec<Word<'_>> {
    let found = tokens(&segment.text);
    let count = found.len().max(1) as f64;
    let span = (segment.end_s - segment.start_s).max(0.0);
    found
        .into_iter()
        .enumerate()
        .map(|(idx, token)| Word {
            said: &segment.text[token.start..token.end],
            norm: token.norm,
            speaker: &segment.speaker,
            at_s: segment.start_s + span * idx as f64 / count,
        })
        .collect()
}

/// Words one run has where the other has others (or none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WordChange {
    /// Where it is, in seconds (the first run's time; the second's where the first has no words).
    pub at_s: f64,
    pub first: String,
    pub second: String,
}

/// A stretch of words both runs have, given to different people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnChange {
    pub from_s: f64,
    pub to_s: f64,
    /// The first run's label there, and the second run's.
    pub first: String,
    pub second: String,
    pub words: usize,
}

/// How two runs differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    pub first_words: usize,
    pub second_words: usize,
    /// Words both have, in the same order.
    pub same_words: usize,
    /// Speaker turns (changes of label, plus one) of each run.
    pub first_turns: usize,
    pub second_turns: usize,
    /// What each label of the second run stands for in the first.
    pub labels: BTreeMap<String, String>,
    pub word_changes: Vec<WordChange>,
    pub word_changes_total: usize,
    pub turn_changes: Vec<TurnChange>,
    pub turn_changes_total: usize,
    /// Aligned words given to another person than their label stands for.
    pub words_reassigned: usize,
}

fn turns(run: &Run) -> usize {
    let mut count = 0;
    let mut last: Option<&str> = None;
    for segment in &run.segments {
        if last != Some(segment.speaker.as_str()) {
            count += 1;
            last = Some(&segment.speaker);
        }
    }
    count
}

fn joined(words: &[Word<'_>]) -> String {
    words.iter().map(|w| w.said).collect::<Vec<_>>().join(" ")
}

/// Two runs of an episode compared, named by their pipelines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Compared {
    pub first: String,
    pub second: String,
    pub comparison: Comparison,
}

/// Compares `second` with `first`.
pub fn compare(first: &Run, second: &Run) -> Comparison {
    let (a, b) = (words(first), words(second));
    let a_norm: Vec<&str> = a.iter().map(|w| w.norm.as_str()).collect();
    let b_norm: Vec<&str> = b.iter().map(|w| w.norm.as_str()).collect();
    let ops = capture_diff_slices(Algorithm::Patience, &a_norm, &b_norm);

    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut word_changes = Vec::new();
    for op in &ops {
        match *op {
            DiffOp::Equal { old_index, new_index, len } => {
                pairs.extend((0..len).map(|k| (old_index + k, new_index + k)));
            }
            DiffOp::Delete { old_index, old_len, .. } => word_changes.push(WordChange {
                at_s: a[old_index].at_s,
                first: joined(&a[old_index..old_index + old_len]),
                second: String::new(),
            }),
            DiffOp::Insert { old_index, new_index, new_len } => word_changes.push(WordChange {
                at_s: a.get(old_index).map_or(b[new_index].at_s, |w| w.at_s),
                first: String::new(),
                second: joined(&b[new_index..new_index + new_len]),
            }),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => word_changes.push(WordChange {
                at_s: a[old_index].at_s,
                first: joined(&a[old_index..old_index + old_len]),
                second: joined(&b[new_index..new_index + new_len]),
            }),
        }
    }

    // What each second-run label stands for: the first-run label it shares most aligned words with.
    let mut shared: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for &(i, j) in &pairs {
        *shared.entry(b[j].speaker).or_default().entry(a[i].speaker).or_default() += 1;
    }
    let labels: BTreeMap<String, String> = shared
        .iter()
        .filter_map(|(second, counts)| {
            let best = counts.iter().max_by(|x, y| x.1.cmp(y.1).then_with(|| y.0.cmp(x.0)))?;
            Some((second.to_string(), best.0.to_string()))
        })
        .collect();

    let mut turn_changes: Vec<TurnChange> = Vec::new();
    let mut words_reassigned = 0;
    let mut open = false;
    for &(i, j) in &pairs {
        let stands_for = labels.get(b[j].speaker).map(String::as_str);
        if stands_for == Some(a[i].speaker) {
            open = false;
            continue;
        }
        words_reassigned += 1;
        match turn_changes.last_mut() {
            Some(last) if open && last.first == a[i].speaker && last.second == b[j].speaker => {
                last.to_s = a[i].at_s;
                last.words += 1;
            }
            _ => turn_changes.push(TurnChange {
                from_s: a[i].at_s,
                to_s: a[i].at_s,
                first: a[i].speaker.to_string(),
                second: b[j].speaker.to_string(),
                words: 1,
            }),
        }
        open = true;
    }

    let (word_changes_total, turn_changes_total) = (word_changes.len(), turn_changes.len());
    word_changes.truncate(MAX_LISTED);
    turn_changes.truncate(MAX_LISTED);
    Comparison {
        first_words: a.len(),
        second_words: b.len(),
        same_words: pairs.len(),
        first_turns: turns(first),
        second_turns: turns(second),
        labels,
        word_changes,
        word_changes_total,
        turn_changes,
        turn_changes_total,
        words_reassigned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::transcript::RunKind;

    fn run(segments: &[(&str, f64, f64, &str)]) -> Run {
        Run {
            pipeline: "p".into(),
            kind: RunKind::Asr,
            created: "2026-01-01".into(),
            imported_from: None,
            segments: segments
                .iter()
                .map(|(speaker, start_s, end_s, text)| Segment::said(speaker, *start_s, *end_s, text))
                .collect(),
            speaker_embeddings: None,
            speaker_names: None,
        }
    }

    #[test]
    fn words_and_turns_that_differ_are_found_under_each_runs_own_labels() {
        let first = run(&[
            ("A", 0.0, 4.0, "Welcome to the kitchen table."),
            ("B", 4.0, 8.0, "Thanks, it smells of bread in here."),
            ("A", 8.0, 12.0, "We baked at dawn, as always."),
        ]);
        let second = run(&[
            ("SPEAKER_00", 0.0, 4.0, "welcome to the kitchen table"),
            ("SPEAKER_01", 4.0, 8.0, "Thanks, it smells of bred in here."),
            ("SPEAKER_01", 8.0, 12.0, "We baked at dawn,"),
            ("SPEAKER_00", 12.0, 13.0, "as always."),
        ]);
        let diff = compare(&first, &second);
        assert_eq!(diff.labels["SPEAKER_00"], "A");
        assert_eq!(diff.labels["SPEAKER_01"], "B");
        assert_eq!(
            diff.word_changes,
            vec![WordChange { at_s: 4.0 + 4.0 * 4.0 / 7.0, first: "bread".into(), second: "bred".into() }]
        );
        // "We baked at dawn," is A's in the first run and SPEAKER_01's (B's) in the second.
        assert_eq!(diff.turn_changes.len(), 1);
        let turn = &diff.turn_changes[0];
        assert_eq!((turn.first.as_str(), turn.second.as_str(), turn.words), ("A", "SPEAKER_01", 4));
        assert_eq!((turn.from_s, diff.words_reassigned), (8.0, 4));
        assert_eq!((diff.first_turns, diff.second_turns), (3, 3));
        assert_eq!((diff.first_words, diff.second_words, diff.same_words), (18, 18, 17));
    }

    #[test]
    fn a_run_compared_with_itself_has_no_differences() {
        let first = run(&[("A", 0.0, 2.0, "One two three."), ("B", 2.0, 3.0, "Four.")]);
        let diff = compare(&first, &first);
        assert!(diff.word_changes.is_empty() && diff.turn_changes.is_empty());
        assert_eq!(diff.same_words, 4);
    }
}
