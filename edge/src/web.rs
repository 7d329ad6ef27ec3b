//! What the site's pages stand on: the one template environment the Worker renders them with,
//! cookies, the session a cookie names (with the sessions this isolate remembers), CSRF checks, form
//! bodies, and the settings the pages read.
//!
//! Sessions are a random cookie token whose hash is in D1. Cookies are `HttpOnly; Secure;
//! SameSite=Lax`. Every form carries a CSRF token: the session's own once signed in, and before that a
//! double-submit token from the `cp_csrf` cookie. A POST whose `Origin` is another site is refused too.

use std::cell::RefCell;

use domain::pages::Renderer;
use worker::{Env, Request, Response};

use crate::auth::{self, now_s, sha256_hex};
use crate::error::ApiError;
use crate::store::{self, Session};

pub(crate) const SESSION_COOKIE: &str = "cp_session";
pub(crate) const CSRF_COOKIE: &str = "cp_csrf";
const MAX_FORM_BYTES: usize = 4096;

thread_local! {
    /// The one template environment of every page the Worker renders: the site's templates
    /// (`domain::pages`) and the kitchen's (`edge/templates/`).
    pub(crate) static RENDERER: Renderer =
        Renderer::with_templates(&[("kitchen.html", include_str!("../templates/kitchen.html"))])
            .expect("the compiled-in templates parse");
}

pub(crate) fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string()).filter(|v| !v.is_empty())
}

pub(crate) fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|v| v.to_string()).or_else(|| var(env, name)).filter(|v| !v.is_empty())
}

pub(crate) fn dev_environment(env: &Env) -> bool {
    var(env, "ENVIRONMENT").as_deref() == Some("dev")
}

pub(crate) fn cookie(req: &Request, name: &str) -> Option<String> {
    let header = req.headers().get("Cookie").ok().flatten()?;
    header.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

pub(crate) fn set_cookie(name: &str, value: &str, path: &str, max_age: u64) -> String {
    format!("{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; Secure; SameSite=Lax")
}

/// Whether the request carries a sign-in cookie at all (it may still be unknown or ended).
pub(crate) fn has_session_cookie(req: &Request) -> bool {
    cookie(req, SESSION_COOKIE).is_some()
}

/// The session of the request's cookie, as D1 holds it now.
pub(crate) async fn signed_in(req: &Request, env: &Env) -> Result<Option<Session>, ApiError> {
    let Some(token) = cookie(req, SESSION_COOKIE) else { return Ok(None) };
    let (hash, asked_at) = (sha256_hex(&token), now_s());
    let session = store::session(&store::db(env)?, &hash, asked_at).await?;
    remember(hash, asked_at, session.clone());
    Ok(session)
}

/// How long a page that only shows may take a session this isolate looked up in D1 as it was.
const SEEN_S: u64 = 30;

thread_local! {
    /// Sessions this isolate looked up in D1 lately: token hash, when it asked, and the session then
    /// (`None`: there was none, or it was signed out here).
    static SEEN: RefCell<Vec<(String, u64, Option<Session>)>> = const { RefCell::new(Vec::new()) };
}

/// Keeps what D1 said of the session `hash` when asked at `asked_at`, unless it was signed out here
/// since (a lookup that was under way then must not bring it back), and drops what is too old.
pub(crate) fn remember(hash: String, asked_at: u64, session: Option<Session>) {
    let now = now_s();
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        seen.retain(|(_, at, _)| now < at + SEEN_S);
        if seen
            .iter()
            .any(|(kept, at, kept_session)| *kept == hash && kept_session.is_none() && *at >= asked_at)
        {
            return;
        }
        seen.retain(|(kept, _, _)| *kept != hash);
        seen.push((hash, asked_at, session));
    });
}

/// The session of a page that only shows something (the review queue) to the roles `allowed`:
/// a session D1 allowed in this isolate within the last 30 seconds, and not yet expired, is taken
/// as it was; any other is looked up in D1. So a role granted or a new sign-in works at once, and a
/// sign-out here at once, while a sign-out elsewhere or a role taken away may still show such a page
/// for up to 30 seconds in an isolate that saw the session; every form posted asks D1
/// (`signed_in_form`).
pub(crate) async fn signed_in_to_read(
    req: &Request,
    env: &Env,
    allowed: fn(&str) -> bool,
) -> Result<Option<Session>, ApiError> {
    let Some(token) = cookie(req, SESSION_COOKIE) else { return Ok(None) };
    let (hash, now) = (sha256_hex(&token), now_s());
    let seen = SEEN.with(|seen| {
        seen.borrow().iter().find_map(|(kept, at, session)| {
            let session =
                session.as_ref().filter(|session| now < session.expires_s && allowed(&session.role))?;
            (*kept == hash && now < at + SEEN_S).then(|| session.clone())
        })
    });
    match seen {
        Some(session) => Ok(Some(session)),
        None => signed_in(req, env).await,
    }
}

/// A form body, after the `Origin` check.
pub(crate) async fn form(req: &mut Request) -> Result<Vec<(String, String)>, ApiError> {
    form_within(req, MAX_FORM_BYTES).await
}

/// A form body of at most `max_bytes`, after the `Origin` check.
pub(crate) async fn form_within(
    req: &mut Request,
    max_bytes: usize,
) -> Result<Vec<(String, String)>, ApiError> {
    let url = req.url()?;
    if let Some(origin) = req.headers().get("Origin")?
        && origin != url.origin().ascii_serialization()
    {
        return Err(ApiError::Forbidden(format!("a form from {origin} may not post here")));
    }
    let bytes = crate::http::body_within(req, max_bytes).await?;
    Ok(worker::url::form_urlencoded::parse(&bytes).into_owned().collect())
}

pub(crate) fn field<'f>(form: &'f [(String, String)], name: &str) -> &'f str {
    form.iter().find(|(key, _)| key == name).map_or("", |(_, value)| value.as_str())
}

pub(crate) fn check_csrf(form: &[(String, String)], expected: &str) -> Result<(), ApiError> {
    if expected.is_empty() || !auth::same_secret(field(form, "csrf"), expected) {
        return Err(ApiError::Forbidden("the form's CSRF token is missing or stale; reload the page".into()));
    }
    Ok(())
}

/// A signed-in POST: the session, the form, and its CSRF token checked against the session's.
pub(crate) async fn signed_in_form(
    req: &mut Request,
    env: &Env,
) -> Result<(Session, Vec<(String, String)>), ApiError> {
    signed_in_form_within(req, env, MAX_FORM_BYTES).await
}

pub(crate) async fn signed_in_form_within(
    req: &mut Request,
    env: &Env,
    max_bytes: usize,
) -> Result<(Session, Vec<(String, String)>), ApiError> {
    let session = signed_in(req, env)
        .await?
        .ok_or_else(|| ApiError::Forbidden("sign in first: your session ended".into()))?;
    let form = form_within(req, max_bytes).await?;
    check_csrf(&form, &session.csrf)?;
    Ok((session, form))
}

pub(crate) fn redirect(location: &str, cookies: &[String]) -> Result<Response, ApiError> {
    let mut response = Response::empty()?.with_status(303);
    let headers = response.headers_mut();
    headers.set("Location", location)?;
    headers.set("Cache-Control", "no-store")?;
    for cookie in cookies {
        headers.append("Set-Cookie", cookie)?;
    }
    Ok(response)
}
