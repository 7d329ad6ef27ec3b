//! The index's files: the manifest (which file holds what), dictionary shards by term prefix, and
//! how a build's entries and facets become files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::codec::{DictEntry, shard_bytes};

/// The index's folder in a build: `search/manifest.json` and the files it names.
pub const DIR: &str = "search";
/// Raised whenever what a recipe is indexed under changes (3: the slug's words of a recipe titled only in Hebrew), so a rebuild does not
/// patch an index of other terms.
pub const FORMAT_VERSION: u32 = 3;
pub const CARDS_PER_SHARD: u32 = 8;
pub const SHARD_TARGET_BYTES: usize = 16 * 1024;
/// Dictionary shards split by at most this many leading letters.
pub const MAX_SHARD_PREFIX: usize = 2;

/// The entry point of an index: which file holds what. Served at `search/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Manifest {
    pub version: u32,
    pub n_docs: u32,
    /// Term prefixes, sorted; a term lives in the shard of its longest listed prefix.
    pub shards: Vec<String>,
    /// `gf`, `vegan`, …, `course:main` → bitmap file.
    pub facets: BTreeMap<String, String>,
    /// `(T, file)`, ascending: the recipes whose prep + cook time is at most T minutes.
    pub max_total: Vec<(u32, String)>,
}

impl Manifest {
    /// The dictionary shard file of `shards[idx]`. Dictionary and card files are numbered rather than
    /// named by content, so the manifest stays small however many there are and a rebuild rewrites
    /// only the ones that changed; they are not immutable, unlike the content-named files.
    pub fn shard_file(&self, idx: usize) -> String {
        format!("dict-{idx}.bin")
    }

    /// The card shard holding document `doc`.
    pub fn card_file(&self, doc: u32) -> String {
        format!("cards-{}.bin", doc / CARDS_PER_SHARD)
    }

    /// Every dictionary and card file name of this build.
    pub fn numbered_files(&self) -> Vec<String> {
        let mut names: Vec<String> = (0..self.shards.len()).map(|idx| self.shard_file(idx)).collect();
        names.extend((0..self.n_docs.div_ceil(CARDS_PER_SHARD)).map(|n| self.card_file(n * CARDS_PER_SHARD)));
        names
    }
}

/// Groups sorted dictionary entries into shards by prefix: a prefix whose entries pass
/// [`SHARD_TARGET_BYTES`] splits by one more letter, up to [`MAX_SHARD_PREFIX`] letters, so a typo from
/// the third letter on stays inside the word's shard. Returns each shard's prefix and bytes, sorted.
pub(super) fn dictionary_files(entries: &[DictEntry]) -> BTreeMap<String, Vec<u8>> {
    let mut shards = BTreeMap::new();
    let mut pending = vec![(1usize, (0..entries.len()).collect::<Vec<usize>>())];
    while let Some((prefix_len, members)) = pending.pop() {
        for (prefix, group) in groups_by_prefix(|i| &entries[i].term, &members, prefix_len) {
            let size: usize = group.iter().map(|&i| entries[i].size()).sum();
            let can_split = group.iter().any(|&i| entries[i].term.chars().count() > prefix_len);
            if size > SHARD_TARGET_BYTES && can_split && prefix_len < MAX_SHARD_PREFIX {
                // Terms no longer than the prefix stay in the shard of the prefix itself.
                let (short, long): (Vec<usize>, Vec<usize>) =
                    group.iter().partition(|&&i| entries[i].term.chars().count() <= prefix_len);
                if !short.is_empty() {
                    shards.insert(prefix.clone(), shard_bytes(entries, &short));
                }
                pending.push((prefix_len + 1, long));
            } else {
                shards.insert(prefix, shard_bytes(entries, &group));
            }
        }
    }
    shards
}

/// Consecutive members whose terms share their first `prefix_len` letters, with that prefix.
pub(super) fn groups_by_prefix<'t>(
    term: impl Fn(usize) -> &'t str,
    members: &[usize],
    prefix_len: usize,
) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for &i in members {
        let prefix: String = term(i).chars().take(prefix_len).collect();
        match groups.last_mut() {
            Some((last, group)) if *last == prefix => group.push(i),
            _ => groups.push((prefix, vec![i])),
        }
    }
    groups
}
