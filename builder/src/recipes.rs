//! Recipe files on their way into the site: validated with every problem located, written as
//! `r/<slug>.json` with their images (a photo checked and copied, else their card drawn), and their
//! card and terms taken, a chunk at a time in parallel.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use domain::recipes::recipe::{self, Published};
use domain::recipes::search::{Card, DocTerms};
use domain::text::Stemmers;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::diagnostics::{self, Format, Problem};
use crate::output::Out;
use crate::source::{ContentFile, Entry, Reader, Source};
use crate::{history, images};

/// Recipes read, validated and written together; bounds the memory a build holds at once.
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
    if !domain::recipes::slug::is_valid(slug) {
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
        terms: DocTerms::of(&published.slug, &published.recipe, &tools.stemmers),
    }))
}

/// A recipe's images: its photo, checked and copied, or else its card, drawn (`images.rs`) or, when
/// the last build drew the same one, copied from it. Returns the card key (0 with a photo).
fn write_images(
    reader: &Reader,
    file: &ContentFile,
    published: &Published,
    out: &Out,
    known: &Known,
) -> Result<Result<u64, Vec<Problem>>> {
    use domain::recipes::card;
    let Some(photo) = &published.server.photo else {
        let key = card::key(published);
        let last = known.last_cards.as_ref().filter(|(_, keys)| keys.get(&published.slug) == Some(&key));
        let path = card::path(&published.slug, card::DRAWN, card::Format::Png);
        let drawn_before = last.and_then(|(dir, _)| std::fs::read(dir.join(&path)).ok());
        let png = match drawn_before {
            Some(png) => png,
            None => images::card_png(published, card::DRAWN)?,
        };
        out.write(&path, &png)?;
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
/// `each` (the index, the dump) runs on a thread of its own, taking one chunk while the next is
/// processed, so no core waits for it.
pub(crate) fn process_all(
    source: &Source,
    entries: &[&Entry],
    out: &Out,
    tools: &Tools,
    known: &Known,
    mut each: impl FnMut(Processed) -> Result<()> + Send,
) -> Result<Vec<Problem>> {
    type Chunk = Vec<Result<Result<Processed, Vec<Problem>>>>;
    let bar = progress(entries.len(), "recipes");
    let problems = std::thread::scope(|scope| {
        let (send, taken) = std::sync::mpsc::sync_channel::<Chunk>(1);
        let taker = scope.spawn(move || -> Result<Vec<Problem>> {
            let mut problems = Vec::new();
            for results in taken {
                for result in results {
                    match result? {
                        Ok(processed) => each(processed)?,
                        Err(mut more) => problems.append(&mut more),
                    }
                }
            }
            Ok(problems)
        });
        for chunk in entries.chunks(CHUNK) {
            let results: Chunk = chunk
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
            // A taker that stopped on an error says so when joined.
            if send.send(results).is_err() {
                break;
            }
        }
        drop(send);
        taker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    bar.finish_and_clear();
    Ok(problems)
}
