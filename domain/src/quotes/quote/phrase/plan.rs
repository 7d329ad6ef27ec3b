//! Planning a search: which dictionary buckets to read for a phrase, round by round, and which
//! entries' passages then answer it (exactly, or as candidates to check against their text).

use roaring::RoaringBitmap;

use super::format::{Bucket, Entry, Index, Part, Parts, PhraseError, corrupt, require};
use super::query::{lattice, tile_keys, tiles, windows};
use super::read::listed;

/// The dictionary buckets a search has read.
pub(super) struct Dict<'a> {
    buckets: Vec<(Part, Bucket<'a>)>,
}

impl<'a> Dict<'a> {
    /// Reads the buckets of `keys`, or names the ones still to read.
    pub(super) fn read(
        index: &Index,
        parts: &'a impl Parts,
        keys: &[String],
    ) -> Result<Dict<'a>, PhraseError> {
        let mut wanted: Vec<Part> = keys.iter().map(|key| index.bucket(key)).collect();
        wanted.sort();
        wanted.dedup();
        require(parts, wanted.iter().cloned())?;
        let mut buckets = Vec::with_capacity(wanted.len());
        for part in wanted {
            let bytes = parts.part(&part).expect("required");
            let bucket: Bucket = postcard::from_bytes(bytes).map_err(|_| corrupt(&part.file))?;
            buckets.push((part, bucket));
        }
        Ok(Dict { buckets })
    }

    /// `key`'s entry; `None` when it has none, or when its bucket is not read yet.
    pub(super) fn get(&self, index: &Index, key: &str) -> Option<&Entry<'a>> {
        let part = index.bucket(key);
        let (_, bucket) = self.buckets.iter().find(|(p, _)| *p == part)?;
        bucket.find(key)
    }

    fn has_bucket(&self, index: &Index, key: &str) -> bool {
        let part = index.bucket(key);
        self.buckets.iter().any(|(p, _)| *p == part)
    }
}

/// What the dictionary says of a gram.
#[derive(Clone, Copy)]
pub(super) enum Located<'d, 'a> {
    /// It is an entry: its passages are exactly those holding it.
    Indexed(&'d Entry<'a>),
    /// It is not, but this rare entry inside it lists every passage that could hold it.
    Rare(&'d Entry<'a>),
    /// It occurs nowhere.
    Absent,
}

/// Locates a gram of at most `max_gram` words, or names the dictionary keys still to read. A gram
/// is an entry only when its two grams one word shorter are frequent, so the index's filter of
/// frequent grams ([`Index::may_be_frequent`]) tells, before any read, which grams of the lattice
/// can be entries: the buckets read are those of the highest such grams, all in the first round;
/// a gram the filter takes for frequent is read only when no other gram narrows the phrase. A
/// second round follows only for a phrase found nowhere (its parts are then read to make sure they
/// are frequent, as the filter may say "frequent" wrongly) or a wrong "frequent" of the filter.
pub(super) fn locate<'d, 'a>(
    index: &Index,
    dict: &'d Dict<'a>,
    words: &[String],
) -> Result<Located<'d, 'a>, Vec<String>> {
    let n = words.len();
    if may_be_entry(index, words) {
        let key = words.join(" ");
        if !dict.has_bucket(index, &key) {
            return Err(vec![key]);
        }
        if let Some(entry) = dict.get(index, &key) {
            return Ok(Located::Indexed(entry));
        }
        if n == 1 {
            return Ok(Located::Absent);
        }
    }
    let frequent = index.manifest.frequent;
    let mut rarest: Option<&Entry> = None;
    let (mut unread, mut deferred) = (Vec::new(), Vec::new());
    for part in [&words[..n - 1], &words[1..]] {
        let key = part.join(" ");
        if index.may_be_frequent(&key) && may_be_entry(index, part) && !dict.has_bucket(index, &key) {
            deferred.push(key);
            continue;
        }
        let driver = match locate(index, dict, part) {
            Err(keys) => {
                unread.extend(keys);
                continue;
            }
            Ok(Located::Absent) => return Ok(Located::Absent),
            Ok(Located::Indexed(entry)) if entry.count >= frequent => continue,
            Ok(Located::Indexed(entry) | Located::Rare(entry)) => entry,
        };
        if rarest.is_none_or(|r| driver.count < r.count) {
            rarest = Some(driver);
        }
    }
    if !unread.is_empty() {
        return Err(unread);
    }
    match rarest {
        Some(rarest) => Ok(Located::Rare(rarest)),
        None if !deferred.is_empty() => Err(deferred),
        // Both parts frequent: the gram would be an entry if it occurred anywhere.
        None => Ok(Located::Absent),
    }
}

/// Whether `words` may be a dictionary entry: a word, or a gram whose two grams one word shorter
/// may both be frequent.
fn may_be_entry(index: &Index, words: &[String]) -> bool {
    let n = words.len();
    n == 1
        || (index.may_be_frequent(&words[..n - 1].join(" ")) && index.may_be_frequent(&words[1..].join(" ")))
}

/// The keys a search of `words` reads first: a long phrase's first [`RARE_PER_ROUND`] rare grams
/// ([`rare_grams`]; its [`tiles`] too when it has no more), else the keys [`locate`] asks for first.
pub(super) fn first_keys(index: &Index, words: &[String]) -> Vec<String> {
    let max_gram = index.manifest.max_gram as usize;
    if words.len() > max_gram {
        let rare = rare_grams(index, words);
        let mut keys: Vec<String> = rare.iter().take(RARE_PER_ROUND).cloned().collect();
        if rare.len() <= RARE_PER_ROUND {
            keys.extend(tile_keys(words, max_gram));
        }
        return keys;
    }
    if words.is_empty() {
        return Vec::new();
    }
    locate(index, &Dict { buckets: Vec::new() }, words).err().unwrap_or_default()
}

/// How many of a long phrase's rare grams a round reads: two rare entries nearly always narrow a
/// quote to the places that hold it verbatim (four a round read 5 times a quote at p50 instead of
/// 3, and found two quotes of 2,099 more: BENCHMARKS.md).
pub(super) const RARE_PER_ROUND: usize = 2;

/// The grams of a long phrase that are rare entries, as far as the index's filter of frequent grams
/// can tell without a read: grams of at most `max_gram` words that may be entries ([`may_be_entry`])
/// but are surely not frequent, so each lists fewer than [`super::Manifest::frequent`] passages (or
/// occurs nowhere: a changed word). In an order that spreads each round's over the whole phrase, so
/// a round's grams still meet in the place a quote came from when part of it was changed.
pub(super) fn rare_grams(index: &Index, words: &[String]) -> Vec<String> {
    let max_gram = index.manifest.max_gram as usize;
    let mut found: Vec<String> = Vec::new();
    for at in 0..words.len() {
        for n in 1..=max_gram.min(words.len() - at) {
            let gram = &words[at..at + n];
            let key = gram.join(" ");
            if !found.contains(&key) && may_be_entry(index, gram) && !index.may_be_frequent(&key) {
                found.push(key);
            }
        }
    }
    // In bit-reversed order of place (the first, the middle, the quarters, …), so the grams of
    // every round so far lie about evenly over the phrase.
    let bits = found.len().next_power_of_two().trailing_zeros();
    let mut order: Vec<(u32, String)> = found
        .into_iter()
        .enumerate()
        .map(|(at, key)| ((at as u32).reverse_bits().checked_shr(32 - bits).unwrap_or(0), key))
        .collect();
    order.sort_by_key(|(place, _)| *place);
    order.into_iter().map(|(_, key)| key).collect()
}

/// A long phrase's candidates from its rare grams: they are read [`RARE_PER_ROUND`] a round until
/// the passages that every rare entry read so far lists (known without another read) are at most
/// [`FEW_CANDIDATES`]. `None` when none of them is a rare entry.
fn by_rare_grams<'d, 'a>(
    index: &Index,
    dict: &'d Dict<'a>,
    words: &[String],
) -> Result<Option<Plan<'d, 'a>>, Vec<String>> {
    let frequent = index.manifest.frequent;
    let mut rare: Vec<&'d Entry<'a>> = Vec::new();
    let mut candidates: Option<RoaringBitmap> = None;
    let grams = rare_grams(index, words);
    let n_batches = grams.len().div_ceil(RARE_PER_ROUND);
    for (batch_idx, batch) in grams.chunks(RARE_PER_ROUND).enumerate() {
        let mut unread: Vec<String> =
            batch.iter().filter(|key| !dict.has_bucket(index, key)).cloned().collect();
        if !unread.is_empty() {
            // The last grams come with the tiles, which a phrase that no gram narrows reads next.
            if batch_idx + 1 == n_batches {
                unread.extend(tile_keys(words, index.manifest.max_gram as usize));
            }
            return Err(unread);
        }
        for entry in batch.iter().filter_map(|key| dict.get(index, key)).filter(|e| e.count < frequent) {
            rare.push(entry);
            // A list that does not decode is reported as corrupt when the plan's entries are read.
            if let Some(Ok(list)) = listed(index, entry, words) {
                candidates = Some(candidates.map_or(list.clone(), |known| known & list));
            }
        }
        if candidates.as_ref().is_some_and(|known| known.len() <= u64::from(FEW_CANDIDATES)) {
            break;
        }
    }
    Ok((!rare.is_empty()).then_some(Plan::Check(rare)))
}

/// Candidates few enough that checking their text costs fewer reads than narrowing them further
/// with another window's lattice.
const FEW_CANDIDATES: u32 = 4;

/// How the matching passages are found.
pub(super) enum Plan<'d, 'a> {
    /// No passage holds the phrase.
    Nothing,
    /// Exactly the passages of this entry.
    Exact(&'d Entry<'a>),
    /// The passages in all these entries, each then checked against the phrase.
    Check(Vec<&'d Entry<'a>>),
    /// Every passage (a speaker's: no phrase).
    All,
}

pub(super) fn plan<'d, 'a>(
    index: &Index,
    dict: &'d Dict<'a>,
    words: &[String],
) -> Result<Plan<'d, 'a>, Vec<String>> {
    let max_gram = index.manifest.max_gram as usize;
    let frequent = index.manifest.frequent;
    if words.is_empty() {
        return Ok(Plan::All);
    }
    let rare_inside = |grams: &[String]| -> Vec<&'d Entry<'a>> {
        grams.iter().filter_map(|key| dict.get(index, key)).filter(|e| e.count < frequent).collect()
    };
    if words.len() <= max_gram {
        return Ok(match locate(index, dict, words)? {
            Located::Absent => Plan::Nothing,
            Located::Indexed(entry) => Plan::Exact(entry),
            // Every rare entry of the lattice read so far narrows the candidates, at no extra read.
            Located::Rare(_) => Plan::Check(rare_inside(&lattice(words))),
        });
    }
    if let Some(plan) = by_rare_grams(index, dict, words)? {
        return Ok(plan);
    }
    // No gram is rare (a stock phrase of common words): one window every `max_gram` words first.
    let tiles = tiles(words, max_gram);
    let keys = tile_keys(words, max_gram);
    let rare = rare_inside(&keys);
    if !rare.is_empty() {
        return Ok(Plan::Check(rare));
    }
    // Tiles that are no entries: each one's lattice holds a rare entry (or says it occurs nowhere);
    // the next tile's is read only while the candidates are still many.
    let mut narrowing: Vec<&Entry> = Vec::new();
    for (tile, _) in tiles.iter().zip(&keys).filter(|(_, key)| dict.get(index, key).is_none()) {
        match locate(index, dict, tile)? {
            Located::Absent => return Ok(Plan::Nothing),
            Located::Indexed(entry) | Located::Rare(entry) => narrowing.push(entry),
        }
        if narrowing.iter().any(|entry| entry.count <= FEW_CANDIDATES) {
            break;
        }
    }
    if !narrowing.is_empty() {
        return Ok(Plan::Check(narrowing));
    }
    // Every tile frequent: every window, then.
    let windows = windows(words, max_gram);
    let unread: Vec<String> = windows.iter().filter(|key| !dict.has_bucket(index, key)).cloned().collect();
    if !unread.is_empty() {
        return Err(unread);
    }
    let found: Vec<Option<&Entry>> = windows.iter().map(|key| dict.get(index, key)).collect();
    let rare = rare_inside(&windows);
    if !rare.is_empty() {
        return Ok(Plan::Check(rare));
    }
    match found.iter().position(Option::is_none) {
        // Every window frequent (a stock phrase): the two rarest narrow the candidates.
        None => {
            let mut all: Vec<&Entry> = found.into_iter().flatten().collect();
            all.sort_by_key(|entry| entry.count);
            all.truncate(2);
            Ok(Plan::Check(all))
        }
        // A window that is no entry: its own lattice says whether it occurs, and where.
        Some(idx) => Ok(match locate(index, dict, &words[idx..idx + max_gram])? {
            Located::Absent => Plan::Nothing,
            Located::Indexed(entry) | Located::Rare(entry) => Plan::Check(vec![entry]),
        }),
    }
}
