//! The kitchen page (`/kitchen`): sign in (GitHub OAuth; a local sign-in only when
//! `ENVIRONMENT=dev` and the request's host is loopback), make a labelled API key (shown once), list and
//! revoke keys, list my recipes, import a recipe, ask for an episode. This module is the page and what it
//! shows; each task's forms are a module of their own ([`sign_in`], [`keys`], [`drafts`],
//! [`episodes`]), and sessions, cookies, CSRF tokens and forms are every page's (`crate::web`).
//!
//! Limits (`domain::site::limits`), said in plain words on the page: sign-ins (each may make an account) and
//! new keys are counted per client address; an account holds at most 20 live keys (making another is a
//! 409 problem until one is revoked); the write and AI limits count per account, all its keys together.
//! Every answer after a count carries its `RateLimit` headers; a refusal is a 429 problem.

use domain::Diagnostic;
use domain::api::QuoteChecked;
use domain::site::limits::{AI, LIVE_KEYS_PER_ACCOUNT, NEW_KEYS, SIGN_INS, WRITES};
use minijinja::context;
use serde_json::json;
use worker::{Env, Request, Response};

use crate::auth::{self, random_hex};
use crate::error::ApiError;
use crate::store::{self, Session};
use crate::web::{CSRF_COOKIE, RENDERER, cookie, set_cookie, signed_in, var};

pub mod drafts;
pub mod episodes;
pub mod keys;
pub mod sign_in;

/// The page lists the account's most recently written recipes, this many at most.
const RECIPES_SHOWN: u32 = 100;

/// The episode a signed-out visitor came to ask for (`home`), kept across the sign-in.
const ASK_COOKIE: &str = "cp_ask";
const ASK_COOKIE_S: u64 = 30 * 60;
/// The most of its value a browser surely keeps (4,096 bytes with its name and attributes).
const ASK_COOKIE_MAX_BYTES: usize = 3900;

/// What the page shows besides the account's own lists.
#[derive(Default)]
struct Extra {
    message: Option<String>,
    new_key: Option<(String, String)>,
    /// A recipe draft (JSON text) to check and save, and its problems.
    draft: Option<(String, Vec<Diagnostic>)>,
    /// The episode form filled in: the address to ask for, and the quote to go back to.
    ask: QuoteChecked,
    /// Cookies the answer sets besides the page's own.
    cookies: Vec<String>,
}

async fn page(
    req: &Request,
    env: &Env,
    session: Option<Session>,
    extra: Extra,
) -> Result<Response, ApiError> {
    let mut set_cookies = extra.cookies.clone();
    let mut live_keys = 0;
    let (account, csrf, keys, recipes) = match &session {
        Some(session) => {
            let db = store::db(env)?;
            let keys = store::keys_of(&db, session.account_id).await?;
            let recipes = store::recipes_of(&db, session.account_id, RECIPES_SHOWN).await?;
            live_keys = keys.iter().filter(|k| k.revoked_at.is_none()).count();
            let keys: Vec<_> = keys
                .iter()
                .map(|k| {
                    json!({"id": k.id, "key_prefix": k.key_prefix, "label": k.label,
                           "created_at": k.created_at, "revoked_at": k.revoked_at})
                })
                .collect();
            let recipes: Vec<_> = recipes
                .iter()
                .map(|r| json!({"slug": r.slug, "version": r.version, "forked_from": r.forked_from, "updated_at": r.updated_at}))
                .collect();
            let account = json!({"handle": session.handle, "display_name": session.display_name,
                                 "reviews": crate::routes::speakers::may_edit(&session.role)});
            (Some(account), session.csrf.clone(), keys, recipes)
        }
        None => {
            let csrf = match cookie(req, CSRF_COOKIE) {
                Some(token) if token.len() == 64 => token,
                _ => {
                    let token = random_hex()?;
                    set_cookies.push(set_cookie(CSRF_COOKIE, &token, "/kitchen", 3600));
                    token
                }
            };
            (None, csrf, Vec::new(), Vec::new())
        }
    };
    let new_key = extra.new_key.map(|(key, label)| json!({"key": key, "label": label}));
    let draft = extra.draft.map(|(doc, problems)| json!({"json": doc, "problems": problems}));
    let dev = sign_in::dev_sign_in_allowed(req, env)?;
    let limits = json!({
        "writes": auth::quota(env, &WRITES), "ai": auth::quota(env, &AI),
        "sign_ins": auth::quota(env, &SIGN_INS), "new_keys": auth::quota(env, &NEW_KEYS),
        "live_keys": LIVE_KEYS_PER_ACCOUNT, "recipes_shown": RECIPES_SHOWN,
    });
    let html = RENDERER
        .with(|renderer| {
            renderer.render(
                "kitchen.html",
                context! {
                    account, csrf, keys, recipes, new_key, draft, message => extra.message,
                    github => var(env, "GITHUB_CLIENT_ID").is_some(), dev, limits, live_keys,
                    at_key_cap => live_keys >= LIVE_KEYS_PER_ACCOUNT as usize,
                    ask => json!({"source_url": extra.ask.source_url, "quote": extra.ask.quote}),
                },
            )
        })
        .map_err(|err| ApiError::Internal(format!("kitchen page: {err}")))?;
    let mut response = Response::from_html(html)?;
    let headers = response.headers_mut();
    // The page can hold a key shown once: no cache may keep it.
    headers.set("Cache-Control", "no-store")?;
    headers.set("X-Frame-Options", "DENY")?;
    headers.set(
        "Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    )?;
    for cookie in set_cookies {
        headers.append("Set-Cookie", &cookie)?;
    }
    Ok(response)
}

/// `GET /kitchen?source_url=…&quote=…`: the address fills in the episode form. Signed out, the page
/// keeps it in a cookie for half an hour, so the form is filled in once the person has signed in,
/// whichever way (the sign-ins come back to `/kitchen` alone).
pub async fn home(req: Request, env: &Env, ask: QuoteChecked) -> Result<Response, ApiError> {
    let session = signed_in(&req, env).await?;
    let mut extra = Extra { ask, ..Extra::default() };
    let asked = !extra.ask.source_url.is_empty();
    match (&session, cookie(&req, ASK_COOKIE)) {
        (None, _) if asked => {
            let keep = |quote: &str| {
                worker::url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("source_url", &extra.ask.source_url)
                    .append_pair("quote", quote)
                    .finish()
            };
            // The quote is left out, then the whole, when a browser would not keep the cookie.
            let kept = [keep(&extra.ask.quote), keep("")]
                .into_iter()
                .find(|kept| kept.len() <= ASK_COOKIE_MAX_BYTES);
            if let Some(kept) = kept {
                extra.cookies.push(set_cookie(ASK_COOKIE, &kept, "/kitchen", ASK_COOKIE_S));
            }
        }
        (Some(_), Some(kept)) => {
            if !asked {
                for (key, value) in worker::url::form_urlencoded::parse(kept.as_bytes()) {
                    match &*key {
                        "source_url" => extra.ask.source_url = value.into_owned(),
                        "quote" => extra.ask.quote = value.into_owned(),
                        _ => {}
                    }
                }
            }
            extra.cookies.push(set_cookie(ASK_COOKIE, "", "/kitchen", 0));
        }
        _ => {}
    }
    page(&req, env, session, extra).await
}
