//! The static indexes the Worker answers from — the recipe search index and the phrase index — with
//! one isolate cache of their files and one answer loop.
//!
//! An index is a manifest plus immutable files under one folder of the build. `domain` answers a
//! query from the pieces loaded so far or names the ones it still needs: whole files for the recipe
//! index (`domain::index::Need`), byte ranges of files for the phrase index (`phrase::Part`).
//! [`answer`] loads those, in parallel, and asks again until it answers. What it loaded stays in the
//! isolate for the build it came from ([`packs::generation`]; an index's files change only with a
//! build), at most [`CACHE_MAX_BYTES`] per index: a load that would pass the bound drops that index's
//! pieces first. A piece that does not decode is a build defect: the answer is a 500 and the index's
//! pieces are dropped, so the next request reads them afresh.
//!
//! Two requests of one isolate may run at once: each takes the index out of the cache while it
//! answers and puts it back after, keeping the pieces the other put back meanwhile.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::rc::Rc;

use domain::index::{Files, SearchError};
use domain::quote::phrase::{self, Part, Parts, PhraseError};
use futures::future::try_join_all;
use worker::Env;

use crate::assets::fetch_bytes;
use crate::error::ApiError;
use crate::packs;

/// The most bytes of one index's pieces an isolate keeps.
pub const CACHE_MAX_BYTES: usize = 32 * 1024 * 1024;

/// A static index of the build: where it lives, how it opens, and how one piece of it is read.
pub(crate) trait Index: Sized + 'static {
    /// The folder of the index in the build; its manifest is `<DIR>/manifest.json`.
    const DIR: &'static str;
    /// What the index is called in an error.
    const NAME: &'static str;
    /// What a query names when it needs more: a whole file, or a byte range of one.
    type Key: Eq + Hash + Ord + Clone + 'static;

    /// The index, from its manifest's bytes (and whatever else it reads once per isolate).
    async fn open(env: &Env, manifest: &[u8]) -> Result<Self, ApiError>;

    /// The bytes of one piece, `None` when the build lacks its file.
    async fn read(env: &Env, key: &Self::Key) -> Result<Option<Vec<u8>>, ApiError>;

    /// The piece's name in an error.
    fn describe(key: &Self::Key) -> String;
}

/// Why `domain` did not answer yet: the pieces it needs, or a piece that does not decode.
pub(crate) enum Stop<K> {
    Need(Vec<K>),
    Corrupt(String),
}

impl From<SearchError> for Stop<String> {
    fn from(err: SearchError) -> Self {
        match err {
            SearchError::Need(need) => Stop::Need(need.0),
            SearchError::Corrupt(corrupt) => Stop::Corrupt(corrupt.0),
        }
    }
}

impl From<PhraseError> for Stop<Part> {
    fn from(err: PhraseError) -> Self {
        match err {
            PhraseError::Need(parts) => Stop::Need(parts),
            PhraseError::Corrupt(corrupt) => Stop::Corrupt(corrupt.0),
        }
    }
}

impl Index for domain::search::Manifest {
    const DIR: &'static str = domain::search::DIR;
    const NAME: &'static str = "search";
    type Key = String;

    async fn open(_env: &Env, manifest: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(manifest).map_err(|err| ApiError::Internal(format!("search manifest: {err}")))
    }

    async fn read(env: &Env, name: &String) -> Result<Option<Vec<u8>>, ApiError> {
        fetch_bytes(env, format!("{}/{name}", Self::DIR)).await
    }

    fn describe(name: &String) -> String {
        name.clone()
    }
}

impl Index for phrase::Index {
    const DIR: &'static str = phrase::DIR;
    const NAME: &'static str = "quote";
    type Key = Part;

    /// The manifest, and the tables (where each bucket and block starts), read whole once.
    async fn open(env: &Env, manifest: &[u8]) -> Result<Self, ApiError> {
        let manifest: phrase::Manifest = serde_json::from_slice(manifest)
            .map_err(|err| ApiError::Internal(format!("quote manifest: {err}")))?;
        let tables = fetch_bytes(env, format!("{}/{}", Self::DIR, manifest.tables))
            .await?
            .ok_or_else(|| ApiError::Internal(format!("quote index file {} is missing", manifest.tables)))?;
        phrase::Index::open(manifest, &tables).map_err(|corrupt| ApiError::Internal(corrupt.0))
    }

    async fn read(env: &Env, part: &Part) -> Result<Option<Vec<u8>>, ApiError> {
        packs::get_part(env, &format!("{}/{}", Self::DIR, part.file), part.offset, part.len).await
    }

    fn describe(part: &Part) -> String {
        format!("{} (bytes {}..+{})", part.file, part.offset, part.len)
    }
}

/// The pieces of one index loaded so far.
pub struct Loaded<K> {
    pieces: HashMap<K, Vec<u8>>,
    bytes: usize,
}

impl<K> Default for Loaded<K> {
    fn default() -> Self {
        Loaded { pieces: HashMap::new(), bytes: 0 }
    }
}

impl Files for Loaded<String> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.pieces.get(name).map(Vec::as_slice)
    }
}

impl Parts for Loaded<Part> {
    fn part(&self, part: &Part) -> Option<&[u8]> {
        self.pieces.get(part).map(Vec::as_slice)
    }
}

impl<K: Eq + Hash> Loaded<K> {
    fn insert(&mut self, key: K, bytes: Vec<u8>) {
        if self.pieces.contains_key(&key) {
            return;
        }
        if self.bytes + bytes.len() > CACHE_MAX_BYTES {
            self.pieces.clear();
            self.bytes = 0;
        }
        self.bytes += bytes.len();
        self.pieces.insert(key, bytes);
    }
}

async fn load<I: Index>(
    env: &Env,
    loaded: &mut Loaded<I::Key>,
    mut keys: Vec<I::Key>,
) -> Result<(), ApiError> {
    keys.sort();
    keys.dedup();
    let fetched = try_join_all(keys.iter().map(|key| I::read(env, key))).await?;
    for (key, bytes) in keys.into_iter().zip(fetched) {
        let bytes = bytes.ok_or_else(|| {
            ApiError::Internal(format!("{} index file {} is missing", I::NAME, I::describe(&key)))
        })?;
        loaded.insert(key, bytes);
    }
    Ok(())
}

/// One index as the cache holds it: the build it is of, and the index with its pieces
/// (`(Rc<I>, Loaded<I::Key>)`, typed by the index).
struct Cached {
    generation: u64,
    held: Box<dyn Any>,
}

thread_local! {
    /// By [`Index::DIR`].
    static CACHE: RefCell<HashMap<&'static str, Cached>> = RefCell::new(HashMap::new());
}

/// Runs `ask` against index `I` until it answers, loading the pieces it names in between.
pub(crate) async fn answer<I: Index, T, E: Into<Stop<I::Key>>>(
    env: &Env,
    ask: impl Fn(&I, &Loaded<I::Key>) -> Result<T, E>,
) -> Result<T, ApiError> {
    let (generation, index, mut loaded) = take::<I>(env).await?;
    let answer = loop {
        match ask(&index, &loaded).map_err(Into::into) {
            Ok(answer) => break Ok(answer),
            Err(Stop::Need(keys)) => {
                if let Err(err) = load::<I>(env, &mut loaded, keys).await {
                    break Err(err);
                }
            }
            // Not put back: the next request reads the index afresh.
            Err(Stop::Corrupt(detail)) => return Err(ApiError::Internal(detail)),
        }
    };
    put_back(generation, index, loaded);
    answer
}

/// The current build's generation, and its index with the pieces loaded so far.
async fn take<I: Index>(env: &Env) -> Result<(u64, Rc<I>, Loaded<I::Key>), ApiError> {
    let generation = packs::generation(env).await?;
    let cached = CACHE.with(|cache| cache.borrow_mut().remove(I::DIR));
    if let Some(cached) = cached.filter(|cached| cached.generation == generation)
        && let Ok(held) = cached.held.downcast::<(Rc<I>, Loaded<I::Key>)>()
    {
        let (index, loaded) = *held;
        return Ok((generation, index, loaded));
    }
    let bytes = fetch_bytes(env, format!("{}/manifest.json", I::DIR))
        .await?
        .ok_or_else(|| ApiError::Internal(format!("the {} index is missing: run the builder", I::NAME)))?;
    Ok((generation, Rc::new(I::open(env, &bytes).await?), Loaded::default()))
}

fn put_back<I: Index>(generation: u64, index: Rc<I>, mut loaded: Loaded<I::Key>) {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        // A request that ran meanwhile may have put back pieces of its own: keep both, if they are of
        // the same build.
        if let Some(other) = cache.remove(I::DIR) {
            if other.generation > generation {
                // This request read an older build than the one cached meanwhile.
                cache.insert(I::DIR, other);
                return;
            }
            if other.generation == generation
                && let Ok(held) = other.held.downcast::<(Rc<I>, Loaded<I::Key>)>()
            {
                for (key, bytes) in held.1.pieces {
                    loaded.insert(key, bytes);
                }
            }
        }
        cache.insert(I::DIR, Cached { generation, held: Box::new((index, loaded)) });
    });
}
