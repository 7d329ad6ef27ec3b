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
//! page. A query of common words ("we went to the", "at the end of the day") thus reads one bucket
//! (and one bitmap for a later page), never a position list of "the", and no query reads more than a
//! few dozen small parts: dictionary buckets, bitmaps, and blocks of [`Config::passages_per_block`]
//! passages (see [`format`]). A longer phrase is looked up by its rare grams, or its grams of
//! `max_gram` words.
//!
//! `max_gram` is 8, though a phrase of rare words is narrowed by its grams of one or two: the lattice
//! goes on past five words only along chains of frequent grams, which stock phrases of common words
//! are, and which cost the Changelog corpus 0.3 % more index. With a lattice of five words, "at the
//! end of the day" is no entry, and its exact total means checking every passage that holds both of
//! its grams of five words: 664 block reads (BENCHMARKS.md). A gram is known in the build by the
//! numbers of its two frequent grams one word shorter, so its length has no bound but `max_gram`.
//!
//! A reader holds in memory a filter of the frequent grams ([`format::FrequentGrams`], 336 KiB
//! for the Changelog corpus), so it knows before reading which grams of a phrase have entries
//! and which of those are rare: a phrase's first round reads the buckets it needs, not a lattice
//! level at a time. The filter only chooses what to read; what a search concludes rests on the
//! entries it read, so a wrong "frequent" (one key in 65,536) costs a round, never a wrong answer.
//!
//! Positions are not stored at all: a hit's place inside its passage comes from the passage's
//! text, which the answer shows anyway. The alternative we measured first, a positional roaring
//! bitmap per word (BENCHMARKS.md), read 1.2 MiB at p50 and 3 MiB at p99 per query.
//!
//! A phrase that straddles two passages (a speaker change, or the cut in a very long turn) is not
//! found: a phrase is one person's words.
//!
//! A search runs through four files: `query` parses the question and cuts a phrase into grams,
//! `plan` chooses the dictionary buckets to read and the entries that answer, `read` decodes
//! entries' passages and passage blocks into hits, and `search` puts these together for a search
//! and for the places of a quote in the whole corpus.

pub mod build;
pub mod format;
mod plan;
mod query;
mod read;
mod search;

pub use build::{BuiltIndex, IndexBuilder, IndexFull};
pub use format::{
    DIR, Index, JOINING, Joining, Manifest, Part, Parts, PhraseError, READ_BUDGET, READ_GAP, Read,
    WholeFiles, reads,
};
pub use query::{DEFAULT_LIMIT, MAX_QUERY_CHARS, MAX_SPEAKER_CHARS, Query, parse_query};
pub use read::Hit;
pub use search::{Answer, KEY_WORDS, MAX_ALTERNATIVES, MAX_PLACES, Overlay, Places, Reach, places, search};

/// A long segment is cut into passages of at most this many words.
pub const MAX_PASSAGE_TOKENS: usize = 1024;

/// The index's shape; [`Config::default`] is what the builder writes (BENCHMARKS.md).
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
        Config { max_gram: 8, frequent: 32, bucket_bytes: 2048, passages_per_block: 8 }
    }
}

#[cfg(test)]
mod tests;
