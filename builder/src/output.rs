//! The output folder: files written as new inodes and remembered for `SHA256SUMS`, and the folders a
//! build keeps beside it (`<out>.building`, `.state`, `.lock`, `.assets`, `.r2`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// One written file, for `SHA256SUMS` and `datapackage.json`.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// Writes files under the output folder and remembers what it wrote.
pub struct Out {
    pub(crate) root: PathBuf,
    written: Mutex<Vec<Written>>,
}

impl Out {
    pub(crate) fn new(root: &Path) -> Out {
        Out { root: root.to_path_buf(), written: Mutex::new(Vec::new()) }
    }

    /// Writes a new file: one of the last build is unlinked first, never rewritten in place, so the
    /// static asset hard-linked to it keeps the old bytes until the layout step relinks it.
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<Written> {
        let full = self.root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        write_new(&full, bytes)?;
        Ok(self.record(path, &sha256_hex(bytes), bytes.len() as u64))
    }

    /// Notes a file that is already in place with these contents.
    pub(crate) fn record(&self, path: &str, sha256: &str, bytes: u64) -> Written {
        let written = Written { path: path.to_string(), sha256: sha256.to_string(), bytes };
        self.written.lock().expect("no writer panics while holding the lock").push(written.clone());
        written
    }

    pub(crate) fn into_written(self) -> Vec<Written> {
        self.written.into_inner().expect("no writer panicked")
    }
}

/// Writes `path` as a new file (a new inode), whatever was there before.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            return Err(err).with_context(|| format!("replacing {}", path.display()));
        }
        _ => {}
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn sibling(out_dir: &Path, suffix: &str) -> PathBuf {
    let name = out_dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "dist".into());
    out_dir.with_file_name(format!("{name}.{suffix}"))
}

/// The Workers static assets of a build of `out_dir` (`layout.rs`).
pub fn assets_dir(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "assets")
}

/// The R2 objects of a build of `out_dir` (`layout.rs`, `local_r2.rs`).
pub fn r2_dir(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "r2")
}
