//! Headers that answers of every kind carry, set in one place: CORS, a counted request's
//! `RateLimit` / `RateLimit-Policy`, and what keeps a browser from reading an answer as something
//! else (`X-Content-Type-Options`, the pages' `Content-Security-Policy`). A leaf module, so the error type and the HTTP helpers both use
//! it without importing each other.

use domain::site::limits::RateDecision;
use worker::Headers;

/// Public reads may be used from any origin.
pub fn cors(headers: &mut Headers) {
    let _ = headers.set("Access-Control-Allow-Origin", "*");
    let _ = headers.set(
        "Access-Control-Expose-Headers",
        "Location, ETag, RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed",
    );
}

/// The limit's state after a count (draft-ietf-httpapi-ratelimit-headers; `domain::site::limits` words
/// the values).
pub fn rate_limit(headers: &mut Headers, rate: &RateDecision) {
    let _ = headers.set("RateLimit", &rate.header());
    let _ = headers.set("RateLimit-Policy", &rate.policy_header());
}

/// On every answer: no content sniffing (a Cooklang file or a JSON document holds user text, which
/// must never be read as HTML), and on an HTML page without a policy of its own the site's
/// (`domain::pages::content_security_policy`; the kitchen sets a stricter one).
pub fn every_answer(headers: &mut Headers) {
    let _ = headers.set("X-Content-Type-Options", "nosniff");
    let html = headers.get("Content-Type").ok().flatten().is_some_and(|t| t.starts_with("text/html"));
    if html && !headers.has("Content-Security-Policy").unwrap_or(true) {
        let _ = headers.set("Content-Security-Policy", &PAGE_POLICY.with(Clone::clone));
    }
}

thread_local! {
    static PAGE_POLICY: String = domain::pages::content_security_policy();
}
