//! `builder build` and `builder check`: validate every content file, then write `dist/`.
//!
//! A full build streams the recipes in chunks into a fresh folder beside `dist/` and swaps it in only
//! when every file is valid, so a bad file never leaves a half-written site and every problem is listed
//! in one run. It also saves a build state (`<out>.state`): per recipe its card and term ids, and every
//! output file's checksum. A later `--git` build of a descendant commit reads the git diff between the
//! two commits and redoes only the changed recipes, then rewrites the site-wide files from the state.
//!
//! The output is a function of the content alone: files are written in a fixed order, nothing reads
//! the clock, and maps are sorted, so the same commit always builds byte-identical output, whether
//! fully or incrementally.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use domain::recipe::{self, Published};
use domain::search::{Card, DocTerms, IndexBuilder};
use domain::text::Stemmers;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::source::{ContentFile, Entry, Reader, Source};
use crate::{opendata, pages};

/// Recipes read, validated and rendered together; bounds the memory a build holds at once.
const CHUNK: usize = 4096;
const STATE_FORMAT: u32 = 2;
/// Recipes per course listed on the home page and in llms.txt.
const SHOWN_PER_COURSE: usize = 24;

/// A recipe that passed validation.
pub struct Loaded {
    pub published: Published,
}

/// Validates one recipe file: the typed recipe, or every problem as `file: field: reason`.
pub fn load_recipe(file: &ContentFile) -> Result<Loaded, Vec<String>> {
    let path = &file.path;
    let Some(slug) = path.strip_prefix("recipes/").and_then(|name| name.strip_suffix(".json")) else {
        return Err(vec![format!("{path}: (file): only recipes/<slug>.json files belong in recipes/")]);
    };
    let mut problems = Vec::new();
    if !domain::slug::is_valid(slug) {
        problems.push(format!(
            "{path}: (file name): `{slug}` is not a slug: use 3-80 lower-case letters, digits and single hyphens"
        ));
    }
    let value: serde_json::Value = match serde_json::from_slice(&file.bytes) {
        Ok(value) => value,
        Err(err) => {
            problems.push(format!("{path}: (json): line {} column {}: {err}", err.line(), err.column()));
            return Err(problems);
        }
    };
    match recipe::validate(&value, recipe::Source::ContentFile) {
        Ok((recipe, server)) if problems.is_empty() => {
            Ok(Loaded { published: Published { slug: slug.to_string(), recipe, server } })
        }
        Ok(_) => Err(problems),
        Err(diagnostics) => {
            problems.extend(diagnostics.iter().map(|d| format!("{path}: {}: {}", d.field, d.reason)));
            Err(problems)
        }
    }
}

pub fn check(source: &Source) -> Result<ExitCode> {
    let listing = source.list("recipes/")?;
    let problems: Vec<String> = listing
        .entries
        .par_iter()
        .map_init(
            || source.reader(),
            |reader, entry| -> Result<Vec<String>> {
                let reader = reader.as_ref().map_err(|err| anyhow::anyhow!("{err:#}"))?;
                let file = ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? };
                Ok(load_recipe(&file).err().unwrap_or_default())
            },
        )
        .collect::<Result<Vec<_>>>()?
        .concat();
    let mut problems = problems;
    if let Err(quote_problems) = crate::quotes::load(&crate::quotes::read(source)?) {
        problems.extend(quote_problems);
    }
    if problems.is_empty() {
        eprintln!("{} recipes are valid", listing.entries.len());
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(report(&problems))
    }
}

fn report(problems: &[String]) -> ExitCode {
    for problem in problems {
        println!("{problem}");
    }
    eprintln!("{} problem(s); nothing was written", problems.len());
    ExitCode::FAILURE
}

/// One written file, for `SHA256SUMS` and `datapackage.json`.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// Writes files under the output folder and remembers what it wrote.
pub struct Out {
    root: PathBuf,
    written: Mutex<Vec<Written>>,
}

impl Out {
    fn new(root: &Path) -> Out {
        Out { root: root.to_path_buf(), written: Mutex::new(Vec::new()) }
    }

    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<Written> {
        let full = self.root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&full, bytes).with_context(|| format!("writing {}", full.display()))?;
        Ok(self.record(path, &sha256_hex(bytes), bytes.len() as u64))
    }

    /// Notes a file that is already in place with these contents.
    fn record(&self, path: &str, sha256: &str, bytes: u64) -> Written {
        let written = Written { path: path.to_string(), sha256: sha256.to_string(), bytes };
        self.written.lock().expect("no writer panics while holding the lock").push(written.clone());
        written
    }

    fn into_written(self) -> Vec<Written> {
        self.written.into_inner().expect("no writer panicked")
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn progress(len: usize, what: &str) -> ProgressBar {
    // indicatif draws only when stderr is a terminal, so CI logs stay clean.
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} {eta}").expect("template is valid"),
    );
    bar.set_message(what.to_string());
    bar
}

/// What one recipe adds to the site-wide files; kept in the build state between builds.
#[derive(Debug, Serialize, Deserialize)]
struct DocState {
    path: String,
    slug: String,
    version: u64,
    card: Card,
    /// Title, ingredient and other terms, as ids into [`State::vocabulary`].
    terms: [Vec<u32>; 3],
    /// The length of its line in `recipes.jsonl`, newline included, so a rebuild can copy it over.
    jsonl_len: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    format: u32,
    source_key: String,
    commit: String,
    vocabulary: Vec<String>,
    /// In path order, which is the search document-id order.
    docs: Vec<DocState>,
    /// Every output file: path → (sha256, bytes).
    files: BTreeMap<String, (String, u64)>,
}

fn state_path(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "state")
}

fn sibling(out_dir: &Path, suffix: &str) -> PathBuf {
    let name = out_dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "dist".into());
    out_dir.with_file_name(format!("{name}.{suffix}"))
}

fn load_state(out_dir: &Path, source: &Source) -> Option<State> {
    let bytes = std::fs::read(state_path(out_dir)).ok()?;
    let state: State = postcard::from_bytes(&bytes).ok()?;
    (state.format == STATE_FORMAT && state.source_key == source.key() && out_dir.is_dir()).then_some(state)
}

/// A rendered recipe on its way into the site.
struct Processed {
    path: String,
    slug: String,
    version: u64,
    json: String,
    card: Card,
    terms: DocTerms,
}

struct Tools {
    renderer: pages::Renderer,
    stemmers: Stemmers,
}

fn process(
    reader: &Reader,
    entry: &Entry,
    out: &Out,
    tools: &Tools,
) -> Result<Result<Processed, Vec<String>>> {
    let file = ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? };
    let published = match load_recipe(&file) {
        Ok(loaded) => loaded.published,
        Err(problems) => return Ok(Err(problems)),
    };
    let json = serde_json::to_string(&published)?;
    out.write(&format!("r/{}.json", published.slug), json.as_bytes())?;
    out.write(&format!("r/{}.html", published.slug), tools.renderer.recipe_page(&published)?.as_bytes())?;
    Ok(Ok(Processed {
        path: entry.path.clone(),
        slug: published.slug.clone(),
        version: published.server.version,
        json,
        card: Card::from_recipe(&published.slug, &published.recipe),
        terms: DocTerms::of(&published.recipe, &tools.stemmers),
    }))
}

/// Processes entries chunk by chunk, in order, handing each valid recipe to `each`; returns the problems.
fn process_all(
    source: &Source,
    entries: &[&Entry],
    out: &Out,
    tools: &Tools,
    mut each: impl FnMut(Processed) -> Result<()>,
) -> Result<Vec<String>> {
    let bar = progress(entries.len(), "recipes");
    let mut problems = Vec::new();
    for chunk in entries.chunks(CHUNK) {
        let results: Vec<Result<Result<Processed, Vec<String>>>> = chunk
            .par_iter()
            .map_init(
                || source.reader(),
                |reader, entry| {
                    let reader = reader.as_ref().map_err(|err| anyhow::anyhow!("{err:#}"))?;
                    process(reader, entry, out, tools)
                },
            )
            .collect();
        bar.inc(chunk.len() as u64);
        for result in results {
            match result? {
                Ok(processed) => each(processed)?,
                Err(mut more) => problems.append(&mut more),
            }
        }
    }
    bar.finish_and_clear();
    Ok(problems)
}

pub fn build(source: &Source, out_dir: &Path) -> Result<ExitCode> {
    let tools = Tools { renderer: pages::Renderer::new()?, stemmers: Stemmers::default() };
    let mut timings = Timings::new();
    let state = load_state(out_dir, source);
    timings.lap("load state");
    if let Some(state) = state
        && let Some(code) = incremental(source, out_dir, state, &tools)?
    {
        return Ok(code);
    }
    full(source, out_dir, &tools)
}

fn full(source: &Source, out_dir: &Path, tools: &Tools) -> Result<ExitCode> {
    let listing = source.list("recipes/")?;
    let staging = sibling(out_dir, "building");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).with_context(|| format!("clearing {}", staging.display()))?;
    }
    let out = Out::new(&staging);
    let mut index = IndexBuilder::default();
    let mut docs = Vec::with_capacity(listing.entries.len());
    std::fs::create_dir_all(&staging)?;
    let mut jsonl = JsonlWriter::create(&staging)?;
    let entries: Vec<&Entry> = listing.entries.iter().collect();
    let problems = process_all(source, &entries, &out, tools, |p| {
        let terms = index.add(p.card.clone(), &p.terms);
        jsonl.line(&p.json)?;
        let jsonl_len = p.json.len() as u64 + 1;
        docs.push(DocState {
            path: p.path,
            slug: p.slug,
            version: p.version,
            card: p.card,
            terms,
            jsonl_len,
        });
        Ok(())
    })?;
    if !problems.is_empty() {
        let _ = std::fs::remove_dir_all(&staging);
        return Ok(report(&problems));
    }
    jsonl.finish(&out)?;
    let vocabulary = index.vocabulary().to_vec();
    write_site(source, &out, index, &docs, None, None)?;

    let mut files = BTreeMap::new();
    for w in out.into_written() {
        files.insert(w.path, (w.sha256, w.bytes));
    }
    opendata::write_manifests(&staging, &as_written(&files))?;
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
    save_state(
        out_dir,
        State { format: STATE_FORMAT, source_key: source.key(), commit, vocabulary, docs, files },
    )?;
    let at = listing.commit.map(|c| format!(" at commit {}", &c.id[..12])).unwrap_or_default();
    eprintln!("built {n_docs} recipes from {}{at} into {}", source.describe(), out_dir.display());
    Ok(ExitCode::SUCCESS)
}

/// Rebuilds from the state after the changes between its commit and the source's; `None` when the
/// state cannot be used (not a git source, or the old commit is gone) and a full build must run.
fn incremental(source: &Source, out_dir: &Path, state: State, tools: &Tools) -> Result<Option<ExitCode>> {
    let mut timings = Timings::new();
    if state.commit.is_empty() {
        return Ok(None);
    }
    let Some(changes) = source.changes_since(&state.commit, "recipes/")? else { return Ok(None) };
    let Some(commit) = source.list_commit()? else { return Ok(None) };

    // Validate and render the changed recipes aside, so a bad file leaves the site as it was.
    let staging = sibling(out_dir, "building");
    let _ = std::fs::remove_dir_all(&staging);
    let out = Out::new(&staging);
    let entries: Vec<&Entry> = changes.iter().filter_map(|c| c.entry.as_ref()).collect();
    let mut processed = Vec::new();
    let problems = process_all(source, &entries, &out, tools, |p| {
        processed.push(p);
        Ok(())
    })?;
    if !problems.is_empty() {
        let _ = std::fs::remove_dir_all(&staging);
        return Ok(Some(report(&problems)));
    }
    let mut files = state.files;
    for w in out.into_written() {
        let target = out_dir.join(&w.path);
        std::fs::create_dir_all(target.parent().expect("files sit in folders"))?;
        std::fs::rename(staging.join(&w.path), &target)?;
        files.insert(w.path, (w.sha256, w.bytes));
    }
    let _ = std::fs::remove_dir_all(&staging);

    timings.lap("diff and changed recipes");
    let changed: BTreeSet<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    let old_jsonl = std::fs::read(out_dir.join("recipes.jsonl")).context("reading the last recipes.jsonl")?;
    if old_jsonl.len() as u64 != state.docs.iter().map(|d| d.jsonl_len).sum::<u64>() {
        return Ok(None);
    }
    timings.lap("  read jsonl");
    let mut index = IndexBuilder::default();
    for term in &state.vocabulary {
        index.intern(term);
    }
    timings.lap("  vocabulary");
    let mut merged: BTreeMap<String, (DocState, Line)> = BTreeMap::new();
    let mut removed_slugs = Vec::new();
    let mut offset = 0usize;
    for doc in state.docs {
        let range = offset..offset + doc.jsonl_len as usize;
        offset = range.end;
        if changed.contains(doc.path.as_str()) {
            removed_slugs.push(doc.slug.clone());
        } else {
            merged.insert(doc.path.clone(), (doc, Line::Old(range)));
        }
    }
    let mut changed_slugs = BTreeSet::new();
    for p in processed {
        let ids = [&p.terms.title, &p.terms.ingredients, &p.terms.other]
            .map(|list| list.iter().map(|term| index.intern(term)).collect::<Vec<u32>>());
        changed_slugs.insert(p.slug.clone());
        let jsonl_len = p.json.len() as u64 + 1;
        let doc = DocState {
            path: p.path.clone(),
            slug: p.slug,
            version: p.version,
            card: p.card,
            terms: ids,
            jsonl_len,
        };
        merged.insert(p.path, (doc, Line::New(p.json)));
    }
    for slug in removed_slugs.iter().filter(|slug| !changed_slugs.contains(*slug)) {
        for path in [format!("r/{slug}.json"), format!("r/{slug}.html"), format!("r/{slug}.history.json")] {
            let _ = std::fs::remove_file(out_dir.join(&path));
            files.remove(&path);
        }
    }

    timings.lap("  merge");
    let out = Out::new(out_dir);
    let mut jsonl = JsonlWriter::create(out_dir)?;
    let mut docs = Vec::with_capacity(merged.len());
    let (mut t_index, mut t_jsonl) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for (_, (doc, line)) in merged {
        let t = std::time::Instant::now();
        index.add_ids(doc.card.clone(), [&doc.terms[0], &doc.terms[1], &doc.terms[2]]);
        t_index += t.elapsed();
        let t = std::time::Instant::now();
        match line {
            Line::Old(range) => jsonl.raw(&old_jsonl[range])?,
            Line::New(json) => jsonl.line(&json)?,
        }
        t_jsonl += t.elapsed();
        docs.push(doc);
    }
    if timings.enabled {
        eprintln!("    add_ids {:.3} s, jsonl {:.3} s", t_index.as_secs_f64(), t_jsonl.as_secs_f64());
    }
    drop(old_jsonl);
    jsonl.finish(&out)?;
    let vocabulary = index.vocabulary().to_vec();
    timings.lap("merge and jsonl");
    let live = write_site(source, &out, index, &docs, Some(&changed_slugs), Some(&files))?;
    timings.lap("site-wide files");
    for w in out.into_written() {
        files.insert(w.path, (w.sha256, w.bytes));
    }
    remove_stale_index_files(out_dir, &mut files, &live);
    opendata::write_manifests(out_dir, &as_written(&files))?;
    timings.lap("checksums");

    let n_changed = changes.len();
    let n_docs = docs.len();
    timings.lap("state");
    save_state(
        out_dir,
        State {
            format: STATE_FORMAT,
            source_key: source.key(),
            commit: commit.clone(),
            vocabulary,
            docs,
            files,
        },
    )?;
    eprintln!(
        "rebuilt {n_changed} changed of {n_docs} recipes from {} at commit {} into {}",
        source.describe(),
        &commit[..12.min(commit.len())],
        out_dir.display()
    );
    Ok(Some(ExitCode::SUCCESS))
}

/// The site-wide files: search index, slug list, histories, home page, open data.
fn write_site(
    source: &Source,
    out: &Out,
    index: IndexBuilder,
    docs: &[DocState],
    only_histories_of: Option<&BTreeSet<String>>,
    previous: Option<&BTreeMap<String, (String, u64)>>,
) -> Result<BTreeSet<String>> {
    let mut timings = Timings::new();
    let built = index.finish();
    timings.lap("  index");
    let mut live: BTreeSet<String> = built.files.iter().map(|f| format!("search/{}", f.name)).collect();
    live.insert("search/manifest.json".to_string());
    built.files.par_iter().try_for_each(|file| -> Result<()> {
        let path = format!("search/{}", file.name);
        // Most index files are the same as last build's: leave those in place.
        let sha = sha256_hex(&file.bytes);
        let unchanged =
            previous.and_then(|files| files.get(&path)) == Some(&(sha.clone(), file.bytes.len() as u64));
        if unchanged && out.root.join(&path).exists() {
            out.record(&path, &sha, file.bytes.len() as u64);
        } else {
            out.write(&path, &file.bytes)?;
        }
        Ok(())
    })?;
    out.write("search/manifest.json", serde_json::to_string(&built.manifest)?.as_bytes())?;
    timings.lap("  index files");

    // Every built slug with its version, in search document-id order: the Worker uses it to keep new
    // slugs unique, to retire overlay rows this build has published, and to hide replaced documents.
    let slugs: Vec<(&str, u64)> = docs.iter().map(|d| (d.slug.as_str(), d.version)).collect();
    out.write("slugs.json", serde_json::to_string(&slugs)?.as_bytes())?;
    if let Source::Git { repo, rev, path } = source {
        let known: BTreeSet<&str> = docs.iter().map(|d| d.slug.as_str()).collect();
        for (slug, items) in crate::history::recipe_histories(repo, rev, path)? {
            let wanted = only_histories_of.is_none_or(|only| only.contains(&slug));
            if wanted && known.contains(slug.as_str()) {
                out.write(&format!("r/{slug}.history.json"), serde_json::to_string(&items)?.as_bytes())?;
            }
        }
    }

    timings.lap("  slugs and histories");
    // The home page and llms.txt show a handful per course; search and the dumps hold the rest.
    let mut per_course: BTreeMap<domain::recipe::Course, usize> = BTreeMap::new();
    let cards: Vec<&Card> = docs
        .iter()
        .map(|d| &d.card)
        .filter(|card| {
            let shown = per_course.entry(card.course).or_default();
            *shown += 1;
            *shown <= SHOWN_PER_COURSE
        })
        .collect();
    let renderer = pages::Renderer::new()?;
    out.write("index.html", renderer.home_page(&cards, &built.facet_counts)?.as_bytes())?;
    out.write("404.html", renderer.not_found_page()?.as_bytes())?;
    opendata::write(out, &opendata::Inputs { cards: &cards, facets: &built.facet_counts })?;
    // The quote service (shows, episodes, transcripts) is rebuilt whole, and adds its part of llms.txt.
    let quotes_llms = crate::quotes::build_into(source, out)?;
    let mut llms = std::fs::read_to_string(out.root.join("llms.txt")).context("reading llms.txt back")?;
    llms.push_str(&quotes_llms);
    // Agents (issue 6): the MCP tools and the API description close llms.txt; llms-full.txt expands it.
    llms.push_str(&crate::agents::llms_section());
    out.write("llms.txt", llms.as_bytes())?;
    out.write("llms-full.txt", crate::agents::llms_full(&llms).as_bytes())?;
    out.write("openapi.json", serde_json::to_string_pretty(&crate::agents::openapi())?.as_bytes())?;
    Ok(live)
}

fn as_written(files: &BTreeMap<String, (String, u64)>) -> Vec<Written> {
    files
        .iter()
        .filter(|(path, _)| !matches!(path.as_str(), "SHA256SUMS" | "datapackage.json"))
        .map(|(path, (sha256, bytes))| Written { path: path.clone(), sha256: sha256.clone(), bytes: *bytes })
        .collect()
}

/// Drops index files that the new index no longer uses.
fn remove_stale_index_files(
    out_dir: &Path,
    files: &mut BTreeMap<String, (String, u64)>,
    live: &BTreeSet<String>,
) {
    let stale: Vec<String> =
        files.keys().filter(|path| path.starts_with("search/") && !live.contains(*path)).cloned().collect();
    for path in stale {
        let _ = std::fs::remove_file(out_dir.join(&path));
        files.remove(&path);
    }
}

fn save_state(out_dir: &Path, state: State) -> Result<()> {
    let bytes = postcard::to_allocvec(&state)?;
    let path = state_path(out_dir);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

/// A line of `recipes.jsonl`: a byte range of the last build's file, or a new document.
enum Line {
    Old(std::ops::Range<usize>),
    New(String),
}

/// Writes `recipes.jsonl` line by line, hashing as it goes.
struct JsonlWriter {
    file: std::io::BufWriter<std::fs::File>,
    hasher: Sha256,
    bytes: u64,
}

impl JsonlWriter {
    fn create(dir: &Path) -> Result<JsonlWriter> {
        let file = std::fs::File::create(dir.join("recipes.jsonl")).context("creating recipes.jsonl")?;
        Ok(JsonlWriter {
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            hasher: Sha256::new(),
            bytes: 0,
        })
    }

    fn line(&mut self, json: &str) -> Result<()> {
        self.raw(json.as_bytes())?;
        self.raw(b"\n")
    }

    /// Bytes already in line form (a line copied from the last build, newline included).
    fn raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.write_all(bytes)?;
        self.hasher.update(bytes);
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn finish(mut self, out: &Out) -> Result<()> {
        self.file.flush()?;
        let sha: String = self.hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        out.record("recipes.jsonl", &sha, self.bytes);
        Ok(())
    }
}

/// Phase timings on stderr when `BUILDER_TIMINGS=1`, for finding where a build spends its time.
struct Timings {
    enabled: bool,
    last: std::time::Instant,
}

impl Timings {
    fn new() -> Timings {
        Timings { enabled: std::env::var_os("BUILDER_TIMINGS").is_some(), last: std::time::Instant::now() }
    }

    fn lap(&mut self, phase: &str) {
        if self.enabled {
            eprintln!("  {phase}: {:.3} s", self.last.elapsed().as_secs_f64());
        }
        self.last = std::time::Instant::now();
    }
}
