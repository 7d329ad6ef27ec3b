//! What of a run is heard to tell its voices, and the voices told apart: each label's clean turns
//! ([`chosen_turns`]), and for a run that holds several voices under one label, its turns grouped into
//! voices ([`group`]) and a run of separated voices made of them ([`separated`]). The builder fetches,
//! decodes and embeds (`builder identify`); everything here is pure.
//!
//! Separating the voices a transcript does not: a publisher's WebVTT without voice tags arrives as
//! one label holding every voice (`UNKNOWN`), and a service's label can hold two (`A+B`). Each such
//! turn of a run is embedded on its own, the turns are grouped into voices by how alike they sound
//! ([`group`]), and a new run is made — the same text and times, each turn under its voice
//! (`Voice 1`, `Voice 2`, …, or the run's own label whose voice it is) — whose pipeline id is the
//! old one and [`SEPARATED`]. The old run is never touched. The new run carries each voice's
//! embedding, so its labels are voted on like any other: by voice, by elimination, by the language
//! model, and decided by editors.

use std::collections::{BTreeMap, BTreeSet};

use crate::quotes::transcript::names::holds_several_voices;
use crate::quotes::transcript::voice::unit;
use crate::quotes::transcript::{
    Run, RunKind, SEPARATED, Segment, SpeakerEmbeddings, is_separated, is_valid_pipeline,
};

/// A turn shorter than this is not embedded on its own: it takes the voice of the turn before it.
pub const MIN_CUE_S: f64 = 1.0;

/// Two turns whose embeddings are at least this alike are one voice (how it was chosen: the
/// module docs of [`super::voice`] and BENCHMARKS.md, "Voices").
pub const SAME_VOICE: f32 = 0.80;

/// Whether `run` needs separating: it has a label of several voices, is not itself a separation,
/// and none was made of it yet.
pub fn wants_separating(run: &Run, runs: &[Run]) -> bool {
    let made = format!("{}{SEPARATED}", run.pipeline);
    !is_separated(run)
        && is_valid_pipeline(&made)
        && !runs.iter().any(|other| other.pipeline == made)
        && run.segments.iter().any(|segment| holds_several_voices(&segment.speaker))
}

/// How much of a turn is heard to tell its voice: its middle 3.2 s (two windows of the encoder), as
/// the grouping threshold was measured on cues of 3 s. A whole hour heard turn by turn would cost four
/// times the CPU for a grouping no better.
pub const CUE_S: f64 = 3.2;

/// The turns of `run` to embed on their own: those of a label of several voices, [`MIN_CUE_S`] or
/// longer, as (segment index, start, end) of the stretch heard, at most [`CUE_S`] from its middle.
pub fn cues(run: &Run) -> Vec<(usize, f64, f64)> {
    run.segments
        .iter()
        .enumerate()
        .filter(|(_, s)| holds_several_voices(&s.speaker) && s.end_s - s.start_s >= MIN_CUE_S)
        .map(|(idx, s)| {
            let middle = (s.start_s + s.end_s) / 2.0;
            (idx, s.start_s.max(middle - CUE_S / 2.0), s.end_s.min(middle + CUE_S / 2.0))
        })
        .collect()
}

/// The run of separated voices made from `run`, given the embedding of each cue that holds speech
/// (segment index → (embedding, seconds)) and the embeddings of the run's own clean labels; `taken`
/// holds the labels other runs of the episode use, which a new voice's label must not repeat; `model`
/// names the encoder that made the embeddings.
pub fn separated(
    run: &Run,
    heard: &BTreeMap<usize, (Vec<f32>, f64)>,
    own: &BTreeMap<String, Vec<f32>>,
    taken: &BTreeSet<String>,
    created: &str,
    model: &str,
) -> Run {
    let items: Vec<(&Vec<f32>, f64)> = heard.values().map(|(v, s)| (v, *s)).collect();
    let groups = group(&items, SAME_VOICE);
    // Each group: the run's own label it sounds like, else a new voice, numbered as first heard.
    let mut label_of_group: BTreeMap<usize, String> = BTreeMap::new();
    let mut next = 1;
    let mut centroids: BTreeMap<usize, Vec<f32>> = BTreeMap::new();
    for (&group_id, (vector, _)) in groups.iter().zip(&items) {
        let sum = centroids.entry(group_id).or_insert_with(|| vec![0.0; vector.len()]);
        sum.iter_mut().zip(vector.iter()).for_each(|(s, x)| *s += x);
    }
    for group_id in &groups {
        if label_of_group.contains_key(group_id) {
            continue;
        }
        let centroid = unit_or_zero(&centroids[group_id]);
        let own_label = own
            .iter()
            .map(|(label, vector)| (cosine(&centroid, vector), label))
            .filter(|(c, _)| *c >= SAME_VOICE)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, label)| label.clone());
        let label = own_label.unwrap_or_else(|| {
            loop {
                let candidate = format!("Voice {next}");
                next += 1;
                if !taken.contains(&candidate) && !run.segments.iter().any(|s| s.speaker == candidate) {
                    break candidate;
                }
            }
        });
        label_of_group.insert(*group_id, label);
    }
    let voice_of: BTreeMap<usize, &String> =
        heard.keys().zip(&groups).map(|(segment, group_id)| (*segment, &label_of_group[group_id])).collect();
    // Each turn of several voices under its voice; one too short to hear takes the voice of the
    // nearest heard turn before it, else after it.
    let several: Vec<usize> =
        (0..run.segments.len()).filter(|&idx| holds_several_voices(&run.segments[idx].speaker)).collect();
    let mut voice: Vec<Option<String>> =
        several.iter().map(|idx| voice_of.get(idx).map(|l| (*l).clone())).collect();
    for k in 1..voice.len() {
        if voice[k].is_none() {
            voice[k] = voice[k - 1].clone();
        }
    }
    for k in (0..voice.len().saturating_sub(1)).rev() {
        if voice[k].is_none() {
            voice[k] = voice[k + 1].clone();
        }
    }
    let mut segments = run.segments.clone();
    for (idx, label) in several.iter().zip(voice) {
        if let Some(label) = label {
            segments[*idx].speaker = label;
        }
    }
    let mut labels = BTreeMap::new();
    let mut seconds = BTreeMap::new();
    for (group_id, label) in &label_of_group {
        labels.insert(label.clone(), unit_or_zero(&centroids[group_id]));
        let heard_s: f64 =
            groups.iter().zip(&items).filter(|(g, _)| *g == group_id).map(|(_, (_, s))| s).sum();
        seconds.insert(label.clone(), (heard_s * 10.0).round() / 10.0);
    }
    for (label, vector) in own {
        labels.entry(label.clone()).or_insert_with(|| vector.clone());
    }
    labels.retain(|label, _| segments.iter().any(|s| &s.speaker == label));
    seconds.retain(|label, _| labels.contains_key(label));
    Run {
        pipeline: format!("{}{SEPARATED}", run.pipeline),
        kind: RunKind::Asr,
        created: created.max(run.created.as_str()).to_string(),
        // The turns' labels are this builder's, not the format's: no source-1 vote reads them as names.
        imported_from: None,
        segments,
        speaker_embeddings: (!labels.is_empty()).then(|| SpeakerEmbeddings {
            model: model.into(),
            labels,
            seconds,
        }),
        speaker_names: run.speaker_names.clone(),
    }
}

/// Groups embeddings into voices: each item (embedding, seconds) joins the nearest group whose mean
/// it is at least `same` alike, else starts one (longest items first); every item then moves to its
/// nearest group's mean, a few times over; two groups whose means are `same` alike become one. The
/// group of each item, numbered from 0 in the order of the items.
pub fn group(items: &[(&Vec<f32>, f64)], same: f32) -> Vec<usize> {
    if items.is_empty() {
        return Vec::new();
    }
    let dims = items[0].0.len();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|a, b| items[*b].1.total_cmp(&items[*a].1));
    let mut sums: Vec<Vec<f32>> = Vec::new();
    let mut assigned = vec![0usize; items.len()];
    for idx in order {
        let vector = items[idx].0;
        let best = sums
            .iter()
            .enumerate()
            .map(|(g, sum)| (g, cosine(sum, vector)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let g = match best {
            Some((g, c)) if c >= same => g,
            _ => {
                sums.push(vec![0.0; dims]);
                sums.len() - 1
            }
        };
        add(&mut sums[g], vector, items[idx].1);
        assigned[idx] = g;
    }
    loop {
        for _ in 0..5 {
            let means: Vec<Vec<f32>> = sums.iter().map(|s| unit_or_zero(s)).collect();
            for (idx, (vector, _)) in items.iter().enumerate() {
                assigned[idx] = nearest(&means, vector);
            }
            sums = vec![vec![0.0; dims]; means.len()];
            for (idx, (vector, seconds)) in items.iter().enumerate() {
                add(&mut sums[assigned[idx]], vector, *seconds);
            }
        }
        let means: Vec<Vec<f32>> = sums.iter().map(|s| unit_or_zero(s)).collect();
        let live: Vec<usize> = (0..means.len()).filter(|g| assigned.contains(g)).collect();
        let closest = live
            .iter()
            .flat_map(|&a| live.iter().filter(move |&&b| b > a).map(move |&b| (a, b)))
            .map(|(a, b)| (a, b, cosine(&means[a], &means[b])))
            .max_by(|x, y| x.2.total_cmp(&y.2));
        match closest {
            Some((a, b, c)) if c >= same => {
                let moved = std::mem::take(&mut sums[b]);
                add(&mut sums[a], &moved, 1.0);
                sums[b] = vec![0.0; dims];
                assigned.iter_mut().filter(|g| **g == b).for_each(|g| *g = a);
            }
            _ => break,
        }
    }
    // Renumber in the order the items come.
    let mut renumbered: BTreeMap<usize, usize> = BTreeMap::new();
    assigned
        .iter()
        .map(|g| {
            let next = renumbered.len();
            *renumbered.entry(*g).or_insert(next)
        })
        .collect()
}

fn add(sum: &mut [f32], vector: &[f32], weight: f64) {
    sum.iter_mut().zip(vector).for_each(|(s, x)| *s += x * weight as f32);
}

fn nearest(means: &[Vec<f32>], vector: &[f32]) -> usize {
    let scored = means.iter().enumerate().filter(|(_, m)| m.iter().any(|x| *x != 0.0));
    scored.map(|(g, m)| (g, cosine(m, vector))).max_by(|a, b| a.1.total_cmp(&b.1)).map_or(0, |(g, _)| g)
}

/// `v` scaled to length one (a zero vector stays zero).
fn unit_or_zero(v: &[f32]) -> Vec<f32> {
    unit(v).unwrap_or_else(|| v.to_vec())
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    match (unit(a), unit(b)) {
        (Some(a), Some(b)) => a.iter().zip(&b).map(|(x, y)| x * y).sum(),
        _ => 0.0,
    }
}

/// The most clean speech embedded per label: past a minute the embedding barely moves, and the cost
/// stays bounded on a three-hour episode.
pub const MAX_SPEECH_S: f64 = 60.0;
/// A turn shorter than this is skipped: a word or two says more about the line than the voice.
pub const MIN_TURN_S: f64 = 1.5;
/// A label with less clean speech than this gets no embedding (and the source abstains saying so).
pub const MIN_SPEECH_S: f64 = 4.0;

/// Per label, the stretches its embedding is made from: its clean turns — [`MIN_TURN_S`] or longer,
/// overlapping no other label's turn — longest first, until [`MAX_SPEECH_S`] (the last one cut
/// short). A label with less than [`MIN_SPEECH_S`] of such speech, or one that may hold several
/// voices, has none.
pub fn chosen_turns(segments: &[Segment]) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut overlapped = vec![false; segments.len()];
    for (i, a) in segments.iter().enumerate() {
        for (j, b) in segments.iter().enumerate().skip(i + 1) {
            if b.start_s >= a.end_s {
                break;
            }
            if b.speaker != a.speaker {
                overlapped[i] = true;
                overlapped[j] = true;
            }
        }
    }
    let mut clean: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (segment, _) in segments.iter().zip(&overlapped).filter(|(_, overlapped)| !**overlapped) {
        if segment.end_s - segment.start_s >= MIN_TURN_S && !holds_several_voices(&segment.speaker) {
            clean.entry(segment.speaker.clone()).or_default().push((segment.start_s, segment.end_s));
        }
    }
    clean
        .into_iter()
        .filter_map(|(label, mut turns)| {
            turns.sort_by(|a, b| (b.1 - b.0).total_cmp(&(a.1 - a.0)).then(a.0.total_cmp(&b.0)));
            let mut kept = Vec::new();
            let mut total = 0.0;
            for (start, end) in turns {
                if total >= MAX_SPEECH_S {
                    break;
                }
                let end = end.min(start + MAX_SPEECH_S - total);
                total += end - start;
                kept.push((start, end));
            }
            kept.sort_by(|a, b| a.0.total_cmp(&b.0));
            (total >= MIN_SPEECH_S).then_some((label, kept))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run a transcription made on 2025-01-01, with no voices heard yet and no names a service gave.
    fn asr_run(pipeline: &str, imported_from: Option<&str>, segments: Vec<Segment>) -> Run {
        Run {
            pipeline: pipeline.into(),
            kind: RunKind::Asr,
            created: "2025-01-01".into(),
            imported_from: imported_from.map(str::to_string),
            segments,
            speaker_embeddings: None,
            speaker_names: None,
        }
    }

    #[test]
    fn turns_are_grouped_by_how_alike_they_sound_and_a_short_one_follows_its_neighbour() {
        let (a, b) = (vec![1.0, 0.1, 0.0], vec![0.0, 0.2, 1.0]);
        let (a2, b2) = (vec![0.95, 0.0, 0.1], vec![0.1, 0.1, 0.98]);
        // A publisher's WebVTT without voice tags: every turn is under the one label `UNKNOWN`.
        let turns = [
            (0.0, 0.5, "Hi."),
            (0.5, 4.0, "Welcome to the show."),
            (4.0, 8.0, "Thanks for having me."),
            (8.0, 8.4, "Sure."),
            (8.4, 12.0, "So how did it start?"),
            (12.0, 16.0, "With a bread oven."),
        ];
        let run = asr_run(
            "publisher-webvtt",
            Some("webvtt"),
            turns
                .into_iter()
                .map(|(start_s, end_s, text)| Segment::said("UNKNOWN", start_s, end_s, text))
                .collect(),
        );
        assert!(wants_separating(&run, std::slice::from_ref(&run)));
        assert_eq!(cues(&run).iter().map(|c| c.0).collect::<Vec<_>>(), [1, 2, 4, 5]);
        let heard: BTreeMap<usize, (Vec<f32>, f64)> =
            [(1, (a, 3.5)), (2, (b, 4.0)), (4, (a2, 3.6)), (5, (b2, 4.0))].into_iter().collect();
        let taken: BTreeSet<String> = ["Voice 1".to_string()].into_iter().collect();
        let made = separated(&run, &heard, &BTreeMap::new(), &taken, "2025-02-01", "m");
        assert_eq!(made.pipeline, "publisher-webvtt+voices");
        assert_eq!(made.created, "2025-02-01");
        let labels: Vec<&str> = made.segments.iter().map(|s| s.speaker.as_str()).collect();
        // "Voice 1" is another run's label: the new voices start at 2.
        assert_eq!(labels, ["Voice 2", "Voice 2", "Voice 3", "Voice 3", "Voice 2", "Voice 3"]);
        let embeddings = made.speaker_embeddings.unwrap();
        assert_eq!(embeddings.seconds["Voice 2"], 7.1);
        // Once made, it is not made again.
        let mut again = run.clone();
        again.pipeline = "publisher-webvtt+voices".into();
        assert!(!wants_separating(&run, &[run.clone(), again]));
    }

    #[test]
    fn a_turn_of_two_voices_joins_the_run_s_own_label_it_sounds_like() {
        let own: BTreeMap<String, Vec<f32>> =
            [("A".to_string(), vec![1.0, 0.0]), ("B".to_string(), vec![0.0, 1.0])].into_iter().collect();
        let run = asr_run(
            "svc",
            None,
            vec![
                Segment::said("A", 0.0, 3.0, "One."),
                Segment::said("A+B", 3.0, 6.0, "Both."),
                Segment::said("B", 6.0, 9.0, "Two."),
            ],
        );
        let heard: BTreeMap<usize, (Vec<f32>, f64)> = [(1, (vec![0.1, 0.99], 3.0))].into_iter().collect();
        let made = separated(&run, &heard, &own, &BTreeSet::new(), "2025-01-01", "m");
        let labels: Vec<&str> = made.segments.iter().map(|s| s.speaker.as_str()).collect();
        assert_eq!(labels, ["A", "B", "B"]);
        assert_eq!(made.speaker_embeddings.unwrap().labels.keys().collect::<Vec<_>>(), ["A", "B"]);
    }

    #[test]
    fn a_label_is_heard_from_its_longest_clean_turns_up_to_a_minute() {
        let segments = vec![
            Segment::said("A", 0.0, 40.0, "a long turn"),
            Segment::said("B", 39.0, 45.0, "overlaps A's end, so neither is clean"),
            Segment::said("A", 45.0, 46.0, "too short"),
            Segment::said("A", 46.0, 76.0, "thirty seconds"),
            Segment::said("B", 76.0, 78.0, "two"),
            Segment::said("A+B", 78.0, 90.0, "both at once"),
            Segment::said("A", 90.0, 125.0, "thirty-five"),
        ];
        let chosen = chosen_turns(&segments);
        // A: 35 s + 30 s would pass the minute, so the second turn is cut to 25 s.
        assert_eq!(chosen["A"], vec![(46.0, 71.0), (90.0, 125.0)]);
        // B's clean speech (2 s) is under the minimum; A+B is never embedded.
        assert_eq!(chosen.keys().collect::<Vec<_>>(), ["A"]);
    }
}
