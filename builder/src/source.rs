//! Reads content files from a work tree (walkdir) or from a git commit without checking it out (git2).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where content comes from.
#[derive(Debug, Clone)]
pub enum Source {
    WorkTree(PathBuf),
    Git { repo: PathBuf, rev: String, path: String },
}

/// One content file: its path relative to the content folder, and its bytes.
#[derive(Debug, Clone)]
pub struct ContentFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// What was read.
#[derive(Debug)]
pub struct Content {
    pub files: Vec<ContentFile>,
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub id: String,
}

impl Source {
    /// Reads every file under `prefix` (such as `shows/`), sorted by path: for small content sets.
    pub fn read(&self, prefix: &str) -> Result<Content> {
        let listing = self.list(prefix)?;
        let reader = self.reader()?;
        let files = listing
            .entries
            .iter()
            .map(|entry| Ok(ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? }))
            .collect::<Result<_>>()?;
        Ok(Content { files })
    }

    pub fn describe(&self) -> String {
        match self {
            Source::WorkTree(dir) => dir.display().to_string(),
            Source::Git { repo, rev, .. } => format!("{} at {rev}", repo.display()),
        }
    }
}

/// One content file, not yet read: its path under the content folder and, for git, its blob id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub blob: Option<git2::Oid>,
}

/// The files under a prefix, sorted by path, and the commit they were listed at.
#[derive(Debug)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub commit: Option<Commit>,
}

/// Reads entries' bytes; one per thread (a git repository handle is not shared between threads).
pub enum Reader {
    WorkTree(PathBuf),
    Git(git2::Repository),
}

impl Reader {
    pub fn read(&self, entry: &Entry) -> Result<Vec<u8>> {
        match (self, entry.blob) {
            (Reader::WorkTree(dir), _) => {
                std::fs::read(dir.join(&entry.path)).with_context(|| format!("reading {}", entry.path))
            }
            (Reader::Git(repo), Some(blob)) => Ok(repo.find_blob(blob)?.content().to_vec()),
            (Reader::Git(_), None) => anyhow::bail!("{} has no blob id", entry.path),
        }
    }
}

/// A file that changed between two commits; `entry` is `None` when it was deleted.
#[derive(Debug)]
pub struct Change {
    pub path: String,
    /// The file now; `None` when it is gone.
    pub entry: Option<Entry>,
    /// The file at the older commit; `None` when it is new.
    pub before: Option<Entry>,
}

impl Source {
    /// Lists the files under `prefix` without reading them: none when the content has no such
    /// folder (content of shows only has no `recipes/`).
    pub fn list(&self, prefix: &str) -> Result<Listing> {
        let mut listing = match self {
            Source::WorkTree(dir) => {
                let root = dir.join(prefix);
                if !root.is_dir() {
                    if !dir.is_dir() {
                        anyhow::bail!("{} is not a folder", dir.display());
                    }
                    return Ok(Listing { entries: Vec::new(), commit: None });
                }
                let mut entries = Vec::new();
                for item in walkdir::WalkDir::new(&root) {
                    let item = item.with_context(|| format!("reading {}", root.display()))?;
                    if item.file_type().is_file() {
                        let rel = item.path().strip_prefix(dir).expect("walkdir stays under its root");
                        entries.push(Entry { path: rel.to_string_lossy().replace('\\', "/"), blob: None });
                    }
                }
                Listing { entries, commit: None }
            }
            Source::Git { repo, rev, path } => {
                let repo = open(repo)?;
                let commit = resolve(&repo, rev)?;
                let mut entries = Vec::new();
                if let Some(tree) = subtree(&repo, &commit.tree()?, path, prefix)? {
                    tree.walk(git2::TreeWalkMode::PreOrder, |parent, item| {
                        if item.kind() == Some(git2::ObjectType::Blob) {
                            let name = item.name().unwrap_or_default();
                            let path = format!("{}/{parent}{name}", prefix.trim_end_matches('/'));
                            entries.push(Entry { path, blob: Some(item.id()) });
                        }
                        git2::TreeWalkResult::Ok
                    })?;
                }
                Listing { entries, commit: Some(Commit { id: commit.id().to_string() }) }
            }
        };
        listing.entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(listing)
    }

    /// The files under a prefix the content may lack (`photos/`): none when it has no such folder.
    pub fn list_if_any(&self, prefix: &str) -> Result<Vec<Entry>> {
        if self.has(prefix)? { Ok(self.list(prefix)?.entries) } else { Ok(Vec::new()) }
    }

    /// Whether the content has the folder `prefix`.
    pub fn has(&self, prefix: &str) -> Result<bool> {
        Ok(match self {
            Source::WorkTree(dir) => dir.join(prefix).is_dir(),
            Source::Git { repo, rev, path } => {
                let repo = open(repo)?;
                let commit = resolve(&repo, rev)?;
                subtree(&repo, &commit.tree()?, path, prefix)?.is_some()
            }
        })
    }

    /// Refuses a folder that holds neither recipes nor shows, which is most likely not the content
    /// folder at all; either alone is content.
    pub fn require_content(&self) -> Result<()> {
        if self.has("recipes/")? || self.has("shows/")? {
            return Ok(());
        }
        anyhow::bail!("{} holds neither recipes/ nor shows/: is it the content folder?", self.describe())
    }

    /// A reader for this source, for one thread.
    pub fn reader(&self) -> Result<Reader> {
        Ok(match self {
            Source::WorkTree(dir) => Reader::WorkTree(dir.clone()),
            Source::Git { repo, .. } => Reader::Git(open(repo)?),
        })
    }

    /// The files under `prefix` that differ between commit `from` and this source's revision.
    pub fn changes_since(&self, from: &str, prefix: &str) -> Result<Option<Vec<Change>>> {
        let Source::Git { repo, rev, path } = self else { return Ok(None) };
        let repo = open(repo)?;
        let Ok(old) = repo.find_commit(git2::Oid::from_str(from)?) else { return Ok(None) };
        let new = resolve(&repo, rev)?;
        let (Some(old_tree), Some(new_tree)) =
            (subtree(&repo, &old.tree()?, path, prefix)?, subtree(&repo, &new.tree()?, path, prefix)?)
        else {
            return Ok(None);
        };
        let diff = repo.diff_tree_to_tree(Some(&old_tree), Some(&new_tree), None)?;
        let prefix = prefix.trim_end_matches('/');
        let mut changes = Vec::new();
        for delta in diff.deltas() {
            let new_file = delta.new_file();
            let old_file = delta.old_file();
            let deleted = delta.status() == git2::Delta::Deleted;
            let file_path = if deleted { old_file.path() } else { new_file.path() };
            let Some(rel) = file_path.and_then(|p| p.to_str()) else { continue };
            let path = format!("{prefix}/{rel}");
            if delta.status() == git2::Delta::Renamed
                && let Some(old_rel) = old_file.path().and_then(|p| p.to_str())
            {
                let old_path = format!("{prefix}/{old_rel}");
                let before = Some(Entry { path: old_path.clone(), blob: Some(old_file.id()) });
                changes.push(Change { path: old_path, entry: None, before });
            }
            let entry = (!deleted).then(|| Entry { path: path.clone(), blob: Some(new_file.id()) });
            let existed = matches!(
                delta.status(),
                git2::Delta::Modified | git2::Delta::Deleted | git2::Delta::Typechange
            );
            let before = existed.then(|| Entry { path: path.clone(), blob: Some(old_file.id()) });
            changes.push(Change { path, entry, before });
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Some(changes))
    }

    /// The file at `rel` under the content folder, or `None` when there is none.
    pub fn read_one(&self, rel: &str) -> Result<Option<Vec<u8>>> {
        match self {
            Source::WorkTree(dir) => match std::fs::read(dir.join(rel)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err).with_context(|| format!("reading {}", dir.join(rel).display())),
            },
            Source::Git { repo, rev, path } => {
                let repo = open(repo)?;
                let tree = resolve(&repo, rev)?.tree()?;
                let at = format!("{}/{rel}", path.trim_end_matches('/'));
                match tree.get_path(Path::new(at.trim_start_matches('/'))) {
                    Ok(entry) => Ok(Some(repo.find_blob(entry.id())?.content().to_vec())),
                    Err(_) => Ok(None),
                }
            }
        }
    }

    /// The commit a git source builds.
    pub fn list_commit(&self) -> Result<Option<String>> {
        let Source::Git { repo, rev, .. } = self else { return Ok(None) };
        Ok(Some(resolve(&open(repo)?, rev)?.id().to_string()))
    }

    /// What identifies the content this source builds, apart from the revision: the folder's
    /// canonical path, so `--git .` and the same repository named from elsewhere are one source and
    /// the second build is a rebuild.
    pub fn key(&self) -> String {
        let canonical = |dir: &Path| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        match self {
            Source::WorkTree(dir) => format!("worktree:{}", canonical(dir).display()),
            Source::Git { repo, path, .. } => format!("git:{}:{path}", canonical(repo).display()),
        }
    }
}

pub(crate) fn open(repo: &Path) -> Result<git2::Repository> {
    git2::Repository::open(repo).with_context(|| format!("opening git repo {}", repo.display()))
}

pub(crate) fn resolve<'r>(repo: &'r git2::Repository, rev: &str) -> Result<git2::Commit<'r>> {
    repo.revparse_single(rev).and_then(|o| o.peel_to_commit()).with_context(|| format!("resolving {rev}"))
}

pub(crate) fn subtree<'r>(
    repo: &'r git2::Repository,
    tree: &git2::Tree,
    content_path: &str,
    prefix: &str,
) -> Result<Option<git2::Tree<'r>>> {
    let dir = format!("{}/{}", content_path.trim_end_matches('/'), prefix.trim_end_matches('/'));
    match tree.get_path(Path::new(&dir)) {
        Ok(entry) => Ok(Some(repo.find_tree(entry.id()).with_context(|| format!("{dir} is not a folder"))?)),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_named_two_ways_is_one_source_and_its_content_folder_another() {
        let here = std::env::current_dir().unwrap();
        let git = |repo: PathBuf, path: &str| Source::Git { repo, rev: "HEAD".into(), path: path.into() };
        assert_eq!(git(".".into(), "content").key(), git(here.clone(), "content").key());
        assert_eq!(git(here.join("src/.."), "content").key(), git(here.clone(), "content").key());
        assert_ne!(git(".".into(), "content").key(), git(".".into(), "other").key());
        assert_eq!(Source::WorkTree(".".into()).key(), Source::WorkTree(here).key());
    }
}
