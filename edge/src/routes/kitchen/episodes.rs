//! Asking for an episode from the kitchen (`POST /kitchen/episodes`): the address goes through the
//! API's intake, and the person back to the quote page that waits for it, or to the kitchen saying
//! where the job stands.

use domain::api::QuoteChecked;
use domain::quotes::intake::MAX_ADDRESS_CHARS;
use domain::quotes::quote::MAX_QUOTE_CHARS;
use serde_json::json;
use worker::{Env, Request, Response};

use super::{Extra, page};
use crate::auth;
use crate::error::ApiError;
use crate::http;
use crate::web::{field, redirect, signed_in_form_within};

/// `POST /kitchen/episodes`: asks for the episode at `source_url` through the same intake as `POST
/// /api/episodes` (the write limit, the transcription budget, the address's checks), then back to the
/// quote page that waits for it, or, without a quote, to the kitchen saying where the job stands. An
/// address refused is the kitchen again saying why (422), what was typed kept; any other refusal a
/// page saying why.
pub async fn request_episode(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    let (session, form) = match signed_in_form_within(&mut req, env, EPISODE_FORM_BYTES).await {
        Ok(signed_in) => signed_in,
        Err(err) => return Ok(crate::routes::pages::problem(err, &path)),
    };
    let owner = session.owner();
    let rate = match auth::count_write(env, &owner).await {
        Ok(rate) => rate,
        Err(err) => return Ok(crate::routes::pages::problem(err, &path)),
    };
    // The quote only leads back to its page: one beyond the page's bound is left out.
    let quote = field(&form, "quote");
    let ask = QuoteChecked {
        source_url: field(&form, "source_url").trim().into(),
        quote: if quote.chars().count() > MAX_QUOTE_CHARS { String::new() } else { quote.into() },
    };
    let asked = domain::api::from_json::<domain::api::EpisodeRequest>(&json!({"source_url": ask.source_url}))
        .map_err(ApiError::Invalid);
    let asked = match asked {
        Ok(address) => crate::routes::intake::request_episode(env, &owner, &address).await,
        Err(refused) => Err(refused),
    };
    let answer = match asked {
        Ok(_) if !ask.quote.trim().is_empty() => {
            let query = worker::url::form_urlencoded::Serializer::new(String::new())
                .append_pair("quote", &ask.quote)
                .append_pair("source_url", &ask.source_url)
                .finish();
            redirect(&format!("/quotes?{query}"), &[])
        }
        Ok(job) => {
            let message = format!(
                "Asked for {}: the job is {} (follow it at {}). Check a quote in it on /quotes once it is ready.",
                job.source_url,
                job.state.code(),
                job.url
            );
            page(&req, env, Some(session), Extra { message: Some(message), ..Extra::default() }).await
        }
        Err(ApiError::Invalid(problems)) => {
            let message =
                problems.iter().map(|p| format!("The address {}.", p.reason)).collect::<Vec<_>>().join(" ");
            let extra = Extra { message: Some(message), ask, ..Extra::default() };
            Ok(page(&req, env, Some(session), extra).await?.with_status(422))
        }
        Err(other) => Err(other),
    };
    // Past the transcription budget: that budget's headers, not the write limit's, as the API's.
    let rate = match &answer {
        Err(ApiError::RateLimited(budget)) => budget.clone(),
        _ => rate,
    };
    let answer = answer.or_else(|err| Ok(crate::routes::pages::problem(err, &path)));
    http::rated(answer, &rate, &path)
}

/// The most the episode form's body may hold: a quote and an address, each character
/// percent-encoded from four bytes of UTF-8, with room for the token.
const EPISODE_FORM_BYTES: usize = (MAX_QUOTE_CHARS + MAX_ADDRESS_CHARS) * 12 + 1024;
