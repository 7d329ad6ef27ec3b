//! The site's AI provider: one interface ([`Provider::complete`]) with two implementations — the
//! Workers AI binding and any OpenAI-compatible chat endpoint — chosen by configuration; [`generate`],
//! which asks until an answer passes `domain::recipes::ai`'s checks; and what an AI request costs its account
//! ([`charge`], given back when it made nothing: [`charged`]). The AI routes on top of it are
//! `routes/ai.rs` and `routes/diet.rs`.
//!
//! Configuration: `AI_PROVIDER` = `openai` | `workers-ai` picks one; unset, `AI_BASE_URL` (with
//! `AI_MODEL` and the secret `AI_API_KEY`) means the OpenAI-compatible endpoint, and outside
//! `ENVIRONMENT=dev` the `AI` binding with `WORKERS_AI_MODEL` is the default. Neither → 503.
//! `AI_TIMEOUT_MS` (default 30 000) bounds each upstream call; `AI_PER_HOUR` (default 20) the quota,
//! which counts per account (`domain::site::limits::AI`).

use std::time::Duration;

use domain::recipes::ai::{self, Expect, MAX_ATTEMPTS, Message};
use domain::recipes::recipe::Recipe;
use domain::site::limits::{self, Subject};
use futures::future::{Either, select};
use serde_json::{Value, json};
use worker::{AbortController, Delay, Env, Fetch, Headers, Method, Request, RequestInit};

use crate::auth;
use crate::error::ApiError;
use crate::store::KeyOwner;

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
enum Completion {
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

/// How long one upstream call may take (`AI_TIMEOUT_MS`).
pub fn timeout(env: &Env) -> Duration {
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
    async fn complete(&self, env: &Env, messages: &[Message]) -> Result<Completion, ApiError> {
        let schema = json!({"name": "recipe", "schema": ai::recipe_schema(), "strict": false});
        self.chat(env, messages, schema, 0.4).await
    }

    /// Source 2's question about an episode's voices (`domain::quotes::transcript::llm`): the model's
    /// answer, a JSON object of one `{name, evidence}` per label, as text.
    pub async fn name_voices(&self, env: &Env, messages: &[(String, String)]) -> Result<String, ApiError> {
        let messages: Vec<Message> = messages
            .iter()
            .map(|(role, content)| Message { role: role.clone(), content: content.clone() })
            .collect();
        let vote = json!({"type": "object", "properties": {"name": {"type": "string"},
                          "evidence": {"type": "string"}}, "required": ["name", "evidence"]});
        let schema = json!({"name": "speakers", "strict": false,
                            "schema": {"type": "object", "additionalProperties": vote}});
        match self.chat(env, &messages, schema, 0.0).await? {
            Completion::Content(content) => Ok(content),
            Completion::Refusal(why) => Err(ApiError::AiRefused(why)),
        }
    }

    /// One chat completion whose answer follows `schema` (a `json_schema` response format).
    async fn chat(
        &self,
        env: &Env,
        messages: &[Message],
        schema: Value,
        temperature: f64,
    ) -> Result<Completion, ApiError> {
        let limit = timeout(env);
        match self {
            Provider::OpenAi { base_url, model, api_key } => {
                let body = json!({
                    "model": model,
                    "messages": messages,
                    "response_format": {"type": "json_schema", "json_schema": schema},
                    "temperature": temperature,
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
                openai_completion(&text)
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
                    Value::String(text) => Ok(Completion::Content(text.clone())),
                    Value::Object(_) => Ok(Completion::Content(output["response"].to_string())),
                    _ => Err(ApiError::Upstream("Workers AI answered without a `response`".into())),
                }
            }
        }
    }
}

/// The content (or refusal) of an OpenAI chat-completions answer.
fn openai_completion(text: &str) -> Result<Completion, ApiError> {
    let answer: Value = serde_json::from_str(text)
        .map_err(|err| ApiError::Upstream(format!("the AI service's answer is not JSON: {err}")))?;
    let choice = &answer["choices"][0];
    let message = &choice["message"];
    if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.trim().is_empty()) {
        return Ok(Completion::Refusal(refusal.to_string()));
    }
    if choice["finish_reason"] == "content_filter" {
        return Ok(Completion::Refusal("the AI service's content filter stopped the answer".into()));
    }
    match message["content"].as_str() {
        Some(content) => Ok(Completion::Content(content.to_string())),
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
            Completion::Refusal(why) => return Err(ApiError::AiRefused(why)),
            Completion::Content(content) => content,
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
