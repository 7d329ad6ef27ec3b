//! The phrase search index over every canonical transcript: how the builder writes it and how a query
//! reads it (`GET /api/search`).
//!
//! The unit is a passage: one segment, or a piece of at most [`MAX_PASSAGE_TOKENS`] tokens of a long
//! one. Each normalised token (see [`super::normalise`]) has one roaring bitmap of positions,
//! `passage << POSITION_BITS | token position`, so a phrase is the positions where word `k` sits `k`
//! places after word 0 — checked from the rarest word's bitmap with `contains` on the others. The files
//! are laid out like the recipe index ([`crate::search`]): a manifest, dictionary shards by term prefix
//! with small postings inline and large ones in files of their own, blocks of passages for the hits,
//! and one bitmap of passages per speaker name. [`search`] is pure and names the files it still needs,
//! so the Worker loads only those: for a three-word query on the whole Changelog corpus, three
//! dictionary shards, a few posting files and one or two passage blocks.
//!
//! A phrase that straddles two passages (a speaker change, or the cut in a very long turn) is not
//! found: a phrase is one person's words.

use std::collections::{BTreeMap, HashMap};

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::quote::normalise;
use crate::quote::views::{Page, fold_name};
use crate::search::{
    Corrupt, Files, IndexFile, SearchError, bitmap_bytes, group_by_prefix, hashed_name, require,
};
use crate::transcript::round_ms;
use crate::transcript::{Canonical, EpisodeRef, NameState};

pub const FORMAT_VERSION: u32 = 1;
pub const POSITION_BITS: u32 = 10;
pub const MAX_PASSAGE_TOKENS: usize = 1 << POSITION_BITS;
const POSITION_MASK: u32 = (1 << POSITION_BITS) - 1;
/// 2^22 passages: about four million segments, twice the Changelog corpus's count many times over.
pub const MAX_PASSAGES: u32 = 1 << (32 - POSITION_BITS);
pub const PASSAGES_PER_BLOCK: u32 = 64;
const SHARD_TARGET_BYTES: usize = 32 * 1024;
const INLINE_MAX_BYTES: usize = 512;
pub const MAX_QUERY_CHARS: usize = 200;

/// The entry point of the index, served at `quotes/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Manifest {
    pub version: u32,
    pub n_passages: u32,
    pub n_episodes: u32,
    /// Term prefix → dictionary shard file; a term lives in the shard of its longest listed prefix.
    pub shards: BTreeMap<String, String>,
    /// Passage `p` is in `blocks[p / PASSAGES_PER_BLOCK]`.
    pub blocks: Vec<String>,
    /// The file mapping a folded speaker name to the file of its passages' bitmap.
    pub speakers: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Passage {
    /// Index into the block's `episodes`.
    episode: u32,
    speaker: String,
    name: Option<String>,
    name_state: NameState,
    start_s: f64,
    end_s: f64,
    estimated: bool,
    text: String,
}

/// [`EpisodeRef`] for postcard, which cannot skip absent fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BlockEpisode {
    id: String,
    title: String,
    source_url: String,
    show: String,
    licence: String,
    attribution: Option<String>,
}

impl From<&EpisodeRef> for BlockEpisode {
    fn from(e: &EpisodeRef) -> Self {
        BlockEpisode {
            id: e.id.clone(),
            title: e.title.clone(),
            source_url: e.source_url.clone(),
            show: e.show.clone(),
            licence: e.licence.clone(),
            attribution: e.attribution.clone(),
        }
    }
}

impl From<&BlockEpisode> for EpisodeRef {
    fn from(e: &BlockEpisode) -> Self {
        EpisodeRef {
            id: e.id.clone(),
            title: e.title.clone(),
            source_url: e.source_url.clone(),
            show: e.show.clone(),
            licence: e.licence.clone(),
            attribution: e.attribution.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Block {
    episodes: Vec<BlockEpisode>,
    passages: Vec<Passage>,
}

#[derive(Debug, Serialize, Deserialize)]
enum Entry<'a> {
    Inline(#[serde(borrow)] &'a [u8]),
    File(&'a str),
}

#[derive(Debug, Serialize, Deserialize)]
struct Shard<'a> {
    #[serde(borrow)]
    terms: Vec<&'a str>,
    entries: Vec<(u32, Entry<'a>)>,
}

/// A built index: the manifest and its files (names relative to the index folder).
#[derive(Debug)]
pub struct BuiltIndex {
    pub manifest: Manifest,
    pub files: Vec<IndexFile>,
}

/// Collects canonical transcripts in passage order and writes the index files.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    terms: HashMap<String, RoaringBitmap>,
    speakers: BTreeMap<String, RoaringBitmap>,
    blocks: Vec<Block>,
    n_passages: u32,
    n_episodes: u32,
}

/// The index is full ([`MAX_PASSAGES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyPassages;

impl IndexBuilder {
    pub fn add_episode(&mut self, canonical: &Canonical) -> Result<(), TooManyPassages> {
        self.n_episodes += 1;
        for segment in &canonical.segments {
            let tokens = normalise::tokens(&segment.text);
            if tokens.is_empty() {
                continue;
            }
            let resolved = canonical.speaker(&segment.speaker);
            let n_chars = segment.text.chars().count().max(1) as f64;
            let span = segment.end_s - segment.start_s;
            for chunk in tokens.chunks(MAX_PASSAGE_TOKENS) {
                if self.n_passages >= MAX_PASSAGES {
                    return Err(TooManyPassages);
                }
                let passage_id = self.n_passages;
                self.n_passages += 1;
                let whole = chunk.len() == tokens.len();
                let (from, to) = if whole {
                    (0, segment.text.len())
                } else {
                    (chunk[0].start, chunk[chunk.len() - 1].end)
                };
                let at = |byte: usize| {
                    segment.start_s + span * segment.text[..byte].chars().count() as f64 / n_chars
                };
                for (position, token) in chunk.iter().enumerate() {
                    let key = passage_id << POSITION_BITS | position as u32;
                    match self.terms.get_mut(token.norm.as_str()) {
                        Some(bitmap) => {
                            bitmap.insert(key);
                        }
                        None => {
                            self.terms.entry(token.norm.clone()).or_default().insert(key);
                        }
                    }
                }
                if let Some(name) = &resolved.name {
                    self.speakers.entry(fold_name(name)).or_default().insert(passage_id);
                }
                if passage_id.is_multiple_of(PASSAGES_PER_BLOCK) {
                    self.blocks.push(Block::default());
                }
                let block = self.blocks.last_mut().expect("a block was opened");
                let episode = match block.episodes.iter().position(|e| e.id == canonical.episode.id) {
                    Some(idx) => idx,
                    None => {
                        block.episodes.push((&canonical.episode).into());
                        block.episodes.len() - 1
                    }
                } as u32;
                block.passages.push(Passage {
                    episode,
                    speaker: segment.speaker.clone(),
                    name: resolved.name.clone(),
                    name_state: resolved.name_state,
                    start_s: if whole { segment.start_s } else { at(from) },
                    end_s: if whole { segment.end_s } else { at(to) },
                    estimated: segment.start_estimated || segment.end_estimated || !whole,
                    text: segment.text[from..to].to_string(),
                });
            }
        }
        Ok(())
    }

    pub fn finish(self) -> BuiltIndex {
        let mut files = Vec::new();
        let mut store = |kind: &str, bytes: Vec<u8>| -> String {
            let name = hashed_name(kind, &bytes);
            files.push(IndexFile { name: name.clone(), bytes });
            name
        };
        let blocks: Vec<String> = self
            .blocks
            .iter()
            .map(|block| store("block", postcard::to_allocvec(block).expect("blocks serialise")))
            .collect();
        let speaker_files: BTreeMap<String, String> = self
            .speakers
            .iter()
            .map(|(name, bitmap)| (name.clone(), store("speaker", bitmap_bytes(bitmap))))
            .collect();
        let speakers = store("speakers", postcard::to_allocvec(&speaker_files).expect("map serialises"));

        let mut sorted: Vec<(String, RoaringBitmap)> = self.terms.into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let entries: Vec<(String, u32, Vec<u8>)> = sorted
            .into_iter()
            .map(|(term, bitmap)| {
                let bytes = bitmap_bytes(&bitmap);
                (term, bitmap.len() as u32, bytes)
            })
            .collect();
        let external: Vec<Option<String>> = entries
            .iter()
            .map(|(_, _, bytes)| (bytes.len() > INLINE_MAX_BYTES).then(|| store("post", bytes.clone())))
            .collect();

        let mut shards = BTreeMap::new();
        let mut pending = vec![(1usize, (0..entries.len()).collect::<Vec<usize>>())];
        while let Some((prefix_len, members)) = pending.pop() {
            for (prefix, group) in group_by_prefix(&entries, &members, prefix_len) {
                let size: usize = group
                    .iter()
                    .map(|&i| {
                        entries[i].0.len() + external[i].as_ref().map_or(entries[i].2.len(), String::len)
                    })
                    .sum();
                let can_split = group.iter().any(|&i| entries[i].0.chars().count() > prefix_len);
                if size > SHARD_TARGET_BYTES && can_split && prefix_len < 6 {
                    let (short, long): (Vec<usize>, Vec<usize>) =
                        group.iter().partition(|&&i| entries[i].0.chars().count() <= prefix_len);
                    if !short.is_empty() {
                        shards.insert(prefix.clone(), write_shard(&entries, &external, &short, &mut store));
                    }
                    pending.push((prefix_len + 1, long));
                } else {
                    shards.insert(prefix, write_shard(&entries, &external, &group, &mut store));
                }
            }
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        files.dedup_by(|a, b| a.name == b.name);
        BuiltIndex {
            manifest: Manifest {
                version: FORMAT_VERSION,
                n_passages: self.n_passages,
                n_episodes: self.n_episodes,
                shards,
                blocks,
                speakers,
            },
            files,
        }
    }
}

fn write_shard(
    entries: &[(String, u32, Vec<u8>)],
    external: &[Option<String>],
    members: &[usize],
    store: &mut impl FnMut(&str, Vec<u8>) -> String,
) -> String {
    let shard = Shard {
        terms: members.iter().map(|&i| entries[i].0.as_str()).collect(),
        entries: members
            .iter()
            .map(|&i| {
                let entry = match &external[i] {
                    Some(name) => Entry::File(name),
                    None => Entry::Inline(&entries[i].2),
                };
                (entries[i].1, entry)
            })
            .collect(),
    };
    store("dict", postcard::to_allocvec(&shard).expect("shard serialises"))
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
    let mut query = Query { q: None, speaker: None, page: Page::default() };
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

fn corrupt(file: &str) -> Corrupt {
    Corrupt(format!("quote index file {file} does not decode"))
}

fn shard_for<'m>(manifest: &'m Manifest, term: &str) -> Option<&'m str> {
    let ends: Vec<usize> = term.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
    ends.iter().rev().find_map(|&end| manifest.shards.get(&term[..end])).map(String::as_str)
}

fn decode_bitmap(bytes: &[u8], file: &str) -> Result<RoaringBitmap, Corrupt> {
    RoaringBitmap::deserialize_from(bytes).map_err(|_| corrupt(file))
}

/// Where a term's positions are.
enum Postings {
    Inline(Vec<u8>),
    File(String),
    Absent,
}

/// Runs a search, or names the files it still needs.
pub fn search(manifest: &Manifest, query: &Query, files: &impl Files) -> Result<Answer, SearchError> {
    let words: Vec<String> = query
        .q
        .as_deref()
        .map(|q| normalise::tokens(q).into_iter().map(|t| t.norm).collect())
        .unwrap_or_default();

    // Round one: dictionary shards, and the speaker directory.
    let mut need: Vec<String> =
        words.iter().filter_map(|w| shard_for(manifest, w).map(str::to_string)).collect();
    if query.speaker.is_some() {
        need.push(manifest.speakers.clone());
    }
    require(files, need)?;
    let mut postings = Vec::with_capacity(words.len());
    for word in &words {
        let Some(file) = shard_for(manifest, word) else {
            postings.push(Postings::Absent);
            continue;
        };
        let shard: Shard =
            postcard::from_bytes(files.get(file).expect("required")).map_err(|_| corrupt(file))?;
        postings.push(match shard.terms.binary_search(&word.as_str()) {
            Ok(idx) => match &shard.entries[idx].1 {
                Entry::Inline(bytes) => Postings::Inline(bytes.to_vec()),
                Entry::File(name) => Postings::File(name.to_string()),
            },
            Err(_) => Postings::Absent,
        });
    }
    let speaker_file = match &query.speaker {
        Some(speaker) => {
            let dir: BTreeMap<String, String> =
                postcard::from_bytes(files.get(&manifest.speakers).expect("required"))
                    .map_err(|_| corrupt(&manifest.speakers))?;
            Some(dir.get(&fold_name(speaker)).cloned())
        }
        None => None,
    };

    // Round two: posting files and the speaker's passages.
    let mut need: Vec<String> = postings
        .iter()
        .filter_map(|p| match p {
            Postings::File(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    need.extend(speaker_file.iter().flatten().cloned());
    require(files, need)?;

    let speaker_passages = match &speaker_file {
        None => None,
        Some(None) => Some(RoaringBitmap::new()),
        Some(Some(file)) => Some(decode_bitmap(files.get(file).expect("required"), file)?),
    };
    let mut matches: Vec<(u32, Option<u32>)> = Vec::new();
    if words.is_empty() {
        matches.extend(speaker_passages.iter().flatten().map(|p| (p, None)));
    } else if postings.iter().all(|p| !matches!(p, Postings::Absent)) {
        let mut bitmaps = Vec::with_capacity(postings.len());
        for p in &postings {
            bitmaps.push(match p {
                Postings::Inline(bytes) => decode_bitmap(bytes, "inline")?,
                Postings::File(name) => decode_bitmap(files.get(name).expect("required"), name)?,
                Postings::Absent => unreachable!("checked above"),
            });
        }
        let n = bitmaps.len() as u32;
        let rarest = (0..bitmaps.len()).min_by_key(|&k| bitmaps[k].len()).expect("at least one word") as u32;
        let mut last_passage = None;
        for key in bitmaps[rarest as usize].iter() {
            if key & POSITION_MASK < rarest {
                continue;
            }
            let base = key - rarest;
            let passage = base >> POSITION_BITS;
            if last_passage == Some(passage) || (base & POSITION_MASK) + n - 1 > POSITION_MASK {
                continue;
            }
            if speaker_passages.as_ref().is_some_and(|allowed| !allowed.contains(passage)) {
                continue;
            }
            if (0..n).all(|k| k == rarest || bitmaps[k as usize].contains(base + k)) {
                matches.push((passage, Some(base & POSITION_MASK)));
                last_passage = Some(passage);
            }
        }
    }

    let total = matches.len() as u64;
    let (page, next_cursor) = query.page.slice(&matches);

    // Round three: the passage blocks of this page.
    let block_of = |passage: u32| manifest.blocks.get((passage / PASSAGES_PER_BLOCK) as usize);
    let mut need = Vec::new();
    for (passage, _) in page {
        need.push(block_of(*passage).ok_or_else(|| corrupt("blocks"))?.clone());
    }
    require(files, need)?;
    let mut hits = Vec::with_capacity(page.len());
    let mut decoded: Vec<(String, Block)> = Vec::new();
    for (passage, position) in page {
        let file = block_of(*passage).expect("checked above");
        if !decoded.iter().any(|(name, _)| name == file) {
            let block: Block =
                postcard::from_bytes(files.get(file).expect("required")).map_err(|_| corrupt(file))?;
            decoded.push((file.clone(), block));
        }
        let block = &decoded.iter().find(|(name, _)| name == file).expect("decoded above").1;
        let entry =
            block.passages.get((passage % PASSAGES_PER_BLOCK) as usize).ok_or_else(|| corrupt(file))?;
        let episode = block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(file))?;
        let (start_s, end_s) = match position {
            Some(position) => phrase_times(entry, *position as usize, words.len()),
            None => (entry.start_s, entry.end_s),
        };
        hits.push(Hit {
            episode: episode.into(),
            start_s: round_ms(start_s),
            end_s: round_ms(end_s),
            times_estimated: true,
            speaker: entry.speaker.clone(),
            name: entry.name.clone(),
            name_state: entry.name_state,
            text: entry.text.clone(),
        });
    }
    // A page also stops at the byte budget (`crate::paging`); the cursor then goes on from the cut.
    let next_cursor = if crate::paging::cut(&mut hits, crate::paging::PAGE_BYTES) {
        query.page.next_cursor(hits.len(), matches.len())
    } else {
        next_cursor
    };
    Ok(Answer { q: query.q.clone(), speaker: query.speaker.clone(), hits, total, next_cursor })
}

/// The phrase's times inside its passage, in proportion to character position.
fn phrase_times(passage: &Passage, position: usize, n_words: usize) -> (f64, f64) {
    let tokens = normalise::tokens(&passage.text);
    let (Some(first), Some(last)) = (tokens.get(position), tokens.get(position + n_words.max(1) - 1)) else {
        return (passage.start_s, passage.end_s);
    };
    let n_chars = passage.text.chars().count().max(1) as f64;
    let span = passage.end_s - passage.start_s;
    let at = |byte: usize| passage.start_s + span * passage.text[..byte].chars().count() as f64 / n_chars;
    (at(first.start), at(last.end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{RunKind, Segment, Speaker};
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

    fn index() -> (Manifest, HashMap<String, Vec<u8>>) {
        let mut builder = IndexBuilder::default();
        builder
            .add_episode(&canonical(
                "one",
                &[
                    ("A", 0.0, 10.0, "Open source is a gift, and twenty five people maintain it."),
                    ("B", 10.0, 20.0, "Open the source file. Source is open."),
                ],
            ))
            .unwrap();
        builder
            .add_episode(&canonical(
                "two",
                &[("B", 0.0, 4.0, "I love open source."), ("A", 5.0, 6.0, "Me too.")],
            ))
            .unwrap();
        let built = builder.finish();
        let files = built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
        (built.manifest, files)
    }

    fn check(params: &[(&str, &str)], expect: Expect) {
        let (manifest, files) = index();
        let rendered = match parse_query(params.iter().copied()) {
            Ok(query) => {
                let answer = search(&manifest, &query, &files).unwrap();
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
                two 1.474-3.789 Some("Bea") "I love open source."
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
                two 1.474-3.789 Some("Bea") "I love open source."
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

    #[test]
    fn the_search_names_the_files_it_needs() {
        let (manifest, files) = index();
        let query = parse_query([("q", "open source")]).unwrap();
        let empty: HashMap<String, Vec<u8>> = HashMap::new();
        let Err(SearchError::Need(need)) = search(&manifest, &query, &empty) else { panic!("needs files") };
        assert!(need.0.iter().all(|name| files.contains_key(name)), "{need:?}");
    }
}
