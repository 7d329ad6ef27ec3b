//! `builder identify [--episode ID | --all] --content DIR`: runs the identification sources over
//! episodes and writes each source's vote or abstention into the episode's `names.json`.
//!
//! Source 1 (the service's own identification) is a pure function of the content. Source 3 (voice
//! match) first hears the episode: a run without speaker embeddings gets one per label from the
//! episode's `audio_url` ([`voices`]), then each embedding is matched with the voiceprints of people
//! confirmed on earlier episodes. Source 2 (a language model) asks an OpenAI-compatible chat-completions endpoint, configured
//! like the Worker's AI by `AI_BASE_URL` (such as `https://api.openai.com/v1`), `AI_MODEL` and
//! `AI_API_KEY`. Without `AI_BASE_URL` the language model's stored votes are left alone. Source 4
//! (elimination) is computed whenever names are resolved and is not stored (see
//! `domain::quotes::transcript::identify`).
//!
//! Episodes are visited in publication order, and the voiceprint library for an episode holds only the
//! labels confirmed (confident or human) on episodes published before it, of people whom no roster
//! entry marks `no_voiceprint`. A re-run asks the model
//! nothing whose answer is already stored for the same prompt, and rewrites no file whose names did not
//! change; human decisions are never touched.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use domain::quotes::transcript::identify::{asr_votes_of, label_groups, merge};
use domain::quotes::transcript::names::{NameState, resolve_all};
use domain::quotes::transcript::voice::{LibraryBuilder, MATCHER, THRESHOLDS};
use domain::quotes::transcript::{
    Episode, Names, Run, RunKind, Vote, VoteSource, episode_id, llm, normalise_source_url,
};

/// The language model's endpoint, from the environment.
#[derive(Debug, Clone)]
pub struct AiConfig {
    /// The OpenAI-compatible base, such as `https://api.openai.com/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl AiConfig {
    /// `AI_BASE_URL`, `AI_MODEL` (default `gpt-4o-mini`) and `AI_API_KEY`; `None` without a base URL.
    pub fn from_env() -> Option<AiConfig> {
        let base_url = std::env::var("AI_BASE_URL").ok().filter(|url| !url.trim().is_empty())?;
        Some(AiConfig {
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            model: std::env::var("AI_MODEL")
                .ok()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "gpt-4o-mini".into()),
            api_key: std::env::var("AI_API_KEY").ok().filter(|key| !key.is_empty()),
        })
    }
}

/// Which episodes: one (by `ep_…` id or `<show>/<episode>` folder), or all.
#[derive(Debug, Clone)]
pub enum Which {
    One(String),
    All,
}

/// One episode as `content/shows/<show>/<episode>/` holds it.
struct Loaded {
    dir: PathBuf,
    folder: String,
    id: String,
    episode: Episode,
    names: Names,
    runs: Vec<Run>,
}

/// What happened to one episode.
#[derive(Debug)]
pub struct Outcome {
    pub id: String,
    pub folder: String,
    pub changed: bool,
    /// label → (state, name) after the new votes.
    pub states: BTreeMap<String, (NameState, Option<String>)>,
    /// Problems that left a source's votes as they were (such as the model endpoint failing).
    pub warnings: Vec<String>,
    /// What hearing the voices did: labels embedded, abstentions and why.
    pub voices: Vec<String>,
}

pub fn run(content: &Path, which: Which) -> Result<ExitCode> {
    let ai = AiConfig::from_env();
    if ai.is_none() {
        eprintln!("AI_BASE_URL is not set: the language model's stored votes are kept as they are");
    }
    let voices = voices::Voices::new(crate::fetch::allowance()?)?;
    let outcomes = identify(content, &which, ai.as_ref(), Some(&voices))?;
    let mut failed = false;
    for outcome in &outcomes {
        let mark = if outcome.changed { "updated" } else { "unchanged" };
        eprintln!("{} ({}): names.json {mark}", outcome.folder, outcome.id);
        for line in &outcome.voices {
            eprintln!("  voices: {line}");
        }
        for (label, (state, name)) in &outcome.states {
            eprintln!("  {label}: {} {}", state_code(*state), name.as_deref().unwrap_or("-"));
        }
        for warning in &outcome.warnings {
            failed = true;
            eprintln!("  warning: {warning}");
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn state_code(state: NameState) -> &'static str {
    match state {
        NameState::Confident => "confident",
        NameState::Tentative => "tentative",
        NameState::Withheld => "withheld",
        NameState::Human => "human",
        NameState::Unknown => "unknown",
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))
}

/// Every episode under `<content>/shows`, oldest first.
fn load_all(content: &Path) -> Result<Vec<Loaded>> {
    let shows = content.join("shows");
    let mut loaded = Vec::new();
    let mut show_dirs: Vec<PathBuf> = std::fs::read_dir(&shows)
        .with_context(|| format!("reading {}", shows.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    show_dirs.sort();
    for show in show_dirs.into_iter().filter(|p| p.is_dir()) {
        let mut episode_dirs: Vec<PathBuf> =
            std::fs::read_dir(&show)?.filter_map(|e| Some(e.ok()?.path())).collect();
        episode_dirs.sort();
        for dir in episode_dirs.into_iter().filter(|d| d.join("episode.json").is_file()) {
            let episode: Episode = read_json(&dir.join("episode.json"))?;
            let names: Names = if dir.join("names.json").is_file() {
                read_json(&dir.join("names.json"))?
            } else {
                Names::default()
            };
            let mut runs: Vec<Run> = Vec::new();
            if let Ok(entries) = std::fs::read_dir(dir.join("runs")) {
                let mut files: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
                files.sort();
                for file in files.into_iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
                    runs.push(read_json(&file)?);
                }
            }
            let normalised = normalise_source_url(&episode.source_url)
                .with_context(|| format!("{}: source_url is not an http(s) URL", dir.display()))?;
            let folder = format!(
                "{}/{}",
                show.file_name().unwrap_or_default().to_string_lossy(),
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            loaded.push(Loaded { id: episode_id(&normalised), folder, dir, episode, names, runs });
        }
    }
    loaded.sort_by(|a, b| a.episode.published.cmp(&b.episode.published).then_with(|| a.id.cmp(&b.id)));
    Ok(loaded)
}

/// Runs the sources over the chosen episodes and writes their `names.json` (and, when `voices` hears
/// an episode, the speaker embeddings of its runs).
pub fn identify(
    content: &Path,
    which: &Which,
    ai: Option<&AiConfig>,
    voices: Option<&voices::Voices>,
) -> Result<Vec<Outcome>> {
    let mut episodes = load_all(content)?;
    let withheld: BTreeSet<String> = episodes
        .iter()
        .flat_map(|loaded| loaded.episode.roster.iter())
        .filter(|person| person.no_voiceprint)
        .map(|person| person.name.clone())
        .collect();
    let total = match which {
        Which::All => episodes.len(),
        Which::One(_) => 1,
    };
    if let Which::One(wanted) = which
        && !episodes.iter().any(|e| &e.id == wanted || &e.folder == wanted)
    {
        bail!(
            "no episode `{wanted}` under {}/shows (give an ep_… id or <show>/<episode>)",
            content.display()
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let client = reqwest::Client::builder()
        .user_agent("commonplace-builder-identify")
        .timeout(Duration::from_secs(120))
        .build()?;
    let mut library = LibraryBuilder::default();
    let mut outcomes = Vec::new();
    for loaded in &mut episodes {
        let chosen = match which {
            Which::All => true,
            Which::One(wanted) => &loaded.id == wanted || &loaded.folder == wanted,
        };
        if chosen {
            let mut warnings = Vec::new();
            let heard = match voices {
                Some(voices) => {
                    if loaded.episode.audio_url.is_some() {
                        eprintln!("[{}/{total}] {}: hearing the voices", outcomes.len() + 1, loaded.folder);
                    }
                    voices.embed(&loaded.dir, &loaded.episode, &mut loaded.runs)?
                }
                None => voices::Heard::default(),
            };
            let names = sources(
                loaded,
                &library,
                &heard,
                ai,
                &mut |body: serde_json::Value| {
                    let ai = ai.expect("asked only when configured");
                    runtime.block_on(ask(&client, ai, body))
                },
                &mut warnings,
            );
            let changed = names != loaded.names;
            if changed {
                let mut text = serde_json::to_string_pretty(&names)?;
                text.push('\n');
                let path = loaded.dir.join("names.json");
                std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
                loaded.names = names;
            }
            let reports = resolve_all(&loaded.names, &label_groups(&loaded.runs), &loaded.episode.roster);
            outcomes.push(Outcome {
                id: loaded.id.clone(),
                folder: loaded.folder.clone(),
                changed,
                states: reports.into_iter().map(|(label, r)| (label, (r.name_state, r.name))).collect(),
                warnings,
                voices: heard.lines(),
            });
        }
        add_confirmed(&mut library, loaded, &withheld);
    }
    Ok(outcomes)
}

/// The episode's confirmed labels go into the library for the episodes after it, but for people who
/// asked to be left out.
fn add_confirmed(library: &mut LibraryBuilder, loaded: &Loaded, withheld: &BTreeSet<String>) {
    let reports = resolve_all(&loaded.names, &label_groups(&loaded.runs), &loaded.episode.roster);
    for run in &loaded.runs {
        let Some(embeddings) = &run.speaker_embeddings else { continue };
        for (label, vector) in &embeddings.labels {
            if let Some(report) = reports.get(label)
                && report.name_state.is_trustworthy()
                && let Some(name) = &report.name
                && !withheld.contains(name)
            {
                library.add(&embeddings.model, name, vector);
            }
        }
    }
}

/// The episode's names with fresh votes of every source that can run.
fn sources(
    loaded: &Loaded,
    library: &LibraryBuilder,
    heard: &voices::Heard,
    ai: Option<&AiConfig>,
    ask: &mut dyn FnMut(serde_json::Value) -> Result<String>,
    warnings: &mut Vec<String>,
) -> Names {
    let mut names = merge(&loaded.names, VoteSource::Asr, &asr_votes_of(&loaded.runs));

    // Source 3: only runs that carry embeddings; the others keep their stored voice votes.
    let mut voice: BTreeMap<String, Vote> = BTreeMap::new();
    for run in &loaded.runs {
        let Some(embeddings) = &run.speaker_embeddings else { continue };
        let prints = library.library(&embeddings.model);
        for (label, vector) in &embeddings.labels {
            voice.entry(label.clone()).or_insert_with(|| prints.vote(vector, &embeddings.model, THRESHOLDS));
        }
    }
    for (label, why) in &heard.abstentions {
        voice.entry(label.clone()).or_insert_with(|| {
            Vote::new(VoteSource::VoiceMatch, None, why.clone())
                .with_model(format!("{MATCHER} over {}", crate::voice::MODEL))
        });
    }
    names = merge(&names, VoteSource::VoiceMatch, &voice);

    // Source 2: one question per speech-recognition run.
    let Some(ai) = ai else { return names };
    let texts: Vec<&str> =
        loaded.runs.iter().flat_map(|run| run.segments.iter().map(|s| s.text.as_str())).collect();
    for run in loaded.runs.iter().filter(|run| run.kind == RunKind::Asr) {
        let question = llm::question(run, &loaded.episode.roster, &ai.model);
        let (labels, model) = (&question.labels, &question.model);
        let asked_before = labels.iter().all(|label| {
            names.labels.get(label).is_some_and(|entry| {
                entry
                    .votes
                    .iter()
                    .any(|v| v.source == VoteSource::LanguageModel && v.model.as_deref() == Some(model))
            })
        });
        if asked_before {
            continue;
        }
        let fresh: BTreeMap<String, Vote> = if let Some(abstentions) = question.unasked() {
            abstentions
        } else {
            match ask(llm::request_body(&ai.model, &question.messages))
                .and_then(|body| llm::completion_text(&body).map_err(anyhow::Error::msg))
            {
                Ok(answer) => llm::votes_from_answer(&answer, labels, &loaded.episode.roster, &texts, model),
                Err(err) => {
                    warnings.push(format!(
                        "{}: the language model was not reached; its votes are kept: {err:#}",
                        run.pipeline
                    ));
                    continue;
                }
            }
        };
        names = merge(&names, VoteSource::LanguageModel, &fresh);
    }
    names
}

/// One chat-completions request; the answer's body as text.
async fn ask(client: &reqwest::Client, ai: &AiConfig, body: serde_json::Value) -> Result<String> {
    let url = format!("{}/chat/completions", ai.base_url);
    let mut request = client.post(&url).json(&body);
    if let Some(key) = &ai.api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.with_context(|| format!("POST {url}"))?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        bail!("POST {url}: {status}: {}", text.chars().take(300).collect::<String>());
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
pub mod voices;
