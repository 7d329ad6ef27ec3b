//! Architecture invariants, checked rather than hoped for (see ARCHITECTURE.md): `domain` depends
//! only on an allow-list of crates, and its clippy configuration keeps rejecting IO, clock and
//! environment calls; only `edge` knows the Worker runtime; every module says what it is for in a
//! `//!` line.

// This test reads the repository's files: domain/clippy.toml's IO rules are for the library.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The IO, clock and environment rule is clippy's (`domain/clippy.toml`, `disallowed-methods` and
/// `disallowed-types` on resolved paths, run by `scripts/test.sh`); this keeps its list from thinning.
#[test]
fn domain_clippy_rejects_io_clock_and_environment() {
    let config = std::fs::read_to_string(repo().join("domain/clippy.toml")).unwrap();
    for path in [
        "std::fs::read",
        "std::fs::write",
        "std::fs::File",
        "std::env::var",
        "std::net::TcpStream",
        "std::time::SystemTime::now",
        "std::time::Instant::now",
    ] {
        assert!(
            config.contains(&format!("path = \"{path}\"")),
            "domain/clippy.toml no longer rejects {path}"
        );
    }
}

/// `domain`'s dependencies, each chosen: a new one is added here on purpose (and must do no IO and
/// run on wasm32), never by accident.
const DOMAIN_DEPENDENCIES: [&str; 13] = [
    "serde",
    "serde_json",
    "postcard",
    "roaring",
    "rust-stemmers",
    "unicode-normalization",
    "unicode-segmentation",
    "unicode-properties",
    "sha2",
    "data-encoding",
    "url",
    "schemars",
    "minijinja",
];

#[test]
fn domain_depends_only_on_the_allowed_crates() {
    let manifest = std::fs::read_to_string(repo().join("domain/Cargo.toml")).unwrap();
    let dependencies = manifest.split("\n[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    let named: Vec<&str> = dependencies
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split(['=', '.', ' ']).next())
        .collect();
    let unexpected: Vec<&&str> = named.iter().filter(|name| !DOMAIN_DEPENDENCIES.contains(name)).collect();
    assert!(unexpected.is_empty(), "domain depends on crates outside its allow-list: {unexpected:?}");
}

#[test]
fn only_edge_knows_the_worker_runtime() {
    for krate in ["domain", "builder", "tests"] {
        let manifest = std::fs::read_to_string(repo().join(krate).join("Cargo.toml")).unwrap();
        assert!(!manifest.lines().any(|l| l.trim_start().starts_with("worker")), "{krate} depends on worker");
    }
}

#[test]
fn every_module_opens_with_a_doc_line() {
    let mut missing = Vec::new();
    for krate in ["domain/src", "builder/src", "edge/src", "tests/harness"] {
        for path in rust_files(&repo().join(krate)) {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.trim_start().starts_with("//!") {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "modules without a //! line:\n{}", missing.join("\n"));
}
