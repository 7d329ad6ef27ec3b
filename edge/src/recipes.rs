//! Recipe routes: search over the static index.

use domain::mcp::RecipePage;
use domain::search::{Overlay, Query, SearchError, encode_cursor, search_with_overlay};
use domain::text::Stemmers;
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::http;
use crate::{assets, overlay};

thread_local! {
    static STEMMERS: Stemmers = Stemmers::default();
}

/// `GET /api/recipes`: DESIGN.md §2's search, over the built index and the live D1 overlay.
pub async fn search(req: &Request, env: &Env) -> Result<Response, ApiError> {
    let url = req.url()?;
    let pairs: Vec<(String, String)> =
        url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let page = search_page(env, &pairs).await?;
    let body = serde_json::to_value(&page).map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&body, 60)
}

/// One page of search results for the `GET /api/recipes` parameters; also the `search_recipes` tool.
pub async fn search_page(env: &Env, pairs: &[(String, String)]) -> Result<RecipePage, ApiError> {
    let query = Query::from_params(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(ApiError::BadParameters)?;

    let (fresh, replaced) = overlay::for_search(env).await?;
    let overlay = Overlay {
        recipes: fresh.iter().map(|published| (published.slug.as_str(), &published.recipe)).collect(),
        replaced,
    };
    let (manifest, mut files) = assets::take_index(env).await?;
    let outcome = loop {
        let result =
            STEMMERS.with(|stemmers| search_with_overlay(&manifest, &query, stemmers, &files, &overlay));
        match result {
            Ok(outcome) => break outcome,
            Err(SearchError::Need(need)) => {
                if let Err(err) = files.load(env, need.0).await {
                    assets::put_index(manifest, files);
                    return Err(err);
                }
            }
            Err(SearchError::Corrupt(corrupt)) => return Err(ApiError::Internal(corrupt.0)),
        }
    };
    assets::put_index(manifest, files);

    Ok(RecipePage {
        items: outcome.cards.iter().map(|card| card.view(query.lang)).collect(),
        total: outcome.total,
        next_cursor: outcome.next_offset.map(encode_cursor),
    })
}
