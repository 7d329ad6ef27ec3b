//! The static indexes the Worker answers from — the recipe search index and the phrase index — with
//! one isolate cache of their files and one answer loop.
//!
//! An index is a manifest plus immutable files under one folder of the build. `domain` answers a
//! query from the pieces loaded so far or names the ones it still needs: whole files for the recipe
//! index (`domain::index::Need`), byte ranges of files for the phrase index (`phrase::Part`, fetched
//! by as few ranged reads as `phrase::reads` makes of them). [`answer`] loads those, in parallel,
//! and asks again until it answers. What it loaded stays in the isolate for the build it came from
//! ([`packs::generation`]; an index's files change only with a build), at most [`CACHE_MAX_BYTES`]
//! per index, the pieces read longest ago leaving first (`Loaded::keep`). A piece that
//! does not decode is a build defect: the answer is a 500 and the index leaves the cache, so the
//! next request reads it afresh.
//!
//! Requests of one isolate run at once, each between its reads: they share the opened index and
//! its cached pieces, and each also keeps the pieces it loaded itself until it answers, so another
//! request's eviction never takes a piece from under it.

use std::any::Any;
use std::borrow::Borrow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::Hash;
use std::rc::Rc;

use domain::index::{Files, SearchError};
use domain::quotes::quote::phrase::{self, Part, Parts, PhraseError};
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

    /// The bytes of each piece, in order, `None` for a piece whose file the build lacks.
    async fn read_all(env: &Env, keys: &[Self::Key]) -> Result<Vec<Option<Vec<u8>>>, ApiError>;

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

impl Index for domain::recipes::search::Manifest {
    const DIR: &'static str = domain::recipes::search::DIR;
    const NAME: &'static str = "search";
    type Key = String;

    async fn open(_env: &Env, manifest: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(manifest).map_err(|err| ApiError::Internal(format!("search manifest: {err}")))
    }

    async fn read_all(env: &Env, names: &[String]) -> Result<Vec<Option<Vec<u8>>>, ApiError> {
        try_join_all(names.iter().map(|name| fetch_bytes(env, format!("{}/{name}", Self::DIR)))).await
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

    /// Neighbouring parts come in one ranged read (`phrase::reads`).
    async fn read_all(env: &Env, parts: &[Part]) -> Result<Vec<Option<Vec<u8>>>, ApiError> {
        let reads = phrase::reads(parts, phrase::JOINING);
        let fetched = try_join_all(reads.iter().map(|read| async move {
            let range = &read.range;
            packs::get_part(env, &format!("{}/{}", Self::DIR, range.file), range.offset, range.len).await
        }))
        .await?;
        let mut pieces: HashMap<&Part, Vec<u8>> = HashMap::new();
        for (read, bytes) in reads.iter().zip(fetched) {
            let Some(bytes) = bytes else { continue };
            let cut = read.cut(&bytes).ok_or_else(|| {
                ApiError::Internal(format!("{} was answered short", Self::describe(&read.range)))
            })?;
            pieces.extend(cut.into_iter().map(|(part, bytes)| (part, bytes.to_vec())));
        }
        Ok(parts.iter().map(|part| pieces.remove(part)).collect())
    }

    fn describe(part: &Part) -> String {
        format!("{} (bytes {}..+{})", part.file, part.offset, part.len)
    }
}

/// The pieces of one index loaded so far, each with when it was last read.
pub struct Loaded<K> {
    pieces: HashMap<K, Piece>,
    bytes: usize,
    /// Counts reads: a piece's `read_at` is the count at its last read.
    clock: Cell<u64>,
}

struct Piece {
    bytes: Vec<u8>,
    read_at: Cell<u64>,
}

impl<K> Default for Loaded<K> {
    fn default() -> Self {
        Loaded { pieces: HashMap::new(), bytes: 0, clock: Cell::new(0) }
    }
}

impl<K: Eq + Hash + Clone> Loaded<K> {
    fn get<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> Option<&[u8]>
    where
        K: Borrow<Q>,
    {
        let piece = self.pieces.get(key)?;
        self.clock.set(self.clock.get() + 1);
        piece.read_at.set(self.clock.get());
        Some(&piece.bytes)
    }

    fn add(&mut self, key: K, bytes: Vec<u8>) {
        if self.pieces.contains_key(&key) {
            return;
        }
        self.bytes += bytes.len();
        self.pieces.insert(key, Piece { bytes, read_at: Cell::new(self.clock.get()) });
    }

    /// Adds a piece to the cache, which holds at most [`CACHE_MAX_BYTES`]: when it is full, the
    /// pieces read longest ago leave until half of it is free. So the dictionary buckets of common
    /// words, which most queries read, stay.
    fn keep(&mut self, key: K, bytes: Vec<u8>) {
        if self.bytes + bytes.len() > CACHE_MAX_BYTES {
            let mut by_age: Vec<(u64, K)> =
                self.pieces.iter().map(|(key, piece)| (piece.read_at.get(), key.clone())).collect();
            domain::sorted::sort_by_key(&mut by_age, |(read_at, _)| *read_at);
            for (_, old) in by_age {
                if self.bytes + bytes.len() <= CACHE_MAX_BYTES / 2 {
                    break;
                }
                if let Some(piece) = self.pieces.remove(&old) {
                    self.bytes -= piece.bytes.len();
                }
            }
        }
        self.add(key, bytes);
    }
}

/// What a query reads from: the pieces its request loaded, and the index's cached ones.
pub struct View<'a, K> {
    mine: &'a Loaded<K>,
    cached: &'a Loaded<K>,
}

impl<K: Eq + Hash + Clone> View<'_, K> {
    fn piece<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> Option<&[u8]>
    where
        K: Borrow<Q>,
    {
        self.mine.pieces.get(key).map(|piece| piece.bytes.as_slice()).or_else(|| self.cached.get(key))
    }
}

impl Files for View<'_, String> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.piece(name)
    }
}

impl Parts for View<'_, Part> {
    fn part(&self, part: &Part) -> Option<&[u8]> {
        self.piece(part)
    }
}

async fn load<I: Index>(
    env: &Env,
    loaded: &mut Loaded<I::Key>,
    mut keys: Vec<I::Key>,
) -> Result<(), ApiError> {
    domain::sorted::sort(&mut keys);
    keys.dedup();
    let fetched = I::read_all(env, &keys).await?;
    for (key, bytes) in keys.into_iter().zip(fetched) {
        let bytes = bytes.ok_or_else(|| {
            ApiError::Internal(format!("{} index file {} is missing", I::NAME, I::describe(&key)))
        })?;
        loaded.add(key, bytes);
    }
    Ok(())
}

/// One opened index of one build, and the pieces cached for it.
struct Shared<I: Index> {
    generation: u64,
    index: I,
    cached: RefCell<Loaded<I::Key>>,
}

thread_local! {
    /// `Rc<Shared<I>>` by [`Index::DIR`].
    static CACHE: RefCell<HashMap<&'static str, Rc<dyn Any>>> = RefCell::new(HashMap::new());
}

/// Runs `ask` against index `I` until it answers, loading the pieces it names in between.
pub(crate) async fn answer<I: Index, T, E: Into<Stop<I::Key>>>(
    env: &Env,
    ask: impl Fn(&I, &View<I::Key>) -> Result<T, E>,
) -> Result<T, ApiError> {
    let shared = shared::<I>(env).await?;
    let mut mine = Loaded::default();
    let answer = loop {
        let asked = {
            let cached = shared.cached.borrow();
            ask(&shared.index, &View { mine: &mine, cached: &cached }).map_err(Into::into)
        };
        match asked {
            Ok(answer) => break Ok(answer),
            Err(Stop::Need(keys)) => {
                if let Err(err) = load::<I>(env, &mut mine, keys).await {
                    break Err(err);
                }
            }
            Err(Stop::Corrupt(detail)) => {
                forget(&shared);
                return Err(ApiError::Internal(detail));
            }
        }
    };
    let mut cached = shared.cached.borrow_mut();
    for (key, piece) in mine.pieces {
        cached.keep(key, piece.bytes);
    }
    answer
}

/// The index of the current build, opened once per isolate and build.
async fn shared<I: Index>(env: &Env) -> Result<Rc<Shared<I>>, ApiError> {
    let generation = packs::generation(env).await?;
    let current = || {
        CACHE
            .with(|cache| cache.borrow().get(I::DIR).cloned())
            .and_then(|any| any.downcast::<Shared<I>>().ok())
            .filter(|shared| shared.generation == generation)
    };
    if let Some(shared) = current() {
        return Ok(shared);
    }
    let bytes = fetch_bytes(env, format!("{}/manifest.json", I::DIR))
        .await?
        .ok_or_else(|| ApiError::Internal(format!("the {} index is missing: run the builder", I::NAME)))?;
    let index = I::open(env, &bytes).await?;
    // Another request may have opened it meanwhile: one copy is enough.
    if let Some(shared) = current() {
        return Ok(shared);
    }
    let shared = Rc::new(Shared { generation, index, cached: RefCell::new(Loaded::default()) });
    CACHE.with(|cache| cache.borrow_mut().insert(I::DIR, shared.clone() as Rc<dyn Any>));
    Ok(shared)
}

/// Drops `shared` from the cache, unless a newer build's index took its place already.
fn forget<I: Index>(shared: &Rc<Shared<I>>) {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let same = cache.get(I::DIR).is_some_and(|any| {
            any.clone().downcast::<Shared<I>>().is_ok_and(|held| Rc::ptr_eq(&held, shared))
        });
        if same {
            cache.remove(I::DIR);
        }
    });
}
