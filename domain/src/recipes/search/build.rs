//! Building an index: the terms of each recipe, collected in document-id order and inverted by a
//! radix sort of packed (term, document) pairs.

use std::collections::{BTreeMap, HashMap};

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::cards::Card;
use super::codec::{DictEntry, TermPostings};
use super::facets::{DocFacets, FacetIndex, facet_index};
use super::files::{CARDS_PER_SHARD, FORMAT_VERSION, Manifest, dictionary_files};
use crate::index::IndexFile;
use crate::recipes::recipe::{Lang, Recipe};
use crate::text::{Stemmers, words};

/// The terms one recipe is indexed under, by field. Kept apart from the index so a builder can cache
/// them and rebuild the index without re-reading unchanged recipes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocTerms {
    pub title: Vec<String>,
    pub ingredients: Vec<String>,
    pub other: Vec<String>,
}

impl DocTerms {
    /// The terms of the recipe published at `slug`. A recipe titled only in Hebrew has one Latin
    /// name, its slug (`malabi`), and readers type it: its words are title terms too. A recipe with an
    /// English or Portuguese title is found by that title's own words, so its slug adds nothing.
    pub fn of(slug: &str, recipe: &Recipe, stemmers: &Stemmers) -> DocTerms {
        let mut terms = DocTerms::default();
        if !recipe.texts.contains_key(&Lang::En) && !recipe.texts.contains_key(&Lang::Pt) {
            for word in slug.split('-') {
                stemmers.index_terms(Lang::He, word, &mut terms.title);
            }
        }
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
            crate::sorted::sort(list);
            list.dedup();
        }
        terms
    }
}

/// A built index: its manifest, its files (named relative to the index folder), and facet counts.
#[derive(Debug)]
pub struct BuiltIndex {
    pub manifest: Manifest,
    pub files: Vec<IndexFile>,
    pub facet_counts: BTreeMap<String, u64>,
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
        crate::sorted::sort_by(&mut sorted, |a, b| a.0.cmp(&b.0));
        let mut postings_files = Vec::new();
        let entries: Vec<DictEntry> = sorted
            .into_iter()
            .map(|(term, postings)| {
                let (entry, file) = DictEntry::new(term, &postings);
                postings_files.extend(file);
                entry
            })
            .collect();
        let (manifest, mut files) = assemble(dictionary_files(&entries), facets, self.cards.len() as u32);
        files.extend(postings_files);
        for (n, chunk) in self.cards.chunks(CARDS_PER_SHARD as usize).enumerate() {
            let bytes = postcard::to_allocvec(chunk).expect("cards serialise");
            files.push(IndexFile { name: manifest.card_file(n as u32 * CARDS_PER_SHARD), bytes });
        }
        crate::sorted::sort_by(&mut files, |a, b| a.name.cmp(&b.name));
        files.dedup_by(|a, b| a.name == b.name);
        BuiltIndex { manifest, files, facet_counts }
    }
}

/// Turns `(term, document)` pairs into one set of postings per term.
pub(super) fn invert(pairs: [Vec<u64>; 3], n_terms: usize) -> Vec<TermPostings> {
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
pub(super) fn runs(sorted: &[u64]) -> impl Iterator<Item = (usize, impl Iterator<Item = u32> + '_)> + '_ {
    sorted
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .map(|run| ((run[0] >> 32) as usize, run.iter().map(|p| *p as u32)))
}

/// LSD radix sort, 16 bits a pass, over the bits the largest key uses.
pub(super) fn radix_sort(keys: &mut Vec<u64>) {
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

/// Files of an index apart from the facets: the manifest's shards, dictionary and card files.
pub(super) fn assemble(
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
