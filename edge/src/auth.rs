//! Who is asking: API keys (`Authorization: Bearer`), the client's address, the counting behind every
//! limit (`domain::site::limits`: writes and AI per account, sign-ins and new keys per address), and the
//! random tokens and hashes behind keys, sessions and CSRF. Also the clock, which `domain` never reads.
//!
//! Keys and session tokens are 32 random bytes from the runtime's CSPRNG (`crypto.getRandomValues`
//! through getrandom); D1 keeps only their SHA-256, so a leaked database holds no usable key.

use domain::site::limits::{self, Policy, RateDecision, Subject, WRITES};
use sha2::{Digest, Sha256};
use worker::{Env, Request};

use crate::error::ApiError;
use crate::store::{self, KeyOwner};

/// What every key starts with, so a leaked key is easy to recognise (and to scan for).
pub const KEY_PREFIX: &str = "cpk_";

/// Seconds since the epoch.
pub fn now_s() -> u64 {
    worker::Date::now().as_millis() / 1000
}

/// The current time as ISO 8601 UTC, to the second.
pub fn now_iso() -> String {
    iso_of(worker::js_sys::Date::new_0())
}

/// The time `seconds` ago as ISO 8601 UTC, to the second.
pub fn iso_ago(seconds: u64) -> String {
    let ms = worker::Date::now().as_millis().saturating_sub(seconds * 1000);
    iso_of(worker::js_sys::Date::new(&worker::wasm_bindgen::JsValue::from_f64(ms as f64)))
}

fn iso_of(date: worker::js_sys::Date) -> String {
    let iso = date.to_iso_string().as_string().unwrap_or_default();
    // `2025-01-02T03:04:05.678Z` → `2025-01-02T03:04:05Z`: milliseconds say nothing to a reader.
    match iso.find('.') {
        Some(dot) => format!("{}Z", &iso[..dot]),
        None => iso,
    }
}

/// 32 random bytes as lower-case hex.
pub fn random_hex() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| ApiError::Internal(format!("no randomness: {err}")))?;
    Ok(hex(&bytes))
}

pub fn new_key() -> Result<String, ApiError> {
    Ok(format!("{KEY_PREFIX}{}", random_hex()?))
}

pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares secrets in time independent of where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries a key: then what the caller wrote (a recipe, a speaker's name) shows
/// at once, so its reads ask D1 instead of trusting what this isolate last heard (at most a second
/// old). The key is not checked here: a wrong one only costs its sender those reads.
pub fn keyed(req: &Request) -> Result<bool, ApiError> {
    Ok(req.headers().has("Authorization")?)
}

/// The key's owner, or 401 for a missing, unknown or revoked key.
pub async fn caller(req: &Request, env: &Env) -> Result<KeyOwner, ApiError> {
    let header = req.headers().get("Authorization")?.unwrap_or_default();
    // The scheme's name is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are `Bearer`.
    let key = header
        .trim_start()
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("Bearer"))
        .map(|(_, key)| key.trim());
    let Some(key) = key.filter(|key| !key.is_empty()) else {
        return Err(ApiError::Unauthorized(
            "send `Authorization: Bearer <key>`; make a key on /kitchen".into(),
        ));
    };
    let db = store::db(env)?;
    store::key_owner(&db, &sha256_hex(key))
        .await?
        .ok_or_else(|| ApiError::Unauthorized("this key is unknown or was revoked".into()))
}

/// A policy's quota: its setting (`WRITES_PER_MINUTE`, …) when set, else its default.
pub fn quota(env: &Env, policy: &Policy) -> u32 {
    env.var(policy.setting).ok().and_then(|var| var.to_string().parse().ok()).unwrap_or(policy.quota)
}

/// The client's address bucket, from `CF-Connecting-IP`, which Cloudflare sets on every request (a
/// local run sets it too; without it, everyone shares the bucket `local`).
pub fn address(req: &Request) -> Subject {
    let header = req.headers().get("CF-Connecting-IP").ok().flatten();
    Subject::Address(limits::address_bucket(header.as_deref()))
}

/// One request counted against a policy: the decision, and where it was counted, to give it back.
#[derive(Debug, Clone)]
pub struct Counted {
    pub decision: RateDecision,
    subject: String,
    window_s: u64,
}

/// Counts one request of `subject` against `policy` and decides on it (refusing is the caller's).
pub async fn count(env: &Env, policy: &'static Policy, subject: &Subject) -> Result<Counted, ApiError> {
    let now = now_s();
    let window_s = limits::window_of(now, policy.window_s);
    let subject = subject.key();
    let spent_before = limits::spent_before(now);
    let count = store::count_up(&store::db(env)?, policy.name, &subject, window_s, spent_before).await?;
    Ok(Counted { decision: policy.decide(count, quota(env, policy), now), subject, window_s })
}

/// Gives a counted request back (the AI's failures on our side or upstream cost the caller nothing).
pub async fn uncount(env: &Env, counted: &Counted) {
    // A give-back that fails costs the caller one request of quota; it must not hide the real error.
    if let Ok(db) = store::db(env) {
        let _ =
            store::count_down(&db, counted.decision.policy.name, &counted.subject, counted.window_s).await;
    }
}

/// Counts one request against `policy`; 429 once the window's quota is spent. The refused request
/// stays counted, so hammering does not shorten the wait. The decision also goes on the successful
/// answer as `RateLimit` headers.
pub async fn admit(env: &Env, policy: &'static Policy, subject: &Subject) -> Result<RateDecision, ApiError> {
    let counted = count(env, policy, subject).await?;
    if counted.decision.allowed { Ok(counted.decision) } else { Err(ApiError::RateLimited(counted.decision)) }
}

/// Counts a write against the caller's account, whichever of its keys sent it.
pub async fn count_write(env: &Env, caller: &KeyOwner) -> Result<RateDecision, ApiError> {
    admit(env, &WRITES, &Subject::Account(caller.account_id)).await
}
