//! Signing in and out of the kitchen: GitHub OAuth (`/kitchen/login/github` and its callback), the
//! local sign-in of a development run (`POST /kitchen/login/dev`), signing out, and the session each
//! sign-in starts.
//!
//! The local sign-in makes anyone anybody, so it needs both: `ENVIRONMENT=dev` comes only from
//! `.dev.vars`, an `--env-file` or `--var` (never the deployed `wrangler.toml`), and the loopback host
//! keeps a dev server reachable from elsewhere (a LAN address listed in `SITE_HOSTS`) from handing out
//! accounts.
//!
//! GitHub's URLs come from `GITHUB_BASE_URL` and `GITHUB_API_URL` (tests point them at a scripted
//! local OAuth server); the client id from `GITHUB_CLIENT_ID`, the secret from the secret (or var)
//! `GITHUB_CLIENT_SECRET`.

use domain::api::SignIn;
use domain::site::limits::SIGN_INS;
use serde::Deserialize;
use worker::{Env, Fetch, Headers, Method, Request, RequestInit, Response};

use super::{Extra, page};
use crate::auth::{self, now_iso, now_s, random_hex, sha256_hex};
use crate::error::ApiError;
use crate::http;
use crate::store;
use crate::web::{
    CSRF_COOKIE, SESSION_COOKIE, check_csrf, cookie, dev_environment, field, form, redirect, remember,
    secret, set_cookie, signed_in_form, var,
};

const STATE_COOKIE: &str = "cp_oauth_state";
const SESSION_S: u64 = 30 * 24 * 3600;

/// Whether this request may use the local sign-in: a development run, asked on a loopback host.
pub(super) fn dev_sign_in_allowed(req: &Request, env: &Env) -> Result<bool, ApiError> {
    Ok(dev_environment(env) && domain::site::host::is_loopback(&http::host(req)?))
}

/// Starts a session for the account and sends the browser back to the kitchen.
async fn start_session(env: &Env, account_id: i64) -> Result<Response, ApiError> {
    let token = random_hex()?;
    let csrf = random_hex()?;
    let db = store::db(env)?;
    let now = now_s();
    store::add_session(&db, &sha256_hex(&token), account_id, &csrf, &now_iso(), now, now + SESSION_S).await?;
    redirect(
        "/kitchen",
        &[
            set_cookie(SESSION_COOKIE, &token, "/", SESSION_S),
            set_cookie(CSRF_COOKIE, "", "/kitchen", 0),
            set_cookie(STATE_COOKIE, "", "/kitchen", 0),
        ],
    )
}

/// `POST /kitchen/login/dev`: a local account by handle, only when `ENVIRONMENT=dev` and asked on a
/// loopback host.
pub async fn dev_login(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    if !dev_environment(env) {
        return Err(ApiError::NotFound("local sign-in exists only in development".into()));
    }
    if !dev_sign_in_allowed(&req, env)? {
        return Err(ApiError::Forbidden(
            "the local sign-in answers only on a loopback host (localhost, 127.0.0.1, [::1])".into(),
        ));
    }
    let expected = cookie(&req, CSRF_COOKIE).unwrap_or_default();
    let form = form(&mut req).await?;
    check_csrf(&form, &expected)?;
    let rate = match auth::admit(env, &SIGN_INS, &auth::address(&req)).await {
        Ok(rate) => rate,
        // A browser's form: past the limit is a page that says when to try again.
        Err(err) => return Ok(crate::routes::pages::problem(err, &req.path())),
    };
    http::rated(dev_sign_in(&req, env, &form).await, &rate, &req.path())
}

async fn dev_sign_in(req: &Request, env: &Env, form: &[(String, String)]) -> Result<Response, ApiError> {
    let handle = field(form, "handle").trim().to_string();
    if let Some(problem) = domain::recipes::write::handle_problem(&handle) {
        // 400: the form asked for something that cannot be; the page says why, for the person.
        let extra = Extra { message: Some(problem), ..Extra::default() };
        return Ok(page(req, env, None, extra).await?.with_status(400));
    }
    let account = store::local_account(&store::db(env)?, &handle, &now_iso()).await?;
    start_session(env, account.id).await
}

/// `POST /kitchen/logout`.
pub async fn logout(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    signed_in_form(&mut req, env).await?;
    if let Some(token) = cookie(&req, SESSION_COOKIE) {
        let hash = sha256_hex(&token);
        store::end_session(&store::db(env)?, &hash).await?;
        remember(hash, now_s(), None);
    }
    redirect("/kitchen", &[set_cookie(SESSION_COOKIE, "", "/", 0)])
}

fn github_urls(env: &Env) -> (String, String) {
    let base = var(env, "GITHUB_BASE_URL").unwrap_or_else(|| "https://github.com".into());
    let api = var(env, "GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into());
    (base.trim_end_matches('/').to_string(), api.trim_end_matches('/').to_string())
}

fn callback_url(req: &Request) -> Result<String, ApiError> {
    Ok(format!("{}/kitchen/callback/github", req.url()?.origin().ascii_serialization()))
}

/// `GET /kitchen/login/github`: off to GitHub with a fresh `state`, kept in a short-lived cookie.
pub async fn github_login(req: Request, env: &Env) -> Result<Response, ApiError> {
    let client_id = var(env, "GITHUB_CLIENT_ID")
        .ok_or_else(|| ApiError::NotFound("GitHub sign-in is not configured here".into()))?;
    let (base, _) = github_urls(env);
    let state = random_hex()?;
    let mut url = worker::Url::parse(&format!("{base}/login/oauth/authorize"))
        .map_err(|err| ApiError::Internal(format!("GITHUB_BASE_URL: {err}")))?;
    url.query_pairs_mut()
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", &callback_url(&req)?)
        .append_pair("scope", "read:user")
        .append_pair("state", &state);
    let mut response = Response::empty()?.with_status(302);
    let headers = response.headers_mut();
    headers.set("Location", url.as_str())?;
    headers.set("Cache-Control", "no-store")?;
    headers.append("Set-Cookie", &set_cookie(STATE_COOKIE, &state, "/kitchen", 600))?;
    Ok(response)
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

#[derive(Deserialize)]
struct GitHubUser {
    id: i64,
    login: String,
    name: Option<String>,
}

/// `GET /kitchen/callback/github?code&state`: trade the code for a token, read the user, sign in.
pub async fn github_callback(req: Request, env: &Env, sign_in: SignIn) -> Result<Response, ApiError> {
    let (code, state) = match sign_in {
        SignIn::Code { code, state } => (code, state),
        SignIn::Refused(error) => {
            let message = format!("GitHub sign-in did not complete: {error}");
            return page(&req, env, None, Extra { message: Some(message), ..Extra::default() }).await;
        }
    };
    let expected = cookie(&req, STATE_COOKIE).unwrap_or_default();
    if expected.is_empty() || !auth::same_secret(&state, &expected) {
        return Err(ApiError::Forbidden(
            "the sign-in state does not match; start again from /kitchen".into(),
        ));
    }
    let rate = match auth::admit(env, &SIGN_INS, &auth::address(&req)).await {
        Ok(rate) => rate,
        Err(err) => return Ok(crate::routes::pages::problem(err, &req.path())),
    };
    http::rated(github_sign_in(&req, env, &code).await, &rate, &req.path())
}

/// Trades the code for a token, reads the GitHub user, and signs in (making the account the first time).
async fn github_sign_in(req: &Request, env: &Env, code: &str) -> Result<Response, ApiError> {
    let client_id = var(env, "GITHUB_CLIENT_ID")
        .ok_or_else(|| ApiError::NotFound("GitHub sign-in is not configured here".into()))?;
    let client_secret = secret(env, "GITHUB_CLIENT_SECRET")
        .ok_or_else(|| ApiError::Internal("GITHUB_CLIENT_SECRET is not set".into()))?;
    let (base, api) = github_urls(env);

    let body: String = worker::url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", &client_id)
        .append_pair("client_secret", &client_secret)
        .append_pair("code", code)
        .append_pair("redirect_uri", &callback_url(req)?)
        .finish();
    let headers = Headers::new();
    headers.set("Accept", "application/json")?;
    headers.set("Content-Type", "application/x-www-form-urlencoded")?;
    headers.set("User-Agent", "commonplace")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers).with_body(Some(body.into()));
    let token_req = Request::new_with_init(&format!("{base}/login/oauth/access_token"), &init)?;
    let mut answer = Fetch::Request(token_req).send().await?;
    let token: TokenAnswer = answer
        .json()
        .await
        .map_err(|err| ApiError::Internal(format!("GitHub's token answer does not parse: {err}")))?;
    let Some(access_token) = token.access_token else {
        let why = token.error_description.or(token.error).unwrap_or_else(|| "no token".into());
        let extra = Extra { message: Some(format!("GitHub refused the sign-in: {why}")), ..Extra::default() };
        return page(req, env, None, extra).await;
    };

    let headers = Headers::new();
    headers.set("Accept", "application/vnd.github+json")?;
    headers.set("Authorization", &format!("Bearer {access_token}"))?;
    headers.set("User-Agent", "commonplace")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let mut answer = Fetch::Request(Request::new_with_init(&format!("{api}/user"), &init)?).send().await?;
    if answer.status_code() != 200 {
        return Err(ApiError::Internal(format!("GitHub's user answer was {}", answer.status_code())));
    }
    let user: GitHubUser = answer
        .json()
        .await
        .map_err(|err| ApiError::Internal(format!("GitHub's user answer does not parse: {err}")))?;
    let handle = domain::recipes::write::handle_from_login(&user.login);
    // A GitHub name is text its owner chose: one that is not clean text is not shown, the login is.
    let name = user
        .name
        .filter(|n| {
            !n.trim().is_empty() && domain::clean::check("name", n, domain::clean::TextKind::Line).is_none()
        })
        .unwrap_or_else(|| user.login.clone());
    let account = store::github_account(&store::db(env)?, user.id, &handle, &name, &now_iso()).await?;
    start_session(env, account.id).await
}
