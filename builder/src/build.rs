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

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use domain::recipe::{self, Published};
use domain::search::{CARDS_PER_SHARD, Card, DocFacets, DocTerms, IndexBuilder, Manifest};
use domain::text::Stemmers;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostics::{self, Format, Problem};
use crate::source::{ContentFile, Entry, Reader, Source};
use crate::{history, images, jsonl, opendata, pages};

/// Recipes read, validated and rendered together; bounds the memory a build holds at once.
const CHUNK: usize = 4096;
pub(crate) const STATE_FORMAT: u32 = 4;
/// Recipes per course listed on the home page and in llms.txt.
const SHOWN_PER_COURSE: usize = 24;

/// A recipe that passed validation.
pub struct Loaded {
    pub published: Published,
}

/// Validates one recipe file: the typed recipe, or every problem, each at its line and column.
pub fn load_recipe(file: &ContentFile) -> Result<Loaded, Vec<Problem>> {
    let path = &file.path;
    let Some(slug) = path.strip_prefix("recipes/").and_then(|name| name.strip_suffix(".json")) else {
        return Err(vec![Problem::whole(
            path,
            "(file)",
            "only recipes/<slug>.json files belong in recipes/",
        )]);
    };
    let mut problems = Vec::new();
    if !domain::slug::is_valid(slug) {
        problems.push(Problem::whole(
            path,
            "(file name)",
            format!("`{slug}` is not a slug: use 3-80 lower-case letters, digits and single hyphens"),
        ));
    }
    let value: serde_json::Value = match serde_json::from_slice(&file.bytes) {
        Ok(value) => value,
        Err(err) => {
            problems.push(Problem::json(file, &err));
            return Err(problems);
        }
    };
    match recipe::validate(&value, recipe::Source::ContentFile) {
        Ok((recipe, server)) if problems.is_empty() => {
            Ok(Loaded { published: Published { slug: slug.to_string(), recipe, server } })
        }
        Ok(_) => Err(problems),
        Err(diagnostics) => {
            problems.extend(diagnostics::located(file, diagnostics));
            Err(problems)
        }
    }
}

pub fn check(source: &Source, format: Format) -> Result<ExitCode> {
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
    if let Err(quote_problems) = crate::quotes::load(&crate::quotes::read(source)?) {
        problems.extend(quote_problems);
    }
    if problems.is_empty() {
        eprintln!("{} recipes are valid", listing.entries.len());
        Ok(ExitCode::SUCCESS)
    } else {
        diagnostics::print(source, format, &problems);
        Ok(ExitCode::FAILURE)
    }
}

/// A build that stops on content problems prints them like `builder check` does by default.
pub(crate) fn report(source: &Source, problems: &[Problem]) -> ExitCode {
    diagnostics::print(source, Format::Text, problems);
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
    pub(crate) root: PathBuf,
    written: Mutex<Vec<Written>>,
}

impl Out {
    pub(crate) fn new(root: &Path) -> Out {
        Out { root: root.to_path_buf(), written: Mutex::new(Vec::new()) }
    }

    /// Writes a new file: one of the last build is unlinked first, never rewritten in place, so the
    /// static asset hard-linked to it keeps the old bytes until the layout step relinks it.
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<Written> {
        let full = self.root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        write_new(&full, bytes)?;
        Ok(self.record(path, &sha256_hex(bytes), bytes.len() as u64))
    }

    /// Notes a file that is already in place with these contents.
    pub(crate) fn record(&self, path: &str, sha256: &str, bytes: u64) -> Written {
        let written = Written { path: path.to_string(), sha256: sha256.to_string(), bytes };
        self.written.lock().expect("no writer panics while holding the lock").push(written.clone());
        written
    }

    pub(crate) fn into_written(self) -> Vec<Written> {
        self.written.into_inner().expect("no writer panicked")
    }
}

/// Writes `path` as a new file (a new inode), whatever was there before.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            return Err(err).with_context(|| format!("replacing {}", path.display()));
        }
        _ => {}
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DocState {
    pub slug: String,
    pub version: u64,
    pub facets: DocFacets,
    /// The length of its line in the `recipes.jsonl` dump, newline included.
    pub jsonl_len: u64,
    /// What its cards were drawn from (`domain::card::key`); 0 for a recipe with a photo.
    pub card_key: u64,
}

/// What a rebuild needs from the last build, besides its output: small, so it loads in milliseconds.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct State {
    pub format: u32,
    pub source_key: String,
    pub commit: String,
    /// In search document-id order.
    pub docs: Vec<DocState>,
}

fn state_path(out_dir: &Path) -> PathBuf {
    sibling(out_dir, "state")
}

pub(crate) fn sibling(out_dir: &Path, suffix: &str) -> PathBuf {
    let name = out_dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "dist".into());
    out_dir.with_file_name(format!("{name}.{suffix}"))
}

fn load_state(out_dir: &Path, source: &Source) -> Option<State> {
    let bytes = std::fs::read(state_path(out_dir)).ok()?;
    let state: State = postcard::from_bytes(&bytes).ok()?;
    (state.format == STATE_FORMAT && state.source_key == source.key() && out_dir.is_dir()).then_some(state)
}

pub(crate) fn save_state(out_dir: &Path, state: &State) -> Result<()> {
    let bytes = postcard::to_allocvec(state)?;
    let path = state_path(out_dir);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

/// A rendered recipe on its way into the site.
pub(crate) struct Processed {
    pub slug: String,
    pub version: u64,
    pub card_key: u64,
    pub json: String,
    pub card: Card,
    pub terms: DocTerms,
}

pub(crate) struct Tools {
    pub stemmers: Stemmers,
}

/// What processing a recipe needs to know besides its own file.
#[derive(Default)]
pub(crate) struct Known {
    /// By slug, when the recipe was published: the date of the commit that added its file (git
    /// builds only). It becomes `created_at` when the file has none, so pages say `datePublished`.
    pub added: HashMap<String, String>,
    /// The content's photos (`photos/`) by path.
    pub photos: HashMap<String, Entry>,
    /// The last build's output and each recipe's card key there: cards whose key is the same are
    /// copied from it instead of drawn again (drawing is most of a full build's time otherwise).
    pub last_cards: Option<(PathBuf, HashMap<String, u64>)>,
}

impl Known {
    /// The photos of `source` and the dates `steps` (a full history, or a rebuild's new commits) say
    /// recipes were added; a rebuild adds the dates of the recipes it had from its state.
    pub(crate) fn of(source: &Source, steps: Option<&[history::Step]>) -> Result<Known> {
        let photos =
            source.list_if_any("photos/")?.into_iter().map(|entry| (entry.path.clone(), entry)).collect();
        let added = steps
            .map(|steps| {
                history::births(steps)
                    .into_iter()
                    .map(|(slug, idx)| (slug.to_string(), steps[idx].item.date.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Known { added, photos, last_cards: None })
    }
}

fn process(
    reader: &Reader,
    entry: &Entry,
    out: &Out,
    tools: &Tools,
    known: &Known,
) -> Result<Result<Processed, Vec<Problem>>> {
    let file = ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? };
    let mut published = match load_recipe(&file) {
        Ok(loaded) => loaded.published,
        Err(problems) => return Ok(Err(problems)),
    };
    if published.server.created_at.is_none() {
        published.server.created_at = known.added.get(&published.slug).cloned();
    }
    let card_key = match write_images(reader, &file, &published, out, known)? {
        Ok(card_key) => card_key,
        Err(problems) => return Ok(Err(problems)),
    };
    let json = serde_json::to_string(&published)?;
    out.write(&format!("r/{}.json", published.slug), json.as_bytes())?;
    Ok(Ok(Processed {
        slug: published.slug.clone(),
        version: published.server.version,
        card_key,
        json,
        card: Card::from_recipe(&published.slug, &published.recipe),
        terms: DocTerms::of(&published.recipe, &tools.stemmers),
    }))
}

/// A recipe's images: its photo, checked and copied, or else its three cards, drawn (`images.rs`)
/// or, when the last build drew the same ones, copied from it. Returns the card key (0 with a photo).
fn write_images(
    reader: &Reader,
    file: &ContentFile,
    published: &Published,
    out: &Out,
    known: &Known,
) -> Result<Result<u64, Vec<Problem>>> {
    let Some(photo) = &published.server.photo else {
        let key = domain::card::key(published);
        let last = known.last_cards.as_ref().filter(|(_, keys)| keys.get(&published.slug) == Some(&key));
        for ratio in domain::card::Ratio::ALL {
            let path = domain::card::path(&published.slug, ratio, domain::card::Format::Png);
            let drawn_before = last.and_then(|(dir, _)| std::fs::read(dir.join(&path)).ok());
            let png = match drawn_before {
                Some(png) => png,
                None => images::card_png(published, ratio)?,
            };
            out.write(&path, &png)?;
        }
        return Ok(Ok(key));
    };
    let problem =
        |reason: String| Err(diagnostics::located(file, [domain::Diagnostic::new("photo.file", reason)]));
    let Some(entry) = known.photos.get(&photo.file) else {
        return Ok(problem(format!("{} is not in the content: add the image there", photo.file)));
    };
    let bytes = reader.read(entry)?;
    match images::photo_problem(&bytes, photo.extension()) {
        Some(reason) => Ok(problem(format!("{}: {reason}", photo.file))),
        None => {
            out.write(&photo.published_path(&published.slug), &bytes)?;
            Ok(Ok(0))
        }
    }
}

/// Processes entries chunk by chunk, in order, handing each valid recipe to `each`; returns the problems.
pub(crate) fn process_all(
    source: &Source,
    entries: &[&Entry],
    out: &Out,
    tools: &Tools,
    known: &Known,
    mut each: impl FnMut(Processed) -> Result<()>,
) -> Result<Vec<Problem>> {
    let bar = progress(entries.len(), "recipes");
    let mut problems = Vec::new();
    for chunk in entries.chunks(CHUNK) {
        let results: Vec<Result<Result<Processed, Vec<Problem>>>> = chunk
            .par_iter()
            .map_init(
                || source.reader(),
                |reader, entry| {
                    let reader = reader.as_ref().map_err(|err| anyhow::anyhow!("{err:#}"))?;
                    process(reader, entry, out, tools, known)
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
        for (slug, items) in history::histories(steps) {
            if built.contains(slug) {
                out.write(&format!("r/{slug}.history.json"), serde_json::to_string(&items)?.as_bytes())?;
            }
        }
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

/// The files every build rewrites whole: slug list, home page, open data, the quote service, and the
/// agents' files. `manifest` is the index already written under `out`, whose card shards give the
/// recipes the home page and llms.txt show.
pub(crate) fn write_site_wide(
    source: &Source,
    out: &Out,
    docs: &[DocState],
    manifest: &Manifest,
    facet_counts: &BTreeMap<String, u64>,
) -> Result<()> {
    // Every built slug with its version, in search document-id order: the Worker uses it to keep new
    // slugs unique, to retire overlay rows this build has published, and to hide replaced documents.
    let slugs: Vec<(&str, u64)> = docs.iter().map(|d| (d.slug.as_str(), d.version)).collect();
    out.write("slugs.json", serde_json::to_string(&slugs)?.as_bytes())?;

    // The home page and llms.txt show a handful per course; search and the dumps hold the rest.
    let mut per_course: BTreeMap<domain::recipe::Course, usize> = BTreeMap::new();
    let shown: Vec<u32> = docs
        .iter()
        .enumerate()
        .filter(|(_, doc)| {
            let shown = per_course.entry(doc.facets.course).or_default();
            *shown += 1;
            *shown <= SHOWN_PER_COURSE
        })
        .map(|(id, _)| id as u32)
        .collect();
    let cards = shown_cards(out, manifest, &shown)?;
    let cards: Vec<&Card> = cards.iter().collect();
    let renderer = pages::Renderer::new()?;
    out.write("index.html", renderer.home_page(&cards, facet_counts)?.as_bytes())?;
    out.write("404.html", renderer.not_found_page()?.as_bytes())?;
    opendata::write(out, facet_counts)?;
    // The quote service (shows, episodes, transcripts) is rebuilt whole; it and the agents (issue 6)
    // add their parts of llms.txt, and llms-full.txt expands it.
    let quotes_llms = crate::quotes::build_into(source, out)?;
    let parts = [quotes_llms, crate::agents::llms_part()];
    let llms = opendata::llms_txt(&cards, &dump_names(docs), &parts);
    out.write("llms.txt", llms.as_bytes())?;
    out.write("llms-full.txt", crate::agents::llms_full(&llms).as_bytes())?;
    out.write("openapi.json", serde_json::to_string_pretty(&crate::agents::openapi())?.as_bytes())?;
    Ok(())
}

pub(crate) fn dump_names(docs: &[DocState]) -> Vec<String> {
    jsonl::parts(docs.iter().map(|d| d.jsonl_len)).into_iter().map(|(name, _)| name).collect()
}

/// The cards of documents `ids`, read back from the card shards under `out`.
fn shown_cards(out: &Out, manifest: &Manifest, ids: &[u32]) -> Result<Vec<Card>> {
    let mut shards: BTreeMap<String, Vec<Card>> = BTreeMap::new();
    let mut cards = Vec::with_capacity(ids.len());
    for id in ids {
        let name = manifest.card_file(*id);
        if !shards.contains_key(&name) {
            let bytes = std::fs::read(out.root.join("search").join(&name))
                .with_context(|| format!("reading {name}"))?;
            shards.insert(
                name.clone(),
                postcard::from_bytes(&bytes).with_context(|| format!("decoding {name}"))?,
            );
        }
        let card =
            shards[&name].get((id % CARDS_PER_SHARD) as usize).with_context(|| format!("{name} is short"))?;
        cards.push(card.clone());
    }
    Ok(cards)
}

/// Phase timings on stderr when `BUILDER_TIMINGS=1`, for finding where a build spends its time.
pub(crate) struct Timings {
    pub enabled: bool,
    last: std::time::Instant,
}

impl Timings {
    pub fn new() -> Timings {
        Timings { enabled: std::env::var_os("BUILDER_TIMINGS").is_some(), last: std::time::Instant::now() }
    }

    pub fn lap(&mut self, phase: &str) {
        if self.enabled {
            eprintln!("  {phase}: {:.3} s", self.last.elapsed().as_secs_f64());
        }
        self.last = std::time::Instant::now();
    }
}
