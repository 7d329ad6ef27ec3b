//! Search benchmark in the domain code on a generated index (100,000 recipes by default).
//!
//! Reports, over a fixed set of queries (words from titles in all three languages, two-word
//! queries, Hebrew words with a prefix letter, filters, and one-typo queries):
//! - time per query with every index file at hand (the domain's own work: decoding shards and
//!   postings, intersecting, ranking, paging), p50/p99/max;
//! - the index bytes a Worker must load for one query (manifest + every file `search` asks for);
//! - one-typo recall: a query of a recipe's distinctive title word with one edit finds that recipe.
//!
//! `cargo bench -p tests --bench search` (BENCH_RECIPES to change the size); also writes the query
//! paths to tests/.work/bench-queries.txt for the end-to-end load test.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::Result;
use domain::index::{Need, SearchError};
use domain::recipes::recipe::{Source, validate};
use domain::recipes::search::{Card, DocTerms, Filters, IndexBuilder, Manifest, Query, search};
use domain::text::Stemmers;
use serde_json::Value;
use tests::corpus::{Rng, generate, templates};

struct Doc {
    slug: String,
    titles: Vec<(String, String)>,
}

fn main() -> Result<()> {
    let n: usize = std::env::var("BENCH_RECIPES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let root = tests::root();
    let templates = templates(&root)?;
    let stemmers = Stemmers::default();

    let started = Instant::now();
    let mut builder = IndexBuilder::default();
    let mut docs = Vec::with_capacity(n);
    let mut generated: Vec<(String, Value)> = (0..n).map(|idx| generate(&templates, idx, 7)).collect();
    generated.sort_by(|a, b| a.0.cmp(&b.0));
    for (slug, doc) in &generated {
        let (recipe, _) = validate(doc, Source::ContentFile).map_err(|p| anyhow::anyhow!("{slug}: {p:?}"))?;
        builder.add(Card::from_recipe(slug, &recipe), &DocTerms::of(slug, &recipe, &stemmers));
        let titles =
            recipe.texts.iter().map(|(lang, text)| (lang.code().to_string(), text.title.clone())).collect();
        docs.push(Doc { slug: slug.clone(), titles });
    }
    drop(generated);
    let built = builder.finish();
    let manifest_bytes = serde_json::to_vec(&built.manifest)?.len();
    let files: HashMap<String, Vec<u8>> = built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
    let index_bytes: usize = files.values().map(Vec::len).sum();
    println!(
        "index of {n} recipes built in {:.1} s: {} files, {:.1} MiB, manifest {} KiB, {} dictionary shards",
        started.elapsed().as_secs_f64(),
        files.len(),
        index_bytes as f64 / 1048576.0,
        manifest_bytes / 1024,
        built.manifest.shards.len()
    );

    let mut shard_sizes: Vec<(usize, &str)> = (0..built.manifest.shards.len())
        .map(|idx| (files[&built.manifest.shard_file(idx)].len(), built.manifest.shards[idx].as_str()))
        .collect();
    shard_sizes.sort_unstable_by(|a, b| b.cmp(a));
    let largest: Vec<String> =
        shard_sizes.iter().take(5).map(|(size, prefix)| format!("`{prefix}` {} KiB", size / 1024)).collect();
    println!("largest dictionary shards: {}", largest.join(", "));

    let (queries, typos) = query_set(&docs, 1000);
    let mut paths = String::new();
    let mut times = Vec::with_capacity(queries.len());
    let mut loaded_bytes = Vec::with_capacity(queries.len());
    let mut heaviest = Vec::with_capacity(queries.len());
    for query in &queries {
        paths.push_str(&query_path(query));
        paths.push('\n');
        // The domain's own time: every file at hand.
        let started = Instant::now();
        let outcome = search(&built.manifest, query, &stemmers, &files);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(outcome.is_ok(), "a query failed with all files at hand");
        let (bytes, kinds) = bytes_to_load(&built.manifest, query, &stemmers, &files);
        loaded_bytes.push(manifest_bytes + bytes);
        heaviest.push((manifest_bytes + bytes, query.q.clone(), kinds));
    }
    // Recall is judged against the same query spelled right: of the recipes it puts in the first
    // page, how many the one-typo query puts there too.
    let (mut found, mut eligible) = (0, 0);
    for (typo_query, exact_query, slug) in &typos {
        let on_page = |query: &Query| -> Result<bool> {
            let outcome =
                search(&built.manifest, query, &stemmers, &files).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            Ok(outcome.cards.iter().any(|card| &card.slug == slug))
        };
        if on_page(exact_query)? {
            eligible += 1;
            if on_page(typo_query)? {
                found += 1;
            }
        }
    }
    std::fs::create_dir_all(root.join("tests/.work"))?;
    std::fs::write(root.join("tests/.work/bench-queries.txt"), paths)?;

    times.sort_by(f64::total_cmp);
    loaded_bytes.sort_unstable();
    let pct = |p: f64| ((times.len() as f64 - 1.0) * p).round() as usize;
    println!("\n| measure ({} queries) | p50 | p99 | max |\n|---|---|---|---|", queries.len());
    println!(
        "| time per query, domain | {:.3} ms | {:.3} ms | {:.3} ms |",
        times[pct(0.5)],
        times[pct(0.99)],
        times[times.len() - 1]
    );
    println!(
        "| index bytes loaded per query | {} KiB | {} KiB | {} KiB |",
        loaded_bytes[pct(0.5)] / 1024,
        loaded_bytes[pct(0.99)] / 1024,
        loaded_bytes[loaded_bytes.len() - 1] / 1024
    );
    heaviest.sort_by_key(|h| std::cmp::Reverse(h.0));
    for (bytes, q, kinds) in heaviest.iter().take(12) {
        let kinds: Vec<String> =
            kinds.iter().map(|(kind, (n, b))| format!("{n} {kind} {} KiB", b / 1024)).collect();
        println!("heavy query `{q}`: {} KiB = {}", bytes / 1024, kinds.join(", "));
    }
    println!(
        "\none-typo recall: {found}/{eligible} ({:.1} %) of the recipes the correctly spelled query finds",
        100.0 * found as f64 / eligible.max(1) as f64
    );
    Ok(())
}

/// Runs a query the way the Worker does, from an empty cache, and adds up what it had to load.
fn bytes_to_load(
    manifest: &Manifest,
    query: &Query,
    stemmers: &Stemmers,
    all: &HashMap<String, Vec<u8>>,
) -> (usize, std::collections::BTreeMap<String, (usize, usize)>) {
    let mut loaded: HashMap<String, Vec<u8>> = HashMap::new();
    let mut total = 0;
    let mut kinds: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    loop {
        match search(manifest, query, stemmers, &loaded) {
            Ok(_) => return (total, kinds),
            Err(SearchError::Need(Need(names))) => {
                for name in names {
                    let bytes = all[&name].clone();
                    // Card shards are the answer, not the index: counted apart from the index budget.
                    if !name.starts_with("cards-") {
                        total += bytes.len();
                        let kind =
                            kinds.entry(name.split('-').next().unwrap_or_default().to_string()).or_default();
                        kind.0 += 1;
                        kind.1 += bytes.len();
                    }
                    loaded.insert(name, bytes);
                }
            }
            Err(SearchError::Corrupt(c)) => panic!("{c:?}"),
        }
    }
}

fn query(q: &str, filters: Filters) -> Query {
    Query { q: q.to_string(), filters, lang: None, offset: 0, limit: 20 }
}

/// A fixed, mixed query set, and one-typo queries with the recipe each should find.
#[allow(clippy::type_complexity)]
fn query_set(docs: &[Doc], n: usize) -> (Vec<Query>, Vec<(Query, Query, String)>) {
    let mut rng = Rng::new(99);
    let mut queries = Vec::with_capacity(n);
    let mut typos = Vec::new();
    let words = |title: &str| -> Vec<String> {
        title
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_string)
            .collect()
    };
    while queries.len() < n {
        let doc = &docs[rng.below(docs.len())];
        let (lang, title) = &doc.titles[rng.below(doc.titles.len())];
        let title_words = words(title);
        if title_words.is_empty() {
            continue;
        }
        let word = rng.pick(&title_words).clone();
        let kind = rng.below(6);
        let q = match kind {
            0 | 1 => query(&word, Filters::default()),
            2 => query(&title_words.join(" "), Filters::default()),
            3 if lang == "he" => query(&format!("ו{word}"), Filters::default()),
            3 => query(&word, Filters { flags: vec!["gf"], ..Filters::default() }),
            4 => query(&word, Filters { flags: vec!["vegan"], max_min: Some(60), ..Filters::default() }),
            _ => query(
                "",
                Filters {
                    flags: vec!["vegetarian"],
                    course: Some(domain::recipes::recipe::Course::Main),
                    ..Filters::default()
                },
            ),
        };
        queries.push(q);
        // The invented place name is the last title word: distinctive, as a real name would be.
        if let Some(name) = title_words.last().filter(|w| w.chars().count() >= 5)
            && typos.len() < n / 4
        {
            let typo = one_edit(name, &mut rng);
            let typo_query = query(&format!("{typo} {}", title_words[0]), Filters::default());
            let exact_query = query(&format!("{name} {}", title_words[0]), Filters::default());
            typos.push((typo_query, exact_query, doc.slug.clone()));
        }
    }
    (queries, typos)
}

/// One edit not in the first two letters: a swap, a deletion, a doubling or a substitution.
fn one_edit(word: &str, rng: &mut Rng) -> String {
    let mut chars: Vec<char> = word.chars().collect();
    let at = 2 + rng.below(chars.len() - 2);
    match rng.below(4) {
        0 if at + 1 < chars.len() => chars.swap(at, at + 1),
        1 => {
            chars.remove(at);
        }
        2 => chars.insert(at, chars[at]),
        _ => chars[at] = if chars[at] == 'a' { 'e' } else { 'a' },
    }
    chars.into_iter().collect()
}

fn query_path(query: &Query) -> String {
    let mut path = String::from("/api/recipes?q=");
    for byte in query.q.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => path.push(byte as char),
            b' ' => path.push('+'),
            _ => path.push_str(&format!("%{byte:02X}")),
        }
    }
    for flag in &query.filters.flags {
        path.push_str(&format!("&{flag}=1"));
    }
    if let Some(course) = query.filters.course {
        path.push_str(&format!("&course={}", course.code()));
    }
    if let Some(max_min) = query.filters.max_min {
        path.push_str(&format!("&max_min={max_min}"));
    }
    path
}
