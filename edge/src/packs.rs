//! Packed built files (`domain::layout`): the directory this isolate has loaded, and ranged reads
//! from the `PACKS` R2 bucket.
//!
//! An isolate keeps the shards it has loaded (bounded by [`SHARDS_MAX_BYTES`]) for as long as the
//! root stays the same: at 100,000 recipes all 256 shards take about 12 MiB. The root names the build: an isolate looks at it again at most
//! every [`ROOT_RECHECK_MS`], and when it changed (a local rebuild beside a running server; in
//! production a deploy also brings a new isolate) the [`generation`] moves on, and every isolate cache
//! of built files (search index, phrase index, transcripts, slug list) starts afresh.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use domain::layout::{self, Entry, Root, Shard};
use worker::{Env, Range, Response};

use crate::assets::fetch_asset;
use crate::error::ApiError;

const SHARDS_MAX_BYTES: usize = 24 * 1024 * 1024;
const ROOT_RECHECK_MS: u64 = 1_000;
pub const BUCKET: &str = "PACKS";

#[derive(Default)]
struct Directory {
    root: Option<Rc<Root>>,
    root_bytes: Vec<u8>,
    checked_ms: u64,
    /// Moves on each time the root changes; caches of built files compare it with theirs.
    generation: u64,
    shards: HashMap<String, Rc<Shard>>,
    bytes: usize,
}

/// The build this isolate reads now, as a number that changes when the build does.
pub async fn generation(env: &Env) -> Result<u64, ApiError> {
    root(env).await?;
    Ok(DIRECTORY.with(|dir| dir.borrow().generation))
}

/// The generation last seen, without looking again.
pub fn known_generation() -> u64 {
    DIRECTORY.with(|dir| dir.borrow().generation)
}

thread_local! {
    static DIRECTORY: RefCell<Directory> = RefCell::new(Directory::default());
}

async fn root(env: &Env) -> Result<Rc<Root>, ApiError> {
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
    let unchanged = DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        dir.checked_ms = now_ms;
        dir.root.clone().filter(|_| dir.root_bytes == bytes)
    });
    if let Some(root) = unchanged {
        return Ok(root);
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
    let root = Rc::new(root);
    DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        dir.root = Some(root.clone());
        dir.root_bytes = bytes;
        dir.generation += 1;
        // Shards keep their file names from build to build: the old ones are of the old build.
        dir.shards.clear();
        dir.bytes = 0;
    });
    Ok(root)
}

async fn shard(env: &Env, file: &str) -> Result<Rc<Shard>, ApiError> {
    if let Some(shard) = DIRECTORY.with(|dir| dir.borrow().shards.get(file).cloned()) {
        return Ok(shard);
    }
    let bytes = fetch_asset(env, file)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("directory shard {file} is missing")))?;
    let shard = Rc::new(
        Shard::decode(&bytes).map_err(|err| ApiError::Internal(format!("directory shard {file}: {err}")))?,
    );
    DIRECTORY.with(|dir| {
        let mut dir = dir.borrow_mut();
        if dir.bytes + bytes.len() > SHARDS_MAX_BYTES {
            dir.shards.clear();
            dir.bytes = 0;
        }
        dir.bytes += bytes.len();
        dir.shards.insert(file.to_string(), shard.clone());
    });
    Ok(shard)
}

/// Where the packed file `path` is, or `None` when the build has no such file.
pub async fn entry(env: &Env, path: &str) -> Result<Option<Entry>, ApiError> {
    let root = root(env).await?;
    let Some(file) = root.shard_file(path) else { return Ok(None) };
    Ok(shard(env, &file).await?.find(path).cloned())
}

/// The R2 object holding a packed file's bytes: one ranged read of its pack.
async fn object(env: &Env, entry: &Entry) -> Result<worker::Object, ApiError> {
    let key = layout::pack_key(entry.pack);
    env.bucket(BUCKET)?
        .get(&key)
        .range(Range::OffsetWithLength { offset: entry.offset, length: entry.len })
        .execute()
        .await?
        .ok_or_else(|| ApiError::Internal(format!("R2 has no {key}: upload the build's packs")))
}

/// Files up to this size are read whole; larger ones are streamed.
const READ_WHOLE_BYTES: u64 = 1024 * 1024;

/// A packed file as a response body: a large one streamed from R2, so a file of any size (a 160 MB
/// dump, say) passes through without being held in the isolate's memory; a small one read whole,
/// which spares it the stream's per-chunk crossings between JavaScript and wasm.
pub async fn body(env: &Env, entry: &Entry) -> Result<Response, ApiError> {
    if entry.len <= READ_WHOLE_BYTES {
        return Ok(Response::from_bytes(read(env, entry).await?)?);
    }
    let object = object(env, entry).await?;
    let body = object.body().ok_or_else(|| ApiError::Internal(format!("{} answered no body", entry.path)))?;
    Ok(Response::from_stream(body.stream()?)?)
}

/// A packed file's bytes.
pub async fn read(env: &Env, entry: &Entry) -> Result<Vec<u8>, ApiError> {
    if entry.len == 0 {
        return Ok(Vec::new());
    }
    let key = layout::pack_key(entry.pack);
    let object = object(env, entry).await?;
    let body = object.body().ok_or_else(|| ApiError::Internal(format!("{key} answered no body")))?;
    let bytes = body.bytes().await?;
    if bytes.len() as u64 != entry.len {
        return Err(ApiError::Internal(format!(
            "{key} answered {} bytes for {}, not {}",
            bytes.len(),
            entry.path,
            entry.len
        )));
    }
    Ok(bytes)
}

/// The bytes of the packed file `path`, with its entry.
pub async fn get(env: &Env, path: &str) -> Result<Option<(Entry, Vec<u8>)>, ApiError> {
    let Some(entry) = entry(env, path).await? else { return Ok(None) };
    let bytes = read(env, &entry).await?;
    Ok(Some((entry, bytes)))
}
