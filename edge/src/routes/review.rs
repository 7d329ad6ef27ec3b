//! The editors' review queue (`/kitchen/review`): signed in (the kitchen's session) with the
//! `editor` or `admin` role.
//!
//! The queue is the build's (`episodes/review.json`, `domain::quotes::transcript::review`) plus the
//! episodes the intake took in since; an episode with decisions since the build has its names
//! resolved again with them (a decision can make another label confident by elimination), and a
//! label that is now confident or decided leaves the queue. The form posts the kitchen's way (CSRF
//! token of the session, same-origin `Origin`) and saves through the same code as `PUT
//! /api/episodes/{id}/speakers/{label}` (`crate::routes::speakers`): the same role, limit, checks and
//! record, the editor's account with it.

use std::collections::BTreeMap;

use domain::api::ReviewAsked;
use domain::quotes::page::state_word;
use domain::quotes::transcript::EpisodeRecord;
use domain::quotes::transcript::names::decision_from_body;
use domain::quotes::transcript::review::{Entry, Queue, QueueHead, QueuePart};
use serde_json::json;
use worker::{Env, Request, Response};

use crate::assets::fetch_bytes;
use crate::error::ApiError;
use crate::routes::kitchen::{field, redirect, signed_in, signed_in_form};
use crate::routes::recipes::RENDERER;
use crate::routes::speakers;
use crate::{decisions, intake};

/// Entries a page shows, most cited first.
const SHOWN: usize = 50;

/// What a page of the queue shows: its most cited entries, the people their shows know, and how
/// many entries the queue holds.
struct Shown {
    entries: Vec<Entry>,
    known: BTreeMap<String, Vec<String>>,
    total: usize,
}

/// The build's queue, read a part at a time until a page is full, with the intake's episodes added
/// and decisions since applied. `total` counts the decisions of the parts read: a label decided
/// through the API deep in the queue still counts until the next build.
async fn queue(env: &Env) -> Result<Shown, ApiError> {
    let head: QueueHead = match fetch_bytes(env, "episodes/review.json".into()).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map_err(|err| ApiError::Internal(format!("episodes/review.json: {err}")))?,
        None => QueueHead::default(),
    };
    let (mut built, mut read) = (head.total, 0);
    let mut kept = undecided(env, head.entries, &mut built).await?;
    while kept.len() < SHOWN && read < head.parts {
        read += 1;
        let name = format!("episodes/review/{read}.json");
        let Some(bytes) = fetch_bytes(env, name.clone()).await? else { break };
        let part: QueuePart =
            serde_json::from_slice(&bytes).map_err(|err| ApiError::Internal(format!("{name}: {err}")))?;
        kept.extend(undecided(env, part.entries, &mut built).await?);
    }
    let mut queue = Queue { entries: kept, known: head.known };
    let mut taken_in = Queue::default();
    for summary in &intake::taken_in(env, true).await?.summaries {
        if queue.entries.iter().any(|entry| entry.episode == summary.id) {
            continue;
        }
        if let Some(bytes) = intake::episode_file(env, &summary.id, ".json").await? {
            let record: EpisodeRecord = serde_json::from_slice(&bytes)
                .map_err(|err| ApiError::Internal(format!("intake record {}: {err}", summary.id)))?;
            taken_in.add(&record, None);
        }
    }
    let taken_in_entries = undecided(env, taken_in.entries, &mut 0).await?;
    let total = built + taken_in_entries.len();
    queue.entries.extend(taken_in_entries);
    for (show, people) in taken_in.known {
        let known = queue.known.entry(show).or_default();
        known.extend(people);
        known.sort();
        known.dedup();
    }
    queue.sort();
    queue.entries.truncate(SHOWN);
    let shows: Vec<&str> = queue.entries.iter().map(|entry| entry.show.as_str()).collect();
    queue.known.retain(|show, _| shows.contains(&show.as_str()));
    Ok(Shown { entries: queue.entries, known: queue.known, total })
}

/// `entries` without the labels decided since they were queued, the others with their names
/// resolved again (a decision can make another label confident by elimination); `total` loses one
/// for each label that left.
async fn undecided(env: &Env, entries: Vec<Entry>, total: &mut usize) -> Result<Vec<Entry>, ApiError> {
    let mut ids: Vec<&str> = entries.iter().map(|entry| entry.episode.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let in_force = decisions::decisions_of(env, &ids, true).await?;
    let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut reports = BTreeMap::new();
    for mut entry in entries {
        let Some(decided) = in_force.get(&entry.episode) else {
            kept.push(entry);
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
                entry.name = report.name.clone();
                entry.name_state = report.name_state;
                entry.votes = report.votes.clone();
                kept.push(entry);
            }
            _ => *total = total.saturating_sub(1),
        }
    }
    Ok(kept)
}

/// `GET /kitchen/review?episode=…&label=…`: the queue, and the label just decided.
pub async fn page(req: Request, env: &Env, asked: ReviewAsked) -> Result<Response, ApiError> {
    let Some(session) = signed_in(&req, env).await? else { return redirect("/kitchen", &[]) };
    let owner = session.owner();
    speakers::check_role(&owner)?;
    let queue = queue(env).await?;
    let saved = match &asked.saved {
        Some((episode, label)) => match decisions::name_inputs(env, episode).await? {
            Some(inputs) => {
                let in_force = decisions::decisions_of(env, &[episode.as_str()], true).await?;
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
    let html = RENDERER
        .with(|r| {
            r.review_page(&session.handle, &session.csrf, &queue.entries, &queue.known, queue.total, saved)
        })
        .map_err(|err| ApiError::Internal(format!("page: {err}")))?;
    let mut response = Response::from_html(html)?;
    response.headers_mut().set("Cache-Control", "no-store")?;
    Ok(response)
}

/// `POST /kitchen/review`: an editor names the label, or confirms a source's vote (`confirm`).
/// Checks, in the API's order: session and CSRF token (403), role (403), limit (429), episode and
/// label (404), name (422).
pub async fn decide(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let (session, form) = signed_in_form(&mut req, env).await?;
    let owner = session.owner();
    let _rate = speakers::admit(env, &owner).await?;
    let (id, label) = (field(&form, "episode"), field(&form, "label"));
    let inputs = speakers::labelled(env, id, label).await?;
    let confirmed = field(&form, "confirm");
    let name = if confirmed.is_empty() { field(&form, "name") } else { confirmed };
    let mut body = json!({"name": name});
    let note = field(&form, "note");
    if !note.is_empty() {
        body["note"] = json!(note);
    } else if !confirmed.is_empty() {
        body["note"] = json!("confirmed from the review queue");
    }
    let (name, note) = decision_from_body(&body).map_err(ApiError::Invalid)?;
    speakers::save(env, &owner, &inputs, id, label, &name, note.as_deref()).await?;
    let query = worker::url::form_urlencoded::Serializer::new(String::new())
        .append_pair("episode", id)
        .append_pair("label", label)
        .finish();
    redirect(&format!("/kitchen/review?{query}"), &[])
}
