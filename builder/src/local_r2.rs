//! The local R2s a build is served from. `scripts/r2-local.sh OUT STATE` puts the packs of the build
//! in OUT into the local R2 kept in STATE (a `wrangler dev --persist-to` folder) and notes STATE in
//! `OUT.r2/local-r2.txt`; from then on every `builder build --out OUT` puts its new packs into each
//! noted local R2 before it switches `root.json` (`layout.rs`). So a running local server never
//! reads a directory that names a pack its R2 lacks, whoever runs the build: wrangler's watcher
//! (`scripts/dev.sh`), a contributor by hand in another terminal, or a test.
//!
//! Filling a local R2 is wrangler's job (`wrangler r2 bulk put --local`), so the builder runs the
//! script that asks it rather than writing wrangler's storage itself. The alternative, an
//! environment variable naming the state folder, would leave the plain command unsafe: a contributor
//! typing `builder build` in another terminal does not have it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::output::r2_dir;

/// Beside the packs: one line per local R2, `<state folder>\t<the r2-local.sh that filled it>`.
pub const LIST: &str = "local-r2.txt";

/// Puts the packs `OUT.r2/objects.txt` lists into every local R2 noted for this build, and forgets
/// the ones whose state folder is gone (a test worker's, say).
pub fn fill(out_dir: &Path) -> Result<()> {
    let list = r2_dir(out_dir).join(LIST);
    let Ok(text) = std::fs::read_to_string(&list) else { return Ok(()) };
    let out_dir = std::path::absolute(out_dir)?;
    let mut kept = Vec::new();
    for line in text.lines() {
        let Some((state, script)) = line.split_once('\t') else { continue };
        let (state, script) = (PathBuf::from(state), PathBuf::from(script));
        if !state.is_dir() || !script.is_file() {
            continue;
        }
        let output = Command::new("bash")
            .arg(&script)
            .arg(&out_dir)
            .arg(&state)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {}", script.display()))?;
        if !output.status.success() {
            bail!(
                "could not put the new packs into the local R2 at {} (the running server keeps the last \
                 build):\n{}",
                state.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let said = String::from_utf8_lossy(&output.stdout);
        if !said.trim().is_empty() {
            eprintln!("{}", said.trim_end());
        }
        kept.push(line);
    }
    if kept.len() != text.lines().count() {
        let mut rest = kept.join("\n");
        if !rest.is_empty() {
            rest.push('\n');
        }
        std::fs::write(&list, rest).with_context(|| format!("writing {}", list.display()))?;
    }
    Ok(())
}
