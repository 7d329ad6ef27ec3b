//! What cooks expect: a recipe scaled to the table and in the cook's units
//! (`/r/{slug}.json?servings=N&units=metric|us`), and a recipe as Cooklang (`/r/{slug}.cook?lang=xx`).
//! The router reads each one's typed input (`domain::api::RecipeView`,
//! `domain::api::RecipeCooklang`); these read the recipe's current document (overlay or build) and
//! call `domain::recipes::cooking`.

use domain::api::CooklangAsked;
use domain::recipes::cooking::{self, Adjusted, Request as CookRequest};
use domain::recipes::recipe::Lang;
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::routes::recipes;
use crate::{http, overlay};

/// `GET /r/{slug}.json` with `servings` or `units`: the recipe adjusted. Without them the stored
/// document answers as it is ([`recipes::stored_json`]).
pub async fn recipe_json(
    req: Request,
    env: &Env,
    slug: &str,
    request: CookRequest,
) -> Result<Response, ApiError> {
    if request.is_plain() {
        return recipes::stored_json(req, env, slug).await;
    }
    let adjusted = adjusted(&req, env, slug, request).await?;
    let body = serde_json::to_vec(&adjusted).map_err(|err| ApiError::Internal(err.to_string()))?;
    respond(body, "application/json; charset=utf-8", &representation_etag(&adjusted, "json", request), None)
}

/// `GET /r/{slug}.cook?lang=xx`: one language of the recipe as Cooklang (the recipe's English, else
/// its first language, without `lang`); `servings` and `units` apply as they do to the JSON.
pub async fn recipe_cook(
    req: &Request,
    env: &Env,
    CooklangAsked { slug, lang, request }: CooklangAsked,
) -> Result<Response, ApiError> {
    let adjusted = adjusted(req, env, &slug, request).await?;
    let recipe = &adjusted.published.recipe;
    if let Some(lang) = lang
        && !recipe.texts.contains_key(&lang)
    {
        let has: Vec<&str> = recipe.languages().iter().map(|lang| lang.code()).collect();
        return Err(ApiError::NotFound(format!(
            "recipe `{slug}` has no `{}` text; it has {}",
            lang.code(),
            has.join(", ")
        )));
    }
    let site = req.url()?.origin().ascii_serialization();
    let text = cooking::cooklang::export(&adjusted.published, lang.unwrap_or(Lang::En), &site);
    let form = format!("cook{}", lang.map(|lang| lang.code()).unwrap_or_default());
    let disposition = format!("inline; filename=\"{slug}.cook\"");
    respond(
        text.into_bytes(),
        "text/plain; charset=utf-8",
        &representation_etag(&adjusted, &form, request),
        Some(&disposition),
    )
}

/// The recipe `slug` as `request` asks for it: what `GET /r/{slug}.json` with `servings` or `units`
/// and the `get_recipe` tool answer.
pub(crate) async fn adjusted(
    req: &Request,
    env: &Env,
    slug: &str,
    request: CookRequest,
) -> Result<Adjusted, ApiError> {
    let (published, _) = overlay::current_document(req, env, slug).await?;
    Ok(cooking::adjust(&published, request))
}

/// A public answer that is revalidated on every use, with its validator.
fn respond(
    body: Vec<u8>,
    content_type: &str,
    etag: &str,
    disposition: Option<&str>,
) -> Result<Response, ApiError> {
    let mut response = Response::from_bytes(body)?;
    let headers = response.headers_mut();
    headers.set("Content-Type", content_type)?;
    if let Some(disposition) = disposition {
        headers.set("Content-Disposition", disposition)?;
    }
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    headers.set("ETag", etag)?;
    http::cors(headers);
    Ok(response)
}

/// A strong validator for one representation: the document's version and what was asked of it.
fn representation_etag(adjusted: &Adjusted, form: &str, request: CookRequest) -> String {
    let version = adjusted.published.server.version;
    let servings = request.servings.map(|n| n.to_string()).unwrap_or_default();
    let units = request.units.map(|units| units.code()).unwrap_or_default();
    format!("\"{version}-{form}-{servings}-{units}\"")
}
