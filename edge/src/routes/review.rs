//! The editors' review queue (`/kitchen/review`): signed in (the kitchen's session) with the
//! `editor` or `admin` role.
//!
//! The queue is the build's (`episodes/review.json`, `domain::quotes::transcript::review`) plus the
//! episodes the intake took in since; an episode with decisions since the build has its names
//! resolved again with them (a decision can make another label confident by elimination), and a
//! label that is now confident or decided leaves the queue. The form posts as every page's does
//! (`crate::web`: CSRF token of the session, same-origin `Origin`) and saves through the same code
//! as `PUT /api/episodes/{id}/speakers/{label}` (`crate::routes::speakers`): the same role, limit,
//! checks and record, the editor's account with it.

use std::collections::{BTreeMap, BTreeSet};

use domain::api::ReviewAsked;
use domain::quotes::page::{Refused, ReviewView, state_word};
use domain::quotes::transcript::EpisodeRecord;
use domain::quotes::transcript::names::{
    HumanDecision, MAX_DECISION_NAME_CHARS, MAX_DECISION_NOTE_CHARS, decision_from_body,
};
use domain::quotes::transcript::review::{Entry, Queue, QueuePart};
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use crate::assets::{built_review_head, fetch_bytes};
use crate::decisions;
use crate::error::ApiError;
use crate::live::Live;
use crate::routes::{pages, speakers};
use crate::store::Session;
use crate::web::{RENDERER, field, has_session_cookie, redirect, signed_in_form_within, signed_in_to_read};

/// Entries a page shows, most cited first.
const SHOWN: usize = 25;

/// What a page of the queue shows: its most cited entries, the people their shows know, and how
/// many entries the queue holds.
struct Shown {
    entries: Vec<Entry>,
    known: BTreeMap<String, Vec<String>>,
    total: usize,
}

/// The build's queue, read a part at a time until a page is full, with the intake's episodes added
/// and decisions since applied. `total` counts the decisions of the parts read: a label decided
/// through the API deep in the queue still counts until the next build. The first part an isolate
/// keeps parsed for as long as the build stands; decisions and taken-in episodes are what this
/// isolate knows (at most a second or two old, `crate::decisions`, `crate::intake`), and D1's own
/// for the episode just decided (`saved`), so an editor always sees their decision.
async fn queue(env: &Env, saved: Option<&str>) -> Result<Shown, ApiError> {
    let head = built_review_head(env).await?;
    let (mut built, mut read) = (head.total, 0);
    let mut kept = Vec::with_capacity(SHOWN);
    built = built.saturating_sub(undecided(env, &head.entries, &mut kept, SHOWN, saved).await?);
    while kept.len() < SHOWN && read < head.parts {
        read += 1;
        let name = format!("episodes/review/{read}.json");
        let Some(bytes) = fetch_bytes(env, name.clone()).await? else { break };
        let part: QueuePart =
            serde_json::from_slice(&bytes).map_err(|err| ApiError::Internal(format!("{name}: {err}")))?;
        built = built.saturating_sub(undecided(env, &part.entries, &mut kept, SHOWN, saved).await?);
    }
    let mut queue = Queue { entries: kept, known: BTreeMap::new() };
    let mut taken_in = Queue::default();
    for summary in
        &crate::live::episodes::taken_in(env, &crate::live::Live::get(env, false).await?).await?.summaries
    {
        if queue.entries.iter().any(|entry| entry.episode == summary.id) {
            continue;
        }
        if let Some(bytes) = crate::live::episodes::episode_file(env, &summary.id, ".json").await? {
            let record: EpisodeRecord = serde_json::from_slice(&bytes)
                .map_err(|err| ApiError::Internal(format!("intake record {}: {err}", summary.id)))?;
            taken_in.add(&record, record.audio_url.as_deref());
        }
    }
    let gone = undecided(env, &taken_in.entries, &mut queue.entries, usize::MAX, saved).await?;
    let total = built + taken_in.entries.len() - gone;
    queue.sort();
    queue.entries.truncate(SHOWN);
    let shows: BTreeSet<&str> = queue.entries.iter().map(|entry| entry.show.as_str()).collect();
    for show in shows {
        let mut known: Vec<String> = head.known.get(show).into_iter().flatten().cloned().collect();
        known.extend(taken_in.known.get(show).into_iter().flatten().cloned());
        domain::sorted::sort(&mut known);
        known.dedup();
        queue.known.insert(show.to_string(), known);
    }
    Ok(Shown { entries: queue.entries, known: queue.known, total })
}

/// Adds to `kept` the first of `entries` not decided since they were queued, until it holds `room`,
/// with their names resolved again (a decision can make another label confident by elimination);
/// answers how many of `entries` left the queue.
async fn undecided(
    env: &Env,
    entries: &[Entry],
    kept: &mut Vec<Entry>,
    room: usize,
    saved: Option<&str>,
) -> Result<usize, ApiError> {
    let mut ids: Vec<&str> = entries.iter().map(|entry| entry.episode.as_str()).collect();
    domain::sorted::sort(&mut ids);
    ids.dedup();
    let in_force = in_force(env, &ids, saved).await?;
    let (mut reports, mut gone) = (BTreeMap::new(), 0);
    for entry in entries {
        let Some(decided) = in_force.get(&entry.episode) else {
            if kept.len() < room {
                kept.push(entry.clone());
            }
            continue;
        };
        if !reports.contains_key(&entry.episode) {
            let resolved = match decisions::name_inputs(env, &entry.episode).await? {
                Some(inputs) => inputs.resolve_with(decided),
                None => BTreeMap::new(),
            };
            reports.insert(entry.episode.clone(), resolved);
        }
        match reports[&entry.episode].get(&entry.label) {
            Some(report) if !report.name_state.is_trustworthy() => {
                if kept.len() < room {
                    kept.push(Entry {
                        name: report.name.clone(),
                        name_state: report.name_state,
                        votes: report.votes.clone(),
                        ..entry.clone()
                    });
                }
            }
            _ => gone += 1,
        }
    }
    Ok(gone)
}

/// The decisions in force for the episodes `ids`: those this isolate knows of, and D1's for the
/// episode just decided.
async fn in_force(
    env: &Env,
    ids: &[&str],
    saved: Option<&str>,
) -> Result<BTreeMap<String, BTreeMap<String, HumanDecision>>, ApiError> {
    let mut in_force = decisions::decisions_of(env, &Live::get(env, false).await?, ids).await?;
    if let Some(saved) = saved.filter(|saved| ids.contains(saved)) {
        let mut asked = decisions::decisions_of(env, &Live::get(env, true).await?, &[saved]).await?;
        match asked.remove(saved) {
            Some(decided) => in_force.insert(saved.to_string(), decided),
            None => in_force.remove(saved),
        };
    }
    Ok(in_force)
}

/// `GET /kitchen/review?episode=…&label=…`: the queue, and the label just decided. The session is
/// the one this isolate saw allowed within 30 seconds, else D1's (`web::signed_in_to_read`).
pub async fn page(req: Request, env: &Env, asked: ReviewAsked) -> Result<Response, ApiError> {
    // Without a decision just saved, the queue holds nothing only D1 knows, so it is read while the
    // session is looked up; it is shown only once the session and its role are.
    if !has_session_cookie(&req) {
        return redirect("/kitchen", &[]);
    }
    let just_saved = asked.saved.as_ref().map(|(episode, _)| episode.as_str());
    let (session, read_early) = match just_saved {
        None => {
            let (session, queue) =
                futures::join!(signed_in_to_read(&req, env, speakers::may_edit), queue(env, None));
            (session?, Some(queue))
        }
        Some(_) => (signed_in_to_read(&req, env, speakers::may_edit).await?, None),
    };
    let Some(session) = session else { return redirect("/kitchen", &[]) };
    let owner = session.owner();
    speakers::check_role(&owner)?;
    let queue = match read_early {
        Some(queue) => queue?,
        None => queue(env, just_saved).await?,
    };
    let saved = match &asked.saved {
        Some((episode, label)) => match decisions::name_inputs(env, episode).await? {
            Some(inputs) => {
                let in_force =
                    decisions::decisions_of(env, &Live::get(env, true).await?, &[episode.as_str()]).await?;
                let reports = inputs.resolve_with(in_force.get(episode).unwrap_or(&BTreeMap::new()));
                reports.get(label).map(|report| {
                    json!({"episode": episode, "label": label, "name": report.name,
                           "state": state_word(report.name_state)})
                })
            }
            None => None,
        },
        None => None,
    };
    let mut response = Response::from_html(shown(&session, &queue, saved, None)?)?;
    response.headers_mut().set("Cache-Control", "no-store")?;
    Ok(response)
}

/// The queue's page for `session`, with the decision just `saved` or the one `refused`.
fn shown(
    session: &Session,
    queue: &Shown,
    saved: Option<Value>,
    refused: Option<&Refused>,
) -> Result<String, ApiError> {
    let view = ReviewView {
        account: &session.handle,
        csrf: &session.csrf,
        entries: &queue.entries,
        known: &queue.known,
        total: queue.total,
        saved,
        refused,
    };
    RENDERER.with(|r| r.review_page(&view)).map_err(|err| ApiError::Internal(format!("page: {err}")))
}

/// The most a review form's body may hold: its name and note, each character percent-encoded from
/// four bytes of UTF-8, with room for the episode, the label and the token.
const FORM_BYTES: usize = (MAX_DECISION_NAME_CHARS + MAX_DECISION_NOTE_CHARS) * 12 + 2048;

/// What the review form sent.
struct Sent<'f> {
    episode: &'f str,
    label: &'f str,
    /// The name typed, or the source's vote confirmed.
    name: &'f str,
    note: &'f str,
    /// A source's vote was confirmed with its button.
    confirmed: bool,
}

impl<'f> Sent<'f> {
    fn of(form: &'f [(String, String)]) -> Sent<'f> {
        let confirmed = field(form, "confirm");
        Sent {
            episode: field(form, "episode"),
            label: field(form, "label"),
            name: if confirmed.is_empty() { field(form, "name") } else { confirmed },
            note: field(form, "note"),
            confirmed: !confirmed.is_empty(),
        }
    }
}

/// `POST /kitchen/review`: an editor names the label, or confirms a source's vote (`confirm`).
/// Checks, in the API's order: session and CSRF token (403), role (403), limit (429), episode and
/// label (404), name (422). A refusal is a page: to an editor refused a label or a name, or past
/// the limit, the queue again with the problem at its entry and what was typed kept; otherwise the
/// problem in words (a cook learns nothing of the queue).
pub async fn decide(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    const INSTANCE: &str = "/kitchen/review";
    let (session, form) = match signed_in_form_within(&mut req, env, FORM_BYTES).await {
        Ok(signed_in) => signed_in,
        Err(err) => return Ok(pages::problem(err, INSTANCE)),
    };
    let sent = Sent::of(&form);
    match save(env, &session, &sent).await {
        Ok(()) => {
            let query = worker::url::form_urlencoded::Serializer::new(String::new())
                .append_pair("episode", sent.episode)
                .append_pair("label", sent.label)
                .finish();
            redirect(&format!("/kitchen/review?{query}"), &[])
        }
        Err(err) if matches!(err.in_words().0, 404 | 422 | 429) => {
            let refused = Refused {
                episode: sent.episode.into(),
                label: sent.label.into(),
                name: if sent.confirmed { String::new() } else { sent.name.into() },
                note: sent.note.into(),
                problem: err.in_words().2,
            };
            let queue = queue(env, None).await?;
            let html = shown(&session, &queue, None, Some(&refused))?;
            Ok(pages::as_page(html, err, INSTANCE))
        }
        Err(err) => Ok(pages::problem(err, INSTANCE)),
    }
}

/// Saves an editor's decision through the API's code: role, limit, label, name.
async fn save(env: &Env, session: &Session, sent: &Sent<'_>) -> Result<(), ApiError> {
    let owner = session.owner();
    let _rate = speakers::admit(env, &owner).await?;
    let inputs = speakers::labelled(env, sent.episode, sent.label).await?;
    let mut body = json!({"name": sent.name});
    if !sent.note.is_empty() {
        body["note"] = json!(sent.note);
    } else if sent.confirmed {
        body["note"] = json!("confirmed from the review queue");
    }
    let (name, note) = decision_from_body(&body).map_err(ApiError::Invalid)?;
    speakers::save(env, &owner, &inputs, sent.episode, sent.label, &name, note.as_deref()).await.map(|_| ())
}
