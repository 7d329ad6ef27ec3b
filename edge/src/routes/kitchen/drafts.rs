//! Recipes brought in from the kitchen: a pasted Cooklang text or schema.org JSON-LD made a draft
//! (`POST /kitchen/import`), and a checked draft saved as the cook's recipe (`POST /kitchen/recipes`).

use domain::Diagnostic;
use domain::recipes::cooking::import;
use worker::{Env, Request, Response};

use super::{Extra, page};
use crate::auth;
use crate::error::ApiError;
use crate::http;
use crate::store;
use crate::web::{field, redirect, signed_in_form_within};

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
