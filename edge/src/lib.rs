//! The Commonplace Worker: every route in one table ([`route`]); handlers parse, call `domain`, render.
//!
//! Static files (recipe JSON, pages, search index, dumps) are Workers static assets built by `builder`;
//! the Worker runs first for every request so that headers, errors and (later) the D1 overlay are
//! decided in one place. A request for a host that is neither the site's nor loopback is refused
//! before any route runs ([`http::check_host`]). Central types: [`error::ApiError`], the one error
//! type, mapped to RFC 9457 in [`error::ApiError::into_response`].

mod ai;
mod assets;
mod auth;
mod error;
mod feed;
mod http;
mod kitchen;
mod mcp;
mod overlay;
mod packs;
mod quotes;
mod recipes;
mod speakers;
mod store;
mod variants;
mod writes;

use worker::{Context, Env, Method, Request, Response, event};

use crate::error::ApiError;

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let instance = req.path();
    let method = http::routed_method(&req);
    let if_none_match = req.headers().get("If-None-Match").ok().flatten();
    let answer = match http::check_host(&req, &env) {
        Ok(()) => route(req, &env).await,
        Err(refused) => Err(refused),
    };
    let response = match answer {
        Ok(response) => response,
        Err(err) => err.into_response(&instance),
    };
    Ok(http::not_modified_if_matched(&method, if_none_match.as_deref(), response))
}

/// Every route of the service.
async fn route(req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (http::routed_method(&req), segments.as_slice()) {
        (Method::Options, _) => http::preflight(),
        (Method::Get | Method::Head, ["api", "recipes"]) => recipes::search(&req, env).await,
        // Accounts and recipe writes (issue 3).
        (Method::Post, ["api", "recipes"]) => writes::create(req, env).await,
        (_, ["api", "recipes"]) => Err(ApiError::MethodNotAllowed("GET, POST")),
        (Method::Get | Method::Head, ["api", "me"]) => writes::me(&req, env).await,
        (Method::Put, ["api", "r", slug]) => writes::change(req, env, slug).await,
        (_, ["api", "r", _]) => Err(ApiError::MethodNotAllowed("PUT")),
        // The site's AI (issue 4).
        (Method::Post, ["api", "ai", "write"]) => ai::write_route(req, env).await,
        (Method::Post, ["api", "r", slug, "ai"]) => ai::change_route(req, env, slug).await,
        (Method::Post, ["api", "r", slug, "variant", kind]) => variants::route(req, env, slug, kind).await,
        (Method::Post, ["api", "r", slug, "fork"]) => writes::fork(req, env, slug).await,
        (Method::Get | Method::Head, ["api", "r", slug, "history"]) => feed::history(&req, env, slug).await,
        (Method::Get | Method::Head, ["api", "changes"]) => feed::changes(&req, env).await,
        (Method::Get | Method::Head, ["kitchen"]) => kitchen::show(req, env).await,
        (Method::Get, ["kitchen", "login", "github"]) => kitchen::github_login(req, env).await,
        (Method::Get, ["kitchen", "callback", "github"]) => kitchen::github_callback(req, env).await,
        (Method::Post, ["kitchen", "login", "dev"]) => kitchen::dev_login(req, env).await,
        (Method::Post, ["kitchen", "logout"]) => kitchen::logout(req, env).await,
        (Method::Post, ["kitchen", "keys"]) => kitchen::new_key(req, env).await,
        (Method::Post, ["kitchen", "keys", id, "revoke"]) => kitchen::revoke_key(req, env, id).await,
        (Method::Get | Method::Head, ["r", file]) if file.ends_with(".json") => {
            let slug = file.trim_end_matches(".json").to_string();
            overlay::recipe_json(req, env, &slug).await
        }
        (Method::Get | Method::Head, ["r", file]) if file.ends_with(".svg") => {
            let file = file.to_string();
            overlay::card_svg(req, env, &file).await
        }
        (Method::Get | Method::Head, ["r", slug]) if !slug.contains('.') => {
            let slug = slug.to_string();
            overlay::recipe_page(req, env, &slug).await
        }
        // Quote attribution (issue 5).
        (Method::Get | Method::Head, ["api", "attribute"]) => quotes::attribute(&req, env).await,
        (Method::Get | Method::Head, ["api", "shows"]) => quotes::shows(env).await,
        (Method::Get | Method::Head, ["api", "episodes"]) => quotes::episodes(&req, env).await,
        // Speaker names set by editors (issue 7); `changes` is not an episode id, so it goes first.
        (Method::Get | Method::Head, ["api", "episodes", "changes"]) => speakers::changes(&req, env).await,
        (Method::Put, ["api", "episodes", id, "speakers", label]) => {
            speakers::decide(req, env, id, label).await
        }
        (_, ["api", "episodes", _, "speakers", _]) => Err(ApiError::MethodNotAllowed("PUT")),
        (Method::Get | Method::Head, ["api", "episodes", id]) => quotes::episode(env, id).await,
        (Method::Get | Method::Head, ["api", "episodes", id, "transcript"]) => {
            quotes::transcript(&req, env, id).await
        }
        (Method::Get | Method::Head, ["api", "episodes", id, "speakers"]) => {
            quotes::speakers(&req, env, id).await
        }
        (Method::Get | Method::Head, ["api", "search"]) => quotes::search(&req, env).await,
        // Agents (issue 6): one JSON-RPC message per POST; no SSE stream to GET.
        (Method::Post, ["mcp"]) => mcp::post(req, env).await,
        (_, ["mcp"]) => Err(ApiError::MethodNotAllowed("POST")),
        (Method::Get | Method::Head, ["api", ..]) => Err(ApiError::NotFound(format!("no API route {path}"))),
        (Method::Get | Method::Head, _) => assets::serve(req, env).await,
        _ => Err(ApiError::MethodNotAllowed("GET, HEAD")),
    }
}
