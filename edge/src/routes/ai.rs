//! The site's AI routes: [`ai_write`] (`POST /api/ai/write`) and [`ai_change`]
//! (`POST /api/r/{slug}/ai`), on top of `crate::provider`. Diet versions are in `diet.rs`.
//!
//! The operations are plain functions of `(env, caller, request)` so the HTTP routes here and the MCP
//! tools call the same code. The model's answer is data: `domain::recipes::ai::check_answer` validates it like
//! a request body, and slug, owner, licence and the recipe written are decided here, never by it.

use domain::recipes::ai::{self, AiRequest, Expect};
use domain::recipes::recipe::{GeneratedBy, Published};
use domain::recipes::write::{self, ChangeKind, etag};
use domain::site::limits::RateDecision;
use worker::{Env, Request, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::overlay::{self, Provenance};
use crate::provider::{Provider, charge, charged, generate, provider};
use crate::routes::writes;
use crate::store::{self, KeyOwner, Update};
use crate::{http, idempotency};

/// What an AI operation made: the status the API contract gives it, the stored document and the quota.
#[derive(Debug)]
pub struct AiOutcome {
    /// 201 made, 200 changed in place or already there.
    pub status: u16,
    pub published: Published,
    pub rate: Option<RateDecision>,
}

fn generated_by(provider: &Provider, prompt: &str) -> GeneratedBy {
    GeneratedBy { model: provider.model().to_string(), prompt_sha256: ai::prompt_sha256(prompt) }
}

/// `POST /api/ai/write` as a function: a new recipe of the caller's, CC0, with `generated_by`.
pub async fn ai_write(env: &Env, caller: &KeyOwner, request: &AiRequest) -> Result<AiOutcome, ApiError> {
    let provider = provider(env)?;
    let charge = charge(env, caller).await?;
    let work = async {
        let messages = ai::write_messages(&request.prompt, request.lang);
        let recipe = generate(env, &provider, messages, Expect::Write(request.lang), None).await?;
        let base = domain::recipes::slug::from_recipe(&recipe);
        let now = now_iso();
        let by = generated_by(&provider, &request.prompt);
        let note = ai::note(&request.prompt);
        let make = |slug: &str| {
            let mut published = write::created(slug, recipe.clone(), &caller.handle, &now);
            published.server.generated_by = Some(by.clone());
            published
        };
        writes::insert_new(env, caller, ChangeKind::Create, Some(note), make, &base).await
    };
    let published = charged(env, &charge, work).await?;
    Ok(AiOutcome { status: 201, published, rate: Some(charge.decision) })
}

/// `POST /api/r/{slug}/ai` as a function: the caller's own recipe changed in place (200), or anyone
/// else's forked to the caller and the fork changed (201). The original is never written.
pub async fn ai_change(
    env: &Env,
    caller: &KeyOwner,
    slug: &str,
    request: &AiRequest,
) -> Result<AiOutcome, ApiError> {
    let db = store::db(env)?;
    let (current, provenance) = overlay::current(env, &db, slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no recipe `{slug}`")))?;
    let mine = match provenance {
        Provenance::Overlay { account_id } => account_id == caller.account_id,
        Provenance::Built => current.server.owner == caller.handle,
    };
    let provider = provider(env)?;
    let charge = charge(env, caller).await?;
    let work = async {
        // The model is asked before anything is written, so a failure leaves neither fork nor change.
        let messages = ai::change_messages(&current.recipe, &request.prompt, request.lang);
        let recipe = generate(env, &provider, messages, Expect::Change(request.lang), None).await?;
        let now = now_iso();
        let base = if mine {
            if matches!(provenance, Provenance::Built) {
                store::adopt_built(&db, &current, caller.account_id, &writes::to_json(&current)?, &now)
                    .await?;
            }
            current.clone()
        } else {
            let fork_base = domain::recipes::slug::from_recipe(&current.recipe);
            let make = |new_slug: &str| write::forked(&current, new_slug, &caller.handle, &now);
            writes::insert_new(env, caller, ChangeKind::Fork, None, make, &fork_base).await?
        };
        let mut next = write::changed(&base, recipe, &now);
        next.server.generated_by = Some(generated_by(&provider, &request.prompt));
        let doc = writes::to_json(&next)?;
        let note = ai::note(&request.prompt);
        let search = overlay::search_entry(&next);
        let update = Update {
            slug: &base.slug,
            account_id: caller.account_id,
            owner: &caller.handle,
            expected: base.server.version,
            doc: &doc,
            note: &note,
            now: &now,
            search,
        };
        if !store::update_recipe(&db, update).await? {
            return Err(ApiError::Conflict(format!(
                "`{}` changed while the AI was writing; read it and ask again",
                base.slug
            )));
        }
        Ok(next)
    };
    let published = charged(env, &charge, work).await?;
    Ok(AiOutcome { status: if mine { 200 } else { 201 }, published, rate: Some(charge.decision) })
}

/// The answer of an AI route: the stored document, never cached, with `Location` for a new recipe and
/// the AI quota's state.
pub fn respond(outcome: &AiOutcome) -> Result<Response, ApiError> {
    let doc = writes::to_json(&outcome.published)?;
    let mut response = Response::from_bytes(doc.into_bytes())?.with_status(outcome.status);
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    headers.set("ETag", &etag(outcome.published.server.version))?;
    if outcome.status == 201 {
        headers.set("Location", &format!("/r/{}.json", outcome.published.slug))?;
    }
    if let Some(rate) = &outcome.rate {
        crate::headers::rate_limit(headers, rate);
    }
    http::cors(headers);
    Ok(response)
}

/// The `{prompt, lang}` body of an AI route, or 415 / 413 / 400 / 422, with the request's
/// `Idempotency-Key`.
async fn ai_body(req: &mut Request) -> Result<(AiRequest, Option<idempotency::IdempotencyKey>), ApiError> {
    let value = http::json_body(req).await?;
    let request = domain::api::from_json::<domain::api::AiWrite>(&value).map_err(ApiError::Invalid)?;
    Ok((request, idempotency::key_of(req, Some(&value))?))
}

/// `POST /api/ai/write`.
pub async fn write_route(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let (request, idempotency_key) = ai_body(&mut req).await?;
    idempotency::once(env, &caller, idempotency_key, async {
        respond(&ai_write(env, &caller, &request).await?)
    })
    .await
}

/// `POST /api/r/{slug}/ai`.
pub async fn change_route(mut req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let (request, idempotency_key) = ai_body(&mut req).await?;
    idempotency::once(env, &caller, idempotency_key, async {
        respond(&ai_change(env, &caller, slug, &request).await?)
    })
    .await
}
