//! `builder import-recipe`: a Cooklang file, or an HTML page or JSON-LD file carrying a schema.org
//! `Recipe`, written as a content file `DIR/recipes/<slug>.json` for a pull request.
//!
//! The conversion is `domain::recipes::cooking::import` (Cooklang through cooklang-rs, the official parser);
//! this command reads the files, finds the JSON-LD in a page with html5ever (the `scraper` crate, a
//! browser-grade HTML parser), picks a free slug, writes the draft, and prints every problem of it,
//! each placed at its field in the written file, so a contributor fixes them all in one pass. A draft
//! with problems is written too: what the source could not say is asked for, and the file is where
//! the answer goes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use domain::recipes::cooking::import::{self, Draft};
use domain::recipes::recipe::Lang;
use serde_json::Value;

use crate::diagnostics::{self, Problem};
use crate::source::ContentFile;

/// The formats `import-recipe` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A `.cook` file.
    Cooklang,
    /// An HTML page with a schema.org `Recipe` in JSON-LD, or the JSON-LD itself.
    SchemaOrg,
}

/// Imports each file into `content/recipes/`; fails when any draft has problems.
pub fn run(format: Format, content: &Path, files: &[PathBuf], lang: Option<Lang>) -> Result<ExitCode> {
    let recipes = content.join("recipes");
    std::fs::create_dir_all(&recipes).with_context(|| format!("creating {}", recipes.display()))?;
    let mut n_problems = 0;
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let draft = match format {
            Format::Cooklang => import::from_cooklang(&text, lang),
            Format::SchemaOrg => {
                import::from_schema_org(&json_ld(&text).with_context(|| file.display().to_string())?, lang)
            }
        };
        let slug = free_slug(&recipes, &title_of(&draft).unwrap_or_else(|| stem(file)));
        let path = format!("recipes/{slug}.json");
        let mut bytes = serde_json::to_string_pretty(&draft.doc)?;
        bytes.push('\n');
        std::fs::write(content.join(&path), &bytes).with_context(|| format!("writing {path}"))?;
        let written = ContentFile { path: path.clone(), bytes: bytes.into_bytes() };
        let problems: Vec<Problem> = diagnostics::located(&written, draft.problems);
        eprintln!("{} → {}: {} problem(s)", file.display(), content.join(&path).display(), problems.len());
        for problem in &problems {
            let shown =
                Problem { file: content.join(&problem.file).display().to_string(), ..problem.clone() };
            println!("{shown}");
        }
        n_problems += problems.len();
    }
    if n_problems > 0 {
        eprintln!("{n_problems} problem(s): answer them in the written files, then run `builder check`");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The JSON-LD of a page (every `<script type="application/ld+json">`, as one list), or the file
/// itself when it is JSON.
fn json_ld(text: &str) -> Result<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(value);
    }
    let page = scraper::Html::parse_document(text);
    let selector =
        scraper::Selector::parse(r#"script[type="application/ld+json"]"#).expect("a valid selector");
    let blocks: Vec<Value> = page
        .select(&selector)
        .filter_map(|script| serde_json::from_str(&script.text().collect::<String>()).ok())
        .collect();
    if blocks.is_empty() {
        bail!("neither JSON nor an HTML page with JSON-LD (<script type=\"application/ld+json\">)");
    }
    Ok(Value::Array(blocks))
}

/// The first title of a draft.
fn title_of(draft: &Draft) -> Option<String> {
    let texts = draft.doc.get("texts")?.as_object()?;
    let pick = |lang: &str| texts.get(lang)?.get("title")?.as_str().map(str::to_string);
    pick("en").or_else(|| pick("pt")).or_else(|| pick("he"))
}

fn stem(file: &Path) -> String {
    file.file_stem().map(|stem| stem.to_string_lossy().to_string()).unwrap_or_else(|| "recipe".into())
}

/// A slug from the title that no file in `recipes` has yet: `-2`, `-3`… on collision.
fn free_slug(recipes: &Path, title: &str) -> String {
    let base = domain::recipes::slug::from_title(title);
    let taken = |slug: &str| recipes.join(format!("{slug}.json")).exists();
    if !taken(&base) {
        return base;
    }
    (2..).map(|n| format!("{base}-{n}")).find(|slug| !taken(slug)).expect("some number is free")
}
