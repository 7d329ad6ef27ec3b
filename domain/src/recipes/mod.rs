//! The recipe service: the recipe document and its checks, the static search index and the overlay
//! search, cooking (units, scaling, Cooklang), diet versions and the AI's prompts, pages and cards,
//! slugs, and keyed writes.

pub mod ai;
pub mod card;
pub mod cooking;
pub mod diet;
#[cfg(feature = "pages")]
pub mod page;
pub mod recipe;
pub mod search;
pub mod slug;
pub mod write;
