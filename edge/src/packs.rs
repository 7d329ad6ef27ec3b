//! Packed built files (`domain::site::layout`): the directory this isolate has loaded, and ranged reads
//! from the `PACKS` R2 bucket; and [`fetch_asset`], a static asset through `ASSETS` (the layout's
//! root is one).
//!
//! `root.json` names the build: an isolate looks at it again at most every [`ROOT_RECHECK_MS`], and
//! when it changed (a local rebuild beside a running server; in production a deploy also brings a new
//! isolate) the [`generation`] moves on, and every isolate cache of built files (search index,
//! phrase index, transcripts, slug list) starts afresh. A new root that names a pack R2 does not
//! hold yet is a build still being published (or one whose packs nobody put into this local R2):
//! the isolate keeps reading the last root, whose shards and packs are all still there, and looks
//! again a second later. So a reader sees the last build whole or the new one whole, never a
//! directory it cannot follow.
//!
//! Shards are content-named, read from directory packs, checked against the hash the root lists, and
//! kept (bounded by [`SHARDS_MAX_BYTES`]) across builds: at 100,000 recipes all 256 take about 12 MiB.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use domain::site::layout::{self, Entry, Root, Shard, ShardPlace};
use worker::{ByteStream, Env, Range, Response};

use crate::error::ApiError;

const SHARDS_MAX_BYTES: usize = 24 * 1024 * 1024;
/// How often an isolate looks at the build's root again: the one clock of the view of what is newer
/// than the build, which takes its interval from here.
pub const ROOT_RECHECK_MS: u64 = 1_000;
pub const BUCKET: &str = "PACKS";

#[derive(Default)]
struct Directory {
    root: Option<Rc<Root>>,
    root_bytes: Vec<u8>,
    checked_ms: u64,
    /// Moves on each time the root changes; caches of built files compare it with theirs.
    generation: u64,
    /// Loaded shards by place (pack, offset): a place never holds other bytes.
    shards: HashMap<(u64, u64), Rc<Shard>>,
    bytes: usize,
}

/// The build this isolate reads now, as a number that changes when the build does.
pub async fn generation(env: &Env) -> Result<u64, ApiError> {
    root(env).await?;
    Ok(DIRECTORY.with(|dir| dir.borrow().generation))
}

thread_local! {
    static DIRECTORY: RefCell<Directory> = RefCell::new(Directory::default());
}

/// The root of the build this isolate reads now; a reader that needs several files of one build
/// (the dump's parts) holds on to it and looks them up with [`entry_in`].
pub async fn root(env: &Env) -> Result<Rc<Root>, ApiError> {
    let now_ms = worker::Date::now().as_millis();
    let fresh = DIRECTORY.with(|dir| {
        let dir = dir.borrow();
        dir.root.clone().filter(|_| now_ms.saturating_sub(dir.checked_ms) < ROOT_RECHECK_MS)
    });
    if let Some(root) = fresh {
        return Ok(root);
    }
    let bytes = fetch_asset(env, layout::ROOT)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("{} is missing: run the builder", layout::ROOT)))?;
    let (current, unchanged) = DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        dir.checked_ms = now_ms;
        (dir.root.clone(), dir.root_bytes == bytes)
    });
    if let Some(current) = current.as_ref().filter(|_| unchanged) {
        return Ok(current.clone());
    }
    let root: Root = serde_json::from_slice(&bytes)
        .map_err(|err| ApiError::Internal(format!("{}: {err}", layout::ROOT)))?;
    if root.format != layout::FORMAT {
        return Err(ApiError::Internal(format!(
            "{} has format {}, not {}",
            layout::ROOT,
            root.format,
            layout::FORMAT
        )));
    }
    if let Some(current) = current
        && let Some(key) = missing_pack(env, &current, &root).await?
    {
        worker::console_warn!(
            "{} names {key}, which R2 does not hold: still reading the last build",
            layout::ROOT
        );
        return Ok(current);
    }
    let root = Rc::new(root);
    DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        dir.root = Some(root.clone());
        dir.root_bytes = bytes;
        dir.generation += 1;
    });
    Ok(root)
}

/// The first pack `new` names that `current` does not and R2 does not hold.
async fn missing_pack(env: &Env, current: &Root, new: &Root) -> Result<Option<String>, ApiError> {
    let bucket = env.bucket(BUCKET)?;
    for key in new.packs.iter().filter(|key| !current.packs.contains(key)) {
        if bucket.head(key.as_str()).await?.is_none() {
            return Ok(Some(key.clone()));
        }
    }
    Ok(None)
}

async fn shard(env: &Env, place: &ShardPlace) -> Result<Rc<Shard>, ApiError> {
    let at = (place.pack, place.offset);
    if let Some(shard) = DIRECTORY.with(|dir| dir.borrow().shards.get(&at).cloned()) {
        return Ok(shard);
    }
    let key = layout::pack_key(place.pack);
    let bytes = read_range(env, place.pack, place.offset, place.len).await?;
    if Shard::hash(&bytes) != place.hash {
        return Err(ApiError::Internal(format!(
            "the directory shard at {key}:{} does not match {}",
            place.offset,
            layout::ROOT
        )));
    }
    let shard =
        Rc::new(Shard::decode(&bytes).map_err(|err| {
            ApiError::Internal(format!("directory shard at {key}:{}: {err}", place.offset))
        })?);
    DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        if dir.bytes + bytes.len() > SHARDS_MAX_BYTES {
            dir.shards.clear();
            dir.bytes = 0;
        }
        dir.bytes += bytes.len();
        dir.shards.insert(at, shard.clone());
    });
    Ok(shard)
}

/// Where the packed file `path` is, or `None` when the build has no such file.
pub async fn entry(env: &Env, path: &str) -> Result<Option<Entry>, ApiError> {
    let root = root(env).await?;
    entry_in(env, &root, path).await
}

/// Where the packed file `path` is in the build of `root`.
pub async fn entry_in(env: &Env, root: &Root, path: &str) -> Result<Option<Entry>, ApiError> {
    let Some(place) = root.shard_for(path) else { return Ok(None) };
    Ok(shard(env, place).await?.find(path).cloned())
}

/// One ranged read of a pack.
async fn object(env: &Env, pack: u64, offset: u64, len: u64) -> Result<worker::Object, ApiError> {
    let key = layout::pack_key(pack);
    env.bucket(BUCKET)?
        .get(&key)
        .range(Range::OffsetWithLength { offset, length: len })
        .execute()
        .await?
        .ok_or_else(|| ApiError::Internal(format!("R2 has no {key}: upload the build's packs")))
}

/// A packed file as a response body: R2's stream handed to the runtime as it is, so its bytes never
/// cross into the wasm (no copy, no per-chunk crossing) and a file of any size (a 160 MB dump, say)
/// passes through without being held in the isolate's memory.
pub async fn body(env: &Env, entry: &Entry) -> Result<Response, ApiError> {
    if entry.len == 0 {
        return Ok(Response::from_bytes(Vec::new())?);
    }
    let object = object(env, entry.pack, entry.offset, entry.len).await?;
    let body = object.body().ok_or_else(|| ApiError::Internal(format!("{} answered no body", entry.path)))?;
    Ok(Response::from_body(body.response_body()?)?)
}

/// A packed file's bytes as a stream, straight from R2.
pub async fn stream(env: &Env, entry: &Entry) -> Result<ByteStream, ApiError> {
    let object = object(env, entry.pack, entry.offset, entry.len).await?;
    let body = object.body().ok_or_else(|| ApiError::Internal(format!("{} answered no body", entry.path)))?;
    Ok(body.stream()?)
}

/// A packed file's bytes.
pub async fn read(env: &Env, entry: &Entry) -> Result<Vec<u8>, ApiError> {
    read_range(env, entry.pack, entry.offset, entry.len).await
}

async fn read_range(env: &Env, pack: u64, offset: u64, len: u64) -> Result<Vec<u8>, ApiError> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let key = layout::pack_key(pack);
    let object = object(env, pack, offset, len).await?;
    let body = object.body().ok_or_else(|| ApiError::Internal(format!("{key} answered no body")))?;
    let bytes = body.bytes().await?;
    if bytes.len() as u64 != len {
        return Err(ApiError::Internal(format!(
            "{key} answered {} bytes at {offset}, not {len}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Bytes `offset..offset + len` of the packed file `path`: one ranged read, whatever the file's size
/// (the phrase index reads its files this way, a bucket or a block at a time).
pub async fn get_part(env: &Env, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, ApiError> {
    let Some(entry) = entry(env, path).await? else { return Ok(None) };
    if offset.checked_add(len).is_none_or(|end| end > entry.len) {
        return Err(ApiError::Internal(format!("{path} has no bytes {offset}..+{len}")));
    }
    Ok(Some(read_range(env, entry.pack, entry.offset + offset, len).await?))
}

/// The bytes of the packed file `path`, with its entry.
pub async fn get(env: &Env, path: &str) -> Result<Option<(Entry, Vec<u8>)>, ApiError> {
    let Some(entry) = entry(env, path).await? else { return Ok(None) };
    let bytes = read(env, &entry).await?;
    Ok(Some((entry, bytes)))
}

/// A static asset's bytes, or `None` when there is no such asset.
pub async fn fetch_asset(env: &Env, path: &str) -> Result<Option<Vec<u8>>, ApiError> {
    let mut response = env.assets("ASSETS")?.fetch(format!("https://assets.local/{path}"), None).await?;
    match response.status_code() {
        200 => Ok(Some(response.bytes().await?)),
        404 => Ok(None),
        status => Err(ApiError::Internal(format!("asset {path} answered {status}"))),
    }
}
