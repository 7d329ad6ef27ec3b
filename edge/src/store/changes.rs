//! The public change feed (`changes`, and `change_bytes`, the size of each item: `migrations/0001_…`,
//! `0004_…`): pages of it for `/api/changes`, a recipe's items for its history, and what is new in
//! every table the view of what is newer than the build reads (`crate::live`), in one round trip.

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

/// Where an isolate's view of what is newer than the build stands in each table (`crate::live`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursors {
    /// The last recipe feed item seen.
    pub recipe_seq: u64,
    /// The last overlay dictionary term seen, and how many more to read (0: the dictionary is not copied).
    pub term_id: u64,
    pub max_terms: u32,
    /// The last speaker decision seen.
    pub decided_seq: u64,
    /// The last episode the intake published that was seen.
    pub episode_seq: u64,
}

/// An episode the intake published: its place in the table, id and summary (`EpisodeSummary` JSON).
#[derive(Debug, Clone, Deserialize)]
pub struct PublishedEpisode {
    pub seq: u64,
    pub id: String,
    pub summary: String,
}

/// What D1 holds past `cursors`, in one round trip.
#[derive(Debug, Default)]
pub struct News {
    pub recipes: Vec<FeedVersion>,
    pub terms: Vec<DictTerm>,
    pub decided: Vec<super::speakers::DecidedRow>,
    pub episodes: Vec<PublishedEpisode>,
}

/// The most decisions and episodes one read brings; a fuller table is read again from where it ended.
pub const NEWS_PER_READ: u32 = 10_000;

/// Everything newer than `cursors` — recipe feed items, overlay dictionary terms, speaker decisions,
/// episodes the intake published — in one batch: the one read that keeps `crate::live` up to date.
pub async fn news(db: &D1Database, cursors: &Cursors) -> Result<News, ApiError> {
    let seq = |value: u64| Arg::Int(value.min(i64::MAX as u64) as i64);
    let statements = vec![
        stmt(
            db,
            "SELECT seq, slug, version FROM changes WHERE seq > ?1 ORDER BY seq",
            &[seq(cursors.recipe_seq)],
        )?,
        stmt(
            db,
            "SELECT id, term FROM overlay_dict WHERE id > ?1 ORDER BY id LIMIT ?2",
            &[seq(cursors.term_id), Arg::Int(i64::from(cursors.max_terms))],
        )?,
        stmt(
            db,
            "SELECT seq, episode_id FROM speaker_decisions WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            &[seq(cursors.decided_seq), Arg::Int(i64::from(NEWS_PER_READ))],
        )?,
        stmt(
            db,
            "SELECT seq, id, summary FROM intake_episodes WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            &[seq(cursors.episode_seq), Arg::Int(i64::from(NEWS_PER_READ))],
        )?,
    ];
    let results = batch_results(db, statements, Retrying::Any).await?;
    let of = |idx: usize| results.get(idx);
    Ok(News {
        recipes: of(0).map(|r| r.results()).transpose()?.unwrap_or_default(),
        terms: of(1).map(|r| r.results()).transpose()?.unwrap_or_default(),
        decided: of(2).map(|r| r.results()).transpose()?.unwrap_or_default(),
        episodes: of(3).map(|r| r.results()).transpose()?.unwrap_or_default(),
    })
}
