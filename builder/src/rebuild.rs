//! A `--git` rebuild from the last build: its cost follows the recipes that changed, not the corpus.
//!
//! From the state's commit to the new one it walks the first-parent commits (for histories and for
//! which recipes are new) and diffs the two trees (for what changed). Changed and new recipes are
//! validated and rendered aside first, so a bad file leaves the site as it was. Then it patches the
//! search index (`domain::recipes::search::patch`), rewrites the dump parts and card shards those recipes are
//! in, prepends the new commits to their histories, rewrites the site-wide files, and merges the
//! checksums into the last `SHA256SUMS`. Changed recipes keep their document ids and new ones come
//! after the last, which is the order a full build gives them (`build::in_document_order`), so the
//! output is byte for byte a full build's.
//!
//! A removed or renamed recipe would move the ids of the recipes after it, so that case, a commit
//! that is not a first-parent descendant of the last build's, and anything else it cannot prove safe
//! fall back to a full build (`None`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use domain::index::{Need, SearchError};
use domain::recipes::search::{Changed, DocTerms, Manifest, patch};

use crate::output::{Out, sibling};
use crate::recipes::{Known, Processed, Tools, load_recipe, process_all, report};
use crate::site::{dump_names, write_site_wide};
use crate::source::{ContentFile, Entry, Source};
use crate::state::{DocState, STATE_FORMAT, State, Timings, save_state};
use crate::{history, jsonl, opendata};

pub(crate) fn rebuild(
    source: &Source,
    out_dir: &Path,
    state: State,
    tools: &Tools,
) -> Result<Option<ExitCode>> {
    let mut timings = Timings::new();
    let Source::Git { repo, rev, path } = source else { return Ok(None) };
    if state.commit.is_empty() {
        return Ok(None);
    }
    let Some(steps) = history::walk(repo, rev, path, Some(&state.commit))? else { return Ok(None) };
    let Some(changes) = source.changes_since(&state.commit, "recipes/")? else { return Ok(None) };
    let Some(commit) = source.list_commit()? else { return Ok(None) };
    let births = history::births(&steps);
    let ids: HashMap<String, u32> =
        state.docs.iter().enumerate().map(|(id, d)| (d.slug.clone(), id as u32)).collect();
    let slug_of =
        |path: &str| path.strip_prefix("recipes/").and_then(|p| p.strip_suffix(".json")).map(str::to_string);
    // A recipe removed and added again moves to the end, even when its file came back the same.
    if births.keys().any(|slug| ids.contains_key(*slug)) {
        return Ok(None);
    }
    let mut changed_entries = Vec::new();
    let mut new_entries = Vec::new();
    for change in &changes {
        let slug = slug_of(&change.path).unwrap_or_default();
        match (&change.entry, ids.get(slug.as_str())) {
            // Gone: the ids after it move.
            (None, _) => return Ok(None),
            (Some(entry), Some(_)) => changed_entries.push(entry),
            (Some(entry), None) => new_entries.push((births.get(slug.as_str()).copied().unwrap_or(0), entry)),
        }
    }
    new_entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.path.cmp(&b.1.path)));
    timings.lap("history and diff");

    // Validate and render the changed recipes aside, so a bad file leaves the site as it was.
    let staging = sibling(out_dir, "building");
    let _ = std::fs::remove_dir_all(&staging);
    let staged = Out::new(&staging);
    let entries: Vec<&Entry> =
        changed_entries.iter().copied().chain(new_entries.iter().map(|(_, e)| *e)).collect();
    // When each recipe was added: the new commits say it for new recipes; a changed one keeps the
    // date its last build published (a full build takes it from the whole history).
    let mut known = Known::of(source, Some(&steps))?;
    known.last_cards =
        Some((out_dir.to_path_buf(), state.docs.iter().map(|d| (d.slug.clone(), d.card_key)).collect()));
    for entry in &changed_entries {
        let Some(slug) = slug_of(&entry.path) else { continue };
        if let Some(date) = built_created_at(out_dir, &slug) {
            known.added.entry(slug).or_insert(date);
        }
    }
    let mut processed: BTreeMap<String, Processed> = BTreeMap::new();
    let problems = process_all(source, &entries, &staged, tools, &known, |p| {
        processed.insert(p.slug.clone(), p);
        Ok(())
    })?;
    if !problems.is_empty() {
        let _ = std::fs::remove_dir_all(&staging);
        return Ok(Some(report(source, &problems)));
    }
    // The terms the changed recipes had, from the last build's commit.
    let reader = source.reader()?;
    let mut before_terms: BTreeMap<String, DocTerms> = BTreeMap::new();
    for change in &changes {
        let Some(before) = &change.before else { continue };
        let file = ContentFile { path: before.path.clone(), bytes: reader.read(before)? };
        let Ok(loaded) = load_recipe(&file) else { return Ok(None) };
        before_terms.insert(
            loaded.published.slug.clone(),
            DocTerms::of(&loaded.published.slug, &loaded.published.recipe, &tools.stemmers),
        );
    }
    let out = Out::new(out_dir);
    for w in staged.into_written() {
        let target = out_dir.join(&w.path);
        std::fs::create_dir_all(target.parent().expect("files sit in folders"))?;
        std::fs::rename(staging.join(&w.path), &target)?;
        out.record(&w.path, &w.sha256, w.bytes);
    }
    let _ = std::fs::remove_dir_all(&staging);
    timings.lap("changed recipes");

    // The documents after this build: changed ones in place, new ones after the last.
    let old_lens: Vec<u64> = state.docs.iter().map(|d| d.jsonl_len).collect();
    let mut docs = state.docs;
    let mut order: Vec<(u32, &Processed)> = Vec::with_capacity(processed.len());
    for entry in &entries {
        let slug = slug_of(&entry.path).unwrap_or_default();
        let p = &processed[&slug];
        let doc = DocState {
            slug: p.slug.clone(),
            version: p.version,
            facets: p.card.facets(),
            jsonl_len: p.json.len() as u64 + 1,
            card_key: p.card_key,
        };
        let id = match ids.get(slug.as_str()) {
            Some(id) => {
                docs[*id as usize] = doc;
                *id
            }
            None => {
                docs.push(doc);
                docs.len() as u32 - 1
            }
        };
        order.push((id, p));
    }

    let mut removed: Vec<String> = Vec::new();
    let (manifest, facet_counts) = patch_index(out_dir, &out, &docs, &order, &before_terms, &mut removed)?;
    timings.lap("index");
    let new_lines: BTreeMap<u32, &str> = order.iter().map(|(id, p)| (*id, p.json.as_str())).collect();
    let new_lens: Vec<u64> = docs.iter().map(|d| d.jsonl_len).collect();
    removed.extend(jsonl::patch(&out, &old_lens, &new_lens, &new_lines)?);
    timings.lap("dump");

    // Histories: this build's commits, newest first, before what the last build wrote. A recipe
    // changed and changed back has new commits but no diff, so this asks the walk, not the diff.
    for (slug, items) in history::histories(&steps) {
        if !processed.contains_key(slug) && !ids.contains_key(slug) {
            continue;
        }
        let path = format!("r/{slug}.history.json");
        let mut all: Vec<history::Item> = items.into_iter().cloned().collect();
        if let Ok(bytes) = std::fs::read(out_dir.join(&path)) {
            let older: Vec<history::Item> =
                serde_json::from_slice(&bytes).with_context(|| format!("reading {path}"))?;
            all.extend(older);
        }
        out.write(&path, serde_json::to_string(&all)?.as_bytes())?;
    }
    timings.lap("histories");

    write_site_wide(source, &out, &docs, &manifest, &facet_counts)?;
    timings.lap("site-wide files");

    // Checksums: the last SHA256SUMS with what this build wrote and removed. A site-wide file the
    // last build wrote and this one did not is gone from the content (a removed episode, say).
    let old_sums =
        std::fs::read_to_string(out_dir.join("SHA256SUMS")).context("reading the last SHA256SUMS")?;
    let mut sums: BTreeMap<String, Option<String>> = BTreeMap::new();
    for w in out.into_written() {
        sums.insert(w.path, Some(w.sha256));
    }
    for line in old_sums.lines() {
        let path = line.split_once("  ").map(|(_, path)| path).unwrap_or_default();
        let site_wide = !(path.starts_with("r/")
            || path.starts_with("search/")
            || jsonl::is_part(path)
            || matches!(path, "datapackage.json" | "SHA256SUMS"));
        if site_wide && !sums.contains_key(path) {
            removed.push(path.to_string());
        }
    }
    for path in removed {
        let _ = std::fs::remove_file(out_dir.join(&path));
        sums.insert(path, None);
    }
    let merged = opendata::merge_sums(&old_sums, &sums)?;
    opendata::write_manifests(out_dir, &merged, &dump_names(&docs))?;
    timings.lap("checksums");

    let (n_changed, n_docs) = (processed.len(), docs.len());
    save_state(
        out_dir,
        &State { format: STATE_FORMAT, source_key: source.key(), commit: commit.clone(), docs },
    )?;
    timings.lap("state");
    eprintln!(
        "rebuilt {n_changed} changed of {n_docs} recipes from {} at commit {} into {}",
        source.describe(),
        &commit[..12.min(commit.len())],
        out_dir.display()
    );
    Ok(Some(ExitCode::SUCCESS))
}

/// Patches `search/` for the changed documents; returns the new manifest and facet counts, and adds
/// the files the index no longer uses to `removed`.
fn patch_index(
    out_dir: &Path,
    out: &Out,
    docs: &[DocState],
    order: &[(u32, &Processed)],
    before_terms: &BTreeMap<String, DocTerms>,
    removed: &mut Vec<String>,
) -> Result<(Manifest, BTreeMap<String, u64>)> {
    let index_dir = out_dir.join("search");
    let manifest: Manifest = serde_json::from_slice(&std::fs::read(index_dir.join("manifest.json"))?)
        .context("reading the last search manifest")?;
    let changed: Vec<Changed> = order
        .iter()
        .map(|(id, p)| Changed {
            doc: *id,
            before: before_terms.get(&p.slug),
            after: &p.terms,
            card: &p.card,
        })
        .collect();
    let facets: Vec<_> = docs.iter().map(|d| d.facets).collect();
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    let patched = loop {
        match patch(&manifest, &files, &changed, &facets) {
            Ok(patched) => break patched,
            Err(SearchError::Need(Need(names))) => {
                for name in names {
                    let bytes = std::fs::read(index_dir.join(&name))
                        .with_context(|| format!("reading search/{name}"))?;
                    files.insert(name, bytes);
                }
            }
            Err(SearchError::Corrupt(corrupt)) => anyhow::bail!("the last search index: {}", corrupt.0),
        }
    };
    for file in &patched.write {
        out.write(&format!("search/{}", file.name), &file.bytes)?;
    }
    removed.extend(patched.remove.iter().map(|name| format!("search/{name}")));
    out.write("search/manifest.json", serde_json::to_string(&patched.manifest)?.as_bytes())?;
    Ok((patched.manifest, patched.facet_counts))
}

/// The `created_at` the last build published for `slug`, if any.
fn built_created_at(out_dir: &Path, slug: &str) -> Option<String> {
    let bytes = std::fs::read(out_dir.join(format!("r/{slug}.json"))).ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    doc.get("created_at")?.as_str().map(String::from)
}
