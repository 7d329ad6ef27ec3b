//! Diet versions made by the site's AI: the claim rows of `diet_versions`
//! (`migrations/0002_…`) through which exactly one caller makes each version, the site's own account
//! that owns them, and the one transaction that stores a version with its feed item and its claim's
//! `made`.

use serde::Deserialize;
use worker::D1Database;

use super::accounts::Account;
use super::recipes::{Guard, NewRow, api_to_worker, first_feed_item, search_rows};
use super::{Arg, batch, first, run, stmt};
use crate::error::ApiError;

/// The site's own account, owner of diet versions (made by migration 0002).
pub async fn site_account(db: &D1Database) -> Result<i64, ApiError> {
    first::<Account>(
        db,
        "SELECT id FROM accounts WHERE handle = ?1",
        &[Arg::Text(domain::recipes::recipe::SITE_OWNER)],
    )
    .await?
    .map(|account| account.id)
    .ok_or_else(|| ApiError::Internal("the site account is missing: apply the D1 migrations".into()))
}

/// A diet version's claim row.
#[derive(Debug, Clone, Deserialize)]
pub struct DietClaim {
    pub state: String,
    pub variant_slug: Option<String>,
    pub attempt: i64,
    pub claimed_s: u64,
    pub error: Option<String>,
}

pub async fn diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
) -> Result<Option<DietClaim>, ApiError> {
    first(
        db,
        "SELECT state, variant_slug, attempt, claimed_s, error FROM diet_versions \
         WHERE source_slug = ?1 AND kind = ?2",
        &[Arg::Text(source_slug), Arg::Text(kind)],
    )
    .await
}

/// Claims the making of a diet version; `true` for the one caller whose insert made the row.
pub async fn claim_diet(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    now_s: u64,
) -> Result<bool, ApiError> {
    let inserted = run(
        db,
        "INSERT INTO diet_versions (source_slug, kind, state, attempt, claimed_s) VALUES (?1, ?2, 'making', 1, ?3) \
         ON CONFLICT (source_slug, kind) DO NOTHING",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(now_s as i64)],
    )
    .await?;
    Ok(inserted == 1)
}

/// Takes over a failed or abandoned claim last held at `attempt`; `true` for the one caller that did.
pub async fn retake_diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    attempt: i64,
    now_s: u64,
    stale_before_s: u64,
) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE diet_versions SET state = 'making', attempt = attempt + 1, claimed_s = ?4, error = NULL \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3 \
         AND (state = 'failed' OR (state = 'making' AND claimed_s < ?5))",
        &[
            Arg::Text(source_slug),
            Arg::Text(kind),
            Arg::Int(attempt),
            Arg::Int(now_s as i64),
            Arg::Int(stale_before_s as i64),
        ],
    )
    .await?;
    Ok(changed == 1)
}

/// Marks our attempt failed, so waiting callers stop and the next request tries again.
pub async fn fail_diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    attempt: i64,
    error: &str,
) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE diet_versions SET state = 'failed', error = ?4 \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3 AND state = 'making'",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(attempt), Arg::Text(error)],
    )
    .await?;
    Ok(())
}

/// Stores a diet version, its feed item and the claim's `made` in one transaction. Fails with a
/// UNIQUE violation when the slug is taken (the caller tries the next one).
pub async fn insert_diet_version(
    db: &D1Database,
    row: NewRow<'_>,
    source_slug: &str,
    kind: &str,
    attempt: i64,
) -> Result<(), worker::Error> {
    let insert = stmt(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 1, NULL, ?4, ?5, ?5)",
        &[
            Arg::Text(row.slug),
            Arg::Int(row.account_id),
            Arg::Text(row.owner),
            Arg::Text(row.doc),
            Arg::Text(row.now),
        ],
    )
    .map_err(api_to_worker)?;
    let feed = first_feed_item(db, row.slug, row.kind, row.owner, row.note, row.now)?;
    let made = stmt(
        db,
        "UPDATE diet_versions SET state = 'made', variant_slug = ?4, error = NULL \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(attempt), Arg::Text(row.slug)],
    )
    .map_err(api_to_worker)?;
    let mut statements = vec![insert, feed, made];
    statements.extend(search_rows(db, row.slug, 1, row.search, Guard::Always).map_err(api_to_worker)?);
    batch(db, statements).await?;
    crate::waiting::note_waiting(row.slug, 1);
    Ok(())
}
