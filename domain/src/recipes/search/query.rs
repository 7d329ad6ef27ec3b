//! A search: the dictionary shards and facet bitmaps its words and filters name, then the postings
//! files, then the cards of the page; each round answers or names the files it still needs.

use roaring::RoaringBitmap;

use super::cards::Card;
use super::codec::{Entry, Shard, TermPostings};
use super::facets::{Filters, facet_files};
use super::files::{CARDS_PER_SHARD, Manifest};
use crate::index::{Corrupt, Files, SearchError, corrupt, read_bitmap, require};
use crate::recipes::recipe::Lang;
use crate::text::{Stemmers, query_words, within_one_edit};

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
/// Words shorter than this must match exactly: one edit in a short word is another word.
pub const MIN_TYPO_WORD_CHARS: usize = 4;

/// A parsed recipe search.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub q: String,
    pub filters: Filters,
    pub lang: Option<Lang>,
    pub offset: usize,
    pub limit: usize,
}

/// A search's answer: the cards of one page and the total number of matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub total: u64,
    pub cards: Vec<Card>,
    /// Each card's rank score, higher first; the overlay search merges two result lists by it.
    pub scores: Vec<f64>,
    pub next_offset: Option<usize>,
}

/// One query word and the index terms it matched.
pub(super) struct Matched {
    exact: Vec<(u32, PostingsSource)>,
    /// Terms one edit away: a typo in the query, or in the recipe.
    close: Vec<(u32, PostingsSource)>,
}

pub(super) enum PostingsSource {
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
pub(super) fn partition(
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

/// The dictionary shard a term lives in: the one of its longest listed prefix.
pub(super) fn shard_for(manifest: &Manifest, term: &str) -> Option<String> {
    let ends: Vec<usize> = term.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
    ends.iter()
        .rev()
        .find_map(|&end| manifest.shards.binary_search_by(|prefix| prefix.as_str().cmp(&term[..end])).ok())
        .map(|idx| manifest.shard_file(idx))
}

pub(super) fn match_word(
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

pub(super) fn read_shard<'f>(files: &'f impl Files, file: &str) -> Result<Shard<'f>, Corrupt> {
    let bytes = files.get(file).ok_or_else(|| corrupt(file))?;
    postcard::from_bytes(bytes).map_err(|_| corrupt(file))
}

pub(super) fn own_postings((df, entry): &(u32, Entry<'_>)) -> (u32, PostingsSource) {
    let source = match entry {
        Entry::Inline(bytes) => PostingsSource::Inline(bytes.to_vec()),
        Entry::File(name) => PostingsSource::File(name.to_string()),
    };
    (*df, source)
}

pub(super) fn load_postings(
    files: &impl Files,
    source: &PostingsSource,
) -> Result<[RoaringBitmap; 3], Corrupt> {
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
