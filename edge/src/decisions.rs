//! Speaker names with editors' decisions in force: the overlay that makes every quote
//! answer show a decision at once.
//!
//! A decision lives in D1 (`store::speakers`), and once `builder sync` has committed it, the next
//! build carries it in names.json and says so (`episodes/decisions.json`: the last decision synced
//! into its content); only later decisions count from then on, so a decided episode is served as
//! built again, and a name changed in git after the decision stands. Reads that name speakers ask D1
//! for the decisions of their episodes that have any; only then do they take the votes, labels and
//! roster the build resolved (read with the transcript, else `episodes/<id>/names.json`) and resolve
//! again with the decisions in place — so elimination follows a decision at once, exactly as the
//! next build will. A decision is never overwritten by a source; only a newer decision replaces it.
//!
//! Which episodes have a decision is the view's ([`crate::live::decisions`]), under its freshness rule,
//! so a search or an attribution over undecided episodes asks D1 nothing. The routes that set and list
//! decisions are `routes/speakers.rs`.

use std::collections::BTreeMap;

use domain::quotes::quote::phrase;
use domain::quotes::transcript::names::{HumanDecision, LabelReport, NameInputs};
use domain::quotes::transcript::url::is_episode_id;
use domain::quotes::transcript::{Canonical, Speaker};
use serde_json::Value;
use worker::Env;

use crate::error::ApiError;
use crate::live::Live;
use crate::store;

/// What the build (or the intake) resolved an episode's names from (`episodes/<id>/names.json`: the
/// votes, labels and roster), or `None` for no such episode.
pub async fn name_inputs(env: &Env, id: &str) -> Result<Option<NameInputs>, ApiError> {
    let Some(bytes) = crate::live::episodes::episode_file(env, id, "/names.json").await? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| ApiError::Internal(format!("episodes/{id}/names.json: {err}")))
}

/// The decisions in force for the given episodes that the build does not hold: the newest row of
/// each label, when it is newer than the build's last synced decision. D1 is asked only about the
/// episodes the view ([`crate::live::decisions`]) knows to have one.
pub async fn decisions_of(
    env: &Env,
    _live: &Live,
    ids: &[&str],
) -> Result<BTreeMap<String, BTreeMap<String, HumanDecision>>, ApiError> {
    let ids = crate::live::decisions::among(ids);
    let synced = crate::live::decisions::synced();
    if ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    let changes = store::decisions_in_force(&store::db(env)?, &ids, synced).await?;
    let mut out: BTreeMap<String, BTreeMap<String, HumanDecision>> = BTreeMap::new();
    for change in changes {
        out.entry(change.episode.clone()).or_default().insert(change.label.clone(), change.decision());
    }
    Ok(out)
}

/// The episode's names with its decisions in force, or `None` when it has none (the built answer stands).
pub async fn current_reports(
    env: &Env,
    id: &str,
    live: &Live,
) -> Result<Option<BTreeMap<String, LabelReport>>, ApiError> {
    reports_with(env, id, decided(env, id, live).await?.as_ref()).await
}

/// The episode's names with `decided` (from [`decided`]) in force, or `None` when there are none.
pub async fn reports_with(
    env: &Env,
    id: &str,
    decided: Option<&BTreeMap<String, HumanDecision>>,
) -> Result<Option<BTreeMap<String, LabelReport>>, ApiError> {
    let Some(decided) = decided else { return Ok(None) };
    let Some(inputs) = name_inputs(env, id).await? else { return Ok(None) };
    Ok(Some(inputs.resolve_with(decided)))
}

fn speakers_of(reports: &BTreeMap<String, LabelReport>) -> BTreeMap<String, Speaker> {
    reports
        .iter()
        .map(|(label, report)| {
            (label.clone(), Speaker { name: report.name.clone(), name_state: report.name_state })
        })
        .collect()
}

/// The decisions in force for one episode, or `None` when it has none.
pub async fn decided(
    env: &Env,
    id: &str,
    live: &Live,
) -> Result<Option<BTreeMap<String, HumanDecision>>, ApiError> {
    Ok(decisions_of(env, live, &[id]).await?.remove(id))
}

/// A file the build wrote for episode `id` (its page, its whole transcript) at `path`, while no
/// editor's decision about the episode is on record (`decided`, from [`decided`]); `None` otherwise,
/// or when the build has no such file, and the caller makes the answer with the decisions.
pub async fn built_unless_decided(
    env: &Env,
    id: &str,
    decided: Option<&BTreeMap<String, HumanDecision>>,
    path: String,
) -> Result<Option<worker::Response>, ApiError> {
    if decided.is_some() || !is_episode_id(id) {
        return Ok(None);
    }
    crate::assets::fetch_body(env, path).await
}

/// The canonical transcript with the names of `reports` (its labels resolved again with the
/// decisions in force).
pub fn with_reports(canonical: &Canonical, reports: &BTreeMap<String, LabelReport>) -> Canonical {
    let mut speakers = canonical.speakers.clone();
    speakers.extend(speakers_of(reports));
    Canonical { speakers, ..canonical.clone() }
}

/// Transcripts with the decisions in force, asking D1 once for all of them (corpus-wide attribution
/// weighs many places at once).
pub async fn all_with_decisions(
    env: &Env,
    transcripts: &mut [Canonical],
    live: &Live,
) -> Result<(), ApiError> {
    let mut ids: Vec<&str> = transcripts.iter().map(|t| t.episode.id.as_str()).collect();
    domain::sorted::sort(&mut ids);
    ids.dedup();
    let decisions = decisions_of(env, live, &ids).await?;
    for transcript in transcripts.iter_mut() {
        let Some(decided) = decisions.get(&transcript.episode.id) else { continue };
        let Some(inputs) = name_inputs(env, &transcript.episode.id).await? else { continue };
        transcript.speakers.extend(speakers_of(&inputs.resolve_with(decided)));
    }
    Ok(())
}

/// The built episode record with the decisions in force.
pub async fn record_with_decisions(
    env: &Env,
    id: &str,
    bytes: Vec<u8>,
    live: &Live,
) -> Result<Vec<u8>, ApiError> {
    let Some(reports) = current_reports(env, id, live).await? else { return Ok(bytes) };
    let mut record: Value = serde_json::from_slice(&bytes)
        .map_err(|err| ApiError::Internal(format!("episodes/{id}.json: {err}")))?;
    record["names"] = serde_json::to_value(&reports).map_err(|err| ApiError::Internal(err.to_string()))?;
    Ok(record.to_string().into_bytes())
}

/// Search hits with the decisions in force. (The `speaker` filter still finds people by the names of
/// the last build: the index has a bitmap per name, not per label.)
pub async fn hits_with_decisions(
    env: &Env,
    answer: &mut phrase::Answer,
    live: &Live,
) -> Result<(), ApiError> {
    let mut ids: Vec<&str> = answer.hits.iter().map(|hit| hit.episode.id.as_str()).collect();
    domain::sorted::sort(&mut ids);
    ids.dedup();
    let decisions = decisions_of(env, live, &ids).await?;
    for (id, decided) in &decisions {
        let Some(inputs) = name_inputs(env, id).await? else { continue };
        let reports = inputs.resolve_with(decided);
        for hit in answer.hits.iter_mut().filter(|hit| &hit.episode.id == id) {
            if let Some(report) = reports.get(&hit.speaker) {
                hit.name = report.name.clone();
                hit.name_state = report.name_state;
            }
        }
    }
    Ok(())
}
