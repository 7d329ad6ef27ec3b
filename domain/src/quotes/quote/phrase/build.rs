//! Writing the phrase index: passages in corpus order, then the gram lattice, the dictionary
//! buckets, the bitmaps, the passage blocks and the tables.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use roaring::RoaringBitmap;

use super::format::{
    Block, BlockEpisode, Bucket, Entry, FORMAT_VERSION, FrequentGrams, Manifest, Mark, Passage, Passages,
    Tables, encode_gaps, fnv1a, speaker_key,
};
use super::format::{FIRST_PAGE, PAGES_FILE_BYTES};
use super::{Config, MAX_PASSAGE_TOKENS};
use crate::index::{IndexFile, bitmap_bytes, hashed_name};
use crate::quotes::quote::normalise;
use crate::quotes::quote::views::fold_name;
use crate::quotes::transcript::Canonical;

/// A built index: the manifest and its files (names relative to the index folder).
#[derive(Debug)]
pub struct BuiltIndex {
    pub manifest: Manifest,
    pub files: Vec<IndexFile>,
}

/// The index cannot hold the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFull(pub String);

/// Collects canonical transcripts in passage order and writes the index files.
#[derive(Debug)]
pub struct IndexBuilder {
    config: Config,
    vocab: HashMap<String, u32>,
    words: Vec<String>,
    /// Each passage's words, as vocabulary ids.
    passage_words: Vec<Vec<u32>>,
    speakers: BTreeMap<String, Vec<u32>>,
    blocks: Vec<Block>,
    n_episodes: u32,
}

impl Default for IndexBuilder {
    fn default() -> Self {
        IndexBuilder::new(Config::default())
    }
}

impl IndexBuilder {
    pub fn new(config: Config) -> IndexBuilder {
        assert!(config.max_gram >= 1, "max_gram is at least 1");
        IndexBuilder {
            config,
            vocab: HashMap::new(),
            words: Vec::new(),
            passage_words: Vec::new(),
            speakers: BTreeMap::new(),
            blocks: Vec::new(),
            n_episodes: 0,
        }
    }

    pub fn add_episode(&mut self, canonical: &Canonical) -> Result<(), IndexFull> {
        self.n_episodes += 1;
        for segment in &canonical.segments {
            let tokens = normalise::tokens(&segment.text);
            // A turn with no word to search ("Mm-hmm.", "[laughs]") is still something its speaker
            // said: a passage of no words, which only a speaker's list finds.
            let chunks: Vec<&[normalise::Token]> = match tokens.is_empty() {
                true if segment.text.trim().is_empty() => continue,
                true => vec![&[]],
                false => tokens.chunks(MAX_PASSAGE_TOKENS).collect(),
            };
            let resolved = canonical.speaker(&segment.speaker);
            let n_chars = segment.text.chars().count().max(1) as f64;
            let span = segment.end_s - segment.start_s;
            for chunk in chunks {
                let passage_id = u32::try_from(self.passage_words.len())
                    .map_err(|_| IndexFull(format!("more than {} passages", u32::MAX)))?;
                let mut ids = Vec::with_capacity(chunk.len());
                for token in chunk {
                    ids.push(match self.vocab.get(token.norm.as_str()) {
                        Some(id) => *id,
                        None => {
                            // `NOT_FREQUENT` is no word's number.
                            let id = u32::try_from(self.words.len())
                                .ok()
                                .filter(|&id| id != NOT_FREQUENT)
                                .ok_or_else(|| {
                                    IndexFull(format!("more than {NOT_FREQUENT} distinct words"))
                                })?;
                            self.vocab.insert(token.norm.clone(), id);
                            self.words.push(token.norm.clone());
                            id
                        }
                    });
                }
                self.passage_words.push(ids);
                if let Some(name) = &resolved.name {
                    self.speakers.entry(fold_name(name)).or_default().push(passage_id);
                }
                let whole = chunk.len() == tokens.len();
                let (from, to) = if whole {
                    (0, segment.text.len())
                } else {
                    (chunk[0].start, chunk[chunk.len() - 1].end)
                };
                let at = |byte: usize| {
                    segment.start_s + span * segment.text[..byte].chars().count() as f64 / n_chars
                };
                if passage_id.is_multiple_of(self.config.passages_per_block) {
                    self.blocks.push(Block::default());
                }
                let block = self.blocks.last_mut().expect("a block was opened");
                let episode = block.episode_slot(&canonical.episode.id, || BlockEpisode {
                    episode: canonical.episode.clone(),
                    pipeline: canonical.pipeline.clone(),
                    kind: canonical.kind,
                });
                block.passages.push(Passage {
                    episode,
                    speaker: segment.speaker.clone(),
                    name: resolved.name.clone(),
                    name_state: resolved.name_state,
                    start_s: if whole { segment.start_s } else { at(from) },
                    end_s: if whole { segment.end_s } else { at(to) },
                    start_estimated: segment.start_estimated || !whole,
                    end_estimated: segment.end_estimated || !whole,
                    text: segment.text[from..to].to_string(),
                });
            }
        }
        Ok(())
    }

    pub fn finish(self) -> BuiltIndex {
        let frequent = self.config.frequent;
        // Every entry's key and passages, level by level.
        let mut entries: Vec<(String, Postings)> = Vec::new();
        let bits: Vec<u8> = self.words.iter().map(|word| Mark::bit(word)).collect();
        // The bits of the words on either side of the `n` words at `at` of a passage.
        let sides = |ids: &[u32], at: usize, n: usize| {
            let bit =
                |idx: Option<usize>| idx.and_then(|idx| ids.get(idx)).map_or(0, |&id| bits[id as usize]);
            (bit(at.checked_sub(1)), bit(Some(at + n)))
        };

        // Level 1: every word.
        let mut by_word: Vec<Postings> = (0..self.words.len()).map(|_| Postings::default()).collect();
        for (passage, ids) in self.passage_words.iter().enumerate() {
            for (at, &id) in ids.iter().enumerate() {
                let (before, after) = sides(ids, at, 1);
                by_word[id as usize].add(passage as u32, before, after);
            }
        }
        let mut below = Frequent::default();
        let mut word_rank = vec![NOT_FREQUENT; self.words.len()];
        for (id, postings) in by_word.into_iter().enumerate() {
            if postings.passages.len() as u32 >= frequent {
                word_rank[id] = below.add(self.words[id].clone(), id as u32);
            }
            entries.push((self.words[id].clone(), postings));
        }
        // Each passage's frequent grams of the level below, by where they start.
        let mut at_below: Vec<Vec<u32>> = self
            .passage_words
            .iter()
            .map(|ids| ids.iter().map(|&id| word_rank[id as usize]).collect())
            .collect();

        // Level n: the grams whose two grams of n - 1 words are both frequent, each known by that pair.
        for n in 2..=self.config.max_gram {
            if below.keys.is_empty() {
                break;
            }
            let mut level: GramMap<Postings> = GramMap::default();
            for (passage, (ids, ranks)) in self.passage_words.iter().zip(&at_below).enumerate() {
                for (at, pair) in ranks.windows(2).enumerate() {
                    if pair[0] == NOT_FREQUENT || pair[1] == NOT_FREQUENT {
                        continue;
                    }
                    let (before, after) = sides(ids, at, n);
                    level.entry(pair_key(pair[0], pair[1])).or_default().add(passage as u32, before, after);
                }
            }
            // In key order, so the same corpus always writes the same bytes.
            let mut level: Vec<(u64, Postings)> = level.into_iter().collect();
            level.sort_unstable_by_key(|(key, _)| *key);
            let mut next = Frequent::default();
            let mut rank_of: GramMap<u32> = GramMap::default();
            for (key, postings) in level {
                let (prefix, suffix) = ((key >> 32) as usize, key as u32 as usize);
                let last_word = below.last_words[suffix];
                let name = format!("{} {}", below.keys[prefix], self.words[last_word as usize]);
                if postings.passages.len() as u32 >= frequent {
                    rank_of.insert(key, next.add(name.clone(), last_word));
                }
                entries.push((name, postings));
            }
            for ranks in &mut at_below {
                let found: Vec<u32> = ranks
                    .windows(2)
                    .map(|pair| match pair[0] == NOT_FREQUENT || pair[1] == NOT_FREQUENT {
                        true => NOT_FREQUENT,
                        false => rank_of.get(&pair_key(pair[0], pair[1])).copied().unwrap_or(NOT_FREQUENT),
                    })
                    .collect();
                *ranks = found;
            }
            below = next;
        }
        let n_grams = entries.len();
        for (name, passages) in self.speakers {
            entries.push((speaker_key(&name), Postings { passages, marks: Vec::new() }));
        }

        // The bitmaps file, the pages file, and each entry's passages.
        let mut bitmaps: Vec<u8> = Vec::new();
        let mut pages: Vec<Vec<u8>> = vec![Vec::new()];
        let encoded: Vec<Encoded> = entries
            .into_iter()
            .enumerate()
            .map(|(idx, (key, Postings { passages, marks }))| {
                let count = passages.len() as u32;
                if count < frequent {
                    let marks = marks.into_iter().map(|mark| mark.0).collect();
                    return Encoded {
                        key,
                        count,
                        inline: encode_gaps(&passages),
                        marks,
                        bitmap: None,
                        page: None,
                    };
                }
                let first = &passages[..FIRST_PAGE.min(passages.len())];
                // A speaker's passages are never a search's page without their text checked.
                let page = (idx < n_grams).then(|| {
                    let bytes = page_of(&self.blocks, self.config.passages_per_block, first).pack();
                    if pages.last().expect("a file").len() + bytes.len() > PAGES_FILE_BYTES {
                        pages.push(Vec::new());
                    }
                    let n_files = pages.len() as u32;
                    let file = pages.last_mut().expect("a file");
                    let place = (n_files - 1, file.len() as u64, bytes.len() as u32);
                    file.extend_from_slice(&bytes);
                    place
                });
                let inline = encode_gaps(first);
                let bytes = bitmap_bytes(&RoaringBitmap::from_sorted_iter(passages).expect("sorted"));
                let place = (bitmaps.len() as u64, bytes.len() as u32);
                bitmaps.extend_from_slice(&bytes);
                Encoded { key, count, inline, marks: Vec::new(), bitmap: Some(place), page }
            })
            .collect();

        // The dictionary: entries hashed into buckets of about `bucket_bytes`.
        let approximate: usize =
            encoded.iter().map(|e| e.key.len() + e.inline.len() + e.marks.len() + 8).sum();
        let n_buckets = approximate.div_ceil(self.config.bucket_bytes).max(1);
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); n_buckets];
        for (idx, entry) in encoded.iter().enumerate() {
            buckets[(fnv1a(entry.key.as_bytes()) % n_buckets as u64) as usize].push(idx);
        }
        let mut dict = Vec::with_capacity(approximate);
        let mut bucket_lens = Vec::with_capacity(n_buckets);
        for mut members in buckets {
            members.sort_unstable_by(|&a, &b| encoded[a].key.cmp(&encoded[b].key));
            let bucket = Bucket {
                entries: members
                    .iter()
                    .map(|&idx| {
                        let entry = &encoded[idx];
                        Entry {
                            key: &entry.key,
                            count: entry.count,
                            passages: match entry.bitmap {
                                Some((offset, len)) => {
                                    let (page_file, page_offset, page_len) = entry.page.unwrap_or_default();
                                    Passages::Bitmap {
                                        offset,
                                        len,
                                        first: &entry.inline,
                                        page_file,
                                        page_offset,
                                        page_len,
                                    }
                                }
                                None => Passages::Inline { gaps: &entry.inline, marks: &entry.marks },
                            },
                        }
                    })
                    .collect(),
            };
            let bytes = postcard::to_allocvec(&bucket).expect("buckets serialise");
            bucket_lens.push(bytes.len() as u32);
            dict.extend_from_slice(&bytes);
        }

        let mut passages = Vec::new();
        let mut block_lens = Vec::with_capacity(self.blocks.len());
        for block in &self.blocks {
            let bytes = block.pack();
            block_lens.push(bytes.len() as u32);
            passages.extend_from_slice(&bytes);
        }
        let frequent_grams = FrequentGrams::of(
            encoded[..n_grams].iter().filter(|e| e.bitmap.is_some()).map(|e| e.key.as_str()),
        );
        let tables = postcard::to_allocvec(&Tables { bucket_lens, block_lens, frequent: frequent_grams })
            .expect("tables serialise");

        let mut files = Vec::new();
        let mut store = |kind: &str, bytes: Vec<u8>| -> (String, u64) {
            let name = hashed_name(kind, &bytes);
            let len = bytes.len() as u64;
            files.push(IndexFile { name: name.clone(), bytes });
            (name, len)
        };
        let (tables, tables_len) = store("tables", tables);
        let (dict, _) = store("dict", dict);
        let (bitmaps, _) = store("bitmaps", bitmaps);
        let (passages, _) = store("passages", passages);
        let pages = pages.into_iter().map(|bytes| store("pages", bytes).0).collect();
        BuiltIndex {
            manifest: Manifest {
                version: FORMAT_VERSION,
                n_passages: self.passage_words.len() as u32,
                n_episodes: self.n_episodes,
                max_gram: self.config.max_gram as u32,
                frequent,
                passages_per_block: self.config.passages_per_block,
                tables,
                tables_len,
                dict,
                bitmaps,
                passages,
                pages,
            },
            files,
        }
    }
}

/// A copy of `passages` (a frequent gram's first page) out of their blocks, with their episodes.
fn page_of(blocks: &[Block], passages_per_block: u32, passages: &[u32]) -> Block {
    let mut page = Block::default();
    for &passage in passages {
        let block = &blocks[(passage / passages_per_block) as usize];
        let mut copy = block.passages[(passage % passages_per_block) as usize].clone();
        let episode = &block.episodes[copy.episode as usize];
        copy.episode = page.episode_slot(&episode.episode.id, || episode.clone());
        page.passages.push(copy);
    }
    page
}

/// An entry on its way into a bucket: inline gaps, or a place in the bitmaps file.
struct Encoded {
    key: String,
    count: u32,
    /// A rare entry's passages, or a frequent one's first page.
    inline: Vec<u8>,
    /// A rare gram's [`Mark`] in each of its passages; empty for the others.
    marks: Vec<u8>,
    bitmap: Option<(u64, u32)>,
    /// Where a frequent gram's copy of its first page is: pages file, offset, length (none for a
    /// speaker, written as a length of 0).
    page: Option<(u32, u64, u32)>,
}

/// A gram's passages in order, with its [`Mark`] in each.
#[derive(Default)]
struct Postings {
    passages: Vec<u32>,
    marks: Vec<Mark>,
}

impl Postings {
    /// An occurrence in `passage` (no earlier than the last one added), between words of these bits.
    fn add(&mut self, passage: u32, before: u8, after: u8) {
        if self.passages.last() != Some(&passage) {
            self.passages.push(passage);
            self.marks.push(Mark::default());
        }
        self.marks.last_mut().expect("one mark a passage").add(before, after);
    }
}

/// Gram keys are already well mixed numbers: hashing them again with SipHash, `std`'s default,
/// made the lattice several times slower to build (60 million lookups on the Changelog corpus).
#[derive(Default)]
struct GramHasher(u64);

impl Hasher for GramHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*byte)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = (key ^ (key >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

type GramMap<V> = HashMap<u64, V, BuildHasherDefault<GramHasher>>;

/// A level's frequent grams, numbered in key order: a gram of the next level is known by the numbers
/// of its two grams one word shorter, whatever its length.
#[derive(Default)]
struct Frequent {
    keys: Vec<String>,
    /// Each one's last word, as a vocabulary id.
    last_words: Vec<u32>,
}

impl Frequent {
    fn add(&mut self, key: String, last_word: u32) -> u32 {
        self.keys.push(key);
        self.last_words.push(last_word);
        self.keys.len() as u32 - 1
    }
}

/// No frequent gram starts here.
const NOT_FREQUENT: u32 = u32::MAX;

/// A gram's key: the numbers of its two frequent grams one word shorter.
fn pair_key(prefix: u32, suffix: u32) -> u64 {
    u64::from(prefix) << 32 | u64::from(suffix)
}
