//! The edge's one error type and the one place it becomes an RFC 9457 problem response.

use domain::Diagnostic;
use domain::mcp::Refusal;
use domain::site::limits::{self, RateDecision};
use serde_json::json;
use worker::Response;

use crate::headers;

#[derive(Debug)]
pub enum ApiError {
    /// Query parameters that do not parse; each names its parameter.
    BadParameters(Vec<Diagnostic>),
    /// A request header that does not parse (`If-Match` that is not a list of entity tags); each
    /// problem names its header.
    BadHeader(Vec<Diagnostic>),
    NotFound(String),
    /// A request for a host this site does not answer for (neither in `SITE_HOSTS` nor loopback).
    Misdirected(String),
    /// The methods the path answers (`Allow`).
    MethodNotAllowed(String),
    /// A body that is not JSON at all.
    Malformed(String),
    /// No key, or one we do not know or that was revoked.
    Unauthorized(String),
    /// A key we know, asking for something that is not theirs.
    Forbidden(String),
    /// A write that lost a race with no precondition of the caller's, or a slug that could not be had.
    Conflict(String),
    /// An `Idempotency-Key` the account first sent with another request (method, path or body).
    KeyReused,
    /// An `Idempotency-Key` whose first request is still running.
    KeyInFlight,
    /// The request's `If-Match` names a version that is no longer current (RFC 9110 §13.1.1: 412).
    PreconditionFailed(String),
    TooLarge(usize),
    UnsupportedMediaType(String),
    /// A document with problems: every one of them, each naming its field.
    Invalid(Vec<Diagnostic>),
    RateLimited(RateDecision),
    /// An account that holds as many live keys as it may (`domain::site::limits::LIVE_KEYS_PER_ACCOUNT`)
    /// asked for another: how many it holds.
    TooManyKeys(u32),
    /// The AI declined the request (the model's refusal, in its words).
    AiRefused(String),
    /// The AI service timed out, failed, or answered with something we cannot use; nothing was stored.
    Upstream(String),
    /// The AI answered twice with a document that has problems: every problem of the last answer.
    UpstreamInvalid(Vec<Diagnostic>),
    /// No AI provider is configured.
    AiUnavailable(String),
    /// Something on our side: a missing or corrupt build artefact, a binding that failed. The text is
    /// for the log only: the answer names a reference to it and nothing else.
    Internal(String),
    /// The database stayed busy or out of reach through every retry (`store::retry`): 503 with
    /// `Retry-After`. Like [`ApiError::Internal`], its text goes to the log only.
    Unavailable(String),
    /// An error answered after a limit's count: the answer carries the limit's state as it stands
    /// (a request given back shows its quota again).
    Rated(Box<ApiError>, RateDecision),
}

/// Seconds a client waits before asking again after a 503 for a busy database.
const BUSY_RETRY_AFTER_S: u32 = 1;

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        let detail = err.to_string();
        if is_transient(&detail) { ApiError::Unavailable(detail) } else { ApiError::Internal(detail) }
    }
}

impl ApiError {
    fn parts(&self) -> (u16, &'static str, &'static str, String) {
        match self {
            ApiError::BadParameters(problems) => (
                400,
                "invalid-parameter",
                "A query parameter is not valid",
                problems.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("; "),
            ),
            ApiError::BadHeader(problems) => (
                400,
                "invalid-header",
                "A request header is not valid",
                problems.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("; "),
            ),
            ApiError::NotFound(detail) => (404, "not-found", "Not found", detail.clone()),
            // 421 (RFC 9110 §15.5.20), not 403: nothing about the caller is wrong, this server is just
            // not the one for that host, and the answer must not look like a permission to ask for.
            ApiError::Misdirected(host) => (
                421,
                "misdirected",
                "This site does not answer for that host",
                format!("`{host}` is not one of this site's hosts (SITE_HOSTS) nor loopback"),
            ),
            ApiError::MethodNotAllowed(allowed) => {
                (405, "method-not-allowed", "Method not allowed", format!("this path answers {allowed}"))
            }
            ApiError::Malformed(detail) => (400, "malformed", "The body is not valid JSON", detail.clone()),
            ApiError::Unauthorized(detail) => (401, "unauthorized", "An API key is needed", detail.clone()),
            ApiError::Forbidden(detail) => (403, "forbidden", "Not yours", detail.clone()),
            ApiError::Conflict(detail) => (409, "conflict", "Conflict", detail.clone()),
            // 422 and 409 as draft-ietf-httpapi-idempotency-key-header §2.7 has them.
            ApiError::KeyReused => (
                422,
                "idempotency-key-reused",
                "This Idempotency-Key was used for another request",
                "the key was first sent with another method, path or body; use a new key for a new request"
                    .into(),
            ),
            ApiError::KeyInFlight => (
                409,
                "idempotency-key-in-flight",
                "A request with this Idempotency-Key is still running",
                "ask again with the same key once it has finished to get its answer".into(),
            ),
            ApiError::PreconditionFailed(detail) => {
                (412, "precondition-failed", "The version you named is not current", detail.clone())
            }
            ApiError::TooLarge(max) => {
                (413, "too-large", "The body is too large", format!("bodies may be at most {max} bytes"))
            }
            ApiError::UnsupportedMediaType(got) => (
                415,
                "unsupported-media-type",
                "Send JSON",
                format!("the body must be application/json in UTF-8, not `{got}`"),
            ),
            ApiError::Invalid(problems) => (
                422,
                "invalid",
                "The document has problems",
                format!("{} problem(s); see `errors`", problems.len()),
            ),
            ApiError::RateLimited(decision) => {
                (429, "rate-limited", decision.policy.refusal, decision.detail())
            }
            // 409, not 429: waiting does not help, only revoking a key does (the state of the account
            // conflicts with the request, RFC 9110 §15.5.10).
            ApiError::TooManyKeys(live) => {
                (409, "too-many-keys", "Too many live keys", limits::key_cap_detail(*live))
            }
            ApiError::AiRefused(detail) => (422, "ai-refused", "The AI declined the request", detail.clone()),
            ApiError::Upstream(detail) => (502, "ai-upstream", "The AI service failed", detail.clone()),
            ApiError::UpstreamInvalid(problems) => (
                502,
                "ai-invalid-answer",
                "The checks refused the AI's answer",
                format!(
                    "the AI answered, but the checks refused its answer after one repair ({} problem(s), see \
                     `errors`); nothing was stored",
                    problems.len()
                ),
            ),
            ApiError::AiUnavailable(detail) => {
                (503, "ai-unavailable", "No AI provider is configured", detail.clone())
            }
            ApiError::Internal(_) => (
                500,
                "internal",
                "Internal error",
                "something failed on our side; the problem's `reference` names it in our log".into(),
            ),
            ApiError::Unavailable(_) => (
                503,
                "unavailable",
                "The service is busy",
                format!(
                    "the database is busy; nothing was stored, ask again in {BUSY_RETRY_AFTER_S} s (the \
                     problem's `reference` names it in our log)"
                ),
            ),
            ApiError::Rated(error, _) => error.parts(),
        }
    }

    /// The error itself, seen through the limit's state an answer carries.
    pub fn cause(&self) -> &ApiError {
        match self {
            ApiError::Rated(error, _) => error.cause(),
            other => other,
        }
    }

    /// What an error on our side says only to the log: its text, for [`ApiError::Internal`] and
    /// [`ApiError::Unavailable`].
    fn logged(&self) -> Option<&str> {
        match self.cause() {
            ApiError::Internal(detail) | ApiError::Unavailable(detail) => Some(detail),
            _ => None,
        }
    }

    /// The status, title and detail a person's browser is shown (`crate::routes::pages::problem`).
    pub fn in_words(&self) -> (u16, &'static str, String) {
        let (status, _, title, detail) = self.parts();
        let detail = match self.cause() {
            ApiError::BadParameters(problems)
            | ApiError::BadHeader(problems)
            | ApiError::Invalid(problems)
            | ApiError::UpstreamInvalid(problems) => {
                problems.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("; ")
            }
            _ => detail,
        };
        (status, title, detail)
    }

    /// The problem+json response for this error.
    pub fn into_response(self, instance: &str) -> Response {
        let (status, ..) = self.parts();
        let body = self.problem(instance);
        let mut response = Response::from_bytes(body.to_string().into_bytes())
            .expect("a byte body always builds")
            .with_status(status);
        self.finish(response.headers_mut());
        response
    }

    /// What the refusal means to an agent (`/mcp` words its next step from it).
    pub fn refusal(&self) -> Refusal {
        match self {
            ApiError::BadParameters(problems) | ApiError::BadHeader(problems) => {
                Refusal::BadArguments(problems.clone())
            }
            ApiError::Malformed(_) | ApiError::TooLarge(_) | ApiError::UnsupportedMediaType(_) => {
                Refusal::BadArguments(Vec::new())
            }
            ApiError::Invalid(problems) => Refusal::Invalid(problems.clone()),
            ApiError::AiRefused(_) => Refusal::Invalid(Vec::new()),
            ApiError::NotFound(_) => Refusal::NotFound,
            ApiError::Unauthorized(_) => Refusal::NoKey,
            ApiError::Forbidden(_) => Refusal::NotYours,
            // 412: the `version` sent is no longer current; 409: another writer won a race.
            ApiError::Conflict(_)
            | ApiError::PreconditionFailed(_)
            | ApiError::TooManyKeys(_)
            | ApiError::KeyInFlight => Refusal::Stale,
            ApiError::KeyReused => Refusal::BadArguments(Vec::new()),
            ApiError::RateLimited(_) => Refusal::RateLimited,
            ApiError::AiUnavailable(_) => Refusal::AiUnavailable,
            ApiError::Upstream(_) => Refusal::AiFailed,
            ApiError::UpstreamInvalid(problems) => Refusal::AiAnswerRefused(problems.clone()),
            ApiError::Misdirected(_)
            | ApiError::MethodNotAllowed(_)
            | ApiError::Internal(_)
            | ApiError::Unavailable(_) => Refusal::Failed,
            ApiError::Rated(error, _) => error.refusal(),
        }
    }

    /// The problem's `detail`: what happened, in a sentence.
    pub fn detail(&self) -> String {
        self.parts().3
    }

    /// The RFC 9457 problem body of this error; MCP tool errors carry it too. An error on our side
    /// gets a fresh `reference` (16 hex digits), and its text goes to the log under that reference
    /// rather than into the answer: how the server is built is nobody's business but ours.
    pub fn problem(&self, instance: &str) -> serde_json::Value {
        let (status, kind, title, detail) = self.parts();
        let mut body = json!({
            "type": format!("/problems/{kind}"),
            "title": title,
            "status": status,
            "detail": detail,
            "instance": instance,
        });
        if let ApiError::BadParameters(problems)
        | ApiError::BadHeader(problems)
        | ApiError::Invalid(problems)
        | ApiError::UpstreamInvalid(problems) = self.cause()
        {
            body["errors"] = json!(problems);
        }
        if let Some(logged) = self.logged() {
            let reference = reference_id();
            worker::console_error!("error {reference} ({status} at {instance}): {logged}");
            body["reference"] = json!(reference);
        }
        body
    }

    /// The headers of the problem response.
    fn finish(&self, headers: &mut worker::Headers) {
        let _ = headers.set("Content-Type", "application/problem+json");
        let _ = headers.set("Cache-Control", "no-store");
        match &self {
            ApiError::MethodNotAllowed(allowed) => {
                let _ = headers.set("Allow", allowed);
            }
            ApiError::Unauthorized(_) => {
                let _ = headers.set("WWW-Authenticate", "Bearer realm=\"commonplace\"");
            }
            ApiError::RateLimited(decision) => {
                let _ = headers.set("Retry-After", &decision.reset_s.to_string());
                headers::rate_limit(headers, decision);
            }
            ApiError::Unavailable(_) => {
                let _ = headers.set("Retry-After", &BUSY_RETRY_AFTER_S.to_string());
            }
            ApiError::Rated(error, decision) => {
                error.finish(headers);
                headers::rate_limit(headers, decision);
            }
            _ => {}
        }
        headers::cors(headers);
    }
}

/// What a D1 failure means for trying again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transient {
    /// SQLite refused before doing anything (`SQLITE_BUSY`, "database is locked"): safe to try
    /// again, whatever the statement.
    Busy,
    /// The answer was lost on the way (a dropped connection, a database object that was reset): a
    /// read is tried again; a write may have happened, so it is not repeated behind the caller's back.
    Lost,
}

/// Whether a D1 failure passes, and how; `None` for one that would fail again (a constraint, a
/// missing table, bad SQL).
pub fn transient(detail: &str) -> Option<Transient> {
    const BUSY: [&str; 3] = ["SQLITE_BUSY", "database is locked", "database table is locked"];
    const LOST: [&str; 5] = [
        "Network connection lost",
        "storage caused object to be reset",
        "reset because its code was updated",
        "transient issue",
        // Local D1 (miniflare) under load answers so when its request body broke off.
        "Failed to parse body as JSON",
    ];
    if BUSY.iter().any(|marker| detail.contains(marker)) {
        Some(Transient::Busy)
    } else if LOST.iter().any(|marker| detail.contains(marker)) {
        Some(Transient::Lost)
    } else {
        None
    }
}

/// Whether a failure is one that passes: the answer is then 503 with `Retry-After`, not 500.
pub fn is_transient(detail: &str) -> bool {
    transient(detail).is_some()
}

/// Sixteen random hex digits naming one logged failure; zeros when the platform has no randomness.
fn reference_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return "0".repeat(16);
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
