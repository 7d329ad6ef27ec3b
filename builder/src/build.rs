//! `builder build` and `builder check`: validate every content file, then write `dist/`.
//!
//! The output is a function of the content alone: files are written in a fixed order, nothing reads
//! the clock, and maps are sorted, so the same commit always builds byte-identical output.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use domain::recipe::{self, Published};
use domain::search::{Card, DocTerms, IndexBuilder};
use domain::text::Stemmers;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::source::{ContentFile, Source};
use crate::{opendata, pages};

/// A recipe that passed validation.
pub struct Loaded {
    pub published: Published,
}

/// Validates every recipe file; returns the recipes sorted by slug, or every problem as `file: field: reason`.
pub fn load_recipes(files: &[ContentFile]) -> Result<Vec<Loaded>, Vec<String>> {
    let results: Vec<Result<Loaded, Vec<String>>> = files.par_iter().map(load_recipe).collect();
    let mut loaded = Vec::with_capacity(results.len());
    let mut problems = Vec::new();
    for result in results {
        match result {
            Ok(recipe) => loaded.push(recipe),
            Err(mut more) => problems.append(&mut more),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    loaded.sort_by(|a, b| a.published.slug.cmp(&b.published.slug));
    Ok(loaded)
}

fn load_recipe(file: &ContentFile) -> Result<Loaded, Vec<String>> {
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
    let content = source.read("recipes/")?;
    match load_recipes(&content.files) {
        Ok(recipes) => {
            eprintln!("{} recipes are valid", recipes.len());
            Ok(ExitCode::SUCCESS)
        }
        Err(problems) => Ok(report(&problems)),
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
        let written =
            Written { path: path.to_string(), sha256: sha256_hex(bytes), bytes: bytes.len() as u64 };
        self.written.lock().expect("no writer panics while holding the lock").push(written.clone());
        Ok(written)
    }

    fn into_written(self) -> Vec<Written> {
        let mut written = self.written.into_inner().expect("no writer panicked");
        written.sort_by(|a, b| a.path.cmp(&b.path));
        written
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

pub fn build(source: &Source, out_dir: &Path) -> Result<ExitCode> {
    let content = source.read("recipes/")?;
    let recipes = match load_recipes(&content.files) {
        Ok(recipes) => recipes,
        Err(problems) => return Ok(report(&problems)),
    };
    let at =
        content.commit.as_ref().map(|c| format!(" (commit {}, {})", &c.id[..12], c.time)).unwrap_or_default();
    drop(content);

    if out_dir.exists() {
        std::fs::remove_dir_all(out_dir).with_context(|| format!("clearing {}", out_dir.display()))?;
    }
    let out = Out::new(out_dir);
    let stemmers = Stemmers::default();
    let renderer = pages::Renderer::new()?;

    let bar = progress(recipes.len(), "recipes");
    let per_recipe: Vec<(Card, DocTerms, String)> = recipes
        .par_iter()
        .map(|loaded| -> Result<(Card, DocTerms, String)> {
            let published = &loaded.published;
            let json = serde_json::to_string(published)?;
            out.write(&format!("r/{}.json", published.slug), json.as_bytes())?;
            out.write(&format!("r/{}.html", published.slug), renderer.recipe_page(published)?.as_bytes())?;
            bar.inc(1);
            Ok((
                Card::from_recipe(&published.slug, &published.recipe),
                DocTerms::of(&published.recipe, &stemmers),
                json,
            ))
        })
        .collect::<Result<_>>()?;
    bar.finish_and_clear();

    let mut index = IndexBuilder::default();
    let mut jsonl = String::new();
    for (card, terms, json) in &per_recipe {
        index.add(card.clone(), terms);
        jsonl.push_str(json);
        jsonl.push('\n');
    }
    let built = index.finish();
    built
        .files
        .par_iter()
        .try_for_each(|file| out.write(&format!("search/{}", file.name), &file.bytes).map(drop))?;
    out.write("search/manifest.json", serde_json::to_string(&built.manifest)?.as_bytes())?;

    let cards: Vec<&Card> = per_recipe.iter().map(|(card, _, _)| card).collect();
    out.write("index.html", renderer.home_page(&cards, &built.facet_counts)?.as_bytes())?;
    out.write("404.html", renderer.not_found_page()?.as_bytes())?;
    opendata::write(&out, &opendata::Inputs { jsonl: &jsonl, cards: &cards, facets: &built.facet_counts })?;

    let written = out.into_written();
    opendata::write_manifests(out_dir, &written)?;
    eprintln!("built {} recipes from {}{at} into {}", recipes.len(), source.describe(), out_dir.display());
    Ok(ExitCode::SUCCESS)
}
