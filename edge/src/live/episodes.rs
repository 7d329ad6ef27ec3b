//! The episodes of the view ([`super`]): those the intake took in that no build has published, and
//! the read every quote route makes of an episode's files — the build's, else the intake's copy.
//!
//! The view learns of each episode the intake publishes from D1 (`intake_episodes`, past the last one
//! seen) and makes their phrase overlay once per change of that list; a new build starts the list over
//! against what it publishes.

use std::cell::RefCell;
use std::rc::Rc;

use domain::quotes::quote::phrase::Overlay;
use domain::quotes::transcript::url::is_episode_id;
use domain::quotes::transcript::{Canonical, EpisodeSummary};
use worker::Env;

use super::Live;
use crate::assets::{built_episode_ids, fetch_bytes};
use crate::error::ApiError;
use crate::store::{self, PublishedEpisode};

/// The bucket of the episodes the intake published, and of what transcription services answered.
pub const BUCKET: &str = "INTAKE";

/// The episodes the intake published that no build has yet.
#[derive(Default)]
pub struct TakenIn {
    /// Their summaries, oldest first.
    pub summaries: Vec<EpisodeSummary>,
    /// Their phrase overlay, for phrase search and corpus-wide attribution
    /// (`domain::quotes::quote::phrase::Overlay`); `None` when there are none.
    pub overlay: Option<Rc<Overlay>>,
}

/// Every episode the intake published, as far as this isolate knows, oldest first, and what was made
/// of them for the build the isolate reads (made again when either changes).
#[derive(Default)]
struct Taken {
    seq: u64,
    rows: Vec<PublishedEpisode>,
    made: Option<Rc<TakenIn>>,
}

thread_local! {
    static TAKEN: RefCell<Taken> = RefCell::new(Taken::default());
}

/// A new build: what it publishes leaves the list of episodes only the intake holds.
pub fn start_over() {
    TAKEN.with(|taken| taken.borrow_mut().made = None);
}

/// The last episode seen.
pub fn cursor() -> u64 {
    TAKEN.with(|taken| taken.borrow().seq)
}

/// Takes in the episodes past [`cursor`].
pub fn apply(rows: Vec<PublishedEpisode>) {
    if rows.is_empty() {
        return;
    }
    TAKEN.with(|taken| {
        let mut taken = taken.borrow_mut();
        // Two requests may have read the same rows at once: each is taken once.
        let fresh: Vec<PublishedEpisode> = rows.into_iter().filter(|row| row.seq > taken.seq).collect();
        if fresh.is_empty() {
            return;
        }
        for row in fresh {
            taken.seq = taken.seq.max(row.seq);
            taken.rows.push(row);
        }
        taken.made = None;
    });
}

/// The episodes taken in that no build has published yet, as the view `_live` holds them.
pub async fn taken_in(env: &Env, _live: &Live) -> Result<Rc<TakenIn>, ApiError> {
    if let Some(made) = TAKEN.with(|taken| taken.borrow().made.clone()) {
        return Ok(made);
    }
    let rows: Vec<(String, String)> = TAKEN
        .with(|taken| taken.borrow().rows.iter().map(|row| (row.id.clone(), row.summary.clone())).collect());
    let published = if rows.is_empty() { Rc::default() } else { built_episode_ids(env).await? };
    let mut summaries = Vec::with_capacity(rows.len());
    let mut episodes = Vec::with_capacity(rows.len());
    for (id, summary) in rows.iter().filter(|(id, _)| !published.contains(id)) {
        summaries.push(
            serde_json::from_str(summary)
                .map_err(|err| ApiError::Internal(format!("intake summary {id}: {err}")))?,
        );
        let Some(bytes) = taken_in_file(env, id, "/transcript.json").await? else { continue };
        let canonical: Canonical = serde_json::from_slice(&bytes)
            .map_err(|err| ApiError::Internal(format!("episodes/{id}/transcript.json: {err}")))?;
        episodes.push(canonical);
    }
    let overlay = Overlay::of(&episodes)
        .map_err(|err| ApiError::Internal(format!("the intake's overlay: {}", err.0)))?
        .map(Rc::new);
    let made = Rc::new(TakenIn { summaries, overlay });
    TAKEN.with(|taken| taken.borrow_mut().made = Some(made.clone()));
    Ok(made)
}

/// The phrase overlay of [`taken_in`].
pub async fn overlay(env: &Env, live: &Live) -> Result<Option<Rc<Overlay>>, ApiError> {
    Ok(taken_in(env, live).await?.overlay.clone())
}

/// The content files of an episode the intake published (`episodes/<id>/content.json`).
pub async fn content(env: &Env, id: &str) -> Result<Option<Vec<u8>>, ApiError> {
    let object = env.bucket(BUCKET)?.get(format!("episodes/{id}/content.json")).execute().await?;
    match object {
        Some(object) => Ok(Some(body_bytes(object).await?)),
        None => Ok(None),
    }
}

async fn body_bytes(object: worker::Object) -> Result<Vec<u8>, ApiError> {
    Ok(object.body().ok_or_else(|| ApiError::Internal("an R2 object without a body".into()))?.bytes().await?)
}

/// A file of episode `id` (`name` is `.json` for the record, `/transcript.json` and so on): the
/// build's, else the intake's once its episode is ready. `None` when neither has it.
pub async fn episode_file(env: &Env, id: &str, name: &str) -> Result<Option<Vec<u8>>, ApiError> {
    if !is_episode_id(id) {
        return Ok(None);
    }
    match fetch_bytes(env, format!("episodes/{id}{name}")).await? {
        Some(built) => Ok(Some(built)),
        None => taken_in_file(env, id, name).await,
    }
}

/// A file of episode `id` as the intake stored it, once D1 lists the episode as ready.
async fn taken_in_file(env: &Env, id: &str, name: &str) -> Result<Option<Vec<u8>>, ApiError> {
    if !store::has_episode(&store::db(env)?, id).await? {
        return Ok(None);
    }
    match env.bucket(BUCKET)?.get(format!("episodes/{id}{name}")).execute().await? {
        Some(object) => Ok(Some(body_bytes(object).await?)),
        None => Ok(None),
    }
}

/// A download of an episode the intake published and no build has (`/episodes/<id>.json`,
/// `/episodes/<id>/head.json`, `/episodes/<id>/transcript.{json,vtt,p20.json}`), as the build would
/// serve it.
pub async fn download(env: &Env, path: &str) -> Result<Option<worker::Response>, ApiError> {
    let Some(rest) = path.strip_prefix("/episodes/") else { return Ok(None) };
    let (id, name) = match rest.split_once('/') {
        Some((id, file)) => (id, format!("/{file}")),
        None => (rest.trim_end_matches(".json"), ".json".to_string()),
    };
    let downloads = [".json", "/head.json", "/transcript.json", "/transcript.vtt", "/transcript.p20.json"];
    if !is_episode_id(id) || !downloads.contains(&name.as_str()) {
        return Ok(None);
    }
    let Some(bytes) = taken_in_file(env, id, &name).await? else { return Ok(None) };
    let mut response = worker::Response::from_bytes(bytes)?;
    let headers = response.headers_mut();
    headers.set("Content-Type", domain::site::layout::content_type(path))?;
    headers.set("Cache-Control", "public, max-age=300")?;
    crate::http::cors(headers);
    Ok(Some(response))
}
