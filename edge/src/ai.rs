//! The site's AI: one provider interface ([`Provider::complete`]) with two implementations — the
//! Workers AI binding and any OpenAI-compatible chat endpoint — chosen by configuration, and the two
//! recipe operations on top: [`ai_write`] (`POST /api/ai/write`) and [`ai_change`]
//! (`POST /api/r/{slug}/ai`). Diet versions are in `variants.rs`.
//!
//! The operations are plain functions of `(env, caller, request)` so the HTTP routes here and the MCP
//! tools call the same code. The model's answer is data: `domain::ai::check_answer` validates it like
//! a request body, and slug, owner, licence and the recipe written are decided here, never by it.
//!
//! Configuration: `AI_PROVIDER` = `openai` | `workers-ai` picks one; unset, `AI_BASE_URL` (with
//! `AI_MODEL` and the secret `AI_API_KEY`) means the OpenAI-compatible endpoint, and outside
//! `ENVIRONMENT=dev` the `AI` binding with `WORKERS_AI_MODEL` is the default. Neither → 503.
//! `AI_TIMEOUT_MS` (default 30 000) bounds each upstream call; `AI_PER_HOUR` (default 20) the quota,
//! which counts per account (`domain::limits::AI`).

use std::time::Duration;

use domain::ai::{self, AiRequest, Expect, MAX_ATTEMPTS, Message};
use domain::limits::{self, RateDecision, Subject};
use domain::recipe::{GeneratedBy, Published, Recipe};
use domain::write::{self, ChangeKind, etag};
use futures::future::{Either, select};
use serde_json::{Value, json};
use worker::{AbortController, Delay, Env, Fetch, Headers, Method, Request, RequestInit, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::overlay::{self, Origin};
use crate::store::{self, KeyOwner, Update};
use crate::{http, idempotency, writes};

const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Where completions come from.
#[derive(Debug, Clone)]
pub enum Provider {
    /// `POST {base_url}/chat/completions` with `Authorization: Bearer {api_key}`.
    OpenAi { base_url: String, model: String, api_key: Option<String> },
    /// The `AI` binding (Workers AI).
    WorkersAi { model: String },
}

/// What one completion gave.
#[derive(Debug)]
enum Reply {
    Content(String),
    /// The model declined, in its own words.
    Refusal(String),
}

fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string()).filter(|v| !v.trim().is_empty())
}

fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|v| v.to_string()).filter(|v| !v.trim().is_empty()).or_else(|| var(env, name))
}

/// The configured provider, or 503 naming what to set.
pub fn provider(env: &Env) -> Result<Provider, ApiError> {
    let openai = || {
        var(env, "AI_BASE_URL").map(|base_url| Provider::OpenAi {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: var(env, "AI_MODEL").unwrap_or_else(|| "gpt-4o-mini".into()),
            api_key: secret(env, "AI_API_KEY"),
        })
    };
    let workers_ai = || {
        env.ai("AI").ok().map(|_| Provider::WorkersAi {
            model: var(env, "WORKERS_AI_MODEL")
                .unwrap_or_else(|| "@cf/meta/llama-3.3-70b-instruct-fp8-fast".into()),
        })
    };
    let chosen = match var(env, "AI_PROVIDER").as_deref() {
        Some("openai") => openai(),
        Some("workers-ai") => workers_ai(),
        _ => openai().or_else(|| {
            // The binding reaches Cloudflare's network, which a local run cannot.
            if var(env, "ENVIRONMENT").as_deref() == Some("dev") { None } else { workers_ai() }
        }),
    };
    chosen.ok_or_else(|| {
        ApiError::AiUnavailable(
            "this site has no AI provider: set AI_BASE_URL (and AI_MODEL, secret AI_API_KEY) for an \
             OpenAI-compatible endpoint, or AI_PROVIDER=workers-ai with the AI binding"
                .into(),
        )
    })
}

fn timeout(env: &Env) -> Duration {
    Duration::from_millis(
        var(env, "AI_TIMEOUT_MS").and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_TIMEOUT_MS),
    )
}

/// Runs `call`, or gives up after `limit` and aborts it.
async fn with_timeout<T>(
    limit: Duration,
    call: impl std::future::Future<Output = Result<T, ApiError>>,
    abort: Option<AbortController>,
) -> Result<T, ApiError> {
    let call = std::pin::pin!(call);
    let timer = Delay::from(limit);
    match select(call, timer).await {
        Either::Left((result, _)) => result,
        Either::Right(((), _call)) => {
            if let Some(controller) = abort {
                controller.abort();
            }
            Err(ApiError::Upstream(format!("the AI service did not answer within {} s", limit.as_secs_f64())))
        }
    }
}

impl Provider {
    pub fn model(&self) -> &str {
        match self {
            Provider::OpenAi { model, .. } | Provider::WorkersAi { model } => model,
        }
    }

    /// One chat completion with the recipe schema as structured output.
    async fn complete(&self, env: &Env, messages: &[Message]) -> Result<Reply, ApiError> {
        let schema = json!({"name": "recipe", "schema": ai::recipe_schema(), "strict": false});
        let limit = timeout(env);
        match self {
            Provider::OpenAi { base_url, model, api_key } => {
                let body = json!({
                    "model": model,
                    "messages": messages,
                    "response_format": {"type": "json_schema", "json_schema": schema},
                    "temperature": 0.4,
                });
                let headers = Headers::new();
                headers.set("Content-Type", "application/json")?;
                headers.set("User-Agent", "commonplace")?;
                if let Some(key) = api_key {
                    headers.set("Authorization", &format!("Bearer {key}"))?;
                }
                let controller = AbortController::default();
                let signal = controller.signal();
                let mut init = RequestInit::new();
                init.with_method(Method::Post).with_headers(headers).with_body(Some(body.to_string().into()));
                let request = Request::new_with_init(&format!("{base_url}/chat/completions"), &init)?;
                let call = async {
                    let mut answer =
                        Fetch::Request(request).send_with_signal(&signal).await.map_err(|err| {
                            ApiError::Upstream(format!("the AI service could not be reached: {err}"))
                        })?;
                    let status = answer.status_code();
                    let text = answer.text().await.map_err(|err| {
                        ApiError::Upstream(format!("the AI service's answer broke off: {err}"))
                    })?;
                    Ok((status, text))
                };
                let (status, text) = with_timeout(limit, call, Some(controller)).await?;
                if !(200..300).contains(&status) {
                    let excerpt: String = text.chars().take(200).collect();
                    return Err(ApiError::Upstream(format!("the AI service answered {status}: {excerpt}")));
                }
                openai_reply(&text)
            }
            Provider::WorkersAi { model } => {
                let binding = env.ai("AI")?;
                let input = json!({
                    "messages": messages,
                    "response_format": {"type": "json_schema", "json_schema": schema["schema"]},
                });
                let call = async {
                    binding
                        .run::<Value, Value>(model, input)
                        .await
                        .map_err(|err| ApiError::Upstream(format!("Workers AI failed: {err}")))
                };
                let output = with_timeout(limit, call, None).await?;
                match &output["response"] {
                    Value::String(text) => Ok(Reply::Content(text.clone())),
                    Value::Object(_) => Ok(Reply::Content(output["response"].to_string())),
                    _ => Err(ApiError::Upstream("Workers AI answered without a `response`".into())),
                }
            }
        }
    }
}

/// The content (or refusal) of an OpenAI chat-completions answer.
fn openai_reply(text: &str) -> Result<Reply, ApiError> {
    let answer: Value = serde_json::from_str(text)
        .map_err(|err| ApiError::Upstream(format!("the AI service's answer is not JSON: {err}")))?;
    let choice = &answer["choices"][0];
    let message = &choice["message"];
    if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.trim().is_empty()) {
        return Ok(Reply::Refusal(refusal.to_string()));
    }
    if choice["finish_reason"] == "content_filter" {
        return Ok(Reply::Refusal("the AI service's content filter stopped the answer".into()));
    }
    match message["content"].as_str() {
        Some(content) => Ok(Reply::Content(content.to_string())),
        None => Err(ApiError::Upstream("the AI service's answer has no message content".into())),
    }
}

/// Asks until an answer passes `expect`: the first answer, and once more with its problems listed.
/// Returns the checked recipe and the digest of the request that made it.
pub async fn generate(
    env: &Env,
    provider: &Provider,
    mut messages: Vec<Message>,
    expect: Expect,
    source: Option<&Recipe>,
) -> Result<Recipe, ApiError> {
    let mut problems = Vec::new();
    for _ in 0..MAX_ATTEMPTS {
        let content = match provider.complete(env, &messages).await? {
            Reply::Refusal(why) => return Err(ApiError::AiRefused(why)),
            Reply::Content(content) => content,
        };
        match ai::parse_answer(&content).and_then(|value| ai::check_answer(&value, expect, source)) {
            Ok(recipe) => return Ok(recipe),
            Err(found) => {
                messages = ai::repair_messages(messages, &content, &found);
                problems = found;
            }
        }
    }
    Err(ApiError::UpstreamInvalid(problems))
}

/// One AI request counted against the account's hourly quota.
pub type Charge = auth::Counted;

/// Counts one AI request against the caller's account, whichever key sent it; 429 once the hour's
/// quota is spent (the refused request is given back).
pub async fn charge(env: &Env, caller: &KeyOwner) -> Result<Charge, ApiError> {
    let charge = auth::count(env, &limits::AI, &Subject::Account(caller.account_id)).await?;
    if charge.decision.allowed {
        Ok(charge)
    } else {
        refund(env, &charge).await;
        Err(ApiError::RateLimited(charge.decision))
    }
}

/// Gives a charge back: the request failed on our side or upstream, or made no upstream call.
pub async fn refund(env: &Env, charge: &Charge) {
    auth::uncount(env, charge).await;
}

/// Whether a failed AI request is given back: it made nothing the caller can use. That is every
/// failure after the charge — the model's refusal, an answer our checks refused, the upstream's
/// failure, ours — except a lost race of an AI change, whose answer was made and checked.
pub fn costs_nothing(err: &ApiError) -> bool {
    matches!(
        err.cause(),
        ApiError::AiRefused(_)
            | ApiError::Upstream(_)
            | ApiError::UpstreamInvalid(_)
            | ApiError::Internal(_)
            | ApiError::Unavailable(_)
            | ApiError::AiUnavailable(_)
    )
}

/// Runs `work` under a charge: given back when it made nothing ([`costs_nothing`]). Its error
/// carries the quota as it stands then, so every answer after the count has the `RateLimit` headers.
pub async fn charged<T>(
    env: &Env,
    charge: &Charge,
    work: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let err = match work.await {
        Ok(done) => return Ok(done),
        Err(err) => err,
    };
    let rate = if costs_nothing(&err) {
        refund(env, charge).await;
        charge.decision.given_back()
    } else {
        charge.decision.clone()
    };
    Err(ApiError::Rated(Box::new(err), rate))
}

/// What an AI operation made: the status DESIGN.md §2 gives it, the stored document and the quota.
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
        let base = domain::slug::from_recipe(&recipe);
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
    let (current, origin) = overlay::current(env, &db, slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no recipe `{slug}`")))?;
    let mine = match origin {
        Origin::Overlay { account_id } => account_id == caller.account_id,
        Origin::Built => current.server.owner == caller.handle,
    };
    let provider = provider(env)?;
    let charge = charge(env, caller).await?;
    let work = async {
        // The model is asked before anything is written, so a failure leaves neither fork nor change.
        let messages = ai::change_messages(&current.recipe, &request.prompt, request.lang);
        let recipe = generate(env, &provider, messages, Expect::Change(request.lang), None).await?;
        let now = now_iso();
        let base = if mine {
            if matches!(origin, Origin::Built) {
                store::adopt_built(&db, &current, caller.account_id, &writes::to_json(&current)?, &now)
                    .await?;
            }
            current.clone()
        } else {
            let fork_base = domain::slug::from_recipe(&current.recipe);
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
async fn ai_body(req: &mut Request) -> Result<(AiRequest, Option<idempotency::Keyed>), ApiError> {
    let value = writes::json_body(req).await?;
    let request = domain::api::from_json::<domain::api::AiWrite>(&value).map_err(ApiError::Invalid)?;
    Ok((request, idempotency::keyed(req, Some(&value))?))
}

/// `POST /api/ai/write`.
pub async fn write_route(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let (request, keyed) = ai_body(&mut req).await?;
    idempotency::once(env, &caller, keyed, async { respond(&ai_write(env, &caller, &request).await?) }).await
}

/// `POST /api/r/{slug}/ai`.
pub async fn change_route(mut req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let (request, keyed) = ai_body(&mut req).await?;
    idempotency::once(env, &caller, keyed, async { respond(&ai_change(env, &caller, slug, &request).await?) })
        .await
}
