//! The overlay search as a search reads it (`overlay_dict`, `overlay_terms`, `overlay_search`:
//! `migrations/0005_…`, `0006_…`): the dictionary, the postings of a query's terms, a listing's page
//! and the stored cards; and the once-a-build sweep (`overlay_sweep`) that retires what a build has
//! published, indexes rows written before the search table existed and gives live rows this
//! Worker's facet keys.

use domain::recipes::search::overlay::{Entry, Listed, Listing, Posting, facets_of};
use domain::recipes::search::{Card, FACETS_VERSION};
use serde::Deserialize;
use worker::D1Database;

use super::recipes::{Guard, OverlayRow, search_rows};
use super::{Arg, Retrying, all, batch, batch_results, run, stmt};
use crate::error::ApiError;

#[derive(Debug, Clone, Deserialize)]
pub struct DictTerm {
    pub id: u64,
    pub term: String,
}

/// The dictionary terms that are `exact` or lie in one of `ranges` (`[low, high)`), in one round trip:
/// for an isolate whose copy of the dictionary grew too large to keep.
pub async fn overlay_dictionary(
    db: &D1Database,
    exact: &[String],
    ranges: &[(String, String)],
) -> Result<Vec<String>, ApiError> {
    #[derive(Deserialize)]
    struct Term {
        term: String,
    }
    let exact = serde_json::to_string(exact).map_err(|err| ApiError::Internal(err.to_string()))?;
    let mut statements = vec![stmt(
        db,
        "SELECT term FROM overlay_dict WHERE term IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&exact)],
    )?];
    for (low, high) in ranges {
        statements.push(stmt(
            db,
            "SELECT term FROM overlay_dict WHERE term >= ?1 AND term < ?2",
            &[Arg::Text(low), Arg::Text(high)],
        )?);
    }
    let mut terms = Vec::new();
    for result in batch_results(db, statements, Retrying::Any).await? {
        terms.extend(result.results::<Term>()?.into_iter().map(|row| row.term));
    }
    domain::sorted::sort(&mut terms);
    terms.dedup();
    Ok(terms)
}

/// The postings of `terms`, each with its recipe's facets, for the versions the search table holds.
pub async fn overlay_postings(db: &D1Database, terms: &[String]) -> Result<Vec<Posting>, ApiError> {
    let terms = serde_json::to_string(terms).map_err(|err| ApiError::Internal(err.to_string()))?;
    all(
        db,
        "SELECT p.term, p.slug, p.version, p.field, s.facets, s.total_min \
         FROM overlay_terms p JOIN overlay_search s ON s.slug = p.slug AND s.version = p.version AND s.live = 1 \
         WHERE p.term IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&terms)],
    )
    .await
}

/// One page of a listing's overlay part, in slug order, and how many overlay recipes match.
pub async fn overlay_listing(db: &D1Database, listing: &Listing) -> Result<(Vec<Listed>, u64), ApiError> {
    #[derive(Deserialize)]
    struct Count {
        n: u64,
    }
    // One condition per facet key, whatever filter asked for it (`domain::recipes::search::Filters::keys`).
    let mut filter = "live = 1 AND (?1 IS NULL OR total_min <= ?1)".to_string();
    let mut args = vec![listing.max_min.map_or(Arg::Null, |max| Arg::Int(i64::from(max)))];
    for key in &listing.keys {
        args.push(Arg::Text(key));
        filter.push_str(&format!(" AND instr(facets, ?{}) > 0", args.len()));
    }
    let count = stmt(db, &format!("SELECT count(*) AS n FROM overlay_search WHERE {filter}"), &args)?;
    let (limit, offset) = (args.len() + 1, args.len() + 2);
    args.extend([Arg::Int(listing.limit as i64), Arg::Int(listing.offset as i64)]);
    let page = stmt(
        db,
        &format!(
            "SELECT slug, version FROM overlay_search WHERE {filter} ORDER BY slug LIMIT ?{limit} OFFSET ?{offset}"
        ),
        &args,
    )?;
    let results = batch_results(db, vec![count, page], Retrying::Any).await?;
    let n =
        results.first().map(|r| r.results::<Count>()).transpose()?.and_then(|rows| rows.into_iter().next());
    let rows = results.get(1).map(|r| r.results::<Listed>()).transpose()?.unwrap_or_default();
    Ok((rows, n.map_or(0, |count| count.n)))
}

/// The stored cards of `slugs`.
pub async fn overlay_cards(db: &D1Database, slugs: &[String]) -> Result<Vec<(String, Card)>, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        slug: String,
        card: String,
    }
    if slugs.is_empty() {
        return Ok(Vec::new());
    }
    let slugs = serde_json::to_string(slugs).map_err(|err| ApiError::Internal(err.to_string()))?;
    let rows: Vec<Row> = all(
        db,
        "SELECT slug, card FROM overlay_search WHERE live = 1 AND slug IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&slugs)],
    )
    .await?;
    rows.into_iter()
        .map(|row| {
            let card = serde_json::from_str(&row.card).map_err(|err| {
                ApiError::Internal(format!("overlay card of {} does not parse: {err}", row.slug))
            })?;
            Ok((row.slug, card))
        })
        .collect()
}

/// Claims the sweep of build `generation`: true for the one caller that moved the marker to it.
pub async fn claim_sweep(db: &D1Database, generation: &str) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE overlay_sweep SET generation = ?1 WHERE id = 1 AND generation <> ?1",
        &[Arg::Text(generation)],
    )
    .await?;
    Ok(changed == 1)
}

/// Gives a claimed sweep back, so the next request goes on with it.
pub async fn release_sweep(db: &D1Database, generation: &str) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE overlay_sweep SET generation = '' WHERE id = 1 AND generation = ?1",
        &[Arg::Text(generation)],
    )
    .await?;
    Ok(())
}

/// Every recipe version the search table holds as live.
pub async fn overlay_versions(db: &D1Database) -> Result<Vec<Listed>, ApiError> {
    all(db, "SELECT slug, version FROM overlay_search WHERE live = 1", &[]).await
}

/// Overlay rows whose current version the search table does not hold (written before it existed),
/// or holds as live with facet keys of another [`FACETS_VERSION`].
pub async fn unindexed_overlay(db: &D1Database, limit: u32) -> Result<Vec<OverlayRow>, ApiError> {
    all(
        db,
        "SELECT r.slug, r.account_id, r.version, r.doc FROM recipes r \
         LEFT JOIN overlay_search s ON s.slug = r.slug AND s.version >= r.version \
         WHERE s.slug IS NULL LIMIT ?1",
        &[Arg::Int(i64::from(limit))],
    )
    .await
}

/// Live overlay rows whose search row has the facet keys of other rules than this Worker's: their
/// terms stand, only the keys (and the card) are made again.
pub async fn stale_facets_overlay(db: &D1Database, limit: u32) -> Result<Vec<OverlayRow>, ApiError> {
    all(
        db,
        "SELECT r.slug, r.account_id, r.version, r.doc FROM recipes r \
         JOIN overlay_search s ON s.slug = r.slug AND s.version = r.version \
         WHERE s.live = 1 AND s.facets_version <> ?2 LIMIT ?1",
        &[Arg::Int(i64::from(limit)), Arg::Int(i64::from(FACETS_VERSION))],
    )
    .await
}

/// Gives live search rows the card and facet keys of this Worker's rules, in one batch; a row a
/// newer version replaced meanwhile is left alone.
pub async fn set_overlay_facets(db: &D1Database, rows: &[(String, u64, Card)]) -> Result<(), ApiError> {
    let mut statements = Vec::with_capacity(rows.len());
    for (slug, version, card) in rows {
        let json = serde_json::to_string(card).map_err(|err| ApiError::Internal(err.to_string()))?;
        let facets = facets_of(card);
        statements.push(stmt(
            db,
            "UPDATE overlay_search SET card = ?3, facets = ?4, facets_version = ?5, total_min = ?6 \
             WHERE slug = ?1 AND version = ?2 AND live = 1",
            &[
                Arg::Text(slug),
                Arg::Int(*version as i64),
                Arg::Text(&json),
                Arg::Text(&facets),
                Arg::Int(i64::from(FACETS_VERSION)),
                Arg::Int(i64::from(card.prep_min + card.cook_min)),
            ],
        )?);
    }
    if !statements.is_empty() {
        batch(db, statements).await?;
    }
    Ok(())
}

/// Marks recipe versions a build has published (or that never were live) retired and deletes their
/// terms; a newer version written meanwhile is kept.
pub async fn retire_overlay(db: &D1Database, retired: &[Listed]) -> Result<(), ApiError> {
    let mut statements = Vec::with_capacity(retired.len() * 2);
    for row in retired {
        let args = [Arg::Text(&row.slug), Arg::Int(row.version as i64)];
        statements.push(stmt(db, "DELETE FROM overlay_terms WHERE slug = ?1 AND version <= ?2", &args)?);
        statements.push(stmt(
            db,
            "INSERT INTO overlay_search (slug, version, live, flags, course, total_min, card) \
             VALUES (?1, ?2, 0, 0, '', 0, '') \
             ON CONFLICT (slug) DO UPDATE SET live = 0, card = '' WHERE overlay_search.version <= excluded.version",
            &args,
        )?);
    }
    if !statements.is_empty() {
        batch(db, statements).await?;
    }
    Ok(())
}

/// Stores the search rows of an overlay row written before the search table existed, if the row is
/// still at `version`.
pub async fn index_overlay(db: &D1Database, slug: &str, version: u64, entry: Entry) -> Result<(), ApiError> {
    batch(db, search_rows(db, slug, version, entry, Guard::Current)?).await?;
    Ok(())
}
