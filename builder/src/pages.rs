//! HTML pages: rendered by `domain::recipes::page`, which the Worker shares for recipes not yet built.

pub use domain::pages::Renderer;
