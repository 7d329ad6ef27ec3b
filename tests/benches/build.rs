//! Builder benchmark: a full build of a generated content repo, then the rebuild after one recipe
//! changes in a new commit. Reports wall time and peak memory of the builder process (which includes
//! the production layout step), then the upload step: putting the R2 objects the build added into a
//! local R2 (`scripts/r2-local.sh`, as a deploy uploads them), with their count and bytes.
//!
//! `cargo bench -p tests --bench build` (BENCH_RECIPES=100000 by default).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tests::{corpus, root};

fn main() -> Result<()> {
    let n: usize = std::env::var("BENCH_RECIPES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let root = root();
    let work = root.join("tests/.work");
    let repo = work.join(format!("bench-recipes-{n}"));
    let out = work.join(format!("bench-dist-{n}"));
    if !repo.join(".git").exists() && !repo.join("HEAD").exists() {
        let _ = std::fs::remove_dir_all(&repo);
        let started = Instant::now();
        corpus::write_git_repo(&root, &repo, n, 42)?;
        eprintln!("generated {n} recipes in {:.1} s", started.elapsed().as_secs_f64());
    }
    let status = Command::new("cargo")
        .args(["build", "--quiet", "--release", "-p", "builder"])
        .current_dir(&root)
        .status()?;
    if !status.success() {
        bail!("building the builder failed");
    }
    let builder = root.join("target/release/builder");
    // The last run's output is moved aside and deleted only after the measurements: creating 300,000
    // files on ext4 within minutes of deleting as many is several times slower (the inode allocator
    // skips recently deleted inodes), which would measure the file system's memory, not the build.
    let trash = work.join(format!("bench-trash-{}", std::process::id()));
    std::fs::create_dir_all(&trash)?;
    for suffix in ["", ".assets", ".r2"] {
        let folder = work.join(format!("bench-dist-{n}{suffix}"));
        if folder.exists() {
            std::fs::rename(&folder, trash.join(format!("dist{suffix}")))?;
        }
    }
    let _ = std::fs::remove_file(work.join(format!("bench-dist-{n}.state")));
    let r2_state = work.join(format!("bench-r2-state-{n}"));
    let _ = std::fs::remove_dir_all(&r2_state);
    let objects = || -> Result<std::collections::BTreeSet<String>> {
        let list = std::fs::read_to_string(work.join(format!("bench-dist-{n}.r2/objects.txt")))?;
        Ok(list.lines().map(str::to_string).collect())
    };
    let uploaded = std::cell::RefCell::new(std::collections::BTreeSet::new());

    let build = |label: &str| -> Result<(Duration, u64)> {
        let mut cmd = Command::new(&builder);
        cmd.args(["build", "--git"]).arg(&repo).args(["--rev", "HEAD", "--out"]).arg(&out);
        cmd.stderr(std::process::Stdio::null());
        let (elapsed, max_rss_kib) = run_measured(cmd)?;
        let now = objects()?;
        let new: Vec<String> = now.difference(&uploaded.borrow()).cloned().collect();
        let new_bytes: u64 = new
            .iter()
            .map(|key| std::fs::metadata(work.join(format!("bench-dist-{n}.r2")).join(key)).map(|m| m.len()))
            .sum::<std::io::Result<u64>>()?;
        let started = Instant::now();
        let put = Command::new("bash")
            .arg("scripts/r2-local.sh")
            .arg(&out)
            .arg(&r2_state)
            .current_dir(&root)
            .status()?;
        if !put.success() {
            bail!("putting the packs into the local R2 failed");
        }
        let upload = started.elapsed();
        // r2-local.sh notes the local R2 beside the build, and the next build would fill it inside
        // its own wall time; the upload is timed here, apart.
        std::fs::remove_file(work.join(format!("bench-dist-{n}.r2/local-r2.txt")))?;
        uploaded.borrow_mut().extend(new.iter().cloned());
        println!(
            "| {label} | {n} | {:.2} s | {} MiB | {:.1} s | {} | {:.1} MiB |",
            elapsed.as_secs_f64(),
            max_rss_kib / 1024,
            upload.as_secs_f64(),
            new.len(),
            new_bytes as f64 / (1024.0 * 1024.0)
        );
        Ok((elapsed, max_rss_kib))
    };
    println!(
        "| build | recipes | wall time | peak memory | upload to local R2 | objects uploaded | bytes uploaded |\n|---|---|---|---|---|---|---|"
    );
    build("full build")?;
    let slug = corpus::first_slug(&repo)?;
    for round in 1..=3 {
        corpus::commit_one_change(&repo, &slug, &format!("Edited in round {round}."))?;
        build(&format!("rebuild after one recipe changed (#{round})"))?;
    }
    // A new recipe, as `builder sync` commits one written through the API.
    let mut added = corpus::recipe_at_head(&repo, &slug)?;
    added["servings"] = 7.into();
    let new_slug = format!("added-in-bench-{}", std::process::id());
    corpus::commit_recipes(&repo, &[(new_slug.as_str(), Some(added))], "One more")?;
    build("rebuild after one recipe was added")?;
    // A day of API writes, synced one commit each: the rebuild walks every one of them.
    let commits: usize = std::env::var("BENCH_SYNC_COMMITS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    for round in 0..commits {
        corpus::commit_one_change(&repo, &slug, &format!("Synced change {round}."))?;
    }
    build(&format!("rebuild after {commits} commits that each changed a recipe"))?;
    let files = walk_count(&out);
    let assets = walk_count(&work.join(format!("bench-dist-{n}.assets")));
    let packs = objects()?.len();
    let pack_bytes = walk_bytes(&work.join(format!("bench-dist-{n}.r2/packs")));
    println!(
        "\noutput: {files} files in {}; production layout: {assets} static files, {packs} R2 objects of {:.1} MiB in all",
        out.display(),
        pack_bytes as f64 / (1024.0 * 1024.0)
    );
    let _ = std::fs::remove_dir_all(&trash);
    Ok(())
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().map(|e| if e.path().is_dir() { walk_count(&e.path()) } else { 1 }).sum()
        })
        .unwrap_or(0)
}

fn walk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk_bytes(&e.path())
                    } else {
                        e.metadata().map_or(0, |m| m.len())
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Runs a command and returns its wall time and peak resident memory (KiB), from wait4's rusage.
#[allow(unsafe_code)]
fn run_measured(mut cmd: Command) -> Result<(Duration, u64)> {
    let started = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child, with pointers to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = started.elapsed();
    if waited != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("the builder failed (status {status})");
    }
    Ok((elapsed, usage.ru_maxrss as u64))
}
