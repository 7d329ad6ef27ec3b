//! Searching the overlay — recipes written through the API since the last build — at a cost that
//! depends on what a query matches, not on how much waits in the overlay.
//!
//! Each live overlay recipe is stored (in D1, by the write that makes it) as an [`Entry`]: its card,
//! its facets and its terms, one row per term with the best field it occurs in. A query is one
//! [`OverlaySearch`]: a step machine that says what it needs read next ([`Need`]), is given it
//! ([`Read`]), and at the end answers the merged page. The caller only reads; every decision is here.
//! For a query with words, the steps are:
//! 1. the dictionary ranges to look in ([`Need::Terms`]): each query word's variants, and for a word
//!    long enough to hold a typo, the terms sharing a variant's first [`MAX_SHARD_PREFIX`] letters
//!    (the built index tolerates typos within the same letters: its dictionary shard);
//! 2. of the terms found there, the postings of those the query matches, exactly or one edit away
//!    ([`Need::Postings`], facets joined in);
//! 3. the built versions of their recipes ([`Need::BuiltVersions`]): a row a build has published is
//!    stale and skipped;
//! 4. ranking: only those postings are indexed, with the built index's own code, and the same
//!    [`search`] runs, so matching, typo rules, filters and scores are the built search's; the ranked
//!    list is merged into the built one;
//! 5. the stored cards of the overlay recipes on the page ([`Need::Cards`]).
//!
//! A query without words lists recipes: every live overlay recipe matches, after the built ones, in
//! slug order; the machine asks for that page of rows directly ([`Need::Listing`]), then their built
//! versions and cards.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{
    Card, CardText, DocTerms, Filters, IndexBuilder, MAX_SHARD_PREFIX, MIN_TYPO_WORD_CHARS, Outcome, Query,
    keys_text, search,
};
use crate::index::SearchError;
use crate::recipes::recipe::{Course, Recipe};
use crate::recipes::write::overlay_is_live;
use crate::text::{Stemmers, query_words, within_one_edit};

/// Where in a recipe a term occurs, best first: the built index's three postings.
pub const TITLE: u8 = 0;
pub const INGREDIENT: u8 = 1;
pub const ELSEWHERE: u8 = 2;

/// What the overlay search stores of one recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub card: Card,
    /// Every term, once, with the best field it occurs in ([`TITLE`], [`INGREDIENT`], [`ELSEWHERE`]).
    pub terms: Vec<(String, u8)>,
}

impl Entry {
    pub fn of(slug: &str, recipe: &Recipe, stemmers: &Stemmers) -> Entry {
        let doc_terms = DocTerms::of(slug, recipe, stemmers);
        let mut best: BTreeMap<&str, u8> = BTreeMap::new();
        for (field, list) in
            [(TITLE, &doc_terms.title), (INGREDIENT, &doc_terms.ingredients), (ELSEWHERE, &doc_terms.other)]
        {
            for term in list {
                best.entry(term).or_insert(field);
            }
        }
        Entry {
            card: Card::from_recipe(slug, recipe),
            terms: best.into_iter().map(|(term, field)| (term.to_string(), field)).collect(),
        }
    }

    /// The total time a listing filters on.
    pub fn total_min(&self) -> u32 {
        self.card.prep_min + self.card.cook_min
    }

    /// The facet keys a search filters on.
    pub fn facets(&self) -> String {
        facets_of(&self.card)
    }
}

/// The facet keys a search filters on of a recipe with `card`, as the overlay stores them
/// ([`keys_text`] of [`super::DocFacets::keys`]).
pub fn facets_of(card: &Card) -> String {
    keys_text(&card.facets().keys())
}

/// One query word: the terms it matches exactly, and the dictionary ranges its typos may live in.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    chars: usize,
    numeric: bool,
    variants: Vec<String>,
}

/// The dictionary lookups a query needs.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    words: Vec<Word>,
}

impl Plan {
    fn of(query: &Query, stemmers: &Stemmers) -> Plan {
        let words = query_words(&query.q)
            .into_iter()
            .map(|word| Word {
                chars: word.chars().count(),
                numeric: word.chars().all(char::is_numeric),
                variants: stemmers.query_variants(&word),
            })
            .collect();
        Plan { words }
    }

    /// Whether the query has words at all; without, it is a listing.
    fn has_words(&self) -> bool {
        !self.words.is_empty()
    }

    /// The terms to look up exactly.
    fn exact(&self) -> Vec<String> {
        let mut terms: Vec<String> =
            self.words.iter().flat_map(|word| word.variants.iter().cloned()).collect();
        crate::sorted::sort(&mut terms);
        terms.dedup();
        terms
    }

    /// The half-open term ranges `[low, high)` whose terms may be a query word one edit away.
    fn ranges(&self) -> Vec<(String, String)> {
        let mut ranges: Vec<(String, String)> = self
            .words
            .iter()
            .filter(|word| word.chars >= MIN_TYPO_WORD_CHARS && !word.numeric)
            .flat_map(|word| &word.variants)
            .map(|variant| {
                let prefix: String = variant.chars().take(MAX_SHARD_PREFIX).collect();
                // U+10FFFF sorts after every other character, in code points as in UTF-8 bytes.
                let high = format!("{prefix}\u{10FFFF}");
                (prefix, high)
            })
            .collect();
        crate::sorted::sort(&mut ranges);
        ranges.dedup();
        ranges
    }

    /// Of the terms the dictionary holds (the exact lookups and the ranges' contents), those the
    /// query matches: a variant itself, or a term one edit away from a variant when the built search
    /// would look for typos (see `match_word`).
    fn wanted(&self, dictionary: &[String]) -> Vec<String> {
        let mut wanted = Vec::new();
        for word in &self.words {
            let exact: Vec<&String> = word.variants.iter().filter(|v| dictionary.contains(v)).collect();
            wanted.extend(exact.iter().map(|term| (*term).clone()));
            let look_close = if exact.is_empty() {
                word.chars >= MIN_TYPO_WORD_CHARS
            } else {
                word.chars > MIN_TYPO_WORD_CHARS
            };
            if !look_close || word.numeric {
                continue;
            }
            for term in dictionary {
                let close = word.variants.iter().all(|variant| variant != term)
                    && word.variants.iter().any(|variant| {
                        variant.len().abs_diff(term.len()) <= 2
                            && same_prefix(variant, term)
                            && within_one_edit(variant, term)
                    });
                if close {
                    wanted.push(term.clone());
                }
            }
        }
        crate::sorted::sort(&mut wanted);
        wanted.dedup();
        wanted
    }
}

fn same_prefix(a: &str, b: &str) -> bool {
    a.chars().take(MAX_SHARD_PREFIX).eq(b.chars().take(MAX_SHARD_PREFIX))
}

/// One stored term of one overlay recipe, with the recipe's facets: a row of the postings lookup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Posting {
    pub term: String,
    pub slug: String,
    pub version: u64,
    pub field: u8,
    /// The recipe's facet keys, as [`Entry::facets`] stored them.
    pub facets: String,
    pub total_min: u32,
}

/// What [`rank`] answers: the overlay's matches as the built search ranks them. Its cards carry only
/// the slug; the real cards of the page are read at the end ([`Need::Cards`]).
type Ranked = Outcome;

/// Ranks the overlay recipes in `postings` (live ones only) for `query`, paging `[0, window)`,
/// weighing words as an index of all `n_overlay` overlay recipes would.
fn rank(
    query: &Query,
    stemmers: &Stemmers,
    postings: &[Posting],
    n_overlay: usize,
    window: usize,
) -> Result<Ranked, SearchError> {
    let mut docs: BTreeMap<&str, (&Posting, DocTerms)> = BTreeMap::new();
    for posting in postings {
        let (_, terms) = docs.entry(&posting.slug).or_insert_with(|| (posting, DocTerms::default()));
        let list = match posting.field {
            TITLE => &mut terms.title,
            INGREDIENT => &mut terms.ingredients,
            _ => &mut terms.other,
        };
        list.push(posting.term.clone());
    }
    // Every matching recipe is indexed, so a word weighs what it weighs in all of them; the filters
    // leave out, by document id, those they do not admit.
    let mut builder = IndexBuilder::default();
    let mut excluded = Vec::new();
    for (doc, (slug, (facets, terms))) in docs.iter_mut().enumerate() {
        for list in [&mut terms.title, &mut terms.ingredients, &mut terms.other] {
            crate::sorted::sort(list);
            list.dedup();
        }
        if !query.filters.admit(&facets.facets, facets.total_min) {
            excluded.push(doc as u32);
        }
        builder.add(placeholder(slug), terms);
    }
    let mut index = builder.finish();
    // The recipes that match no query word are not here, but they count in a word's weight. Their
    // ids hold no term, so no query (this one has words) can match them.
    index.manifest.n_docs = index.manifest.n_docs.max(u32::try_from(n_overlay).unwrap_or(u32::MAX));
    let files: HashMap<String, Vec<u8>> =
        index.files.into_iter().map(|file| (file.name, file.bytes)).collect();
    let mut own = query.clone();
    own.offset = 0;
    own.limit = window.max(1);
    own.filters = Filters { exclude: excluded, ..Filters::default() };
    debug_assert!(Plan::of(query, stemmers).has_words(), "a listing reads the overlay's rows directly");
    search(&index.manifest, &own, stemmers, &files)
}

/// A card holding the slug, for a recipe whose real card is read only if it lands on the page.
fn placeholder(slug: &str) -> Card {
    Card {
        slug: slug.to_string(),
        emoji: String::new(),
        course: Course::Main,
        difficulty: 0,
        prep_min: 0,
        cook_min: 0,
        servings: 0,
        flags: 0,
        texts: BTreeMap::from([(
            crate::recipes::recipe::Lang::En,
            CardText { title: String::new(), summary: String::new() },
        )]),
    }
}

/// The filters of a listing (a query without words), as the overlay table holds the facets.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Facet keys every recipe listed has, each between spaces: what its stored keys must contain.
    pub keys: Vec<String>,
    pub max_min: Option<u32>,
    /// Overlay recipes to skip: the page starts this far into the overlay's slug order.
    pub offset: usize,
    pub limit: usize,
}

impl Listing {
    /// The overlay part of a listing page, given how many built recipes the listing holds.
    fn of(query: &Query, built_total: u64) -> Listing {
        let built_total = usize::try_from(built_total).unwrap_or(usize::MAX);
        let window = query.offset + query.limit;
        Listing {
            keys: query.filters.keys().iter().map(|key| format!(" {key} ")).collect(),
            max_min: query.filters.max_min,
            offset: query.offset.saturating_sub(built_total),
            limit: window.saturating_sub(built_total.max(query.offset)),
        }
    }
}

/// A merged page, and which of its recipes come from the overlay: their cards are placeholders the
/// caller replaces with the stored ones ([`Merged::fill`]).
#[derive(Debug, Clone, PartialEq)]
struct Merged {
    pub page: Outcome,
    pub overlay: Vec<String>,
}

impl Listing {
    /// A listing page: the built recipes of `built` (its first `offset + limit`) from `offset`, then
    /// the overlay recipes `slugs` (read with this listing's offset and limit) of `overlay_total`.
    fn page(&self, built: Outcome, slugs: Vec<String>, overlay_total: u64, query: &Query) -> Merged {
        let total = built.total + overlay_total;
        let mut cards: Vec<Card> = built.cards.into_iter().skip(query.offset).take(query.limit).collect();
        let room = query.limit - cards.len();
        let overlay: Vec<String> = slugs.into_iter().take(room).collect();
        cards.extend(overlay.iter().map(|slug| placeholder(slug)));
        let end = query.offset + cards.len();
        let next_offset = (cards.len() == query.limit && (end as u64) < total).then_some(end);
        let scores = vec![0.0; cards.len()];
        Merged { page: Outcome { total, cards, scores, next_offset }, overlay }
    }
}

/// Merges the built search's first `offset + limit` results with the overlay's, by score, and pages
/// the merged list. Scores of the two weigh words by their own document frequencies, so the order
/// between a built and an overlay recipe is close, not exact; ties go to the built recipe, so a
/// listing shows the build in its usual order first. A built recipe the overlay also holds (its
/// write seen here before the caller's list of replaced recipes caught up) shows once, as written.
fn merge(built: Outcome, fresh: Ranked, offset: usize, limit: usize) -> Merged {
    let fresh_slugs: Vec<&str> = fresh.cards.iter().map(|card| card.slug.as_str()).collect();
    let mut duplicates = 0;
    let mut merged: Vec<(f64, Card, bool)> = Vec::with_capacity(built.cards.len() + fresh.cards.len());
    let mut built_cards = built.scores.into_iter().zip(built.cards).peekable();
    let mut fresh_cards = fresh.scores.iter().copied().zip(fresh.cards.iter().cloned()).peekable();
    loop {
        let take_fresh = match (built_cards.peek(), fresh_cards.peek()) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((built, _)), Some((fresh, _))) => fresh > built,
        };
        if take_fresh {
            merged.extend(fresh_cards.next().map(|(score, card)| (score, card, true)));
        } else if let Some((score, card)) = built_cards.next() {
            if fresh_slugs.contains(&card.slug.as_str()) {
                duplicates += 1;
                continue;
            }
            merged.push((score, card, false));
        }
    }
    let total = (built.total + fresh.total).saturating_sub(duplicates);
    let page: Vec<(f64, Card, bool)> = merged.into_iter().skip(offset).take(limit).collect();
    let end = offset + page.len();
    let next_offset = (page.len() == limit && (end as u64) < total).then_some(end);
    let overlay = page.iter().filter(|(_, _, fresh)| *fresh).map(|(_, card, _)| card.slug.clone()).collect();
    let (scores, cards) = page.into_iter().map(|(score, card, _)| (score, card)).unzip();
    Merged { page: Outcome { total, cards, scores, next_offset }, overlay }
}

impl Merged {
    /// Puts the stored cards in place of the overlay's placeholders; a recipe missing from `stored`
    /// (its row retired between the two reads) leaves the page.
    fn fill(mut self, mut stored: HashMap<String, Card>) -> Outcome {
        let page = &mut self.page;
        let mut cards = Vec::with_capacity(page.cards.len());
        let mut scores = Vec::with_capacity(page.cards.len());
        for (card, score) in page.cards.drain(..).zip(page.scores.drain(..)) {
            let card = if self.overlay.contains(&card.slug) { stored.remove(&card.slug) } else { Some(card) };
            if let Some(card) = card {
                cards.push(card);
                scores.push(score);
            }
        }
        page.cards = cards;
        page.scores = scores;
        self.page
    }
}

/// One overlay row of a listing page: a recipe and the version its search rows were stored at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    pub slug: String,
    pub version: u64,
}

/// What the search needs read next.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The overlay dictionary's terms that are one of `exact` or lie in one of `ranges` (`[low, high)`).
    Terms { exact: Vec<String>, ranges: Vec<(String, String)> },
    /// The stored postings of these terms ([`Read::Postings`]).
    Postings(Vec<String>),
    /// The overlay rows of a listing page, in slug order, and how many the listing's filters admit.
    Listing(Listing),
    /// The version the build published of each of these slugs, if any ([`Read::BuiltVersions`]).
    BuiltVersions(Vec<String>),
    /// The stored cards of these overlay recipes, the ones on the page.
    Cards(Vec<String>),
}

/// What was read for a [`Need`], the same kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    Terms(Vec<String>),
    Postings(Vec<Posting>),
    Listing {
        rows: Vec<Listed>,
        total: u64,
    },
    /// In the order of the slugs asked for.
    BuiltVersions(Vec<Option<u64>>),
    /// By slug; a recipe missing here (its row retired between two reads) leaves the page.
    Cards(HashMap<String, Card>),
}

/// The next thing to read, or the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Need(Need),
    Done(Outcome),
}

/// One search of the built index and the overlay together: it starts from the built search's list
/// up to the end of the page, then asks for the overlay's rows one [`Need`] at a time.
///
/// ```text
/// let (mut search, mut step) = OverlaySearch::start(query, built, n_overlay, stemmers);
/// while let Step::Need(need) = step { step = search.give(read(need), stemmers)?; }
/// ```
#[derive(Debug)]
pub struct OverlaySearch {
    query: Query,
    /// Live overlay recipes: a word's weight counts all of them.
    n_overlay: usize,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Asked for the dictionary's terms of the plan.
    Terms {
        plan: Plan,
        built: Outcome,
    },
    /// Asked for the postings of the wanted terms.
    Postings {
        built: Outcome,
    },
    /// Asked for the built versions of the postings' recipes.
    PostingVersions {
        built: Outcome,
        postings: Vec<Posting>,
        slugs: Vec<String>,
    },
    /// Asked for the rows of a listing page.
    Listing {
        built: Outcome,
        listing: Listing,
    },
    /// Asked for the built versions of a listing page's rows.
    ListingVersions {
        built: Outcome,
        listing: Listing,
        rows: Vec<Listed>,
        total: u64,
    },
    /// Asked for the cards of the overlay recipes on the page.
    Cards(Merged),
    Done,
}

impl OverlaySearch {
    /// The search of `query` over `built` (the built search's list up to the end of the page) and
    /// the `n_overlay` live overlay recipes, and its first step.
    pub fn start(
        query: &Query,
        built: Outcome,
        n_overlay: usize,
        stemmers: &Stemmers,
    ) -> (OverlaySearch, Step) {
        let plan = Plan::of(query, stemmers);
        let (state, need) = if plan.has_words() {
            let need = Need::Terms { exact: plan.exact(), ranges: plan.ranges() };
            (State::Terms { plan, built }, need)
        } else {
            let listing = Listing::of(query, built.total);
            (State::Listing { built, listing: listing.clone() }, Need::Listing(listing))
        };
        (OverlaySearch { query: query.clone(), n_overlay, state }, Step::Need(need))
    }

    /// The next step, given what the last one needed. A read of another kind than the one asked
    /// for is the caller's defect: [`OutOfStep`].
    pub fn give(&mut self, read: Read, stemmers: &Stemmers) -> Result<Step, OverlayError> {
        let query = &self.query;
        let (state, step) = match (std::mem::replace(&mut self.state, State::Done), read) {
            (State::Terms { plan, built }, Read::Terms(dictionary)) => {
                let wanted = plan.wanted(&dictionary);
                if wanted.is_empty() {
                    self.cards_of(merge(built, empty(), query.offset, query.limit))
                } else {
                    (State::Postings { built }, Step::Need(Need::Postings(wanted)))
                }
            }
            (State::Postings { built }, Read::Postings(postings)) if postings.is_empty() => {
                self.cards_of(merge(built, empty(), query.offset, query.limit))
            }
            (State::Postings { built }, Read::Postings(postings)) => {
                let mut slugs: Vec<String> = postings.iter().map(|p| p.slug.clone()).collect();
                crate::sorted::sort(&mut slugs);
                slugs.dedup();
                let need = Need::BuiltVersions(slugs.clone());
                (State::PostingVersions { built, postings, slugs }, Step::Need(need))
            }
            (State::PostingVersions { built, postings, slugs }, Read::BuiltVersions(versions)) => {
                let built_version = |slug: &str| {
                    slugs
                        .binary_search_by(|s| s.as_str().cmp(slug))
                        .ok()
                        .and_then(|at| versions.get(at)?.as_ref())
                };
                let live: Vec<Posting> = postings
                    .into_iter()
                    .filter(|p| overlay_is_live(p.version, built_version(&p.slug).copied()))
                    .collect();
                let window = query.offset + query.limit;
                let fresh =
                    rank(query, stemmers, &live, self.n_overlay, window).map_err(OverlayError::Search)?;
                self.cards_of(merge(built, fresh, query.offset, query.limit))
            }
            (State::Listing { built, listing }, Read::Listing { rows, total }) => {
                let need = Need::BuiltVersions(rows.iter().map(|row| row.slug.clone()).collect());
                (State::ListingVersions { built, listing, rows, total }, Step::Need(need))
            }
            (State::ListingVersions { built, listing, rows, total }, Read::BuiltVersions(versions)) => {
                let slugs = rows
                    .into_iter()
                    .zip(versions.into_iter().chain(std::iter::repeat(None)))
                    .filter(|(row, built)| overlay_is_live(row.version, *built))
                    .map(|(row, _)| row.slug);
                // Also for a page that the built recipes fill: the total counts the overlay recipes
                // the filters admit.
                self.cards_of(listing.page(built, slugs.collect(), total, query))
            }
            (State::Cards(merged), Read::Cards(cards)) => (State::Done, Step::Done(merged.fill(cards))),
            (state, read) => {
                let asked = format!("{state:?}");
                self.state = state;
                return Err(OverlayError::OutOfStep(format!("{read:?} given while {asked}")));
            }
        };
        self.state = state;
        Ok(step)
    }

    /// The step after merging: the cards of the page's overlay recipes, or the page when it has none.
    fn cards_of(&self, merged: Merged) -> (State, Step) {
        if merged.overlay.is_empty() {
            (State::Done, Step::Done(merged.page))
        } else {
            let need = Need::Cards(merged.overlay.clone());
            (State::Cards(merged), Step::Need(need))
        }
    }
}

/// No overlay recipe matched.
fn empty() -> Outcome {
    Outcome { total: 0, cards: Vec::new(), scores: Vec::new(), next_offset: None }
}

/// Why a search step failed.
#[derive(Debug)]
pub enum OverlayError {
    /// The ranking's own index did not decode: a defect here.
    Search(SearchError),
    /// The caller gave a read of another kind than the one asked for.
    OutOfStep(String),
}
