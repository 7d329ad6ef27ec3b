//! What a build keeps for the next one (`<out>.state`), and its phase timings.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use domain::recipes::search::DocFacets;
use serde::{Deserialize, Serialize};

use crate::output::sibling;
use crate::source::Source;

/// The state's format: its own (4), the version of the facets it keeps per recipe, and the search
/// index's format, so a state saved under other facet rules or beside an index of other terms is not
/// reused (the first field, so it reads whatever follows).
pub(crate) const STATE_FORMAT: u32 =
    4 + 1000 * domain::recipes::search::FACETS_VERSION + 1_000_000 * domain::recipes::search::FORMAT_VERSION;

/// What one recipe adds to the site-wide files; kept in the build state between builds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DocState {
    pub slug: String,
    pub version: u64,
    pub facets: DocFacets,
    /// The length of its line in the `recipes.jsonl` dump, newline included.
    pub jsonl_len: u64,
    /// What its cards were drawn from (`domain::recipes::card::key`); 0 for a recipe with a photo.
    pub card_key: u64,
}

/// What a rebuild needs from the last build, besides its output: small, so it loads in milliseconds.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct State {
    pub format: u32,
    pub source_key: String,
    pub commit: String,
    /// In search document-id order.
    pub docs: Vec<DocState>,
}

fn state_path(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "state")
}

pub(crate) fn load_state(out_dir: &Path, source: &Source) -> Option<State> {
    let bytes = std::fs::read(state_path(out_dir)).ok()?;
    let state: State = postcard::from_bytes(&bytes).ok()?;
    (state.format == STATE_FORMAT && state.source_key == source.key() && out_dir.is_dir()).then_some(state)
}

pub(crate) fn save_state(out_dir: &Path, state: &State) -> Result<()> {
    let bytes = postcard::to_allocvec(state)?;
    let path = state_path(out_dir);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

/// Phase timings on stderr when `BUILDER_TIMINGS=1`, for finding where a build spends its time.
pub(crate) struct Timings {
    pub enabled: bool,
    last: std::time::Instant,
}

impl Timings {
    pub fn new() -> Timings {
        Timings { enabled: std::env::var_os("BUILDER_TIMINGS").is_some(), last: std::time::Instant::now() }
    }

    pub fn lap(&mut self, phase: &str) {
        if self.enabled {
            eprintln!("  {phase}: {:.3} s", self.last.elapsed().as_secs_f64());
        }
        self.last = std::time::Instant::now();
    }
}
