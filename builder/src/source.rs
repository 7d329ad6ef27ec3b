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

/// What was read, and the commit it was read at (for a git source).
#[derive(Debug)]
pub struct Content {
    pub files: Vec<ContentFile>,
    pub commit: Option<Commit>,
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub id: String,
    /// Seconds since the epoch, UTC.
    pub time: i64,
}

impl Source {
    /// Reads every file under `prefix` (such as `recipes/`), sorted by path.
    pub fn read(&self, prefix: &str) -> Result<Content> {
        let mut content = match self {
            Source::WorkTree(dir) => Content { files: read_work_tree(dir, prefix)?, commit: None },
            Source::Git { repo, rev, path } => read_git(repo, rev, path, prefix)?,
        };
        content.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(content)
    }

    pub fn describe(&self) -> String {
        match self {
            Source::WorkTree(dir) => dir.display().to_string(),
            Source::Git { repo, rev, .. } => format!("{} at {rev}", repo.display()),
        }
    }
}

fn read_work_tree(dir: &Path, prefix: &str) -> Result<Vec<ContentFile>> {
    let root = dir.join(prefix);
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", root.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).expect("walkdir stays under its root");
        let bytes =
            std::fs::read(entry.path()).with_context(|| format!("reading {}", entry.path().display()))?;
        files.push(ContentFile { path: rel.to_string_lossy().replace('\\', "/"), bytes });
    }
    Ok(files)
}

fn read_git(repo_path: &Path, rev: &str, content_path: &str, prefix: &str) -> Result<Content> {
    let repo = git2::Repository::open(repo_path)
        .with_context(|| format!("opening git repo {}", repo_path.display()))?;
    let commit = repo
        .revparse_single(rev)
        .and_then(|object| object.peel_to_commit())
        .with_context(|| format!("resolving {rev} in {}", repo_path.display()))?;
    let tree = commit.tree()?;
    let dir = format!("{}/{}", content_path.trim_end_matches('/'), prefix.trim_end_matches('/'));
    let subtree = match tree.get_path(Path::new(&dir)) {
        Ok(entry) => repo.find_tree(entry.id()).with_context(|| format!("{dir} is not a folder"))?,
        Err(_) => anyhow::bail!("{dir} is not in {rev}"),
    };
    let mut files = Vec::new();
    let mut failure = None;
    subtree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        match repo.find_blob(entry.id()) {
            Ok(blob) => files.push(ContentFile {
                path: format!(
                    "{}/{parent}{}",
                    prefix.trim_end_matches('/'),
                    entry.name().unwrap_or_default()
                ),
                bytes: blob.content().to_vec(),
            }),
            Err(err) => {
                failure = Some(err);
                return git2::TreeWalkResult::Abort;
            }
        }
        git2::TreeWalkResult::Ok
    })?;
    if let Some(err) = failure {
        return Err(err.into());
    }
    let time = commit.time().seconds();
    Ok(Content { files, commit: Some(Commit { id: commit.id().to_string(), time }) })
}
