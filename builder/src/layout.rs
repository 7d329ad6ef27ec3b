//! The production layout of a build: `<out>.assets/` (the static-assets folder, at most 20,000 files
//! whatever the corpus size) and `<out>.r2/` (the R2 objects: content-named packs of every per-item
//! file, and `objects.txt`, the keys the build needs). The rules are `domain::layout`'s.
//!
//! Both folders are updated in place from the last layout, never swapped, so a server reading them
//! keeps answering while a build runs beside it:
//! - a packed file whose checksum did not change keeps its place in its pack; the changed and new
//!   ones are appended to one new pack, so a rebuild after one recipe changed writes one small object;
//! - small packs left by many rebuilds are merged once there are [`MAX_SMALL_PACKS`] of them, and a
//!   pack that is mostly dead is rewritten, so the packs stay few and large;
//! - only the directory shards whose entries changed are rewritten (each by a rename), and
//!   `root.json`, which lists their hashes, is replaced last;
//! - an asset is a hard link to the built file, relinked (by rename) only when the build replaced it;
//!   a site-wide file over a static asset's 25 MiB (the whole corpus's `episodes.jsonl`) is packed.
//!
//! What is in `dist/` comes from `SHA256SUMS`, which lists every built file with its checksum, plus
//! the files at the top of `dist/` that it cannot list (itself, `datapackage.json`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use domain::layout::{self, Entry, Root, Shard};

use crate::build::sibling;

/// A pack is cut once it reaches this size: few objects, each well under R2's single-upload limit.
const PACK_TARGET: u64 = 64 * 1024 * 1024;
/// A pack under half the target counts as small; this many small packs are merged into large ones.
const MAX_SMALL_PACKS: usize = 16;
/// One deploy holds at most this many static files (Workers Free plan) ...
pub const MAX_ASSETS: usize = 20_000;
/// ... of at most this many bytes each.
const MAX_ASSET_BYTES: u64 = 25 * 1024 * 1024;

/// What a layout step did.
#[derive(Debug, Default)]
pub struct Summary {
    pub assets: usize,
    pub packed: usize,
    pub packs: usize,
    pub pack_bytes: u64,
    /// The packs this step wrote, which a deploy uploads.
    pub new_packs: Vec<String>,
    pub new_pack_bytes: u64,
}

pub fn assets_dir(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "assets")
}

pub fn r2_dir(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "r2")
}

/// Lays the build in `out_dir` out as static assets and R2 packs, reusing the last layout.
pub fn publish(out_dir: &Path) -> Result<Summary> {
    let assets = assets_dir(out_dir);
    let r2 = r2_dir(out_dir);
    std::fs::create_dir_all(assets.join(layout::SHARD_DIR))?;
    std::fs::create_dir_all(r2.join("packs"))?;
    let files = built_files(out_dir)?;

    // Files too large for a static asset (a whole-corpus dump) are packed wherever they sit.
    let mut oversized = HashSet::new();
    for path in files.keys().filter(|path| !layout::is_packed(path)) {
        let len = std::fs::metadata(out_dir.join(path))
            .with_context(|| format!("{path} is listed but missing"))?
            .len();
        if len > MAX_ASSET_BYTES {
            oversized.insert(path.clone());
        }
    }
    let packed = |path: &str| layout::is_packed(path) || oversized.contains(path);
    let previous = read_directory(&assets, &r2).unwrap_or_default();
    let (mut entries, to_pack) = plan(&files, previous, &packed);
    let mut summary = Summary::default();
    for batch in batches(out_dir, &to_pack)? {
        let (key, bytes, placed) = write_pack(out_dir, &r2, &batch)?;
        summary.new_pack_bytes += bytes;
        summary.new_packs.push(key);
        entries.extend(placed);
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));

    let root = write_directory(&assets, &entries)?;
    let mut pack_sizes: BTreeMap<String, u64> = BTreeMap::new();
    for key in &root.packs {
        pack_sizes.insert(key.clone(), std::fs::metadata(r2.join(key)).with_context(|| key.clone())?.len());
    }
    write_objects_list(&r2, &root.packs)?;
    remove_unlisted(&r2.join("packs"), &root.packs.iter().map(|k| r2.join(k)).collect())?;

    let asset_paths: Vec<&str> = files.keys().filter(|path| !packed(path)).map(String::as_str).collect();
    link_assets(out_dir, &assets, &asset_paths)?;
    let n_assets = asset_paths.len() + 1 + root.shards.len();
    if n_assets > MAX_ASSETS {
        bail!("the layout has {n_assets} static files, over the {MAX_ASSETS} one deploy may hold");
    }
    summary.assets = n_assets;
    summary.packed = entries.len();
    summary.packs = root.packs.len();
    summary.pack_bytes = pack_sizes.values().sum();
    Ok(summary)
}

/// Every file of the build with its SHA-256, by path.
fn built_files(out_dir: &Path) -> Result<BTreeMap<String, [u8; 32]>> {
    let sums_path = out_dir.join("SHA256SUMS");
    let sums =
        std::fs::read_to_string(&sums_path).with_context(|| format!("reading {}", sums_path.display()))?;
    let mut files = BTreeMap::new();
    for line in sums.lines() {
        let (sha, path) = line.split_once("  ").with_context(|| format!("SHA256SUMS: `{line}`"))?;
        files.insert(path.to_string(), decode_sha(sha).with_context(|| format!("SHA256SUMS: `{line}`"))?);
    }
    // The files SHA256SUMS cannot list: itself, and what was written after it.
    for item in std::fs::read_dir(out_dir)? {
        let item = item?;
        let name = item.file_name().to_string_lossy().to_string();
        if item.file_type()?.is_file() && !files.contains_key(&name) {
            let bytes = std::fs::read(item.path())?;
            files.insert(name, domain_sha(&bytes));
        }
    }
    Ok(files)
}

fn decode_sha(hex: &str) -> Result<[u8; 32]> {
    let bytes = data_encoding::HEXLOWER.decode(hex.as_bytes())?;
    bytes.try_into().map_err(|_| anyhow::anyhow!("not a SHA-256"))
}

fn domain_sha(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// The last layout's entries, when its root, shards and packs are all in place.
fn read_directory(assets: &Path, r2: &Path) -> Option<Vec<Entry>> {
    let root: Root = serde_json::from_slice(&std::fs::read(assets.join(layout::ROOT)).ok()?).ok()?;
    if root.format != layout::FORMAT || !root.packs.iter().all(|key| r2.join(key).is_file()) {
        return None;
    }
    let mut entries = Vec::new();
    for (k, hash) in root.shards.iter().enumerate() {
        let bytes = std::fs::read(assets.join(layout::shard_file(k))).ok()?;
        if Shard::hash(&bytes) != *hash {
            return None;
        }
        entries.extend(Shard::decode(&bytes).ok()?.entries);
    }
    Some(entries)
}

/// Which entries stay where they are, and which packed files go into new packs: the changed and
/// new ones, and the live files of packs that are due to be merged or rewritten.
fn plan(
    files: &BTreeMap<String, [u8; 32]>,
    previous: Vec<Entry>,
    packed: &dyn Fn(&str) -> bool,
) -> (Vec<Entry>, Vec<(String, [u8; 32])>) {
    let mut kept: Vec<Entry> = Vec::new();
    let previous: HashMap<String, Entry> = previous.into_iter().map(|e| (e.path.clone(), e)).collect();
    let mut to_pack = Vec::new();
    for (path, sha) in files.iter().filter(|(path, _)| packed(path)) {
        match previous.get(path) {
            Some(entry) if entry.hash == layout::short_hash(sha) => kept.push(entry.clone()),
            _ => to_pack.push((path.clone(), *sha)),
        }
    }
    // Live bytes per pack and each pack's extent (its end is at least the last live byte).
    let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
    for entry in previous.values() {
        let (_, end) = live.entry(entry.pack).or_default();
        *end = (*end).max(entry.offset + entry.len);
    }
    for entry in &kept {
        live.entry(entry.pack).or_default().0 += entry.len;
    }
    let small: Vec<u64> =
        live.iter().filter(|(_, (_, end))| *end < PACK_TARGET / 2).map(|(id, _)| *id).collect();
    let mut rewrite: HashSet<u64> =
        live.iter().filter(|(_, (bytes, end))| *bytes * 2 < *end).map(|(id, _)| *id).collect();
    if small.len() > MAX_SMALL_PACKS {
        rewrite.extend(small);
    }
    let (moved, stay): (Vec<Entry>, Vec<Entry>) = kept.into_iter().partition(|e| rewrite.contains(&e.pack));
    to_pack.extend(moved.into_iter().map(|e| {
        let sha = files[&e.path];
        (e.path, sha)
    }));
    to_pack.sort();
    (stay, to_pack)
}

/// The files of one pack: path, SHA-256 and length.
type Batch = Vec<(String, [u8; 32], u64)>;

/// Cuts the files to pack into packs of about [`PACK_TARGET`] bytes, in path order.
fn batches(out_dir: &Path, to_pack: &[(String, [u8; 32])]) -> Result<Vec<Batch>> {
    let mut batches = Vec::new();
    let mut batch = Vec::new();
    let mut bytes = 0;
    for (path, sha) in to_pack {
        let len = std::fs::metadata(out_dir.join(path))
            .with_context(|| format!("{path} is listed but missing"))?
            .len();
        if bytes + len > PACK_TARGET && !batch.is_empty() {
            batches.push(std::mem::take(&mut batch));
            bytes = 0;
        }
        bytes += len;
        batch.push((path.clone(), *sha, len));
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    Ok(batches)
}

/// Writes one pack and answers its key, size and entries.
fn write_pack(
    out_dir: &Path,
    r2: &Path,
    batch: &[(String, [u8; 32], u64)],
) -> Result<(String, u64, Vec<Entry>)> {
    let mut bytes = Vec::with_capacity(batch.iter().map(|(_, _, len)| *len as usize).sum());
    let mut placed = Vec::with_capacity(batch.len());
    for (path, sha, _) in batch {
        let file = std::fs::read(out_dir.join(path)).with_context(|| format!("reading {path}"))?;
        if domain_sha(&file) != *sha {
            bail!("{path} does not match its SHA256SUMS line: the build changed under the layout step");
        }
        placed.push(Entry {
            path: path.clone(),
            pack: 0,
            offset: bytes.len() as u64,
            len: file.len() as u64,
            hash: layout::short_hash(sha),
        });
        bytes.extend_from_slice(&file);
    }
    let id = layout::pack_id(&bytes);
    for entry in &mut placed {
        entry.pack = id;
    }
    let key = layout::pack_key(id);
    write_atomically(&r2.join(&key), &bytes)?;
    Ok((key, bytes.len() as u64, placed))
}

/// Writes the shards that changed, then `root.json`, then removes shards no longer named.
fn write_directory(assets: &Path, entries: &[Entry]) -> Result<Root> {
    let n = layout::n_shards(entries.len());
    let mut shards = vec![Shard::default(); n];
    for entry in entries {
        shards[layout::shard_of(&entry.path, n)].entries.push(entry.clone());
    }
    let dir = assets.join(layout::SHARD_DIR);
    let previous: Option<Root> =
        std::fs::read(assets.join(layout::ROOT)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let previous = previous.map(|root| root.shards).unwrap_or_default();
    let mut hashes = Vec::with_capacity(n);
    for (k, shard) in shards.iter().enumerate() {
        let bytes = shard.encode();
        let hash = Shard::hash(&bytes);
        if previous.get(k) != Some(&hash) || !assets.join(layout::shard_file(k)).is_file() {
            write_atomically(&assets.join(layout::shard_file(k)), &bytes)?;
        }
        hashes.push(hash);
    }
    let packs: Vec<String> = entries
        .iter()
        .map(|e| e.pack)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(layout::pack_key)
        .collect();
    let root = Root { format: layout::FORMAT, shards: hashes, packs };
    write_atomically(&assets.join(layout::ROOT), serde_json::to_string(&root)?.as_bytes())?;
    let mut keep: HashSet<PathBuf> = (0..n).map(|k| assets.join(layout::shard_file(k))).collect();
    keep.insert(assets.join(layout::ROOT));
    remove_unlisted(&dir, &keep)?;
    Ok(root)
}

fn write_objects_list(r2: &Path, keys: &[String]) -> Result<()> {
    let mut list = Vec::new();
    for key in keys {
        writeln!(list, "{key}")?;
    }
    write_atomically(&r2.join("objects.txt"), &list)
}

/// Each asset is a hard link to its built file; one the build replaced is relinked by a rename, so
/// a reader sees the old file or the new one, never half of either. Assets the build no longer has
/// are removed.
fn link_assets(out_dir: &Path, assets: &Path, paths: &[&str]) -> Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    for path in paths {
        let source = out_dir.join(path);
        let target = assets.join(path);
        let meta = std::fs::metadata(&source).with_context(|| format!("{path} is listed but missing"))?;
        if meta.len() > MAX_ASSET_BYTES {
            bail!("{path} is {} bytes, over the {MAX_ASSET_BYTES} a static asset may hold", meta.len());
        }
        if let Ok(current) = std::fs::metadata(&target)
            && current.ino() == meta.ino()
            && current.dev() == meta.dev()
        {
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = target
            .with_file_name(format!(".{}.tmp", target.file_name().unwrap_or_default().to_string_lossy()));
        let _ = std::fs::remove_file(&tmp);
        if std::fs::hard_link(&source, &tmp).is_err() {
            std::fs::copy(&source, &tmp).with_context(|| format!("copying {path}"))?;
        }
        std::fs::rename(&tmp, &target).with_context(|| format!("placing {}", target.display()))?;
    }
    let wanted: HashSet<PathBuf> = paths.iter().map(|p| assets.join(p)).collect();
    for item in walkdir::WalkDir::new(assets).min_depth(1).contents_first(true) {
        let item = item?;
        let path = item.path();
        if path.starts_with(assets.join(layout::SHARD_DIR)) {
            continue;
        }
        if item.file_type().is_file() && !wanted.contains(path) {
            std::fs::remove_file(path)?;
        } else if item.file_type().is_dir() && std::fs::read_dir(path)?.next().is_none() {
            std::fs::remove_dir(path)?;
        }
    }
    Ok(())
}

fn remove_unlisted(dir: &Path, keep: &HashSet<PathBuf>) -> Result<()> {
    for item in std::fs::read_dir(dir)? {
        let path = item?.path();
        if path.is_file() && !keep.contains(&path) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("placing {}", path.display()))?;
    Ok(())
}
