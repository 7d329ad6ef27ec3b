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
//! [`search`] is pure: it answers, or names the files it still needs ([`crate::index::Need`]); the caller fetches
//! those and calls again. A typo in a query word is tolerated when the word has no exact match, within
//! the word's dictionary shard (so not in its first letter or two).
//!
//! The code follows the index's life: `cards` (what a result shows), `facets` (what a filter
//! tests, and the facet bitmaps), `codec` (postings and dictionary shards as bytes), `files` (the
//! manifest and which file holds what), `build` (the builder's side), `query` (a search), `patch` (a
//! rebuild in place) and [`overlay`] (the recipes written since the build, searched the same way). The file plumbing both static indexes share (`Files`, `Need`, hashed names) is
//! [`crate::index`].

mod build;
mod cards;
mod codec;
mod facets;
mod files;
pub mod overlay;
mod patch;
mod query;

pub use build::{BuiltIndex, DocTerms, IndexBuilder};
pub use cards::{Card, CardText, CardView};
pub use codec::INLINE_MAX_BYTES;
pub use facets::{DocFacets, FACETS_VERSION, Filters, keys_text};
pub use files::{CARDS_PER_SHARD, DIR, FORMAT_VERSION, MAX_SHARD_PREFIX, Manifest, SHARD_TARGET_BYTES};
pub use patch::{Changed, Patched, patch};
pub use query::{DEFAULT_LIMIT, MAX_LIMIT, MIN_TYPO_WORD_CHARS, Outcome, Query, search};

#[cfg(test)]
mod tests;
