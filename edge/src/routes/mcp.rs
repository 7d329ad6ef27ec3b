//! `POST /mcp`: the MCP server for agents, over streamable HTTP without sessions. Each POST carries one
//! JSON-RPC message and gets one JSON answer (no SSE: no tool streams progress).
//!
//! `domain::mcp` does the framing (versions, errors, envelopes) and types each tool's arguments; this
//! module checks `Origin`, runs a tool by calling the same function its HTTP route calls, and turns an
//! [`ApiError`] into a tool error that tells the agent what to do next. Keys are checked per tool, only
//! for tools that write, so listing tools and reading never need one.

use domain::api::{AiChangeAsked, DietAsked, RecipeAsked};
use domain::mcp::{self, Headers, Step, ToolInput, ToolOutcome};
use domain::recipes::write::MAX_BODY_BYTES;
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::routes::{ai, cooking, diet, intake, quotes, recipes, writes};
use crate::store::KeyOwner;
use crate::{auth, http};

const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");
const INSTANCE: &str = "/mcp";

/// `POST /mcp`.
pub async fn post(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    if let Some(origin) = req.headers().get("Origin")?
        && !origin_allowed(&origin, &req, env)?
    {
        // DNS rebinding defence (MCP transport spec): a browser page of another site may not drive tools.
        let body = mcp::error(
            Value::Null,
            mcp::FORBIDDEN_ORIGIN,
            format!("Origin `{origin}` may not use this MCP server"),
            None,
        );
        return reply(403, Some(&body));
    }
    // One JSON-RPC message in UTF-8 JSON (the transport spec's POST body), as the API's bodies are.
    let content_type = req.headers().get("Content-Type")?.unwrap_or_default();
    if !domain::api::body::is_json_media_type(&content_type) {
        let message = format!(
            "Invalid request: send the message as Content-Type: application/json (UTF-8), not `{content_type}`"
        );
        return reply(415, Some(&mcp::error(Value::Null, mcp::INVALID_REQUEST, message, None)));
    }
    let bytes = match crate::http::body_within(&mut req, MAX_BODY_BYTES).await {
        Err(ApiError::TooLarge(_)) => {
            let message = format!("Invalid request: messages may be at most {MAX_BODY_BYTES} bytes");
            return reply(413, Some(&mcp::error(Value::Null, mcp::INVALID_REQUEST, message, None)));
        }
        bytes => bytes?,
    };
    let headers = Headers {
        protocol_version: req.headers().get("MCP-Protocol-Version")?,
        method: req.headers().get("Mcp-Method")?,
    };
    let raw_id = mcp::raw_id(&bytes);
    let reply = |status, body: Option<&Value>| reply_with_id(status, body, raw_id.as_deref());
    match mcp::handle(&bytes, &headers, SERVER_VERSION) {
        Step::Reply { status, body } => reply(status, Some(&body)),
        Step::Accepted => reply(202, None),
        Step::Call(call) => {
            let outcome = match &call.input {
                Ok(input) => match run(&req, env, input).await {
                    Ok(value) => ToolOutcome::Done(value),
                    Err(err) => refused(call.tool, slug_of(input), &err),
                },
                Err(problems) => refused(call.tool, None, &ApiError::BadParameters(problems.clone())),
            };
            match mcp::tool_reply(&call, outcome, SERVER_VERSION) {
                Step::Reply { status, body } => reply(status, Some(&body)),
                _ => Err(ApiError::Internal("a tool reply is always a reply".into())),
            }
        }
    }
}

/// Same-origin requests, and origins listed in `MCP_ALLOWED_ORIGINS` (comma-separated). Clients that
/// are not browsers send no `Origin` and are not checked here.
fn origin_allowed(origin: &str, req: &Request, env: &Env) -> Result<bool, ApiError> {
    let own = req.url()?.origin().ascii_serialization();
    if origin == own {
        return Ok(true);
    }
    let listed = env.var("MCP_ALLOWED_ORIGINS").map(|var| var.to_string()).unwrap_or_default();
    Ok(listed.split(',').map(str::trim).any(|allowed| !allowed.is_empty() && allowed == origin))
}

fn reply(status: u16, body: Option<&Value>) -> Result<Response, ApiError> {
    reply_with_id(status, body, None)
}

/// A JSON-RPC answer whose `id` is written as the message sent it (`domain::mcp::render`).
fn reply_with_id(status: u16, body: Option<&Value>, raw_id: Option<&str>) -> Result<Response, ApiError> {
    let mut response = match body {
        Some(body) => Response::from_bytes(mcp::render(body, raw_id).into_bytes())?,
        None => Response::empty()?,
    }
    .with_status(status);
    let headers = response.headers_mut();
    if body.is_some() {
        headers.set("Content-Type", "application/json")?;
    }
    headers.set("Cache-Control", "no-store")?;
    http::cors(headers);
    Ok(response)
}

/// A refused call as the agent reads it: the typed refusal words the next step, and the problem the
/// HTTP route would have answered goes along.
fn refused(tool: &mcp::ToolSpec, slug: Option<&str>, err: &ApiError) -> ToolOutcome {
    mcp::failure(tool, slug, &err.refusal(), &err.detail(), err.problem(INSTANCE))
}

/// The recipe a tool call is about, for the next-step message of a refusal.
fn slug_of(input: &ToolInput) -> Option<&str> {
    match input {
        ToolInput::RecipeJson(RecipeAsked { slug, .. }) | ToolInput::ForkRecipe(slug) => Some(slug),
        ToolInput::ChangeRecipe(update) => Some(&update.slug),
        ToolInput::AiChange(AiChangeAsked { slug, .. }) | ToolInput::DietVersion(DietAsked { slug, .. }) => {
            Some(slug)
        }
        _ => None,
    }
}

fn structured(value: impl serde::Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|err| ApiError::Internal(format!("serialising: {err}")))
}

/// The key's owner with this write counted, as the HTTP write routes do it.
async fn writer(req: &Request, env: &Env) -> Result<KeyOwner, ApiError> {
    let caller = auth::caller(req, env).await?;
    auth::count_write(env, &caller).await?;
    Ok(caller)
}

/// Runs one tool: each arm is the function its HTTP route calls, with the input its route reads.
async fn run(req: &Request, env: &Env, input: &ToolInput) -> Result<Value, ApiError> {
    let live = crate::live::Live::of(req, env).await?;
    match input {
        ToolInput::SearchRecipes(query) => structured(recipes::search_page(env, query, &live).await?),
        ToolInput::RecipeJson(RecipeAsked { slug, request }) => {
            structured(cooking::adjusted(req, env, slug, *request).await?)
        }
        ToolInput::CreateRecipe(recipe) => {
            let caller = writer(req, env).await?;
            structured(writes::create_recipe(env, &caller, recipe.clone()).await?)
        }
        ToolInput::ForkRecipe(slug) => {
            let caller = writer(req, env).await?;
            structured(writes::fork_recipe(env, &caller, slug).await?)
        }
        ToolInput::ChangeRecipe(update) => {
            let caller = writer(req, env).await?;
            let if_match = update.version.map(domain::recipes::write::IfMatch::version);
            let body = update.body.clone();
            structured(writes::change_recipe(env, &caller, &update.slug, body, if_match.as_ref()).await?)
        }
        ToolInput::AiWrite(request) => {
            let caller = auth::caller(req, env).await?;
            structured(ai::ai_write(env, &caller, request).await?.published)
        }
        ToolInput::AiChange(AiChangeAsked { slug, request }) => {
            let caller = auth::caller(req, env).await?;
            structured(ai::ai_change(env, &caller, slug, request).await?.published)
        }
        ToolInput::DietVersion(DietAsked { slug, kind }) => {
            let caller = auth::caller(req, env).await?;
            structured(diet::diet_version(env, &caller, slug, kind.code()).await?.published)
        }
        ToolInput::Attribute(input) => structured(quotes::attribution(env, input, &live).await?),
        ToolInput::PhraseSearch(query) => structured(quotes::phrase_search(env, query, &live).await?),
        ToolInput::Transcript(input) => structured(quotes::transcript_view(env, input, &live).await?),
        ToolInput::Speakers(input) => structured(quotes::speakers_view(env, input, &live).await?),
        ToolInput::Episodes(input) => structured(quotes::episode_page(env, input.clone()).await?),
        ToolInput::RequestEpisode(address) => {
            let caller = writer(req, env).await?;
            structured(intake::request_episode(env, &caller, address).await?)
        }
    }
}
