//! The public change feed (`GET /api/changes`), which `builder sync` turns into git commits, and a
//! recipe's history (`GET /api/r/{slug}/history`): git history from the build plus the API changes
//! the build does not have yet. Both page by count and by bytes (`domain::paging`): a page stops at
//! 1 MiB of items, and its cursor says where the next one starts.

use domain::api::{FeedAsked, HistoryAsked};
use domain::paging::{self, PAGE_BYTES};
use domain::recipes::write::{Change, ChangeKind, ChangePage, HistoryCursor};
use serde_json::{Value, json};
use worker::{Env, Response};

use crate::error::ApiError;
use crate::store::{self, ChangeRow};
use crate::{assets, http, overlay};

fn change(row: ChangeRow) -> Result<Change, ApiError> {
    let kind = ChangeKind::parse(&row.kind)
        .ok_or_else(|| ApiError::Internal(format!("change {} has kind {}", row.seq, row.kind)))?;
    let document = serde_json::from_str(&row.doc)
        .map_err(|err| ApiError::Internal(format!("change {} does not parse: {err}", row.seq)))?;
    Ok(Change {
        seq: row.seq,
        kind,
        slug: row.slug,
        version: row.version,
        owner: row.owner,
        note: row.note,
        at: row.at,
        document,
    })
}

/// `GET /api/changes?since=<seq>&limit=<n>`: changes after `since`, oldest first, at most `limit` and
/// 1 MiB of them; `next_since` / `next_cursor` is the last `seq` of a page that has more after it.
pub async fn changes(env: &Env, FeedAsked { since, limit }: FeedAsked) -> Result<Response, ApiError> {
    let db = store::db(env)?;
    // The sizes first, from a small table: the documents of rows the page cannot hold are never read.
    let sizes = store::change_sizes_since(&db, since, limit).await?;
    let n_read = paging::rows_worth_reading(sizes.iter().map(|row| row.bytes as usize), PAGE_BYTES);
    let rows = match n_read.checked_sub(1).map(|last| sizes[last].seq) {
        Some(through) => store::changes_between(&db, since, through).await?,
        None => Vec::new(),
    };
    let items: Vec<Change> = rows.into_iter().map(change).collect::<Result<_, _>>()?;
    let page = ChangePage::of(items, sizes.len(), limit as usize);
    let (next_since, last) = (page.next_since, page.last_seq(since));
    let mut body = serde_json::to_value(page).map_err(|err| ApiError::Internal(err.to_string()))?;
    // `next_cursor` as the API contract names it for every paged answer; `last_seq` for a poller.
    body["next_cursor"] = json!(next_since.map(|seq| seq.to_string()));
    body["last_seq"] = json!(last);
    http::public_json(&body, 0)
}

/// `GET /api/r/{slug}/history?limit=<n>&cursor=<c>`: newest first; API changes not yet built, then
/// the git history; at most `limit` items and 1 MiB a page, `next_cursor` for the rest.
pub async fn history(
    env: &Env,
    HistoryAsked { slug, cursor, limit }: HistoryAsked,
) -> Result<Response, ApiError> {
    let slug = slug.as_str();
    let built = overlay::built(env).await?;
    let built_version = built.version(slug);
    let before_seq = match &cursor {
        None => u64::MAX,
        Some(HistoryCursor::Api(seq)) => *seq,
        // Past the API changes already.
        Some(HistoryCursor::Git(_)) => 0,
    };
    // One more than a page, so the page knows whether API changes go on past it.
    let rows =
        store::changes_of(&store::db(env)?, slug, built_version.unwrap_or(0), before_seq, limit + 1).await?;
    let api: Vec<(u64, Value)> = rows
        .into_iter()
        .map(|row| {
            let item = json!({
                "source": "api", "seq": row.seq, "version": row.version, "kind": row.kind,
                "author": row.owner, "date": row.at, "message": row.note,
            });
            (row.seq, item)
        })
        .collect();
    if cursor.is_none() && built_version.is_none() && api.is_empty() {
        return Err(ApiError::NotFound(format!("no recipe `{slug}`")));
    }
    // Written by `builder build --git`; a build from a plain folder has no history to give.
    let mut git: Vec<Value> = Vec::new();
    if let Some(bytes) = assets::fetch_bytes(env, format!("r/{slug}.history.json")).await? {
        git = serde_json::from_slice(&bytes)
            .map_err(|err| ApiError::Internal(format!("r/{slug}.history.json: {err}")))?;
        for item in &mut git {
            item["source"] = json!("git");
        }
    }
    let (items, next) = domain::recipes::write::history_page(api, git, cursor.as_ref(), limit)
        .map_err(|problem| ApiError::BadParameters(vec![problem]))?;
    let next_cursor = next.map(|cursor| cursor.encode());
    http::public_json(&json!({ "slug": slug, "items": items, "next_cursor": next_cursor }), 0)
}
