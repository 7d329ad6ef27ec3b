//! Recipe files on their way into the site: validated with every problem located, rendered, and
//! their card and terms taken, a chunk at a time in parallel.

use std::process::ExitCode;

use anyhow::Result;
use domain::recipe::{self, Published};
use domain::search::{Card, DocTerms};
use domain::text::Stemmers;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::diagnostics::{self, Format, Problem};
use crate::output::Out;
use crate::source::{ContentFile, Entry, Reader, Source};

/// Recipes read, validated and rendered together; bounds the memory a build holds at once.
const CHUNK: usize = 4096;

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

/// A build that stops on content problems prints them like `builder check` does by default.
pub(crate) fn report(source: &Source, problems: &[Problem]) -> ExitCode {
    diagnostics::print(source, Format::Text, problems);
    ExitCode::FAILURE
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

/// A rendered recipe on its way into the site.
pub(crate) struct Processed {
    pub slug: String,
    pub version: u64,
    pub json: String,
    pub card: Card,
    pub terms: DocTerms,
}

pub(crate) struct Tools {
    pub stemmers: Stemmers,
}

fn process(
    reader: &Reader,
    entry: &Entry,
    out: &Out,
    tools: &Tools,
) -> Result<Result<Processed, Vec<Problem>>> {
    let file = ContentFile { path: entry.path.clone(), bytes: reader.read(entry)? };
    let published = match load_recipe(&file) {
        Ok(loaded) => loaded.published,
        Err(problems) => return Ok(Err(problems)),
    };
    let json = serde_json::to_string(&published)?;
    out.write(&format!("r/{}.json", published.slug), json.as_bytes())?;
    Ok(Ok(Processed {
        slug: published.slug.clone(),
        version: published.server.version,
        json,
        card: Card::from_recipe(&published.slug, &published.recipe),
        terms: DocTerms::of(&published.recipe, &tools.stemmers),
    }))
}

/// Processes entries chunk by chunk, in order, handing each valid recipe to `each`; returns the problems.
pub(crate) fn process_all(
    source: &Source,
    entries: &[&Entry],
    out: &Out,
    tools: &Tools,
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
