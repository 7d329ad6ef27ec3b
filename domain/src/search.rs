//! The static recipe search index: how the builder writes it and how a query reads it.
//!
//! The index is a set of immutable files with content-hashed names plus one `manifest.json`. A query
//! touches only the files it needs, so the Worker loads a few dozen KiB even for 100,000 recipes:
//! - dictionary shards, one per term prefix (a shard that grows past [`SHARD_TARGET_BYTES`] splits by a
//!   longer prefix, up to two letters), each a sorted term list with the postings of rare terms inline
//!   (document gaps and a field code per document: a few bytes each);
//! - postings of common terms in files of their own, named by term and content: three disjoint
//!   roaring bitmaps, the recipes with the term in a title, else in an ingredient name, else elsewhere;
//! - facet bitmaps: one per diet flag, per course, and per "total time ≤ T" for each T that occurs;
//! - card shards of [`CARDS_PER_SHARD`] recipes, for the result page.
//!
//! [`search`] is pure: it answers, or names the files it still needs ([`Need`]); the caller fetches
//! those and calls again. A typo in a query word is tolerated when the word has no exact match, within
//! the word's dictionary shard (so not in its first letter or two).

use std::collections::{BTreeMap, HashMap};

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::recipe::{Course, FLAGS, Lang, Recipe};
use crate::text::{Stemmers, query_words, within_one_edit, words};

pub const FORMAT_VERSION: u32 = 2;
pub const CARDS_PER_SHARD: u32 = 8;
pub const SHARD_TARGET_BYTES: usize = 16 * 1024;
/// Dictionary shards split by at most this many leading letters.
pub const MAX_SHARD_PREFIX: usize = 2;
/// Postings larger than this get a file of their own instead of sitting in the dictionary shard.
pub const INLINE_MAX_BYTES: usize = 64;
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
/// Words shorter than this must match exactly: one edit in a short word is another word.
pub const MIN_TYPO_WORD_CHARS: usize = 4;

/// The entry point of an index: which file holds what. Served at `search/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// What a result shows about a recipe, in every language it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub slug: String,
    pub emoji: String,
    pub course: Course,
    pub difficulty: u8,
    pub prep_min: u32,
    pub cook_min: u32,
    pub servings: u32,
    /// Diet flags as bits in [`FLAGS`] order.
    pub flags: u8,
    pub texts: BTreeMap<Lang, CardText>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardText {
    pub title: String,
    pub summary: String,
}

/// A card as the API answers it: one language chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CardView {
    pub slug: String,
    pub emoji: String,
    pub course: Course,
    pub difficulty: u8,
    pub prep_min: u32,
    pub cook_min: u32,
    pub total_min: u32,
    pub servings: u32,
    pub gf: u8,
    pub vegan: u8,
    pub vegetarian: u8,
    pub dairy_free: u8,
    pub nut_free: u8,
    pub languages: Vec<Lang>,
    pub lang: Lang,
    pub title: String,
    pub summary: String,
    pub url: String,
}

impl Card {
    pub fn from_recipe(slug: &str, recipe: &Recipe) -> Card {
        let flags = FLAGS
            .iter()
            .enumerate()
            .fold(0u8, |bits, (idx, name)| if recipe.flag(name) { bits | (1 << idx) } else { bits });
        Card {
            slug: slug.to_string(),
            emoji: recipe.emoji.clone(),
            course: recipe.course,
            difficulty: recipe.difficulty,
            prep_min: recipe.prep_min,
            cook_min: recipe.cook_min,
            servings: recipe.servings,
            flags,
            texts: recipe
                .texts
                .iter()
                .map(|(lang, text)| {
                    (*lang, CardText { title: text.title.clone(), summary: text.summary.clone() })
                })
                .collect(),
        }
    }

    fn flag(&self, idx: usize) -> u8 {
        (self.flags >> idx) & 1
    }

    /// The card in `lang`, else English, else the first language the recipe has.
    pub fn view(&self, lang: Option<Lang>) -> CardView {
        let (lang, text) = lang
            .and_then(|lang| self.texts.get_key_value(&lang))
            .or_else(|| self.texts.get_key_value(&Lang::En))
            .or_else(|| self.texts.iter().next())
            .expect("a card has at least one text");
        CardView {
            slug: self.slug.clone(),
            emoji: self.emoji.clone(),
            course: self.course,
            difficulty: self.difficulty,
            prep_min: self.prep_min,
            cook_min: self.cook_min,
            total_min: self.prep_min + self.cook_min,
            servings: self.servings,
            gf: self.flag(0),
            vegan: self.flag(1),
            vegetarian: self.flag(2),
            dairy_free: self.flag(3),
            nut_free: self.flag(4),
            languages: self.texts.keys().copied().collect(),
            lang: *lang,
            title: text.title.clone(),
            summary: text.summary.clone(),
            url: format!("/r/{}", self.slug),
        }
    }
}

/// The terms one recipe is indexed under, by field. Kept apart from the index so a builder can cache
/// them and rebuild the index without re-reading unchanged recipes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocTerms {
    pub title: Vec<String>,
    pub ingredients: Vec<String>,
    pub other: Vec<String>,
}

impl DocTerms {
    pub fn of(recipe: &Recipe, stemmers: &Stemmers) -> DocTerms {
        let mut terms = DocTerms::default();
        for (lang, text) in &recipe.texts {
            let add = |out: &mut Vec<String>, s: &str| {
                for word in words(s) {
                    stemmers.index_terms(*lang, &word, out);
                }
            };
            add(&mut terms.title, &text.title);
            for ingredient in &text.ingredients {
                add(&mut terms.ingredients, &ingredient.i);
            }
            add(&mut terms.other, &text.summary);
            add(&mut terms.other, &text.tips);
            for step in &text.steps {
                add(&mut terms.other, &step.t);
            }
        }
        for list in [&mut terms.title, &mut terms.ingredients, &mut terms.other] {
            list.sort_unstable();
            list.dedup();
        }
        terms
    }
}

/// The postings of one term: the documents that have it, and those that have it in a title or in an
/// ingredient name.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct TermPostings {
    any: RoaringBitmap,
    title: RoaringBitmap,
    ingredients: RoaringBitmap,
}

impl TermPostings {
    /// Postings small enough for the dictionary shard: document ids as gaps, and per document whether
    /// the term is in its title (1) or else in an ingredient (2). A few bytes a document, where three
    /// roaring bitmaps need some forty bytes even for one. Ranking asks about ingredients only where
    /// the title did not match, so both encodings keep ingredient matches outside titles only.
    fn compact(&self) -> Vec<u8> {
        let mut gaps = Vec::with_capacity(self.any.len() as usize);
        let mut fields = Vec::with_capacity(self.any.len() as usize);
        let mut last = 0;
        for doc in &self.any {
            gaps.push(doc - last);
            last = doc;
            let (in_title, in_ingredient) = (self.title.contains(doc), self.ingredients.contains(doc));
            fields.push(if in_title { 1 } else { u8::from(in_ingredient) << 1 });
        }
        postcard::to_allocvec(&(gaps, fields)).expect("postings serialise")
    }

    fn from_compact(bytes: &[u8]) -> Option<TermPostings> {
        let (gaps, fields): (Vec<u32>, Vec<u8>) = postcard::from_bytes(bytes).ok()?;
        if gaps.len() != fields.len() {
            return None;
        }
        let mut postings = TermPostings::default();
        let mut doc = 0u32;
        for (gap, field) in gaps.into_iter().zip(fields) {
            doc = doc.checked_add(gap)?;
            postings.any.insert(doc);
            if field & 1 == 1 {
                postings.title.insert(doc);
            }
            if field & 2 == 2 {
                postings.ingredients.insert(doc);
            }
        }
        Some(postings)
    }

    /// A postings file of its own: three disjoint bitmaps (in a title; else in an ingredient; else
    /// elsewhere), about half the bytes of storing "anywhere" beside the other two.
    fn file_bytes(&self) -> Vec<u8> {
        let ingredients = &self.ingredients - &self.title;
        let elsewhere = &(&self.any - &self.title) - &ingredients;
        let (title, ingredients, elsewhere) =
            (bitmap_bytes(&self.title), bitmap_bytes(&ingredients), bitmap_bytes(&elsewhere));
        let bytes = PostingsBytes { title: &title, ingredients: &ingredients, elsewhere: &elsewhere };
        postcard::to_allocvec(&bytes).expect("postings serialise")
    }

    fn from_file(bytes: &[u8]) -> Option<TermPostings> {
        let p: PostingsBytes = postcard::from_bytes(bytes).ok()?;
        let decode = |bytes: &[u8]| RoaringBitmap::deserialize_from(bytes).ok();
        let (title, ingredients, elsewhere) =
            (decode(p.title)?, decode(p.ingredients)?, decode(p.elsewhere)?);
        Some(TermPostings { any: &(&title | &ingredients) | &elsewhere, title, ingredients })
    }

    fn remove(&mut self, doc: u32) {
        self.any.remove(doc);
        self.title.remove(doc);
        self.ingredients.remove(doc);
    }
}

/// A postings file: three disjoint portable roaring bitmaps.
#[derive(Debug, Serialize, Deserialize)]
struct PostingsBytes<'a> {
    #[serde(borrow)]
    title: &'a [u8],
    ingredients: &'a [u8],
    elsewhere: &'a [u8],
}

#[derive(Debug, Serialize, Deserialize)]
enum Entry<'a> {
    /// [`TermPostings::compact`] bytes.
    #[serde(borrow)]
    Inline(&'a [u8]),
    File(&'a str),
}

/// A dictionary shard: sorted terms and, for each, its document frequency and postings.
#[derive(Debug, Serialize, Deserialize)]
struct Shard<'a> {
    #[serde(borrow)]
    terms: Vec<&'a str>,
    entries: Vec<(u32, Entry<'a>)>,
}

/// One file of a built index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A built index: its manifest, its files (named relative to the index folder), and facet counts.
#[derive(Debug)]
pub struct BuiltIndex {
    pub manifest: Manifest,
    pub files: Vec<IndexFile>,
    pub facet_counts: BTreeMap<String, u64>,
}

/// What one recipe adds to the facet bitmaps; a builder keeps these between builds so a rebuild can
/// redo the facets without the recipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocFacets {
    /// Diet flags as bits in [`FLAGS`] order.
    pub flags: u8,
    pub course: Course,
    /// Languages as bits in [`Lang::ALL`] order.
    pub langs: u8,
    pub total_min: u32,
}

impl Card {
    pub fn facets(&self) -> DocFacets {
        let langs = Lang::ALL.iter().enumerate().fold(0u8, |bits, (idx, lang)| {
            if self.texts.contains_key(lang) { bits | (1 << idx) } else { bits }
        });
        DocFacets { flags: self.flags, course: self.course, langs, total_min: self.prep_min + self.cook_min }
    }
}

/// The facet part of an index, computed from every document's [`DocFacets`].
struct FacetIndex {
    facets: BTreeMap<String, String>,
    max_total: Vec<(u32, String)>,
    files: Vec<IndexFile>,
    counts: BTreeMap<String, u64>,
}

fn facet_index(docs: &[DocFacets]) -> FacetIndex {
    let mut bitmaps: BTreeMap<String, RoaringBitmap> = BTreeMap::new();
    let mut totals: BTreeMap<u32, RoaringBitmap> = BTreeMap::new();
    for (doc, facets) in docs.iter().enumerate() {
        let doc = doc as u32;
        for (idx, flag) in FLAGS.iter().enumerate() {
            if (facets.flags >> idx) & 1 == 1 {
                bitmaps.entry(flag.to_string()).or_default().insert(doc);
            }
        }
        bitmaps.entry(format!("course:{}", facets.course.code())).or_default().insert(doc);
        for (idx, lang) in Lang::ALL.iter().enumerate() {
            if (facets.langs >> idx) & 1 == 1 {
                bitmaps.entry(format!("lang:{}", lang.code())).or_default().insert(doc);
            }
        }
        totals.entry(facets.total_min).or_default().insert(doc);
    }
    let mut index = FacetIndex {
        facets: BTreeMap::new(),
        max_total: Vec::new(),
        files: Vec::new(),
        counts: BTreeMap::new(),
    };
    let mut store = |kind: &str, bitmap: &RoaringBitmap| -> String {
        let bytes = bitmap_bytes(bitmap);
        let name = hashed_name(kind, &bytes);
        index.files.push(IndexFile { name: name.clone(), bytes });
        name
    };
    let mut facets = BTreeMap::new();
    for (name, bitmap) in &bitmaps {
        facets.insert(name.clone(), store("facet", bitmap));
    }
    let mut max_total = Vec::new();
    let mut cumulative = RoaringBitmap::new();
    for (total, bitmap) in &totals {
        cumulative |= bitmap;
        max_total.push((*total, store("time", &cumulative)));
    }
    index.facets = facets;
    index.max_total = max_total;
    index.counts = bitmaps.iter().map(|(name, bitmap)| (name.clone(), bitmap.len())).collect();
    index
}

/// A term's postings as its dictionary entry holds them.
#[derive(Debug, Clone, PartialEq)]
enum Stored {
    Inline(Vec<u8>),
    File(String),
}

/// One dictionary entry on its way into a shard.
#[derive(Debug, Clone, PartialEq)]
struct DictEntry {
    term: String,
    df: u32,
    stored: Stored,
}

impl DictEntry {
    /// The entry of `term`, and the postings file it needs when its postings are too big to inline.
    /// A postings file is named by the term and its contents, so no two terms share one and a rebuild
    /// can drop a term's old file without asking who else uses it.
    fn new(term: String, postings: &TermPostings) -> (DictEntry, Option<IndexFile>) {
        let df = postings.any.len() as u32;
        let compact = postings.compact();
        if compact.len() <= INLINE_MAX_BYTES {
            return (DictEntry { term, df, stored: Stored::Inline(compact) }, None);
        }
        let bytes = postings.file_bytes();
        let mut named = Vec::with_capacity(term.len() + 1 + bytes.len());
        named.extend_from_slice(term.as_bytes());
        named.push(0);
        named.extend_from_slice(&bytes);
        let name = hashed_name("post", &named);
        (DictEntry { term, df, stored: Stored::File(name.clone()) }, Some(IndexFile { name, bytes }))
    }

    /// What the entry adds to its shard, for deciding where shards split.
    fn size(&self) -> usize {
        self.term.len()
            + match &self.stored {
                Stored::Inline(bytes) => bytes.len(),
                Stored::File(name) => name.len(),
            }
    }
}

/// Groups sorted dictionary entries into shards by prefix: a prefix whose entries pass
/// [`SHARD_TARGET_BYTES`] splits by one more letter, up to [`MAX_SHARD_PREFIX`] letters, so a typo from
/// the third letter on stays inside the word's shard. Returns each shard's prefix and bytes, sorted.
fn layout(entries: &[DictEntry]) -> BTreeMap<String, Vec<u8>> {
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

fn shard_bytes(entries: &[DictEntry], members: &[usize]) -> Vec<u8> {
    let shard = Shard {
        terms: members.iter().map(|&i| entries[i].term.as_str()).collect(),
        entries: members
            .iter()
            .map(|&i| {
                let entry = match &entries[i].stored {
                    Stored::Inline(bytes) => Entry::Inline(bytes),
                    Stored::File(name) => Entry::File(name),
                };
                (entries[i].df, entry)
            })
            .collect(),
    };
    postcard::to_allocvec(&shard).expect("shard serialises")
}

/// The entries of a shard file, owned.
fn shard_entries(bytes: &[u8]) -> Option<Vec<DictEntry>> {
    let shard: Shard = postcard::from_bytes(bytes).ok()?;
    if shard.terms.len() != shard.entries.len() {
        return None;
    }
    Some(
        shard
            .terms
            .into_iter()
            .zip(shard.entries)
            .map(|(term, (df, entry))| DictEntry {
                term: term.to_string(),
                df,
                stored: match entry {
                    Entry::Inline(bytes) => Stored::Inline(bytes.to_vec()),
                    Entry::File(name) => Stored::File(name.to_string()),
                },
            })
            .collect(),
    )
}

/// Files of an index apart from the facets: the manifest's shards, dictionary and card files.
fn assemble(
    shards: BTreeMap<String, Vec<u8>>,
    facets: FacetIndex,
    n_docs: u32,
) -> (Manifest, Vec<IndexFile>) {
    let manifest = Manifest {
        version: FORMAT_VERSION,
        n_docs,
        shards: shards.keys().cloned().collect(),
        facets: facets.facets,
        max_total: facets.max_total,
    };
    let mut files = facets.files;
    for (idx, bytes) in shards.into_values().enumerate() {
        files.push(IndexFile { name: manifest.shard_file(idx), bytes });
    }
    (manifest, files)
}

/// Collects recipes in document-id order and writes the index files.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    /// Term → its id: its position in `vocabulary`.
    term_ids: HashMap<String, u32>,
    vocabulary: Vec<String>,
    /// `(term id, document)` packed into one `u64`, for title, ingredient and other terms. Inverted
    /// only in `finish`, by sorting: appending to one bitmap per term as documents arrive jumps
    /// around memory and cost seconds at 100,000 recipes.
    pairs: [Vec<u64>; 3],
    cards: Vec<Card>,
}

impl IndexBuilder {
    /// Adds the next recipe; its document id is the number of recipes added before it.
    pub fn add(&mut self, card: Card, terms: &DocTerms) {
        let doc = self.cards.len() as u32;
        for (field, list) in [&terms.title, &terms.ingredients, &terms.other].into_iter().enumerate() {
            for term in list {
                let id = self.intern(term);
                self.pairs[field].push((u64::from(id) << 32) | u64::from(doc));
            }
        }
        self.cards.push(card);
    }

    fn intern(&mut self, term: &str) -> u32 {
        if let Some(id) = self.term_ids.get(term) {
            return *id;
        }
        let id = self.vocabulary.len() as u32;
        self.term_ids.insert(term.to_string(), id);
        self.vocabulary.push(term.to_string());
        id
    }

    pub fn finish(self) -> BuiltIndex {
        let doc_facets: Vec<DocFacets> = self.cards.iter().map(Card::facets).collect();
        let facets = facet_index(&doc_facets);
        let facet_counts = facets.counts.clone();

        // Terms sorted, postings encoded once; then grouped into shards by prefix.
        let postings = invert(self.pairs, self.vocabulary.len());
        let mut sorted: Vec<(String, TermPostings)> = self
            .vocabulary
            .into_iter()
            .zip(postings)
            .filter(|(_, postings)| !postings.any.is_empty())
            .collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut postings_files = Vec::new();
        let entries: Vec<DictEntry> = sorted
            .into_iter()
            .map(|(term, postings)| {
                let (entry, file) = DictEntry::new(term, &postings);
                postings_files.extend(file);
                entry
            })
            .collect();
        let (manifest, mut files) = assemble(layout(&entries), facets, self.cards.len() as u32);
        files.extend(postings_files);
        for (n, chunk) in self.cards.chunks(CARDS_PER_SHARD as usize).enumerate() {
            let bytes = postcard::to_allocvec(chunk).expect("cards serialise");
            files.push(IndexFile { name: manifest.card_file(n as u32 * CARDS_PER_SHARD), bytes });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        files.dedup_by(|a, b| a.name == b.name);
        BuiltIndex { manifest, files, facet_counts }
    }
}

/// Turns `(term, document)` pairs into one set of postings per term.
fn invert(pairs: [Vec<u64>; 3], n_terms: usize) -> Vec<TermPostings> {
    let mut postings: Vec<TermPostings> = (0..n_terms).map(|_| TermPostings::default()).collect();
    let mut all = Vec::with_capacity(pairs.iter().map(Vec::len).sum());
    for (field, mut list) in pairs.into_iter().enumerate() {
        radix_sort(&mut list);
        all.extend_from_slice(&list);
        for (term, docs) in runs(&list) {
            let bitmap = RoaringBitmap::from_sorted_iter(docs).expect("sorted, distinct documents");
            match field {
                0 => postings[term].title = bitmap,
                1 => postings[term].ingredients = bitmap,
                _ => {}
            }
        }
    }
    radix_sort(&mut all);
    all.dedup();
    for (term, docs) in runs(&all) {
        postings[term].any = RoaringBitmap::from_sorted_iter(docs).expect("sorted, distinct documents");
    }
    postings
}

/// Consecutive pairs of one term: `(term, its documents)`.
fn runs(sorted: &[u64]) -> impl Iterator<Item = (usize, impl Iterator<Item = u32> + '_)> + '_ {
    sorted
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .map(|run| ((run[0] >> 32) as usize, run.iter().map(|p| *p as u32)))
}

/// LSD radix sort, 16 bits a pass, over the bits the largest key uses.
fn radix_sort(keys: &mut Vec<u64>) {
    let Some(max) = keys.iter().max() else { return };
    let bits = 64 - max.leading_zeros();
    let mut scratch = vec![0u64; keys.len()];
    let mut shift = 0;
    while shift < bits {
        let mut counts = vec![0usize; 1 << 16];
        for key in keys.iter() {
            counts[((key >> shift) & 0xFFFF) as usize] += 1;
        }
        let mut total = 0;
        for count in counts.iter_mut() {
            let n = *count;
            *count = total;
            total += n;
        }
        for key in keys.iter() {
            let digit = ((key >> shift) & 0xFFFF) as usize;
            scratch[counts[digit]] = *key;
            counts[digit] += 1;
        }
        std::mem::swap(keys, &mut scratch);
        shift += 16;
    }
}

pub(crate) fn group_by_prefix(
    entries: &[(String, u32, Vec<u8>)],
    members: &[usize],
    prefix_len: usize,
) -> Vec<(String, Vec<usize>)> {
    groups_by_prefix(|i| &entries[i].0, members, prefix_len)
}

/// Consecutive members whose terms share their first `prefix_len` letters, with that prefix.
fn groups_by_prefix<'t>(
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

pub(crate) fn bitmap_bytes(bitmap: &RoaringBitmap) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(bitmap.serialized_size());
    bitmap.serialize_into(&mut bytes).expect("writing to a Vec cannot fail");
    bytes
}

pub(crate) fn hashed_name(kind: &str, bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{kind}-{hex}.bin")
}

/// Filters of a recipe search; all must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// Diet flags that must be set, from [`FLAGS`].
    pub flags: Vec<&'static str>,
    pub course: Option<Course>,
    pub max_min: Option<u32>,
    /// Document ids left out: the built versions of recipes the API has changed since the build.
    pub exclude: Vec<u32>,
}

/// A parsed recipe search.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub q: String,
    pub filters: Filters,
    pub lang: Option<Lang>,
    pub offset: usize,
    pub limit: usize,
}

/// What [`search`] needs before it can answer: files to load, by name relative to the index folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need(pub Vec<String>);

/// A search's answer: the cards of one page and the total number of matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub total: u64,
    pub cards: Vec<Card>,
    /// Each card's rank score, higher first; [`overlay::merge`] merges two result lists by it.
    pub scores: Vec<f64>,
    pub next_offset: Option<usize>,
}

/// Where [`search`] finds index files.
pub trait Files {
    fn get(&self, name: &str) -> Option<&[u8]>;
}

impl Files for HashMap<String, Vec<u8>> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        HashMap::get(self, name).map(Vec::as_slice)
    }
}

/// A corrupt index file is a build defect, not a user error; the caller reports it as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt(pub String);

#[derive(Debug)]
pub enum SearchError {
    Need(Need),
    Corrupt(Corrupt),
}

impl From<Need> for SearchError {
    fn from(need: Need) -> Self {
        SearchError::Need(need)
    }
}

impl From<Corrupt> for SearchError {
    fn from(corrupt: Corrupt) -> Self {
        SearchError::Corrupt(corrupt)
    }
}

/// One query word and the index terms it matched.
struct Matched {
    exact: Vec<(u32, PostingsSource)>,
    /// Terms one edit away: a typo in the query, or in the recipe.
    close: Vec<(u32, PostingsSource)>,
}

enum PostingsSource {
    Inline(Vec<u8>),
    File(String),
}

/// Runs a query against the index, or says which files it still needs.
pub fn search(
    manifest: &Manifest,
    query: &Query,
    stemmers: &Stemmers,
    files: &impl Files,
) -> Result<Outcome, SearchError> {
    let words = query_words(&query.q);
    let variants: Vec<Vec<String>> = words.iter().map(|word| stemmers.query_variants(word)).collect();

    // Round one: dictionary shards and facet bitmaps.
    let mut need = Vec::new();
    for variant in variants.iter().flatten() {
        if let Some(file) = shard_for(manifest, variant) {
            need.push(file);
        }
    }
    let facet_files = facet_files(manifest, &query.filters);
    need.extend(facet_files.iter().flatten().cloned());
    require(files, need)?;

    let mut matched = Vec::with_capacity(words.len());
    for (word, variants) in words.iter().zip(&variants) {
        matched.push(match_word(manifest, files, word, variants)?);
    }

    // Round two: postings that live in files of their own.
    let external: Vec<String> = matched
        .iter()
        .flat_map(|m| m.exact.iter().chain(&m.close))
        .filter_map(|(_, source)| match source {
            PostingsSource::File(name) => Some(name.clone()),
            PostingsSource::Inline(_) => None,
        })
        .collect();
    require(files, external)?;

    let mut candidates = RoaringBitmap::new();
    candidates.insert_range(0..manifest.n_docs);
    for doc in &query.filters.exclude {
        candidates.remove(*doc);
    }
    for file in &facet_files {
        match file {
            Some(file) => candidates &= read_bitmap(files, file)?,
            None => candidates.clear(),
        }
    }
    let mut per_word = Vec::with_capacity(matched.len());
    for word in &matched {
        // [any match, exact in a title, exact in an ingredient, exact anywhere]
        let mut union =
            [RoaringBitmap::new(), RoaringBitmap::new(), RoaringBitmap::new(), RoaringBitmap::new()];
        for (_, source) in &word.exact {
            let [any, title, ingredients] = load_postings(files, source)?;
            union[1] |= title;
            union[2] |= ingredients;
            union[3] |= any;
        }
        union[0] = union[3].clone();
        for (_, source) in &word.close {
            let [any, _, _] = load_postings(files, source)?;
            union[0] |= any;
        }
        candidates &= &union[0];
        let df = union[0].len().max(1) as f64;
        let weight = (1.0 + f64::from(manifest.n_docs) / df).ln();
        per_word.push((weight, union));
    }
    let total = candidates.len();

    // Rank: each word adds its weight, tripled for a title match and doubled for an ingredient.
    let mut groups = Vec::new();
    partition(candidates, &per_word, 0.0, &mut groups);
    groups.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut merged: Vec<(f64, RoaringBitmap)> = Vec::new();
    for (score, bitmap) in groups {
        match merged.last_mut() {
            Some((last, union)) if (*last - score).abs() < 1e-9 => *union |= bitmap,
            _ => merged.push((score, bitmap)),
        }
    }
    let ranked: Vec<(u32, f64)> = merged
        .iter()
        .flat_map(|(score, bitmap)| bitmap.iter().map(move |doc| (doc, *score)))
        .skip(query.offset)
        .take(query.limit)
        .collect();
    let page: Vec<u32> = ranked.iter().map(|(doc, _)| *doc).collect();
    let scores: Vec<f64> = ranked.iter().map(|(_, score)| *score).collect();

    // Round three: the cards of this page.
    let card_files: Vec<String> = page.iter().map(|doc| manifest.card_file(*doc)).collect();
    require(files, card_files)?;
    let mut cards = Vec::with_capacity(page.len());
    for doc in &page {
        let file = &manifest.card_file(*doc);
        let shard: Vec<Card> =
            postcard::from_bytes(files.get(file).expect("required above")).map_err(|_| corrupt(file))?;
        let card = shard.into_iter().nth((doc % CARDS_PER_SHARD) as usize).ok_or_else(|| corrupt(file))?;
        cards.push(card);
    }
    let end = query.offset + page.len();
    let next_offset = (page.len() == query.limit && (end as u64) < total).then_some(end);
    Ok(Outcome { total, cards, scores, next_offset })
}

/// Splits `docs` by how each word matched them: in a title (×3), an ingredient (×2), elsewhere (×1),
/// or only through a term one edit away (×½).
fn partition(
    docs: RoaringBitmap,
    per_word: &[(f64, [RoaringBitmap; 4])],
    score: f64,
    out: &mut Vec<(f64, RoaringBitmap)>,
) {
    if docs.is_empty() {
        return;
    }
    let Some(((weight, [_, title, ingredients, exact]), rest)) = per_word.split_first() else {
        out.push((score, docs));
        return;
    };
    let in_title = &docs & title;
    let not_title = docs - &in_title;
    let in_ingredients = &not_title & ingredients;
    let rest_docs = not_title - &in_ingredients;
    let elsewhere = &rest_docs & exact;
    let close_only = rest_docs - &elsewhere;
    partition(in_title, rest, score + weight * 3.0, out);
    partition(in_ingredients, rest, score + weight * 2.0, out);
    partition(elsewhere, rest, score + weight, out);
    partition(close_only, rest, score + weight * 0.5, out);
}

pub(crate) fn require(files: &impl Files, names: impl IntoIterator<Item = String>) -> Result<(), Need> {
    let mut missing: Vec<String> = names.into_iter().filter(|name| files.get(name).is_none()).collect();
    missing.sort();
    missing.dedup();
    if missing.is_empty() { Ok(()) } else { Err(Need(missing)) }
}

fn corrupt(file: &str) -> Corrupt {
    Corrupt(format!("index file {file} does not decode"))
}

/// The dictionary shard a term lives in: the one of its longest listed prefix.
fn shard_for(manifest: &Manifest, term: &str) -> Option<String> {
    let ends: Vec<usize> = term.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
    ends.iter()
        .rev()
        .find_map(|&end| manifest.shards.binary_search_by(|prefix| prefix.as_str().cmp(&term[..end])).ok())
        .map(|idx| manifest.shard_file(idx))
}

/// The facet file for each filter; `None` where the filter matches nothing (no such file).
fn facet_files(manifest: &Manifest, filters: &Filters) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> =
        filters.flags.iter().map(|flag| manifest.facets.get(*flag).cloned()).collect();
    if let Some(course) = filters.course {
        out.push(manifest.facets.get(&format!("course:{}", course.code())).cloned());
    }
    if let Some(max_min) = filters.max_min {
        let idx = manifest.max_total.partition_point(|(total, _)| *total <= max_min);
        out.push(idx.checked_sub(1).map(|idx| manifest.max_total[idx].1.clone()));
    }
    out
}

fn match_word(
    manifest: &Manifest,
    files: &impl Files,
    word: &str,
    variants: &[String],
) -> Result<Matched, Corrupt> {
    let mut exact = Vec::new();
    let mut shards_seen: Vec<String> = Vec::new();
    for variant in variants {
        let Some(file) = shard_for(manifest, variant) else { continue };
        let shard = read_shard(files, &file)?;
        if let Ok(idx) = shard.terms.binary_search(&variant.as_str()) {
            exact.push(own_postings(&shard.entries[idx]));
        }
        if !shards_seen.contains(&file) {
            shards_seen.push(file);
        }
    }
    // A short word that matched is what the person meant; a longer one may be a typo that happens to
    // spell another word, so its neighbours one edit away count too, ranked below exact matches.
    let n_chars = word.chars().count();
    let look_close =
        if exact.is_empty() { n_chars >= MIN_TYPO_WORD_CHARS } else { n_chars > MIN_TYPO_WORD_CHARS };
    let mut close = Vec::new();
    if !look_close || word.chars().all(|c| c.is_numeric()) {
        return Ok(Matched { exact, close });
    }
    for file in shards_seen {
        let shard = read_shard(files, &file)?;
        for (idx, term) in shard.terms.iter().enumerate() {
            let is_close = variants.iter().all(|variant| variant != term)
                && variants
                    .iter()
                    .any(|variant| variant.len().abs_diff(term.len()) <= 2 && within_one_edit(variant, term));
            if is_close {
                close.push(own_postings(&shard.entries[idx]));
            }
        }
    }
    Ok(Matched { exact, close })
}

fn read_shard<'f>(files: &'f impl Files, file: &str) -> Result<Shard<'f>, Corrupt> {
    let bytes = files.get(file).ok_or_else(|| corrupt(file))?;
    postcard::from_bytes(bytes).map_err(|_| corrupt(file))
}

fn own_postings((df, entry): &(u32, Entry<'_>)) -> (u32, PostingsSource) {
    let source = match entry {
        Entry::Inline(bytes) => PostingsSource::Inline(bytes.to_vec()),
        Entry::File(name) => PostingsSource::File(name.to_string()),
    };
    (*df, source)
}

fn load_postings(files: &impl Files, source: &PostingsSource) -> Result<[RoaringBitmap; 3], Corrupt> {
    let postings = match source {
        PostingsSource::Inline(bytes) => {
            TermPostings::from_compact(bytes).ok_or_else(|| corrupt("inline postings"))?
        }
        PostingsSource::File(name) => {
            let bytes = files.get(name).ok_or_else(|| corrupt(name))?;
            TermPostings::from_file(bytes).ok_or_else(|| corrupt(name))?
        }
    };
    Ok([postings.any, postings.title, postings.ingredients])
}

pub(crate) fn read_bitmap(files: &impl Files, file: &str) -> Result<RoaringBitmap, Corrupt> {
    let bytes = files.get(file).ok_or_else(|| corrupt(file))?;
    RoaringBitmap::deserialize_from(bytes).map_err(|_| corrupt(file))
}

/// An opaque paging cursor: the offset of the next page, so pages stay stable for one index.
pub fn encode_cursor(offset: usize) -> String {
    data_encoding::BASE64URL_NOPAD.encode(format!("o{offset}").as_bytes())
}

pub fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = data_encoding::BASE64URL_NOPAD.decode(cursor.as_bytes()).ok()?;
    std::str::from_utf8(&bytes).ok()?.strip_prefix('o')?.parse().ok()
}

pub mod overlay;
mod patch;
pub use patch::{Changed, Patched, patch};

#[cfg(test)]
mod tests;
