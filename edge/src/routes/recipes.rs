//! Public reads of recipes: the search (`GET /api/recipes`) over the built index and the live D1
//! overlay, and a recipe's stored JSON (`/r/{slug}.json`), its page (`/r/{slug}`) and its card
//! (`/r/{slug}.{ratio}.svg`), each from its current document (`crate::overlay`). Scaled, converted
//! and Cooklang reads are in `cooking.rs`.

use domain::api::RecipePage;
use domain::paging::{self, PAGE_BYTES, encode_cursor};
use domain::recipes::card;
use domain::recipes::search::overlay::{Need, OverlaySearch, Read, Step};
use domain::recipes::search::{self, Outcome, Query};
use domain::recipes::write::etag;
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::overlay::with_stemmers;
use crate::web::RENDERER;
use crate::{assets, http, index, overlay, store};

/// `GET /api/recipes`: the API's search, over the built index and the live D1 overlay.
pub async fn search(req: &Request, env: &Env, query: Query) -> Result<Response, ApiError> {
    let live = crate::live::Live::of(req, env).await?;
    let page = search_page(env, &query, &live).await?;
    let body = serde_json::to_value(&page).map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&body, 60)
}

/// One page of search results for a `GET /api/recipes` query; also the `search_recipes` tool.
/// `live`: the view of what is newer than the build the search answers with.
pub async fn search_page(env: &Env, query: &Query, live: &crate::live::Live) -> Result<RecipePage, ApiError> {
    let view = overlay::search_view(env, live).await?;
    let mut built_query = query.clone();
    if view.live > 0 {
        // The built list up to the end of the page, to merge the overlay's matches into.
        built_query.offset = 0;
        built_query.limit = query.offset + query.limit;
        built_query.filters.exclude.extend(view.replaced.iter().copied());
    }
    let built = search_built(env, &built_query).await?;
    let outcome = if view.live > 0 { with_overlay(env, query, built, view.live).await? } else { built };

    let mut items: Vec<_> = outcome.cards.iter().map(|card| card.view(query.lang)).collect();
    // A page stops at the byte budget as well as the count; the cursor then resumes after the last
    // card kept.
    let next_offset = if paging::cut(&mut items, PAGE_BYTES) {
        Some(query.offset + items.len())
    } else {
        outcome.next_offset
    };
    Ok(RecipePage { items, total: outcome.total, next_cursor: next_offset.map(encode_cursor) })
}

/// The built index's answer to `query`.
async fn search_built(env: &Env, query: &Query) -> Result<Outcome, ApiError> {
    index::answer::<search::Manifest, _, _>(env, |manifest, files| {
        with_stemmers(|stemmers| search::search(manifest, query, stemmers, files))
    })
    .await
}

/// Merges the overlay's matches into `built` (the built list up to the end of the page): the search
/// is `domain`'s step machine ([`OverlaySearch`]); this only reads what each step needs.
async fn with_overlay(
    env: &Env,
    query: &Query,
    built: Outcome,
    n_overlay: usize,
) -> Result<Outcome, ApiError> {
    let db = store::db(env)?;
    let (mut search, mut step) =
        with_stemmers(|stemmers| OverlaySearch::start(query, built, n_overlay, stemmers));
    loop {
        let read = match step {
            Step::Done(outcome) => return Ok(outcome),
            Step::Need(Need::Terms { exact, ranges }) => {
                Read::Terms(overlay::dictionary(env, &exact, &ranges).await?)
            }
            Step::Need(Need::Postings(terms)) => Read::Postings(store::overlay_postings(&db, &terms).await?),
            Step::Need(Need::Listing(listing)) => {
                let (rows, total) = store::overlay_listing(&db, &listing).await?;
                Read::Listing { rows, total }
            }
            Step::Need(Need::BuiltVersions(slugs)) => {
                let built = overlay::built(env).await?;
                Read::BuiltVersions(slugs.iter().map(|slug| built.version(slug)).collect())
            }
            Step::Need(Need::Cards(slugs)) => {
                Read::Cards(store::overlay_cards(&db, &slugs).await?.into_iter().collect())
            }
        };
        step = with_stemmers(|stemmers| search.give(read, stemmers))
            .map_err(|err| ApiError::Internal(format!("overlay search: {err:?}")))?;
    }
}

/// `GET /r/{slug}.json` as stored: the overlay's document while it is live, else the built file.
pub async fn stored_json(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let Some(row) = overlay::row_for_read(&req, env, slug).await? else {
        return assets::serve(req, env).await;
    };
    let mut response = Response::from_bytes(row.doc.into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    headers.set("ETag", &etag(row.version))?;
    http::cors(headers);
    Ok(response)
}

/// `GET /r/{slug}`: the recipe page, rendered here from the recipe's current document (the builder
/// stores no pages: one per recipe would not fit a deploy's static files at scale). `servings` and
/// `units` in the query show it scaled and converted (`domain::recipes::cooking`).
pub async fn recipe_page(
    req: Request,
    env: &Env,
    slug: &str,
    request: domain::recipes::cooking::Request,
) -> Result<Response, ApiError> {
    let (published, cards) = overlay::current_document(&req, env, slug).await?;
    let adjusted = domain::recipes::cooking::adjust(&published, request);
    // Images and `og:url` are absolute, on the origin the page was asked for.
    let site = req.url()?.origin().ascii_serialization();
    http::public_page(RENDERER.with(|renderer| renderer.recipe_page(&adjusted, &site, cards)))
}

/// A permanent redirect to `location`: the address of a card that is drawn as SVG only.
pub fn moved_to(location: &str) -> Result<Response, ApiError> {
    let mut response = Response::empty()?.with_status(301);
    response.headers_mut().set("Location", location)?;
    Ok(response)
}

/// `GET /r/{slug}.{ratio}.svg`: the card of a recipe, drawn from its current document by the same
/// template the build draws its PNGs with (`domain::recipes::card`).
pub async fn card_svg(req: Request, env: &Env, name: &str) -> Result<Response, ApiError> {
    let (slug, ratio) =
        card::parse_svg_name(name).ok_or_else(|| ApiError::NotFound(format!("nothing at /r/{name}")))?;
    let (published, _) = overlay::current_document(&req, env, slug).await?;
    let mut response = Response::from_bytes(card::svg(&published, ratio).into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "image/svg+xml")?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    http::cors(headers);
    Ok(response)
}
