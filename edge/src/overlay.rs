//! The overlay: recipes written through the API show at once, before any rebuild. Reads of
//! `/r/{slug}.json`, `/r/{slug}` and `/api/recipes` (`routes/recipes.rs`, `routes/cooking.rs`) consult
//! D1 first; a row retires as soon as a build has published its version
//! (`domain::recipes::write::overlay_is_live`), and the built file answers again.
//!
//! A public read does not ask D1 about a recipe that nothing waits for there: each isolate keeps the
//! set of slugs with a live overlay row ([`crate::waiting::Waiting`]), learnt from the change feed
//! and kept by the view of what is newer than the build ([`crate::live`], whose freshness rule this
//! follows). A read of any other slug costs no D1 query at all.
//!
//! What the build holds is known from `slugs.json` (every built slug with its version, in search
//! document-id order), loaded once per isolate: a deploy brings a new isolate and a new list.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Bound;
use std::rc::Rc;

use domain::recipes::card::Format;
use domain::recipes::recipe::Published;
use domain::recipes::search::overlay::{Entry, Listed};
use domain::recipes::search::{Card, FACETS_VERSION};
use domain::recipes::write::overlay_is_live;
use domain::text::Stemmers;
use worker::{D1Database, Env, Request};

use crate::error::ApiError;
use crate::live::Live;
use crate::store::{self, OverlayRow};
use crate::waiting::WAITING;
use crate::{assets, packs};

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
    static STEMMERS: Stemmers = Stemmers::default();
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
pub enum Provenance {
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
) -> Result<Option<(Published, Provenance)>, ApiError> {
    let built = built(env).await?;
    if let Some(row) = store::overlay_row(db, slug).await?
        && overlay_is_live(row.version, built.version(slug))
    {
        let account_id = row.account_id;
        return Ok(Some((parse(&row)?, Provenance::Overlay { account_id })));
    }
    if !built.contains(slug) {
        return Ok(None);
    }
    let published = built_document(env, slug)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("r/{slug}.json is listed but missing")))?;
    Ok(Some((published, Provenance::Built)))
}

/// The built document of `slug`, if the build has one.
async fn built_document(env: &Env, slug: &str) -> Result<Option<Published>, ApiError> {
    if !domain::recipes::slug::is_valid(slug) {
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

/// Whether a public read of `slug` must ask D1: the view ([`crate::live`], brought up to date first
/// for a request with a key) says a live overlay row may wait for it.
async fn may_wait(req: &Request, env: &Env, slug: &str) -> Result<bool, ApiError> {
    Live::of(req, env).await?;
    let built = built(env).await?;
    Ok(WAITING.with(|waiting| {
        waiting
            .borrow()
            .versions
            .get(slug)
            .is_some_and(|version| overlay_is_live(*version, built.version(slug)))
    }))
}

/// The live overlay row of `slug`, if any.
async fn live_row(env: &Env, slug: &str) -> Result<Option<OverlayRow>, ApiError> {
    let db = store::db(env)?;
    let Some(row) = store::overlay_row(&db, slug).await? else { return Ok(None) };
    let built = built(env).await?;
    Ok(overlay_is_live(row.version, built.version(slug)).then_some(row))
}

/// The live overlay row a public read of `slug` answers with, if any: D1 is asked only when
/// [`may_wait`] says a row may wait there.
pub async fn row_for_read(req: &Request, env: &Env, slug: &str) -> Result<Option<OverlayRow>, ApiError> {
    if may_wait(req, env, slug).await? { live_row(env, slug).await } else { Ok(None) }
}

/// The document a public read of `slug` answers with (the live overlay row's, else the built one;
/// D1 is asked only when [`may_wait`] says a row may wait there), and how its cards are served: drawn
/// by the build (PNG) for a built recipe, drawn here (SVG) for one the D1 overlay holds, whose built
/// cards (if any) are out of date.
pub async fn current_document(req: &Request, env: &Env, slug: &str) -> Result<(Published, Format), ApiError> {
    match row_for_read(req, env, slug).await? {
        Some(row) => Ok((parse(&row)?, Format::Svg)),
        None => built_document(env, slug)
            .await?
            .map(|published| (published, Format::Png))
            .ok_or_else(|| ApiError::NotFound(format!("no recipe `{slug}`"))),
    }
}

/// What a search needs to know of the overlay before it reads any of it.
#[derive(Debug, Default)]
pub struct SearchView {
    /// Built document ids whose recipe a live overlay row replaces.
    pub replaced: Vec<u32>,
    /// How many recipes wait in the overlay: none means the search reads no D1 at all.
    pub live: usize,
}

/// The overlay as a search sees it, from the view's recipes ([`crate::live::recipes`]); costs no D1
/// query when the view is fresh. Also sweeps the search rows a new build has published, once per build
/// ([`sweep`]).
pub async fn search_view(env: &Env, _live: &Live) -> Result<SearchView, ApiError> {
    let built = built(env).await?;
    let view = WAITING.with(|waiting| {
        let mut view = SearchView::default();
        for (slug, version) in &waiting.borrow().versions {
            if overlay_is_live(*version, built.version(slug)) {
                view.live += 1;
                view.replaced.extend(built.doc_id(slug));
            }
        }
        view
    });
    if view.live > 0 {
        sweep(env).await?;
    }
    Ok(view)
}

/// The overlay dictionary's terms that are `exact` or lie in one of `ranges` (`[low, high)`): from this
/// isolate's copy, or from D1 when the dictionary is too large to copy.
pub async fn dictionary(
    env: &Env,
    exact: &[String],
    ranges: &[(String, String)],
) -> Result<Vec<String>, ApiError> {
    if WAITING.with(|waiting| waiting.borrow().terms_in_d1) {
        return store::overlay_dictionary(&store::db(env)?, exact, ranges).await;
    }
    Ok(WAITING.with(|waiting| {
        let terms = &waiting.borrow().terms;
        let mut found: Vec<String> = exact.iter().filter(|term| terms.contains(*term)).cloned().collect();
        for (low, high) in ranges {
            found.extend(
                terms
                    .range::<str, _>((Bound::Included(low.as_str()), Bound::Excluded(high.as_str())))
                    .cloned(),
            );
        }
        domain::sorted::sort(&mut found);
        found.dedup();
        found
    }))
}

/// Whether the overlay search rows of `slug` at `version` are live: no build has published them.
pub fn is_live(built: &Built, slug: &str, version: u64) -> bool {
    overlay_is_live(version, built.version(slug))
}

thread_local! {
    /// The build generation this isolate last saw swept.
    static SWEPT: RefCell<Option<u64>> = const { RefCell::new(None) };
}

/// At most this many overlay rows retired, or given new facet keys, per sweep step; a request that
/// claims a sweep pays for one step, and the next request goes on with the rest.
const SWEEP_STEP: usize = 100;
/// Given new facet keys per step: each is a document read and parsed (up to 256 KiB).
const FACETS_STEP: usize = 25;
/// Indexed whole per step: each is a document's terms written (thousands of rows for a large one).
const INDEX_STEP: usize = 4;

/// Once per build generation, one request (the one that claims it in D1) retires the search rows the
/// build has published — they stop costing searches — indexes overlay rows written before the search
/// table existed, and gives rows indexed under other facet rules this Worker's keys. Searches never wait for it to be right: they skip rows the build has
/// published on their own.
async fn sweep(env: &Env) -> Result<(), ApiError> {
    let generation = packs::generation(env).await?;
    if SWEPT.with(|swept| *swept.borrow() == Some(generation)) {
        return Ok(());
    }
    let db = store::db(env)?;
    // A Worker with other facet rules sweeps again, to give the live rows its keys.
    let marker = format!("{generation:016x}-facets-{FACETS_VERSION}");
    if !store::claim_sweep(&db, &marker).await? {
        SWEPT.with(|swept| *swept.borrow_mut() = Some(generation));
        return Ok(());
    }
    let built = built(env).await?;
    let retired: Vec<Listed> = store::overlay_versions(&db)
        .await?
        .into_iter()
        .filter(|row| !is_live(&built, &row.slug, row.version))
        .take(SWEEP_STEP)
        .collect();
    store::retire_overlay(&db, &retired).await?;
    let unindexed = store::unindexed_overlay(&db, INDEX_STEP as u32).await?;
    let mut never_live = Vec::new();
    for row in &unindexed {
        if is_live(&built, &row.slug, row.version) {
            let published = parse(row)?;
            store::index_overlay(&db, &row.slug, row.version, search_entry(&published)).await?;
        } else {
            never_live.push(Listed { slug: row.slug.clone(), version: row.version });
        }
    }
    store::retire_overlay(&db, &never_live).await?;
    // Rows indexed under other facet rules keep their terms; only their keys are made again.
    let stale = store::stale_facets_overlay(&db, FACETS_STEP as u32).await?;
    let mut cards = Vec::with_capacity(stale.len());
    for row in &stale {
        let published = parse(row)?;
        cards.push((row.slug.clone(), row.version, Card::from_recipe(&published.slug, &published.recipe)));
    }
    store::set_overlay_facets(&db, &cards).await?;
    if retired.len() == SWEEP_STEP || unindexed.len() == INDEX_STEP || stale.len() == FACETS_STEP {
        store::release_sweep(&db, &marker).await?;
    } else {
        SWEPT.with(|swept| *swept.borrow_mut() = Some(generation));
    }
    Ok(())
}

/// Runs `f` with this isolate's stemmers (the built search's and the overlay's).
pub fn with_stemmers<T>(f: impl FnOnce(&Stemmers) -> T) -> T {
    STEMMERS.with(f)
}

/// What the overlay search stores of a recipe document.
pub fn search_entry(published: &Published) -> Entry {
    with_stemmers(|stemmers| Entry::of(&published.slug, &published.recipe, stemmers))
}
