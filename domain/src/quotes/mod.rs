//! The quote service: shows' feeds (`feed`); shows, episodes, runs and speaker names
//! (`transcript`); attribution and the phrase index (`quote`).

pub mod feed;
pub mod quote;
pub mod transcript;
