//! Feed reading (`domain::quotes::feed::parse`): throughput over a folder of feeds, and what it
//! found in each, for `scripts/bench-feeds.py` to compare with a peer parser.
//!
//! `FEEDS_DIR` names the folder (`<name>.xml` with `<name>.url` beside it, the feed's address);
//! `FEEDS_OUT` the JSON file written: per feed, each item's guid, audio, transcripts and people.

// A benchmark reads files, the environment and the clock; the rule against IO is for the library.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::time::Instant;

use domain::quotes::feed::{Feed, parse};
use url::Url;

fn main() {
    let (Ok(dir), Ok(out)) = (std::env::var("FEEDS_DIR"), std::env::var("FEEDS_OUT")) else {
        eprintln!("feeds bench: set FEEDS_DIR and FEEDS_OUT (scripts/bench-feeds.sh does)");
        return;
    };
    let mut feeds: Vec<(String, Url, Vec<u8>)> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    names.sort();
    for path in names.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "xml")) {
        let url = std::fs::read_to_string(path.with_extension("url")).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        feeds.push((name, Url::parse(url.trim()).unwrap(), std::fs::read(&path).unwrap()));
    }
    let bytes: usize = feeds.iter().map(|(_, _, bytes)| bytes.len()).sum();
    // Warm up once, then the best of five passes over every feed.
    let parsed: BTreeMap<String, Feed> =
        feeds.iter().map(|(name, url, bytes)| (name.clone(), parse(bytes, url).unwrap())).collect();
    let items: usize = parsed.values().map(|feed| feed.items.len()).sum();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        for (_, url, bytes) in &feeds {
            std::hint::black_box(parse(bytes, url).unwrap());
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!(
        "ours (domain::quotes::feed, rss 2.1): {} feeds, {} items, {:.1} MiB in {:.1} ms: {:.0} MiB/s, {:.0} items/ms",
        feeds.len(),
        items,
        bytes as f64 / 1048576.0,
        best * 1000.0,
        bytes as f64 / 1048576.0 / best,
        items as f64 / (best * 1000.0)
    );
    let found: BTreeMap<&String, Vec<serde_json::Value>> = parsed
        .iter()
        .map(|(name, feed)| {
            let items = feed
                .items
                .iter()
                .map(|item| {
                    serde_json::json!({
                        "guid": item.guid,
                        "title": item.title,
                        "link": item.link,
                        "audio_url": item.audio_url,
                        "published": item.published,
                        "duration_s": item.duration_s,
                        "transcripts": item.transcripts.iter().map(|t| &t.url).collect::<Vec<_>>(),
                        "persons": item.persons.iter().map(|p| &p.name).collect::<Vec<_>>(),
                    })
                })
                .collect();
            (name, items)
        })
        .collect();
    std::fs::write(out, serde_json::to_vec(&found).unwrap()).unwrap();
}
