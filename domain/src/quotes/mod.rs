//! The quote service: shows' feeds (`feed`); an episode taken in by its address (`intake`); shows,
//! episodes, runs and speaker names (`transcript`); attribution and the phrase index (`quote`).

pub mod feed;
pub mod intake;
#[cfg(feature = "pages")]
pub mod page;
pub mod quote;
pub mod transcript;
