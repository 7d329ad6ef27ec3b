//! Idempotency keys (`idempotency_keys`: `migrations/0007_…`): the claim of a key per account, the
//! first answer kept under it, and its release; the protocol is `crate::idempotency`'s.

use serde::Deserialize;
use worker::D1Database;

use super::{Arg, batch, first, run, stmt};
use crate::error::ApiError;

/// What D1 holds of a key: the request it was first sent with and, once done, that request's answer.
#[derive(Debug, Clone, Deserialize)]
pub struct IdempotencyRow {
    pub fingerprint: String,
    pub state: String,
    pub claimed_s: u64,
    pub status: Option<u16>,
    pub location: Option<String>,
    pub etag: Option<String>,
    pub body: Option<String>,
}

/// Claims `key` of the account for a request now: `true` for the one caller whose insert made the
/// row. The same transaction deletes every key past its lifetime.
pub async fn claim_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    fingerprint: &str,
    now_s: u64,
    expires_s: u64,
) -> Result<bool, ApiError> {
    let expired = stmt(db, "DELETE FROM idempotency_keys WHERE expires_s <= ?1", &[Arg::Int(now_s as i64)])?;
    let claim = stmt(
        db,
        "INSERT INTO idempotency_keys (account_id, key, fingerprint, state, claimed_s, expires_s) \
         VALUES (?1, ?2, ?3, 'running', ?4, ?5) ON CONFLICT (account_id, key) DO NOTHING",
        &[
            Arg::Int(account_id),
            Arg::Text(key),
            Arg::Text(fingerprint),
            Arg::Int(now_s as i64),
            Arg::Int(expires_s as i64),
        ],
    )?;
    let changed = batch(db, vec![expired, claim]).await?;
    Ok(changed.get(1) == Some(&1))
}

pub async fn idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
) -> Result<Option<IdempotencyRow>, ApiError> {
    first(
        db,
        "SELECT fingerprint, state, claimed_s, status, location, etag, body FROM idempotency_keys \
         WHERE account_id = ?1 AND key = ?2",
        &[Arg::Int(account_id), Arg::Text(key)],
    )
    .await
}

/// Takes over a key whose request has run since `claimed_s` without an answer (it died): `true`
/// for the one caller that did.
pub async fn retake_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    claimed_s: u64,
    now_s: u64,
) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE idempotency_keys SET claimed_s = ?4 \
         WHERE account_id = ?1 AND key = ?2 AND state = 'running' AND claimed_s = ?3",
        &[Arg::Int(account_id), Arg::Text(key), Arg::Int(claimed_s as i64), Arg::Int(now_s as i64)],
    )
    .await?;
    Ok(changed == 1)
}

/// The first answer under a key, which every retry with it gets again.
pub struct FirstAnswer<'a> {
    pub status: u16,
    pub location: Option<&'a str>,
    pub etag: Option<&'a str>,
    pub body: &'a str,
}

pub async fn finish_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    answer: FirstAnswer<'_>,
) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE idempotency_keys SET state = 'done', status = ?3, location = ?4, etag = ?5, body = ?6 \
         WHERE account_id = ?1 AND key = ?2",
        &[
            Arg::Int(account_id),
            Arg::Text(key),
            Arg::Int(i64::from(answer.status)),
            answer.location.map_or(Arg::Null, Arg::Text),
            answer.etag.map_or(Arg::Null, Arg::Text),
            Arg::Text(answer.body),
        ],
    )
    .await?;
    Ok(())
}

/// Lets go of a key whose request failed, so it can be sent again.
pub async fn release_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    claimed_s: u64,
) -> Result<(), ApiError> {
    run(
        db,
        "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND state = 'running' AND claimed_s = ?3",
        &[Arg::Int(account_id), Arg::Text(key), Arg::Int(claimed_s as i64)],
    )
    .await?;
    Ok(())
}
