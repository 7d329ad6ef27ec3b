//! Answering from the index: the passages that hold a phrase (`GET /api/search`), and the places
//! a quote may be in the whole corpus, by its verbatim passages or by the votes of its grams.

use std::collections::BTreeMap;

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::format::{
    Block, Entry, Index, Part, Parts, Passages, PhraseError, corrupt, decode_gaps, require, speaker_key,
};
use super::plan::{Dict, Located, Plan, RARE_PER_ROUND, first_keys, locate, plan, rare_grams};
use super::query::{Query, tiles, words_of};
use super::read::{Blocks, Hit, bitmap_part, find_words, hit, listed, passages_of};
use crate::index::Corrupt;
use crate::quotes::quote::normalise;
use crate::quotes::quote::views::fold_name;
use crate::quotes::transcript::{Canonical, Segment, Speaker};

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
/// quote spans few passages unless it is long, and then it may span many short turns. (A fixed eight
/// for every quote would spend a third of attribution's time preparing passages that no quote of the
/// accuracy bench reaches, and cut off a long quote over more than eight turns.)
fn spread(n_words: usize) -> u32 {
    u32::try_from(n_words / 5).unwrap_or(u32::MAX).clamp(NEAR_PASSAGES, FAR_PASSAGES)
}

/// The fewest passages on each side of a place that corpus-wide attribution reads.
const NEAR_PASSAGES: u32 = 3;
/// The most: a quote of [`crate::quotes::quote::MAX_QUOTE_CHARS`] is about 350 words.
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

/// Finds the places a quote (its words, and its pieces: see [`crate::quotes::quote::corpus::split_edits`])
/// may be, reading only the index: the passages that hold it word for word, or else those where
/// most of its rare pairs or grams meet (a changed word, a quote across two speakers), as `reach`
/// says. Each place comes with the passages around it, enough for [`crate::quotes::quote::attribute`] to
/// place the quote on its words. [`crate::quotes::quote::corpus::places`] is how a caller asks.
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
        match chosen.iter_mut().find(|(id, _)| *id == episode.episode.id) {
            Some(_) if kept.is_empty() => {}
            Some((_, earliest)) => *earliest = (*earliest).min(passage),
            None => chosen.push((episode.episode.id.clone(), passage)),
        }
    }
    let mut transcripts: Vec<Canonical> = Vec::new();
    for &(_, passage) in chosen.iter().take(MAX_PLACES) {
        let (block, entry) = blocks.get(index, passage)?;
        let episode =
            block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(&index.manifest.passages))?;
        let mut canonical = Canonical {
            episode: episode.episode.clone(),
            pipeline: episode.pipeline.clone(),
            kind: episode.kind,
            speakers: BTreeMap::new(),
            segments: Vec::new(),
        };
        for near in around(passage) {
            let (block, entry) = blocks.get(index, near)?;
            if block.episodes.get(entry.episode as usize).is_none_or(|e| e.episode.id != episode.episode.id) {
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

/// The passages where most of a quote's rare grams are, best first: one gram of
/// [`super::Config::max_gram`] words every `max_gram` words of each piece votes for the passages of
/// the rarest entry inside it. Frequent grams say too little to vote; no passage text is read.
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

/// The episodes the Worker took in since the last build, as a small phrase index of their own held in
/// memory: searched and asked as the built index is, and its answers joined to the built one's, so a
/// search or a quote finds an episode from the moment it is ready. The build's own index takes over
/// when a build publishes them.
pub struct Overlay {
    index: Index,
    files: std::collections::HashMap<String, Vec<u8>>,
}

impl Overlay {
    /// The overlay of `episodes`; `None` for none.
    pub fn of(episodes: &[Canonical]) -> Result<Option<Overlay>, super::IndexFull> {
        if episodes.is_empty() {
            return Ok(None);
        }
        let mut builder = super::IndexBuilder::default();
        for episode in episodes {
            builder.add_episode(episode)?;
        }
        let built = builder.finish();
        let files: std::collections::HashMap<String, Vec<u8>> =
            built.files.into_iter().map(|file| (file.name, file.bytes)).collect();
        let tables = super::WholeFiles(&files)
            .part(&Index::tables_part(&built.manifest))
            .ok_or_else(|| super::IndexFull("the overlay has no tables".into()))?
            .to_vec();
        let index = Index::open(built.manifest, &tables).map_err(|err| super::IndexFull(err.0))?;
        Ok(Some(Overlay { index, files }))
    }

    /// What the overlay asks of a search or a quote: everything is in memory, so nothing is needed.
    fn answered<T>(result: Result<T, PhraseError>) -> Result<T, Corrupt> {
        result.map_err(|err| match err {
            PhraseError::Corrupt(corrupt) => corrupt,
            PhraseError::Need(_) => Corrupt("the overlay's index lacks a part".into()),
        })
    }

    /// `built`, the built index's answer to `query`, with the overlay's hits after the built ones: the
    /// results are the built index's passages, then the overlay's, paged as one list.
    pub fn search(&self, built: Answer, query: &Query) -> Result<Answer, Corrupt> {
        let parts = super::WholeFiles(&self.files);
        let built_total = built.total as usize;
        let shown = built.hits.len();
        let last_built_page = query.page.offset + shown >= built_total;
        let room = if last_built_page { query.page.limit.saturating_sub(shown) } else { 0 };
        let asked = Query {
            q: query.q.clone(),
            speaker: query.speaker.clone(),
            page: crate::quotes::quote::views::Page {
                offset: query.page.offset.saturating_sub(built_total),
                limit: room.max(1),
            },
        };
        let more = Overlay::answered(search(&self.index, &asked, &parts))?;
        let total = built_total + more.total as usize;
        let mut hits = built.hits;
        if room > 0 {
            hits.extend(more.hits);
        }
        // A page also stops at the byte budget; the cursor goes on from where it stopped.
        crate::paging::cut(&mut hits, crate::paging::PAGE_BYTES);
        let next_cursor = query.page.next_cursor(hits.len(), total);
        Ok(Answer { q: built.q, speaker: built.speaker, hits, total: total as u64, next_cursor })
    }

    /// The places of a quote in the overlay, found as [`places`] finds them in the built index.
    pub fn places(&self, quote: &[String], pieces: &[Vec<String>], reach: Reach) -> Result<Places, Corrupt> {
        Overlay::answered(places(&self.index, quote, pieces, reach, &super::WholeFiles(&self.files)))
    }
}

impl Places {
    /// These places and `more` (the overlay's) as one: their passages, and their verbatim places
    /// counted together, so a quote said in a built episode and in one taken in since is said twice.
    pub fn join(mut self, more: Places) -> Places {
        let verbatim_total = self.verbatim_total + more.verbatim_total;
        self.unsure = (self.unsure || more.unsure) && verbatim_total == 0;
        self.verbatim_total = verbatim_total;
        self.transcripts.extend(more.transcripts);
        self.verbatim.extend(more.verbatim);
        self
    }
}
