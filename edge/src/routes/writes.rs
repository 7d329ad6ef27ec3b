//! Keyed recipe writes: `GET /api/me`, `POST /api/recipes`, `PUT /api/r/{slug}`,
//! `POST /api/r/{slug}/fork`. Each parses and checks the request, calls `domain` for the document to
//! store, and writes the overlay row and its change-feed item in one D1 transaction.
//!
//! Order of checks: key (401), rate limit (429), `If-Match` (400 when it is not a list of entity
//! tags), media type (415), size (413), JSON (400, duplicate keys too), document (422), slug (404),
//! owner (403), licence (422), version (412 when `If-Match` names no current tag, RFC 9110 §13.1.1).
//! A request that fails any of them writes nothing but its rate-limit count. `If-Match` is optional
//! (no 428): a change without it applies to whatever version is current, and a lost race is then a
//! 409.

use domain::Diagnostic;
use domain::recipes::recipe::{self, Published, Recipe, Source};
use domain::recipes::write::{self, ChangeKind, IfMatch, MAX_NOTE_CHARS, etag};
use domain::site::limits::RateDecision;
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::overlay::{self, Provenance};
use crate::store::{self, KeyOwner, NewRow, Update};
use crate::{http, idempotency};

/// Tries at a free slug before giving up; concurrent forks of one recipe each lose at most once to
/// every other, so this bounds the number of concurrent forks that all succeed.
const SLUG_ATTEMPTS: usize = 64;

/// `GET /api/me`: who the key belongs to.
pub async fn me(req: &Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::caller(req, env).await?;
    let body = json!({
        "handle": caller.handle,
        "display_name": caller.display_name,
        "key_label": caller.key_label,
        "role": caller.role,
    });
    let mut response = Response::from_bytes(body.to_string().into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    http::cors(headers);
    Ok(response)
}

/// Takes `note` and `licence` out of a body and validates the rest as a recipe; every problem of
/// both is reported. `licence`, when known, is the one the recipe gets: a body naming another is
/// refused (`write::licence_problem`).
fn document(
    mut value: Value,
    note_required: bool,
    licence: Option<&str>,
) -> Result<(Recipe, Option<String>), ApiError> {
    let mut problems = Vec::new();
    if let Some(licence) = licence {
        problems.extend(write::licence_problem(value.get("licence"), licence));
    }
    let note = value.as_object_mut().and_then(|obj| obj.remove("note"));
    let note = match note {
        None if note_required => {
            problems.push(Diagnostic::new("note", "is required: say what you changed"));
            None
        }
        None => None,
        Some(Value::String(note)) if note.trim().is_empty() && note_required => {
            problems.push(Diagnostic::new("note", "must not be empty"));
            None
        }
        Some(Value::String(note)) if note.chars().count() > MAX_NOTE_CHARS => {
            problems.push(Diagnostic::new("note", format!("must be at most {MAX_NOTE_CHARS} characters")));
            None
        }
        Some(Value::String(note)) => {
            problems.extend(domain::clean::check("note", &note, domain::clean::TextKind::Prose));
            Some(note.trim().to_string()).filter(|note| !note.is_empty())
        }
        Some(_) => {
            problems.push(Diagnostic::new("note", "must be a string"));
            None
        }
    };
    match recipe::validate(&value, Source::Api) {
        Ok((recipe, _)) if problems.is_empty() => Ok((recipe, note)),
        Ok(_) => Err(ApiError::Invalid(problems)),
        Err(more) => {
            problems.extend(more);
            Err(ApiError::Invalid(problems))
        }
    }
}

/// A JSON answer to a write: never cached, with the rate-limit state.
fn written(
    status: u16,
    doc: &str,
    version: u64,
    rate: &RateDecision,
    location: Option<&str>,
) -> Result<Response, ApiError> {
    let mut response = Response::from_bytes(doc.as_bytes().to_vec())?.with_status(status);
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    headers.set("ETag", &etag(version))?;
    crate::headers::rate_limit(headers, rate);
    if let Some(location) = location {
        headers.set("Location", location)?;
    }
    http::cors(headers);
    Ok(response)
}

pub(crate) fn to_json(published: &Published) -> Result<String, ApiError> {
    serde_json::to_string(published).map_err(|err| ApiError::Internal(format!("serialising: {err}")))
}

/// Stores a new recipe (a create or a fork) under the first free slug its title suggests. The slug's
/// uniqueness is the overlay table's primary key: when a concurrent write took the slug between our
/// look and our insert, the insert fails and we look again.
pub(crate) async fn insert_new(
    env: &Env,
    caller: &KeyOwner,
    kind: ChangeKind,
    note: Option<String>,
    make: impl Fn(&str) -> Published,
    base: &str,
) -> Result<Published, ApiError> {
    let db = store::db(env)?;
    let built = overlay::built(env).await?;
    for _ in 0..SLUG_ATTEMPTS {
        let taken = store::slugs_like(&db, base).await?;
        let slug =
            domain::recipes::slug::first_free(base, |s| built.contains(s) || taken.iter().any(|t| t == s));
        // While the insert waits on D1 this write holds the document once, as the JSON it stores:
        // the recipe is made again from `make` for the answer.
        let (doc, forked_from, now, search) = {
            let published = make(&slug);
            let now = published.server.created_at.clone().unwrap_or_else(now_iso);
            (
                to_json(&published)?,
                published.server.forked_from.clone(),
                now,
                overlay::search_entry(&published),
            )
        };
        let note = note.clone().unwrap_or_else(|| write::default_note(kind, &slug, forked_from.as_deref()));
        let row = NewRow {
            slug: &slug,
            account_id: caller.account_id,
            owner: &caller.handle,
            forked_from: forked_from.as_deref(),
            doc: &doc,
            kind: kind.code(),
            note: &note,
            now: &now,
            search,
        };
        match store::insert_recipe(&db, row).await {
            Ok(()) => return Ok(make(&slug)),
            Err(err) if store::is_unique_violation(&err) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(ApiError::Conflict(format!("no free slug for `{base}` after {SLUG_ATTEMPTS} tries; try again")))
}

/// `POST /api/recipes`.
pub async fn create(req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let rate = auth::count_write(env, &caller).await?;
    let instance = req.path();
    http::rated(create_as(req, env, &caller, &rate).await, &rate, &instance)
}

async fn create_as(
    mut req: Request,
    env: &Env,
    caller: &KeyOwner,
    rate: &RateDecision,
) -> Result<Response, ApiError> {
    let body = http::json_body(&mut req).await?;
    let idempotency_key = idempotency::key_of(&req, Some(&body))?;
    idempotency::once(env, caller, idempotency_key, async {
        let published = create_recipe(env, caller, body).await?;
        let location = format!("/r/{}.json", published.slug);
        written(201, &to_json(&published)?, 1, rate, Some(&location))
    })
    .await
}

/// Stores a new recipe from a request body (the document, optionally with `note`); also the
/// `create_recipe` tool. The caller's write has been counted.
pub async fn create_recipe(env: &Env, caller: &KeyOwner, body: Value) -> Result<Published, ApiError> {
    let (recipe, note) = document(body, false, Some(recipe::DEFAULT_LICENCE))?;
    let base = domain::recipes::slug::from_recipe(&recipe);
    let now = now_iso();
    insert_new(
        env,
        caller,
        ChangeKind::Create,
        note,
        |slug| write::created(slug, recipe.clone(), &caller.handle, &now),
        &base,
    )
    .await
}

/// `POST /api/r/{slug}/fork`: the caller's own copy.
pub async fn fork(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let rate = auth::count_write(env, &caller).await?;
    http::rated(fork_as(&req, env, slug, &caller, &rate).await, &rate, &req.path())
}

async fn fork_as(
    req: &Request,
    env: &Env,
    slug: &str,
    caller: &KeyOwner,
    rate: &RateDecision,
) -> Result<Response, ApiError> {
    let idempotency_key = idempotency::key_of(req, None)?;
    idempotency::once(env, caller, idempotency_key, async {
        let published = fork_recipe(env, caller, slug).await?;
        let location = format!("/r/{}.json", published.slug);
        written(201, &to_json(&published)?, 1, rate, Some(&location))
    })
    .await
}

/// Stores the caller's copy of `slug`; also the `fork_recipe` tool.
pub async fn fork_recipe(env: &Env, caller: &KeyOwner, slug: &str) -> Result<Published, ApiError> {
    let db = store::db(env)?;
    let (source, _) = overlay::current(env, &db, slug).await?.ok_or_else(|| no_recipe(slug))?;
    let base = domain::recipes::slug::from_recipe(&source.recipe);
    let now = now_iso();
    insert_new(
        env,
        caller,
        ChangeKind::Fork,
        None,
        |new_slug| write::forked(&source, new_slug, &caller.handle, &now),
        &base,
    )
    .await
}

/// `PUT /api/r/{slug}`: a new version of the caller's own recipe.
pub async fn change(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let rate = auth::count_write(env, &caller).await?;
    let instance = req.path();
    http::rated(change_as(req, env, slug, &caller, &rate).await, &rate, &instance)
}

async fn change_as(
    mut req: Request,
    env: &Env,
    slug: &str,
    caller: &KeyOwner,
    rate: &RateDecision,
) -> Result<Response, ApiError> {
    let if_match = match req.headers().get("If-Match")? {
        None => None,
        Some(header) => Some(IfMatch::parse(&header).ok_or_else(|| {
            ApiError::BadHeader(vec![Diagnostic::new(
                "If-Match",
                format!("`{header}` is not `*` nor a list of entity tags, such as \"3\" (with the quotes)"),
            )])
        })?),
    };
    let body = http::json_body(&mut req).await?;
    let next = change_recipe(env, caller, slug, body, if_match.as_ref()).await?;
    written(200, &to_json(&next)?, next.server.version, rate, None)
}

/// Stores a new version of the caller's own recipe from a body (the document plus `note`) and an
/// optional `If-Match`; also the `update_recipe` tool, whose `version` is the precondition
/// [`IfMatch::version`].
pub async fn change_recipe(
    env: &Env,
    caller: &KeyOwner,
    slug: &str,
    body: Value,
    if_match: Option<&IfMatch>,
) -> Result<Published, ApiError> {
    let asked_licence = body.get("licence").cloned();
    let (recipe, note) = document(body, true, None)?;
    let db = store::db(env)?;
    let (current, provenance) = overlay::current(env, &db, slug).await?.ok_or_else(|| no_recipe(slug))?;
    let mine = match provenance {
        Provenance::Overlay { account_id } => account_id == caller.account_id,
        Provenance::Built => current.server.owner == caller.handle,
    };
    if !mine {
        return Err(ApiError::Forbidden(format!(
            "`{slug}` belongs to {}; fork it with POST /api/r/{slug}/fork to change your own copy",
            current.server.owner
        )));
    }
    if let Some(problem) = write::licence_problem(asked_licence.as_ref(), &current.recipe.licence) {
        return Err(ApiError::Invalid(vec![problem]));
    }
    if let Some(precondition) = if_match
        && !precondition.holds(current.server.version)
    {
        return Err(stale(slug, precondition, current.server.version));
    }
    // The compare-and-set below expects the version the precondition held for.
    let expected = current.server.version;
    let now = now_iso();
    if matches!(provenance, Provenance::Built) {
        // A recipe of the caller's that only the build holds (its overlay row retired): the row takes
        // the built document first, so the compare-and-set below has the version the caller saw.
        store::adopt_built(&db, &current, caller.account_id, &to_json(&current)?, &now).await?;
    }
    let next = write::changed(&current, recipe, &now);
    let doc = to_json(&next)?;
    let note = note.unwrap_or_else(|| write::default_note(ChangeKind::Change, slug, None));
    let search = overlay::search_entry(&next);
    let update = Update {
        slug,
        account_id: caller.account_id,
        owner: &caller.handle,
        expected,
        doc: &doc,
        note: &note,
        now: &now,
        search,
    };
    if !store::update_recipe(&db, update).await? {
        let detail = format!(
            "`{slug}` changed while you were writing: version {expected} is no longer current; read it again"
        );
        // Losing the race breaks the caller's `If-Match` when they sent one (412); otherwise it is a
        // plain conflict with another writer (409).
        return Err(if if_match.is_some_and(|precondition| *precondition != IfMatch::Any) {
            ApiError::PreconditionFailed(detail)
        } else {
            ApiError::Conflict(detail)
        });
    }
    Ok(next)
}

fn stale(slug: &str, precondition: &IfMatch, current: u64) -> ApiError {
    let named = match precondition {
        IfMatch::Any => "*".to_string(),
        IfMatch::Tags(tags) => tags.join(", "),
    };
    ApiError::PreconditionFailed(format!(
        "If-Match names {named}, but the current version of `{slug}` is {} (a weak W/ tag never \
         matches); read it again",
        etag(current)
    ))
}

fn no_recipe(slug: &str) -> ApiError {
    ApiError::NotFound(format!("no recipe `{slug}`"))
}
