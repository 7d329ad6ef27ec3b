//! `builder identify`'s pure parts: source 1 (the transcription service's own identification), and how
//! a source's fresh votes replace its old ones in `names.json`.
//!
//! Each source, when it runs, answers for every label it looked at — a name or an abstention with the
//! reason — and [`merge`] replaces that source's earlier vote of those labels and nothing else. Human
//! decisions and the other sources' votes are kept as they are, so re-running with the same inputs
//! changes nothing. Elimination (source 4) is not merged: `names::resolve_all` computes it from the
//! other votes whenever names are resolved — at build time and again in the Worker when an editor's
//! decision arrives — so it can never go stale.

use std::collections::BTreeMap;

use crate::quotes::transcript::{Names, Run, RunKind, Vote, VoteSource, names};

/// Labels that stand for a role or a kind of voice, not a person: transcription services and editors
/// write them where they do not know the name (`Audience`, `Host`, `Male 1`, `Unknown Speaker`).
const PLACEHOLDERS: &[&str] = &[
    "all",
    "announcer",
    "audience",
    "audience member",
    "caller",
    "co host",
    "cohost",
    "crowd",
    "everyone",
    "female",
    "group",
    "guest",
    "host",
    "inaudible",
    "interviewee",
    "interviewer",
    "listener",
    "male",
    "man",
    "moderator",
    "multiple speakers",
    "narrator",
    "other",
    "panelist",
    "panellist",
    "participant",
    "person",
    "presenter",
    "question",
    "questioner",
    "speaker",
    "speakers",
    "spk",
    "spkr",
    "unidentified",
    "unidentified speaker",
    "unknown",
    "unknown speaker",
    "voice",
    "woman",
];

/// A label that names nobody: a diarization label (`A`, `SPEAKER_00`, `speaker_1`, `spk_2`, `S3`), or a
/// placeholder for a role or a kind of voice, alone or told apart by a number or a letter (`Audience`,
/// `Host`, `Speaker 2`, `Male 1`, `Guest B`, `Unknown`). Such a label is never voted as a name.
pub fn is_anonymous_label(label: &str) -> bool {
    let lower = label.trim().to_lowercase();
    let mut words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || "_-#:.()[]".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    // What tells placeholders apart: a trailing number (`00`, `spk2`) or, after a word, a letter (`Guest B`).
    while let Some(last) = words.last().copied() {
        let without_digits = last.trim_end_matches(|c: char| c.is_ascii_digit());
        if without_digits.is_empty() || (words.len() > 1 && without_digits.chars().count() == 1) {
            words.pop();
        } else {
            *words.last_mut().expect("a last word") = without_digits;
            break;
        }
    }
    match words.as_slice() {
        [] => true,
        [one] if one.chars().count() <= 2 && one.chars().all(char::is_alphabetic) => true,
        _ => PLACEHOLDERS.contains(&words.join(" ").as_str()),
    }
}

/// What a service's own identification looks like in each imported format.
fn asr_evidence(format: &str) -> Option<&'static str> {
    match format {
        "webvtt" => Some("voice tag in the imported WebVTT file"),
        "podcasting20" => Some("speaker named in the imported Podcasting 2.0 transcript"),
        "assemblyai" => Some("AssemblyAI speaker identification"),
        _ => None,
    }
}

/// Source 1 for one run: the name the service gave a label ([`Run::speaker_names`]), or a label that
/// is a name in a format whose service identifies speakers, is that service's vote; anonymous
/// labels, and formats that only diarize, abstain. Human-edited runs give
/// nothing here: their names are human decisions, written when they were imported.
pub fn asr_votes(run: &Run) -> BTreeMap<String, Vote> {
    if run.kind == RunKind::HumanEdited {
        return BTreeMap::new();
    }
    let format = run.imported_from.as_deref().unwrap_or("unknown");
    let model = format!("{format} ({})", run.pipeline);
    let mut votes = BTreeMap::new();
    for segment in &run.segments {
        if votes.contains_key(&segment.speaker) {
            continue;
        }
        let label = segment.speaker.trim();
        let named = run.speaker_names.as_ref().map(|names| names.get(&segment.speaker));
        let vote = match (asr_evidence(format), named) {
            // The service's own naming, kept beside its labels: a name, or no name for this label.
            (Some(evidence), Some(Some(name))) if names::is_merged_label(label) => {
                let voices = label.split(names::MERGED).collect::<Vec<_>>().join(" and ");
                let evidence = format!("{evidence}, which gave voices {voices} this one name");
                Vote::new(VoteSource::Asr, Some(name.clone()), evidence)
            }
            (Some(evidence), Some(Some(name))) => Vote::new(VoteSource::Asr, Some(name.clone()), evidence),
            (Some(_), Some(None)) => {
                Vote::new(VoteSource::Asr, None, format!("{format} did not name the voice `{label}`"))
            }
            (None, _) => {
                Vote::new(VoteSource::Asr, None, format!("{format} gives diarization labels, not names"))
            }
            (Some(_), None) if names::is_merged_label(label) => {
                Vote::new(VoteSource::Asr, None, format!("the label `{label}` holds more than one voice"))
            }
            (Some(_), None) if is_anonymous_label(label) => {
                Vote::new(VoteSource::Asr, None, format!("{format} gave the label `{label}`, not a name"))
            }
            (Some(evidence), None) => Vote::new(VoteSource::Asr, Some(label.to_string()), evidence),
        };
        votes.insert(segment.speaker.clone(), vote.with_model(model.clone()));
    }
    votes
}

/// Source 1 over every run of an episode: a label two runs share takes the first named vote (runs in
/// pipeline order), else the first abstention.
pub fn asr_votes_of(runs: &[Run]) -> BTreeMap<String, Vote> {
    let mut all: BTreeMap<String, Vote> = BTreeMap::new();
    for run in runs {
        for (label, vote) in asr_votes(run) {
            match all.get(&label) {
                Some(existing) if existing.name.is_some() || vote.name.is_none() => {}
                _ => {
                    all.insert(label, vote);
                }
            }
        }
    }
    all
}

/// `names` with `source`'s votes of the given labels replaced by `fresh`. Votes stay in source order,
/// so the file diffs well; human decisions are never touched.
///
/// Only a vote `builder identify` computed is replaced: those always record what made them (`model`).
/// A vote without `model` was written by a person (the sample's votes, an editor's notes from
/// listening) and stays, so a re-run cannot turn a confident name tentative by overwriting it; that
/// label keeps the hand-written vote of this source instead of the fresh one.
pub fn merge(names: &Names, source: VoteSource, fresh: &BTreeMap<String, Vote>) -> Names {
    let mut out = names.clone();
    for (label, vote) in fresh {
        debug_assert_eq!(vote.source, source);
        debug_assert!(vote.model.is_some(), "a computed vote records its model");
        let entry = out.labels.entry(label.clone()).or_default();
        if entry.votes.iter().any(|old| old.source == source && is_hand_written(old)) {
            continue;
        }
        entry.votes.retain(|old| old.source != source);
        entry.votes.push(vote.clone());
        crate::sorted::sort_by_key(&mut entry.votes, |vote| vote.source);
    }
    out
}

/// Whether a person wrote this vote rather than `builder identify` (which records `model` on each).
pub fn is_hand_written(vote: &Vote) -> bool {
    vote.model.is_none()
}

/// The speaker labels of each run, sorted: the input `names::resolve_all` wants.
pub fn label_groups(runs: &[Run]) -> Vec<Vec<String>> {
    runs.iter()
        .map(|run| {
            let mut labels: Vec<String> = run.segments.iter().map(|s| s.speaker.clone()).collect();
            crate::sorted::sort(&mut labels);
            labels.dedup();
            labels
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::transcript::Segment;
    use crate::quotes::transcript::names::{HumanDecision, LabelVotes};
    use expect_test::expect;

    fn run(format: &str, kind: RunKind, labels: &[&str]) -> Run {
        Run {
            pipeline: format!("{format}-run"),
            kind,
            created: "2025-01-01".into(),
            imported_from: Some(format.into()),
            segments: labels.iter().map(|label| Segment::said(label, 0.0, 1.0, "hi")).collect(),
            speaker_embeddings: None,
            speaker_names: None,
        }
    }

    #[test]
    fn anonymous_labels() {
        for label in ["A", "B", "SPEAKER_00", "speaker_1", "spk_2", "S3", "UNKNOWN", "0"] {
            assert!(is_anonymous_label(label), "{label}");
        }
        for label in ["Ana Lima", "Eli", "Sam", "Speaker Ana"] {
            assert!(!is_anonymous_label(label), "{label}");
        }
    }

    /// `builder identify` voted placeholder labels from imported transcripts as names.
    #[test]
    fn placeholder_labels_are_never_voted_as_names() {
        for label in [
            "Audience",
            "Host",
            "Speaker 2",
            "Male 1",
            "Female 2",
            "Unknown",
            "Guest",
            "Guest B",
            "SPEAKER_00",
            "Unknown Speaker",
            "Audience Member 3",
            "Co-host",
            "Interviewer",
            "  host  ",
            "Speaker #4",
            "spk2",
        ] {
            assert!(is_anonymous_label(label), "{label}");
            let votes = asr_votes(&run("webvtt", RunKind::Asr, &[label]));
            assert_eq!(votes[label].name, None, "{label} was voted as a name");
        }
        for label in ["Ana Lima", "Hosta Ruiz", "Guest Ana", "Dr. Ana Lima", "Mira Castell"] {
            assert!(!is_anonymous_label(label), "{label}");
        }
    }

    /// re-running `builder identify` on the sample replaced hand-written votes (no `model`)
    /// with its own abstentions, and a confident name fell to tentative.
    #[test]
    fn a_rerun_keeps_hand_written_votes_and_replaces_only_computed_ones() {
        let hand = Vote::new(VoteSource::Asr, Some("Ana Lima".into()), "WebVTT voice tag");
        let computed = Vote::new(VoteSource::Asr, Some("Old Name".into()), "x").with_model("webvtt (old)");
        let mut names = Names::default();
        names.labels.insert("A".into(), LabelVotes { votes: vec![hand.clone()], human: None });
        names.labels.insert("B".into(), LabelVotes { votes: vec![computed], human: None });
        let fresh: BTreeMap<String, Vote> = ["A", "B", "C"]
            .into_iter()
            .map(|label| {
                let vote = Vote::new(VoteSource::Asr, None, "diarization only").with_model("deepgram (run)");
                (label.to_string(), vote)
            })
            .collect();
        let merged = merge(&names, VoteSource::Asr, &fresh);
        assert_eq!(merged.labels["A"].votes, vec![hand], "a hand-written vote was replaced");
        assert_eq!(merged.labels["B"].votes, vec![fresh["B"].clone()], "a computed vote was kept");
        assert_eq!(merged.labels["C"].votes, vec![fresh["C"].clone()]);
        assert_eq!(merge(&merged, VoteSource::Asr, &fresh), merged, "a second run changes nothing");
    }

    #[test]
    fn services_that_identify_vote_and_the_others_abstain() {
        let runs = [
            run("webvtt", RunKind::Asr, &["Ana Lima", "UNKNOWN"]),
            run("whisperx", RunKind::Asr, &["SPEAKER_00"]),
            run("assemblyai", RunKind::Asr, &["A", "Ben Okafor"]),
            run("changelog-md", RunKind::HumanEdited, &["Cy"]),
        ];
        let votes = asr_votes_of(&runs);
        let lines: Vec<String> = votes
            .iter()
            .map(|(label, v)| {
                format!("{label}: {:?} {} [{}]", v.name, v.evidence, v.model.as_deref().unwrap_or(""))
            })
            .collect();
        expect![[r#"
            [
                "A: None assemblyai gave the label `A`, not a name [assemblyai (assemblyai-run)]",
                "Ana Lima: Some(\"Ana Lima\") voice tag in the imported WebVTT file [webvtt (webvtt-run)]",
                "Ben Okafor: Some(\"Ben Okafor\") AssemblyAI speaker identification [assemblyai (assemblyai-run)]",
                "SPEAKER_00: None whisperx gives diarization labels, not names [whisperx (whisperx-run)]",
                "UNKNOWN: None webvtt gave the label `UNKNOWN`, not a name [webvtt (webvtt-run)]",
            ]
        "#]]
        .assert_debug_eq(&lines);
    }

    #[test]
    fn merge_replaces_one_source_keeps_the_rest_and_is_idempotent() {
        let mut names = Names::default();
        names.labels.insert(
            "S0".into(),
            LabelVotes {
                votes: vec![
                    Vote::new(VoteSource::VoiceMatch, Some("Ana".into()), "cosine 0.9"),
                    Vote::new(VoteSource::Asr, None, "old").with_model("whisperx (run)"),
                ],
                human: Some(HumanDecision { name: "Ana Lima".into(), by: "ed".into(), note: None }),
            },
        );
        let fresh: BTreeMap<String, Vote> = [
            (
                "S0".to_string(),
                Vote::new(VoteSource::Asr, Some("Ana".into()), "new").with_model("webvtt (run)"),
            ),
            ("S1".to_string(), Vote::new(VoteSource::Asr, None, "anonymous").with_model("webvtt (run)")),
        ]
        .into();
        let once = merge(&names, VoteSource::Asr, &fresh);
        let twice = merge(&once, VoteSource::Asr, &fresh);
        assert_eq!(once, twice);
        let s0 = &once.labels["S0"];
        assert_eq!(s0.human, names.labels["S0"].human);
        let votes: Vec<String> = s0.votes.iter().map(|v| format!("{:?}={}", v.source, v.evidence)).collect();
        assert_eq!(votes, ["Asr=new", "VoiceMatch=cosine 0.9"]);
        assert_eq!(once.labels["S1"].votes.len(), 1);
    }
}
