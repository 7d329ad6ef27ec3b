//! `bundle`: turns the Worker's wasm (`cargo build -p edge --target wasm32-unknown-unknown`) into the
//! folder wrangler serves and deploys (`edge/build/`): wasm-bindgen's JavaScript glue, the entry
//! shim that hands `fetch`, `queue` and `scheduled` to the wasm and starts a fresh instance after a
//! trap, and one esbuild bundle of both.
//!
//! It does what `worker-build` does for a module Worker without `wasm-opt`, with the library of the
//! `wasm-bindgen` command built in the workspace at the version the Worker links. Rejected: installing
//! `wasm-bindgen-cli` and `worker-build` with `cargo install`, which compiles two more dependency
//! trees (a test runner, an HTTP client, a downloader) for several minutes on a new machine, and would
//! fetch binaries from GitHub if the installed ones were missing (DESIGN.md, "Building the Worker").
//!
//! Usage: `bundle --wasm target/wasm32-unknown-unknown/worker/edge.wasm --out edge/build --esbuild
//! node_modules/.bin/esbuild`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::{env, fs};

use anyhow::{Context, Result, bail};
use wasm_bindgen_cli_support::Bindgen;

/// The entry module of workers-rs's `worker-build` 0.8.7 (Apache-2.0), with `$HANDLERS` for the
/// methods the wasm exports.
const SHIM: &str = include_str!("shim.js");

/// Exports of the glue that are the shim's business, not handlers.
const INTERNAL_EXPORTS: [&str; 2] = ["__wbg_reset_state", "__worker_init_state"];

/// Handlers the runtime calls with `(event, env, ctx)`; any other export is set on the entry class as
/// it is.
const EVENT_HANDLERS: [&str; 5] = ["fetch", "queue", "scheduled", "email", "connect"];

struct Args {
    wasm: PathBuf,
    out: PathBuf,
    esbuild: PathBuf,
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bundle: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args() -> Result<Args> {
    let mut args = env::args().skip(1);
    let (mut wasm, mut out, mut esbuild) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().map(PathBuf::from).with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--wasm" => wasm = Some(value),
            "--out" => out = Some(value),
            "--esbuild" => esbuild = Some(value),
            _ => bail!("unknown option {flag} (usage: bundle --wasm FILE --out DIR --esbuild FILE)"),
        }
    }
    Ok(Args {
        wasm: wasm.context("--wasm is required")?,
        out: out.context("--out is required")?,
        esbuild: esbuild.context("--esbuild is required")?,
    })
}

/// Writes the whole folder beside `out` and then puts it in `out`'s place, so a wrangler watching
/// `out` never starts from half a build.
fn run(args: &Args) -> Result<()> {
    let staging = args.out.with_extension("staging");
    if staging.exists() {
        fs::remove_dir_all(&staging).with_context(|| format!("removing {}", staging.display()))?;
    }
    fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;

    Bindgen::new()
        .input_path(&args.wasm)
        .module(true)?
        .out_name("index")
        .typescript(false)
        // The function names are 0.6 MB no one reads in production (`strip`, which would drop them in
        // cargo, drops the section of wasm features wasm-bindgen reads too).
        .remove_name_section(true)
        .reset_state_function(true)
        .force_enable_abort_handler(true)
        .generate(&staging)
        .with_context(|| format!("making the JavaScript glue of {}", args.wasm.display()))?;

    let glue = read(&staging.join("index.js"))?;
    write(&staging.join("shim.js"), &shim(&glue))?;
    write(&staging.join("package.json"), PACKAGE_JSON)?;
    esbuild(&args.esbuild, &staging)?;
    // esbuild keeps wasm-bindgen's source-phase import, which wrangler does not read.
    let bundled = read(&staging.join("index.js"))?;
    write(&staging.join("index.js"), &bundled.replace("import source ", "import "))?;
    fs::remove_file(staging.join("shim.js")).context("removing the shim once bundled")?;
    let snippets = staging.join("snippets");
    if snippets.exists() {
        fs::remove_dir_all(&snippets).context("removing the snippets once bundled")?;
    }
    fs::create_dir_all(staging.join("worker")).context("creating worker/")?;
    write(&staging.join("worker/shim.mjs"), ENTRY)?;
    write(&staging.join(".gitignore"), "*\n")?;

    if args.out.exists() {
        fs::remove_dir_all(&args.out).with_context(|| format!("removing {}", args.out.display()))?;
    }
    fs::rename(&staging, &args.out).with_context(|| format!("moving the bundle to {}", args.out.display()))
}

/// wrangler.toml's `main`: the bundle's exports.
const ENTRY: &str = "export * from '../index.js';\nexport { default } from '../index.js';\n";

const PACKAGE_JSON: &str = r#"{
  "name": "edge",
  "type": "module",
  "main": "index.js",
  "sideEffects": ["./index.js"]
}
"#;

/// The entry shim for `glue`: each exported function becomes a method of the entry class, and each
/// exported class a proxy that starts a fresh instance after the wasm trapped.
fn shim(glue: &str) -> String {
    let mut handlers = String::new();
    for name in exported_functions(glue) {
        if EVENT_HANDLERS.contains(&name) {
            handlers.push_str(&format!(
                "Entrypoint.prototype.{name} = function {name} (arg) {{\n  return exports.{name}.call(this, arg, this.env, this.ctx);\n}}\n"
            ));
        } else {
            handlers.push_str(&format!("Entrypoint.prototype.{name} = exports.{name};\n"));
        }
    }
    let mut shim = SHIM.replace("$HANDLERS", &handlers);
    for class in exported_classes(glue) {
        shim.push_str(&format!("export const {class} = new Proxy(exports.{class}, classProxyHooks);\n"));
    }
    shim
}

/// The starts of `glue`'s top-level `export` statements.
fn exports(glue: &str) -> impl Iterator<Item = &str> {
    glue.match_indices("export ").filter_map(move |(at, _)| {
        let starts_statement =
            glue[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || c == ';' || c == '}');
        starts_statement.then(|| &glue[at + "export ".len()..])
    })
}

/// The functions `glue` exports (`export function f(`, `export async function f(`, `export { g as f }`),
/// less the shim's own.
fn exported_functions(glue: &str) -> Vec<&str> {
    exports(glue)
        .filter_map(|rest| {
            let function = rest.strip_prefix("function").or_else(|| rest.strip_prefix("async function"));
            match function {
                Some(function) => function.split_once('(').map(|(name, _)| name.trim()),
                None => rest
                    .strip_prefix('{')
                    .and_then(|list| list.split_once(" as "))
                    .and_then(|(_, renamed)| renamed.split_once('}'))
                    .map(|(name, _)| name.trim()),
            }
        })
        .filter(|name| !INTERNAL_EXPORTS.contains(name))
        .collect()
}

/// The classes `glue` exports (`export class C {`, `export var C = class`).
fn exported_classes(glue: &str) -> Vec<&str> {
    exports(glue)
        .filter_map(|rest| {
            if let Some(class) = rest.strip_prefix("class ") {
                return class.split_once('{').map(|(name, _)| name.trim());
            }
            let (name, value) = rest.strip_prefix("var ")?.split_once('=')?;
            value.trim_start().starts_with("class").then(|| name.trim())
        })
        .collect()
}

/// One ES module of the shim, the glue and its snippets, minified; the wasm and the runtime's
/// modules stay imports.
fn esbuild(esbuild: &Path, folder: &Path) -> Result<()> {
    let esbuild =
        esbuild.canonicalize().with_context(|| format!("finding esbuild at {}", esbuild.display()))?;
    let status = Command::new(&esbuild)
        .args([
            "--external:./index_bg.wasm",
            "--external:cloudflare:*",
            "--format=esm",
            "--bundle",
            "./shim.js",
            "--outfile=index.js",
            "--allow-overwrite",
            "--minify",
            "--log-level=warning",
        ])
        .current_dir(folder)
        .status()
        .with_context(|| format!("running {}", esbuild.display()))?;
    if !status.success() {
        bail!("esbuild failed ({status})");
    }
    Ok(())
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLUE: &str = "import X from './index_bg.wasm';\nexport class MinifyConfig {\n}\nexport var R2Range = class {};\nexport function fetch(a, b, c) {}\nexport async function queue(a, b, c) {}\nexport { f as scheduled };\nexport function __worker_init_state() {}\nexport function __wbg_reset_state() {}\nexport function helper() {}\nconst s = 'export nothing';\n";

    #[test]
    fn the_shim_hands_events_to_the_wasm_and_wraps_its_classes() {
        assert_eq!(exported_functions(GLUE), ["fetch", "queue", "scheduled", "helper"]);
        assert_eq!(exported_classes(GLUE), ["MinifyConfig", "R2Range"]);
        let shim = shim(GLUE);
        assert!(shim.contains("Entrypoint.prototype.fetch = function fetch (arg) {\n  return exports.fetch.call(this, arg, this.env, this.ctx);\n}"));
        assert!(shim.contains("Entrypoint.prototype.helper = exports.helper;"));
        assert!(shim.contains("export const R2Range = new Proxy(exports.R2Range, classProxyHooks);"));
        assert!(!shim.contains("$HANDLERS"));
        assert!(!shim.contains("Entrypoint.prototype.__worker_init_state"));
    }
}
