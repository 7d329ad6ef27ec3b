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
//! Which episodes have a decision an isolate keeps in [`DECIDED`], brought up to date from the feed at
//! most once a second, so a search or an attribution over undecided episodes asks D1 nothing. A request
//! with a key (an editor checking their own decision) asks D1 every time, and the isolate that stored a
//! decision notes it at once ([`note_decided`]): the rule recipe writes follow too (`overlay.rs`). The
//! routes that set and list decisions are `routes/speakers.rs`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use domain::quotes::quote::phrase;
use domain::quotes::transcript::names::{HumanDecision, LabelReport, NameInputs};
use domain::quotes::transcript::url::is_episode_id;
use domain::quotes::transcript::{Canonical, Speaker};
use serde_json::Value;
use worker::Env;

use crate::error::ApiError;
use crate::store;

/// What the build (or the intake) resolved an episode's names from (`episodes/<id>/names.json`: the
/// votes, labels and roster), or `None` for no such episode.
pub async fn name_inputs(env: &Env, id: &str) -> Result<Option<NameInputs>, ApiError> {
    let Some(bytes) = crate::intake::episode_file(env, id, "/names.json").await? else { return Ok(None) };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| ApiError::Internal(format!("episodes/{id}/names.json: {err}")))
}

/// How long an isolate trusts [`DECIDED`] before asking D1 what is new: the longest a reader without
/// a key, on another isolate than the editor's, waits to see a decision.
const DECIDED_REFRESH_MS: u64 = 1_000;

/// The most feed rows one refresh query reads.
const DECIDED_PER_QUERY: u32 = 10_000;

/// The episodes that have a decision the build does not hold, as far as this isolate knows.
#[derive(Debug, Default)]
struct Decided {
    /// The build ([`crate::packs::generation`]) they are counted against: a new one may hold more.
    generation: u64,
    episodes: BTreeSet<String>,
    /// The newest decision seen.
    seq: u64,
    checked_ms: Option<u64>,
}

thread_local! {
    static DECIDED: RefCell<Decided> = RefCell::new(Decided::default());
}

thread_local! {
    /// This database's feed id, once asked: it never changes.
    static FEED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The build this isolate reads ([`crate::packs::generation`]) and the last decision it holds: none
/// when it was synced from another site's feed, whose positions mean nothing here.
async fn built(env: &Env) -> Result<(u64, u64), ApiError> {
    let built = crate::assets::built_decisions(env).await?;
    let generation = crate::packs::generation(env).await?;
    let Some(feed) = built.feed.as_deref().filter(|_| built.synced_seq > 0) else {
        return Ok((generation, 0));
    };
    if FEED.with(|own| own.borrow().is_none()) {
        let id = store::feed_id(&store::db(env)?).await?;
        FEED.with(|own| *own.borrow_mut() = Some(id));
    }
    let ours = FEED.with(|own| own.borrow().as_deref() == Some(feed));
    Ok((generation, if ours { built.synced_seq } else { 0 }))
}

/// Brings [`DECIDED`] up to date with the feed if it is older than [`DECIDED_REFRESH_MS`], or of
/// another build than `generation`, which holds the decisions up to `synced`.
async fn refresh_decided(env: &Env, generation: u64, synced: u64) -> Result<(), ApiError> {
    let now_ms = worker::Date::now().as_millis();
    let due = DECIDED.with(|decided| {
        let mut decided = decided.borrow_mut();
        if decided.generation != generation {
            *decided = Decided { generation, seq: synced, ..Decided::default() };
        }
        decided.checked_ms.is_none_or(|at| now_ms.saturating_sub(at) >= DECIDED_REFRESH_MS)
    });
    if !due {
        return Ok(());
    }
    let db = store::db(env)?;
    loop {
        let since = DECIDED.with(|decided| decided.borrow().seq);
        let rows = store::decided_since(&db, since, DECIDED_PER_QUERY).await?;
        let more = rows.len() == DECIDED_PER_QUERY as usize;
        DECIDED.with(|decided| {
            let mut decided = decided.borrow_mut();
            for row in rows {
                decided.seq = decided.seq.max(row.seq);
                decided.episodes.insert(row.episode_id);
            }
            decided.checked_ms = Some(now_ms);
        });
        if !more {
            return Ok(());
        }
    }
}

/// Notes a decision this isolate just stored, so its next read shows it without waiting for a refresh.
pub fn note_decided(id: &str) {
    DECIDED.with(|decided| decided.borrow_mut().episodes.insert(id.to_string()));
}

/// The decisions in force for the given episodes that the build does not hold: the newest row of
/// each label, when it is newer than the build's last synced decision. `keyed`: the request carries
/// a key, so D1 is asked whatever [`DECIDED`] says.
pub async fn decisions_of(
    env: &Env,
    ids: &[&str],
    keyed: bool,
) -> Result<BTreeMap<String, BTreeMap<String, HumanDecision>>, ApiError> {
    let (generation, synced) = built(env).await?;
    let ids: Vec<&str> = if keyed {
        ids.to_vec()
    } else {
        refresh_decided(env, generation, synced).await?;
        DECIDED.with(|decided| {
            let decided = decided.borrow();
            ids.iter().copied().filter(|id| decided.episodes.contains(*id)).collect()
        })
    };
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
    keyed: bool,
) -> Result<Option<BTreeMap<String, LabelReport>>, ApiError> {
    reports_with(env, id, decided(env, id, keyed).await?.as_ref()).await
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
    keyed: bool,
) -> Result<Option<BTreeMap<String, HumanDecision>>, ApiError> {
    Ok(decisions_of(env, &[id], keyed).await?.remove(id))
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
    keyed: bool,
) -> Result<(), ApiError> {
    let mut ids: Vec<&str> = transcripts.iter().map(|t| t.episode.id.as_str()).collect();
    domain::sorted::sort(&mut ids);
    ids.dedup();
    let decisions = decisions_of(env, &ids, keyed).await?;
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
    keyed: bool,
) -> Result<Vec<u8>, ApiError> {
    let Some(reports) = current_reports(env, id, keyed).await? else { return Ok(bytes) };
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
    keyed: bool,
) -> Result<(), ApiError> {
    let mut ids: Vec<&str> = answer.hits.iter().map(|hit| hit.episode.id.as_str()).collect();
    domain::sorted::sort(&mut ids);
    ids.dedup();
    let decisions = decisions_of(env, &ids, keyed).await?;
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
