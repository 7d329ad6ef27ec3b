//! Who is asking: API keys (`Authorization: Bearer`), the write rate limit, and the random tokens and
//! hashes behind keys, sessions and CSRF. Also the clock, which `domain` never reads.
//!
//! Keys and session tokens are 32 random bytes from the runtime's CSPRNG (`crypto.getRandomValues`
//! through getrandom); D1 keeps only their SHA-256, so a leaked database holds no usable key.

use domain::write::{RateDecision, WRITES_PER_WINDOW, rate_window};
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
    let iso = worker::js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default();
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

/// The key's owner, or 401 for a missing, unknown or revoked key.
pub async fn caller(req: &Request, env: &Env) -> Result<KeyOwner, ApiError> {
    let header = req.headers().get("Authorization")?.unwrap_or_default();
    let Some(key) = header.strip_prefix("Bearer ").map(str::trim).filter(|key| !key.is_empty()) else {
        return Err(ApiError::Unauthorized(
            "send `Authorization: Bearer <key>`; make a key on /kitchen".into(),
        ));
    };
    let db = store::db(env)?;
    store::key_owner(&db, &sha256_hex(key))
        .await?
        .ok_or_else(|| ApiError::Unauthorized("this key is unknown or was revoked".into()))
}

/// The write limit per key and minute: `WRITES_PER_MINUTE` when set (load tests raise it), else 60.
fn write_limit(env: &Env) -> u32 {
    env.var("WRITES_PER_MINUTE")
        .ok()
        .and_then(|var| var.to_string().parse().ok())
        .unwrap_or(WRITES_PER_WINDOW)
}

/// Counts a write for the key; 429 once the minute's quota is spent. The decision also goes on the
/// successful answer as `RateLimit` headers.
pub async fn count_write(env: &Env, caller: &KeyOwner) -> Result<RateDecision, ApiError> {
    let now = now_s();
    let window = rate_window(now);
    let count = store::count_write(&store::db(env)?, caller.key_id, window).await?;
    let decision = RateDecision::of(count, write_limit(env), window, now);
    if decision.allowed { Ok(decision) } else { Err(ApiError::RateLimited(decision)) }
}
