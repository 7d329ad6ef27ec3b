//! The kitchen page (`/kitchen`): sign in (GitHub OAuth; a local sign-in only when
//! `ENVIRONMENT=dev` and the request's host is loopback), make a labelled API key (shown once), list and
//! revoke keys, list my recipes.
//!
//! The local sign-in makes anyone anybody, so it needs both: `ENVIRONMENT=dev` comes only from
//! `.dev.vars`, an `--env-file` or `--var` (never the deployed `wrangler.toml`), and the loopback host
//! keeps a dev server reachable from elsewhere (a LAN address listed in `SITE_HOSTS`) from handing out
//! accounts.
//!
//! Limits (`domain::site::limits`), said in plain words on the page: sign-ins (each may make an account) and
//! new keys are counted per client address; an account holds at most 20 live keys (making another is a
//! 409 problem until one is revoked); the write and AI limits count per account, all its keys together.
//! Every answer after a count carries its `RateLimit` headers; a refusal is a 429 problem.
//!
//! Sessions, cookies, CSRF tokens and forms are every page's (`crate::web`).
//!
//! GitHub's URLs come from `GITHUB_BASE_URL` and `GITHUB_API_URL` (tests point them at a scripted
//! local OAuth server); the client id from `GITHUB_CLIENT_ID`, the secret from the secret (or var)
//! `GITHUB_CLIENT_SECRET`.

use domain::Diagnostic;
use domain::api::{QuoteChecked, SignIn};
use domain::quotes::intake::MAX_ADDRESS_CHARS;
use domain::quotes::quote::MAX_QUOTE_CHARS;
use domain::recipes::cooking::import;
use domain::site::limits::{AI, LIVE_KEYS_PER_ACCOUNT, NEW_KEYS, SIGN_INS, WRITES};
use minijinja::{Environment, context};
use serde::Deserialize;
use serde_json::json;
use worker::{Env, Fetch, Headers, Method, Request, RequestInit, Response};

use crate::auth::{self, now_iso, now_s, random_hex, sha256_hex};
use crate::error::ApiError;
use crate::http;
use crate::store::{self, Session};
use crate::web::{
    CSRF_COOKIE, SESSION_COOKIE, check_csrf, cookie, dev_environment, field, form, redirect, remember,
    secret, set_cookie, signed_in, signed_in_form, signed_in_form_within, var,
};

const STATE_COOKIE: &str = "cp_oauth_state";
const SESSION_S: u64 = 30 * 24 * 3600;
/// The page lists the account's most recently written recipes, this many at most.
const RECIPES_SHOWN: u32 = 100;

thread_local! {
    static TEMPLATES: Environment<'static> = {
        let mut env = Environment::new();
        env.add_template("kitchen.html", include_str!("../../templates/kitchen.html"))
            .expect("the kitchen template parses");
        env
    };
}

/// Whether this request may use the local sign-in: a development run, asked on a loopback host.
fn dev_sign_in_allowed(req: &Request, env: &Env) -> Result<bool, ApiError> {
    Ok(dev_environment(env) && domain::site::host::is_loopback(&http::host(req)?))
}

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
    let dev = dev_sign_in_allowed(req, env)?;
    let limits = json!({
        "writes": auth::quota(env, &WRITES), "ai": auth::quota(env, &AI),
        "sign_ins": auth::quota(env, &SIGN_INS), "new_keys": auth::quota(env, &NEW_KEYS),
        "live_keys": LIVE_KEYS_PER_ACCOUNT, "recipes_shown": RECIPES_SHOWN,
    });
    let html = TEMPLATES
        .with(|templates| {
            templates.get_template("kitchen.html")?.render(context! {
                account, csrf, keys, recipes, new_key, draft, message => extra.message,
                github => var(env, "GITHUB_CLIENT_ID").is_some(), dev, limits, live_keys,
                at_key_cap => live_keys >= LIVE_KEYS_PER_ACCOUNT as usize,
                ask => json!({"source_url": extra.ask.source_url, "quote": extra.ask.quote}),
            })
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

/// `POST /kitchen/keys`: a new key, shown in this answer only. Counted per client address (429 past
/// the hour's quota); refused with 409 while the account holds its most live keys.
pub async fn new_key(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let (session, form) = signed_in_form(&mut req, env).await?;
    let rate = auth::admit(env, &NEW_KEYS, &auth::address(&req)).await?;
    http::rated(make_key(&req, env, session, &form).await, &rate, &req.path())
}

async fn make_key(
    req: &Request,
    env: &Env,
    session: Session,
    form: &[(String, String)],
) -> Result<Response, ApiError> {
    let label: String = field(form, "label").trim().chars().take(60).collect();
    if label.is_empty() {
        let extra = Extra { message: Some("Give the key a label.".into()), ..Extra::default() };
        return page(req, env, Some(session), extra).await;
    }
    if let Some(problem) = domain::clean::check("label", &label, domain::clean::TextKind::Line) {
        let extra = Extra { message: Some(problem.to_string()), ..Extra::default() };
        return page(req, env, Some(session), extra).await;
    }
    let key = auth::new_key()?;
    let prefix: String = key.chars().take(auth::KEY_PREFIX.len() + 6).collect();
    let db = store::db(env)?;
    if !store::add_key(&db, session.account_id, &sha256_hex(&key), &prefix, &label, &now_iso()).await? {
        return Err(ApiError::TooManyKeys(store::live_keys(&db, session.account_id).await?));
    }
    let extra = Extra { new_key: Some((key, label)), ..Extra::default() };
    page(req, env, Some(session), extra).await
}

/// `POST /kitchen/keys/{id}/revoke`.
pub async fn revoke_key(mut req: Request, env: &Env, key_id: &str) -> Result<Response, ApiError> {
    let (session, _) = signed_in_form(&mut req, env).await?;
    let key_id: i64 = key_id.parse().map_err(|_| ApiError::NotFound(format!("no key {key_id}")))?;
    if store::revoke_key(&store::db(env)?, session.account_id, key_id, &now_iso()).await? == 0 {
        return Err(ApiError::NotFound(format!("you have no active key {key_id}")));
    }
    redirect("/kitchen", &[])
}

/// `POST /kitchen/import`: a pasted Cooklang text or schema.org JSON-LD turned into a draft recipe
/// (`domain::recipes::cooking::import`), shown with every problem for the cook to fix before saving it.
pub async fn import(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let (session, form) =
        signed_in_form_within(&mut req, env, domain::recipes::write::MAX_BODY_BYTES).await?;
    let lang = domain::recipes::recipe::Lang::parse(field(&form, "lang"));
    let source = field(&form, "source");
    let draft = match field(&form, "format") {
        "cooklang" => import::from_cooklang(source, lang),
        "schema-org" => match serde_json::from_str(source) {
            Ok(json_ld) => import::from_schema_org(&json_ld, lang),
            Err(err) => {
                let message = format!(
                    "That is not JSON-LD: {err}. Paste the JSON inside the page's <script type=\"application/ld+json\">."
                );
                return page(&req, env, Some(session), Extra { message: Some(message), ..Extra::default() })
                    .await;
            }
        },
        other => {
            return Err(ApiError::BadParameters(vec![Diagnostic::new(
                "format",
                format!("`{other}` is not cooklang or schema-org"),
            )]));
        }
    };
    let json = serde_json::to_string_pretty(&draft.doc).map_err(|err| ApiError::Internal(err.to_string()))?;
    page(&req, env, Some(session), Extra { draft: Some((json, draft.problems)), ..Extra::default() }).await
}

/// `POST /kitchen/recipes`: saves a checked draft as the signed-in cook's recipe, through the same
/// create (validation, write limit, overlay, feed) as `POST /api/recipes`.
pub async fn save_draft(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let (session, form) =
        signed_in_form_within(&mut req, env, domain::recipes::write::MAX_BODY_BYTES).await?;
    let text = field(&form, "recipe").to_string();
    let doc: serde_json::Value = match domain::api::body::parse_json(text.as_bytes()) {
        Ok(doc) => doc,
        Err(err) => {
            let problems = vec![Diagnostic::new("(json)", err.to_string())];
            return page(
                &req,
                env,
                Some(session),
                Extra { draft: Some((text, problems)), ..Extra::default() },
            )
            .await;
        }
    };
    let caller = store::KeyOwner {
        key_label: "kitchen".into(),
        account_id: session.account_id,
        handle: session.handle.clone(),
        display_name: session.display_name.clone(),
        role: String::new(),
    };
    let rate = auth::count_write(env, &caller).await?;
    let saved = match crate::routes::writes::create_recipe(env, &caller, doc).await {
        Ok(saved) => redirect(&format!("/r/{}", saved.slug), &[]),
        Err(ApiError::Invalid(problems)) => {
            page(&req, env, Some(session), Extra { draft: Some((text, problems)), ..Extra::default() }).await
        }
        Err(other) => Err(other),
    };
    http::rated(saved, &rate, &req.path())
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
