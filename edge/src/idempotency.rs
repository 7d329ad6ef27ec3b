//! `Idempotency-Key` on every POST that creates (recipes, forks, AI writes and changes, diet
//! versions): a retry with the same key and request gets the first answer again instead of making a
//! second recipe. A route that creates joins by running its work through [`once`].
//!
//! The key is a D1 row per account (`store::claim_idempotency_key`): the one request whose insert
//! made it runs; meanwhile the same key is 409, and afterwards a success is stored and replayed
//! (status, body, `Location`, `ETag`, with `Idempotent-Replayed: true`) for 24 hours. The same key
//! with another request (method, path or body: `domain::site::idempotency::fingerprint`) is 422. A
//! request that fails lets go of its key, so the retry runs again; one that died holding it loses
//! it after `domain::site::idempotency::IN_FLIGHT_S`.

use domain::site::idempotency::{self, HEADER, IN_FLIGHT_S, KEY_LIFETIME_S};
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::auth;
use crate::error::ApiError;
use crate::http;
use crate::store::{self, FirstAnswer, IdempotencyRow, KeyOwner};

/// The `Idempotency-Key` a request carries, and what the request asks (its fingerprint).
pub struct IdempotencyKey {
    key: String,
    fingerprint: String,
}

/// Reads the request's `Idempotency-Key`, or `None` without the header; 400 for a header that is not
/// a key. `body` is the request's JSON body (a POST without a body passes `None`).
pub fn key_of(req: &Request, body: Option<&Value>) -> Result<Option<IdempotencyKey>, ApiError> {
    let Some(header) = req.headers().get(HEADER)? else { return Ok(None) };
    let key = idempotency::parse_key(&header).map_err(|problem| ApiError::BadParameters(vec![problem]))?;
    let fingerprint = idempotency::fingerprint(req.method().as_ref(), &req.path(), body);
    Ok(Some(IdempotencyKey { key, fingerprint }))
}

/// What a key lets a request do.
enum Claim {
    /// Run, holding the key since then.
    Run(u64),
    /// Answer what the key's first request answered.
    Replay(IdempotencyRow),
}

async fn claim(env: &Env, caller: &KeyOwner, sent: &IdempotencyKey) -> Result<Claim, ApiError> {
    let db = store::db(env)?;
    let (account, key) = (caller.account_id, sent.key.as_str());
    // Twice at most: a key that expired between our insert and our read is claimed the second time.
    for _ in 0..2 {
        let now = auth::now_s();
        if store::claim_idempotency_key(&db, account, key, &sent.fingerprint, now, now + KEY_LIFETIME_S)
            .await?
        {
            return Ok(Claim::Run(now));
        }
        let Some(row) = store::idempotency_key(&db, account, key).await? else { continue };
        if row.fingerprint != sent.fingerprint {
            return Err(ApiError::KeyReused);
        }
        if row.state == "done" {
            return Ok(Claim::Replay(row));
        }
        if row.claimed_s + IN_FLIGHT_S > now {
            return Err(ApiError::KeyInFlight);
        }
        // The request that held the key died without an answer: one retry takes it over.
        return if store::retake_idempotency_key(&db, account, key, row.claimed_s, now).await? {
            Ok(Claim::Run(now))
        } else {
            Err(ApiError::KeyInFlight)
        };
    }
    Err(ApiError::KeyInFlight)
}

/// Runs `work` once per key of the caller's: without a key, simply runs it.
pub async fn once(
    env: &Env,
    caller: &KeyOwner,
    sent: Option<IdempotencyKey>,
    work: impl std::future::Future<Output = Result<Response, ApiError>>,
) -> Result<Response, ApiError> {
    let Some(sent) = sent else { return work.await };
    let claimed_s = match claim(env, caller, &sent).await? {
        Claim::Run(claimed_s) => claimed_s,
        Claim::Replay(row) => return replay(&row),
    };
    let db = store::db(env)?;
    let mut response = match work.await {
        Ok(response) if (200..300).contains(&response.status_code()) => response,
        failed => {
            // A failure is not remembered: the same request may be sent again with the same key.
            let _ = store::release_idempotency_key(&db, caller.account_id, &sent.key, claimed_s).await;
            return failed;
        }
    };
    let status = response.status_code();
    let body = response.text().await?;
    let headers = response.headers().clone();
    let location = headers.get("Location")?;
    let etag = headers.get("ETag")?;
    let answer = FirstAnswer { status, location: location.as_deref(), etag: etag.as_deref(), body: &body };
    if let Err(err) = store::finish_idempotency_key(&db, caller.account_id, &sent.key, answer).await {
        // The recipe is made and this answer says so; only a retry's replay is lost (the key stays
        // in flight until it is taken over).
        worker::console_error!("idempotency key of account {} not stored: {err:?}", caller.account_id);
    }
    Ok(Response::from_bytes(body.into_bytes())?.with_status(status).with_headers(headers))
}

/// The first answer under a key, again.
fn replay(row: &IdempotencyRow) -> Result<Response, ApiError> {
    let body = row.body.clone().unwrap_or_default();
    let mut response = Response::from_bytes(body.into_bytes())?.with_status(row.status.unwrap_or(200));
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    headers.set("Idempotent-Replayed", "true")?;
    if let Some(location) = &row.location {
        headers.set("Location", location)?;
    }
    if let Some(etag) = &row.etag {
        headers.set("ETag", etag)?;
    }
    http::cors(headers);
    Ok(response)
}
