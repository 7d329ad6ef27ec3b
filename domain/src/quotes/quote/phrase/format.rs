//! The phrase index's files and how a search reads them: by byte range.
//!
//! Four large files hold everything ([`Manifest`] names them): the dictionary (hash buckets of
//! entries), the frequent entries' passage bitmaps, the passage blocks (the text and times a hit
//! shows), and [`Tables`], where each bucket and block starts. A search never needs a whole file
//! but the tables; it asks for [`Part`]s — one bucket, one bitmap, one block — so what it reads is
//! what it uses, and the number of files stays four whatever the corpus's size. (The first layout,
//! thousands of small files, cost a directory lookup per file and read whole position bitmaps.)

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use xorf::{BinaryFuse16, Descriptor, Filter};

use crate::index::Corrupt;
use crate::quotes::transcript::{EpisodeRef, NameState, RunKind};

/// The version of the index's files; a Worker refuses an index it does not know.
pub const FORMAT_VERSION: u32 = 6;

/// How many of a frequent entry's first passages its dictionary entry lists: a search's first page
/// of a phrase that is an entry then reads no bitmap.
pub const FIRST_PAGE: usize = super::query::DEFAULT_LIMIT;

/// A pages file is cut once it reaches this size (wrangler uploads objects of at most 300 MiB).
pub const PAGES_FILE_BYTES: usize = 64 * 1024 * 1024;

/// The folder of the index in the build.
pub const DIR: &str = "quotes";

/// The entry point of the index, served at `quotes/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Manifest {
    pub version: u32,
    pub n_passages: u32,
    pub n_episodes: u32,
    /// The longest indexed gram, in words ([`super::Config::max_gram`]).
    pub max_gram: u32,
    /// An entry found in fewer passages than this is rare: its passages are listed in the entry.
    pub frequent: u32,
    pub passages_per_block: u32,
    /// The file of [`Tables`], read whole once per reader.
    pub tables: String,
    pub tables_len: u64,
    /// The dictionary: [`Bucket`]s one after the other.
    pub dict: String,
    /// Frequent entries' passages, as roaring bitmaps one after the other.
    pub bitmaps: String,
    /// The passage blocks, one after the other.
    pub passages: String,
    /// A copy of each frequent gram's first page, a [`Block`] of its first [`FIRST_PAGE`] passages,
    /// one after the other: a common phrase's first page in one read instead of one a place. In
    /// files of about [`PAGES_FILE_BYTES`], each of which an R2 upload takes whole.
    pub pages: Vec<String>,
}

/// Where each dictionary bucket and passage block lies in its file, and which grams are frequent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    pub bucket_lens: Vec<u32>,
    pub block_lens: Vec<u32>,
    /// `None`: the reader takes every gram for possibly frequent (too few frequent grams to build
    /// a filter of).
    pub frequent: Option<FrequentGrams>,
}

/// The keys of the frequent gram entries (found in at least [`Manifest::frequent`] passages) as a
/// binary fuse filter of their [`fnv1a`] hashes: it says "maybe" of every frequent gram and,
/// wrongly, of about one other key in 65,536; "no" is always right. A reader holds it in memory
/// (about 2.3 bytes a frequent gram) and plans its dictionary reads with it: a gram is an entry
/// only when its two grams one word shorter are frequent, so the filter tells, without a read,
/// which grams of a phrase have entries and which of those are rare.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrequentGrams {
    pub seed: u64,
    pub segment_length: u32,
    pub segment_length_mask: u32,
    pub segment_count_length: u32,
    /// The filter's 16-bit fingerprints, little-endian.
    pub fingerprints: Vec<u8>,
}

impl FrequentGrams {
    /// The filter of `keys` (gram keys), or `None` when the filter cannot be built (fewer than two
    /// keys).
    pub fn of<'k>(keys: impl Iterator<Item = &'k str>) -> Option<FrequentGrams> {
        let mut hashes: Vec<u64> = keys.map(|key| fnv1a(key.as_bytes())).collect();
        hashes.sort_unstable();
        hashes.dedup();
        if hashes.len() < 2 {
            return None;
        }
        let filter = BinaryFuse16::try_from(&hashes).ok()?;
        Some(FrequentGrams {
            seed: filter.descriptor.seed,
            segment_length: filter.descriptor.segment_length,
            segment_length_mask: filter.descriptor.segment_length_mask,
            segment_count_length: filter.descriptor.segment_count_length,
            fingerprints: filter.fingerprints.iter().flat_map(|f| f.to_le_bytes()).collect(),
        })
    }

    /// The filter, when its sizes agree with each other (else any lookup could index past its end).
    fn filter(self) -> Option<BinaryFuse16> {
        let Self { seed, segment_length, segment_length_mask, segment_count_length, fingerprints } = self;
        let agree = segment_length.is_power_of_two()
            && segment_length_mask == segment_length - 1
            && segment_count_length.is_multiple_of(segment_length)
            && fingerprints.len().is_multiple_of(2)
            && fingerprints.len() / 2 >= segment_count_length as usize + 2 * segment_length as usize;
        agree.then(|| BinaryFuse16 {
            descriptor: Descriptor { seed, segment_length, segment_length_mask, segment_count_length },
            fingerprints: fingerprints.chunks_exact(2).map(|f| u16::from_le_bytes([f[0], f[1]])).collect(),
        })
    }
}

/// A manifest with its tables turned into offsets: what [`super::search`] reads the index through.
#[derive(Debug, Clone)]
pub struct Index {
    pub manifest: Manifest,
    bucket_starts: Vec<u64>,
    block_starts: Vec<u64>,
    /// `None`: every gram may be frequent.
    frequent: Option<BinaryFuse16>,
}

impl Index {
    /// The index of `manifest`, given the bytes of its tables file.
    pub fn open(manifest: Manifest, tables: &[u8]) -> Result<Index, Corrupt> {
        if manifest.version != FORMAT_VERSION {
            return Err(Corrupt(format!(
                "the phrase index has format {}, this code reads {FORMAT_VERSION}",
                manifest.version
            )));
        }
        let tables: Tables = postcard::from_bytes(tables).map_err(|_| corrupt(&manifest.tables))?;
        let starts = |lens: &[u32]| {
            let mut starts = Vec::with_capacity(lens.len() + 1);
            starts.push(0u64);
            for len in lens {
                starts.push(starts.last().expect("one start") + u64::from(*len));
            }
            starts
        };
        if tables.bucket_lens.is_empty() {
            return Err(corrupt(&manifest.tables));
        }
        let frequent = match tables.frequent {
            None => None,
            Some(grams) => Some(grams.filter().ok_or_else(|| corrupt(&manifest.tables))?),
        };
        Ok(Index {
            bucket_starts: starts(&tables.bucket_lens),
            block_starts: starts(&tables.block_lens),
            frequent,
            manifest,
        })
    }

    /// Whether gram `key` may be a frequent entry: `false` only when it surely is not.
    pub(super) fn may_be_frequent(&self, key: &str) -> bool {
        self.frequent.as_ref().is_none_or(|filter| filter.contains(&fnv1a(key.as_bytes())))
    }

    /// The part of the dictionary that holds `key`'s entry, if there is one.
    pub(super) fn bucket(&self, key: &str) -> Part {
        let n = (self.bucket_starts.len() - 1) as u64;
        let k = (fnv1a(key.as_bytes()) % n) as usize;
        Part::of(&self.manifest.dict, self.bucket_starts[k], self.bucket_starts[k + 1])
    }

    /// The part of the passages file that holds passage `passage`'s block.
    pub(super) fn block(&self, passage: u32) -> Option<Part> {
        let k = (passage / self.manifest.passages_per_block) as usize;
        let end = *self.block_starts.get(k + 1)?;
        Some(Part::of(&self.manifest.passages, self.block_starts[k], end))
    }

    /// A bitmap's part of the bitmaps file.
    pub(super) fn bitmap(&self, offset: u64, len: u32) -> Part {
        Part::of(&self.manifest.bitmaps, offset, offset + u64::from(len))
    }

    /// A frequent entry's copy of its first page, in pages file `file`.
    pub(super) fn page(&self, file: u32, offset: u64, len: u32) -> Option<Part> {
        let name = self.manifest.pages.get(file as usize)?;
        Some(Part::of(name, offset, offset + u64::from(len)))
    }

    /// The bytes a reader loads once, besides the manifest.
    pub fn tables_part(manifest: &Manifest) -> Part {
        Part::of(&manifest.tables, 0, manifest.tables_len)
    }
}

/// A byte range of one index file: what a search asks its caller to read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Part {
    pub file: String,
    pub offset: u64,
    pub len: u64,
}

impl Part {
    fn of(file: &str, start: u64, end: u64) -> Part {
        Part { file: file.to_string(), offset: start, len: end - start }
    }
}

/// Parts of one file at most this many bytes apart are fetched by one ranged read ([`reads`]): an
/// attributed place is read with the blocks on either side of it, which lie end to end, and hits of
/// one episode share reads. What a read costs is a round trip (and, at R2, an operation billed),
/// hardly its bytes: over the bench's queries 16 KiB read 6.99 times a query on average instead of
/// 7.40 at 4 KiB (p50 5 instead of 6), for p99 112.6 KiB instead of 97.1; 64 KiB for every query
/// saved half a read more, for 237 KiB at p99, too near the 256 KiB a query may read
/// (BENCHMARKS.md). Wider gaps are joined within [`READ_BUDGET`].
pub const READ_GAP: u64 = 16 * 1024;

/// What one round's reads may fetch in all when [`reads`] joins parts further apart than
/// [`READ_GAP`]: the narrowest gaps first, while the round's bytes stay within it. Most rounds
/// fetch a few KiB, so most can join neighbours tens of KiB apart, while a round that is large
/// already joins nothing more and a query stays within the 256 KiB it may read. Over the bench's
/// queries: 5.89 reads a query on average instead of 6.25, for p99 127 KiB instead of 103 and max
/// 176 KiB (BENCHMARKS.md).
pub const READ_BUDGET: u64 = 128 * 1024;

/// How [`reads`] joins parts into ranged reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joining {
    /// Parts at most this many bytes apart always share a read.
    pub gap: u64,
    /// Then the narrowest gaps left between reads of one file are joined while the reads fetch at
    /// most this many bytes in all (0: no more).
    pub budget: u64,
}

/// The Worker's joining: [`READ_GAP`] and [`READ_BUDGET`].
pub const JOINING: Joining = Joining { gap: READ_GAP, budget: READ_BUDGET };

/// One ranged read of an index file, and the parts it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub range: Part,
    pub parts: Vec<Part>,
}

impl Read {
    /// Each part with its bytes, cut from the read's; `None` when `bytes` is shorter than the range.
    pub fn cut<'r, 'b>(&'r self, bytes: &'b [u8]) -> Option<Vec<(&'r Part, &'b [u8])>> {
        self.parts
            .iter()
            .map(|part| {
                let start = (part.offset - self.range.offset) as usize;
                Some((part, bytes.get(start..start + part.len as usize)?))
            })
            .collect()
    }

    fn end(&self) -> u64 {
        self.range.offset + self.range.len
    }

    /// Takes `next` (a read of the same file that starts after this one does) into this one.
    fn join(&mut self, next: Read) {
        let end = self.end().max(next.end());
        self.range.len = end - self.range.offset;
        self.parts.extend(next.parts);
    }
}

/// The ranged reads that fetch `parts`: by file and offset, a part that starts at most
/// `joining.gap` bytes after the read before it ends joins that read; then the narrowest gaps left
/// between reads of one file are joined while all the reads fetch at most `joining.budget` bytes.
pub fn reads(parts: &[Part], joining: Joining) -> Vec<Read> {
    let mut sorted: Vec<&Part> = parts.iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut reads: Vec<Read> = Vec::new();
    for part in sorted {
        let read = Read { range: part.clone(), parts: vec![part.clone()] };
        match reads.last_mut() {
            Some(last) if last.range.file == part.file && part.offset <= last.end() + joining.gap => {
                last.join(read)
            }
            _ => reads.push(read),
        }
    }
    // The gaps between neighbouring reads of one file, narrowest first: each joined while the
    // budget holds it. A gap is the bytes between two reads, so joining adds exactly those.
    let mut fetched: u64 = reads.iter().map(|read| read.range.len).sum();
    let mut gaps: Vec<(u64, usize)> = reads
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair[0].range.file == pair[1].range.file)
        .map(|(at, pair)| (pair[1].range.offset - pair[0].end(), at))
        .collect();
    gaps.sort_unstable();
    let mut joined = vec![false; reads.len()];
    for (gap, at) in gaps {
        if fetched.saturating_add(gap) > joining.budget {
            break;
        }
        fetched += gap;
        joined[at] = true;
    }
    let mut kept: Vec<Read> = Vec::with_capacity(reads.len());
    for (read, joins_last) in reads.into_iter().zip(std::iter::once(false).chain(joined)) {
        match kept.last_mut() {
            Some(last) if joins_last => last.join(read),
            _ => kept.push(read),
        }
    }
    kept
}

/// Where a search finds the parts it asked for.
pub trait Parts {
    fn part(&self, part: &Part) -> Option<&[u8]>;
}

impl Parts for HashMap<Part, Vec<u8>> {
    fn part(&self, part: &Part) -> Option<&[u8]> {
        self.get(part).map(Vec::as_slice)
    }
}

/// Whole files by name (the builder's output, a test's): each part is cut from its file.
pub struct WholeFiles<'a>(pub &'a HashMap<String, Vec<u8>>);

impl Parts for WholeFiles<'_> {
    fn part(&self, part: &Part) -> Option<&[u8]> {
        let bytes = self.0.get(&part.file)?;
        bytes.get(part.offset as usize..(part.offset + part.len) as usize)
    }
}

/// Why a search stopped: it needs parts it was not given, or the index is damaged.
#[derive(Debug)]
pub enum PhraseError {
    Need(Vec<Part>),
    Corrupt(Corrupt),
}

impl From<Corrupt> for PhraseError {
    fn from(corrupt: Corrupt) -> Self {
        PhraseError::Corrupt(corrupt)
    }
}

/// The parts of `wanted` that `parts` lacks, or `Ok` when it has them all.
pub(super) fn require(parts: &impl Parts, wanted: impl IntoIterator<Item = Part>) -> Result<(), PhraseError> {
    let mut missing: Vec<Part> = wanted.into_iter().filter(|part| parts.part(part).is_none()).collect();
    missing.sort();
    missing.dedup();
    if missing.is_empty() { Ok(()) } else { Err(PhraseError::Need(missing)) }
}

pub(super) fn corrupt(file: &str) -> Corrupt {
    Corrupt(format!("quote index file {file} does not decode"))
}

/// One dictionary entry: a gram (normalised words joined by spaces) or a speaker (`@` and the
/// folded name), the number of passages it is in, and those passages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Entry<'a> {
    pub key: &'a str,
    pub count: u32,
    #[serde(borrow)]
    pub passages: Passages<'a>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) enum Passages<'a> {
    /// A rare entry's passages, as LEB128 gaps, and a [`Mark`] for each passage: which words
    /// stand next to the gram there. A speaker's passages have no marks (`marks` is empty).
    Inline { gaps: &'a [u8], marks: &'a [u8] },
    /// A frequent entry's passages: a roaring bitmap at this place of the bitmaps file, its first
    /// [`FIRST_PAGE`] passages as LEB128 gaps, which are a search's first page, and where the copy
    /// of that page is among the pages files (`page_len` 0: none, as for a speaker).
    Bitmap { offset: u64, len: u32, first: &'a [u8], page_file: u32, page_offset: u64, page_len: u32 },
}

/// The entries whose keys hash to one bucket, sorted by key.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Bucket<'a> {
    #[serde(borrow)]
    pub entries: Vec<Entry<'a>>,
}

impl<'a> Bucket<'a> {
    pub fn find(&self, key: &str) -> Option<&Entry<'a>> {
        self.entries.binary_search_by(|entry| entry.key.cmp(key)).ok().map(|idx| &self.entries[idx])
    }
}

/// Which words stand next to a gram in one passage, a byte: the low half for the words before its
/// occurrences there, the high half for the words after, one bit of each half set per word
/// ([`Mark::bit`]). A phrase that holds the gram between two words can be in the passage only if
/// both words' bits are set, so a search checks against their text only the passages a rare
/// entry lists whose marks allow the phrase: about a quarter of those that do not hold it, on
/// each side the phrase goes past the gram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Mark(pub u8);

impl Mark {
    /// A word's bit in a half: one of four, by its hash (high bits, which the buckets do not use).
    pub fn bit(word: &str) -> u8 {
        1 << (fnv1a(word.as_bytes()) >> 62)
    }

    /// Adds an occurrence of the gram, between `before` and `after` (the words' bits, 0 at the
    /// passage's start or end).
    pub fn add(&mut self, before: u8, after: u8) {
        self.0 |= before | after << 4;
    }

    /// Whether the gram may stand after `before` and before `after` here (`None`: the phrase
    /// starts or ends with the gram, so any word may).
    pub fn allows(self, before: Option<&str>, after: Option<&str>) -> bool {
        before.is_none_or(|word| self.0 & Mark::bit(word) != 0)
            && after.is_none_or(|word| (self.0 >> 4) & Mark::bit(word) != 0)
    }
}

/// The dictionary key of a speaker's passages.
pub(super) fn speaker_key(folded_name: &str) -> String {
    format!("@{folded_name}")
}

/// One passage as a hit shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Passage {
    /// Index into the block's `episodes`.
    pub episode: u32,
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    pub start_s: f64,
    pub end_s: f64,
    pub start_estimated: bool,
    pub end_estimated: bool,
    pub text: String,
}

/// An episode of a block, with the run its passages are from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct BlockEpisode {
    #[serde(with = "every_field")]
    pub episode: EpisodeRef,
    /// The run the passages are from.
    pub pipeline: String,
    pub kind: RunKind,
}

/// [`EpisodeRef`] for postcard, which cannot skip absent fields: every field in order, as a tuple
/// (postcard writes a struct and a tuple of its fields alike).
pub(crate) mod every_field {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::quotes::transcript::EpisodeRef;

    type Fields = (
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );

    pub fn serialize<S: Serializer>(e: &EpisodeRef, serializer: S) -> Result<S::Ok, S::Error> {
        let EpisodeRef {
            id,
            title,
            source_url,
            show,
            licence,
            attribution,
            show_title,
            published,
            audio_url,
        } = e;
        (id, title, source_url, show, licence, attribution, show_title, published, audio_url)
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<EpisodeRef, D::Error> {
        let (id, title, source_url, show, licence, attribution, show_title, published, audio_url) =
            Fields::deserialize(deserializer)?;
        Ok(EpisodeRef { id, title, source_url, show, licence, attribution, show_title, published, audio_url })
    }
}

/// Consecutive passages (`passages_per_block` of them) and the episodes they are from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Block {
    pub episodes: Vec<BlockEpisode>,
    pub passages: Vec<Passage>,
}

/// The largest block or page a reader inflates: far above any the builder writes (a block of eight
/// passages of at most [`super::MAX_PASSAGE_TOKENS`] words, and their episodes), so a damaged length
/// is refused instead of allocated.
const MAX_BLOCK_BYTES: usize = 1 << 20;

impl Block {
    /// The index in `episodes` of the episode `id`, which `make` adds when the block lacks it.
    pub fn episode_slot(&mut self, id: &str, make: impl FnOnce() -> BlockEpisode) -> u32 {
        let idx = self.episodes.iter().position(|e| e.episode.id == id).unwrap_or_else(|| {
            self.episodes.push(make());
            self.episodes.len() - 1
        });
        idx as u32
    }

    /// As stored: postcard, then an LZ4 block with its length before it. Passages are speech and
    /// their episodes repeat the same show, licence and attribution, so on the Changelog corpus the
    /// blocks take 66% of their postcard bytes and the page copies 60%, for microseconds of
    /// decoding (BENCHMARKS.md).
    pub fn pack(&self) -> Vec<u8> {
        lz4_flex::block::compress_prepend_size(&postcard::to_allocvec(self).expect("blocks serialise"))
    }

    /// A stored block (or page copy) of `file` back.
    pub fn unpack(bytes: &[u8], file: &str) -> Result<Block, Corrupt> {
        let len = bytes.first_chunk::<4>().map(|len| u32::from_le_bytes(*len) as usize);
        if len.is_none_or(|len| len > MAX_BLOCK_BYTES) {
            return Err(corrupt(file));
        }
        let inflated = lz4_flex::block::decompress_size_prepended(bytes).map_err(|_| corrupt(file))?;
        postcard::from_bytes(&inflated).map_err(|_| corrupt(file))
    }
}

/// FNV-1a, 64 bits: the bucket of a key. Stable across builds and platforms, which a dictionary
/// read by another program needs; `std`'s hasher promises neither.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

/// Ascending passage ids as LEB128 gaps.
pub(super) fn encode_gaps(passages: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(passages.len() * 2);
    let mut last = 0u32;
    for (idx, &passage) in passages.iter().enumerate() {
        let mut gap = if idx == 0 { passage } else { passage - last };
        last = passage;
        loop {
            let byte = (gap & 0x7f) as u8;
            gap >>= 7;
            if gap == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

/// The passage ids [`encode_gaps`] wrote, or `None` when the bytes are not such a list.
pub(super) fn decode_gaps(bytes: &[u8]) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    let (mut value, mut shift, mut last) = (0u32, 0u32, 0u32);
    for &byte in bytes {
        if shift > 28 {
            return None;
        }
        value |= u32::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            last = if out.is_empty() { value } else { last.checked_add(value)? };
            out.push(last);
            (value, shift) = (0, 0);
        }
    }
    (shift == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(file: &str, offset: u64, len: u64) -> Part {
        Part { file: file.into(), offset, len }
    }

    /// A block's episode is written as the flat struct every published index was built with: the
    /// same bytes, field for field, so no index needs rebuilding.
    #[test]
    fn a_block_episode_is_written_as_the_flat_record_it_always_was() {
        #[derive(Serialize)]
        struct Flat {
            id: String,
            title: String,
            source_url: String,
            show: String,
            licence: String,
            attribution: Option<String>,
            show_title: Option<String>,
            published: Option<String>,
            audio_url: Option<String>,
            pipeline: String,
            kind: RunKind,
        }
        let mut episode = crate::quotes::quote::fixtures::sourdough();
        episode.show_title = Some("The Kitchen Table".into());
        episode.published = Some("2026-11-02".into());
        let block =
            BlockEpisode { episode: episode.clone(), pipeline: "human".into(), kind: RunKind::HumanEdited };
        let flat = Flat {
            id: episode.id.clone(),
            title: episode.title.clone(),
            source_url: episode.source_url.clone(),
            show: episode.show.clone(),
            licence: episode.licence.clone(),
            attribution: None,
            show_title: episode.show_title.clone(),
            published: episode.published.clone(),
            audio_url: None,
            pipeline: "human".into(),
            kind: RunKind::HumanEdited,
        };
        let bytes = postcard::to_allocvec(&block).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&flat).unwrap());
        assert_eq!(postcard::from_bytes::<BlockEpisode>(&bytes).unwrap(), block);
    }

    #[test]
    fn near_parts_of_one_file_share_a_read() {
        let parts = [
            part("b", 500, 10),
            part("a", 100, 10),
            part("a", 0, 50),
            part("a", 200, 9),
            part("a", 80, 5),
            part("a", 0, 50),
        ];
        let reads = reads(&parts, Joining { gap: 30, budget: 0 });
        assert_eq!(reads.len(), 3, "{reads:?}");
        assert_eq!(reads[0].range, part("a", 0, 110));
        assert_eq!(reads[0].parts, vec![part("a", 0, 50), part("a", 80, 5), part("a", 100, 10)]);
        assert_eq!((&reads[1].range, &reads[2].range), (&part("a", 200, 9), &part("b", 500, 10)));
        let bytes: Vec<u8> = (0..110).collect();
        let cut = reads[0].cut(&bytes).unwrap();
        assert_eq!(cut[1], (&part("a", 80, 5), &bytes[80..85]));
        assert_eq!(reads[0].cut(&bytes[..100]), None, "a short answer is no answer");
    }

    #[test]
    fn a_budget_joins_the_narrowest_gaps_it_can_pay_for() {
        let parts = [part("a", 0, 10), part("a", 5000, 10), part("a", 1000, 10), part("b", 20, 10)];
        let reads = reads(&parts, Joining { gap: 0, budget: 40 + 990 });
        let ranges: Vec<&Part> = reads.iter().map(|read| &read.range).collect();
        assert_eq!(ranges, [&part("a", 0, 1010), &part("a", 5000, 10), &part("b", 20, 10)]);
        assert_eq!(reads[0].parts, [part("a", 0, 10), part("a", 1000, 10)]);
        let none = super::reads(&parts, Joining { gap: 0, budget: 40 + 989 });
        assert_eq!(none.len(), 4, "a gap the budget cannot pay for stays: {none:?}");
        let all = super::reads(&parts, Joining { gap: 0, budget: u64::MAX });
        assert_eq!(all.len(), 2, "never across files: {all:?}");
        assert_eq!(all[0].range, part("a", 0, 5010));
    }

    #[test]
    fn blocks_round_trip_and_damage_is_refused() {
        let passage = Passage {
            episode: 0,
            speaker: "S1".into(),
            name: Some("Ana Lima".into()),
            name_state: NameState::Human,
            start_s: 1.5,
            end_s: 4.0,
            start_estimated: false,
            end_estimated: false,
            text: "the same words again and again and again".into(),
        };
        let block = Block { episodes: Vec::new(), passages: vec![passage.clone(), passage] };
        let packed = block.pack();
        assert!(packed.len() < postcard::to_allocvec(&block).unwrap().len(), "repeated words take less room");
        assert_eq!(Block::unpack(&packed, "p").unwrap(), block);
        let mut huge = packed.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Block::unpack(&huge, "p").is_err(), "a damaged length is refused, not allocated");
        assert!(Block::unpack(&packed[..packed.len() - 3], "p").is_err(), "a cut-off block");
        assert!(Block::unpack(&packed[..2], "p").is_err(), "no length");
    }

    #[test]
    fn gaps_round_trip() {
        for list in [vec![], vec![0], vec![5, 6, 200, 70_000, 4_000_000_000]] {
            assert_eq!(decode_gaps(&encode_gaps(&list)), Some(list));
        }
        assert_eq!(decode_gaps(&[0x80]), None, "a cut-off number");
    }
}
