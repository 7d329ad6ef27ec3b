//! The public change feed (`GET /api/changes`), which `builder sync` turns into git commits, and a
//! recipe's history (`GET /api/r/{slug}/history`): git history from the build plus the API changes
//! the build does not have yet.

use domain::write::{Change, ChangeKind, ChangePage};
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::store::{self, ChangeRow};
use crate::{assets, http, overlay};

pub const DEFAULT_LIMIT: u32 = 100;
pub const MAX_LIMIT: u32 = 1000;

fn parse_params(req: &Request) -> Result<(u64, u32), ApiError> {
    let url = req.url()?;
    let (mut since, mut limit) = (0, DEFAULT_LIMIT);
    let mut problems = Vec::new();
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "since" | "cursor" => match value.parse() {
                Ok(n) => since = n,
                Err(_) => problems.push(domain::Diagnostic::new(key, "must be a change sequence number")),
            },
            "limit" => match value.parse() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => limit = n,
                _ => problems.push(domain::Diagnostic::new("limit", format!("must be 1 to {MAX_LIMIT}"))),
            },
            other => problems.push(domain::Diagnostic::new(other, "unknown parameter")),
        }
    }
    if problems.is_empty() { Ok((since, limit)) } else { Err(ApiError::BadParameters(problems)) }
}

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

/// `GET /api/changes?since=<seq>&limit=<n>`: changes after `since`, oldest first.
pub async fn changes(req: &Request, env: &Env) -> Result<Response, ApiError> {
    let (since, limit) = parse_params(req)?;
    let rows = store::changes_since(&store::db(env)?, since, limit).await?;
    let full = rows.len() == limit as usize;
    let items: Vec<Change> = rows.into_iter().map(change).collect::<Result<_, _>>()?;
    let next_since = if full { items.last().map(|c| c.seq) } else { None };
    let last = items.last().map_or(since, |c| c.seq);
    let mut body = serde_json::to_value(ChangePage { items, next_since })
        .map_err(|err| ApiError::Internal(err.to_string()))?;
    // `next_cursor` as DESIGN.md §4 names it for every paged answer; `last_seq` for a poller.
    body["next_cursor"] = json!(next_since.map(|seq| seq.to_string()));
    body["last_seq"] = json!(last);
    http::public_json(&body, 0)
}

/// `GET /api/r/{slug}/history`: newest first; API changes not yet built, then the git history.
pub async fn history(env: &Env, slug: &str) -> Result<Response, ApiError> {
    let built = overlay::built(env).await?;
    let built_version = built.version(slug);
    let rows = store::changes_of(&store::db(env)?, slug).await?;
    let mut items: Vec<Value> = rows
        .into_iter()
        .filter(|row| built_version.is_none_or(|built| row.version > built))
        .map(|row| {
            json!({
                "source": "api", "seq": row.seq, "version": row.version, "kind": row.kind,
                "author": row.owner, "date": row.at, "message": row.note,
            })
        })
        .collect();
    if built_version.is_none() && items.is_empty() {
        return Err(ApiError::NotFound(format!("no recipe `{slug}`")));
    }
    // Written by `builder build --git`; a build from a plain folder has no history to give.
    if let Some(bytes) = assets::fetch_bytes(env, format!("r/{slug}.history.json")).await? {
        let git: Vec<Value> = serde_json::from_slice(&bytes)
            .map_err(|err| ApiError::Internal(format!("r/{slug}.history.json: {err}")))?;
        items.extend(git.into_iter().map(|mut item| {
            item["source"] = json!("git");
            item
        }));
    }
    http::public_json(&json!({ "slug": slug, "items": items }), 0)
}
