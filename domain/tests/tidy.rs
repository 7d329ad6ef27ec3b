//! Architecture invariants, checked rather than hoped for (see ARCHITECTURE.md):
//! `domain` does no IO and reads no clock, environment or randomness; only `edge` knows the Worker
//! runtime; every module says what it is for in a `//!` line.

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

/// Non-test code without comments: everything before a file's `#[cfg(test)]` module; none of a
/// `tests.rs` module file (declared under `#[cfg(test)]` by its parent).
fn code_of(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => &text,
    };
    code.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn domain_does_no_io_and_reads_no_clock_env_or_randomness() {
    let forbidden = [
        "std::fs",
        "std::net",
        "std::env",
        "std::process",
        "SystemTime",
        "Instant::now",
        "std::thread",
        "tokio",
        "reqwest",
        "worker::",
        "git2",
        "walkdir",
        "rand::",
        "getrandom",
    ];
    let mut offences = Vec::new();
    for path in rust_files(&repo().join("domain/src")) {
        let code = code_of(&path);
        for word in forbidden {
            if code.contains(word) {
                offences.push(format!("{}: uses {word}", path.display()));
            }
        }
    }
    assert!(offences.is_empty(), "domain must stay pure:\n{}", offences.join("\n"));
}

#[test]
fn domain_depends_on_no_io_crate() {
    let manifest = std::fs::read_to_string(repo().join("domain/Cargo.toml")).unwrap();
    let dependencies = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    for io_crate in ["tokio", "reqwest", "worker", "git2", "walkdir", "hyper", "getrandom", "rand"] {
        let named = dependencies.lines().any(|line| {
            line.trim_start().starts_with(&format!("{io_crate} "))
                || line.trim_start().starts_with(&format!("{io_crate}."))
        });
        assert!(!named, "domain must not depend on {io_crate}");
    }
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
