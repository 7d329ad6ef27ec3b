//! Speaker identification figures (BENCHMARKS.md): `cargo bench -p tests --bench identify`.
//!
//! The evaluation set is the Changelog corpus (CC BY-SA 4.0, © Changelog Media LLC), extracted into the
//! ignored `tests/.work/corpus` when missing. Each transcript's true speaker names come from its
//! Markdown; the sources see only anonymous labels (`S0`, `S1`, …), the text and the roster. Sources 1-3
//! are simulated at a stated abstention rate and error rate (an error names someone else on the
//! roster, or a stranger when the roster has nobody else), except that the language model also abstains
//! for a label none of whose turns the real turn selection (`llm::select_turns`) would show it.
//! Elimination and the states are the real `names::resolve_all`. A second part runs the real voice
//! matcher over simulated embeddings to choose its thresholds, and times it against 1,000 voiceprints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use domain::quotes::transcript::import::parse_changelog;
use domain::quotes::transcript::names::{LabelVotes, NameState, Names, resolve_all};
use domain::quotes::transcript::voice::{Library, LibraryBuilder, THRESHOLDS, Thresholds};
use domain::quotes::transcript::{Person, Segment, Vote, VoteSource, llm};
use tests::corpus::Rng;

/// One evaluation episode: the truth per label, the roster, and what the model would be shown.
struct Case {
    truth: BTreeMap<String, String>,
    roster: Vec<Person>,
    /// Labels the real turn selection shows to the model.
    shown: Vec<String>,
}

fn load(dir: &Path) -> Vec<Case> {
    let mut files: Vec<PathBuf> = Vec::new();
    for show in std::fs::read_dir(dir).unwrap().flatten() {
        if show.path().is_dir() {
            for file in std::fs::read_dir(show.path()).unwrap().flatten() {
                if file.path().extension().is_some_and(|e| e == "md") {
                    files.push(file.path());
                }
            }
        }
    }
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let segments = parse_changelog(&std::fs::read_to_string(&file).unwrap());
        let mut order: Vec<String> = Vec::new();
        for segment in &segments {
            if !order.contains(&segment.speaker) {
                order.push(segment.speaker.clone());
            }
        }
        if order.is_empty() {
            continue;
        }
        let label_of: BTreeMap<&str, String> =
            order.iter().enumerate().map(|(idx, name)| (name.as_str(), format!("S{idx}"))).collect();
        let anonymous: Vec<Segment> = segments
            .iter()
            .map(|s| Segment { speaker: label_of[s.speaker.as_str()].clone(), ..s.clone() })
            .collect();
        let roster: Vec<Person> = tests::corpus::roster(&order);
        let mut shown: Vec<String> =
            llm::select_turns(&anonymous, &roster, llm::MAX_TURNS).into_iter().map(|t| t.speaker).collect();
        shown.sort();
        shown.dedup();
        let truth = order.iter().map(|name| (label_of[name.as_str()].clone(), name.clone())).collect();
        cases.push(Case { truth, roster, shown });
    }
    cases
}

/// A source's stated behaviour: of all labels, `abstain` abstain; of its votes, `error` are wrong.
#[derive(Clone, Copy)]
struct Rates {
    abstain: f64,
    error: f64,
}

fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn simulated(rng: &mut Rng, source: VoteSource, rates: Rates, truth: &str, roster: &[Person]) -> Vote {
    if uniform(rng) < rates.abstain {
        return Vote::new(source, None, "simulated abstention");
    }
    if uniform(rng) < rates.error {
        let others: Vec<&Person> = roster.iter().filter(|p| p.name != truth).collect();
        let wrong =
            if others.is_empty() { "A. Stranger".to_string() } else { rng.pick(&others).name.clone() };
        return Vote::new(source, Some(wrong), "simulated error");
    }
    Vote::new(source, Some(truth.to_string()), "simulated")
}

#[derive(Default)]
struct Tally {
    labels: usize,
    confident: usize,
    confident_wrong: usize,
    tentative: usize,
    tentative_wrong: usize,
    withheld: usize,
}

fn evaluate(cases: &[Case], asr: Rates, model: Rates, voice: Rates, seed: u64) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    for case in cases {
        let mut names = Names::default();
        for (label, truth) in &case.truth {
            let mut votes = vec![
                simulated(&mut rng, VoteSource::Asr, asr, truth, &case.roster),
                simulated(&mut rng, VoteSource::VoiceMatch, voice, truth, &case.roster),
            ];
            votes.push(if case.shown.contains(label) {
                simulated(&mut rng, VoteSource::LanguageModel, model, truth, &case.roster)
            } else {
                Vote::new(VoteSource::LanguageModel, None, "no turn shows this voice")
            });
            names.labels.insert(label.clone(), LabelVotes { votes, human: None });
        }
        let labels: Vec<String> = case.truth.keys().cloned().collect();
        let reports = resolve_all(&names, &[labels], &case.roster);
        for (label, truth) in &case.truth {
            let report = &reports[label];
            tally.labels += 1;
            let wrong = report.name.as_deref() != Some(truth.as_str());
            match report.name_state {
                NameState::Confident => {
                    tally.confident += 1;
                    tally.confident_wrong += usize::from(wrong);
                }
                NameState::Tentative => {
                    tally.tentative += 1;
                    tally.tentative_wrong += usize::from(wrong);
                }
                NameState::Withheld => tally.withheld += 1,
                _ => {}
            }
        }
    }
    tally
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 { "-".into() } else { format!("{:.2} %", 100.0 * n as f64 / of as f64) }
}

fn gaussian(rng: &mut Rng) -> f32 {
    let (u, v) = (uniform(rng).max(1e-12), uniform(rng));
    ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
}

const DIMS: usize = 192;

/// People's voices: a shared component (voices resemble each other: mean cosine between two people
/// about 0.25) plus a personal one.
fn person_voice(rng: &mut Rng, shared: &[f32]) -> Vec<f32> {
    let own: Vec<f32> = (0..DIMS).map(|_| gaussian(rng) / (DIMS as f32).sqrt()).collect();
    shared.iter().zip(&own).map(|(s, o)| 0.5 * s + o).collect()
}

/// One episode's embedding of a voice: the voice plus recording noise (same person: cosine ≈ 0.7).
fn recording(rng: &mut Rng, voice: &[f32], noise: f32) -> Vec<f32> {
    let norm = voice.iter().map(|x| x * x).sum::<f32>().sqrt();
    voice.iter().map(|x| x / norm + noise * gaussian(rng) / (DIMS as f32).sqrt()).collect()
}

fn main() {
    let dir = tests::corpus::changelog();
    let started = Instant::now();
    let cases = load(&dir);
    let n_labels: usize = cases.iter().map(|c| c.truth.len()).sum();
    let shown: usize = cases.iter().map(|c| c.shown.len()).sum();
    println!(
        "evaluation set: {} episodes, {n_labels} labels; turn selection shows the model {} of them ({}); loaded in {:.1} s",
        cases.len(),
        shown,
        pct(shown, n_labels),
        started.elapsed().as_secs_f64()
    );

    println!(
        "\n| per-source error | abstention (asr / model / voice) | labels | confident | confident and wrong | tentative (wrong) | withheld | named |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for error in [0.05, 0.10, 0.20] {
        for (asr_a, model_a, voice_a) in [(0.5, 0.2, 0.3), (0.2, 0.2, 0.2)] {
            let t = evaluate(
                &cases,
                Rates { abstain: asr_a, error },
                Rates { abstain: model_a, error },
                Rates { abstain: voice_a, error },
                7,
            );
            println!(
                "| {:.0} % | {:.0} / {:.0} / {:.0} % | {} | {} | **{}** ({} of {}) | {} ({}) | {} | {} |",
                error * 100.0,
                asr_a * 100.0,
                model_a * 100.0,
                voice_a * 100.0,
                t.labels,
                pct(t.confident, t.labels),
                pct(t.confident_wrong, t.confident),
                t.confident_wrong,
                t.confident,
                pct(t.tentative, t.labels),
                pct(t.tentative_wrong, t.tentative),
                pct(t.withheld, t.labels),
                pct(t.confident + t.tentative, t.labels),
            );
        }
    }

    // Voice match: every distinct person of the corpus gets a voice; episodes in corpus order; a label
    // is confirmed (joins the library) when its true name is known — the best case for the library.
    let mut rng = Rng::new(11);
    let shared: Vec<f32> = (0..DIMS).map(|_| gaussian(&mut rng) / (DIMS as f32).sqrt()).collect();
    let mut voices: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    let mut labels: Vec<(String, Vec<f32>, usize)> = Vec::new();
    for (idx, case) in cases.iter().enumerate() {
        for name in case.truth.values() {
            let voice = voices.entry(name.clone()).or_insert_with(|| person_voice(&mut rng, &shared)).clone();
            labels.push((name.clone(), recording(&mut rng, &voice, 0.9), idx));
        }
    }
    println!(
        "\nvoice match: {} people, {} labels, {DIMS}-dimensional simulated embeddings",
        voices.len(),
        labels.len()
    );
    println!(
        "\n| min cosine | min margin | votes (of labels whose voice is on file) | wrong votes | votes on unknown voices |"
    );
    println!("|---|---|---|---|---|");
    for (min_cosine, min_margin) in
        [(0.4, 0.0), (0.5, 0.0), (0.5, 0.05), (0.6, 0.0), (0.6, 0.05), (0.6, 0.10), (0.7, 0.10), (0.7, 0.15)]
    {
        let thresholds = Thresholds { min_cosine, min_margin };
        let mut builder = LibraryBuilder::default();
        let (mut known, mut votes, mut wrong, mut unknown_votes, mut unknown) = (0, 0, 0, 0, 0);
        let mut seen: std::collections::BTreeSet<String> = Default::default();
        let mut current = 0;
        let mut library = builder.library("sim");
        for (name, embedding, episode) in &labels {
            if *episode != current {
                library = builder.library("sim");
                current = *episode;
            }
            let vote = library.vote(embedding, "sim", thresholds);
            if seen.contains(name) {
                known += 1;
                if let Some(voted) = &vote.name {
                    votes += 1;
                    wrong += usize::from(voted != name);
                }
            } else {
                unknown += 1;
                unknown_votes += usize::from(vote.name.is_some());
            }
            builder.add("sim", name, embedding);
            seen.insert(name.clone());
        }
        println!(
            "| {min_cosine:.2} | {min_margin:.2} | {} | {} | {} |",
            pct(votes, known),
            pct(wrong, votes),
            pct(unknown_votes, unknown)
        );
    }

    // Time per label against a library of 1,000 voiceprints.
    let mut builder = LibraryBuilder::default();
    let people: Vec<(String, Vec<f32>)> =
        (0..1000).map(|idx| (format!("Person {idx}"), person_voice(&mut rng, &shared))).collect();
    for (name, voice) in &people {
        builder.add("sim", name, &recording(&mut rng, voice, 0.9));
    }
    let library: Library = builder.library("sim");
    assert_eq!(library.prints.len(), 1000);
    let queries: Vec<Vec<f32>> =
        (0..5000).map(|idx| recording(&mut rng, &people[idx % people.len()].1, 0.9)).collect();
    let mut times: Vec<f64> = Vec::with_capacity(queries.len());
    let mut n_votes = 0;
    for query in &queries {
        let started = Instant::now();
        let vote = library.vote(query, "sim", THRESHOLDS);
        times.push(started.elapsed().as_secs_f64() * 1e6);
        n_votes += usize::from(vote.name.is_some());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "\nvoice match, 1,000 voiceprints, {} labels: p50 {:.1} µs, p99 {:.1} µs per label ({} votes at {:.2}/{:.2})",
        queries.len(),
        times[times.len() / 2],
        times[times.len() * 99 / 100],
        n_votes,
        THRESHOLDS.min_cosine,
        THRESHOLDS.min_margin
    );
}
