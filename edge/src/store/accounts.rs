//! Accounts and what hangs on them: API keys, the kitchen's sign-in sessions (`accounts`,
//! `api_keys`, `sessions`: `migrations/0001_…`), and the counters behind every limit
//! (`limit_counts`: `migrations/0004_…`).

use domain::site::limits::LIVE_KEYS_PER_ACCOUNT;
use serde::Deserialize;
use worker::D1Database;

use super::{Arg, Retrying, all, batch, batch_results, first, run, stmt};
use crate::error::ApiError;

#[derive(Debug, Clone, Deserialize)]
pub struct Account {
    pub id: i64,
}

/// The account and key behind a bearer key.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyOwner {
    pub key_label: String,
    pub account_id: i64,
    pub handle: String,
    pub display_name: String,
    pub role: String,
}

pub async fn key_owner(db: &D1Database, key_hash: &str) -> Result<Option<KeyOwner>, ApiError> {
    first(
        db,
        "SELECT k.label AS key_label, a.id AS account_id, a.handle, a.display_name, a.role \
         FROM api_keys k JOIN accounts a ON a.id = k.account_id \
         WHERE k.key_hash = ?1 AND k.revoked_at IS NULL",
        &[Arg::Text(key_hash)],
    )
    .await
}

#[derive(Deserialize)]
struct Count {
    count: u32,
}

/// Counts one request of `subject` against `policy` in the window starting at `window_s` and returns
/// the window's count so far. The same transaction deletes every counter spent before `spent_before`,
/// so the table never holds more than the last hour's counters (and those spent since the last count).
pub async fn count_up(
    db: &D1Database,
    policy: &str,
    subject: &str,
    window_s: u64,
    spent_before: u64,
) -> Result<u32, ApiError> {
    let spent = stmt(db, "DELETE FROM limit_counts WHERE window_s < ?1", &[Arg::Int(spent_before as i64)])?;
    let count = stmt(
        db,
        "INSERT INTO limit_counts (policy, subject, window_s, count) VALUES (?1, ?2, ?3, 1) \
         ON CONFLICT (policy, subject, window_s) DO UPDATE SET count = count + 1 RETURNING count",
        &[Arg::Text(policy), Arg::Text(subject), Arg::Int(window_s as i64)],
    )?;
    let results = batch_results(db, vec![spent, count], Retrying::Busy).await?;
    let rows: Vec<Count> = match results.get(1) {
        Some(result) => result.results()?,
        None => Vec::new(),
    };
    Ok(rows.first().map_or(1, |row| row.count))
}

/// Gives one counted request back.
pub async fn count_down(db: &D1Database, policy: &str, subject: &str, window_s: u64) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE limit_counts SET count = count - 1 \
         WHERE policy = ?1 AND subject = ?2 AND window_s = ?3 AND count > 0",
        &[Arg::Text(policy), Arg::Text(subject), Arg::Int(window_s as i64)],
    )
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct KeyRow {
    pub id: i64,
    pub key_prefix: String,
    pub label: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// The account's keys for the kitchen: every live key, then the newest revoked ones, at most
/// `2 × LIVE_KEYS_PER_ACCOUNT` in all, so an account that has made and revoked many keys still gets a
/// short page.
pub async fn keys_of(db: &D1Database, account_id: i64) -> Result<Vec<KeyRow>, ApiError> {
    all(
        db,
        "SELECT id, key_prefix, label, created_at, revoked_at FROM api_keys WHERE account_id = ?1 \
         ORDER BY revoked_at IS NOT NULL, id DESC LIMIT ?2",
        &[Arg::Int(account_id), Arg::Int(i64::from(2 * LIVE_KEYS_PER_ACCOUNT))],
    )
    .await
}

/// Adds a key unless the account already holds `LIVE_KEYS_PER_ACCOUNT` live keys: the count and the
/// insert are one statement, so concurrent requests cannot pass the cap together. Returns whether
/// the key was added.
pub async fn add_key(
    db: &D1Database,
    account_id: i64,
    key_hash: &str,
    prefix: &str,
    label: &str,
    now: &str,
) -> Result<bool, ApiError> {
    let added = run(
        db,
        "INSERT INTO api_keys (account_id, key_hash, key_prefix, label, created_at) \
         SELECT ?1, ?2, ?3, ?4, ?5 \
         WHERE (SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND revoked_at IS NULL) < ?6",
        &[
            Arg::Int(account_id),
            Arg::Text(key_hash),
            Arg::Text(prefix),
            Arg::Text(label),
            Arg::Text(now),
            Arg::Int(i64::from(LIVE_KEYS_PER_ACCOUNT)),
        ],
    )
    .await?;
    Ok(added == 1)
}

/// How many live keys the account holds.
pub async fn live_keys(db: &D1Database, account_id: i64) -> Result<u32, ApiError> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS count FROM api_keys WHERE account_id = ?1 AND revoked_at IS NULL",
        &[Arg::Int(account_id)],
    )
    .await?;
    Ok(row.map_or(0, |row| row.count))
}

/// Revokes one of the account's own keys; a key of someone else's is left alone.
pub async fn revoke_key(db: &D1Database, account_id: i64, key_id: i64, now: &str) -> Result<usize, ApiError> {
    run(
        db,
        "UPDATE api_keys SET revoked_at = ?3 WHERE id = ?1 AND account_id = ?2 AND revoked_at IS NULL",
        &[Arg::Int(key_id), Arg::Int(account_id), Arg::Text(now)],
    )
    .await
}

/// The account with this GitHub id, made on first sign-in. The handle is the GitHub login, or the
/// login with a number when another account holds it already.
pub async fn github_account(
    db: &D1Database,
    github_id: i64,
    login: &str,
    name: &str,
    now: &str,
) -> Result<Account, ApiError> {
    let select = "SELECT id FROM accounts WHERE github_id = ?1";
    if let Some(account) = first::<Account>(db, select, &[Arg::Int(github_id)]).await? {
        return Ok(account);
    }
    for attempt in 1..=20 {
        let handle = if attempt == 1 { login.to_string() } else { format!("{login}-{attempt}") };
        let inserted = run(
            db,
            "INSERT INTO accounts (handle, display_name, github_id, created_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT DO NOTHING",
            &[Arg::Text(&handle), Arg::Text(name), Arg::Int(github_id), Arg::Text(now)],
        )
        .await?;
        if inserted == 1 || attempt == 20 {
            break;
        }
        if let Some(account) = first::<Account>(db, select, &[Arg::Int(github_id)]).await? {
            return Ok(account);
        }
    }
    first::<Account>(db, select, &[Arg::Int(github_id)])
        .await?
        .ok_or_else(|| ApiError::Internal(format!("no free handle for GitHub login {login}")))
}

/// The local (dev-only) account with this handle, made on first sign-in.
pub async fn local_account(db: &D1Database, handle: &str, now: &str) -> Result<Account, ApiError> {
    run(
        db,
        "INSERT INTO accounts (handle, display_name, created_at) VALUES (?1, ?1, ?2) ON CONFLICT DO NOTHING",
        &[Arg::Text(handle), Arg::Text(now)],
    )
    .await?;
    first(db, "SELECT id FROM accounts WHERE handle = ?1", &[Arg::Text(handle)])
        .await?
        .ok_or_else(|| ApiError::Internal("the account just made is missing".into()))
}

#[derive(Debug, Clone, Deserialize)]
pub struct Session {
    pub account_id: i64,
    pub handle: String,
    pub display_name: String,
    pub role: String,
    pub csrf: String,
    /// When it ends, in seconds since the epoch.
    pub expires_s: u64,
}

impl Session {
    /// The signed-in account as a key's owner is known: what the shared write paths take.
    pub fn owner(&self) -> KeyOwner {
        KeyOwner {
            key_label: "a signed-in session".into(),
            account_id: self.account_id,
            handle: self.handle.clone(),
            display_name: self.display_name.clone(),
            role: self.role.clone(),
        }
    }
}

pub async fn session(db: &D1Database, token_hash: &str, now_s: u64) -> Result<Option<Session>, ApiError> {
    first(
        db,
        "SELECT s.account_id, a.handle, a.display_name, a.role, s.csrf, s.expires_s FROM sessions s \
         JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?1 AND s.expires_s > ?2",
        &[Arg::Text(token_hash), Arg::Int(now_s as i64)],
    )
    .await
}

/// Starts a session, and drops the sessions that have expired (nothing else ever reads them again).
pub async fn add_session(
    db: &D1Database,
    token_hash: &str,
    account_id: i64,
    csrf: &str,
    now: &str,
    now_s: u64,
    expires_s: u64,
) -> Result<(), ApiError> {
    let expired = stmt(db, "DELETE FROM sessions WHERE expires_s <= ?1", &[Arg::Int(now_s as i64)])?;
    let insert = stmt(
        db,
        "INSERT INTO sessions (token_hash, account_id, csrf, created_at, expires_s) VALUES (?1, ?2, ?3, ?4, ?5)",
        &[
            Arg::Text(token_hash),
            Arg::Int(account_id),
            Arg::Text(csrf),
            Arg::Text(now),
            Arg::Int(expires_s as i64),
        ],
    )?;
    batch(db, vec![expired, insert]).await?;
    Ok(())
}

pub async fn end_session(db: &D1Database, token_hash: &str) -> Result<(), ApiError> {
    run(db, "DELETE FROM sessions WHERE token_hash = ?1", &[Arg::Text(token_hash)]).await?;
    Ok(())
}
