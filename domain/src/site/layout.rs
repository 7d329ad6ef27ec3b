//! The production layout: which built files are static assets and which live in R2 packs, and the
//! directory that finds a packed file by its path.
//!
//! One Workers deploy holds at most 20,000 static files (Free plan) and a static asset answers no
//! `Range` request; R2 holds any number of bytes and reads any byte range. So the site-wide files
//! (home page, schemas, agents' files, lists of shows and slugs) stay static assets, and every file
//! whose name or number depends on the content is packed: recipe JSON and histories, search and
//! phrase index files, episode files, and the open-data dumps (whose parts grow with the corpus) are
//! concatenated into a few large R2 objects named by their content (`packs/<id>.pack`, immutable).
//! Recipe pages are not stored at all: the Worker renders them from the recipe JSON with
//! [`crate::recipes::page`].
//!
//! The [`Directory`] maps a packed path to its pack, offset and length. It is cut into [`Shard`]s by
//! a hash of the path, and the shards are packed too, in directory packs of their own; [`ROOT`], the
//! one static asset of the layout, lists where each shard is and every pack the build needs. So the
//! set of static paths is fixed by the code whatever the content, and `root.json` is the single
//! switch from one build to the next: everything it names is immutable and in R2 before it is
//! written (a running local asset server knows only the static paths it saw at its start, and a
//! reader still holding the last root keeps reading the last build whole). A read costs one shard
//! (cached by the isolate) and one ranged R2 read. A rebuild appends the files it changed to one new
//! pack and the shards that changed to one new directory pack, so publishing one changed recipe
//! uploads two small objects (and, once `SHA256SUMS` outgrows a static asset, its pack of its own).
//!
//! The alternative we rejected was one R2 object per file: uploads of hundreds of thousands of
//! objects per full build, and an R2 list or head per read to learn a file's ETag.
//!
//! [`Directory`]: Root

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The folders whose files are packed into R2; the dumps ([`is_dump`]) are packed too, everything
/// else is a static asset.
pub const PACKED_DIRS: [&str; 4] = ["r/", "search/", "quotes/", "episodes/"];

/// The static asset that names the directory's shards and the packs: the layout's single switch.
pub const ROOT: &str = "_layout/root.json";

/// The recipe dump when it is one file; a larger dump is in parts named by [`dump_part`].
pub const DUMP: &str = "recipes.jsonl";

/// What a shard aims to hold: about 60 KiB, one small read for a cold isolate.
pub const ENTRIES_PER_SHARD: usize = 1024;

/// The version of [`Root`] and [`Shard`]; a Worker refuses a layout it does not know.
pub const FORMAT: u32 = 3;

/// Whether a built file is packed into R2 (`true`) or a static asset.
pub fn is_packed(path: &str) -> bool {
    PACKED_DIRS.iter().any(|dir| path.starts_with(dir)) || is_dump(path)
}

/// Whether a built file is an open-data dump (`recipes.jsonl` or its parts, `episodes.jsonl`: one
/// JSON document a line; the Cooklang zips `recipes-cooklang*.zip`), at the top of the build.
pub fn is_dump(path: &str) -> bool {
    !path.contains('/')
        && (path.ends_with(".jsonl") || (path.starts_with("recipes-cooklang") && path.ends_with(".zip")))
}

/// Part `n` (from 1) of a recipe dump in parts: `recipes-0001.jsonl`, `recipes-0002.jsonl`, …
pub fn dump_part(n: usize) -> String {
    format!("recipes-{n:04}.jsonl")
}

/// Where a packed file is: its pack, byte range and content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    /// The pack's id, the first eight bytes of its SHA-256 ([`pack_key`] names the object).
    pub pack: u64,
    pub offset: u64,
    pub len: u64,
    /// The first eight bytes of the file's SHA-256 (as `SHA256SUMS` lists it): enough to tell a
    /// changed file and to be its validator, at a quarter of the shard bytes of the whole hash.
    pub hash: [u8; 8],
}

impl Entry {
    /// A strong validator for the file (RFC 9110 §8.8.3): its content hash, shortened.
    pub fn etag(&self) -> String {
        format!("\"{}\"", data_encoding::HEXLOWER.encode(&self.hash))
    }
}

/// The part of a file's SHA-256 an [`Entry`] keeps.
pub fn short_hash(sha256: &[u8; 32]) -> [u8; 8] {
    sha256[..8].try_into().expect("eight bytes")
}

/// `_layout/root.json`: where each shard is, and every pack the build needs (the files' packs and
/// the directory packs). It changes whenever a shard does, so readers notice a new build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    pub format: u32,
    /// Where shard `k` is; the length is a power of two.
    pub shards: Vec<ShardPlace>,
    /// Every pack the directory refers to, as R2 keys.
    pub packs: Vec<String>,
}

impl Root {
    /// Where the shard that holds `path` is.
    pub fn shard_for(&self, path: &str) -> Option<&ShardPlace> {
        self.shards.get(shard_of(path, self.shards.len()))
    }
}

/// Where one encoded shard is: its directory pack, byte range and content hash ([`Shard::hash`]).
/// `root.json` writes it as `["<pack id>", offset, len, "<hash>"]` (ids and hashes in hex), a few
/// dozen bytes a shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "(String, u64, u64, String)", into = "(String, u64, u64, String)")]
pub struct ShardPlace {
    pub pack: u64,
    pub offset: u64,
    pub len: u64,
    pub hash: [u8; 8],
}

impl TryFrom<(String, u64, u64, String)> for ShardPlace {
    type Error = String;

    fn try_from((pack, offset, len, hash): (String, u64, u64, String)) -> Result<Self, Self::Error> {
        let pack = u64::from_str_radix(&pack, 16).map_err(|err| format!("shard pack `{pack}`: {err}"))?;
        let hash = data_encoding::HEXLOWER
            .decode(hash.as_bytes())
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| format!("shard hash `{hash}` is not 16 hex digits"))?;
        Ok(ShardPlace { pack, offset, len, hash })
    }
}

impl From<ShardPlace> for (String, u64, u64, String) {
    fn from(place: ShardPlace) -> Self {
        (format!("{:016x}", place.pack), place.offset, place.len, data_encoding::HEXLOWER.encode(&place.hash))
    }
}

/// One shard: entries sorted by path, encoded with postcard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub entries: Vec<Entry>,
}

impl Shard {
    pub fn find(&self, path: &str) -> Option<&Entry> {
        self.entries.binary_search_by(|entry| entry.path.as_str().cmp(path)).ok().map(|i| &self.entries[i])
    }

    pub fn decode(bytes: &[u8]) -> Result<Shard, postcard::Error> {
        postcard::from_bytes(bytes)
    }

    pub fn encode(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("a shard always encodes")
    }

    /// The hash of an encoded shard, as the root lists it: the first eight bytes of its SHA-256.
    pub fn hash(bytes: &[u8]) -> [u8; 8] {
        Sha256::digest(bytes)[..8].try_into().expect("eight bytes")
    }
}

/// The shard of `path` among `n_shards` (a power of two): the top bits of the path's SHA-256, which
/// the builder and the Worker compute alike.
pub fn shard_of(path: &str, n_shards: usize) -> usize {
    if n_shards <= 1 {
        return 0;
    }
    let digest = Sha256::digest(path.as_bytes());
    let top = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    (top as usize) & (n_shards - 1)
}

/// How many shards `n_files` packed files take: a power of two, so shards split evenly as the
/// corpus grows.
pub fn n_shards(n_files: usize) -> usize {
    n_files.div_ceil(ENTRIES_PER_SHARD).max(1).next_power_of_two()
}

/// A pack's id: the first eight bytes of its bytes' SHA-256 (a pack is hashed as it is written).
pub fn pack_id(sha256: &[u8; 32]) -> u64 {
    u64::from_be_bytes(short_hash(sha256))
}

/// The R2 key of a pack.
pub fn pack_key(pack: u64) -> String {
    format!("packs/{pack:016x}.pack")
}

/// The `Content-Type` of a built file, from its name: packed files have no asset server to say it.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    match ext {
        "json" => "application/json; charset=utf-8",
        "jsonl" => "application/jsonl; charset=utf-8",
        "zip" => "application/zip",
        "html" => "text/html; charset=utf-8",
        "txt" | "md" => "text/plain; charset=utf-8",
        "vtt" => "text/vtt; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "webp" => "image/webp",
        "jpg" | "jpeg" => "image/jpeg",
        _ if name == "SHA256SUMS" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_item_folders_and_dumps_are_packed_and_site_files_are_assets() {
        for path in ["r/hummus.json", "r/hummus.history.json", "search/manifest.json", "quotes/d-a.bin"] {
            assert!(is_packed(path), "{path}");
        }
        assert!(is_packed("episodes/ep_abcdefghij/transcript.vtt"));
        for path in [DUMP, &dump_part(1), &dump_part(489), "episodes.jsonl"] {
            assert!(is_packed(path) && is_dump(path), "{path}");
        }
        for path in ["index.html", "schemas/recipe.schema.json", "llms.txt", "rr.json", "slugs.json", ROOT] {
            assert!(!is_packed(path), "{path}");
        }
        assert_eq!(dump_part(2), "recipes-0002.jsonl");
    }

    #[test]
    fn root_lists_shard_places_compactly_and_reads_them_back() {
        let root = Root {
            format: FORMAT,
            shards: vec![ShardPlace {
                pack: 0xab,
                offset: 7,
                len: 60,
                hash: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77],
            }],
            packs: vec![pack_key(0xab)],
        };
        let json = serde_json::to_string(&root).unwrap();
        assert_eq!(
            json,
            r#"{"format":3,"shards":[["00000000000000ab",7,60,"0011223344556677"]],"packs":["packs/00000000000000ab.pack"]}"#
        );
        assert_eq!(serde_json::from_str::<Root>(&json).unwrap(), root);
        assert_eq!(root.shard_for("r/anything.json"), Some(&root.shards[0]));
        assert!(serde_json::from_str::<Root>(&json.replace("00000000000000ab\"", "zz\"")).is_err());
    }

    #[test]
    fn shards_are_a_power_of_two_and_paths_spread_over_them() {
        assert_eq!(n_shards(0), 1);
        assert_eq!(n_shards(ENTRIES_PER_SHARD), 1);
        assert_eq!(n_shards(ENTRIES_PER_SHARD + 1), 2);
        assert_eq!(n_shards(300_000), 512);
        let mut counts = [0usize; 8];
        for i in 0..8_000 {
            counts[shard_of(&format!("r/recipe-{i}.json"), 8)] += 1;
        }
        assert!(counts.iter().all(|&n| (800..1200).contains(&n)), "{counts:?}");
        assert_eq!(shard_of("r/anything.json", 1), 0);
    }

    #[test]
    fn a_shard_finds_its_entries_and_round_trips() {
        let entry = |path: &str, offset| Entry { path: path.into(), pack: 7, offset, len: 3, hash: [1; 8] };
        let shard = Shard { entries: vec![entry("r/a.json", 0), entry("r/b.json", 3)] };
        let decoded = Shard::decode(&shard.encode()).unwrap();
        assert_eq!(decoded, shard);
        assert_eq!(decoded.find("r/b.json").map(|e| e.offset), Some(3));
        assert_eq!(decoded.find("r/c.json"), None);
        assert_eq!(entry("x", 0).etag(), "\"0101010101010101\"");
        assert_eq!(pack_key(0xab), "packs/00000000000000ab.pack");
    }

    #[test]
    fn content_types_follow_the_file_name() {
        assert_eq!(content_type("episodes/ep_x/transcript.vtt"), "text/vtt; charset=utf-8");
        assert_eq!(content_type("SHA256SUMS"), "text/plain; charset=utf-8");
        assert_eq!(content_type("recipes-0001.jsonl"), "application/jsonl; charset=utf-8");
        assert_eq!(content_type("search/post-ab12.bin"), "application/octet-stream");
    }
}
