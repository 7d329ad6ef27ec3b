//! Speaker names set by people (issue 7): `PUT /api/episodes/:id/speakers/:label` for editors, the
//! public feed of those decisions (`GET /api/episodes/changes`) that `builder sync` commits to git,
//! and the overlay that makes every quote answer show a decision at once.
//!
//! A decision lives in D1 (`migrations/0003_speaker_decisions.sql`) until the next build carries it in
//! names.json. Reads that name speakers ask D1 for the decisions of their episodes that have any; only
//! then do they fetch `episodes/<id>/names.json` (the votes, labels and roster the build resolved) and
//! resolve again with the decisions in place — so elimination follows a decision at once, exactly as
//! the next build will. A decision is never overwritten by a source; only a newer decision replaces it.
//!
//! Which episodes have a decision an isolate keeps in [`DECIDED`], brought up to date from the feed at
//! most once a second, so a search or an attribution over undecided episodes asks D1 nothing. A request
//! with a key (an editor checking their own decision) asks D1 every time, and the isolate that stored a
//! decision notes it at once: the rule recipe writes follow too (`overlay.rs`). The SQL of this table
//! lives here, next to its only routes.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use domain::quote::phrase;
use domain::transcript::names::{
    HumanDecision, LabelReport, NameInputs, SpeakerChange, SpeakerChangePage, decision_from_body,
};
use domain::transcript::url::is_episode_id;
use domain::transcript::{Canonical, NameState, Speaker};
use serde::Deserialize;
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use crate::assets::fetch_bytes;
use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::http;
use crate::store::{self, Arg};
use crate::writes::json_body;

/// Roles that may set speaker names.
const EDITOR_ROLES: &[&str] = &["editor", "admin"];

/// `%xx` escapes of a path segment decoded (labels such as `Ana Lima` arrive as `Ana%20Lima`).
fn decode_segment(segment: &str) -> Result<String, ApiError> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] == b'%' {
            let hex = segment.get(idx + 1..idx + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                return Err(ApiError::NotFound(format!("`{segment}` is not a well-formed path segment")));
            };
            out.push(byte);
            idx += 3;
        } else {
            out.push(bytes[idx]);
            idx += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ApiError::NotFound(format!("`{segment}` is not UTF-8")))
}

async fn name_inputs(env: &Env, id: &str) -> Result<Option<NameInputs>, ApiError> {
    if !is_episode_id(id) {
        return Ok(None);
    }
    let Some(bytes) = fetch_bytes(env, format!("episodes/{id}/names.json")).await? else { return Ok(None) };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| ApiError::Internal(format!("episodes/{id}/names.json: {err}")))
}

#[derive(Debug, Deserialize)]
struct DecisionRow {
    seq: u64,
    episode_id: String,
    label: String,
    name: String,
    note: Option<String>,
    editor: String,
    at: String,
}

impl DecisionRow {
    fn change(self) -> SpeakerChange {
        SpeakerChange {
            seq: self.seq,
            episode: self.episode_id,
            label: self.label,
            name: self.name,
            note: self.note,
            editor: self.editor,
            at: self.at,
        }
    }
}

/// How long an isolate trusts [`DECIDED`] before asking D1 what is new: the longest a reader without
/// a key, on another isolate than the editor's, waits to see a decision.
const DECIDED_REFRESH_MS: u64 = 1_000;

/// The most feed rows one refresh query reads.
const DECIDED_PER_QUERY: u32 = 10_000;

/// The episodes that have any decision, as far as this isolate knows.
#[derive(Debug, Default)]
struct Decided {
    episodes: BTreeSet<String>,
    /// The newest decision seen.
    seq: u64,
    checked_ms: Option<u64>,
}

thread_local! {
    static DECIDED: RefCell<Decided> = RefCell::new(Decided::default());
}

#[derive(Debug, Deserialize)]
struct DecidedRow {
    seq: u64,
    episode_id: String,
}

/// Brings [`DECIDED`] up to date with the feed if it is older than [`DECIDED_REFRESH_MS`].
async fn refresh_decided(env: &Env) -> Result<(), ApiError> {
    let now_ms = worker::Date::now().as_millis();
    let due = DECIDED.with(|decided| {
        decided.borrow().checked_ms.is_none_or(|at| now_ms.saturating_sub(at) >= DECIDED_REFRESH_MS)
    });
    if !due {
        return Ok(());
    }
    let db = store::db(env)?;
    loop {
        let since = DECIDED.with(|decided| decided.borrow().seq);
        let rows: Vec<DecidedRow> = store::all(
            &db,
            "SELECT seq, episode_id FROM speaker_decisions WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            &[Arg::Int(since as i64), Arg::Int(i64::from(DECIDED_PER_QUERY))],
        )
        .await?;
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
fn note_decided(id: &str) {
    DECIDED.with(|decided| decided.borrow_mut().episodes.insert(id.to_string()));
}

/// The decisions in force for the given episodes: the newest row of each label. `keyed`: the request
/// carries a key, so D1 is asked whatever [`DECIDED`] says.
async fn decisions_of(
    env: &Env,
    ids: &[&str],
    keyed: bool,
) -> Result<BTreeMap<String, BTreeMap<String, HumanDecision>>, ApiError> {
    let ids: Vec<&str> = if keyed {
        ids.to_vec()
    } else {
        refresh_decided(env).await?;
        DECIDED.with(|decided| {
            let decided = decided.borrow();
            ids.iter().copied().filter(|id| decided.episodes.contains(*id)).collect()
        })
    };
    if ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    let ids_json = serde_json::to_string(&ids).map_err(|err| ApiError::Internal(err.to_string()))?;
    let rows: Vec<DecisionRow> = store::all(
        &store::db(env)?,
        "SELECT seq, episode_id, label, name, note, editor, at FROM speaker_decisions d \
         WHERE episode_id IN (SELECT value FROM json_each(?1)) \
         AND seq = (SELECT MAX(seq) FROM speaker_decisions \
                    WHERE episode_id = d.episode_id AND label = d.label)",
        &[Arg::Text(&ids_json)],
    )
    .await?;
    let mut out: BTreeMap<String, BTreeMap<String, HumanDecision>> = BTreeMap::new();
    for row in rows {
        let change = row.change();
        out.entry(change.episode.clone()).or_default().insert(change.label.clone(), change.decision());
    }
    Ok(out)
}

/// The episode's names with its decisions in force, or `None` when it has none (the built answer stands).
async fn current_reports(
    env: &Env,
    id: &str,
    keyed: bool,
) -> Result<Option<BTreeMap<String, LabelReport>>, ApiError> {
    let decisions = decisions_of(env, &[id], keyed).await?;
    let Some(decided) = decisions.get(id) else { return Ok(None) };
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

/// The canonical transcript with the decisions in force, or `None` when the built one stands.
pub async fn with_decisions(
    env: &Env,
    canonical: &Canonical,
    keyed: bool,
) -> Result<Option<Canonical>, ApiError> {
    let Some(reports) = current_reports(env, &canonical.episode.id, keyed).await? else { return Ok(None) };
    let mut speakers = canonical.speakers.clone();
    speakers.extend(speakers_of(&reports));
    Ok(Some(Canonical { speakers, ..canonical.clone() }))
}

/// Transcripts with the decisions in force, asking D1 once for all of them (corpus-wide attribution
/// weighs many places at once).
pub async fn all_with_decisions(
    env: &Env,
    transcripts: &mut [Canonical],
    keyed: bool,
) -> Result<(), ApiError> {
    let mut ids: Vec<&str> = transcripts.iter().map(|t| t.episode.id.as_str()).collect();
    ids.sort_unstable();
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
    ids.sort_unstable();
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

/// `PUT /api/episodes/:id/speakers/:label` with `{name, note}`: an editor names a voice.
///
/// Order of checks: key (401), role (403), rate limit (429), episode and label (404), body (415, 413,
/// 400, 422).
pub async fn decide(mut req: Request, env: &Env, id: &str, label: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    if !EDITOR_ROLES.contains(&caller.role.as_str()) {
        return Err(ApiError::Forbidden(format!(
            "setting a speaker's name needs the editor role; `{}` has the role `{}`",
            caller.handle, caller.role
        )));
    }
    let rate = auth::count_write(env, &caller).await?;
    let label = decode_segment(label)?;
    let inputs =
        name_inputs(env, id).await?.ok_or_else(|| ApiError::NotFound(format!("no episode `{id}`")))?;
    if !inputs.has_label(&label) {
        return Err(ApiError::NotFound(format!("episode `{id}` has no speaker label `{label}`")));
    }
    let body = json_body(&mut req).await?;
    let (name, note) = decision_from_body(&body).map_err(ApiError::Invalid)?;
    let now = now_iso();
    #[derive(Deserialize)]
    struct Seq {
        seq: u64,
    }
    let row: Option<Seq> = store::first(
        &store::db(env)?,
        "INSERT INTO speaker_decisions (episode_id, label, name, note, account_id, editor, at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING seq",
        &[
            Arg::Text(id),
            Arg::Text(&label),
            Arg::Text(&name),
            note.as_deref().map_or(Arg::Null, Arg::Text),
            Arg::Int(caller.account_id),
            Arg::Text(&caller.handle),
            Arg::Text(&now),
        ],
    )
    .await?;
    let seq =
        row.map(|row| row.seq).ok_or_else(|| ApiError::Internal("the decision was not stored".into()))?;
    note_decided(id);
    let decisions = decisions_of(env, &[id], true).await?;
    let reports = inputs.resolve_with(decisions.get(id).unwrap_or(&BTreeMap::new()));
    let report = reports.get(&label);
    let body = json!({
        "episode": id,
        "speaker": label,
        "name": report.and_then(|r| r.name.clone()),
        "name_state": report.map_or(NameState::Human, |r| r.name_state),
        "human": report.and_then(|r| r.human.clone()),
        "seq": seq,
        "at": now,
    });
    let mut response = Response::from_bytes(body.to_string().into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    crate::headers::rate_limit(headers, &rate);
    http::cors(headers);
    Ok(response)
}

/// `GET /api/episodes/changes?since=<seq>&limit=<n>`: every decision after `since`, oldest first, at
/// most `limit` and 1 MiB of them a page (`domain::paging`).
pub async fn changes(env: &Env, (since, limit): (u64, u32)) -> Result<Response, ApiError> {
    let rows: Vec<DecisionRow> = store::all(
        &store::db(env)?,
        "SELECT seq, episode_id, label, name, note, editor, at FROM speaker_decisions \
         WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        &[Arg::Int(since as i64), Arg::Int(i64::from(limit))],
    )
    .await?;
    let listed = rows.len();
    let mut items: Vec<SpeakerChange> = rows.into_iter().map(DecisionRow::change).collect();
    domain::paging::cut(&mut items, domain::paging::PAGE_BYTES);
    let more = domain::paging::more_after(items.len(), listed, limit as usize);
    let next_since = if more { items.last().map(|c| c.seq) } else { None };
    let last = items.last().map_or(since, |c| c.seq);
    let mut body = serde_json::to_value(SpeakerChangePage { items, next_since })
        .map_err(|err| ApiError::Internal(err.to_string()))?;
    body["next_cursor"] = json!(next_since.map(|seq| seq.to_string()));
    body["last_seq"] = json!(last);
    http::public_json(&body, 0)
}
