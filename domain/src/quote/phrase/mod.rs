//! The phrase search index over every canonical transcript (`GET /api/search`, and the candidates
//! of corpus-wide attribution): how the builder writes it ([`build`]) and how a query reads it.
//!
//! The unit is a passage: one segment, or a piece of at most [`MAX_PASSAGE_TOKENS`] words of a long
//! one. The dictionary maps a gram — one to [`Config::max_gram`] normalised words (see
//! [`super::normalise`]) — to the passages it occurs in. Which grams are indexed follows one rule,
//! a lattice: every word, and a gram of `n` words when both its grams of `n - 1` words are
//! *frequent* (in at least [`Config::frequent`] passages). So a phrase of up to `max_gram` words
//! either is an entry — its passages are exactly the answer, and the entry's count is the true
//! total — or has a *rare* entry inside it, found in fewer than `frequent` passages: those
//! passages are the candidates, and reading their text checks each one. A rare entry lists its
//! passages inline; a frequent one points to a roaring bitmap, which is at most one bit per
//! passage of the corpus, and lists its first [`format::FIRST_PAGE`] passages, a search's first
//! page. A query of common words ("we went to the") thus reads one bucket (and one bitmap for a
//! later page), never a position list of "the", and no query reads more than a few dozen small parts:
//! dictionary buckets, bitmaps, and blocks of [`Config::passages_per_block`] passages (see
//! [`format`]). A longer phrase is looked up by its rare grams, or its grams of `max_gram` words.
//!
//! A reader holds in memory a filter of the frequent grams ([`format::FrequentGrams`], 336 KiB
//! for the Changelog corpus), so it knows before reading which grams of a phrase have entries
//! and which of those are rare: a phrase's first round reads the buckets it needs, not a lattice
//! level at a time. The filter only chooses what to read; what a search concludes rests on the
//! entries it read, so a wrong "frequent" (one key in 65,536) costs a round, never a wrong answer.
//!
//! Positions are not stored at all: a hit's place inside its passage comes from the passage's
//! text, which the answer shows anyway. The alternative we measured first, a positional roaring
//! bitmap per word (BENCHMARKS.md, issue 5), read 1.2 MiB at p50 and 3 MiB at p99 per query.
//!
//! A phrase that straddles two passages (a speaker change, or the cut in a very long turn) is not
//! found: a phrase is one person's words.

pub mod build;
pub mod format;

use std::collections::BTreeMap;

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

pub use build::{BuiltIndex, IndexBuilder, IndexFull};
pub use format::{
    DIR, Index, JOINING, Joining, Manifest, Part, Parts, PhraseError, READ_BUDGET, READ_GAP, Read,
    WholeFiles, reads,
};

use crate::Diagnostic;
use crate::quote::normalise::{self, Token};
use crate::quote::views::{Page, fold_name};
use crate::transcript::round_ms;
use crate::transcript::{Canonical, EpisodeRef, NameState, Segment, Speaker};
use format::{Block, Bucket, Entry, Mark, Passage, Passages, corrupt, decode_gaps, require, speaker_key};

/// A long segment is cut into passages of at most this many words.
pub const MAX_PASSAGE_TOKENS: usize = 1024;
pub const MAX_QUERY_CHARS: usize = 200;
/// Hits on a page of a search that does not say `limit`. Ten, as search engines show and as the
/// peers are measured with (BENCHMARKS.md, issue 14): a hit carries its whole passage, and each hit
/// of a page is a ranged read of its own, since a phrase's hits lie scattered over the corpus.
pub const DEFAULT_LIMIT: usize = 10;

/// The index's shape; [`Config::default`] is what the builder writes (BENCHMARKS.md, issue 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The longest gram in the dictionary, in words.
    pub max_gram: usize,
    /// Passages from which an entry is frequent (a bitmap) rather than rare (listed inline, and a
    /// query's candidates to check).
    pub frequent: u32,
    /// What a dictionary bucket aims to hold, in bytes.
    pub bucket_bytes: usize,
    pub passages_per_block: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { max_gram: 5, frequent: 32, bucket_bytes: 2048, passages_per_block: 8 }
    }
}

/// A parsed `GET /api/search`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub q: Option<String>,
    pub speaker: Option<String>,
    pub page: Page,
}

/// Parses the search parameters: `q` and/or `speaker` (one is needed), `limit`, `cursor`.
pub fn parse_query<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Query, Vec<Diagnostic>> {
    let mut query = Query { q: None, speaker: None, page: Page { offset: 0, limit: DEFAULT_LIMIT } };
    let mut problems = Vec::new();
    for (key, value) in crate::diagnostic::once_each(params, &mut problems) {
        match key {
            "q" if value.chars().count() > MAX_QUERY_CHARS => {
                problems.push(Diagnostic::new("q", format!("is longer than {MAX_QUERY_CHARS} characters")))
            }
            "q" if !value.trim().is_empty() && normalise::tokens(value).is_empty() => {
                problems.push(Diagnostic::new("q", "has no words"))
            }
            "q" => query.q = Some(value.trim().to_string()).filter(|q| !q.is_empty()),
            "speaker" => query.speaker = Some(value.trim().to_string()).filter(|s| !s.is_empty()),
            other => {
                if !query.page.read(other, value, &mut problems) {
                    problems.push(Diagnostic::new(other, "unknown parameter"));
                }
            }
        }
    }
    if problems.is_empty() && query.q.is_none() && query.speaker.is_none() {
        problems.push(Diagnostic::new("q", "give a phrase `q`, a `speaker`, or both"));
    }
    if problems.is_empty() { Ok(query) } else { Err(problems) }
}

/// One place a phrase was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hit {
    pub episode: EpisodeRef,
    pub start_s: f64,
    pub end_s: f64,
    pub times_estimated: bool,
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    /// The whole passage the phrase is in.
    pub text: String,
}

/// The answer of `GET /api/search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Answer {
    pub q: Option<String>,
    pub speaker: Option<String>,
    pub hits: Vec<Hit>,
    pub total: u64,
    pub next_cursor: Option<String>,
}

/// The dictionary buckets a search has read.
struct Dict<'a> {
    buckets: Vec<(Part, Bucket<'a>)>,
}

impl<'a> Dict<'a> {
    /// Reads the buckets of `keys`, or names the ones still to read.
    fn read(index: &Index, parts: &'a impl Parts, keys: &[String]) -> Result<Dict<'a>, PhraseError> {
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
    fn get(&self, index: &Index, key: &str) -> Option<&Entry<'a>> {
        let part = index.bucket(key);
        let (_, bucket) = self.buckets.iter().find(|(p, _)| *p == part)?;
        bucket.find(key)
    }
}

/// Every gram of `words` (all of them when it is no longer than the index's longest gram).
fn lattice(words: &[String]) -> Vec<String> {
    (1..=words.len()).flat_map(|n| words.windows(n).map(|w| w.join(" "))).collect()
}

/// What the dictionary says of a gram.
#[derive(Clone, Copy)]
enum Located<'d, 'a> {
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
fn locate<'d, 'a>(
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
fn first_keys(index: &Index, words: &[String]) -> Vec<String> {
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
/// 3, and found two quotes of 2,099 more: BENCHMARKS.md, issue 14).
const RARE_PER_ROUND: usize = 2;

/// The grams of a long phrase that are rare entries, as far as the index's filter of frequent grams
/// can tell without a read: grams of at most `max_gram` words that may be entries ([`may_be_entry`])
/// but are surely not frequent, so each lists fewer than [`Manifest::frequent`] passages (or occurs
/// nowhere: a changed word). In an order that spreads each round's over the whole phrase, so a
/// round's grams still meet in the place a quote came from when part of it was changed.
fn rare_grams(index: &Index, words: &[String]) -> Vec<String> {
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
enum Plan<'d, 'a> {
    /// No passage holds the phrase.
    Nothing,
    /// Exactly the passages of this entry.
    Exact(&'d Entry<'a>),
    /// The passages in all these entries, each then checked against the phrase.
    Check(Vec<&'d Entry<'a>>),
    /// Every passage (a speaker's: no phrase).
    All,
}

fn plan<'d, 'a>(index: &Index, dict: &'d Dict<'a>, words: &[String]) -> Result<Plan<'d, 'a>, Vec<String>> {
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

/// A phrase longer than `n` words as windows of `n` words that cover it: one every `n` words, and
/// the last.
fn tiles(words: &[String], n: usize) -> Vec<&[String]> {
    let mut tiles: Vec<&[String]> = words.chunks_exact(n).collect();
    if !words.len().is_multiple_of(n) {
        tiles.push(&words[words.len() - n..]);
    }
    tiles
}

fn tile_keys(words: &[String], n: usize) -> Vec<String> {
    tiles(words, n).iter().map(|tile| tile.join(" ")).collect()
}

impl Dict<'_> {
    fn has_bucket(&self, index: &Index, key: &str) -> bool {
        let part = index.bucket(key);
        self.buckets.iter().any(|(p, _)| *p == part)
    }
}

/// An entry's passages; a bitmap must have been read.
fn passages_of(index: &Index, parts: &impl Parts, entry: &Entry) -> Result<RoaringBitmap, PhraseError> {
    match entry.passages {
        Passages::Inline { gaps, .. } => {
            let list = decode_gaps(gaps).ok_or_else(|| corrupt(&index.manifest.dict))?;
            RoaringBitmap::from_sorted_iter(list).map_err(|_| corrupt(&index.manifest.dict).into())
        }
        Passages::Bitmap { offset, len, .. } => {
            let part = index.bitmap(offset, len);
            let bytes = parts.part(&part).expect("required");
            RoaringBitmap::deserialize_from(bytes).map_err(|_| corrupt(&part.file).into())
        }
    }
}

/// The passages a rare entry lists where `words` may stand (the phrase holds the entry's gram):
/// those whose [`Mark`]s allow the words on either side of the gram in the phrase. `None` for a
/// frequent entry, whose bitmap says only where the gram is.
fn listed(index: &Index, entry: &Entry, words: &[String]) -> Option<Result<RoaringBitmap, PhraseError>> {
    let Passages::Inline { gaps, marks } = entry.passages else { return None };
    let Some(list) = decode_gaps(gaps).filter(|list| marks.is_empty() || marks.len() == list.len()) else {
        return Some(Err(corrupt(&index.manifest.dict).into()));
    };
    let sides = sides_of(entry.key, words);
    // A speaker's passages have no marks; and an entry is always a gram of the phrase, but were
    // it not, every passage it lists would stay a candidate.
    if marks.is_empty() || sides.is_empty() {
        return Some(Ok(list.into_iter().collect()));
    }
    let allowed = |mark: &u8| sides.iter().any(|(before, after)| Mark(*mark).allows(*before, *after));
    Some(Ok(list
        .into_iter()
        .zip(marks)
        .filter(|(_, mark)| allowed(mark))
        .map(|(passage, _)| passage)
        .collect()))
}

/// The words on either side of each place the words of gram `key` stand in `words` (`None` past
/// either end).
fn sides_of<'w>(key: &str, words: &'w [String]) -> Vec<(Option<&'w str>, Option<&'w str>)> {
    let gram: Vec<&str> = key.split(' ').collect();
    let n = gram.len();
    (0..(words.len() + 1).saturating_sub(n))
        .filter(|&at| words[at..at + n].iter().zip(&gram).all(|(word, part)| word == part))
        .map(|at| (at.checked_sub(1).map(|idx| words[idx].as_str()), words.get(at + n).map(String::as_str)))
        .collect()
}

fn bitmap_part(index: &Index, entry: &Entry) -> Option<Part> {
    match entry.passages {
        Passages::Inline { .. } => None,
        Passages::Bitmap { offset, len, .. } => Some(index.bitmap(offset, len)),
    }
}

/// The passage blocks a search has read.
struct Blocks {
    decoded: Vec<(Part, Block)>,
}

impl Blocks {
    fn read(
        index: &Index,
        parts: &impl Parts,
        passages: impl Iterator<Item = u32>,
    ) -> Result<Blocks, PhraseError> {
        let mut wanted = Vec::new();
        for passage in passages {
            wanted.push(index.block(passage).ok_or_else(|| corrupt(&index.manifest.passages))?);
        }
        wanted.sort();
        wanted.dedup();
        require(parts, wanted.iter().cloned())?;
        let mut decoded = Vec::with_capacity(wanted.len());
        for part in wanted {
            let block = Block::unpack(parts.part(&part).expect("required"), &part.file)?;
            decoded.push((part, block));
        }
        Ok(Blocks { decoded })
    }

    fn get(&self, index: &Index, passage: u32) -> Result<(&Block, &Passage), PhraseError> {
        let part = index.block(passage).ok_or_else(|| corrupt(&index.manifest.passages))?;
        let (_, block) = self.decoded.iter().find(|(p, _)| *p == part).expect("block read");
        let entry = block
            .passages
            .get((passage % index.manifest.passages_per_block) as usize)
            .ok_or_else(|| corrupt(&part.file))?;
        Ok((block, entry))
    }
}

impl Blocks {
    /// Passage `passage` as a hit, its times those of `words` inside it (the whole passage's when
    /// they are not in it: a speaker's passage).
    fn hit(&self, index: &Index, passage: u32, words: &[String]) -> Result<Hit, PhraseError> {
        let (block, entry) = self.get(index, passage)?;
        hit(block, entry, words, &index.manifest.passages)
    }
}

/// Passage `entry` of `block` (read from `file`) as a hit, its times those of `words` inside it
/// (the whole passage's when they are not in it: a speaker's passage).
fn hit(block: &Block, entry: &Passage, words: &[String], file: &str) -> Result<Hit, PhraseError> {
    let episode = block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(file))?;
    let tokens = normalise::tokens(&entry.text);
    let (start_s, end_s, times_estimated) = match find_words(&tokens, words) {
        Some(position) => phrase_times(entry, &tokens, position, words.len()),
        None => (entry.start_s, entry.end_s, entry.start_estimated || entry.end_estimated),
    };
    Ok(Hit {
        episode: episode.into(),
        start_s: round_ms(start_s),
        end_s: round_ms(end_s),
        times_estimated,
        speaker: entry.speaker.clone(),
        name: entry.name.clone(),
        name_state: entry.name_state,
        text: entry.text.clone(),
    })
}

/// Where `words` begin in `tokens`, if they occur there one after the other.
fn find_words(tokens: &[Token], words: &[String]) -> Option<usize> {
    if words.is_empty() || tokens.len() < words.len() {
        return None;
    }
    (0..=tokens.len() - words.len())
        .find(|&at| words.iter().zip(&tokens[at..]).all(|(word, token)| *word == token.norm))
}

/// The passages that hold a phrase ([`matching`]).
struct Matched {
    /// All of them; or, when a search asked only for its first page and the phrase is a frequent
    /// entry, the first ones, which the entry lists.
    passages: RoaringBitmap,
    /// How many there are.
    total: u64,
    /// The blocks read on the way.
    blocks: Option<Blocks>,
    /// The copy of the first page, when `passages` are a frequent entry's first ones.
    page: Option<Part>,
}

/// The passages that hold `words` one after the other (and are of `speaker`, when given), or only
/// the first `first` of them when those are all the caller shows (0: all of them). Candidates
/// checked against their text come with the `context` passages on each side when they are at most
/// [`KEPT`]: attribution shows those, so one read fetches a place and its surroundings.
fn matching<P: Parts>(
    index: &Index,
    words: &[String],
    speaker: Option<&str>,
    (first, context): (usize, u32),
    parts: &P,
) -> Result<Matched, PhraseError> {
    // Round one: the buckets of the phrase's first keys and of the speaker; then whatever the plan
    // still names (lower levels of a lattice, a long phrase's other windows).
    let speaker = speaker.map(|name| speaker_key(&fold_name(name)));
    let mut keys = first_keys(index, words);
    keys.extend(speaker.clone());
    let mut dict = Dict::read(index, parts, &keys)?;
    let plan = loop {
        match plan(index, &dict, words) {
            Ok(plan) => break plan,
            Err(more) => {
                keys.extend(more);
                dict = Dict::read(index, parts, &keys)?;
            }
        }
    };
    let speaker_entry = speaker.as_deref().map(|key| dict.get(index, key));

    // The first page of a frequent entry is listed beside it: no bitmap to read.
    if let Plan::Exact(entry) = &plan
        && let Passages::Bitmap { first: listed, page_file, page_offset, page_len, .. } = entry.passages
        && speaker_entry.is_none()
        && first > 0
    {
        let listed = decode_gaps(listed).ok_or_else(|| corrupt(&index.manifest.dict))?;
        if first <= listed.len() {
            let passages =
                RoaringBitmap::from_sorted_iter(listed).map_err(|_| corrupt(&index.manifest.dict))?;
            let page = match page_len {
                0 => None,
                _ => Some(
                    index
                        .page(page_file, page_offset, page_len)
                        .ok_or_else(|| corrupt(&index.manifest.dict))?,
                ),
            };
            return Ok(Matched { passages, total: u64::from(entry.count), blocks: None, page });
        }
    }

    // Round two: the bitmaps of the entries the plan and the speaker use.
    let mut used: Vec<&Entry> = match &plan {
        Plan::Exact(entry) => vec![entry],
        Plan::Check(entries) => entries.clone(),
        Plan::Nothing | Plan::All => Vec::new(),
    };
    used.extend(speaker_entry.flatten());
    require(parts, used.iter().filter_map(|entry| bitmap_part(index, entry)))?;
    let speaker_passages = match speaker_entry {
        None => None,
        Some(None) => Some(RoaringBitmap::new()),
        Some(Some(entry)) => Some(passages_of(index, parts, entry)?),
    };
    let narrow = |mut set: RoaringBitmap| {
        if let Some(allowed) = &speaker_passages {
            set &= allowed;
        }
        set
    };
    let (passages, blocks) = match &plan {
        Plan::Nothing => (RoaringBitmap::new(), None),
        Plan::All => (speaker_passages.clone().unwrap_or_default(), None),
        Plan::Exact(entry) => (narrow(passages_of(index, parts, entry)?), None),
        Plan::Check(entries) => {
            let mut candidates: Option<RoaringBitmap> = None;
            for entry in entries {
                let set = match listed(index, entry, words) {
                    Some(listed) => listed?,
                    None => passages_of(index, parts, entry)?,
                };
                candidates = Some(match candidates {
                    None => set,
                    Some(c) => c & set,
                });
            }
            let candidates = narrow(candidates.unwrap_or_default());
            // Round three, early: the candidates' blocks, to keep the passages that hold the phrase;
            // with the passages around them when the caller will show those and they are few.
            let context = if candidates.len() <= KEPT as u64 { context } else { 0 };
            let blocks = Blocks::read(
                index,
                parts,
                candidates.iter().flat_map(|passage| around(index, passage, context)),
            )?;
            let mut matches = RoaringBitmap::new();
            for passage in &candidates {
                let (_, entry) = blocks.get(index, passage)?;
                if find_words(&normalise::tokens(&entry.text), words).is_some() {
                    matches.insert(passage);
                }
            }
            (matches, Some(blocks))
        }
    };
    Ok(Matched { total: passages.len(), passages, blocks, page: None })
}

fn windows(words: &[String], n: usize) -> Vec<String> {
    words.windows(n).map(|w| w.join(" ")).collect()
}

fn words_of(text: &str) -> Vec<String> {
    normalise::tokens(text).into_iter().map(|t| t.norm).collect()
}

/// Runs a search, or names the parts of the index it still needs.
pub fn search(index: &Index, query: &Query, parts: &impl Parts) -> Result<Answer, PhraseError> {
    let words = query.q.as_deref().map(words_of).unwrap_or_default();
    let first = query.page.offset + query.page.limit;
    let matched = matching(index, &words, query.speaker.as_deref(), (first, 0), parts)?;
    let (matches, checked, total) = (matched.passages, matched.blocks, matched.total);

    let start = query.page.offset.min(total as usize);
    let page: Vec<u32> = matches.iter().skip(start).take(query.page.limit).collect();
    let next_cursor = query.page.next_cursor(page.len(), total as usize);

    // Round three: the blocks of this page's passages, or the copy of a frequent entry's first page
    // (its passages in the order `matches` lists them).
    let mut hits: Vec<Hit> = match (checked, matched.page) {
        (None, Some(copy)) => {
            require(parts, [copy.clone()])?;
            let block = Block::unpack(parts.part(&copy).expect("required"), &copy.file)?;
            let nth = |passage: u32| block.passages.get(matches.rank(passage) as usize - 1);
            page.into_iter()
                .map(|passage| {
                    hit(&block, nth(passage).ok_or_else(|| corrupt(&copy.file))?, &words, &copy.file)
                })
                .collect::<Result<_, _>>()?
        }
        (checked, _) => {
            let blocks = match checked {
                Some(blocks) => blocks,
                None => Blocks::read(index, parts, page.iter().copied())?,
            };
            page.into_iter().map(|passage| blocks.hit(index, passage, &words)).collect::<Result<_, _>>()?
        }
    };
    // A page also stops at the byte budget (`crate::paging`); the cursor then goes on from the cut.
    let next_cursor = if crate::paging::cut(&mut hits, crate::paging::PAGE_BYTES) {
        query.page.next_cursor(hits.len(), total as usize)
    } else {
        next_cursor
    };
    Ok(Answer { q: query.q.clone(), speaker: query.speaker.clone(), hits, total, next_cursor })
}

/// How many places a search of the whole corpus attributes the quote in, at most.
pub const MAX_PLACES: usize = 3;
/// The longest piece of a quote is looked up by at most this many of its first words.
pub const KEY_WORDS: usize = 40;
/// A quote found nowhere word for word is looked for by at most this many of its grams.
const MAX_PROBES: usize = 12;
/// How many verbatim places a search of the whole corpus reports besides the best.
pub const MAX_ALTERNATIVES: usize = 10;

/// The verbatim places of a quote that [`places`] keeps: the earliest, and the alternatives.
const KEPT: usize = MAX_ALTERNATIVES + MAX_PLACES;

/// How many passages on each side of a place corpus-wide attribution reads and attributes in: one
/// for every five words of the quote, at least [`NEAR_PASSAGES`] and at most [`FAR_PASSAGES`]. A
/// quote spans few passages unless it is long, and then it may span many short turns. (Eight for
/// every quote, as before, cost a third of attribution's time preparing passages that no quote of
/// the accuracy bench reached, and cut off a long quote over more than eight turns: BENCHMARKS.md,
/// issue 14.)
fn spread(n_words: usize) -> u32 {
    u32::try_from(n_words / 5).unwrap_or(u32::MAX).clamp(NEAR_PASSAGES, FAR_PASSAGES)
}

/// The fewest passages on each side of a place that corpus-wide attribution reads.
const NEAR_PASSAGES: u32 = 3;
/// The most: a quote of [`crate::quote::MAX_QUOTE_CHARS`] is about 350 words.
const FAR_PASSAGES: u32 = 32;

/// `passage` and the `spread` passages on each side of it.
fn around(index: &Index, passage: u32, spread: u32) -> std::ops::RangeInclusive<u32> {
    passage.saturating_sub(spread)
        ..=passage.saturating_add(spread).min(index.manifest.n_passages.saturating_sub(1))
}

/// Where a quote may be in the whole corpus ([`places`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Places {
    /// The passages around each place, as a transcript of their own, most likely first.
    pub transcripts: Vec<Canonical>,
    /// How many passages hold the quote's longest piece (its first [`KEY_WORDS`] words) verbatim.
    pub verbatim_total: u64,
    /// Some of those passages, earliest in the corpus's order first.
    pub verbatim: Vec<Hit>,
    /// The places are where a few of the quote's rare grams meet, and no place has [`SURE_VOTES`]:
    /// when none of them holds the quote, [`Reach::Tiles`] may find it.
    pub unsure: bool,
}

/// How [`places`] looks for a quote that no passage holds word for word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// By the votes of its rare grams ([`rare_voted`]), or by its tiles ([`voted`]) when no place
    /// has two votes.
    Rare,
    /// By its tiles: for a quote whose rare grams' places turned out not to hold it.
    Tiles,
}

/// Finds the places a quote (its words, and its pieces: see [`super::corpus::split_edits`]) may be,
/// reading only the index: the passages that hold it word for word, or else those where most of
/// its rare pairs or grams meet (a changed word, a quote across two speakers), as `reach` says.
/// Each place comes with the passages around it, enough for [`super::attribute`] to place the
/// quote on its words. [`super::corpus::places`] is how a caller asks.
pub fn places(
    index: &Index,
    quote: &[String],
    pieces: &[Vec<String>],
    reach: Reach,
    parts: &impl Parts,
) -> Result<Places, PhraseError> {
    // The quote's words as they stand; an edited quote's longest piece, since an editor's cut or
    // bracketed word stands nowhere.
    let edited = pieces.len() != 1 || pieces.first().is_some_and(|piece| piece[..] != quote[..]);
    let key = match pieces.iter().max_by_key(|piece| piece.len()) {
        Some(longest) if edited => longest,
        _ => quote,
    };
    let key = &key[..key.len().min(KEY_WORDS)];
    let spread = spread(quote.len());
    let verbatim = matching(index, key, None, (0, spread), parts)?.passages;
    // The corpus lists episodes newest first: the last passages are the earliest said.
    let kept: Vec<u32> = verbatim.iter().rev().take(KEPT).collect();
    let (mut loci, mut unsure) = (kept.clone(), false);
    if kept.is_empty() {
        if reach == Reach::Rare {
            let sure;
            (loci, sure) = rare_voted(index, pieces, parts)?;
            unsure = !sure && !loci.is_empty();
        }
        if loci.is_empty() {
            loci = voted(index, pieces, parts)?;
        }
    }
    let around = |passage: u32| around(index, passage, spread);
    let blocks = Blocks::read(index, parts, loci.iter().flat_map(|&p| around(p)))?;
    // One place an episode: its earliest locus, so that the episode's first telling is attributed,
    // as a question naming the episode would answer (verbatim loci come latest first in an episode).
    let mut chosen: Vec<(String, u32)> = Vec::new();
    for &passage in &loci {
        let (block, entry) = blocks.get(index, passage)?;
        let episode =
            block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(&index.manifest.passages))?;
        match chosen.iter_mut().find(|(id, _)| *id == episode.id) {
            Some(_) if kept.is_empty() => {}
            Some((_, earliest)) => *earliest = (*earliest).min(passage),
            None => chosen.push((episode.id.clone(), passage)),
        }
    }
    let mut transcripts: Vec<Canonical> = Vec::new();
    for &(_, passage) in chosen.iter().take(MAX_PLACES) {
        let (block, entry) = blocks.get(index, passage)?;
        let episode =
            block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(&index.manifest.passages))?;
        let mut canonical = Canonical {
            episode: episode.into(),
            pipeline: episode.pipeline.clone(),
            kind: episode.kind,
            speakers: BTreeMap::new(),
            segments: Vec::new(),
        };
        for near in around(passage) {
            let (block, entry) = blocks.get(index, near)?;
            if block.episodes.get(entry.episode as usize).is_none_or(|e| e.id != episode.id) {
                continue;
            }
            canonical.speakers.insert(
                entry.speaker.clone(),
                Speaker { name: entry.name.clone(), name_state: entry.name_state },
            );
            canonical.segments.push(Segment {
                speaker: entry.speaker.clone(),
                start_s: entry.start_s,
                end_s: entry.end_s,
                text: entry.text.clone(),
                start_estimated: entry.start_estimated,
                end_estimated: entry.end_estimated,
                words: None,
            });
        }
        transcripts.push(canonical);
    }
    let hits: Vec<Hit> =
        kept.iter().map(|&passage| blocks.hit(index, passage, key)).collect::<Result<_, _>>()?;
    Ok(Places { transcripts, verbatim_total: verbatim.len(), verbatim: hits, unsure })
}

/// A place that this many of a quote's rare grams point to is taken without reading more of them.
const SURE_VOTES: u32 = 3;

/// The passages that at least two of a quote's rare grams point to, best first (see [`loci`]), and
/// whether the best has [`SURE_VOTES`]. A quote that no passage holds word for word (its tail changed,
/// or its words run across a change of speaker) still has most of its rare grams in the place it
/// came from, and the search that found it holds no verbatim has read the first of them already:
/// they are read in the same order ([`rare_grams`]), [`RARE_PER_ROUND`] a round, until one place
/// has [`SURE_VOTES`] or every one is read. A gram that is no entry, or a frequent one (the filter
/// can say "frequent" wrongly, never "rare"), does not vote.
fn rare_voted(
    index: &Index,
    pieces: &[Vec<String>],
    parts: &impl Parts,
) -> Result<(Vec<u32>, bool), PhraseError> {
    let frequent = index.manifest.frequent;
    let mut grams: Vec<String> = Vec::new();
    for gram in pieces.iter().flat_map(|piece| rare_grams(index, piece)) {
        if !grams.contains(&gram) {
            grams.push(gram);
        }
    }
    let mut votes: BTreeMap<u32, u32> = BTreeMap::new();
    let (mut chosen, mut sure) = (Vec::new(), false);
    for (round, batch) in grams.chunks(RARE_PER_ROUND).enumerate() {
        let dict = Dict::read(index, parts, &grams[..round * RARE_PER_ROUND + batch.len()])?;
        for entry in batch.iter().filter_map(|key| dict.get(index, key)).filter(|e| e.count < frequent) {
            for passage in &passages_of(index, parts, entry)? {
                *votes.entry(passage).or_default() += 1;
            }
        }
        chosen = loci(&votes);
        sure = chosen.first().is_some_and(|&(pooled, _)| pooled >= SURE_VOTES);
        if sure {
            break;
        }
    }
    Ok((
        chosen.into_iter().take_while(|&(pooled, _)| pooled >= 2).map(|(_, passage)| passage).collect(),
        sure,
    ))
}

/// Places from votes per passage, best first: neighbouring passages (a quote across a speaker
/// change) pool their votes, and a place keeps a distance of three passages from a better one; at
/// most twice [`MAX_PLACES`], as (pooled votes, passage).
fn loci(votes: &BTreeMap<u32, u32>) -> Vec<(u32, u32)> {
    let mut pooled: Vec<(u32, u32)> = Vec::new();
    for (&passage, &n) in votes {
        let around: u32 = votes.range(passage.saturating_sub(1)..=passage + 1).map(|(_, n)| n).sum();
        pooled.push((around.max(n), passage));
    }
    pooled.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut chosen: Vec<(u32, u32)> = Vec::new();
    for (n, passage) in pooled {
        if chosen.iter().all(|&(_, c)| c.abs_diff(passage) > 2) {
            chosen.push((n, passage));
        }
        if chosen.len() >= MAX_PLACES * 2 {
            break;
        }
    }
    chosen
}

/// The passages where most of a quote's rare grams are, best first: one gram of [`Config::max_gram`]
/// words every `max_gram` words of each piece votes for the passages of the rarest entry inside it.
/// Frequent grams say too little to vote; no passage text is read.
fn voted(index: &Index, pieces: &[Vec<String>], parts: &impl Parts) -> Result<Vec<u32>, PhraseError> {
    let max_gram = index.manifest.max_gram as usize;
    let mut probes: Vec<&[String]> = Vec::new();
    for piece in pieces {
        if piece.len() <= max_gram {
            probes.push(piece);
        } else {
            probes.extend(tiles(piece, max_gram));
        }
    }
    probes.truncate(MAX_PROBES);
    let mut keys: Vec<String> = probes.iter().flat_map(|probe| first_keys(index, probe)).collect();
    let dict = loop {
        let dict = Dict::read(index, parts, &keys)?;
        let unread: Vec<String> =
            probes.iter().filter_map(|probe| locate(index, &dict, probe).err()).flatten().collect();
        if unread.is_empty() {
            break dict;
        }
        keys.extend(unread);
    };
    let mut votes: BTreeMap<u32, u32> = BTreeMap::new();
    for probe in probes {
        let entry = match locate(index, &dict, probe) {
            Ok(Located::Indexed(entry) | Located::Rare(entry)) if entry.count < index.manifest.frequent => {
                entry
            }
            _ => continue,
        };
        for passage in &passages_of(index, parts, entry)? {
            *votes.entry(passage).or_default() += 1;
        }
    }
    Ok(loci(&votes).into_iter().map(|(_, passage)| passage).collect())
}

/// The phrase's times inside its passage, in proportion to character position, and whether either
/// is an estimate. The rule is attribution's ([`crate::quote::Prepared`]): a phrase that starts
/// with the passage's first word starts at the passage's start, one that ends with its last word
/// ends at its end, and those times are as measured as the passage's; any other is interpolated.
fn phrase_times(passage: &Passage, tokens: &[Token], position: usize, n_words: usize) -> (f64, f64, bool) {
    let last_idx = position + n_words.max(1) - 1;
    let (Some(first), Some(last)) = (tokens.get(position), tokens.get(last_idx)) else {
        return (passage.start_s, passage.end_s, passage.start_estimated || passage.end_estimated);
    };
    let n_chars = passage.text.chars().count().max(1) as f64;
    let span = passage.end_s - passage.start_s;
    let at = |byte: usize| passage.start_s + span * passage.text[..byte].chars().count() as f64 / n_chars;
    let (start_s, start_estimated) =
        if position == 0 { (passage.start_s, passage.start_estimated) } else { (at(first.start), true) };
    let (end_s, end_estimated) = if last_idx + 1 == tokens.len() {
        (passage.end_s, passage.end_estimated)
    } else {
        (at(last.end), true)
    };
    (start_s, end_s, start_estimated || end_estimated)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::transcript::{Canonical, RunKind, Segment, Speaker};
    use expect_test::{Expect, expect};

    fn canonical(id: &str, segments: &[(&str, f64, f64, &str)]) -> Canonical {
        let mut speakers = BTreeMap::new();
        speakers
            .insert("A".to_string(), Speaker { name: Some("Ana Lima".into()), name_state: NameState::Human });
        speakers
            .insert("B".to_string(), Speaker { name: Some("Bea".into()), name_state: NameState::Tentative });
        Canonical {
            episode: EpisodeRef {
                id: id.into(),
                title: id.into(),
                source_url: format!("https://ex.com/{id}"),
                show: "s".into(),
                licence: "CC-BY-SA-4.0".into(),
                attribution: None,
                show_title: None,
                published: None,
                audio_url: None,
            },
            pipeline: "p".into(),
            kind: RunKind::HumanEdited,
            speakers,
            segments: segments
                .iter()
                .map(|(speaker, start_s, end_s, text)| Segment {
                    speaker: speaker.to_string(),
                    start_s: *start_s,
                    end_s: *end_s,
                    text: text.to_string(),
                    start_estimated: false,
                    end_estimated: false,
                    words: None,
                })
                .collect(),
        }
    }

    /// An index and its files, the parts a search read, and how many rounds it took.
    struct Built {
        index: Index,
        files: HashMap<String, Vec<u8>>,
    }

    impl Built {
        fn of(config: Config, episodes: &[Canonical]) -> Built {
            let mut builder = IndexBuilder::new(config);
            for episode in episodes {
                builder.add_episode(episode).unwrap();
            }
            let built = builder.finish();
            let files: HashMap<String, Vec<u8>> =
                built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
            let tables = WholeFiles(&files).part(&Index::tables_part(&built.manifest)).unwrap().to_vec();
            Built { index: Index::open(built.manifest, &tables).unwrap(), files }
        }

        /// The index's tables, decoded.
        fn tables(&self) -> format::Tables {
            let part = Index::tables_part(&self.index.manifest);
            postcard::from_bytes(WholeFiles(&self.files).part(&part).unwrap()).unwrap()
        }

        /// The same index read with another filter of frequent grams.
        fn with_frequent(&self, frequent: Option<format::FrequentGrams>) -> Built {
            let manifest = self.index.manifest.clone();
            let mut tables = self.tables();
            tables.frequent = frequent;
            let bytes = postcard::to_allocvec(&tables).unwrap();
            Built { index: Index::open(manifest, &bytes).unwrap(), files: self.files.clone() }
        }

        /// Every gram entry's key, and whether it is frequent.
        fn grams(&self) -> Vec<(String, bool)> {
            let manifest = &self.index.manifest;
            let dict = &self.files[&manifest.dict];
            let mut at = 0usize;
            let mut grams = Vec::new();
            for len in self.tables().bucket_lens {
                let bucket: Bucket = postcard::from_bytes(&dict[at..at + len as usize]).unwrap();
                at += len as usize;
                grams.extend(
                    bucket
                        .entries
                        .iter()
                        .filter(|entry| !entry.key.starts_with('@'))
                        .map(|entry| (entry.key.to_string(), entry.count >= manifest.frequent)),
                );
            }
            grams
        }

        /// Searches as a Worker does: reading the parts each round names, and only those.
        fn search(&self, query: &Query) -> (Answer, usize) {
            self.read(|index, parts| search(index, query, parts))
        }

        /// Runs `step` reading the parts each round names, and only those; with the rounds it took.
        fn read<T>(
            &self,
            step: impl Fn(&Index, &HashMap<Part, Vec<u8>>) -> Result<T, PhraseError>,
        ) -> (T, usize) {
            let (answer, rounds, _) = self.read_parts(step);
            (answer, rounds)
        }

        /// [`Built::read`], with the parts it read.
        fn read_parts<T>(
            &self,
            step: impl Fn(&Index, &HashMap<Part, Vec<u8>>) -> Result<T, PhraseError>,
        ) -> (T, usize, HashMap<Part, Vec<u8>>) {
            let whole = WholeFiles(&self.files);
            let mut read: HashMap<Part, Vec<u8>> = HashMap::new();
            for round in 0.. {
                match step(&self.index, &read) {
                    Ok(answer) => return (answer, round, read),
                    Err(PhraseError::Need(parts)) => {
                        assert!(!parts.is_empty() && round < 5, "round {round} needs {parts:?}");
                        for part in parts {
                            let bytes = whole.part(&part).expect("a part inside its file");
                            read.insert(part, bytes.to_vec());
                        }
                    }
                    Err(PhraseError::Corrupt(corrupt)) => panic!("{}", corrupt.0),
                }
            }
            unreachable!()
        }
    }

    fn sample() -> Built {
        Built::of(
            Config { frequent: 2, ..Config::default() },
            &[
                canonical(
                    "one",
                    &[
                        ("A", 0.0, 10.0, "Open source is a gift, and twenty five people maintain it."),
                        ("B", 10.0, 20.0, "Open the source file. Source is open."),
                    ],
                ),
                canonical("two", &[("B", 0.0, 4.0, "I love open source."), ("A", 5.0, 6.0, "Me too.")]),
            ],
        )
    }

    /// [`sample`] with dates: episode `one` is the older.
    fn dated_sample() -> Built {
        let dated = |id: &str, published: &str, segments: &[(&str, f64, f64, &str)]| {
            let mut episode = canonical(id, segments);
            episode.episode.published = Some(published.into());
            episode
        };
        Built::of(
            Config { frequent: 2, ..Config::default() },
            &[
                dated(
                    "two",
                    "2024-05-01",
                    &[("B", 0.0, 4.0, "I love open source."), ("A", 5.0, 6.0, "Me too.")],
                ),
                dated(
                    "one",
                    "2019-02-01",
                    &[
                        ("A", 0.0, 10.0, "Open source is a gift, and twenty five people maintain it."),
                        ("B", 10.0, 20.0, "Open the source file. Source is open."),
                    ],
                ),
            ],
        )
    }

    fn check(params: &[(&str, &str)], expect: Expect) {
        let built = sample();
        let rendered = match parse_query(params.iter().copied()) {
            Ok(query) => {
                let (answer, _) = built.search(&query);
                let mut out = format!("total {} next {:?}\n", answer.total, answer.next_cursor);
                for hit in answer.hits {
                    out.push_str(&format!(
                        "{} {}-{} {:?} {:?}\n",
                        hit.episode.id, hit.start_s, hit.end_s, hit.name, hit.text
                    ));
                }
                out
            }
            Err(problems) => problems.iter().map(|p| format!("{p}\n")).collect(),
        };
        expect.assert_eq(&rendered);
    }

    #[test]
    fn phrases_match_words_in_order_only() {
        check(
            &[("q", "open source")],
            expect![[r#"
                total 2 next None
                one 0-1.897 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
                two 1.474-4 Some("Bea") "I love open source."
            "#]],
        );
        check(
            &[("q", "“25 People”")],
            expect![[r#"
                total 1 next None
                one 4.655-7.759 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
            "#]],
        );
    }

    #[test]
    fn speaker_narrows_a_phrase_and_alone_lists_everything_said() {
        check(
            &[("q", "open source"), ("speaker", "bea")],
            expect![[r#"
                total 1 next None
                two 1.474-4 Some("Bea") "I love open source."
            "#]],
        );
        check(
            &[("speaker", "Ana Lima"), ("limit", "1")],
            expect![[r#"
                total 2 next Some("bzE")
                one 0-10 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
            "#]],
        );
        check(&[("speaker", "Nobody")], expect!["total 0 next None\n"]);
    }

    #[test]
    fn bad_parameters_are_named() {
        check(
            &[("limit", "0"), ("q", "!!!")],
            expect![[r#"
                limit: must be a whole number from 1 to 100
                q: has no words
            "#]],
        );
        check(&[], expect!["q: give a phrase `q`, a `speaker`, or both\n"]);
    }

    fn attribute_everywhere(built: &Built, quote: &str) -> String {
        let (places, _) = built.read(|index, parts| crate::quote::corpus::places(index, quote, parts));
        let answer = crate::quote::corpus::attribute_corpus(&places, quote);
        let Some(m) = answer.found_at else {
            return format!("found={} episode={:?} match={:?}", answer.found, answer.episode, answer.matches);
        };
        let alternatives: Vec<String> = answer
            .alternatives
            .iter()
            .map(|a| format!("{} {:?} {}", a.episode.id, a.name, a.start_s))
            .collect();
        format!(
            "{} {:?} {}-{} exact={} verbatim={} edited={} crosses={} trust={:?} match={:?} alternatives={alternatives:?}\n{:?}\n{}",
            answer.episode.unwrap().id,
            m.name,
            m.start_s,
            m.end_s,
            m.exact,
            m.verbatim,
            m.edited,
            m.crosses_speaker,
            m.trust,
            answer.matches,
            m.text,
            m.cite,
        )
    }

    /// "full node doing all the work for you", said by one person and at once by another, answered
    /// `match: 2, alternatives: []`: the other place was taken for the answer's own, being near it. A
    /// question about the episode and one about the corpus now answer the same place, the first.
    /// And a turn of no words ("Mm-hmm.") is in its speaker's list of everything said.
    #[test]
    fn two_places_side_by_side_are_the_answer_and_its_alternative() {
        let segments = [
            ("B", 0.0, 2.0, "Mm-hmm."),
            ("A", 2.0, 5.0, "Then a full node doing all the work for you."),
            ("B", 5.2, 8.0, "A full node doing all the work for you, yes."),
        ];
        let episode = canonical("one", &segments);
        let built = Built::of(Config { frequent: 2, ..Config::default() }, std::slice::from_ref(&episode));
        let quote = "full node doing all the work for you";
        expect![[r#"
            one Some("Ana Lima") 2.477-5 exact=true verbatim=true edited=false crosses=false trust=Review match=2 alternatives=["one Some(\"Bea\") 5.327"]
            "full node doing all the work for you"
            Ana Lima, “one”, s, at 0:00:02."#]]
        .assert_eq(&attribute_everywhere(&built, quote));
        let asked = crate::quote::attribute(&episode, &crate::quote::Prepared::new(&episode.segments), quote);
        let m = asked.found_at.expect("found");
        assert_eq!(
            (m.speaker.as_str(), m.start_s, asked.matches, asked.alternatives.len()),
            ("A", 2.477, 2, 1)
        );

        let query = parse_query([("speaker", "Bea")]).unwrap();
        let texts: Vec<String> = built.search(&query).0.hits.into_iter().map(|hit| hit.text).collect();
        assert_eq!(texts, ["Mm-hmm.", "A full node doing all the work for you, yes."]);
    }

    #[test]
    fn who_said_this_is_answered_from_the_whole_corpus() {
        let built = dated_sample();
        let check = |quote: &str, expect: Expect| expect.assert_eq(&attribute_everywhere(&built, quote));
        // Said once, by a person an editor named: the only case `trust` may be high.
        check(
            "twenty-five people maintain it",
            expect![[r#"
                one Some("Ana Lima") 4.655-10 exact=true verbatim=true edited=false crosses=false trust=High match=1 alternatives=[]
                "twenty five people maintain it"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:04."#]],
        );
        // Said in two episodes: the earlier one answers, the other is an alternative.
        check(
            "open source",
            expect![[r#"
                one Some("Ana Lima") 0-1.897 exact=true verbatim=true edited=false crosses=false trust=Review match=2 alternatives=["two Some(\"Bea\") 1.474"]
                "Open source"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
        );
        // Edited: two pieces of one passage joined by an ellipsis.
        check(
            "Open source is … people maintain it",
            expect![[r#"
                one Some("Ana Lima") 0-10 exact=true verbatim=true edited=true crosses=false trust=Review match=1 alternatives=[]
                "Open source is … people maintain it"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
        );
        // Across a speaker change, and with a word changed: no passage holds it, the grams find it.
        check(
            "and twenty five people maintain it open the sauce file",
            expect![[r#"
                one Some("Ana Lima") 3.966-12.162 exact=false verbatim=false edited=false crosses=true trust=Review match=1 alternatives=[]
                "and twenty five people maintain it. Open the"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:03."#]],
        );
        // Edited: a bracketed word standing for the speaker's own; the rest is found verbatim.
        check(
            "[The project] is a gift, and twenty five people maintain it",
            expect![[r#"
                one Some("Ana Lima") 2.069-10 exact=true verbatim=true edited=true crosses=false trust=Review match=1 alternatives=[]
                "is a gift, and twenty five people maintain it"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:02."#]],
        );
        // Its tail changed: most of its words still meet in one place.
        check(
            "Open source is a gift, and twenty five purple giraffes",
            expect![[r#"
                one Some("Ana Lima") 0-6.552 exact=false verbatim=false edited=false crosses=false trust=Review match=1 alternatives=[]
                "Open source is a gift, and twenty five"
                Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
        );
        check("nobody said this", expect!["found=false episode=None match=0"]);
    }

    /// Phrases of every kind the lattice knows — an entry, frequent or rare; no entry but a rare one
    /// inside; longer than the longest gram; absent — answer exactly what reading every passage
    /// answers, with and without a speaker; and so they do when the filter of frequent grams says
    /// "frequent" of every gram (no filter), or wrongly of half the rare ones: it only chooses what
    /// is read.
    #[test]
    fn a_long_quote_over_many_short_passages_is_found() {
        // A quote of 64 words over twelve turns: more passages than the fewest read on each side
        // of its place, or than the eight read before.
        let turns = [
            "Tell me about the launch.",
            "Which one?",
            "The big one in March.",
            "Right, that one.",
            "So what happened next?",
            "Well we shipped it.",
            "On a Friday?",
            "On a Friday, yes, and nobody slept that weekend at all.",
            "Why not?",
            "Because the migration locked every table in the database for hours.",
            "Ouch.",
            "Then the pager went off again and again until Monday morning came around.",
        ];
        let segments: Vec<(&str, f64, f64, &str)> = turns
            .iter()
            .enumerate()
            .map(|(at, text)| {
                (if at % 2 == 0 { "A" } else { "B" }, at as f64 * 5.0, at as f64 * 5.0 + 5.0, *text)
            })
            .collect();
        let mut episodes = vec![canonical("long", &segments)];
        // Other talk around it, so the quote's place is not the whole corpus.
        let filler = "We talked about databases and weekends and pagers for a while today.";
        episodes.push(canonical("other", &[("A", 0.0, 5.0, filler), ("B", 5.0, 9.0, "Indeed we did.")]));
        let built = Built::of(Config { frequent: 2, ..Config::default() }, &episodes);
        let quote = turns.join(" ");
        let answer = attribute_everywhere(&built, &quote);
        assert!(answer.starts_with("long "), "{answer}");
        assert!(answer.contains("until Monday morning came around"), "{answer}");
    }

    #[test]
    fn marks_keep_passages_without_the_neighbours_unread() {
        // "zebra" is rare; one passage holds "the zebra" and two hold "zebra" after words whose mark
        // bits differ from "the"'s, so only the first is checked against its text.
        let the = Mark::bit("the");
        let others: Vec<&str> = ["a", "my", "one", "big", "old", "red", "wild"]
            .into_iter()
            .filter(|w| Mark::bit(w) != the)
            .collect();
        let mut texts = vec![
            String::from("the zebra ran"),
            format!("{} zebra ran", others[0]),
            format!("{} zebra ran", others[1]),
        ];
        // "the" is frequent, so the rare "zebra" is what narrows the phrase.
        texts.extend(["the sky", "the sea", "the end", "the start"].map(String::from));
        let segments: Vec<(&str, f64, f64, &str)> = texts
            .iter()
            .enumerate()
            .map(|(at, text)| ("A", at as f64, at as f64 + 1.0, text.as_str()))
            .collect();
        let built = Built::of(
            Config { frequent: 4, passages_per_block: 1, ..Config::default() },
            &[canonical("one", &segments)],
        );
        let query = parse_query([("q", "the zebra")]).unwrap();
        let (answer, _, read) = built.read_parts(|index, parts| search(index, &query, parts));
        assert_eq!(answer.hits.iter().map(|hit| hit.text.as_str()).collect::<Vec<_>>(), ["the zebra ran"]);
        let blocks = read.keys().filter(|part| part.file == built.index.manifest.passages).count();
        assert_eq!(blocks, 1, "only the block of the passage whose marks allow \"the\" is read");
        // "zebra ran" ends every passage's "zebra": all three hold it, marks or not.
        let (answer, _) = built.search(&parse_query([("q", "zebra ran")]).unwrap());
        assert_eq!(answer.total, 3);
    }

    #[test]
    fn answers_equal_a_scan_of_every_passage() {
        let words = ["the", "a", "we", "went", "to", "open", "source", "is", "gift", "shop", "zebra"];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut episodes = Vec::new();
        let mut passages: Vec<(String, &str, String)> = Vec::new();
        for e in 0..6 {
            let mut texts = Vec::new();
            for s in 0..30 {
                let len = 1 + below(12);
                // Skewed towards the first words, so grams of every length are frequent somewhere.
                let text: Vec<&str> =
                    (0..len).map(|_| words[below(words.len()).min(below(words.len()))]).collect();
                let speaker = if s % 3 == 0 { "A" } else { "B" };
                texts.push((speaker, s as f64, s as f64 + 1.0, text.join(" ")));
            }
            let id = format!("ep{e}");
            for (speaker, _, _, text) in &texts {
                passages.push((id.clone(), if *speaker == "A" { "Ana Lima" } else { "Bea" }, text.clone()));
            }
            let segments: Vec<(&str, f64, f64, &str)> =
                texts.iter().map(|(sp, a, b, t)| (*sp, *a, *b, t.as_str())).collect();
            episodes.push(canonical(&id, &segments));
        }
        let built = Built::of(
            Config { max_gram: 3, frequent: 3, bucket_bytes: 64, passages_per_block: 4 },
            &episodes,
        );

        let mut phrases: Vec<String> = Vec::new();
        for (_, _, text) in passages.iter().step_by(7) {
            let w: Vec<&str> = text.split(' ').collect();
            for n in 1..=6.min(w.len()) {
                phrases.push(w[..n].join(" "));
            }
        }
        for _ in 0..150 {
            let n = 1 + below(6);
            phrases.push((0..n).map(|_| words[below(words.len())]).collect::<Vec<_>>().join(" "));
        }
        let grams = built.grams();
        assert!(grams.iter().filter(|(_, frequent)| *frequent).count() > 20, "a corpus with frequent grams");
        let mut rare = grams.iter().filter(|(_, frequent)| !*frequent).map(|(key, _)| key.as_str());
        let wrong = grams.iter().filter(|(_, frequent)| *frequent).map(|(key, _)| key.as_str());
        let wrong = format::FrequentGrams::of(wrong.chain(std::iter::from_fn(|| rare.nth(1))));
        let filters = [built.with_frequent(None), built.with_frequent(wrong)];
        let mut copied = 0;
        let (mut kinds, mut found) = ([0usize; 2], 0);
        for (idx, phrase) in phrases.iter().enumerate() {
            let speaker = (idx % 4 == 0).then_some("Ana Lima");
            let wanted: Vec<String> = phrase.split(' ').map(str::to_string).collect();
            let expected: Vec<&(String, &str, String)> = passages
                .iter()
                .filter(|(_, name, text)| {
                    let tokens = normalise::tokens(text);
                    speaker.is_none_or(|s| s == *name) && find_words(&tokens, &wanted).is_some()
                })
                .collect();
            let mut params = vec![("q", phrase.as_str()), ("limit", "100")];
            params.extend(speaker.map(|s| ("speaker", s)));
            let (answer, rounds) = built.search(&parse_query(params).unwrap());
            assert_eq!(answer.total as usize, expected.len(), "total of {phrase:?} ({speaker:?})");
            let got: Vec<(&str, &str)> =
                answer.hits.iter().map(|h| (h.episode.id.as_str(), h.text.as_str())).collect();
            let want: Vec<(&str, &str)> =
                expected.iter().take(100).map(|(e, _, t)| (e.as_str(), t.as_str())).collect();
            assert_eq!(got, want, "hits of {phrase:?} ({speaker:?})");
            // The first page alone, which a frequent entry lists beside its bitmap.
            let mut params = vec![("q", phrase.as_str())];
            params.extend(speaker.map(|s| ("speaker", s)));
            let (first_page, _, read) =
                built.read_parts(|index, parts| search(index, &parse_query(params.clone()).unwrap(), parts));
            assert_eq!(first_page.total as usize, expected.len(), "first page total of {phrase:?}");
            let got: Vec<(&str, &str)> =
                first_page.hits.iter().map(|h| (h.episode.id.as_str(), h.text.as_str())).collect();
            assert_eq!(got, want[..want.len().min(DEFAULT_LIMIT)], "first page of {phrase:?} ({speaker:?})");
            // Times and names too, whether the page came from the blocks or from its copy.
            assert_eq!(first_page.hits[..], answer.hits[..first_page.hits.len()], "first page of {phrase:?}");
            copied += usize::from(read.keys().any(|part| built.index.manifest.pages.contains(&part.file)));
            kinds[usize::from(wanted.len() > 3)] += 1;
            found += usize::from(!expected.is_empty());
            // Rare grams, tiles, a lattice level, bitmaps, blocks: a long phrase of words this small
            // corpus holds everywhere (few grams rare) reads its rare grams before its tiles.
            assert!(rounds <= 5, "{phrase:?} took {rounds} rounds");
            for other in &filters {
                let mut params = vec![("q", phrase.as_str()), ("limit", "100")];
                params.extend(speaker.map(|s| ("speaker", s)));
                assert_eq!(
                    other.search(&parse_query(params).unwrap()).0,
                    answer,
                    "{phrase:?}, another filter"
                );
            }
        }
        assert!(kinds[0] > 50 && kinds[1] > 50 && found > 100 && found < phrases.len(), "{kinds:?} {found}");
        assert!(copied > 20, "only {copied} first pages came from their copies");
    }
}
