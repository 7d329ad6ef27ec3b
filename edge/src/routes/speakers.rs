//! Speaker names set by people: `PUT /api/episodes/:id/speakers/:label` for editors, and
//! the public feed of those decisions (`GET /api/episodes/changes`) that `builder sync` commits to
//! git. Every quote answer shows a decision at once through `crate::decisions`; the SQL of the table
//! is in `store::speakers`.

use std::collections::BTreeMap;

use domain::api::FeedAsked;
use domain::quotes::transcript::NameState;
use domain::quotes::transcript::names::{
    self, NameInputs, SpeakerChange, SpeakerChangePage, decision_from_body,
};
use domain::site::limits::RateDecision;
use serde_json::json;
use worker::{Env, Request, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::store::{self, KeyOwner, NewDecision};
use crate::{decisions, http};

/// Roles that may set speaker names.
const EDITOR_ROLES: &[&str] = &["editor", "admin"];

/// Whether an account of `role` may set speaker names.
pub(crate) fn may_edit(role: &str) -> bool {
    EDITOR_ROLES.contains(&role)
}

/// `%xx` escapes of a path segment decoded (labels such as `Ana Lima` arrive as `Ana%20Lima`).
fn decode_segment(segment: &str) -> Result<String, ApiError> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] == b'%' {
            let hex = segment.get(idx + 1..idx + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                return Err(ApiError::NotFound(format!("`{segment}` is not a well-formed path segment")));
            };
            out.push(byte);
            idx += 3;
        } else {
            out.push(bytes[idx]);
            idx += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ApiError::NotFound(format!("`{segment}` is not UTF-8")))
}

/// `PUT /api/episodes/:id/speakers/:label` with `{name, note}`: an editor names a voice.
///
/// Order of checks: key (401), role (403), rate limit (429), episode and label (404), body (415, 413,
/// 400, 422).
pub async fn decide(mut req: Request, env: &Env, id: &str, label: &str) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let rate = admit(env, &caller).await?;
    let label = decode_segment(label)?;
    let inputs = labelled(env, id, &label).await?;
    let body = http::json_body(&mut req).await?;
    let (name, note) = decision_from_body(&body).map_err(ApiError::Invalid)?;
    let body = save(env, &caller, &inputs, id, &label, &name, note.as_deref()).await?;
    let mut response = Response::from_bytes(body.to_string().into_bytes())?;
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    crate::headers::rate_limit(headers, &rate);
    http::cors(headers);
    Ok(response)
}

/// The editor's role (403), then the account's write limit (429): the first checks of a decision,
/// from the API or the review queue.
pub async fn admit(env: &Env, editor: &KeyOwner) -> Result<RateDecision, ApiError> {
    check_role(editor)?;
    auth::count_write(env, editor).await
}

/// 403 unless the account may set speaker names.
pub fn check_role(editor: &KeyOwner) -> Result<(), ApiError> {
    if !may_edit(&editor.role) {
        return Err(ApiError::Forbidden(format!(
            "setting a speaker's name needs the editor role; `{}` has the role `{}`",
            editor.handle, editor.role
        )));
    }
    Ok(())
}

/// What resolving an episode's names needs, when it has the label (else 404).
pub async fn labelled(env: &Env, id: &str, label: &str) -> Result<NameInputs, ApiError> {
    let inputs = decisions::name_inputs(env, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no episode `{id}`")))?;
    if !inputs.has_label(label) {
        return Err(ApiError::NotFound(format!("episode `{id}` has no speaker label `{label}`")));
    }
    Ok(inputs)
}

/// Stores the decision with the editor's account, and answers the label's name and state as they
/// now stand.
pub async fn save(
    env: &Env,
    editor: &KeyOwner,
    inputs: &NameInputs,
    id: &str,
    label: &str,
    name: &str,
    note: Option<&str>,
) -> Result<serde_json::Value, ApiError> {
    names::check_decidable(label).map_err(|problem| ApiError::Invalid(vec![problem]))?;
    let now = now_iso();
    let decision = NewDecision {
        episode_id: id,
        label,
        name,
        note,
        account_id: editor.account_id,
        editor: &editor.handle,
        at: &now,
    };
    let seq = store::add_decision(&store::db(env)?, decision).await?;
    crate::live::decisions::note_decided(id);
    let live = crate::live::Live::get(env, true).await?;
    let in_force = decisions::decisions_of(env, &live, &[id]).await?;
    let reports = inputs.resolve_with(in_force.get(id).unwrap_or(&BTreeMap::new()));
    let report = reports.get(label);
    Ok(json!({
        "episode": id,
        "speaker": label,
        "name": report.and_then(|r| r.name.clone()),
        "name_state": report.map_or(NameState::Human, |r| r.name_state),
        "human": report.and_then(|r| r.human.clone()),
        "seq": seq,
        "at": now,
    }))
}

/// `GET /api/episodes/changes?since=<seq>&limit=<n>`: every decision after `since`, oldest first, at
/// most `limit` and 1 MiB of them a page (`domain::paging`).
pub async fn changes(env: &Env, FeedAsked { since, limit }: FeedAsked) -> Result<Response, ApiError> {
    let db = store::db(env)?;
    let items: Vec<SpeakerChange> = store::decisions_since(&db, since, limit).await?;
    let listed = items.len();
    let page = SpeakerChangePage {
        feed: Some(store::feed_id(&db).await?),
        ..SpeakerChangePage::of(items, listed, limit as usize)
    };
    let (next_since, last) = (page.next_since, page.last_seq(since));
    let mut body = serde_json::to_value(page).map_err(|err| ApiError::Internal(err.to_string()))?;
    body["next_cursor"] = json!(next_since.map(|seq| seq.to_string()));
    body["last_seq"] = json!(last);
    http::public_json(&body, 0)
}
