//! Headers that answers of every kind carry, set in one place: CORS, and a counted request's
//! `RateLimit` / `RateLimit-Policy`. A leaf module, so the error type and the HTTP helpers both use
//! it without importing each other.

use domain::limits::RateDecision;
use worker::Headers;

/// Public reads may be used from any origin.
pub fn cors(headers: &mut Headers) {
    let _ = headers.set("Access-Control-Allow-Origin", "*");
    let _ = headers.set(
        "Access-Control-Expose-Headers",
        "Location, ETag, RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed",
    );
}

/// The limit's state after a count (draft-ietf-httpapi-ratelimit-headers; `domain::limits` words
/// the values).
pub fn rate_limit(headers: &mut Headers, rate: &RateDecision) {
    let _ = headers.set("RateLimit", &rate.header());
    let _ = headers.set("RateLimit-Policy", &rate.policy_header());
}
