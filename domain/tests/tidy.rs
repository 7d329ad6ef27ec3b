//! Architecture invariants, checked rather than hoped for (see ARCHITECTURE.md): `domain` depends
//! only on an allow-list of crates, and its clippy configuration keeps rejecting IO, clock and
//! environment calls; only `edge` knows the Worker runtime; every module says what it is for in a
//! `//!` line.
//!
//! Each rule is a function from what it reads (file texts, `cargo metadata`'s table) to the problems
//! it finds: one test runs it on the repository and finds none, another gives it a small broken
//! sample and sees it name the fault, so a checker that stopped seeing anything would fail there.

// This test reads the repository's files: domain/clippy.toml's IO rules are for the library.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

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

/// Fails a rule's test with every problem it found, one a line under `what`.
fn assert_none(what: &str, problems: &[String]) {
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Each file of a crate's library, as `uses::library_sources` gives them, with its path from the
/// repository's root (`builder/src/main.rs`).
fn library_sources_in_repo(krate: &str, root: &str) -> Vec<(PathBuf, String)> {
    uses::library_sources(&repo().join(krate).join("src"), root)
        .into_iter()
        .map(|(path, text)| (path.strip_prefix(repo()).unwrap().to_path_buf(), text))
        .collect()
}

/// A broken sample's files, each a path and its text.
fn sample_files(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files.iter().map(|(path, text)| (PathBuf::from(path), text.to_string())).collect()
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

/// What a clippy configuration lacks of the entries above: each missing, or given without a reason.
fn clippy_config_gaps(config: &toml::Table) -> Vec<String> {
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
    problems
}

#[test]
fn domain_clippy_rejects_io_clock_and_environment() {
    let text = std::fs::read_to_string(repo().join("domain/clippy.toml")).unwrap();
    let config: toml::Table = text.parse().expect("domain/clippy.toml is TOML");
    let problems = clippy_config_gaps(&config);
    assert_none("domain/clippy.toml", &problems);
}

/// A clippy configuration holding every entry above, one a line, each with a reason.
fn complete_clippy_config() -> String {
    let mut text = String::new();
    for (key, paths) in [
        ("disallowed-methods", &DOMAIN_DISALLOWED_METHODS[..]),
        ("disallowed-types", &DOMAIN_DISALLOWED_TYPES[..]),
    ] {
        text.push_str(&format!("{key} = [\n"));
        for path in paths {
            text.push_str(&format!("    {{ path = \"{path}\", reason = \"domain does no IO\" }},\n"));
        }
        text.push_str("]\n");
    }
    text
}

/// Broken samples: an IO rule commented out, a clock type left out, an environment rule without its
/// reason.
#[test]
fn a_clippy_config_missing_a_rule_or_its_reason_is_refused() {
    let gaps = |text: String| clippy_config_gaps(&text.parse().unwrap());
    assert_eq!(gaps(complete_clippy_config()), Vec::<String>::new());
    let commented_out =
        complete_clippy_config().replace("{ path = \"std::fs::read\",", "# { path = \"std::fs::read\",");
    assert_eq!(gaps(commented_out), ["disallowed-methods does not reject std::fs::read"]);
    let left_out = complete_clippy_config()
        .replace("    { path = \"std::time::SystemTime\", reason = \"domain does no IO\" },\n", "");
    assert_eq!(gaps(left_out), ["disallowed-types does not reject std::time::SystemTime"]);
    let unexplained = complete_clippy_config().replace(
        "{ path = \"std::env::var\", reason = \"domain does no IO\" }",
        "{ path = \"std::env::var\" }",
    );
    assert_eq!(gaps(unexplained), ["disallowed-methods: std::env::var gives no reason"]);
}

/// The files of `domain`'s library that turn the lint off (`allow`, `expect`) in their code.
fn lint_turned_off(files: &[(PathBuf, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| uses::code(text).contains("clippy::disallowed_"))
        .map(|(path, _)| path.display().to_string())
        .collect()
}

/// The lint stays on: no code of `domain`'s library turns the IO rule off.
#[test]
fn domain_library_never_allows_what_clippy_rejects() {
    let allowing = lint_turned_off(&uses::library_sources(&repo().join("domain/src"), "lib.rs"));
    assert_none("domain's library allows a disallowed method or type in", &allowing);
}

/// Broken samples: a function allowed to read the clock, a module expected to open files. A comment
/// naming the lint, or test code allowing it, turns nothing off.
#[test]
fn a_domain_file_allowing_what_clippy_rejects_is_refused() {
    let files = sample_files(&[
        (
            "domain/src/clock.rs",
            "//! Now.\n\
             #[allow(clippy::disallowed_methods)]\n\
             pub fn now() -> std::time::SystemTime {\n\
                 std::time::SystemTime::now()\n\
             }\n",
        ),
        (
            "domain/src/disk.rs",
            "//! Files.\n\
             #![expect(clippy::disallowed_types)]\n\
             pub type Disk = std::fs::File;\n",
        ),
        (
            "domain/src/fine.rs",
            "//! Says `clippy::disallowed_methods` in a comment.\n\
             // #[allow(clippy::disallowed_methods)]\n\
             #[cfg(test)]\n\
             #[allow(clippy::disallowed_methods)]\n\
             mod tests {}\n",
        ),
    ]);
    assert_eq!(lint_turned_off(&files), ["domain/src/clock.rs", "domain/src/disk.rs"]);
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

/// Each path of `std` (or `core`, `alloc`) the files' code names outside the allow-list above, and
/// each `extern crate`.
fn impure_std(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in files {
        let code = uses::code(text);
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
    problems
}

#[test]
fn domain_library_names_only_pure_parts_of_std() {
    let problems = impure_std(&uses::library_sources(&repo().join("domain/src"), "lib.rs"));
    assert_none("domain names parts of std that reach the world", &problems);
}

/// Broken samples: a file read, the clock and the environment read, reached by a path or a `use`
/// tree, a socket, the whole of std under another name, `extern crate`. Pure parts, the items of
/// `io` and `net` allowed, comments and test code pass.
#[test]
fn a_domain_file_reaching_the_world_through_std_is_refused() {
    let files = sample_files(&[
        (
            "domain/src/read.rs",
            "//! Reads.\n\
             pub fn recipe(path: &str) -> Vec<u8> {\n\
                 std::fs::read(path).unwrap()\n\
             }\n",
        ),
        (
            "domain/src/clock.rs",
            "//! Now.\n\
             pub fn now() -> u64 {\n\
                 std::time::SystemTime::now().elapsed().unwrap().as_secs()\n\
             }\n",
        ),
        (
            "domain/src/config.rs",
            "//! Config.\n\
             use std::{env::var, io::Read};\n\
             pub fn home() -> String {\n\
                 var(\"HOME\").unwrap()\n\
             }\n",
        ),
        (
            "domain/src/net.rs",
            "//! Calls out.\n\
             pub fn call() {\n\
                 std::net::TcpStream::connect(\"example.org:80\").unwrap();\n\
             }\n",
        ),
        ("domain/src/world.rs", "//! All of it.\nextern crate std as world;\nuse std as everything;\n"),
        (
            "domain/src/pure.rs",
            "//! Pure.\n\
             use std::collections::BTreeMap;\n\
             use std::io::Write;\n\
             // std::fs::read is not named here.\n\
             const HOST: std::net::Ipv4Addr = std::net::Ipv4Addr::LOCALHOST;\n\
             #[cfg(test)]\n\
             mod tests {\n\
                 fn fixture() -> String {\n\
                     std::fs::read_to_string(\"x\").unwrap()\n\
                 }\n\
             }\n",
        ),
    ]);
    assert_eq!(
        impure_std(&files),
        [
            "domain/src/read.rs: `std::fs::read`",
            "domain/src/clock.rs: `std::time::SystemTime::now`",
            "domain/src/config.rs: `std::env::var`",
            "domain/src/config.rs: `std::io::Read`",
            "domain/src/net.rs: `std::net::TcpStream::connect`",
            "domain/src/world.rs: `std` (the whole of std)",
            "domain/src/world.rs: `extern crate`",
        ]
    );
}

/// Each crate's dependencies as `cargo metadata` resolves them (target tables, renamed packages and
/// optional ones included), held to an allow-list per crate: a new one is added here on purpose.
/// `domain`'s must do no IO and build for wasm32.
const ALLOWED_DEPENDENCIES: [(&str, &[&str]); 5] = [
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
    // The Worker's wasm made deployable: wasm-bindgen's own library, nothing of the product.
    ("bundle", &["anyhow", "wasm-bindgen-cli-support"]),
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
            "rustc-hash",
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

fn metadata() -> Value {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(repo())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn member<'a>(metadata: &'a Value, name: &str) -> &'a Value {
    let members = metadata["workspace_members"].as_array().unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name && members.contains(&p["id"]))
        .unwrap_or_else(|| panic!("no workspace member {name}"))
}

/// Against the allow-lists above, in `cargo metadata`'s output: a member without a list, each
/// dependency off its crate's list (development ones aside) or renamed, and `edge`'s features of
/// `domain` other than its own.
fn dependencies_off_the_list(metadata: &Value) -> Vec<String> {
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
        for dependency in member(metadata, krate)["dependencies"].as_array().unwrap() {
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
    let domain = member(metadata, "edge")["dependencies"]
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
    problems
}

#[test]
fn each_crate_depends_only_on_its_allowed_crates() {
    let problems = dependencies_off_the_list(&metadata());
    assert_none("dependencies", &problems);
}

/// A workspace as `cargo metadata` reports it, which both dependency rules pass: the five crates,
/// each depending on crates of its allow-list, `edge` on `domain` with the features it may turn on.
fn sample_workspace() -> Value {
    let mut metadata = json!({ "packages": [], "workspace_members": [], "resolve": { "nodes": [] } });
    for krate in ["domain", "edge", "builder", "tests", "bundle"] {
        sample_member(&mut metadata, krate);
    }
    sample_depend(&mut metadata, "domain", "serde", json!({}));
    sample_depend(&mut metadata, "edge", "domain", json!({ "features": ["pages", "import"] }));
    sample_depend(&mut metadata, "edge", "worker", json!({}));
    sample_depend(&mut metadata, "builder", "domain", json!({ "features": ["schema"] }));
    sample_depend(&mut metadata, "tests", "domain", json!({}));
    metadata
}

/// A package of the sample, with its node in the resolved graph; a member of the workspace or one
/// from the registry.
fn sample_package(metadata: &mut Value, name: &str, id: &str) {
    let package = json!({ "name": name, "id": id, "dependencies": [] });
    metadata["packages"].as_array_mut().unwrap().push(package);
    metadata["resolve"]["nodes"].as_array_mut().unwrap().push(json!({ "id": id, "deps": [] }));
}

fn sample_member(metadata: &mut Value, name: &str) {
    let id = format!("path+file:///sample/{name}#0.1.0");
    metadata["workspace_members"].as_array_mut().unwrap().push(json!(id));
    sample_package(metadata, name, &id);
}

/// What `check` finds in the sample workspace once `sample` has broken it.
fn sample_problems(check: fn(&Value) -> Vec<String>, sample: &dyn Fn(&mut Value)) -> Vec<String> {
    let mut metadata = sample_workspace();
    sample(&mut metadata);
    check(&metadata)
}

/// `from` depends on `to` as a line of its manifest says: `fields` are what the line sets of the
/// entry `cargo metadata` reports (`kind`, `target`, `rename`, `features`), which goes in the
/// package and in the resolved graph. A crate new to the sample comes from the registry.
fn sample_depend(metadata: &mut Value, from: &str, to: &str, fields: Value) {
    let id_of = |metadata: &Value, name: &str| {
        let packages = metadata["packages"].as_array().unwrap();
        packages.iter().find(|p| p["name"] == name).map(|p| p["id"].clone())
    };
    if id_of(metadata, to).is_none() {
        sample_package(
            metadata,
            to,
            &format!("registry+https://github.com/rust-lang/crates.io-index#{to}@1.0.0"),
        );
    }
    let (from_id, to_id) = (id_of(metadata, from).unwrap(), id_of(metadata, to).unwrap());
    let mut entry = json!({
        "name": to, "kind": null, "rename": null, "target": null,
        "optional": false, "uses_default_features": true, "features": [],
    });
    for (key, value) in fields.as_object().unwrap() {
        entry[key] = value.clone();
    }
    let kinds = json!([{ "kind": entry["kind"], "target": entry["target"] }]);
    let dep = json!({ "name": to, "pkg": to_id, "dep_kinds": kinds });
    let packages = metadata["packages"].as_array_mut().unwrap();
    let package = packages.iter_mut().find(|p| p["id"] == from_id).unwrap();
    package["dependencies"].as_array_mut().unwrap().push(entry);
    let nodes = metadata["resolve"]["nodes"].as_array_mut().unwrap();
    let node = nodes.iter_mut().find(|n| n["id"] == from_id).unwrap();
    node["deps"].as_array_mut().unwrap().push(dep);
}

/// Broken samples, each one line of a manifest: a crate off the list, one brought in by a target's
/// table, one hidden under an allowed crate's name, an allowed one renamed, a build dependency off the
/// list, a new member without a list, `edge` paying for `domain`'s schemas. A development dependency
/// passes.
#[test]
fn a_dependency_off_the_allow_list_is_refused() {
    let problems = |sample: &dyn Fn(&mut Value)| sample_problems(dependencies_off_the_list, sample);
    assert_eq!(problems(&|_| {}), Vec::<String>::new());
    // reqwest = "0.12"
    assert_eq!(
        problems(&|m| sample_depend(m, "domain", "reqwest", json!({}))),
        ["domain: `reqwest` is not in its allow-list"]
    );
    // [target.'cfg(target_arch = "wasm32")'.dependencies] getrandom = "0.3"
    assert_eq!(
        problems(&|m| sample_depend(
            m,
            "domain",
            "getrandom",
            json!({ "target": "cfg(target_arch = \"wasm32\")" })
        )),
        ["domain: `getrandom` (for cfg(target_arch = \"wasm32\")) is not in its allow-list"]
    );
    // serde = { package = "reqwest", version = "0.12" }
    assert_eq!(
        problems(&|m| sample_depend(m, "domain", "reqwest", json!({ "rename": "serde" }))),
        ["domain: `reqwest` is renamed `serde`", "domain: `reqwest` is not in its allow-list"]
    );
    // json = { package = "serde_json", version = "1" }
    assert_eq!(
        problems(&|m| sample_depend(m, "builder", "serde_json", json!({ "rename": "json" }))),
        ["builder: `serde_json` is renamed `json`"]
    );
    // [build-dependencies] cc = "1"
    assert_eq!(
        problems(&|m| sample_depend(m, "domain", "cc", json!({ "kind": "build" }))),
        ["domain: `cc` is not in its allow-list"]
    );
    // [workspace] members = ["domain", "builder", "edge", "tests", "xtask"]
    assert_eq!(
        problems(&|m| sample_member(m, "xtask")),
        ["xtask: a workspace member with no allow-list here"]
    );
    // domain = { workspace = true, features = ["pages", "import", "schema"] }
    assert_eq!(
        problems(&|m| {
            let edge =
                m["packages"].as_array_mut().unwrap().iter_mut().find(|p| p["name"] == "edge").unwrap();
            edge["dependencies"][0]["features"] = json!(["pages", "import", "schema"]);
        }),
        ["edge turns on domain's features [\"import\", \"pages\", \"schema\"], not [\"import\", \"pages\"]"]
    );
    // [dev-dependencies] toml = "1"
    assert_eq!(
        problems(&|m| sample_depend(m, "domain", "toml", json!({ "kind": "dev" }))),
        Vec::<String>::new()
    );
}

/// Whether a crate other than `edge` reaches the Worker runtime, directly or through anything it
/// depends on.
fn worker_runtime_outside_edge(metadata: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let name_of = |id: &Value| {
        metadata["packages"].as_array().unwrap().iter().find(|p| p["id"] == *id).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for krate in ["domain", "builder", "tests"] {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![member(metadata, krate)["id"].clone()];
        while let Some(id) = todo.pop() {
            let node = nodes.iter().find(|n| n["id"] == id).unwrap();
            for dep in node["deps"].as_array().unwrap() {
                let normal = dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null());
                if normal && seen.insert(dep["pkg"].as_str().unwrap().to_string()) {
                    todo.push(dep["pkg"].clone());
                }
            }
        }
        let names: Vec<String> = seen.iter().map(|id| name_of(&Value::from(id.as_str()))).collect();
        for runtime in ["worker", "worker-sys", "worker-macros"] {
            if names.iter().any(|n| n == runtime) {
                problems.push(format!("{krate} depends on {runtime}, directly or not"));
            }
        }
    }
    problems
}

/// Only `edge` reaches the Worker runtime, directly or through anything it depends on.
#[test]
fn only_edge_knows_the_worker_runtime() {
    let problems = worker_runtime_outside_edge(&metadata());
    assert_none("crates reaching the Worker runtime", &problems);
}

/// Broken samples: the builder depending on `worker` (as it must to write `worker::`), `domain` on a
/// crate that depends on `worker-sys`, which the builder and the tests then reach through `domain`.
/// The tests' development dependency on `worker` passes.
#[test]
fn a_crate_reaching_the_worker_runtime_outside_edge_is_refused() {
    let problems = |sample: &dyn Fn(&mut Value)| sample_problems(worker_runtime_outside_edge, sample);
    assert_eq!(problems(&|_| {}), Vec::<String>::new());
    // worker = "0.8" in builder/Cargo.toml, for a `use worker::Request;` in its code
    assert_eq!(
        problems(&|m| sample_depend(m, "builder", "worker", json!({}))),
        ["builder depends on worker, directly or not"]
    );
    assert_eq!(
        // url = "2.5" in domain/Cargo.toml, with a version of `url` depending on worker-sys
        problems(&|m| {
            sample_depend(m, "domain", "url", json!({}));
            sample_depend(m, "url", "worker-sys", json!({}));
        }),
        [
            "domain depends on worker-sys, directly or not",
            "builder depends on worker-sys, directly or not",
            "tests depends on worker-sys, directly or not",
        ]
    );
    // [dev-dependencies] worker = "0.8" in tests/Cargo.toml
    assert_eq!(
        problems(&|m| sample_depend(m, "tests", "worker", json!({ "kind": "dev" }))),
        Vec::<String>::new()
    );
}

/// A statement of SQL in a string: `SELECT`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`, `CREATE`,
/// `WITH … AS`, in upper case as every statement of ours is written.
fn names_sql(text: &str) -> bool {
    ["SELECT ", "INSERT INTO ", "INSERT OR ", "DELETE FROM ", "CREATE TABLE", "CREATE INDEX"]
        .iter()
        .any(|keyword| text.contains(keyword))
        || text.contains("UPDATE ") && text.contains(" SET ")
}

/// The files, by their paths from the repository's root, holding SQL outside `edge/src/store/`;
/// test code is left out.
fn sql_outside_store(files: &[(PathBuf, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(path, text)| !path.starts_with("edge/src/store") && names_sql(&uses::without_tests(text)))
        .map(|(path, _)| path.display().to_string())
        .collect()
}

/// Every SQL statement sits under `edge/src/store/`, beside the D1 plumbing that alone runs one; the
/// other crates hold none (the builder reads the Worker's feeds over HTTP, never D1). Test code is
/// left out.
#[test]
fn sql_lives_under_edge_store() {
    let mut problems = Vec::new();
    for (krate, root) in [("domain", "lib.rs"), ("builder", "main.rs"), ("edge", "lib.rs")] {
        problems.extend(sql_outside_store(&library_sources_in_repo(krate, root)));
    }
    assert_none("SQL outside edge/src/store/", &problems);
}

/// Broken samples: a query in the builder, an update in one of `edge`'s routes, a table created in
/// `domain`. The store's own statements, and a test's, pass.
#[test]
fn sql_outside_edge_store_is_refused() {
    let files = sample_files(&[
        ("builder/src/feeds.rs", "//! Feeds.\nconst SHOWS: &str = \"SELECT id, url FROM shows\";\n"),
        (
            "edge/src/routes/recipes.rs",
            "//! Recipes.\nconst RENAME: &str = \"UPDATE recipes SET title = ?1 WHERE id = ?2\";\n",
        ),
        (
            "domain/src/schema.rs",
            "//! Tables.\npub const TABLE: &str = r#\"CREATE TABLE notes (id TEXT)\"#;\n",
        ),
        ("edge/src/store/recipes.rs", "//! Recipes stored.\nconst ALL: &str = \"SELECT id FROM recipes\";\n"),
        (
            "edge/src/index.rs",
            "//! Index.\n\
             #[cfg(test)]\n\
             mod tests {\n\
                 const ROWS: &str = \"SELECT 1\";\n\
             }\n",
        ),
    ]);
    assert_eq!(
        sql_outside_store(&files),
        ["builder/src/feeds.rs", "edge/src/routes/recipes.rs", "domain/src/schema.rs"]
    );
}

/// The files outside `edge`, by their paths from the repository's root, that name a header map or
/// the platform's `_headers` file, each with what it names; test code is left out.
fn headers_outside_edge(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in files {
        if path.starts_with("edge") {
            continue;
        }
        let code = uses::code(text);
        let raw = uses::without_tests(text);
        let named = ["HeaderMap", "HeaderValue", "headers_mut"]
            .iter()
            .find(|n| code.contains(*n))
            .copied()
            .or_else(|| raw.contains("\"_headers\"").then_some("_headers"));
        if let Some(named) = named {
            problems.push(format!("{}: {named}", path.display()));
        }
    }
    problems
}

/// Only `edge` answers HTTP, so only it sets response headers: no other crate's library names a
/// header map or the platform's `_headers` file (the Worker sets every header itself).
#[test]
fn only_edge_sets_http_headers() {
    let mut problems = Vec::new();
    for (krate, root) in [("domain", "lib.rs"), ("builder", "main.rs")] {
        problems.extend(headers_outside_edge(&library_sources_in_repo(krate, root)));
    }
    assert_none("response headers set outside edge", &problems);
}

/// Broken samples: the builder setting a header on a response, `domain` writing the platform's
/// `_headers` file. `edge` setting one, and a comment naming a header map, pass.
#[test]
fn an_http_header_set_outside_edge_is_refused() {
    let files = sample_files(&[
        (
            "builder/src/serve.rs",
            "//! Serves.\n\
             pub fn cache(response: &mut Response) {\n\
                 response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static(\"no-store\"));\n\
             }\n",
        ),
        ("domain/src/site.rs", "//! The site.\npub const HEADERS_FILE: &str = \"_headers\";\n"),
        ("edge/src/headers.rs", "//! Headers.\npub fn set(headers: &mut HeaderMap) {}\n"),
        ("builder/src/notes.rs", "//! Notes.\n// No HeaderMap here: the Worker sets them.\n"),
    ]);
    assert_eq!(
        headers_outside_edge(&files),
        ["builder/src/serve.rs: HeaderValue", "domain/src/site.rs: _headers"]
    );
}

/// The files whose text does not open with a `//!` line.
fn modules_without_a_doc_line(files: &[(PathBuf, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| !text.trim_start().starts_with("//!"))
        .map(|(path, _)| path.display().to_string())
        .collect()
}

#[test]
fn every_module_opens_with_a_doc_line() {
    let mut missing = Vec::new();
    for krate in ["domain/src", "builder/src", "edge/src", "tests/harness"] {
        let files: Vec<(PathBuf, String)> = rust_files(&repo().join(krate))
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).unwrap();
                (path, text)
            })
            .collect();
        missing.extend(modules_without_a_doc_line(&files));
    }
    assert_none("modules without a //! line", &missing);
}

/// Broken samples: a module opening with code, one with an item's `///` doc, one with a plain
/// comment before its `//!` line. One opening with a blank line and then its `//!` line passes.
#[test]
fn a_module_without_a_doc_line_is_refused() {
    let files = sample_files(&[
        ("builder/src/plain.rs", "use std::fs;\n"),
        ("edge/src/outer.rs", "/// A function.\npub fn f() {}\n"),
        ("domain/src/late.rs", "// Licensed.\n//! Late.\n"),
        ("tests/harness/fine.rs", "\n//! Says what it is for.\n"),
    ]);
    assert_eq!(
        modules_without_a_doc_line(&files),
        ["builder/src/plain.rs", "edge/src/outer.rs", "domain/src/late.rs"]
    );
}

/// The first paragraph of a file's `//!` doc: its opening `//!` lines up to the first blank one,
/// each without its `//!`, and the number of lines it takes.
fn first_doc_paragraph(text: &str) -> (Vec<&str>, usize) {
    let mut lines = Vec::new();
    let mut taken = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if lines.is_empty() && trimmed.is_empty() {
            taken += 1;
            continue;
        }
        let Some(doc) = trimmed.strip_prefix("//!") else { break };
        if doc.trim().is_empty() {
            break;
        }
        lines.push(doc.trim());
        taken += 1;
    }
    (lines, taken)
}

/// The words of a text that could be Rust identifiers, wherever they stand (code, comments,
/// literals).
fn identifiers(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        .collect()
}

/// The segments of a code span that reads as a Rust name or path (`foo`, `Foo::bar`, `foo()`,
/// `tools!`), or `None` for anything else (a file path, a command, a header, a number, a keyword).
fn rust_path(span: &str) -> Option<Vec<&str>> {
    let span = span.strip_suffix("()").or_else(|| span.strip_suffix('!')).unwrap_or(span);
    let segments: Vec<&str> = span.split("::").collect();
    let is_ident = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !segments.iter().all(|s| is_ident(s)) {
        return None;
    }
    if segments.len() == 1 && matches!(span, "true" | "false" | "self" | "super" | "crate" | "Self") {
        return None;
    }
    Some(segments)
}

/// The names of the crates the manifests among `files` build and depend on, with `std`, `core` and
/// `alloc`; and for each crate of the workspace, the folder its modules live in.
fn crates_of(files: &[(PathBuf, String)]) -> (Vec<String>, Vec<(String, PathBuf)>) {
    let mut crates = vec!["std".to_string(), "core".to_string(), "alloc".to_string()];
    let mut roots = Vec::new();
    for (path, text) in files.iter().filter(|(path, _)| path.ends_with("Cargo.toml")) {
        let manifest: toml::Table = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let dir = path.parent().unwrap_or(Path::new(""));
        if let Some(name) = manifest.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()) {
            let lib = manifest.get("lib").and_then(|l| l.get("path")).and_then(|p| p.as_str());
            let root = lib.map_or(dir.join("src"), |lib| dir.join(lib).parent().unwrap().to_path_buf());
            roots.push((name.replace('-', "_"), root));
            crates.push(name.replace('-', "_"));
        }
        let mut tables: Vec<&toml::Table> = Vec::new();
        for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
            tables.extend(manifest.get(key).and_then(|t| t.as_table()));
            let workspace = manifest.get("workspace").and_then(|w| w.get(key));
            tables.extend(workspace.and_then(|t| t.as_table()));
        }
        for target in manifest.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values()) {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                tables.extend(target.get(key).and_then(|t| t.as_table()));
            }
        }
        for table in tables {
            for (name, spec) in table {
                let package = spec.get("package").and_then(|p| p.as_str());
                crates.extend([name, package.unwrap_or(name)].map(|n| n.replace('-', "_")));
            }
        }
    }
    (crates, roots)
}

/// The module names below a crate's folder: every folder, and every file but `mod.rs`, `lib.rs`
/// and `main.rs`, by its stem.
fn module_names(files: &[(PathBuf, String)], root: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for (path, _) in files.iter().filter(|(path, _)| path.starts_with(root)) {
        let below = path.strip_prefix(root).unwrap();
        for part in below.with_extension("").iter() {
            let part = part.to_string_lossy();
            if !matches!(&*part, "mod" | "lib" | "main") {
                names.push(part.into_owned());
            }
        }
    }
    names
}

/// A module's first line is the map a newcomer reads; a name there that the module does not hold
/// sends them the wrong way. So every code span of each module's first `//!` paragraph that reads
/// as a Rust name or path (`foo`, `Foo`, `foo::Bar`, `Foo::bar`, `foo()`, `tools!`; not a file path,
/// a command, a header or a literal) must be one a reader can find, each told once:
///
/// - its last segment is a word of the module's own text outside that paragraph (code, comments,
///   literals: a binding or a column named in a string is found where it is named); or
/// - it is one plain word, all lower case (`admin`, a role; `podcast`, a namespace) or all upper
///   case (`INTAKE`, a binding; `AI_API_KEY`, a setting), and a word of any file of the workspace:
///   such a name is a value or a setting, read in one module and named in many; or
/// - it names a crate: a member of the workspace or a dependency of one (the manifests among the
///   files say which), or `std`; or a module of the file's own crate (a file or folder below its
///   `src`); or
/// - it is a path into a crate of the workspace (`crate::…`, `domain::…`, or through one of the
///   crate's top-level modules), and its last segment is a module of that crate or a word of the
///   module the path leads to, or of the files below it (a re-export by glob); or
/// - it is a path into a dependency, which this check does not read.
fn unfindable_doc_names(files: &[(PathBuf, String)]) -> Vec<String> {
    let (crates, roots) = crates_of(files);
    let root_of = |path: &Path| {
        roots.iter().filter(|(_, root)| path.starts_with(root)).max_by_key(|(_, root)| root.as_os_str().len())
    };
    let mut problems = Vec::new();
    for (path, text) in files.iter().filter(|(path, _)| path.extension().is_some_and(|e| e == "rs")) {
        let (paragraph, taken) = first_doc_paragraph(text);
        let rest: String = text.lines().skip(taken).collect::<Vec<_>>().join("\n");
        let own = identifiers(&rest);
        let joined = paragraph.join(" ");
        let mut seen = std::collections::BTreeSet::new();
        let spans = joined.split('`').skip(1).step_by(2).filter(|span| seen.insert(*span));
        let own_crate = root_of(path);
        let own_modules = own_crate.map(|(_, root)| module_names(files, root)).unwrap_or_default();
        for span in spans {
            let Some(segments) = rust_path(span) else { continue };
            let last = *segments.last().unwrap();
            if own.contains(last)
                || (segments.len() == 1 && crates.iter().any(|c| c == last))
                || own_modules.iter().any(|m| m == last)
            {
                continue;
            }
            let word = segments.len() == 1
                && !span.ends_with(')')
                && (last.chars().all(|c| c.is_ascii_lowercase())
                    || last.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
            if word && files.iter().any(|(_, text)| identifiers(text).contains(last)) {
                continue;
            }
            let first = segments[0];
            let workspace = match first {
                "crate" => own_crate.map(|(_, root)| (root, &segments[1..])),
                _ if own_modules.iter().any(|m| m == first) => {
                    own_crate.map(|(_, root)| (root, &segments[..]))
                }
                _ => roots.iter().find(|(name, _)| name == first).map(|(_, root)| (root, &segments[1..])),
            };
            let found = match workspace {
                Some((root, rest)) => {
                    // The deepest module the path names, then the words of its files.
                    let mut dir = root.clone();
                    for segment in rest {
                        if !files.iter().any(|(p, _)| {
                            p.starts_with(dir.join(segment)) || *p == dir.join(format!("{segment}.rs"))
                        }) {
                            break;
                        }
                        dir = dir.join(segment);
                    }
                    module_names(files, root).iter().any(|m| m == last)
                        || files
                            .iter()
                            .filter(|(p, _)| p.starts_with(&dir) || *p == dir.with_extension("rs"))
                            .any(|(_, text)| identifiers(text).contains(last))
                }
                None => segments.len() > 1 && crates.iter().any(|c| c == first),
            };
            if !found {
                problems.push(format!("{}: `{span}`", path.display()));
            }
        }
    }
    problems
}

#[test]
fn every_module_doc_names_what_a_reader_can_find() {
    let mut files = Vec::new();
    for manifest in
        ["Cargo.toml", "domain/Cargo.toml", "builder/Cargo.toml", "edge/Cargo.toml", "tests/Cargo.toml"]
    {
        files.push((PathBuf::from(manifest), std::fs::read_to_string(repo().join(manifest)).unwrap()));
    }
    for krate in ["domain/src", "builder/src", "edge/src", "tests/harness"] {
        for path in rust_files(&repo().join(krate)) {
            let text = std::fs::read_to_string(&path).unwrap();
            files.push((path.strip_prefix(repo()).unwrap().to_path_buf(), text));
        }
    }
    let problems = unfindable_doc_names(&files);
    assert_none("names in a module's first doc paragraph that the module does not hold", &problems);
}

/// Broken samples: a function the module does not have, a method its type lost, a path into a module
/// of the crate that does not hold the name, a path into another crate of the workspace that leads
/// nowhere, a name found only in the paragraph itself (told once however often it stands there).
/// The good module names its own items, a word in one of its literals, crates, a module of its
/// crate, paths that resolve, settings and roles read elsewhere, and spans that are no Rust names
/// (routes, files, numbers, commands, headers); a name in a later paragraph is not read.
#[test]
fn a_module_doc_naming_what_the_module_lacks_is_refused() {
    let files = sample_files(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"domain\", \"edge\"]\n[workspace.dependencies]\nserde = \"1\"\n",
        ),
        ("domain/Cargo.toml", "[package]\nname = \"domain\"\n[dependencies]\nrust-stemmers = \"1\"\n"),
        (
            "edge/Cargo.toml",
            "[package]\nname = \"edge\"\n[dependencies]\ndomain = { path = \"../domain\" }\n",
        ),
        ("domain/src/lib.rs", "//! The core.\npub mod search;\npub mod site;\n"),
        (
            "domain/src/search.rs",
            "//! The index, read by `Index::lookup()`.\n\
             pub struct Index;\n\
             impl Index {\n    pub fn find() {}\n}\n",
        ),
        ("domain/src/site/mod.rs", "//! Policy.\npub mod layout;\n"),
        ("domain/src/site/layout.rs", "//! Where files live.\npub struct Root;\n"),
        ("edge/src/pages.rs", "//! Recipe pages, rendered by `render_recipe`.\npub fn page() {}\n"),
        (
            "edge/src/routes/feed.rs",
            "//! The change feed, read through `crate::store::changes::page_of`.\n\
             pub fn feed() {}\n",
        ),
        ("edge/src/store/changes.rs", "//! Its rows.\npub fn rows() {}\n// The editor or admin role.\n"),
        (
            "edge/src/assets.rs",
            "//! Built files, found through `domain::site::layout::Directory` and `Cache`, a `Cache`.\n\
             pub fn serve() {}\n",
        ),
        (
            "edge/src/lib.rs",
            "//! The Worker: `serve()` over `domain::site::layout::Root` (`domain`, `serde::Serialize`,\n\
             //! `rust_stemmers`), a `store` of `changes`, `SITE_HOSTS` and the `admin` role;\n\
             //! `GET /api/changes`, `dist/`, `lib.rs`, `404`, `true`, `builder build --git`,\n\
             //! `Content-Security-Policy`.\n\
             //!\n\
             //! `Nowhere` is in the second paragraph.\n\
             pub fn serve() {\n    let hosts = \"SITE_HOSTS\";\n}\n",
        ),
    ]);
    assert_eq!(
        unfindable_doc_names(&files),
        [
            "domain/src/search.rs: `Index::lookup()`",
            "edge/src/pages.rs: `render_recipe`",
            "edge/src/routes/feed.rs: `crate::store::changes::page_of`",
            "edge/src/assets.rs: `domain::site::layout::Directory`",
            "edge/src/assets.rs: `Cache`",
        ]
    );
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
        let src = repo().join(krate).join("src");
        let files: Vec<(PathBuf, String)> = uses::library_sources(&src, root)
            .into_iter()
            .map(|(path, text)| (path.strip_prefix(&src).unwrap().to_path_buf(), text))
            .collect();
        cycles.extend(uses::cycles(krate, &files));
    }
    assert_none("import cycles between modules", &cycles);
}

/// Broken samples: two modules using each other, three in a ring, two children of a module using
/// each other through `super::`. A parent and its child using each other, a use in test code and one
/// in a comment pass.
#[test]
fn an_import_cycle_between_modules_is_refused() {
    let two = sample_files(&[
        ("lib.rs", "//! Root.\nmod recipe;\nmod search;\n"),
        ("recipe.rs", "//! Recipes.\nuse crate::search::Index;\npub struct Recipe;\n"),
        ("search.rs", "//! Search.\npub struct Index(Vec<crate::recipe::Recipe>);\n"),
    ]);
    assert_eq!(
        uses::cycles("domain", &two),
        [
            "  domain, in crate: recipe -> search, e.g. recipe.rs: crate::search::Index",
            "  domain, in crate: search -> recipe, e.g. search.rs: crate::recipe::Recipe",
        ]
    );
    let three = sample_files(&[
        ("main.rs", "//! Root.\nmod a;\nmod b;\nmod c;\nuse a::A;\n"),
        ("a.rs", "//! A.\nuse crate::b::B;\npub struct A;\n"),
        ("b/mod.rs", "//! B.\nmod inner;\npub use inner::B;\n"),
        ("b/inner.rs", "//! Inside B.\npub struct B(super::super::c::C);\n"),
        ("c.rs", "//! C.\npub struct C(Box<super::a::A>);\n"),
    ]);
    assert_eq!(
        uses::cycles("builder", &three),
        [
            "  builder, in crate: a -> b, e.g. a.rs: crate::b::B",
            "  builder, in crate: b -> c, e.g. b/inner.rs: super::super::c::C",
            "  builder, in crate: c -> a, e.g. c.rs: super::a::A",
        ]
    );
    let nested = sample_files(&[
        ("lib.rs", "//! Root.\nmod store;\n"),
        ("store/mod.rs", "//! Store.\nmod accounts;\nmod recipes;\n"),
        ("store/accounts.rs", "//! Accounts.\nuse super::recipes::owner;\n"),
        ("store/recipes.rs", "//! Recipes.\npub fn owner() -> crate::store::accounts::Id {}\n"),
    ]);
    assert_eq!(
        uses::cycles("edge", &nested),
        [
            "  edge, in store: accounts -> recipes, e.g. store/accounts.rs: super::recipes::owner",
            "  edge, in store: recipes -> accounts, e.g. store/recipes.rs: crate::store::accounts::Id",
        ]
    );
    let fine = sample_files(&[
        ("lib.rs", "//! Root.\nmod recipe;\nmod search;\npub use recipe::Recipe;\npub struct Lang;\n"),
        (
            "recipe.rs",
            "//! Recipes.\n\
             use crate::Lang;\n\
             // Not crate::search::Index: search uses us.\n\
             pub struct Recipe;\n\
             #[cfg(test)]\n\
             mod tests {\n\
                 use crate::search::Index;\n\
             }\n",
        ),
        ("search.rs", "//! Search.\nuse crate::recipe::Recipe;\npub struct Index;\n"),
    ]);
    assert_eq!(uses::cycles("domain", &fine), Vec::<String>::new());
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

    /// Each file of a crate's library below `root` (test modules left out) with its text, found by
    /// following the `mod` declarations from `root`.
    pub fn library_sources(src: &Path, root: &str) -> Vec<(PathBuf, String)> {
        let mut files = Vec::new();
        let mut todo = vec![(src.join(root), true)];
        while let Some((path, is_root)) = todo.pop() {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let dir = if is_root || path.ends_with("mod.rs") {
                path.parent().unwrap().to_path_buf()
            } else {
                path.with_extension("")
            };
            for (name, in_file) in declared_modules(&code(&text)) {
                if in_file {
                    continue;
                }
                let flat = dir.join(format!("{name}.rs"));
                todo.push((if flat.exists() { flat } else { dir.join(name).join("mod.rs") }, false));
            }
            files.push((path, text));
        }
        files
    }

    /// The code of a file's text: comments and literals blanked, test items left out.
    pub fn code(text: &str) -> String {
        without_tests(&blanked(text))
    }

    /// The module a file holds, by its path below the crate's `src`: `lib.rs` or `main.rs` is the
    /// crate, `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`.
    fn module_of(path: &Path) -> Module {
        let mut module: Module =
            path.with_extension("").iter().map(|s| s.to_string_lossy().into_owned()).collect();
        if module.last().is_some_and(|m| m == "mod")
            || module.len() == 1 && matches!(module[0].as_str(), "lib" | "main")
        {
            module.pop();
        }
        module
    }

    /// Each cycle, in a crate's library given as its files by their paths below `src`, as
    /// `a -> b -> … -> a` with, for every arrow, one file and the path it names.
    pub fn cycles(krate: &str, sources: &[(PathBuf, String)]) -> Vec<String> {
        let files: Vec<(&PathBuf, File)> = sources
            .iter()
            .map(|(path, text)| {
                let code = code(text);
                let children = declared_modules(&code).into_iter().map(|(name, _)| name).collect();
                (path, File { module: module_of(path), children, code })
            })
            .collect();
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
                let shown = path.display().to_string();
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
                    found.push(format!("  {krate}, in {place}: {a} -> {b}, e.g. {example}"));
                }
            }
        }
        found
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
