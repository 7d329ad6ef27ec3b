//! Shared diet versions: `POST /api/r/{slug}/variant/{gf|vegan|both}`, made once and then returned to
//! every key holder.
//!
//! "Once" is a D1 row, not a lock in memory (isolates share nothing): the first caller inserts the
//! `(source_slug, kind)` claim row of `diet_versions` — its primary key lets exactly one insert win —
//! and is the only one that asks the model. The others read the row and poll until it says `made`
//! (and answer with the version) or `failed` (and answer 502). The version and the claim's `made` are
//! written in one batch, so no caller ever sees `made` without the recipe. A `making` row whose maker
//! died is taken over once it is older than the upstream time budget, with a compare-and-set on
//! `attempt` so that again only one caller wins.

use std::time::Duration;

use domain::recipes::ai::{Expect, MAX_ATTEMPTS};
use domain::recipes::diet;
use domain::recipes::recipe::DietKind;
use domain::recipes::recipe::{GeneratedBy, Published, SITE_OWNER, ServerFields, VariantOf};
use domain::recipes::write::default_note;
use worker::{Delay, Env, Request, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::idempotency;
use crate::overlay::{self};
use crate::provider::{self, charge, charged, generate};
use crate::routes::ai::{self, AiOutcome};
use crate::routes::writes;
use crate::store::{self, DietClaim, KeyOwner, NewRow};

/// How often a waiting caller looks at the claim row.
const POLL: Duration = Duration::from_millis(250);
/// Slugs tried when `<slug>-gf` and its successors are taken by people's recipes.
const SLUG_ATTEMPTS: usize = 16;

/// Seconds after which a `making` claim counts as abandoned: every attempt's upstream budget plus
/// a margin for storing.
fn stale_after_s(env: &Env) -> u64 {
    let timeout_ms = provider::timeout(env).as_millis() as u64;
    timeout_ms * MAX_ATTEMPTS as u64 / 1000 + 15
}

/// `POST /api/r/{slug}/variant/{kind}` as a function (the MCP tool `make_diet_version` calls it too).
pub async fn diet_version(
    env: &Env,
    caller: &KeyOwner,
    slug: &str,
    kind: &str,
) -> Result<AiOutcome, ApiError> {
    let kind = DietKind::parse(kind).ok_or_else(|| {
        ApiError::BadParameters(vec![domain::Diagnostic::new("kind", "must be gf, vegan or both")])
    })?;
    let db = store::db(env)?;
    let (source, _) = overlay::current(env, &db, slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no recipe `{slug}`")))?;
    if diet::satisfies(&source.recipe, kind) {
        return Ok(AiOutcome { status: 200, published: source, rate: None });
    }
    let stale_s = stale_after_s(env);
    let mut waited = false;
    let deadline = auth::now_s() + stale_s;
    loop {
        let now = auth::now_s();
        let claim = store::diet_claim(&db, slug, kind.code()).await?;
        let attempt = match claim {
            Some(DietClaim { state, variant_slug: Some(made), .. }) if state == "made" => {
                let (published, _) = overlay::current(env, &db, &made).await?.ok_or_else(|| {
                    ApiError::Internal(format!("diet version `{made}` is registered but missing"))
                })?;
                return Ok(AiOutcome { status: 200, published, rate: None });
            }
            Some(DietClaim { state, error, .. }) if state == "failed" && waited => {
                return Err(failure_for_waiters(error));
            }
            Some(DietClaim { state, claimed_s, .. }) if state == "making" && claimed_s + stale_s > now => {
                if now > deadline {
                    return Err(ApiError::Upstream(
                        "the diet version is still being made; ask again soon".into(),
                    ));
                }
                waited = true;
                Delay::from(POLL).await;
                continue;
            }
            // Failed before we came, or abandoned: try to take it over.
            Some(DietClaim { attempt, .. }) => {
                provider::provider(env)?;
                if !store::retake_diet_claim(
                    &db,
                    slug,
                    kind.code(),
                    attempt,
                    now,
                    now.saturating_sub(stale_s),
                )
                .await?
                {
                    continue;
                }
                attempt + 1
            }
            None => {
                // Without a provider nobody could make it: say so before claiming.
                provider::provider(env)?;
                if !store::claim_diet(&db, slug, kind.code(), now).await? {
                    continue;
                }
                1
            }
        };
        return make(env, caller, &source, kind, attempt).await;
    }
}

/// How a failed claim's `error` starts when the checks refused the model's answer; the refused
/// problems follow as JSON.
const REFUSED: &str = "refused: ";

/// What a caller who waited for another request's attempt is answered when that attempt failed: the
/// same kind of error the attempt itself answered.
fn failure_for_waiters(error: Option<String>) -> ApiError {
    let error = error.unwrap_or_else(|| "the diet version could not be made".into());
    match error.strip_prefix(REFUSED).map(serde_json::from_str::<Vec<domain::Diagnostic>>) {
        Some(Ok(problems)) => ApiError::UpstreamInvalid(problems),
        _ => ApiError::Upstream(error),
    }
}

/// Asks the model for the version and stores it; the claim (held by us at `attempt`) ends `made` or
/// `failed`.
async fn make(
    env: &Env,
    caller: &KeyOwner,
    source: &Published,
    kind: DietKind,
    attempt: i64,
) -> Result<AiOutcome, ApiError> {
    let db = store::db(env)?;
    let fail = |err: ApiError| async {
        // Waiting callers are answered with this: what failed on our side stays in the log.
        let why = match err.cause() {
            // Kept whole, so a waiter hears that the checks refused the answer, with their reasons.
            ApiError::UpstreamInvalid(problems) => {
                format!("{REFUSED}{}", serde_json::to_string(problems).unwrap_or_default())
            }
            ApiError::Upstream(why) | ApiError::AiRefused(why) => why.clone(),
            ApiError::Internal(_) | ApiError::Unavailable(_) => "the diet version could not be stored".into(),
            other => other.detail(),
        };
        let _ = store::fail_diet_claim(&db, &source.slug, kind.code(), attempt, &why).await;
        err
    };
    let provider = match provider::provider(env) {
        Ok(provider) => provider,
        Err(err) => return Err(fail(err).await),
    };
    let charge = match charge(env, caller).await {
        Ok(charge) => charge,
        Err(err) => return Err(fail(err).await),
    };
    let messages = domain::recipes::ai::variant_messages(&source.recipe, kind);
    let digest_of = messages.last().map(|m| m.content.clone()).unwrap_or_default();
    let work = async {
        let mut recipe =
            generate(env, &provider, messages, Expect::Variant(kind), Some(&source.recipe)).await?;
        // A diet version is a derivative: it keeps the source's licence (CC0 stays CC0, CC BY keeps
        // its attribution).
        recipe.licence = source.recipe.licence.clone();
        let site = store::site_account(&db).await?;
        let now = now_iso();
        let base = diet::variant_slug(&source.slug, kind);
        let built = overlay::built(env).await?;
        for _ in 0..SLUG_ATTEMPTS {
            let taken = store::slugs_like(&db, &base).await?;
            let slug = domain::recipes::slug::first_free(&base, |s| {
                built.contains(s) || taken.iter().any(|t| t == s)
            });
            let published = Published {
                slug: slug.clone(),
                recipe: recipe.clone(),
                server: ServerFields {
                    owner: SITE_OWNER.to_string(),
                    forked_from: None,
                    variant_of: Some(VariantOf { slug: source.slug.clone(), kind }),
                    created_at: Some(now.clone()),
                    updated_at: Some(now.clone()),
                    version: 1,
                    generated_by: Some(GeneratedBy {
                        model: provider.model().to_string(),
                        prompt_sha256: domain::recipes::ai::prompt_sha256(&digest_of),
                    }),
                    photo: None,
                },
            };
            let doc = writes::to_json(&published)?;
            let note = format!(
                "{} ({})",
                default_note(domain::recipes::write::ChangeKind::Create, &slug, None),
                kind.describe()
            );
            let search = overlay::search_entry(&published);
            let row = NewRow {
                slug: &slug,
                account_id: site,
                owner: SITE_OWNER,
                forked_from: None,
                doc: &doc,
                kind: "create",
                note: &note,
                now: &now,
                search,
            };
            match store::insert_diet_version(&db, row, &source.slug, kind.code(), attempt).await {
                Ok(()) => return Ok(published),
                Err(err) if store::is_unique_violation(&err) => continue,
                Err(err) => return Err(err.into()),
            }
        }
        Err(ApiError::Conflict(format!("no free slug for `{base}`; try again")))
    };
    match charged(env, &charge, work).await {
        Ok(published) => Ok(AiOutcome { status: 201, published, rate: Some(charge.decision) }),
        Err(err) => Err(fail(err).await),
    }
}

/// `POST /api/r/{slug}/variant/{kind}`.
pub async fn route(req: Request, env: &Env, slug: &str, kind: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let idempotency_key = idempotency::key_of(&req, None)?;
    idempotency::once(env, &caller, idempotency_key, async {
        ai::respond(&diet_version(env, &caller, slug, kind).await?)
    })
    .await
}
