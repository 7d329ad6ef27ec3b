//! Commonplace's pure core.
//!
//! Everything here is a function of its arguments: no IO, no clock, no environment, no randomness.
//! The builder (native) and the edge (wasm32 Worker) both call into this crate, so a search or a
//! validation answers the same way wherever it runs.
//!
//! Central types: [`recipes::recipe::Recipe`] (the recipe document), [`recipes::recipe::Published`] (with the
//! server-set fields), [`recipes::search::Manifest`] and [`recipes::search::search`] (the sharded static search index).
//! The alternative we rejected was a search engine library such as tantivy: its index wants a
//! filesystem and its wasm build is several MiB, while ours must answer from a few static files.

// Shared by both services.
pub mod api;
pub mod clean;
pub mod diagnostic;
pub mod index;
pub mod mcp;
#[cfg(feature = "pages")]
pub mod pages;
pub mod paging;
pub mod sorted;
pub mod text;

// One module per service, and the deployment policy both follow.
pub mod quotes;
pub mod recipes;
pub mod site;

pub use diagnostic::Diagnostic;
