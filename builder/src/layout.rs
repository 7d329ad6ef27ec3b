//! The production layout of a build: `<out>.assets/` (the static-assets folder: the site-wide files,
//! a set the code fixes, and `_layout/root.json`) and `<out>.r2/` (the R2 objects: content-named
//! packs of every other file and of the directory's shards, and `objects.txt`, the keys the build
//! needs). The rules are `domain::site::layout`'s.
//!
//! Both folders are updated in place from the last layout, never swapped, so a server reading them
//! keeps answering while a build runs beside it, and `root.json` is the single switch:
//! - a packed file whose checksum did not change keeps its place in its pack; the changed and new
//!   ones are appended to one new pack, so a rebuild after one recipe changed writes one small pack;
//! - so are the directory's shards: one whose entries did not change keeps its bytes and its place
//!   (it is not encoded again), the changed ones go into one new directory pack (a pack cannot hold
//!   the shards that name its own id);
//! - small packs left by many rebuilds are merged once there are [`MAX_SMALL_PACKS`] of them, and a
//!   pack that is mostly dead is rewritten, so the packs stay few and large (a dead dump part does not
//!   count: a small site's whole dump is rewritten by every change);
//! - the local R2s that serve this build (`local_r2.rs`) get the new packs, then the static assets
//!   are relinked, and `root.json` is replaced last, by a rename: until then a reader sees the last
//!   build's directory, whose packs are all still in R2;
//! - an asset is a hard link to the built file, relinked (by rename) only when the build replaced it;
//!   a site-wide file over a static asset's 25 MiB is packed, in a pack of its own: `SHA256SUMS`
//!   changes with every build, and beside other files would leave their pack mostly dead.
//!
//! What is in `dist/` comes from `SHA256SUMS`, which lists every built file with its checksum, plus
//! the files at the top of `dist/` that it cannot list (itself, `datapackage.json`).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use domain::site::layout::{self, Entry, Root, Shard, ShardPlace};
use rayon::prelude::*;

use crate::output::{assets_dir, r2_dir};

/// The file that lists every other file of the build with its SHA-256.
const SUMS: &str = "SHA256SUMS";
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

/// Wrangler's ignore list in the static-assets folder (gitignore patterns): a build's temporary files,
/// which a local asset server reading the folder then (a wrangler reload during a build) or a deploy
/// (a file left by a killed build) must not take for assets.
const ASSETS_IGNORE: (&str, &str) = (".assetsignore", "*.tmp\n");

/// A file to pack: its path (for a shard, its number), SHA-256 and length.
type Item = (String, [u8; 32], u64);

/// Lays the build in `out_dir` out as static assets and R2 packs, reusing the last layout.
pub fn publish(out_dir: &Path) -> Result<Summary> {
    let assets = assets_dir(out_dir);
    let r2 = r2_dir(out_dir);
    std::fs::create_dir_all(&assets)?;
    std::fs::create_dir_all(r2.join("packs"))?;
    let mut timings = crate::state::Timings::new();
    let sums_path = out_dir.join(SUMS);
    let sums =
        std::fs::read_to_string(&sums_path).with_context(|| format!("reading {}", sums_path.display()))?;
    let mut files = listed_files(&sums)?;
    let unlisted = unlisted_files(out_dir, &sums, &files)?;
    files.extend(unlisted.iter().map(|(path, sha)| (path.as_str(), *sha)));
    files.sort_unstable_by(|a, b| a.0.cmp(b.0));
    timings.lap("  layout: the files");

    // Files too large for a static asset are packed wherever they sit.
    let mut oversized = HashSet::new();
    for (path, _) in files.iter().filter(|(path, _)| !layout::is_packed(path)) {
        let len = std::fs::metadata(out_dir.join(path))
            .with_context(|| format!("{path} is listed but missing"))?
            .len();
        if len > MAX_ASSET_BYTES {
            oversized.insert(*path);
        }
    }
    let packed = |path: &str| layout::is_packed(path) || oversized.contains(path);
    let asset_paths: Vec<&str> = files.iter().map(|(path, _)| *path).filter(|path| !packed(path)).collect();
    let n_assets = asset_paths.len() + 1;
    if n_assets > MAX_ASSETS {
        bail!("the layout has {n_assets} static files, over the {MAX_ASSETS} one deploy may hold");
    }
    let Previous { entries: last_entries, shards: last_shards, bytes: last_bytes, counts: last_counts } =
        read_directory(&assets, &r2).unwrap_or_default();
    let mut summary = Summary::default();
    timings.lap("  layout: the last directory");

    // The files: unchanged ones stay where they are, the others go into new packs.
    let to_place: Vec<(&str, [u8; 32])> = files.iter().filter(|(path, _)| packed(path)).copied().collect();
    let (mut entries, to_pack) = plan(&to_place, last_entries);
    let file_len = |path: &str| {
        Ok(std::fs::metadata(out_dir.join(path))
            .with_context(|| format!("{path} is listed but missing"))?
            .len())
    };
    // `SHA256SUMS` was read and hashed above: its bytes are packed from memory.
    let contents = |path: &str, sha: &[u8; 32]| -> Result<Cow<'_, [u8]>> {
        if path == SUMS {
            return Ok(Cow::Borrowed(sums.as_bytes()));
        }
        let file = std::fs::read(out_dir.join(path)).with_context(|| format!("reading {path}"))?;
        if domain_sha(&file) != *sha {
            bail!("{path} does not match its SHA256SUMS line: the build changed under the layout step");
        }
        Ok(Cow::Owned(file))
    };
    let mut new_packs = HashSet::new();
    for batch in batches(&to_pack, file_len, |path| !layout::is_packed(path))? {
        let placed = write_pack(&r2, &batch, |path, sha| contents(path, sha), &mut summary)?;
        new_packs.extend(placed.first().map(|entry| entry.pack));
        entries.extend(placed);
    }
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    timings.lap("  layout: the packs");

    // The directory: shards whose entries did not change keep their bytes and their place, the
    // others are encoded again and go into a new directory pack.
    let shards = shard_bytes(&entries, &new_packs, &last_bytes, &last_counts);
    let names: Vec<String> = (0..shards.len()).map(shard_name).collect();
    let shard_shas: Vec<[u8; 32]> = shards.par_iter().map(|bytes| domain_sha(bytes)).collect();
    let shard_files: Vec<(&str, [u8; 32])> = names.iter().map(String::as_str).zip(shard_shas).collect();
    let (mut placed, to_write) = plan(&shard_files, last_shards);
    let shard_len = |name: &str| Ok(shards[shard_number(name)].len() as u64);
    for batch in batches(&to_write, shard_len, |_| false)? {
        let shard = |name: &str, _: &[u8; 32]| Ok(Cow::Borrowed(&shards[shard_number(name)][..]));
        placed.extend(write_pack(&r2, &batch, shard, &mut summary)?);
    }
    placed.sort_by(|a, b| a.path.cmp(&b.path));
    timings.lap("  layout: the directory");
    let packs: BTreeSet<u64> = entries.iter().chain(&placed).map(|e| e.pack).collect();
    let root = Root {
        format: layout::FORMAT,
        shards: placed
            .iter()
            .map(|e| ShardPlace { pack: e.pack, offset: e.offset, len: e.len, hash: e.hash })
            .collect(),
        packs: packs.into_iter().map(layout::pack_key).collect(),
    };
    write_objects_list(&r2, &root.packs)?;

    // Publishing: every pack the new root names is in the local R2s before anything names it, the
    // site-wide files are relinked, and the root is switched last.
    crate::local_r2::fill(out_dir)?;
    let (ignore_file, ignored) = ASSETS_IGNORE;
    if std::fs::read(assets.join(ignore_file)).ok().as_deref() != Some(ignored.as_bytes()) {
        write_atomically(&assets.join(ignore_file), ignored.as_bytes())?;
    }
    link_assets(out_dir, &assets, &asset_paths)?;
    let root_path = assets.join(layout::ROOT);
    std::fs::create_dir_all(root_path.parent().expect("the root sits in a folder"))?;
    write_atomically(&root_path, serde_json::to_string(&root)?.as_bytes())?;
    remove_unlisted(&r2.join("packs"), &root.packs.iter().map(|k| r2.join(k)).collect())?;

    for key in &root.packs {
        summary.pack_bytes += std::fs::metadata(r2.join(key)).with_context(|| key.clone())?.len();
    }
    summary.assets = n_assets;
    summary.packed = entries.len();
    summary.packs = root.packs.len();
    Ok(summary)
}

/// Shard `k`'s name while it is planned and packed like a file: sorts in shard order.
fn shard_name(k: usize) -> String {
    format!("{k:08}")
}

fn shard_number(name: &str) -> usize {
    name.parse().expect("a shard name is its number")
}

/// The directory's shards, encoded: every entry in the shard of its path. A shard of the last
/// directory whose entries are the same (as many, none newly placed: an entry that stayed keeps its
/// bytes) keeps its bytes; the others are encoded, which on a one-recipe rebuild is a few of them.
fn shard_bytes<'a>(
    entries: &[Entry],
    new_packs: &HashSet<u64>,
    last: &'a [Vec<u8>],
    last_counts: &[usize],
) -> Vec<Cow<'a, [u8]>> {
    let n = layout::n_shards(entries.len());
    let of: Vec<usize> = entries.par_iter().map(|entry| layout::shard_of(&entry.path, n)).collect();
    let mut counts = vec![0; n];
    let mut dirty = vec![last.len() != n; n];
    for (entry, &k) in entries.iter().zip(&of) {
        counts[k] += 1;
        dirty[k] |= new_packs.contains(&entry.pack);
    }
    for (k, dirty) in dirty.iter_mut().enumerate() {
        *dirty |= last_counts.get(k) != Some(&counts[k]);
    }
    let mut shards: Vec<Shard> = vec![Shard::default(); n];
    for (entry, &k) in entries.iter().zip(&of) {
        if dirty[k] {
            shards[k].entries.push(entry.clone());
        }
    }
    shards
        .par_iter()
        .enumerate()
        .map(|(k, shard)| match dirty[k] {
            true => Cow::Owned(shard.encode()),
            false => Cow::Borrowed(&last[k][..]),
        })
        .collect()
}

/// The files `SHA256SUMS` lists, with their checksums, borrowed from its text.
fn listed_files(sums: &str) -> Result<Vec<(&str, [u8; 32])>> {
    sums.par_lines()
        .map(|line| {
            let (sha, path) = line.split_once("  ").with_context(|| format!("{SUMS}: `{line}`"))?;
            Ok((path, decode_sha(sha).with_context(|| format!("{SUMS}: `{line}`"))?))
        })
        .collect()
}

/// The files at the top of the build that `SHA256SUMS` (`sums`, listing `listed`) cannot list:
/// itself, and what was written after it.
fn unlisted_files(
    out_dir: &Path,
    sums: &str,
    listed: &[(&str, [u8; 32])],
) -> Result<Vec<(String, [u8; 32])>> {
    let top: HashSet<&str> =
        listed.iter().map(|(path, _)| *path).filter(|path| !path.contains('/')).collect();
    let mut unlisted = Vec::new();
    for item in std::fs::read_dir(out_dir)? {
        let item = item?;
        let name = item.file_name().to_string_lossy().to_string();
        if item.file_type()?.is_file() && !top.contains(name.as_str()) {
            let sha = match name.as_str() {
                SUMS => domain_sha(sums.as_bytes()),
                _ => domain_sha(&std::fs::read(item.path())?),
            };
            unlisted.push((name, sha));
        }
    }
    Ok(unlisted)
}

fn decode_sha(hex: &str) -> Result<[u8; 32]> {
    let bytes = data_encoding::HEXLOWER.decode(hex.as_bytes())?;
    bytes.try_into().map_err(|_| anyhow::anyhow!("not a SHA-256"))
}

fn domain_sha(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// The last layout: its file entries, and its shards as entries named by [`shard_name`], with each
/// shard's bytes and how many entries it holds.
#[derive(Default)]
struct Previous {
    entries: Vec<Entry>,
    shards: Vec<Entry>,
    bytes: Vec<Vec<u8>>,
    counts: Vec<usize>,
}

/// The last layout, when its root and every pack it names are in place.
fn read_directory(assets: &Path, r2: &Path) -> Option<Previous> {
    let root: Root = serde_json::from_slice(&std::fs::read(assets.join(layout::ROOT)).ok()?).ok()?;
    if root.format != layout::FORMAT || !root.packs.iter().all(|key| r2.join(key).is_file()) {
        return None;
    }
    // Shards are read and decoded on every core.
    let read = |place: &ShardPlace| -> Option<(Vec<u8>, Vec<Entry>)> {
        let mut pack = std::fs::File::open(r2.join(layout::pack_key(place.pack))).ok()?;
        pack.seek(std::io::SeekFrom::Start(place.offset)).ok()?;
        let mut bytes = vec![0; usize::try_from(place.len).ok()?];
        pack.read_exact(&mut bytes).ok()?;
        let entries = (Shard::hash(&bytes) == place.hash).then(|| Shard::decode(&bytes).ok())??.entries;
        Some((bytes, entries))
    };
    let shards: Option<Vec<_>> = root.shards.par_iter().map(read).collect();
    let mut previous = Previous::default();
    for (k, (place, (bytes, entries))) in root.shards.iter().zip(shards?).enumerate() {
        previous.counts.push(entries.len());
        previous.entries.extend(entries);
        previous.bytes.push(bytes);
        previous.shards.push(Entry {
            path: shard_name(k),
            pack: place.pack,
            offset: place.offset,
            len: place.len,
            hash: place.hash,
        });
    }
    Some(previous)
}

/// Which entries stay where they are, and which files go into new packs: the changed and new ones,
/// and the live files of packs that are due to be merged or rewritten. `files` is sorted by path.
fn plan(files: &[(&str, [u8; 32])], mut previous: Vec<Entry>) -> (Vec<Entry>, Vec<(String, [u8; 32])>) {
    // Live bytes per pack and each pack's extent (its end is at least the last live byte).
    let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
    for entry in &previous {
        let (_, end) = live.entry(entry.pack).or_default();
        *end = (*end).max(entry.offset + entry.len);
    }
    // One walk of both lists in path order. A dump part is rewritten whole whenever one of its
    // recipes changes, so on a site of one part every rebuild leaves the last dump (JSON lines and
    // its Cooklang zip) dead. Counting it as dead would make a one-recipe rebuild rewrite every file
    // beside it; it counts as live, and goes when the pack is rewritten for other reasons or merged.
    previous.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let mut previous = previous.into_iter().peekable();
    let mut kept: Vec<Entry> = Vec::with_capacity(files.len());
    let mut to_pack = Vec::new();
    let dead_dump = |entry: &Entry, live: &mut HashMap<u64, (u64, u64)>| {
        if layout::is_dump(&entry.path) {
            live.entry(entry.pack).or_default().0 += entry.len;
        }
    };
    for &(path, sha) in files {
        while let Some(gone) = previous.next_if(|e| e.path.as_str() < path) {
            dead_dump(&gone, &mut live);
        }
        match previous.next_if(|e| e.path == path) {
            Some(entry) if entry.hash == layout::short_hash(&sha) => {
                live.entry(entry.pack).or_default().0 += entry.len;
                kept.push(entry);
            }
            changed => {
                changed.inspect(|entry| dead_dump(entry, &mut live));
                to_pack.push((path.to_string(), sha));
            }
        }
    }
    for gone in previous {
        dead_dump(&gone, &mut live);
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
        let at = files.binary_search_by(|(path, _)| (*path).cmp(e.path.as_str()));
        (e.path, files[at.expect("a kept entry is one of the files")].1)
    }));
    to_pack.sort();
    (stay, to_pack)
}

/// Cuts the files to pack into packs of about [`PACK_TARGET`] bytes, in path order, each file for
/// which `alone` holds into a pack of its own.
///
/// `alone` is for a site-wide file packed because it is too large for a static asset: `SHA256SUMS`,
/// which every build rewrites (34 MiB at 100,000 recipes). Beside other files it would be over half
/// its pack, so the next rebuild would find that pack mostly dead and move every file beside it.
fn batches(
    to_pack: &[(String, [u8; 32])],
    len: impl Fn(&str) -> Result<u64>,
    alone: impl Fn(&str) -> bool,
) -> Result<Vec<Vec<Item>>> {
    let mut batches = Vec::new();
    let mut batch = Vec::new();
    let mut bytes = 0;
    for (path, sha) in to_pack {
        let len = len(path)?;
        if alone(path) {
            batches.push(vec![(path.clone(), *sha, len)]);
            continue;
        }
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

/// Files a pack reads at once, on every core, before writing them in order: few enough that the
/// memory they take is used again for the next ones.
const READ_AT_ONCE: usize = 64;

/// Writes one pack of `batch`, whose files' bytes `contents` gives (from a path and its SHA-256),
/// notes it in `summary`, and answers the entries it placed. The pack is written as it is read: its
/// name, its bytes' hash, is known at the end, when the written file is renamed to it.
fn write_pack<'a>(
    r2: &Path,
    batch: &[Item],
    contents: impl Fn(&str, &[u8; 32]) -> Result<Cow<'a, [u8]>> + Sync,
    summary: &mut Summary,
) -> Result<Vec<Entry>> {
    use sha2::Digest as _;
    let tmp = r2.join("packs").join("writing.tmp");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    let mut hasher = sha2::Sha256::new();
    let mut placed = Vec::with_capacity(batch.len());
    let mut offset = 0;
    for chunk in batch.chunks(READ_AT_ONCE) {
        let bytes: Vec<Result<Cow<[u8]>>> =
            chunk.par_iter().map(|(path, sha, _)| contents(path, sha)).collect();
        for ((path, sha, _), content) in chunk.iter().zip(bytes) {
            let content = content?;
            placed.push(Entry {
                path: path.clone(),
                pack: 0,
                offset,
                len: content.len() as u64,
                hash: layout::short_hash(sha),
            });
            offset += content.len() as u64;
            hasher.update(&content);
            out.write_all(&content)?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())?;
    let id = layout::pack_id(&hasher.finalize().into());
    for entry in &mut placed {
        entry.pack = id;
    }
    let key = layout::pack_key(id);
    std::fs::rename(&tmp, r2.join(&key)).with_context(|| format!("placing {key}"))?;
    summary.new_pack_bytes += offset;
    summary.new_packs.push(key);
    Ok(placed)
}

fn write_objects_list(r2: &Path, keys: &[String]) -> Result<()> {
    let mut list = Vec::new();
    for key in keys {
        writeln!(list, "{key}")?;
    }
    write_atomically(&r2.join("objects.txt"), &list)
}

/// Each asset is a hard link to its built file; one the build replaced is relinked by a rename, so
/// a reader sees the old file or the new one, never half of either (the builder never rewrites a
/// built file in place: `output::Out::write`).
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
    // Assets the build no longer has go, and so do the shard files of format 2's layout; the root
    // stays, to be replaced.
    let mut wanted: HashSet<PathBuf> = paths.iter().map(|p| assets.join(p)).collect();
    wanted.insert(assets.join(layout::ROOT));
    wanted.insert(assets.join(ASSETS_IGNORE.0));
    for item in walkdir::WalkDir::new(assets).min_depth(1).contents_first(true) {
        let item = item?;
        let path = item.path();
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// A build's packed files: path → (a byte that stands for its content, length).
    type Files = BTreeMap<String, (u8, u64)>;

    /// Lays `files` out beside the `previous` entries as [`publish`] does, numbering new packs from
    /// `next_pack`: every entry, and the packs written.
    fn lay_out(files: &Files, previous: Vec<Entry>, next_pack: &mut u64) -> (Vec<Entry>, Vec<u64>) {
        let shas: Vec<(&str, [u8; 32])> =
            files.iter().map(|(path, (byte, _))| (path.as_str(), [*byte; 32])).collect();
        let (mut entries, to_pack) = plan(&shas, previous);
        let mut written = Vec::new();
        for batch in batches(&to_pack, |path| Ok(files[path].1), |path| !layout::is_packed(path)).unwrap() {
            *next_pack += 1;
            written.push(*next_pack);
            let mut offset = 0;
            for (path, sha, len) in batch {
                entries.push(Entry { path, pack: *next_pack, offset, len, hash: layout::short_hash(&sha) });
                offset += len;
            }
        }
        (entries, written)
    }

    /// A 100,000-recipe site in small: `SHA256SUMS` over a static asset's limit, beside 96 MiB of
    /// recipe files.
    fn site() -> Files {
        let mut files: Files = (0..6000).map(|k| (format!("r/recipe-{k:05}.json"), (1, 16 * 1024))).collect();
        files.insert("SHA256SUMS".into(), (1, 34 * MIB));
        files
    }

    /// Writes `files` and their `SHA256SUMS` into `dist`.
    fn write_build(dist: &Path, files: &BTreeMap<String, String>) {
        let mut sums = String::new();
        for (path, text) in files {
            let file = dist.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
            sums.push_str(&format!(
                "{}  {path}\n",
                data_encoding::HEXLOWER.encode(&domain_sha(text.as_bytes()))
            ));
        }
        std::fs::write(dist.join(SUMS), sums).unwrap();
    }

    /// Fails unless the directory laid out for `dist` names every file of `files` (`SHA256SUMS`, small
    /// here, is a static asset), each in the shard of its path, in path order, at bytes of its pack
    /// that are the file's.
    fn assert_directory_serves(dist: &Path, files: &BTreeMap<String, String>) {
        let (assets, r2) = (assets_dir(dist), r2_dir(dist));
        let root: Root = serde_json::from_slice(&std::fs::read(assets.join(layout::ROOT)).unwrap()).unwrap();
        let last = read_directory(&assets, &r2).expect("the directory reads back");
        let n = root.shards.len();
        assert_eq!(n, layout::n_shards(files.len()));
        let mut at = 0;
        let mut found = BTreeMap::new();
        for (k, count) in last.counts.iter().enumerate() {
            let shard = &last.entries[at..at + count];
            at += count;
            assert!(shard.is_sorted_by(|a, b| a.path < b.path), "shard {k} is out of order");
            for entry in shard {
                assert_eq!(layout::shard_of(&entry.path, n), k, "{} is in the wrong shard", entry.path);
                let mut pack = std::fs::File::open(r2.join(layout::pack_key(entry.pack))).unwrap();
                pack.seek(std::io::SeekFrom::Start(entry.offset)).unwrap();
                let mut bytes = vec![0; entry.len as usize];
                pack.read_exact(&mut bytes).unwrap();
                assert_eq!(layout::short_hash(&domain_sha(&bytes)), entry.hash, "{}", entry.path);
                found.insert(entry.path.clone(), bytes);
            }
        }
        let wanted: BTreeMap<String, Vec<u8>> =
            files.iter().map(|(path, text)| (path.clone(), text.as_bytes().to_vec())).collect();
        assert!(found == wanted, "the directory does not name the build's files");
    }

    #[test]
    fn a_rebuild_keeps_the_shards_it_can_and_serves_every_file_as_a_fresh_layout_would() {
        let dist = std::env::temp_dir().join(format!("layout-rebuild-{}/dist", std::process::id()));
        let _ = std::fs::remove_dir_all(dist.parent().unwrap());
        std::fs::create_dir_all(&dist).unwrap();
        let mut files: BTreeMap<String, String> =
            (0..3000).map(|k| (format!("r/recipe-{k:04}.json"), format!("{{\"n\":{k}}}"))).collect();
        write_build(&dist, &files);
        publish(&dist).unwrap();
        assert_directory_serves(&dist, &files);
        let before = read_directory(&assets_dir(&dist), &r2_dir(&dist)).unwrap();

        // One file changed, one gone, one new: only the shards of those three paths are written
        // again; every other shard keeps its place.
        files.insert("r/recipe-0042.json".into(), "{\"n\":\"changed\"}".into());
        std::fs::remove_file(dist.join("r/recipe-0007.json")).unwrap();
        files.remove("r/recipe-0007.json");
        files.insert("r/recipe-3000.json".into(), "{\"n\":3000}".into());
        write_build(&dist, &files);
        publish(&dist).unwrap();
        assert_directory_serves(&dist, &files);
        let after = read_directory(&assets_dir(&dist), &r2_dir(&dist)).unwrap();
        let n = after.shards.len();
        let touched: BTreeSet<usize> = ["r/recipe-0042.json", "r/recipe-0007.json", "r/recipe-3000.json"]
            .iter()
            .map(|path| layout::shard_of(path, n))
            .collect();
        for (k, (old, new)) in before.shards.iter().zip(&after.shards).enumerate() {
            let kept = (old.pack, old.offset, old.hash) == (new.pack, new.offset, new.hash);
            assert_eq!(kept, !touched.contains(&k), "shard {k}");
        }
        std::fs::remove_dir_all(dist.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_one_recipe_rebuild_moves_no_file_beside_the_packed_sha256sums() {
        let mut files = site();
        let mut next_pack = 0;
        let (cold, _) = lay_out(&files, Vec::new(), &mut next_pack);
        files.get_mut("r/recipe-00042.json").unwrap().0 = 2;
        files.get_mut("SHA256SUMS").unwrap().0 = 2;
        let (after, written) = lay_out(&files, cold, &mut next_pack);
        let mut rewritten: Vec<&str> =
            after.iter().filter(|e| written.contains(&e.pack)).map(|e| e.path.as_str()).collect();
        rewritten.sort();
        assert!(rewritten == ["SHA256SUMS", "r/recipe-00042.json"], "{} files rewritten", rewritten.len());
        assert_eq!(written.len(), 2, "the checksums in a pack of their own, the recipe in another");
    }

    #[test]
    fn packs_stay_few_over_many_one_recipe_rebuilds() {
        let mut files = site();
        let mut next_pack = 0;
        let (mut entries, cold) = lay_out(&files, Vec::new(), &mut next_pack);
        for round in 0..200u32 {
            let path = format!("r/recipe-{:05}.json", round * 7919 % 6000);
            files.get_mut(&path).unwrap().0 = round as u8 + 3;
            files.get_mut("SHA256SUMS").unwrap().0 = round as u8 + 3;
            (entries, _) = lay_out(&files, entries, &mut next_pack);
            let packs: BTreeSet<u64> = entries.iter().map(|e| e.pack).collect();
            assert!(packs.len() <= cold.len() + MAX_SMALL_PACKS + 1, "round {round}: {} packs", packs.len());
        }
        assert_eq!(entries.len(), files.len());
    }
}
