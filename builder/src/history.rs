//! Per-recipe git history for `builder build --git`: `r/<slug>.history.json`, newest first, one item
//! per commit that changed `recipes/<slug>.json` (commit, author, date, message). The Worker serves it
//! from `GET /api/r/{slug}/history`, after the API changes the build does not have yet.
//!
//! One walk over the first-parent history compares each commit's recipes folder with its parent's, so
//! the cost is the number of commits plus the number of changed files, not commits × recipes.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

/// One commit in a recipe's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub commit: String,
    pub author: String,
    pub date: String,
    pub message: String,
}

/// The history of every recipe file under `<content_path>/recipes/` reachable from `rev`.
pub fn recipe_histories(
    repo_path: &Path,
    rev: &str,
    content_path: &str,
) -> Result<BTreeMap<String, Vec<Item>>> {
    let repo = git2::Repository::open(repo_path)
        .with_context(|| format!("opening git repo {}", repo_path.display()))?;
    let start = repo.revparse_single(rev)?.peel_to_commit()?;
    let dir = format!("{}/recipes", content_path.trim_end_matches('/'));
    let files_at = |commit: &git2::Commit| -> Result<HashMap<String, git2::Oid>> {
        let tree = commit.tree()?;
        let Ok(entry) = tree.get_path(Path::new(&dir)) else { return Ok(HashMap::new()) };
        let sub = repo.find_tree(entry.id())?;
        Ok(sub
            .iter()
            .filter_map(|e| {
                let slug = e.name()?.strip_suffix(".json")?.to_string();
                Some((slug, e.id()))
            })
            .collect())
    };
    let mut histories: BTreeMap<String, Vec<Item>> = BTreeMap::new();
    let mut commit = Some(start);
    while let Some(current) = commit {
        let parent = current.parents().next();
        let now = files_at(&current)?;
        let before = match &parent {
            Some(parent) => files_at(parent)?,
            None => HashMap::new(),
        };
        let changed: Vec<&String> =
            now.iter().filter(|(slug, id)| before.get(*slug) != Some(*id)).map(|(slug, _)| slug).collect();
        if !changed.is_empty() {
            let item = Item {
                commit: current.id().to_string(),
                author: current.author().name().unwrap_or_default().to_string(),
                date: iso_date(current.author().when().seconds()),
                message: message_without_trailers(current.message().unwrap_or_default()),
            };
            for slug in changed {
                histories.entry(slug.clone()).or_default().push(item.clone());
            }
        }
        commit = parent;
    }
    Ok(histories)
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
