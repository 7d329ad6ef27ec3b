//! The public change feed (`changes`, and `change_bytes`, the size of each item: `migrations/0001_…`,
//! `0004_…`): pages of it for `/api/changes`, a recipe's items for its history, and what is new for
//! an isolate's map of waiting recipes (with the overlay dictionary's new terms, in one round trip).

use serde::Deserialize;
use worker::D1Database;

use super::search::DictTerm;
use super::{Arg, Retrying, all, batch_results, stmt};
use crate::error::ApiError;

#[derive(Debug, Clone, Deserialize)]
pub struct ChangeRow {
    pub seq: u64,
    pub slug: String,
    pub version: u64,
    pub kind: String,
    pub owner: String,
    pub note: String,
    pub doc: String,
    pub at: String,
}

/// The feed's sequence numbers after `since`, at most `limit`, each with the bytes of its document and
/// note (`change_bytes`, a lower bound of the item's size): what a page may hold, known without
/// reading a document.
pub async fn change_sizes_since(
    db: &D1Database,
    since: u64,
    limit: u32,
) -> Result<Vec<ChangeSize>, ApiError> {
    all(
        db,
        "SELECT seq, bytes FROM change_bytes WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        &[Arg::Int(since as i64), Arg::Int(i64::from(limit))],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChangeSize {
    pub seq: u64,
    pub bytes: u64,
}

/// The feed items after `since` up to and including `through`, oldest first.
pub async fn changes_between(db: &D1Database, since: u64, through: u64) -> Result<Vec<ChangeRow>, ApiError> {
    all(
        db,
        "SELECT seq, slug, version, kind, owner, note, doc, at FROM changes WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
        &[Arg::Int(since as i64), Arg::Int(through as i64)],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct FeedVersion {
    pub seq: u64,
    pub slug: String,
    pub version: u64,
}

/// A recipe's feed items newer than version `after_version` and older than `before_seq`, newest
/// first, at most `limit`, without their documents.
pub async fn changes_of(
    db: &D1Database,
    slug: &str,
    after_version: u64,
    before_seq: u64,
    limit: usize,
) -> Result<Vec<ChangeRow>, ApiError> {
    all(
        db,
        "SELECT seq, slug, version, kind, owner, note, '' AS doc, at FROM changes \
         WHERE slug = ?1 AND version > ?2 AND seq < ?3 ORDER BY seq DESC LIMIT ?4",
        &[
            Arg::Text(slug),
            Arg::Int(after_version as i64),
            Arg::Int(before_seq.min(i64::MAX as u64) as i64),
            Arg::Int(limit as i64),
        ],
    )
    .await
}

/// What the feed and the overlay dictionary hold past `seq` and `term_id`, in one round trip: the
/// feed items, and up to `max_terms` dictionary terms in the order they were added.
pub async fn news_since(
    db: &D1Database,
    seq: u64,
    term_id: u64,
    max_terms: u32,
) -> Result<(Vec<FeedVersion>, Vec<DictTerm>), ApiError> {
    let feed = stmt(
        db,
        "SELECT seq, slug, version FROM changes WHERE seq > ?1 ORDER BY seq",
        &[Arg::Int(seq as i64)],
    )?;
    let dict = stmt(
        db,
        "SELECT id, term FROM overlay_dict WHERE id > ?1 ORDER BY id LIMIT ?2",
        &[Arg::Int(term_id as i64), Arg::Int(i64::from(max_terms))],
    )?;
    let results = batch_results(db, vec![feed, dict], Retrying::Any).await?;
    let items = results.first().map(|r| r.results::<FeedVersion>()).transpose()?.unwrap_or_default();
    let terms = results.get(1).map(|r| r.results::<DictTerm>()).transpose()?.unwrap_or_default();
    Ok((items, terms))
}
