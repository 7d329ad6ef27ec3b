//! Built files: static assets through the ASSETS binding, and packed files (`domain::site::layout`) through
//! [`crate::packs`]. [`fetch_bytes`], [`fetch_body`] and [`serve`] are the one way the Worker reads a
//! built file, so no handler knows which of the two holds it.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::thread::LocalKey;

use domain::quotes::transcript::names::{self, BuiltDecisions};
use domain::quotes::transcript::review::QueueHead;
use domain::quotes::transcript::{EpisodeSummary, ShowSummary};
use domain::site::layout;
use futures::TryStreamExt as _;
use serde::de::DeserializeOwned;
use worker::{Env, Headers, Request, Response};

use crate::error::ApiError;
use crate::{http, packs};

/// A built file as a response body (its headers are the caller's to set), or `None` when the build
/// has no such file: a packed one is passed from R2 without entering the wasm ([`packs::body`]).
pub async fn fetch_body(env: &Env, path: String) -> Result<Option<Response>, ApiError> {
    if layout::is_packed(&path) {
        let Some(entry) = packs::entry(env, &path).await? else { return Ok(None) };
        return Ok(Some(packs::body(env, &entry).await?));
    }
    Ok(packs::fetch_asset(env, &path).await?.map(Response::from_bytes).transpose()?)
}

/// A built file's bytes, or `None` when the build has no such file.
pub async fn fetch_bytes(env: &Env, path: String) -> Result<Option<Vec<u8>>, ApiError> {
    if layout::is_packed(&path) {
        return Ok(packs::get(env, &path).await?.map(|(_, bytes)| bytes));
    }
    packs::fetch_asset(env, &path).await
}

/// A built JSON file as an isolate keeps it parsed: the build it is of ([`packs::generation`]) and
/// its value.
type Kept<T> = RefCell<Option<(u64, Rc<T>)>>;

thread_local! {
    static SHOWS: Kept<Vec<ShowSummary>> = const { RefCell::new(None) };
    static EPISODES: Kept<Vec<EpisodeSummary>> = const { RefCell::new(None) };
    static EPISODE_IDS: Kept<PublishedIds> = const { RefCell::new(None) };
    static REVIEW_HEAD: Kept<QueueHead> = const { RefCell::new(None) };
    static BUILT_DECISIONS: Kept<BuiltDecisions> = const { RefCell::new(None) };
}

/// The ids of the published episodes: the values of `episodes/by-url.json`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(from = "BTreeMap<String, String>")]
pub struct PublishedIds(HashSet<String>);

impl PublishedIds {
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }
}

impl From<BTreeMap<String, String>> for PublishedIds {
    fn from(by_url: BTreeMap<String, String>) -> PublishedIds {
        PublishedIds(by_url.into_values().collect())
    }
}

/// A built JSON file, read and parsed once per build in an isolate; `empty` stands for it when the
/// build has no such file.
async fn parsed_once<T: DeserializeOwned + 'static>(
    env: &Env,
    kept: &'static LocalKey<Kept<T>>,
    path: &str,
    empty: &[u8],
) -> Result<Rc<T>, ApiError> {
    let generation = packs::generation(env).await?;
    let hit =
        kept.with(|kept| kept.borrow().as_ref().filter(|(at, _)| *at == generation).map(|(_, v)| v.clone()));
    if let Some(value) = hit {
        return Ok(value);
    }
    let bytes = fetch_bytes(env, path.to_string()).await?.unwrap_or_else(|| empty.to_vec());
    let value: Rc<T> =
        Rc::new(serde_json::from_slice(&bytes).map_err(|err| ApiError::Internal(format!("{path}: {err}")))?);
    kept.with(|kept| *kept.borrow_mut() = Some((generation, value.clone())));
    Ok(value)
}

/// Every published show (`shows.json`).
pub async fn built_shows(env: &Env) -> Result<Rc<Vec<ShowSummary>>, ApiError> {
    parsed_once(env, &SHOWS, "shows.json", b"[]").await
}

/// Every built episode's summary (`episodes.json`).
pub async fn built_episodes(env: &Env) -> Result<Rc<Vec<EpisodeSummary>>, ApiError> {
    parsed_once(env, &EPISODES, "episodes.json", b"[]").await
}

/// The ids of the published episodes (`episodes/by-url.json`).
pub async fn built_episode_ids(env: &Env) -> Result<Rc<PublishedIds>, ApiError> {
    parsed_once(env, &EPISODE_IDS, "episodes/by-url.json", b"{}").await
}

/// The first part of the build's review queue (`episodes/review.json`).
pub async fn built_review_head(env: &Env) -> Result<Rc<QueueHead>, ApiError> {
    parsed_once(env, &REVIEW_HEAD, "episodes/review.json", br#"{"known": {}, "entries": []}"#).await
}

/// How far the editors' decisions the build holds go (`episodes/decisions.json`; none before any sync).
pub async fn built_decisions(env: &Env) -> Result<Rc<BuiltDecisions>, ApiError> {
    parsed_once(env, &BUILT_DECISIONS, names::BUILT_DECISIONS, br#"{"synced_seq": 0}"#).await
}

/// Whether the build has a file at `path` (a static asset or a packed file), without reading it.
pub async fn exists(env: &Env, path: &str) -> Result<bool, ApiError> {
    let name = path.trim_start_matches('/');
    if !layout::is_packed(name) {
        let url = format!("https://assets.local/{name}");
        let mut init = worker::RequestInit::new();
        init.with_method(worker::Method::Head);
        let asked = Request::new_with_init(&url, &init)?;
        if env.assets("ASSETS")?.fetch_request(asked).await?.status_code() != 404 {
            return Ok(true);
        }
    }
    Ok(packs::entry(env, name).await?.is_some())
}

/// Serves a built file with the headers a public read carries.
pub async fn serve(req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    if layout::is_packed(path.trim_start_matches('/')) {
        return serve_packed(&req, env, &path).await;
    }
    let response = env.assets("ASSETS")?.fetch_request(req.clone()?).await?;
    if response.status_code() == 404 {
        // A site-wide file too large for a static asset is packed too.
        if packs::entry(env, path.trim_start_matches('/')).await?.is_some() {
            return serve_packed(&req, env, &path).await;
        }
        return Err(ApiError::NotFound(not_found_detail(&path)));
    }
    // Headers of a fetched response are immutable: copy them.
    let mut headers = Headers::new();
    for (name, value) in response.headers().entries() {
        headers.set(&name, &value)?;
    }
    // The assets server names no type for a file it has no extension rule for (`SHA256SUMS`).
    if !headers.has("Content-Type")? {
        headers.set("Content-Type", layout::content_type(&path))?;
    }
    http::cors(&mut headers);
    headers.set("Cache-Control", cache_control(&path))?;
    Ok(response.with_headers(headers))
}

/// Content-named index files never change; numbered ones (dict-N, cards-N) and the manifest may.
fn cache_control(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or_default();
    let immutable = path.starts_with(&format!("/{}/", domain::recipes::search::DIR))
        && ["facet-", "time-", "post-"].iter().any(|kind| name.starts_with(kind));
    if immutable { "public, max-age=31536000, immutable" } else { "public, max-age=300" }
}

/// A packed file, with the type, validator and cache headers a static asset would carry.
async fn serve_packed(req: &Request, env: &Env, path: &str) -> Result<Response, ApiError> {
    let root = packs::root(env).await?;
    let Some(entry) = packs::entry_in(env, &root, path.trim_start_matches('/')).await? else {
        return match whole_dump(env, root, path).await? {
            Some(response) => Ok(response),
            None => Err(ApiError::NotFound(not_found_detail(path))),
        };
    };
    let etag = entry.etag();
    let mut headers = Headers::new();
    headers.set("Content-Type", layout::content_type(path))?;
    headers.set("ETag", &etag)?;
    headers.set("Cache-Control", cache_control(path))?;
    http::cors(&mut headers);
    if http::none_match(req, &etag)? {
        return Ok(Response::empty()?.with_status(304).with_headers(headers));
    }
    if req.method() == worker::Method::Head {
        headers.set("Content-Length", &entry.len.to_string())?;
        return Ok(Response::empty()?.with_headers(headers));
    }
    Ok(packs::body(env, &entry).await?.with_headers(headers))
}

/// `/recipes.jsonl` when the builder published the dump in parts (more than 2,048 recipes; see
/// `builder/src/jsonl.rs`): the parts one after the other, so the documented address works at any
/// size. Every part comes from the one build `root` names, so a build published meanwhile never
/// mixes two dumps.
async fn whole_dump(env: &Env, root: Rc<layout::Root>, path: &str) -> Result<Option<Response>, ApiError> {
    if path.trim_start_matches('/') != layout::DUMP {
        return Ok(None);
    }
    let Some(first) = packs::entry_in(env, &root, &layout::dump_part(1)).await? else { return Ok(None) };
    let env = env.clone();
    let parts = futures::stream::try_unfold((Some(first), 1), move |(entry, n)| {
        next_part(env.clone(), root.clone(), entry, n)
    });
    let mut headers = Headers::new();
    headers.set("Content-Type", layout::content_type(layout::DUMP))?;
    headers.set("Cache-Control", cache_control(path))?;
    http::cors(&mut headers);
    Ok(Some(Response::from_stream(parts.try_flatten())?.with_headers(headers)))
}

/// Part `n` of the dump as a stream, and where part `n + 1` is, if there is one.
async fn next_part(
    env: Env,
    root: Rc<layout::Root>,
    entry: Option<layout::Entry>,
    n: usize,
) -> worker::Result<Option<(worker::ByteStream, (Option<layout::Entry>, usize))>> {
    let Some(entry) = entry else { return Ok(None) };
    let part = packs::stream(&env, &entry).await.map_err(mid_stream)?;
    let next = packs::entry_in(&env, &root, &layout::dump_part(n + 1)).await.map_err(mid_stream)?;
    Ok(Some((part, (next, n + 1))))
}

/// An error once the answer's status has gone: it can only cut the body short.
fn mid_stream(err: ApiError) -> worker::Error {
    worker::Error::RustError(format!("{err:?}"))
}

fn not_found_detail(path: &str) -> String {
    match path.strip_prefix("/r/") {
        Some(rest) => format!("no recipe `{}`", rest.trim_end_matches(".json")),
        None => format!("nothing at {path}"),
    }
}
