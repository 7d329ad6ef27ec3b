//! Source 3's input: each label's speaker embedding, made from the episode's own audio with
//! [`crate::voice`]'s encoder and written into the run (`speaker_embeddings`, with the model and the
//! seconds of speech used). No audio is kept: the file is fetched into a scratch file under the
//! outbound rules ([`crate::fetch`]), only the stretches chosen are decoded, and the file is removed.
//! Which stretches, and how the voices of a run are told apart, are `domain`'s ([`hearing`]).
//!
//! A run that already carries embeddings (of this model, or exported by its pipeline with another)
//! is left as it is, so a re-run fetches nothing. A label that may hold several voices
//! ([`holds_several_voices`]) is never embedded: one print of two people would match both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use domain::quotes::transcript::hearing::{self, MIN_SPEECH_S, MIN_TURN_S, chosen_turns};
use domain::quotes::transcript::names::holds_several_voices;
use domain::quotes::transcript::{Episode, Run, SpeakerEmbeddings};
use domain::site::outbound::{Allowance, Fetched};

use crate::fetch::Fetcher;
use crate::voice::{self, Encoder, MODEL, SAMPLE_RATE};

/// What embedding did for one episode.
#[derive(Debug, Default)]
pub struct Heard {
    /// Label → the seconds of speech its new embedding was made from.
    pub embedded: BTreeMap<String, f64>,
    /// Label → why it has no embedding; each becomes the voice source's abstention.
    pub abstentions: BTreeMap<String, String>,
    /// Why nothing was heard at all (no audio named, no weights): said, not voted.
    pub note: Option<String>,
    /// What separating the voices of runs did, one line per run.
    pub separated: Vec<String>,
}

impl Heard {
    /// What a person reads in `builder identify`'s report.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.note.iter().cloned().collect();
        lines.extend(
            self.embedded.iter().map(|(label, s)| format!("{label}: embedded from {s:.1} s of speech")),
        );
        lines.extend(self.abstentions.iter().map(|(label, why)| format!("{label}: not embedded: {why}")));
        lines.extend(self.separated.iter().cloned());
        lines
    }
}

/// The encoder and the fetcher, made once for a whole `builder identify`.
pub struct Voices {
    encoder: std::result::Result<Encoder, String>,
    fetcher: Fetcher,
    scratch: PathBuf,
}

impl Voices {
    /// The encoder from its cached weights (their absence is a note on each episode, never an error)
    /// and a fetcher under `allowance`.
    pub fn new(allowance: Allowance) -> Result<Voices> {
        Ok(Voices {
            encoder: voice::load().map_err(|err| format!("{err:#}")),
            fetcher: Fetcher::new(allowance)?,
            scratch: std::env::temp_dir(),
        })
    }

    /// Gives each run of the episode without embeddings one per label it can, separates the voices of
    /// each run that holds several under one label ([`hearing`]), and writes the changed and new
    /// runs into `dir/runs/`.
    pub fn embed(&self, dir: &Path, episode: &Episode, runs: &mut Vec<Run>) -> Result<Heard> {
        let mut heard = Heard::default();
        let wanting: Vec<usize> = (0..runs.len())
            .filter(|&idx| runs[idx].speaker_embeddings.is_none())
            .filter(|&idx| runs[idx].segments.iter().any(|s| !holds_several_voices(&s.speaker)))
            .collect();
        let separating: Vec<usize> =
            (0..runs.len()).filter(|&idx| hearing::wants_separating(&runs[idx], runs)).collect();
        if wanting.is_empty() && separating.is_empty() {
            return Ok(heard);
        }
        let Some(audio_url) = &episode.audio_url else {
            heard.note = Some("the episode names no audio_url: no voice was heard".into());
            return Ok(heard);
        };
        let encoder = match &self.encoder {
            Ok(encoder) => encoder,
            Err(why) => {
                heard.note = Some(format!("voices were not heard: {why}"));
                return Ok(heard);
            }
        };
        let chosen: Vec<BTreeMap<String, Vec<(f64, f64)>>> =
            wanting.iter().map(|&idx| chosen_turns(&runs[idx].segments)).collect();
        for (&idx, turns) in wanting.iter().zip(&chosen) {
            for segment in &runs[idx].segments {
                let label = &segment.speaker;
                if holds_several_voices(label) {
                    heard.abstentions.insert(
                        label.clone(),
                        "this label may hold several voices: one embedding would be of no one".into(),
                    );
                } else if !turns.contains_key(label) {
                    heard.abstentions.insert(
                        label.clone(),
                        format!(
                            "less than {MIN_SPEECH_S:.0} s of clean speech (turns of {MIN_TURN_S} s or more \
                             that overlap no other voice)"
                        ),
                    );
                }
            }
        }
        let cues: Vec<Vec<(usize, f64, f64)>> =
            separating.iter().map(|&idx| hearing::cues(&runs[idx])).collect();
        let mut turn_spans: Vec<(f64, f64)> =
            chosen.iter().flat_map(|t| t.values().flatten().copied()).collect();
        let mut cue_spans: Vec<(f64, f64)> =
            cues.iter().flatten().map(|(_, start, end)| (*start, *end)).collect();
        let mut spans: Vec<(f64, f64)> = turn_spans.iter().chain(&cue_spans).copied().collect();
        for list in [&mut turn_spans, &mut cue_spans, &mut spans] {
            list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            list.dedup();
        }
        if spans.is_empty() {
            return Ok(heard);
        }
        let find = |list: &[(f64, f64)], span: &(f64, f64)| {
            list.binary_search_by(|probe| probe.0.total_cmp(&span.0).then(probe.1.total_cmp(&span.1))).ok()
        };
        // What was heard: the samples of each label's turns, the embedding of each cue.
        let mut turn_samples: BTreeMap<usize, Vec<f32>> = BTreeMap::new();
        let mut cue_embeddings: BTreeMap<usize, (Vec<f32>, f64)> = BTreeMap::new();
        let mut pending: Vec<(usize, Vec<f32>)> = Vec::new();
        let flush = |pending: &mut Vec<(usize, Vec<f32>)>, into: &mut BTreeMap<usize, (Vec<f32>, f64)>| {
            let wavs: Vec<&[f32]> = pending.iter().map(|(_, samples)| samples.as_slice()).collect();
            for ((at, samples), embedding) in pending.iter().zip(encoder.embed_many(&wavs)) {
                if let Some(embedding) = embedding {
                    into.insert(*at, (embedding, samples.len() as f64 / f64::from(SAMPLE_RATE)));
                }
            }
            pending.clear();
        };
        let decoded = self.fetch_and_decode(audio_url, &spans, &mut |idx, samples| {
            let span = spans[idx];
            if let Some(at) = find(&cue_spans, &span) {
                pending.push((at, samples.clone()));
                if pending.iter().map(|(_, s)| s.len()).sum::<usize>() > 100 * SAMPLE_RATE as usize {
                    flush(&mut pending, &mut cue_embeddings);
                }
            }
            if let Some(at) = find(&turn_spans, &span) {
                turn_samples.insert(at, samples);
            }
            Ok(())
        });
        flush(&mut pending, &mut cue_embeddings);
        if let Err(err) = decoded {
            let why = format!("the audio could not be heard: {err:#}");
            for label in chosen.iter().flat_map(BTreeMap::keys) {
                heard.abstentions.insert(label.clone(), why.clone());
            }
            if !separating.is_empty() {
                heard.note = Some(format!("no voices were separated: {why}"));
            }
            return Ok(heard);
        }
        for (&idx, turns) in wanting.iter().zip(&chosen) {
            let mut labels = BTreeMap::new();
            let mut seconds = BTreeMap::new();
            for (label, label_spans) in turns {
                let speech: Vec<f32> = label_spans
                    .iter()
                    .filter_map(|span| turn_samples.get(&find(&turn_spans, span)?))
                    .flatten()
                    .copied()
                    .collect();
                match encoder.embed(&speech) {
                    Some(embedding) => {
                        let heard_s = (speech.len() as f64 / f64::from(SAMPLE_RATE) * 10.0).round() / 10.0;
                        seconds.insert(label.clone(), heard_s);
                        heard.embedded.insert(label.clone(), heard_s);
                        labels.insert(label.clone(), embedding);
                    }
                    None => {
                        heard.abstentions.insert(label.clone(), "its turns hold no speech".into());
                    }
                }
            }
            if labels.is_empty() {
                continue;
            }
            let run = &mut runs[idx];
            run.speaker_embeddings = Some(SpeakerEmbeddings { model: MODEL.into(), labels, seconds });
            write_run(dir, run)?;
        }
        let mut made = Vec::new();
        for (&idx, cues) in separating.iter().zip(&cues) {
            let run = &runs[idx];
            let by_segment: BTreeMap<usize, (Vec<f32>, f64)> = cues
                .iter()
                .filter_map(|(segment, start, end)| {
                    Some((*segment, cue_embeddings.get(&find(&cue_spans, &(*start, *end))?)?.clone()))
                })
                .collect();
            if by_segment.is_empty() {
                heard.separated.push(format!("{}: no turn of its several voices holds speech", run.pipeline));
                continue;
            }
            let own: BTreeMap<String, Vec<f32>> = run
                .speaker_embeddings
                .as_ref()
                .filter(|embeddings| embeddings.model == MODEL)
                .map(|embeddings| embeddings.labels.clone())
                .unwrap_or_default();
            let taken: BTreeSet<String> = runs
                .iter()
                .filter(|other| other.pipeline != run.pipeline)
                .flat_map(|other| other.segments.iter().map(|s| s.speaker.clone()))
                .collect();
            let new = hearing::separated(
                run,
                &by_segment,
                &own,
                &taken,
                &time::OffsetDateTime::now_utc().date().to_string(),
                MODEL,
            );
            let voices = new.speaker_embeddings.as_ref().map_or(0, |e| e.labels.len());
            heard.separated.push(format!(
                "{}: {} turns heard, {voices} voices, written as {}",
                run.pipeline,
                by_segment.len(),
                new.pipeline
            ));
            write_run(dir, &new)?;
            made.push(new);
        }
        runs.extend(made);
        Ok(heard)
    }

    /// Hands `each` the samples of each span of the audio at `address`, fetched into a scratch file
    /// that is removed afterwards.
    fn fetch_and_decode(
        &self,
        address: &str,
        spans: &[(f64, f64)],
        each: &mut dyn FnMut(usize, Vec<f32>) -> Result<()>,
    ) -> Result<()> {
        // The decoder takes the file's extension as a hint.
        let extension = address
            .rsplit('/')
            .next()
            .and_then(|name| name.split(['?', '#']).next())
            .and_then(|name| name.rsplit_once('.'))
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .filter(|ext| ext.len() <= 4 && ext.chars().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or_else(|| "audio".into());
        let path = self.scratch.join(format!("commonplace-voice-{}.{extension}", std::process::id()));
        let result = (|| {
            let mut file =
                std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
            self.fetcher.download(address, Fetched::Audio, &mut file)?;
            let size = file.metadata().map_or(0, |meta| meta.len());
            drop(file);
            eprintln!("  fetched {:.1} MB; hearing {} stretches of it", size as f64 / 1e6, spans.len());
            voice::each_span_16k(&path, spans, each)
        })();
        let _ = std::fs::remove_file(&path);
        result
    }
}

fn write_run(dir: &Path, run: &Run) -> Result<()> {
    let path = dir.join("runs").join(format!("{}.json", run.pipeline));
    let mut text = serde_json::to_string_pretty(run)?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}
