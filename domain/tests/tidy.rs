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

/// Every entry `domain/clippy.toml` must hold: `disallowed-methods` and `disallowed-types` on
/// resolved paths, each with a reason. Clippy runs them in the README's test command with warnings
/// denied; the file is read as TOML, so an entry commented out or misspelt is missing here.
const DOMAIN_DISALLOWED_METHODS: [&str; 28] = [
    "std::time::SystemTime::now",
    "std::time::Instant::now",
    "std::env::var",
    "std::env::var_os",
    "std::env::vars",
    "std::env::args",
    "std::env::current_dir",
    "std::env::temp_dir",
    "std::fs::read",
    "std::fs::read_to_string",
    "std::fs::read_dir",
    "std::fs::write",
    "std::fs::create_dir",
    "std::fs::create_dir_all",
    "std::fs::remove_file",
    "std::fs::remove_dir_all",
    "std::fs::rename",
    "std::fs::copy",
    "std::fs::metadata",
    "std::fs::File::open",
    "std::fs::File::create",
    "std::net::TcpStream::connect",
    "std::net::TcpListener::bind",
    "std::net::UdpSocket::bind",
    "std::net::ToSocketAddrs::to_socket_addrs",
    "std::process::Command::new",
    "std::thread::spawn",
    "std::thread::sleep",
];
const DOMAIN_DISALLOWED_TYPES: [&str; 7] = [
    "std::fs::File",
    "std::fs::OpenOptions",
    "std::net::TcpStream",
    "std::net::TcpListener",
    "std::net::UdpSocket",
    "std::time::SystemTime",
    "std::time::Instant",
];

#[test]
fn domain_clippy_rejects_io_clock_and_environment() {
    let text = std::fs::read_to_string(repo().join("domain/clippy.toml")).unwrap();
    let config: toml::Table = text.parse().expect("domain/clippy.toml is TOML");
    let mut problems = Vec::new();
    for (key, required) in [
        ("disallowed-methods", &DOMAIN_DISALLOWED_METHODS[..]),
        ("disallowed-types", &DOMAIN_DISALLOWED_TYPES[..]),
    ] {
        let entries = config.get(key).and_then(toml::Value::as_array).cloned().unwrap_or_default();
        let listed: Vec<(&str, &str)> = entries
            .iter()
            .filter_map(|entry| {
                let path = entry.get("path")?.as_str()?;
                Some((path, entry.get("reason").and_then(toml::Value::as_str).unwrap_or("")))
            })
            .collect();
        for path in required {
            match listed.iter().find(|(listed, _)| listed == path) {
                None => problems.push(format!("{key} does not reject {path}")),
                Some((_, "")) => problems.push(format!("{key}: {path} gives no reason")),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "domain/clippy.toml:\n{}", problems.join("\n"));
}

/// The lint stays on: no code of `domain`'s library turns the IO rule off.
#[test]
fn domain_library_never_allows_what_clippy_rejects() {
    let files = uses::library_files(&repo().join("domain/src"), "lib.rs");
    let allowing: Vec<String> = files
        .iter()
        .filter(|(_, code)| code.contains("clippy::disallowed_"))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(
        allowing.is_empty(),
        "domain's library allows a disallowed method or type in:\n{}",
        allowing.join("\n")
    );
}

/// What `domain`'s library may name of `std` (or `core`, `alloc`): an allow-list of pure parts, so a
/// new way to reach the world (`std::fs::canonicalize`, `std::io::stdin`, `std::os`) fails here even
/// before clippy's list names it. Two modules are allowed by item, never whole: `io` for its `Write`
/// trait and its `Result` (a byte counter implements it), `net` for its address types (the rules
/// about which addresses a user may name; sockets stay out).
const DOMAIN_STD_MODULES: [&str; 27] = [
    "alloc",
    "any",
    "array",
    "borrow",
    "boxed",
    "cell",
    "char",
    "cmp",
    "collections",
    "convert",
    "default",
    "error",
    "fmt",
    "hash",
    "iter",
    "marker",
    "mem",
    "num",
    "ops",
    "option",
    "rc",
    "result",
    "slice",
    "str",
    "string",
    "sync",
    "vec",
];
const DOMAIN_STD_ITEMS: [(&str, &[&str]); 2] =
    [("io", &["Write", "Result"]), ("net", &["IpAddr", "Ipv4Addr", "Ipv6Addr"])];

#[test]
fn domain_library_names_only_pure_parts_of_std() {
    let mut problems = Vec::new();
    for (path, code) in uses::library_files(&repo().join("domain/src"), "lib.rs") {
        for named in uses::paths(&code) {
            let named: Vec<&str> = named.iter().map(String::as_str).collect();
            let Some(at) = named.iter().position(|s| matches!(*s, "std" | "core" | "alloc")) else {
                continue;
            };
            if at != 0 {
                continue;
            }
            let shown = named.join("::");
            match named.get(1) {
                None => problems.push(format!("{}: `{shown}` (the whole of std)", path.display())),
                Some(module)
                    if DOMAIN_STD_ITEMS.iter().any(|(allowed, items)| {
                        allowed == module && named.get(2).is_some_and(|item| items.contains(item))
                    }) => {}
                Some(module) if DOMAIN_STD_MODULES.contains(module) => {}
                Some(_) => problems.push(format!("{}: `{shown}`", path.display())),
            }
        }
        if code.contains("extern crate") {
            problems.push(format!("{}: `extern crate`", path.display()));
        }
    }
    assert!(problems.is_empty(), "domain names parts of std that reach the world:\n{}", problems.join("\n"));
}

/// Each crate's dependencies as `cargo metadata` resolves them (target tables, renamed packages and
/// optional ones included), held to an allow-list per crate: a new one is added here on purpose.
/// `domain`'s must do no IO and build for wasm32.
const ALLOWED_DEPENDENCIES: [(&str, &[&str]); 4] = [
    (
        "domain",
        &[
            "serde",
            "serde_json",
            "postcard",
            "roaring",
            // The phrase index's passage blocks and page copies: LZ4 blocks (pure Rust, wasm32).
            "lz4_flex",
            // The phrase index's filter of frequent grams: binary fuse filters (no_std, wasm32).
            "xorf",
            "rust-stemmers",
            "unicode-normalization",
            "unicode-segmentation",
            "unicode-properties",
            "sha2",
            "data-encoding",
            "url",
            // Shows' feeds: RSS 2.0 (rust-syndication's reader over quick-xml) and HTML entities.
            "rss",
            "html-escape",
            // An episode page's feed link: a WHATWG HTML tokenizer.
            "html5gum",
            "schemars",
            "minijinja",
            // Two transcription runs compared word by word: patience and Myers diffs (no dependencies).
            "similar",
            // Cooklang in (feature `import`): the format's official parser, and its YAML front matter.
            "cooklang",
            "serde_yaml",
        ],
    ),
    ("edge", &["domain", "serde", "serde_json", "worker", "futures", "sha2", "minijinja", "getrandom"]),
    (
        "builder",
        &[
            "domain",
            "schemars",
            "serde",
            "serde_json",
            "walkdir",
            "git2",
            "rayon",
            "indicatif",
            "anyhow",
            "clap",
            "sha2",
            "data-encoding",
            "postcard",
            "tokio",
            "reqwest",
            "time",
            "mimalloc",
            "jsonc-parser",
            "resvg",
            "png",
            "imagesize",
            "scraper",
            "zip",
            "spdx",
            // Speaker embeddings: weights, FFT, resampling, voice activity.
            "safetensors",
            "realfft",
            "rubato",
            "audioadapter-buffers",
            "webrtc-vad",
            "ndarray",
            "symphonia",
        ],
    ),
    (
        "tests",
        &[
            "expect-test",
            "tokio",
            "reqwest",
            "serde_json",
            "anyhow",
            "libc",
            "futures",
            "url",
            "data-encoding",
            "git2",
            "walkdir",
            "domain",
            "rmcp",
        ],
    ),
];

/// The Worker pays for each of `domain`'s features it turns on: pages and imports, never schemas.
const EDGE_DOMAIN_FEATURES: [&str; 2] = ["import", "pages"];

fn metadata() -> serde_json::Value {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(repo())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn member<'a>(metadata: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let members = metadata["workspace_members"].as_array().unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name && members.contains(&p["id"]))
        .unwrap_or_else(|| panic!("no workspace member {name}"))
}

#[test]
fn each_crate_depends_only_on_its_allowed_crates() {
    let metadata = metadata();
    let mut problems = Vec::new();
    let members: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| metadata["workspace_members"].as_array().unwrap().contains(&p["id"]))
        .filter_map(|p| p["name"].as_str())
        .collect();
    for name in &members {
        if !ALLOWED_DEPENDENCIES.iter().any(|(krate, _)| krate == name) {
            problems.push(format!("{name}: a workspace member with no allow-list here"));
        }
    }
    for (krate, allowed) in ALLOWED_DEPENDENCIES {
        for dependency in member(&metadata, krate)["dependencies"].as_array().unwrap() {
            if dependency["kind"] == "dev" {
                continue;
            }
            let package = dependency["name"].as_str().unwrap();
            let target = dependency["target"].as_str().map(|t| format!(" (for {t})")).unwrap_or_default();
            if let Some(rename) = dependency["rename"].as_str() {
                problems.push(format!("{krate}: `{package}` is renamed `{rename}`{target}"));
            }
            if !allowed.contains(&package) {
                problems.push(format!("{krate}: `{package}`{target} is not in its allow-list"));
            }
        }
    }
    let domain = member(&metadata, "edge")["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "domain")
        .unwrap();
    let mut features: Vec<&str> =
        domain["features"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    features.sort_unstable();
    if features != EDGE_DOMAIN_FEATURES || domain["uses_default_features"] != true {
        problems.push(format!("edge turns on domain's features {features:?}, not {EDGE_DOMAIN_FEATURES:?}"));
    }
    assert!(problems.is_empty(), "dependencies:\n{}", problems.join("\n"));
}

/// Only `edge` reaches the Worker runtime, directly or through anything it depends on.
#[test]
fn only_edge_knows_the_worker_runtime() {
    let metadata = metadata();
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let name_of = |id: &serde_json::Value| {
        metadata["packages"].as_array().unwrap().iter().find(|p| p["id"] == *id).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for krate in ["domain", "builder", "tests"] {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![member(&metadata, krate)["id"].clone()];
        while let Some(id) = todo.pop() {
            let node = nodes.iter().find(|n| n["id"] == id).unwrap();
            for dep in node["deps"].as_array().unwrap() {
                let normal = dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null());
                if normal && seen.insert(dep["pkg"].as_str().unwrap().to_string()) {
                    todo.push(dep["pkg"].clone());
                }
            }
        }
        let names: Vec<String> =
            seen.iter().map(|id| name_of(&serde_json::Value::from(id.as_str()))).collect();
        for runtime in ["worker", "worker-sys", "worker-macros"] {
            assert!(!names.iter().any(|n| n == runtime), "{krate} depends on {runtime}, directly or not");
        }
    }
}

/// A statement of SQL in a string: `SELECT`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`, `CREATE`,
/// `WITH … AS`, in upper case as every statement of ours is written.
fn names_sql(text: &str) -> bool {
    ["SELECT ", "INSERT INTO ", "INSERT OR ", "DELETE FROM ", "CREATE TABLE", "CREATE INDEX"]
        .iter()
        .any(|keyword| text.contains(keyword))
        || text.contains("UPDATE ") && text.contains(" SET ")
}

/// Every SQL statement sits under `edge/src/store/`, beside the D1 plumbing that alone runs one; the
/// other crates hold none (the builder reads the Worker's feeds over HTTP, never D1). Test code is
/// left out.
#[test]
fn sql_lives_under_edge_store() {
    let mut problems = Vec::new();
    for (krate, root) in [("domain", "lib.rs"), ("builder", "main.rs"), ("edge", "lib.rs")] {
        let src = repo().join(krate).join("src");
        for (path, _) in uses::library_files(&src, root) {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = uses::without_tests(&text);
            let under_store = path.strip_prefix(repo().join("edge/src/store")).is_ok();
            if !under_store && names_sql(&code) {
                problems.push(path.strip_prefix(repo()).unwrap_or(&path).display().to_string());
            }
        }
    }
    assert!(problems.is_empty(), "SQL outside edge/src/store/:\n{}", problems.join("\n"));
}

/// Only `edge` answers HTTP, so only it sets response headers: no other crate's library names a
/// header map or the platform's `_headers` file (the Worker sets every header itself).
#[test]
fn only_edge_sets_http_headers() {
    let mut problems = Vec::new();
    for (krate, root) in [("domain", "lib.rs"), ("builder", "main.rs")] {
        for (path, code) in uses::library_files(&repo().join(krate).join("src"), root) {
            let raw = uses::without_tests(&std::fs::read_to_string(&path).unwrap());
            let named = ["HeaderMap", "HeaderValue", "headers_mut"]
                .iter()
                .find(|n| code.contains(*n))
                .copied()
                .or_else(|| raw.contains("\"_headers\"").then_some("_headers"));
            if let Some(named) = named {
                problems.push(format!("{}: {named}", path.strip_prefix(repo()).unwrap_or(&path).display()));
            }
        }
    }
    assert!(problems.is_empty(), "response headers set outside edge:\n{}", problems.join("\n"));
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

/// No import cycle between modules: in each of the three crates, sibling modules (with everything
/// below them) use each other in one direction only, so each can be read, and moved, before the ones
/// that use it. A module and its own parent may use each other (a parent declares and re-exports its
/// children); test code is left out. The check reads `use` trees and `crate::`/`super::`/`self::`
/// paths, and paths through a module the file declares, from the text with comments and literals
/// blanked.
#[test]
fn no_import_cycles_between_modules() {
    let mut cycles = Vec::new();
    for (krate, root) in [("domain", "lib.rs"), ("builder", "main.rs"), ("edge", "lib.rs")] {
        cycles.extend(uses::cycles(&repo().join(krate).join("src"), root));
    }
    assert!(cycles.is_empty(), "import cycles between modules:\n{}", cycles.join("\n"));
}

mod uses {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    type Module = Vec<String>;

    struct File {
        module: Module,
        /// The modules this file declares with `mod name;` or `mod name { … }`, test modules left out.
        children: Vec<String>,
        code: String,
    }

    /// Each file of a crate's library below `root` (test modules left out), as code with comments and
    /// literals blanked.
    pub fn library_files(src: &Path, root: &str) -> Vec<(PathBuf, String)> {
        read_tree(src, root).into_iter().map(|(path, file)| (path, file.code)).collect()
    }

    /// Each cycle as `a -> b -> … -> a` with, for every arrow, one file and the path it names.
    pub fn cycles(src: &Path, root: &str) -> Vec<String> {
        let files = read_tree(src, root);
        let modules: BTreeSet<Module> = files.iter().map(|(_, f)| f.module.clone()).collect();
        // Per parent module, arrows between its children, each with an example.
        let mut arrows: BTreeMap<Module, BTreeMap<(String, String), String>> = BTreeMap::new();
        for (path, file) in &files {
            for named in paths(&file.code) {
                let Some(target) = resolve(&file.module, &file.children, &named, &modules) else { continue };
                let common = file.module.iter().zip(&target).take_while(|(a, b)| a == b).count();
                if common == file.module.len() || common == target.len() {
                    continue; // a module and one of its ancestors
                }
                let parent = file.module[..common].to_vec();
                let arrow = (file.module[common].clone(), target[common].clone());
                let shown = path.strip_prefix(src).unwrap_or(path).display().to_string();
                arrows
                    .entry(parent)
                    .or_default()
                    .entry(arrow)
                    .or_insert(format!("{shown}: {}", named.join("::")));
            }
        }
        let mut found = Vec::new();
        for (parent, arrows) in arrows {
            let reaches = |from: &str, to: &str| {
                let mut seen = BTreeSet::from([from.to_string()]);
                let mut todo = vec![from.to_string()];
                while let Some(node) = todo.pop() {
                    for (a, b) in arrows.keys() {
                        if *a == node && seen.insert(b.clone()) {
                            todo.push(b.clone());
                        }
                    }
                }
                seen.contains(to)
            };
            let mut reported = BTreeSet::new();
            for ((a, b), example) in &arrows {
                if reaches(b, a) && reported.insert((a.clone(), b.clone())) {
                    let place = if parent.is_empty() { "crate".to_string() } else { parent.join("::") };
                    let krate = src.parent().and_then(Path::file_name).unwrap_or_default().display();
                    found.push(format!("  {krate}, in {place}: {a} -> {b}, e.g. {example}"));
                }
            }
        }
        found
    }

    fn read_tree(src: &Path, root: &str) -> Vec<(PathBuf, File)> {
        let mut files = Vec::new();
        let mut todo = vec![(src.join(root), Module::new())];
        while let Some((path, module)) = todo.pop() {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let code = without_tests(&blanked(&text));
            let children = declared_modules(&code);
            let dir = if module.is_empty() || path.ends_with("mod.rs") {
                path.parent().unwrap().to_path_buf()
            } else {
                path.with_extension("")
            };
            for (name, in_file) in &children {
                if *in_file {
                    continue;
                }
                let mut child = module.clone();
                child.push(name.clone());
                let flat = dir.join(format!("{name}.rs"));
                todo.push((if flat.exists() { flat } else { dir.join(name).join("mod.rs") }, child));
            }
            let children = children.into_iter().map(|(name, _)| name).collect();
            files.push((path, File { module, children, code }));
        }
        files
    }

    /// The text with comments, string literals and character literals replaced by spaces.
    fn blanked(text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let at = |i: usize| chars.get(i).copied().unwrap_or(' ');
        while i < chars.len() {
            let start = i;
            if chars[i] == '/' && at(i + 1) == '/' {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            } else if chars[i] == '/' && at(i + 1) == '*' {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            } else if (chars[i] == 'r' || (chars[i] == 'b' && at(i + 1) == 'r'))
                && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
                && {
                    let from = if chars[i] == 'b' { i + 2 } else { i + 1 };
                    let hashes = chars[from..].iter().take_while(|c| **c == '#').count();
                    chars.get(from + hashes) == Some(&'"')
                }
            {
                let from = if chars[i] == 'b' { i + 2 } else { i + 1 };
                let hashes = chars[from..].iter().take_while(|c| **c == '#').count();
                i = from + hashes + 1;
                let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                while i < chars.len() && !chars[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
            } else if chars[i] == '"' {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else if chars[i] == '\'' && (at(i + 2) == '\'' || at(i + 1) == '\\') {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            let end = i.min(chars.len());
            out.extend(chars[start..end].iter().map(|c| if *c == '\n' { '\n' } else { ' ' }));
            i = end;
        }
        out
    }

    /// Blanks every item under `#[cfg(test)]`: up to its `;`, or through its braces.
    pub fn without_tests(code: &str) -> String {
        let mut code = code.to_string();
        while let Some(at) = code.find("#[cfg(test)]") {
            let bytes = code.as_bytes();
            let mut end = at;
            let mut depth = 0;
            while end < bytes.len() {
                match bytes[end] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' if depth == 0 => break,
                    _ => {}
                }
                end += 1;
            }
            let blank: String = code[at..=end.min(bytes.len() - 1)]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' })
                .collect();
            code.replace_range(at..=end.min(bytes.len() - 1), &blank);
        }
        code
    }

    fn tokens(code: &str) -> Vec<&str> {
        let mut tokens = Vec::new();
        let mut i = 0;
        let bytes = code.as_bytes();
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                tokens.push(&code[start..i]);
            } else if code[i..].starts_with("::") {
                tokens.push("::");
                i += 2;
            } else {
                if !c.is_ascii_whitespace() {
                    tokens.push(&code[i..i + 1]);
                }
                i += 1;
            }
        }
        tokens
    }

    /// `(name, declared inline)` for each `mod name;` and `mod name { … }`.
    fn declared_modules(code: &str) -> Vec<(String, bool)> {
        let tokens = tokens(code);
        tokens
            .windows(3)
            .filter(|w| w[0] == "mod" && (w[2] == ";" || w[2] == "{"))
            .map(|w| (w[1].to_string(), w[2] == "{"))
            .collect()
    }

    /// Every path the code names: each leaf of each `use` tree, and each other path of two or more
    /// segments.
    pub fn paths(code: &str) -> Vec<Vec<String>> {
        let tokens = tokens(code);
        let mut found = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == "use" && (i == 0 || matches!(tokens[i - 1], ";" | "{" | "}" | "pub" | ")" | "]"))
            {
                let end = tokens[i..].iter().position(|t| *t == ";").map_or(tokens.len(), |n| i + n);
                use_tree(&tokens[i + 1..end], Vec::new(), &mut found);
                i = end;
                continue;
            }
            let is_ident = |t: &str| t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
            if is_ident(tokens[i]) && tokens.get(i + 1) == Some(&"::") && (i == 0 || tokens[i - 1] != "::") {
                let mut path = vec![tokens[i].to_string()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&"::") && tokens.get(j + 1).is_some_and(|t| is_ident(t)) {
                    path.push(tokens[j + 1].to_string());
                    j += 2;
                }
                found.push(path);
                i = j;
                continue;
            }
            i += 1;
        }
        found
    }

    fn use_tree(tokens: &[&str], prefix: Vec<String>, found: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i] {
                "::" => {}
                "{" => {
                    let mut depth = 0;
                    let mut start = i + 1;
                    for j in i..tokens.len() {
                        match tokens[j] {
                            "{" => depth += 1,
                            "}" => {
                                depth -= 1;
                                if depth == 0 {
                                    use_tree(&tokens[start..j], path.clone(), found);
                                    break;
                                }
                            }
                            "," if depth == 1 => {
                                use_tree(&tokens[start..j], path.clone(), found);
                                start = j + 1;
                            }
                            _ => {}
                        }
                    }
                    return;
                }
                "as" | "*" => break,
                "self" if !path.is_empty() => {}
                name => path.push(name.to_string()),
            }
            i += 1;
        }
        if !path.is_empty() {
            found.push(path);
        }
    }

    /// The module a path leads into, or `None` for another crate's.
    fn resolve(
        module: &Module,
        children: &[String],
        path: &[String],
        modules: &BTreeSet<Module>,
    ) -> Option<Module> {
        let mut at = module.clone();
        let mut rest = path;
        match path.first()?.as_str() {
            "crate" => {
                at.clear();
                rest = &path[1..];
            }
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop();
                    rest = &rest[1..];
                }
            }
            first if children.iter().any(|c| c == first) => {}
            _ => return None,
        }
        for segment in rest {
            let mut deeper = at.clone();
            deeper.push(segment.clone());
            if !modules.contains(&deeper) {
                break;
            }
            at = deeper;
        }
        Some(at)
    }
}
