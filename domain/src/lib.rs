//! Commonplace's pure core.
//!
//! Everything here is a function of its arguments: no IO, no clock, no environment, no randomness.
//! The builder (native) and the edge (wasm32 Worker) both call into this crate, so a search or a
//! validation answers the same way wherever it runs.
//!
//! Central types: [`recipe::Recipe`] (the seed's recipe document), [`recipe::Published`] (with the
//! server-set fields), [`search::Manifest`] and [`search::search`] (the sharded static search index).
//! The alternative we rejected was a search engine library such as tantivy: its index wants a
//! filesystem and its wasm build is several MiB, while ours must answer from a few static files.

pub mod ai;
pub mod api;
pub mod card;
pub mod clean;
pub mod cooking;
pub mod diagnostic;
pub mod diet;
pub mod host;
pub mod idempotency;
pub mod index;
pub mod layout;
pub mod limits;
pub mod mcp;
#[cfg(feature = "pages")]
pub mod page;
pub mod paging;
pub mod quote;
pub mod recipe;
pub mod search;
pub mod slug;
pub mod text;
pub mod transcript;
pub mod write;

pub use diagnostic::Diagnostic;
