//! Every D1 statement of the Worker, so SQL lives in one folder next to the schema (`migrations/`):
//! one file per family of tables — [`accounts`] (accounts, keys, sessions, limit counters),
//! [`recipes`] (overlay rows and the search rows a write stores), [`search`] (the overlay search
//! and its sweep), [`changes`] (the change feed), [`diet`] (diet-version claims), [`idempotency`]
//! (idempotency keys), [`speakers`] (speaker-name decisions), [`intake`] (episodes taken in by
//! their address) — and here the D1 plumbing they share:
//! the binding, bound arguments, and the retry of a passing failure.
//!
//! The plumbing is private to this module, so no statement runs from anywhere else; callers write
//! `store::x` for what the families re-export. Multi-statement writes go through `batch`, which D1
//! runs as one transaction.

mod accounts;
mod changes;
mod diet;
mod idempotency;
mod intake;
mod recipes;
mod search;
mod speakers;

pub use accounts::{
    KeyOwner, Session, add_key, add_session, count_down, count_up, end_session, github_account, key_owner,
    keys_of, live_keys, local_account, revoke_key, session,
};
pub use changes::{
    ChangeRow, Cursors, FeedVersion, NEWS_PER_READ, PublishedEpisode, change_sizes_since, changes_between,
    changes_of, news,
};
pub use diet::{
    DietClaim, claim_diet, diet_claim, fail_diet_claim, insert_diet_version, retake_diet_claim, site_account,
};
pub use idempotency::{
    FirstAnswer, IdempotencyRow, claim_idempotency_key, finish_idempotency_key, idempotency_key,
    release_idempotency_key, retake_idempotency_key,
};
pub use intake::{
    Charge, FeedJob, FeedValidators, JobRow, NewEpisode, TranscriptionRow, add_feed_jobs, add_job, charge,
    charged_on, feed_checked, feed_item_keys, feed_validators, finish_with_episode,
    forget_failed_transcription, has_episode, job, job_by_address, move_job, move_transcription, ready_with,
    retry_job, settle_transcription, taken_in_since, transcription, transcription_notified,
    transcription_of_audio,
};
pub use recipes::{
    NewRow, OverlayRow, Update, adopt_built, insert_recipe, overlay_row, recipes_of, slugs_like,
    update_recipe,
};
pub use search::{
    DictTerm, claim_sweep, index_overlay, overlay_cards, overlay_dictionary, overlay_listing,
    overlay_postings, overlay_versions, release_sweep, retire_overlay, set_overlay_facets,
    stale_facets_overlay, unindexed_overlay,
};
pub use speakers::{DecidedRow, NewDecision, add_decision, decisions_in_force, decisions_since, feed_id};

use serde::de::DeserializeOwned;
use worker::wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result, Env};

use crate::error::{ApiError, Transient, transient};

pub fn db(env: &Env) -> Result<D1Database, ApiError> {
    Ok(env.d1("DB")?)
}

/// A bound argument: text, integer or null.
enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

impl From<&Arg<'_>> for JsValue {
    fn from(arg: &Arg<'_>) -> JsValue {
        match arg {
            Arg::Text(text) => JsValue::from_str(text),
            // D1 numbers are JavaScript numbers: exact up to 2^53, far beyond any id or time here.
            Arg::Int(n) => JsValue::from_f64(*n as f64),
            Arg::Null => JsValue::null(),
        }
    }
}

fn stmt(db: &D1Database, sql: &str, args: &[Arg]) -> Result<D1PreparedStatement, ApiError> {
    let values: Vec<JsValue> = args.iter().map(JsValue::from).collect();
    Ok(db.prepare(sql).bind(&values)?)
}

async fn first<T: DeserializeOwned>(
    db: &D1Database,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Option<T>, ApiError> {
    let statement = stmt(db, sql, args)?;
    Ok(retry(Retrying::of(sql), || statement.first::<T>(None)).await?)
}

async fn all<T: DeserializeOwned>(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> Result<Vec<T>, ApiError> {
    let statement = stmt(db, sql, args)?;
    Ok(retry(Retrying::of(sql), || statement.all()).await?.results::<T>()?)
}

/// Runs one statement and returns how many rows it changed.
async fn run(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> Result<usize, ApiError> {
    let statement = stmt(db, sql, args)?;
    let result = retry(Retrying::of(sql), || statement.run()).await?;
    Ok(result.meta()?.and_then(|meta| meta.changes).unwrap_or(0))
}

/// Runs statements as one transaction; returns the rows each changed.
async fn batch(db: &D1Database, statements: Vec<D1PreparedStatement>) -> Result<Vec<usize>, worker::Error> {
    let results = batch_results(db, statements, Retrying::Busy).await?;
    results.iter().map(|result| Ok(result.meta()?.and_then(|meta| meta.changes).unwrap_or(0))).collect()
}

/// Runs statements as one transaction and returns their results; `retrying` says which failures
/// are tried again (reads: [`Retrying::Any`]).
async fn batch_results(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
    retrying: Retrying,
) -> Result<Vec<D1Result>, worker::Error> {
    retry(retrying, || db.batch(statements.clone())).await
}

/// Waits before each new try of a D1 call that failed for a passing reason: about half a second in
/// all, short enough for the request to stay well inside any client's patience.
const RETRY_WAITS_MS: [u64; 3] = [30, 120, 350];

/// Which failures a call is tried again after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retrying {
    /// Only [`Transient::Busy`]: a write.
    Busy,
    /// Every [`Transient`] failure: a read.
    Any,
}

impl Retrying {
    /// A statement that only reads may be asked again after any passing failure.
    fn of(sql: &str) -> Retrying {
        let read = sql.trim_start().get(..6).is_some_and(|verb| verb.eq_ignore_ascii_case("SELECT"));
        if read { Retrying::Any } else { Retrying::Busy }
    }

    fn covers(self, transient: Transient) -> bool {
        self == Retrying::Any || transient == Transient::Busy
    }
}

/// Runs a D1 call, and again after a short wait while it fails for a reason `retrying` covers.
async fn retry<T, F, Fut>(retrying: Retrying, mut call: F) -> Result<T, worker::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, worker::Error>>,
{
    for wait_ms in RETRY_WAITS_MS {
        match call().await {
            Err(err) if transient(&err.to_string()).is_some_and(|t| retrying.covers(t)) => {
                worker::Delay::from(std::time::Duration::from_millis(wait_ms)).await;
            }
            done => return done,
        }
    }
    call().await
}

/// Whether a failed write failed on a UNIQUE constraint (a slug taken by a concurrent write).
pub fn is_unique_violation(err: &worker::Error) -> bool {
    err.to_string().contains("UNIQUE constraint failed")
}
