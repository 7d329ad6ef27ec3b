//! Recipe routes: search over the static index.

use domain::search::{Overlay, Query, SearchError, encode_cursor, search_with_overlay};
use domain::text::Stemmers;
use serde_json::json;
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

    let items: Vec<_> = outcome.cards.iter().map(|card| card.view(query.lang)).collect();
    let body = json!({
        "items": items,
        "total": outcome.total,
        "next_cursor": outcome.next_offset.map(encode_cursor),
    });
    http::public_json(&body, 60)
}
