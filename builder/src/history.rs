//! Per-recipe git history for `builder build --git`: `r/<slug>.history.json`, newest first, one item
//! per commit that changed `recipes/<slug>.json` (commit, author, date, message). The Worker serves it
//! from `GET /api/r/{slug}/history`, after the API changes the build does not have yet.
//!
//! One walk over the first-parent history diffs each commit's recipes folder with its parent's (git2
//! skips what is the same), so the cost is the number of commits plus the number of changed files. A
//! rebuild walks only the commits since its last build. The same walk says when each recipe file was
//! last added, which orders the search documents: new recipes come after the ones already built.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::source;

/// One commit in a recipe's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub commit: String,
    pub author: String,
    pub date: String,
    pub message: String,
}

/// One commit on the first-parent line and the recipe files it changed against its parent, by slug.
#[derive(Debug)]
pub struct Step {
    pub item: Item,
    /// Added or changed.
    pub changed: Vec<String>,
    /// Not in the parent: a new recipe, or one added again.
    pub added: Vec<String>,
    pub deleted: Vec<String>,
}

/// The first-parent commits from `rev` back to `since` (not included), oldest first, with what each
/// changed under `<content_path>/recipes/`. Without `since`, back to the first commit. `None` when
/// `since` is not on `rev`'s first-parent line, so a rebuild cannot start from it.
pub fn walk(
    repo_path: &Path,
    rev: &str,
    content_path: &str,
    since: Option<&str>,
) -> Result<Option<Vec<Step>>> {
    let repo = source::open(repo_path)?;
    let stop = since.map(git2::Oid::from_str).transpose()?;
    let recipes_of = |commit: &git2::Commit| -> Result<Option<git2::Tree>> {
        source::subtree(&repo, &commit.tree()?, content_path, "recipes")
    };
    let mut steps = Vec::new();
    let mut commit = Some(source::resolve(&repo, rev)?);
    while let Some(current) = commit {
        if Some(current.id()) == stop {
            steps.reverse();
            return Ok(Some(steps));
        }
        let parent = current.parents().next();
        let now = recipes_of(&current)?;
        let before = match &parent {
            Some(parent) => recipes_of(parent)?,
            None => None,
        };
        if now.as_ref().map(|t| t.id()) != before.as_ref().map(|t| t.id()) {
            let diff = repo.diff_tree_to_tree(before.as_ref(), now.as_ref(), None)?;
            let mut step =
                Step { item: item_of(&current), changed: Vec::new(), added: Vec::new(), deleted: Vec::new() };
            for delta in diff.deltas() {
                let deleted = delta.status() == git2::Delta::Deleted;
                let file = if deleted { delta.old_file() } else { delta.new_file() };
                let Some(slug) = file.path().and_then(|p| p.to_str()).and_then(|p| p.strip_suffix(".json"))
                else {
                    continue;
                };
                let slug = slug.to_string();
                match delta.status() {
                    git2::Delta::Deleted => step.deleted.push(slug),
                    git2::Delta::Added => {
                        step.added.push(slug.clone());
                        step.changed.push(slug);
                    }
                    _ => step.changed.push(slug),
                }
            }
            steps.push(step);
        }
        commit = parent;
    }
    Ok(stop.is_none().then(|| {
        steps.reverse();
        steps
    }))
}

fn item_of(commit: &git2::Commit) -> Item {
    Item {
        commit: commit.id().to_string(),
        author: commit.author().name().unwrap_or_default().to_string(),
        date: iso_date(commit.author().when().seconds()),
        message: message_without_trailers(commit.message().unwrap_or_default()),
    }
}

/// Each recipe's history in `steps` (oldest first), newest first.
pub fn histories(steps: &[Step]) -> BTreeMap<&str, Vec<&Item>> {
    let mut histories: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for step in steps.iter().rev() {
        for slug in &step.changed {
            histories.entry(slug.as_str()).or_default().push(&step.item);
        }
    }
    histories
}

/// For each recipe added in `steps`, the index of the step that last added it.
pub fn births(steps: &[Step]) -> BTreeMap<&str, usize> {
    let mut births = BTreeMap::new();
    for (idx, step) in steps.iter().enumerate() {
        for slug in &step.added {
            births.insert(slug.as_str(), idx);
        }
    }
    births
}

/// The message a person wrote: `builder sync`'s machine trailers are left out.
fn message_without_trailers(message: &str) -> String {
    message
        .lines()
        .filter(|line| !line.starts_with("Commonplace-"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Seconds since the epoch as ISO 8601 UTC.
pub fn iso_date(seconds: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_are_dropped_and_dates_are_utc() {
        assert_eq!(message_without_trailers("Less salt\n\nCommonplace-Change: 7\n"), "Less salt");
        assert_eq!(iso_date(0), "1970-01-01T00:00:00Z");
    }
}
