//! `builder build` and `builder check`: validate every content file, then write `dist/`.
//!
//! A full build streams the recipes in chunks into a fresh folder beside `dist/` and swaps it in only
//! when every file is valid, so a bad file never leaves a half-written site and every problem is listed
//! in one run. It also saves a small build state (`<out>.state`: the commit, and per recipe its slug,
//! version, facets and dump line length). A later `--git` build of a descendant commit redoes only the
//! changed recipes from there (`rebuild.rs`).
//!
//! The output is a function of the content alone: files are written in a fixed order, nothing reads
//! the clock, and maps are sorted, so the same commit always builds byte-identical output, whether
//! fully or incrementally.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use domain::recipes::search::IndexBuilder;
use domain::text::Stemmers;
use rayon::prelude::*;

use crate::diagnostics::{self, Format, Problem};
use crate::output::{Out, sibling};
use crate::recipes::{Known, Tools, load_recipe, process_all, report};
use crate::site::{dump_names, write_site_wide};
use crate::source::{ContentFile, Entry, Source};
use crate::state::{DocState, STATE_FORMAT, State, Timings, load_state, save_state};
use crate::{history, jsonl, opendata};

pub fn check(source: &Source, format: Format) -> Result<ExitCode> {
    source.require_content()?;
    let listing = source.list("recipes/")?;
    let problems: Vec<Problem> = listing
        .entries
        .par_iter()
        .map_init(
            || source.reader(),
            |reader, entry| -> Result<Vec<Problem>> {
                let reader = reader.as_ref().map_err(|err| anyhow::anyhow!("{err:#}"))?;
                let file = ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? };
                Ok(load_recipe(&file).err().unwrap_or_default())
            },
        )
        .collect::<Result<Vec<_>>>()?
        .concat();
    let mut problems = problems;
    let show_files = crate::quotes::read(source)?;
    let checked = crate::quotes::Checked::of(&show_files);
    if let Err(quote_problems) = crate::quotes::load(&show_files) {
        problems.extend(quote_problems);
    }
    // What was checked, so a contributor sees their episodes were read (a folder in the wrong place
    // would otherwise pass in silence).
    let what = format!(
        "checked {} recipes, {} shows, {} episodes and {} runs",
        listing.entries.len(),
        checked.shows,
        checked.episodes,
        checked.runs
    );
    if problems.is_empty() {
        eprintln!("{what}: all valid");
        Ok(ExitCode::SUCCESS)
    } else {
        diagnostics::print(source, format, &problems);
        eprintln!("{what}: {} problem(s)", problems.len());
        Ok(ExitCode::FAILURE)
    }
}

/// Builds `out_dir` (the open-data tree), then lays it out for production (`layout.rs`).
pub fn build(source: &Source, out_dir: &Path) -> Result<ExitCode> {
    let _lock = lock(out_dir)?;
    let code = build_tree(source, out_dir)?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let mut timings = Timings::new();
    let summary = crate::layout::publish(out_dir)?;
    timings.lap("layout");
    eprintln!(
        "laid out {} static files and {} packed files in {} R2 packs ({} new, {} bytes to upload)",
        summary.assets,
        summary.packed,
        summary.packs,
        summary.new_packs.len(),
        summary.new_pack_bytes
    );
    Ok(code)
}

/// Holds `<out>.lock` for a whole build: two builds of one folder at once (wrangler's watcher and a
/// contributor's terminal, say) would each remove what the other writes. The lock goes with the
/// process, also when it is killed.
fn lock(out_dir: &Path) -> Result<std::fs::File> {
    let path = sibling(out_dir, "lock");
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("waiting for another build of {} to finish", out_dir.display());
            file.lock().with_context(|| format!("locking {}", path.display()))?;
        }
        Err(std::fs::TryLockError::Error(err)) => {
            return Err(err).with_context(|| format!("locking {}", path.display()));
        }
    }
    Ok(file)
}

fn build_tree(source: &Source, out_dir: &Path) -> Result<ExitCode> {
    let tools = Tools { stemmers: Stemmers::default() };
    let mut timings = Timings::new();
    let state = load_state(out_dir, source);
    timings.lap("load state");
    if let Some(state) = state {
        match crate::rebuild::rebuild(source, out_dir, state, &tools) {
            Ok(Some(code)) => return Ok(code),
            Ok(None) => {}
            // A full build writes a fresh folder and swaps it in, so whatever the rebuild left is replaced.
            Err(err) => eprintln!(
                "the last build in {} cannot be reused ({err:#}); building everything",
                out_dir.display()
            ),
        }
    }
    full(source, out_dir, &tools)
}

/// The recipe files of a listing in search document-id order: by the commit that last added each
/// (oldest first), then by path, so recipes added later get later ids and a rebuild can append them.
/// Without history (a work tree), by path.
fn in_document_order<'l>(entries: &'l [Entry], steps: Option<&[history::Step]>) -> Vec<&'l Entry> {
    let births = steps.map(history::births).unwrap_or_default();
    let mut ordered: Vec<(usize, &Entry)> = entries
        .iter()
        .map(|entry| {
            let slug = entry.path.strip_prefix("recipes/").and_then(|p| p.strip_suffix(".json"));
            (slug.and_then(|slug| births.get(slug)).copied().unwrap_or(0), entry)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.path.cmp(&b.1.path)));
    ordered.into_iter().map(|(_, entry)| entry).collect()
}

fn full(source: &Source, out_dir: &Path, tools: &Tools) -> Result<ExitCode> {
    let mut timings = Timings::new();
    source.require_content()?;
    let listing = source.list("recipes/")?;
    let steps = match source {
        Source::Git { repo, rev, path } => history::walk(repo, rev, path, None)?,
        Source::WorkTree(_) => None,
    };
    timings.lap("history");
    let staging = sibling(out_dir, "building");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).with_context(|| format!("clearing {}", staging.display()))?;
    }
    std::fs::create_dir_all(&staging)?;
    let out = Out::new(&staging);
    let mut index = IndexBuilder::default();
    let mut docs = Vec::with_capacity(listing.entries.len());
    let mut dump = jsonl::Writer::default();
    let entries = in_document_order(&listing.entries, steps.as_deref());
    let mut known = Known::of(source, steps.as_deref())?;
    // A full build after another (a non-descendant commit, a removal) keeps the cards it can.
    known.last_cards = load_state(out_dir, source)
        .map(|last| (out_dir.to_path_buf(), last.docs.into_iter().map(|d| (d.slug, d.card_key)).collect()));
    let problems = process_all(source, &entries, &out, tools, &known, |p| {
        index.add(p.card.clone(), &p.terms);
        dump.line(&out, &p.json)?;
        docs.push(DocState {
            slug: p.slug,
            version: p.version,
            facets: p.card.facets(),
            jsonl_len: p.json.len() as u64 + 1,
            card_key: p.card_key,
        });
        Ok(())
    })?;
    if !problems.is_empty() {
        let _ = std::fs::remove_dir_all(&staging);
        return Ok(report(source, &problems));
    }
    dump.finish(&out)?;
    timings.lap("recipes");
    let built = index.finish();
    for file in &built.files {
        out.write(&format!("search/{}", file.name), &file.bytes)?;
    }
    out.write("search/manifest.json", serde_json::to_string(&built.manifest)?.as_bytes())?;
    timings.lap("index");
    if let Some(steps) = &steps {
        let built: std::collections::HashSet<&str> = docs.iter().map(|d| d.slug.as_str()).collect();
        let histories: Vec<_> =
            history::histories(steps).into_iter().filter(|(slug, _)| built.contains(slug)).collect();
        histories.par_iter().try_for_each(|(slug, items)| -> Result<()> {
            out.write(&format!("r/{slug}.history.json"), serde_json::to_string(items)?.as_bytes())?;
            Ok(())
        })?;
    }
    timings.lap("histories");
    write_site_wide(source, &out, &docs, &built.manifest, &built.facet_counts)?;

    let sums: BTreeMap<String, String> = out.into_written().into_iter().map(|w| (w.path, w.sha256)).collect();
    let sums: Vec<(&str, &str)> = sums.iter().map(|(path, sha)| (path.as_str(), sha.as_str())).collect();
    opendata::write_manifests(&staging, &sums, &dump_names(&docs))?;
    timings.lap("site-wide files and checksums");
    let old = sibling(out_dir, "old");
    let _ = std::fs::remove_dir_all(&old);
    if out_dir.exists() {
        std::fs::rename(out_dir, &old).with_context(|| format!("moving {} aside", out_dir.display()))?;
    }
    std::fs::rename(&staging, out_dir)
        .with_context(|| format!("moving the build to {}", out_dir.display()))?;
    let _ = std::fs::remove_dir_all(&old);

    let commit = listing.commit.as_ref().map(|c| c.id.clone()).unwrap_or_default();
    let n_docs = docs.len();
    save_state(out_dir, &State { format: STATE_FORMAT, source_key: source.key(), commit, docs })?;
    let at = listing.commit.map(|c| format!(" at commit {}", &c.id[..12])).unwrap_or_default();
    eprintln!("built {n_docs} recipes from {}{at} into {}", source.describe(), out_dir.display());
    Ok(ExitCode::SUCCESS)
}
