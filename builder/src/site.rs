//! The files every build rewrites whole, full or incremental: the slug list, home and 404 pages, open
//! data, the quote service and the agents' files.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use domain::recipes::search::{CARDS_PER_SHARD, Card, Manifest};

use crate::output::Out;
use crate::source::Source;
use crate::state::DocState;
use crate::{jsonl, opendata, pages};

/// Recipes per course listed on the home page and in llms.txt.
const SHOWN_PER_COURSE: usize = 24;

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
    let mut per_course: BTreeMap<domain::recipes::recipe::Course, usize> = BTreeMap::new();
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
    opendata::write(out, facet_counts)?;
    // The quote service (shows, episodes, transcripts) is rebuilt whole; it and the agents
    // add their parts of llms.txt, and llms-full.txt expands it.
    let (quotes_llms, n_episodes) = crate::quotes::build_into(source, out)?;
    let renderer = pages::Renderer::new()?;
    out.write("index.html", renderer.home_page(&cards, facet_counts, n_episodes)?.as_bytes())?;
    out.write("404.html", renderer.not_found_page(None)?.as_bytes())?;
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
