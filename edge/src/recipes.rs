//! Recipe routes: search over the static index.

use domain::api::RecipePage;
use domain::paging::{self, PAGE_BYTES, encode_cursor};
use domain::search::overlay::{Listing, Plan, merge, rank};
use domain::search::{self, Outcome, Query};
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::http;
use crate::overlay::with_stemmers;
use crate::{auth, index, overlay, store};

/// `GET /api/recipes`: DESIGN.md §2's search, over the built index and the live D1 overlay.
pub async fn search(req: &Request, env: &Env, query: Query) -> Result<Response, ApiError> {
    let keyed = auth::keyed(req)?;
    let page = search_page(env, &query, keyed).await?;
    let body = serde_json::to_value(&page).map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&body, 60)
}

/// One page of search results for a `GET /api/recipes` query; also the `search_recipes` tool.
/// `keyed`: the request carries a key, so the caller's own writes must show at once.
pub async fn search_page(env: &Env, query: &Query, keyed: bool) -> Result<RecipePage, ApiError> {
    let view = overlay::search_view(env, keyed).await?;
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

/// Merges the overlay's matches into `built` (the built list up to the end of the page): the D1 rows
/// of the query's words only (`domain::search::overlay`), or for a listing, the page's rows.
async fn with_overlay(
    env: &Env,
    query: &Query,
    built: Outcome,
    n_overlay: usize,
) -> Result<Outcome, ApiError> {
    let db = store::db(env)?;
    let plan = with_stemmers(|stemmers| Plan::of(query, stemmers));
    let merged = if plan.has_words() {
        let dictionary = overlay::dictionary(env, &plan.exact(), &plan.ranges()).await?;
        let wanted = plan.wanted(&dictionary);
        let postings =
            if wanted.is_empty() { Vec::new() } else { store::overlay_postings(&db, &wanted).await? };
        let built_list = overlay::built(env).await?;
        let window = query.offset + query.limit;
        let fresh = with_stemmers(|stemmers| {
            rank(query, stemmers, &postings, n_overlay, window, |slug, version| {
                overlay::is_live(&built_list, slug, version)
            })
        })
        .map_err(|err| ApiError::Internal(format!("overlay search: {err:?}")))?;
        merge(built, fresh, query.offset, query.limit)
    } else {
        let listing = Listing::of(query, built.total);
        // Also for a page that the built recipes fill: the total counts the overlay recipes the
        // filters admit.
        let (rows, total) = store::overlay_listing(&db, &listing).await?;
        let built_list = overlay::built(env).await?;
        let slugs = rows
            .into_iter()
            .filter(|row| overlay::is_live(&built_list, &row.slug, row.version))
            .map(|row| row.slug);
        listing.page(built, slugs.collect(), total, query)
    };
    let cards = store::overlay_cards(&db, &merged.overlay).await?;
    Ok(merged.fill(cards.into_iter().collect()))
}
