//! HTML pages: rendered by `domain::page`, which the Worker shares for recipes not yet built.

pub use domain::page::Renderer;
