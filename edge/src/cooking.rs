//! What cooks expect (issue 16): a recipe scaled to the table and in the cook's units
//! (`/r/{slug}.json?servings=N&units=metric|us`, the page, MCP `get_recipe`), and a recipe as Cooklang
//! (`/r/{slug}.cook?lang=xx`). Each parses its query, reads the recipe's current document (overlay or
//! build) and calls `domain::cooking`.

use domain::Diagnostic;
use domain::cooking::{self, Adjusted, Request as CookRequest};
use domain::diagnostic::once_each;
use domain::recipe::Lang;
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::{http, overlay};

/// The `servings` and `units` of a request's query; a bad value is a 400 naming its parameter.
pub fn request_of(req: &Request) -> Result<CookRequest, ApiError> {
    let url = req.url()?;
    let pairs: Vec<(String, String)> =
        url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    params(&pairs)
}

/// `servings` and `units` from query pairs (also the MCP tool's arguments).
pub fn params(pairs: &[(String, String)]) -> Result<CookRequest, ApiError> {
    CookRequest::from_params(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(ApiError::BadParameters)
}

/// `GET /r/{slug}.json` with `servings` or `units`: the recipe adjusted. Without them the stored
/// document answers as it is ([`overlay::recipe_json`]).
pub async fn recipe_json(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let request = request_of(&req)?;
    if request.is_plain() {
        return overlay::recipe_json(req, env, slug).await;
    }
    let adjusted = adjusted(&req, env, slug, request).await?;
    let body = serde_json::to_vec(&adjusted).map_err(|err| ApiError::Internal(err.to_string()))?;
    let mut response = Response::from_bytes(body)?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    headers.set("ETag", &variant_etag(&adjusted, "json", request))?;
    http::cors(headers);
    Ok(response)
}

/// A strong validator for one representation: the document's version and what was asked of it.
fn variant_etag(adjusted: &Adjusted, form: &str, request: CookRequest) -> String {
    let version = adjusted.published.server.version;
    let servings = request.servings.map(|n| n.to_string()).unwrap_or_default();
    let units = request.units.map(|units| units.code()).unwrap_or_default();
    format!("\"{version}-{form}-{servings}-{units}\"")
}

/// The recipe `slug` as `request` asks for it; also the MCP `get_recipe` tool.
pub async fn adjusted(
    req: &Request,
    env: &Env,
    slug: &str,
    request: CookRequest,
) -> Result<Adjusted, ApiError> {
    let published = overlay::public_document(req, env, slug).await?;
    Ok(cooking::adjust(&published, request))
}

/// `GET /r/{slug}.cook?lang=xx`: one language of the recipe as Cooklang (the recipe's English, else
/// its first language, without `lang`); `servings` and `units` apply as they do to the JSON.
pub async fn recipe_cook(req: Request, env: &Env, slug: &str) -> Result<Response, ApiError> {
    let url = req.url()?;
    let pairs: Vec<(String, String)> =
        url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let mut problems = Vec::new();
    let mut lang = None;
    let langs = pairs.iter().filter(|(k, _)| k == "lang").map(|(k, v)| (k.as_str(), v.as_str()));
    for (_, value) in once_each(langs, &mut problems) {
        match Lang::parse(value) {
            Some(parsed) => lang = Some(parsed),
            None => problems.push(Diagnostic::new("lang", "must be `en`, `he` or `pt`")),
        }
    }
    let request = match params(&pairs) {
        Ok(request) if problems.is_empty() => request,
        Ok(_) => return Err(ApiError::BadParameters(problems)),
        Err(ApiError::BadParameters(more)) => {
            problems.extend(more);
            return Err(ApiError::BadParameters(problems));
        }
        Err(other) => return Err(other),
    };
    let adjusted = adjusted(&req, env, slug, request).await?;
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
    let site = url.origin().ascii_serialization();
    let text = cooking::cooklang::export(&adjusted.published, lang.unwrap_or(Lang::En), &site);
    let mut response = Response::from_bytes(text.into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "text/plain; charset=utf-8")?;
    headers.set("Content-Disposition", &format!("inline; filename=\"{slug}.cook\""))?;
    headers.set("Cache-Control", "public, max-age=0, must-revalidate")?;
    let form = format!("cook{}", lang.map(|lang| lang.code()).unwrap_or_default());
    headers.set("ETag", &variant_etag(&adjusted, &form, request))?;
    http::cors(headers);
    Ok(response)
}
