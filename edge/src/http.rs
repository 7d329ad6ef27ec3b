//! What every request passes and every public answer carries: the site-host check, a route's typed
//! input and a write's JSON body, CORS, caching, and the `RateLimit` headers of a counted request.

use domain::Diagnostic;
use domain::api::{self, Input, body};
use domain::recipes::write::MAX_BODY_BYTES;
use domain::site::host::SiteHosts;
use domain::site::limits::RateDecision;
use serde_json::Value;
use worker::{Env, Headers, Method, Request, Response};

use crate::error::ApiError;

/// The request's host, as its URL has it (workerd builds the URL from `Host`): the host every
/// same-origin check and every link the Worker makes from the request starts from.
pub fn host(req: &Request) -> Result<String, ApiError> {
    Ok(req.url()?.host_str().unwrap_or_default().to_string())
}

/// Refuses a request for a host that is neither in `SITE_HOSTS` nor loopback, before any route runs
/// (the DNS rebinding defence; see `domain::site::host`). An unset `SITE_HOSTS` admits loopback only.
pub fn check_host(req: &Request, env: &Env) -> Result<(), ApiError> {
    let host = host(req)?;
    let hosts = env.var("SITE_HOSTS").map(|var| var.to_string()).unwrap_or_default();
    if SiteHosts::parse(&hosts).admits(&host) { Ok(()) } else { Err(ApiError::Misdirected(host)) }
}

pub use crate::headers::cors;

/// An operation's input from the route's path parameters and the query (`domain::api`), every
/// problem named. A query that is not UTF-8 once decoded is refused rather than read with U+FFFD in
/// it (`domain::api::body::query_pairs`).
pub fn input<I: Input>(req: &Request, path: &[(&'static str, String)]) -> Result<I::Valid, ApiError> {
    read_params(req, path, |params| api::from_query::<I>(params))
}

/// A page's input: as [`input`], except that a parameter the page does not know is left out
/// (`domain::api::from_page_query`).
pub fn page_input<I: Input>(req: &Request, path: &[(&'static str, String)]) -> Result<I::Valid, ApiError> {
    read_params(req, path, |params| api::from_page_query::<I>(params))
}

fn read_params<T>(
    req: &Request,
    path: &[(&'static str, String)],
    read: impl FnOnce(Vec<(&str, &str)>) -> Result<T, Vec<Diagnostic>>,
) -> Result<T, ApiError> {
    let url = req.url()?;
    let query = body::query_pairs(url.query().unwrap_or_default())
        .map_err(|problem| ApiError::BadParameters(vec![problem]))?;
    let params =
        path.iter().map(|(k, v)| (*k, v.as_str())).chain(query.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    read(params.collect()).map_err(ApiError::BadParameters)
}

/// The JSON body of a write, or 415 (not `application/json` in UTF-8) / 413 / 400 (not JSON, or an
/// object naming a key twice: `domain::api::body`).
pub async fn json_body(req: &mut Request) -> Result<Value, ApiError> {
    let content_type = req.headers().get("Content-Type")?.unwrap_or_default();
    if !body::is_json_media_type(&content_type) {
        return Err(ApiError::UnsupportedMediaType(content_type));
    }
    let bytes = body_within(req, MAX_BODY_BYTES).await?;
    body::parse_json(&bytes).map_err(|err| ApiError::Malformed(err.to_string()))
}

/// A request's body of at most `max` bytes, or 413: refused by its `Content-Length` before it is
/// read, and by its length once read (a body may come without one).
pub async fn body_within(req: &mut Request, max: usize) -> Result<Vec<u8>, ApiError> {
    let declared = req.headers().get("Content-Length")?.and_then(|len| len.parse::<usize>().ok());
    if declared.is_some_and(|len| len > max) {
        return Err(ApiError::TooLarge(max));
    }
    let bytes = req.bytes().await?;
    if bytes.len() > max {
        return Err(ApiError::TooLarge(max));
    }
    Ok(bytes)
}

/// Answers a CORS preflight for any route.
pub fn preflight() -> Result<Response, ApiError> {
    let mut response = Response::empty()?.with_status(204);
    let headers = response.headers_mut();
    cors(headers);
    headers.set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, OPTIONS")?;
    headers.set(
        "Access-Control-Allow-Headers",
        "Authorization, Content-Type, If-Match, Idempotency-Key, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name",
    )?;
    headers.set("Access-Control-Max-Age", "86400")?;
    Ok(response)
}

/// A JSON answer to a public read, cacheable for `max_age` seconds.
pub fn public_json(body: &serde_json::Value, max_age: u32) -> Result<Response, ApiError> {
    json_answer(Response::from_bytes(body.to_string().into_bytes())?, max_age)
}

/// `response`, whose body is JSON (made here, or a built file passed through), as a public read's
/// answer, cacheable for `max_age` seconds.
pub fn json_answer(mut response: Response, max_age: u32) -> Result<Response, ApiError> {
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", &format!("public, max-age={max_age}"))?;
    cors(headers);
    Ok(response)
}

/// A public page, rendered by `domain` (recipe and quote pages): checked again on every visit, since
/// a write or an editor's decision changes it at once.
pub fn public_page(rendered: Result<String, minijinja::Error>) -> Result<Response, ApiError> {
    let html = rendered.map_err(|err| ApiError::Internal(format!("page: {err}")))?;
    page_answer(Response::from_html(html)?)
}

/// `response`, whose body is a page's HTML (rendered here or by the build), as a public page.
pub fn page_answer(mut response: Response) -> Result<Response, ApiError> {
    let headers = response.headers_mut();
    headers.set("Content-Type", "text/html; charset=utf-8")?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    cors(headers);
    Ok(response)
}

/// Whether a missing answer to `req` should be a page rather than problem+json: a browser (its
/// `Accept` names `text/html`) getting or heading an address outside the API (`/api/`, `/mcp`) that
/// names no file (no extension in its last segment), as a person following a stale link does.
pub fn wants_page(req: &Request) -> bool {
    let method = req.method();
    let accept = req.headers().get("Accept").ok().flatten().unwrap_or_default();
    let path = req.path();
    let last = path.rsplit('/').next().unwrap_or_default();
    matches!(method, Method::Get | Method::Head)
        && accept.to_ascii_lowercase().contains("text/html")
        && !path.starts_with("/api/")
        && path != "/mcp"
        && !last.contains('.')
}

/// Whether the request's `If-None-Match` names the current representation (`domain::recipes::write::none_match`).
pub fn none_match(req: &worker::Request, etag: &str) -> Result<bool, ApiError> {
    Ok(req
        .headers()
        .get("If-None-Match")?
        .is_some_and(|header| domain::recipes::write::none_match(&header, Some(etag))))
}

/// The method the routes match on. workers-rs reads a method it does not know (`QUERY`, say) as GET;
/// such a request becomes TRACE, which no route answers, so it gets 405 with the path's `Allow`
/// instead of a GET's answer.
pub fn routed_method(req: &Request) -> Method {
    let raw = req.inner().method();
    let known = Method::from(raw.clone());
    if known == Method::Get && !raw.eq_ignore_ascii_case("GET") { Method::Trace } else { known }
}

/// `If-None-Match` on every successful GET or HEAD (RFC 9110 §13.1.2), whichever route answered it:
/// a match becomes 304 Not Modified with the headers the 200 would have carried and no body. Routes
/// that know their entity tag before reading a body check it themselves; this catches the rest (a
/// list of tags against a static asset, `*`, an API-written recipe).
pub fn not_modified_if_matched(
    req_method: &Method,
    if_none_match: Option<&str>,
    response: Response,
) -> Response {
    let Some(header) = if_none_match else { return response };
    if !matches!(req_method, Method::Get | Method::Head) || response.status_code() != 200 {
        return response;
    }
    let etag = response.headers().get("ETag").ok().flatten();
    if !domain::recipes::write::none_match(header, etag.as_deref()) {
        return response;
    }
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        if name != "content-length" {
            let _ = headers.set(&name, &value);
        }
    }
    match Response::empty() {
        Ok(empty) => empty.with_status(304).with_headers(headers),
        Err(_) => response,
    }
}

/// Every answer after a limit's count carries the limit's state (`RateLimit`, `RateLimit-Policy`),
/// refusals included.
pub fn rated(
    result: Result<Response, ApiError>,
    rate: &RateDecision,
    instance: &str,
) -> Result<Response, ApiError> {
    let mut response = result.unwrap_or_else(|err| err.into_response(instance));
    crate::headers::rate_limit(response.headers_mut(), rate);
    Ok(response)
}
