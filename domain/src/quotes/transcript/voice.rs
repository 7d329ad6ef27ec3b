//! Source 3, voice match: a label's speaker embedding against voiceprints of people confirmed on
//! earlier episodes.
//!
//! A voiceprint is the mean direction of every confirmed (confident or human) embedding of one person
//! made by one embedding model; vectors of different models are never compared. The match is the
//! cosine similarity with each print: the source votes for the best person only when that cosine
//! reaches [`THRESHOLDS`]`.min_cosine` *and* beats the runner-up by [`THRESHOLDS`]`.min_margin`;
//! otherwise it abstains and says why. The cosine goes into the vote as its score, for a reader — the
//! name state never uses it.
//!
//! How the thresholds were chosen (`scripts/voice-thresholds.sh`, BENCHMARKS.md "Voices"): the
//! builder's real encoder (Resemblyzer's GE2E) over recorded-speaker voices — festival's kal and ked
//! (two American men), slt (an American woman), espeak-ng's voices and kal moved in pitch — each
//! saying four passages of 10–14 s. A voiceprint of three passages met its own voice's fourth at a
//! cosine of 0.964 or more, and the nearest print of another voice at 0.916 at most (two espeak-ng men);
//! the own voice led the nearest other by 0.059 or more. A minimum of 0.93 votes for no stranger and
//! for every known voice there; the margin of 0.05 keeps every known voice and turns away a voice
//! halfway between two people. Synthetic voices are not podcast speech: a real show's voices vary
//! more between episodes, so these thresholds cost votes there rather than risk a wrong one.
//!
//! The alternative rejected was a nearest-neighbour vote without a margin: with a thousand people on
//! file, two similar voices are common and a bare nearest neighbour picks one at random.

use std::collections::BTreeMap;

use crate::quotes::transcript::{Vote, VoteSource};

/// The matcher's version, recorded in every vote it makes.
pub const MATCHER: &str = "voiceprint-cosine-v1";

/// When a voice match votes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// The best cosine similarity must reach this.
    pub min_cosine: f32,
    /// …and exceed the runner-up person's by this much.
    pub min_margin: f32,
}

/// The thresholds in use (how they were chosen: the module docs and BENCHMARKS.md).
pub const THRESHOLDS: Thresholds = Thresholds { min_cosine: 0.93, min_margin: 0.05 };

/// A vector scaled to length one, or `None` for a zero or non-finite one.
pub fn unit(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm.is_finite() && norm > 0.0).then(|| vector.iter().map(|x| x / norm).collect())
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// One person's voiceprint.
#[derive(Debug, Clone, PartialEq)]
pub struct Voiceprint {
    pub name: String,
    /// Unit length.
    pub vector: Vec<f32>,
    /// How many confirmed labels went into it.
    pub n_labels: usize,
}

/// Every voiceprint of one embedding model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Library {
    pub prints: Vec<Voiceprint>,
}

/// One person's running sum: (spelling of the name, sum of unit vectors, count).
type PersonSum = (String, Vec<f32>, usize);

/// Voiceprint libraries by embedding model, grown one confirmed label at a time.
#[derive(Debug, Clone, Default)]
pub struct LibraryBuilder {
    /// model → folded name → running sum.
    sums: BTreeMap<String, BTreeMap<String, PersonSum>>,
}

impl LibraryBuilder {
    /// Adds one confirmed label's embedding; a vector of another length than the model's first, or a
    /// zero one, is skipped (validation reports it).
    pub fn add(&mut self, model: &str, name: &str, embedding: &[f32]) {
        let Some(vector) = unit(embedding) else { return };
        let people = self.sums.entry(model.to_string()).or_default();
        if people.values().next().is_some_and(|(_, sum, _)| sum.len() != vector.len()) {
            return;
        }
        let key = name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        let entry =
            people.entry(key).or_insert_with(|| (name.trim().to_string(), vec![0.0; vector.len()], 0));
        for (sum, x) in entry.1.iter_mut().zip(&vector) {
            *sum += x;
        }
        entry.2 += 1;
    }

    /// The library of one model (empty when nobody was confirmed with it).
    pub fn library(&self, model: &str) -> Library {
        let prints = self
            .sums
            .get(model)
            .into_iter()
            .flatten()
            .filter_map(|(_, (name, sum, n))| {
                Some(Voiceprint { name: name.clone(), vector: unit(sum)?, n_labels: *n })
            })
            .collect();
        Library { prints }
    }
}

/// The best and second-best people for one embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub best: Option<(String, f32)>,
    pub runner_up: Option<(String, f32)>,
}

impl Library {
    /// Cosine similarity with every print; keeps the top two.
    pub fn nearest(&self, embedding: &[f32]) -> Match {
        let Some(query) = unit(embedding) else { return Match { best: None, runner_up: None } };
        let mut best: Option<(usize, f32)> = None;
        let mut runner_up: Option<(usize, f32)> = None;
        for (idx, print) in self.prints.iter().enumerate() {
            if print.vector.len() != query.len() {
                continue;
            }
            let cosine = dot(&query, &print.vector);
            if best.is_none_or(|(_, b)| cosine > b) {
                runner_up = best;
                best = Some((idx, cosine));
            } else if runner_up.is_none_or(|(_, r)| cosine > r) {
                runner_up = Some((idx, cosine));
            }
        }
        let named = |found: Option<(usize, f32)>| found.map(|(idx, c)| (self.prints[idx].name.clone(), c));
        Match { best: named(best), runner_up: named(runner_up) }
    }

    /// The voice match's vote (or abstention) for one label's embedding.
    pub fn vote(&self, embedding: &[f32], embedding_model: &str, thresholds: Thresholds) -> Vote {
        let model = format!("{MATCHER} over {embedding_model}");
        let abstain = |why: String| Vote::new(VoteSource::VoiceMatch, None, why).with_model(model.clone());
        if self.prints.is_empty() {
            return abstain(format!("no confirmed voice of model {embedding_model} on an earlier episode"));
        }
        let found = self.nearest(embedding);
        let Some((name, cosine)) = found.best else {
            return abstain("the embedding is empty or of another length than the voiceprints".into());
        };
        let runner =
            found.runner_up.as_ref().map_or(String::new(), |(n, c)| format!("; runner-up {n} {c:.2}"));
        if cosine < thresholds.min_cosine {
            return abstain(format!(
                "unknown voice: best {name} {cosine:.2} is below {:.2}{runner}",
                thresholds.min_cosine
            ))
            .with_score(f64::from(cosine));
        }
        let margin = cosine - found.runner_up.as_ref().map_or(-1.0, |(_, c)| *c);
        if margin < thresholds.min_margin {
            return abstain(format!(
                "ambiguous: {name} {cosine:.2}{runner}, closer than {:.2}",
                thresholds.min_margin
            ))
            .with_score(f64::from(cosine));
        }
        Vote::new(
            VoteSource::VoiceMatch,
            Some(name.clone()),
            format!(
                "cosine {cosine:.2} to {name}'s voiceprint from {} episode(s){runner}",
                self.count(&name)
            ),
        )
        .with_model(model)
        .with_score(f64::from(cosine))
    }

    fn count(&self, name: &str) -> usize {
        self.prints.iter().find(|print| print.name == name).map_or(0, |print| print.n_labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    /// A library of three people with orthogonal-ish voices in four dimensions.
    fn library() -> Library {
        let mut builder = LibraryBuilder::default();
        builder.add("m", "Ana Lima", &[1.0, 0.0, 0.0, 0.0]);
        builder.add("m", "Ana Lima", &[0.9, 0.1, 0.0, 0.0]);
        builder.add("m", "Ben Okafor", &[0.0, 1.0, 0.0, 0.0]);
        builder.add("m", "Bea Okafor", &[0.0, 0.9, 0.3, 0.0]);
        builder.add("other-model", "Cy", &[0.0, 0.0, 0.0, 1.0]);
        builder.library("m")
    }

    fn check(embedding: &[f32], expect: Expect) {
        let vote = library().vote(embedding, "m", THRESHOLDS);
        let score = vote.score.map_or("-".to_string(), |s| format!("{s:.2}"));
        expect.assert_eq(&format!("{:?} {score} {}", vote.name, vote.evidence));
    }

    #[test]
    fn a_clear_match_votes_with_its_cosine() {
        check(
            &[0.95, 0.05, 0.0, 0.1],
            expect![[
                r#"Some("Ana Lima") 0.99 cosine 0.99 to Ana Lima's voiceprint from 2 episode(s); runner-up Ben Okafor 0.05"#
            ]],
        );
    }

    #[test]
    fn two_close_voices_make_an_ambiguous_abstention() {
        // Ben and Bea sound alike; halfway between them neither wins by the margin.
        check(
            &[0.0, 1.0, 0.15, 0.0],
            expect!["None 0.99 ambiguous: Ben Okafor 0.99; runner-up Bea Okafor 0.99, closer than 0.05"],
        );
    }

    #[test]
    fn an_unknown_voice_abstains() {
        check(
            &[0.1, 0.1, -0.2, 0.95],
            expect!["None 0.11 unknown voice: best Ana Lima 0.11 is below 0.93; runner-up Ben Okafor 0.10"],
        );
    }

    #[test]
    fn no_prints_of_the_model_or_a_broken_embedding_abstain() {
        let empty = LibraryBuilder::default().library("m");
        let vote = empty.vote(&[1.0, 0.0], "m", THRESHOLDS);
        assert_eq!(vote.name, None);
        assert_eq!(vote.evidence, "no confirmed voice of model m on an earlier episode");
        let vote = library().vote(&[0.0, 0.0, 0.0, 0.0], "m", THRESHOLDS);
        assert_eq!((vote.name, vote.score), (None, None));
    }
}
