//! The handlers, one module per family of routes; `crate::router` lists every route and names the
//! handler it runs. Each parses its request (its typed input comes from `domain::api`), calls
//! `domain`, and renders; what they stand on — HTTP, keys and limits, D1, the overlay, the built
//! files — is the crate's other modules.

pub mod ai;
pub mod cooking;
pub mod diet;
pub mod feed;
pub mod intake;
pub mod kitchen;
pub mod mcp;
pub mod pages;
pub mod quotes;
pub mod recipes;
pub mod review;
pub mod speakers;
pub mod writes;
