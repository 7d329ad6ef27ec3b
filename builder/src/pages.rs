//! The pages the build writes, through `domain::pages`'s [`Renderer`]: the home and 404 pages, and
//! each episode's page and its first comparison of runs. Recipe pages are not built: the Worker
//! renders each from the recipe's current document.

pub use domain::pages::Renderer;
