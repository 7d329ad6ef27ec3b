//! The overlay's recipe rows (`recipes`: `migrations/0001_…`), the newest API-written document of
//! each recipe: reads, the inserts of a create or a fork, the compare-and-set of a change, the
//! adoption of a built document, and the search rows each write stores in the same transaction.
//! A write notes itself in this isolate at once (`crate::waiting`).

use domain::recipes::recipe::Published;
use domain::recipes::search::FACETS_VERSION;
use domain::recipes::search::overlay::Entry;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{Arg, all, batch, first, run, stmt};
use crate::error::ApiError;

/// An overlay row: the newest API-written document of a recipe.
#[derive(Debug, Clone, Deserialize)]
pub struct OverlayRow {
    pub slug: String,
    pub account_id: i64,
    pub version: u64,
    pub doc: String,
}

pub async fn overlay_row(db: &D1Database, slug: &str) -> Result<Option<OverlayRow>, ApiError> {
    first(db, "SELECT slug, account_id, version, doc FROM recipes WHERE slug = ?1", &[Arg::Text(slug)]).await
}

#[derive(Debug, Clone, Deserialize)]
pub struct MyRecipe {
    pub slug: String,
    pub version: u64,
    pub forked_from: Option<String>,
    pub updated_at: String,
}

/// The account's `limit` most recently written recipes, newest first.
pub async fn recipes_of(db: &D1Database, account_id: i64, limit: u32) -> Result<Vec<MyRecipe>, ApiError> {
    all(
        db,
        "SELECT slug, version, forked_from, updated_at FROM recipes WHERE account_id = ?1 \
         ORDER BY updated_at DESC, slug LIMIT ?2",
        &[Arg::Int(account_id), Arg::Int(i64::from(limit))],
    )
    .await
}

/// Overlay slugs that are `base` or `base-<something>`: the ones a new slug must not collide with.
pub async fn slugs_like(db: &D1Database, base: &str) -> Result<Vec<String>, ApiError> {
    #[derive(Deserialize)]
    struct Slug {
        slug: String,
    }
    // A range, not `LIKE 'base-%'`: D1 refuses a LIKE pattern longer than 50 bytes ("LIKE or GLOB
    // pattern too complex"), and slugs run to 80. Slugs are `[a-z0-9-]`, so `base-` ≤ slug < `base.`
    // (`.` follows `-`) holds exactly those that start with `base-`.
    let (from, to) = (format!("{base}-"), format!("{base}."));
    let rows: Vec<Slug> = all(
        db,
        "SELECT slug FROM recipes WHERE slug = ?1 OR (slug >= ?2 AND slug < ?3)",
        &[Arg::Text(base), Arg::Text(&from), Arg::Text(&to)],
    )
    .await?;
    Ok(rows.into_iter().map(|row| row.slug).collect())
}

/// A new overlay row plus its change-feed item, in one transaction. Fails with a UNIQUE violation when
/// the slug was taken meanwhile (the caller picks the next one).
pub struct NewRow<'a> {
    pub slug: &'a str,
    pub account_id: i64,
    pub owner: &'a str,
    pub forked_from: Option<&'a str>,
    pub doc: &'a str,
    pub kind: &'a str,
    pub note: &'a str,
    pub now: &'a str,
    /// What the overlay search stores of the document: taken by the write, which turns it into
    /// statements and lets it go before it waits on D1.
    pub search: Entry,
}

/// Stores a new recipe, its feed item and its search rows in one transaction. What a write holds
/// while it waits on D1 is the document once (the feed item copies it from the row inside D1), so
/// many large writes in flight in one isolate stay small.
pub async fn insert_recipe(db: &D1Database, row: NewRow<'_>) -> Result<(), worker::Error> {
    let forked_from = row.forked_from.map_or(Arg::Null, Arg::Text);
    let insert = stmt(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?6)",
        &[
            Arg::Text(row.slug),
            Arg::Int(row.account_id),
            Arg::Text(row.owner),
            forked_from,
            Arg::Text(row.doc),
            Arg::Text(row.now),
        ],
    )
    .map_err(api_to_worker)?;
    let feed = first_feed_item(db, row.slug, row.kind, row.owner, row.note, row.now)?;
    let mut statements = vec![insert, feed];
    statements.extend(search_rows(db, row.slug, 1, row.search, Guard::Always).map_err(api_to_worker)?);
    batch(db, statements).await?;
    crate::waiting::note_waiting(row.slug, 1);
    Ok(())
}

/// The feed item of a recipe's first version (a create or a fork), after the statement inserting
/// the row: its document is the row's, copied inside D1 rather than sent twice.
pub(super) fn first_feed_item(
    db: &D1Database,
    slug: &str,
    kind: &str,
    owner: &str,
    note: &str,
    now: &str,
) -> Result<D1PreparedStatement, worker::Error> {
    stmt(
        db,
        "INSERT INTO changes (slug, version, kind, owner, note, doc, at) \
         SELECT slug, 1, ?2, ?3, ?4, doc, ?5 FROM recipes WHERE slug = ?1 AND version = 1",
        &[Arg::Text(slug), Arg::Text(kind), Arg::Text(owner), Arg::Text(note), Arg::Text(now)],
    )
    .map_err(api_to_worker)
}

pub(super) fn api_to_worker(err: ApiError) -> worker::Error {
    worker::Error::RustError(format!("{err:?}"))
}

/// A change of an existing recipe.
pub struct Update<'a> {
    pub slug: &'a str,
    pub account_id: i64,
    pub owner: &'a str,
    /// The version the caller saw; the write happens only if it is still the current one.
    pub expected: u64,
    pub doc: &'a str,
    pub note: &'a str,
    pub now: &'a str,
    /// What the overlay search stores of the new document (taken, as [`NewRow::search`]).
    pub search: Entry,
}

/// Compare-and-set: the row changes only if its version is still `expected`, and the feed item is
/// written only if the row changed (`changes()` counts the statement before it in the transaction).
/// Returns whether the write happened.
pub async fn update_recipe(db: &D1Database, update: Update<'_>) -> Result<bool, ApiError> {
    let expected = update.expected as i64;
    let set = stmt(
        db,
        "UPDATE recipes SET doc = ?1, version = ?2 + 1, updated_at = ?3 \
         WHERE slug = ?4 AND version = ?2 AND account_id = ?5",
        &[
            Arg::Text(update.doc),
            Arg::Int(expected),
            Arg::Text(update.now),
            Arg::Text(update.slug),
            Arg::Int(update.account_id),
        ],
    )?;
    let feed = stmt(
        db,
        "INSERT INTO changes (slug, version, kind, owner, note, doc, at) \
         SELECT slug, version, 'change', ?3, ?4, doc, ?5 FROM recipes \
         WHERE slug = ?1 AND version = ?2 + 1 AND changes() = 1",
        &[
            Arg::Text(update.slug),
            Arg::Int(expected),
            Arg::Text(update.owner),
            Arg::Text(update.note),
            Arg::Text(update.now),
        ],
    )?;
    let mut statements = vec![set, feed];
    statements.extend(search_rows(db, update.slug, update.expected + 1, update.search, Guard::Chained)?);
    let changed = batch(db, statements).await?.first().copied() == Some(1);
    if changed {
        crate::waiting::note_waiting(update.slug, update.expected + 1);
    }
    Ok(changed)
}

/// Brings a recipe whose current document is the built one (its overlay row retired, or gone after a
/// database restore) into the overlay at the built version, so a change can compare-and-set against it.
pub async fn adopt_built(
    db: &D1Database,
    built: &Published,
    account_id: i64,
    doc: &str,
    now: &str,
) -> Result<(), ApiError> {
    let server = &built.server;
    run(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) \
         ON CONFLICT (slug) DO UPDATE SET version = excluded.version, doc = excluded.doc \
         WHERE recipes.version < excluded.version",
        &[
            Arg::Text(&built.slug),
            Arg::Int(account_id),
            Arg::Text(&server.owner),
            Arg::Int(server.version as i64),
            server.forked_from.as_deref().map_or(Arg::Null, Arg::Text),
            Arg::Text(doc),
            Arg::Text(now),
        ],
    )
    .await?;
    Ok(())
}

// The search rows each write stores with its recipe (`migrations/0005_overlay_search.sql`); what a
// search reads of them is in `search.rs`.

/// When the statements of [`search_rows`] run.
#[derive(Debug, Clone, Copy)]
pub(super) enum Guard {
    /// Always: the batch's first statement fails the whole transaction if the write cannot happen.
    Always,
    /// Only if the statement before wrote exactly one row: they follow a compare-and-set chain (the
    /// change, then its feed item) and do nothing when the change did not happen.
    Chained,
    /// Only while the recipe is still at this version (a sweep indexing an older row).
    Current,
}

/// The statements that store what the overlay search needs of `slug` at `version`. The entry is
/// taken: its terms go to this isolate's dictionary copy now (a term noted for a write that then
/// fails matches nothing) and the entry is gone before the caller waits on D1.
pub(super) fn search_rows(
    db: &D1Database,
    slug: &str,
    version: u64,
    entry: Entry,
    guard: Guard,
) -> Result<Vec<D1PreparedStatement>, ApiError> {
    crate::waiting::note_terms(&entry);
    let guard = match guard {
        Guard::Always => "1",
        Guard::Chained => "changes() = 1",
        Guard::Current => "EXISTS (SELECT 1 FROM recipes WHERE slug = ?1 AND version = ?2)",
    };
    let card = serde_json::to_string(&entry.card).map_err(|err| ApiError::Internal(err.to_string()))?;
    let facets = entry.facets();
    let terms = serde_json::to_string(&entry.terms).map_err(|err| ApiError::Internal(err.to_string()))?;
    let version = version as i64;
    let upsert = stmt(
        db,
        &format!(
            "INSERT INTO overlay_search \
             (slug, version, live, flags, course, total_min, card, facets, facets_version) \
             SELECT ?1, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8 WHERE {guard} \
             ON CONFLICT (slug) DO UPDATE SET version = excluded.version, live = 1, flags = excluded.flags, \
             course = excluded.course, total_min = excluded.total_min, card = excluded.card, \
             facets = excluded.facets, facets_version = excluded.facets_version \
             WHERE excluded.version > overlay_search.version \
             OR (excluded.version = overlay_search.version AND overlay_search.live = 1 \
                 AND excluded.facets_version <> overlay_search.facets_version)"
        ),
        &[
            Arg::Text(slug),
            Arg::Int(version),
            // Read by no search since migration 0006; the Worker before it still wrote them.
            Arg::Int(i64::from(entry.card.flags)),
            Arg::Text(entry.card.course.code()),
            Arg::Int(i64::from(entry.total_min())),
            Arg::Text(&card),
            Arg::Text(&facets),
            Arg::Int(i64::from(FACETS_VERSION)),
        ],
    )?;
    let postings = stmt(
        db,
        &format!(
            "INSERT OR IGNORE INTO overlay_terms (term, slug, version, field) \
             SELECT json_extract(value, '$[0]'), ?1, ?2, json_extract(value, '$[1]') FROM json_each(?3) \
             WHERE {guard}"
        ),
        &[Arg::Text(slug), Arg::Int(version), Arg::Text(&terms)],
    )?;
    // The terms are sent once; the dictionary takes them from the postings just written.
    let dictionary = stmt(
        db,
        "INSERT OR IGNORE INTO overlay_dict (term) SELECT term FROM overlay_terms WHERE slug = ?1 AND version = ?2",
        &[Arg::Text(slug), Arg::Int(version)],
    )?;
    let older = stmt(
        db,
        "DELETE FROM overlay_terms WHERE slug = ?1 \
         AND version < (SELECT version FROM overlay_search WHERE slug = ?1)",
        &[Arg::Text(slug)],
    )?;
    Ok(vec![upsert, postings, dictionary, older])
}
