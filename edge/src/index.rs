//! The static indexes the Worker answers from: one isolate cache of their files and one answer loop.
//!
//! An index is a manifest plus immutable files under one folder of the build. `domain` answers a
//! query from the files loaded so far or names the ones it still needs (`domain::index::Need`);
//! [`answer`] loads those, in parallel, and asks again until it answers. What it loaded stays in the
//! isolate for the build it came from ([`packs::generation`]; numbered files such as dictionary and
//! card shards change only with a build), at most [`CACHE_MAX_BYTES`] per index: a load that would
//! pass the bound drops that index's files first. A file that does not decode is a build defect: the
//! answer is a 500 and the index's files are dropped, so the next request reads them afresh.
//!
//! Two requests of one isolate may run at once: each takes the index out of the cache while it
//! answers and puts it back after, keeping the files the other put back meanwhile.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use domain::index::{Files, SearchError};
use futures::future::try_join_all;
use serde::de::DeserializeOwned;
use worker::Env;

use crate::assets::fetch_bytes;
use crate::error::ApiError;
use crate::packs;

/// The most bytes of one index's files an isolate keeps.
pub const CACHE_MAX_BYTES: usize = 32 * 1024 * 1024;

/// A static index of the build: its manifest type names where its files are.
pub trait Index: DeserializeOwned + 'static {
    /// The folder of the index in the build; its manifest is `<DIR>/manifest.json`.
    const DIR: &'static str;
    /// What the index is called in an error.
    const NAME: &'static str;
}

impl Index for domain::search::Manifest {
    const DIR: &'static str = domain::search::DIR;
    const NAME: &'static str = "search";
}

/// The files of one index loaded so far.
#[derive(Default)]
pub struct Loaded {
    files: HashMap<String, Vec<u8>>,
    bytes: usize,
}

impl Files for Loaded {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.files.get(name).map(Vec::as_slice)
    }
}

impl Loaded {
    fn insert(&mut self, name: String, bytes: Vec<u8>) {
        if self.files.contains_key(&name) {
            return;
        }
        if self.bytes + bytes.len() > CACHE_MAX_BYTES {
            self.files.clear();
            self.bytes = 0;
        }
        self.bytes += bytes.len();
        self.files.insert(name, bytes);
    }

    async fn load<I: Index>(&mut self, env: &Env, names: Vec<String>) -> Result<(), ApiError> {
        let fetches = names.iter().map(|name| fetch_bytes(env, format!("{}/{name}", I::DIR)));
        let fetched = try_join_all(fetches).await?;
        for (name, bytes) in names.into_iter().zip(fetched) {
            let bytes = bytes
                .ok_or_else(|| ApiError::Internal(format!("{} index file {name} is missing", I::NAME)))?;
            self.insert(name, bytes);
        }
        Ok(())
    }
}

/// One index as the cache holds it: the build it is of, its manifest, its files.
struct Cached {
    generation: u64,
    manifest: Rc<dyn Any>,
    files: Loaded,
}

thread_local! {
    /// By [`Index::DIR`].
    static CACHE: RefCell<HashMap<&'static str, Cached>> = RefCell::new(HashMap::new());
}

/// Runs `ask` against index `I` until it answers, loading the files it names in between.
pub async fn answer<I: Index, T>(
    env: &Env,
    ask: impl Fn(&I, &Loaded) -> Result<T, SearchError>,
) -> Result<T, ApiError> {
    let (generation, manifest, mut files) = take::<I>(env).await?;
    let answer = loop {
        match ask(&manifest, &files) {
            Ok(answer) => break Ok(answer),
            Err(SearchError::Need(need)) => {
                if let Err(err) = files.load::<I>(env, need.0).await {
                    break Err(err);
                }
            }
            Err(SearchError::Corrupt(corrupt)) => return Err(ApiError::Internal(corrupt.0)),
        }
    };
    put_back(generation, manifest, files);
    answer
}

/// The current build's generation, and its index's manifest and files loaded so far.
async fn take<I: Index>(env: &Env) -> Result<(u64, Rc<I>, Loaded), ApiError> {
    let generation = packs::generation(env).await?;
    let cached = CACHE.with(|cache| cache.borrow_mut().remove(I::DIR));
    if let Some(cached) = cached.filter(|cached| cached.generation == generation)
        && let Ok(manifest) = cached.manifest.downcast::<I>()
    {
        return Ok((generation, manifest, cached.files));
    }
    let bytes = fetch_bytes(env, format!("{}/manifest.json", I::DIR))
        .await?
        .ok_or_else(|| ApiError::Internal(format!("the {} index is missing: run the builder", I::NAME)))?;
    let manifest: I = serde_json::from_slice(&bytes)
        .map_err(|err| ApiError::Internal(format!("{} manifest: {err}", I::NAME)))?;
    Ok((generation, Rc::new(manifest), Loaded::default()))
}

fn put_back<I: Index>(generation: u64, manifest: Rc<I>, mut files: Loaded) {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        // A request that ran meanwhile may have put back files of its own: keep both, if they are of
        // the same build.
        if let Some(other) = cache.remove(I::DIR) {
            if other.generation > generation {
                // This request read an older build than the one cached meanwhile.
                cache.insert(I::DIR, other);
                return;
            }
            if other.generation == generation {
                for (name, bytes) in other.files.files {
                    files.insert(name, bytes);
                }
            }
        }
        cache.insert(I::DIR, Cached { generation, manifest, files });
    });
}
