//! The quote service: shows, episodes, runs and speaker names (`transcript`), and attribution and
//! the phrase index (`quote`).

pub mod quote;
pub mod transcript;
