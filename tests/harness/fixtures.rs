//! Request bodies the integration tests and the benches share, kept as files under `tests/data/` so
//! one fixture serves both.

use serde_json::Value;

/// A valid API recipe document (`tests/data/api/recipe.json`: a two-ingredient salad, English only)
/// whose English title is `title`.
pub fn recipe(title: &str) -> Value {
    let mut doc: Value =
        serde_json::from_str(include_str!("../data/api/recipe.json")).expect("tests/data/api/recipe.json");
    doc["texts"]["en"]["title"] = Value::from(title);
    doc
}
