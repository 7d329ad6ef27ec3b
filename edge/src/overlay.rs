//! The overlay: recipes written through the API show at once, before any rebuild. Reads of
//! `/r/{slug}.json`, `/r/{slug}` and `/api/recipes` consult D1 first; a row retires as soon as a build
//! has published its version (`domain::write::overlay_is_live`), and the built file answers again.
//!
//! A public read does not ask D1 about a recipe that nothing waits for there: each isolate keeps the
//! set of slugs with a live overlay row ([`Waiting`]), learnt from the change feed and brought up to
//! date at most every [`WAITING_REFRESH_MS`] by one query for the feed items it has not seen. A read
//! of any other slug costs no D1 query at all. A write shows at once in the isolate that took it and
//! in every read that carries a key (the writer's read-your-writes); a reader elsewhere sees it within
//! the refresh interval. See ARCHITECTURE.md for why this, and not a D1 query per read.
//!
//! What the build holds is known from `slugs.json` (every built slug with its version, in search
//! document-id order), loaded once per isolate: a deploy brings a new isolate and a new list.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use domain::recipe::Published;
use domain::write::{etag, overlay_is_live};
use worker::{D1Database, Env, Request, Response};

use crate::error::ApiError;
use crate::store::{self, OverlayRow};
use crate::{assets, http, packs};

/// The built recipes: by slug, the search document id and the version.
#[derive(Debug, Default)]
pub struct Built {
    slugs: HashMap<String, (u32, u64)>,
}

impl Built {
    /// From `slugs.json`: every built slug with its version, in search document-id order (the order
    /// recipe files were added to the content repo, not the slugs' order).
    fn from_list(list: Vec<(String, u64)>) -> Built {
        Built {
            slugs: list
                .into_iter()
                .enumerate()
                .map(|(id, (slug, version))| (slug, (id as u32, version)))
                .collect(),
        }
    }

    pub fn version(&self, slug: &str) -> Option<u64> {
        self.slugs.get(slug).map(|(_, version)| *version)
    }

    pub fn contains(&self, slug: &str) -> bool {
        self.slugs.contains_key(slug)
    }

    /// The search document id of a built recipe.
    pub fn doc_id(&self, slug: &str) -> Option<u32> {
        self.slugs.get(slug).map(|(id, _)| *id)
    }
}

thread_local! {
    static RENDERER: domain::page::Renderer =
        domain::page::Renderer::new().expect("the compiled-in templates parse");
    /// `slugs.json` of one build ([`packs::generation`]).
    static BUILT: RefCell<Option<(u64, Rc<Built>)>> = const { RefCell::new(None) };
}

pub async fn built(env: &Env) -> Result<Rc<Built>, ApiError> {
    let generation = packs::generation(env).await?;
    if let Some((_, built)) = BUILT.with(|cell| cell.borrow().clone()).filter(|(at, _)| *at == generation) {
        return Ok(built);
    }
    let bytes = assets::fetch_bytes(env, "slugs.json".into())
        .await?
        .ok_or_else(|| ApiError::Internal("slugs.json is missing: run the builder".into()))?;
    let slugs: Vec<(String, u64)> =
        serde_json::from_slice(&bytes).map_err(|err| ApiError::Internal(format!("slugs.json: {err}")))?;
    let built = Rc::new(Built::from_list(slugs));
    BUILT.with(|cell| *cell.borrow_mut() = Some((generation, built.clone())));
    Ok(built)
}

/// Where the current document of a recipe comes from.
#[derive(Debug)]
pub enum Origin {
    /// A live overlay row, written by this account.
    Overlay { account_id: i64 },
    /// The build (no overlay row, or a retired one).
    Built,
}

/// The document readers see now, and where it comes from; `None` for an unknown slug.
pub async fn current(
    env: &Env,
    db: &D1Database,
    slug: &str,
) -> Result<Option<(Published, Origin)>, ApiError> {
    let built = built(env).await?;
    if let Some(row) = store::overlay(db, slug).await?
        && overlay_is_live(row.version, built.version(slug))
    {
        let account_id = row.account_id;
        return Ok(Some((parse(&row)?, Origin::Overlay { account_id })));
    }
    if !built.contains(slug) {
        return Ok(None);
    }
    let published = built_document(env, slug)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("r/{slug}.json is listed but missing")))?;
    Ok(Some((published, Origin::Built)))
}

/// The built document of `slug`, if the build has one.
async fn built_document(env: &Env, slug: &str) -> Result<Option<Published>, ApiError> {
    if !domain::slug::is_valid(slug) {
        return Ok(None);
    }
    let Some(bytes) = assets::fetch_bytes(env, format!("r/{slug}.json")).await? else { return Ok(None) };
    let published = serde_json::from_slice(&bytes)
        .map_err(|err| ApiError::Internal(format!("r/{slug}.json does not parse: {err}")))?;
    Ok(Some(published))
}

pub fn parse(row: &OverlayRow) -> Result<Published, ApiError> {
    serde_json::from_str(&row.doc)
        .map_err(|err| ApiError::Internal(format!("overlay row {} does not parse: {err}", row.slug)))
}

/// How long an isolate trusts its [`Waiting`] set before asking the feed what is new: the longest a
/// reader on another isolate waits to see a write.
const WAITING_REFRESH_MS: u64 = 1_000;

/// The slugs with a live overlay row, as far as this isolate knows, and the last feed item it has seen.
#[derive(Debug, Default)]
struct Waiting {
    slugs: HashSet<String>,
    seq: u64,
    checked_ms: Option<u64>,
}

thread_local! {
    static WAITING: RefCell<Waiting> = RefCell::new(Waiting::default());
}

/// Notes a write this isolate just made, so its next read of `slug` asks D1 without waiting for a refresh.
pub fn note_waiting(slug: &str) {
    WAITING.with(|waiting| waiting.borrow_mut().slugs.insert(slug.to_string()));
}

/// Whether a public read of `slug` must ask D1: the request carries a key, or the feed says a live
/// overlay row may wait for it.
async fn may_wait(req: &Request, env: &Env, slug: &str) -> Result<bool, ApiError> {
    if req.headers().has("Authorization")? {
        return Ok(true);
    }
    let now_ms = worker::Date::now().as_millis();
    let due = WAITING.with(|waiting| {
        waiting.borrow().checked_ms.is_none_or(|at| now_ms.saturating_sub(at) >= WAITING_REFRESH_MS)
    });
    if due {
        let since = WAITING.with(|waiting| waiting.borrow().seq);
        let items = store::feed_versions_since(&store::db(env)?, since).await?;
        let built = built(env).await?;
        WAITING.with(|waiting| {
            let mut waiting = waiting.borrow_mut();
            for item in items {
                if overlay_is_live(item.version, built.version(&item.slug)) {
                    waiting.slugs.insert(item.slug);
                }
                waiting.seq = waiting.seq.max(item.seq);
            }
            waiting.checked_ms = Some(now_ms);
        });
    }
    Ok(WAITING.with(|waiting| waiting.borrow().slugs.contains(slug)))
}

/// The live overlay row of `slug`, if any.
async fn live_row(env: &Env, slug: &str) -> Result<Option<OverlayRow>, ApiError> {
    let db = store::db(env)?;
    let Some(row) = store::overlay(&db, slug).await? else { return Ok(None) };
    let built = built(env).await?;
    Ok(overlay_is_live(row.version, built.version(slug)).then_some(row))
}

/// `GET /r/{slug}.json`: the overlay's document while it is live, else the built file.
pub async fn recipe_json(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let row = if may_wait(&req, env, slug).await? { live_row(env, slug).await? } else { None };
    let Some(row) = row else { return assets::serve(req, env).await };
    let mut response = Response::from_bytes(row.doc.into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    headers.set("ETag", &etag(row.version))?;
    http::cors(headers);
    Ok(response)
}

/// `GET /r/{slug}`: the recipe page, rendered here from the recipe's current document (the builder
/// stores no pages: one per recipe would not fit a deploy's static files at scale).
pub async fn recipe_page(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let row = if may_wait(&req, env, slug).await? { live_row(env, slug).await? } else { None };
    let published = match row {
        Some(row) => parse(&row)?,
        None => built_document(env, slug)
            .await?
            .ok_or_else(|| ApiError::NotFound(format!("no recipe `{slug}`")))?,
    };
    let html = RENDERER
        .with(|renderer| renderer.recipe_page(&published))
        .map_err(|err| ApiError::Internal(format!("page: {err}")))?;
    let mut response = Response::from_html(html)?;
    let headers = response.headers_mut();
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    http::cors(headers);
    Ok(response)
}

/// The live overlay documents and the built document ids they replace, for search.
pub async fn for_search(env: &Env) -> Result<(Vec<Published>, Vec<u32>), ApiError> {
    let db = store::db(env)?;
    let rows = store::all_overlay(&db).await?;
    if rows.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let built = built(env).await?;
    let mut live = Vec::new();
    let mut replaced = Vec::new();
    for row in &rows {
        if !overlay_is_live(row.version, built.version(&row.slug)) {
            continue;
        }
        replaced.extend(built.doc_id(&row.slug));
        live.push(parse(row)?);
    }
    Ok((live, replaced))
}
