//! The Commonplace Worker: every route in one table ([`route`]); handlers parse, call `domain`, render.
//!
//! Static files (recipe JSON, pages, search index, dumps) are Workers static assets built by `builder`;
//! the Worker runs first for every request so that headers, errors and (later) the D1 overlay are
//! decided in one place. Central types: [`error::ApiError`], the one error type, mapped to RFC 9457 in
//! [`error::ApiError::into_response`].

mod assets;
mod error;
mod http;
mod recipes;

use worker::{Context, Env, Method, Request, Response, event};

use crate::error::ApiError;

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let instance = req.path();
    let response = match route(req, &env).await {
        Ok(response) => response,
        Err(err) => err.into_response(&instance),
    };
    Ok(response)
}

/// Every route of the service.
async fn route(req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (req.method(), segments.as_slice()) {
        (Method::Options, _) => http::preflight(),
        (Method::Get | Method::Head, ["api", "recipes"]) => recipes::search(&req, env).await,
        (_, ["api", "recipes"]) => Err(ApiError::MethodNotAllowed("GET")),
        (Method::Get | Method::Head, ["api", ..]) => Err(ApiError::NotFound(format!("no API route {path}"))),
        (Method::Get | Method::Head, _) => assets::serve(req, env).await,
        _ => Err(ApiError::MethodNotAllowed("GET, HEAD")),
    }
}
