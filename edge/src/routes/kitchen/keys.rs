//! The account's API keys, from the kitchen: a labelled key made (`POST /kitchen/keys`, shown in that
//! answer only) and one revoked (`POST /kitchen/keys/{id}/revoke`).

use domain::site::limits::NEW_KEYS;
use worker::{Env, Request, Response};

use super::{Extra, page};
use crate::auth::{self, now_iso, sha256_hex};
use crate::error::ApiError;
use crate::http;
use crate::store::{self, Session};
use crate::web::{field, redirect, signed_in_form};

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
