//! What cooks expect, in the domain code: time to scale and convert a recipe, time to write
//! it as Cooklang, and the share of recipes whose Cooklang cooklang-rs reads back to the same
//! ingredients, quantities and steps — on the sample recipes and on a generated corpus.
//!
//! `cargo bench -p tests --bench cooking` (BENCH_RECIPES changes the generated corpus, default
//! 100,000). Timed with `Instant` around the domain calls; figures go to BENCHMARKS.md.

use std::time::Instant;

use anyhow::Result;
use domain::recipes::cooking::units::System;
use domain::recipes::cooking::{Request, adjust, cooklang, import};
use domain::recipes::recipe::{Published, Source, validate};
use serde_json::Value;

fn published(slug: &str, doc: &Value) -> Published {
    let (recipe, server) = validate(doc, Source::ContentFile).expect("sample recipes are valid");
    Published { slug: slug.to_string(), recipe, server }
}

/// Median and 99th percentile of `samples` (µs).
fn quantiles(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

fn main() -> Result<()> {
    let root = tests::root();
    let templates = tests::corpus::templates(&root)?;
    let samples: Vec<Published> =
        templates.iter().enumerate().map(|(idx, doc)| published(&format!("sample-{idx}"), doc)).collect();
    let n_lines: usize =
        samples.iter().flat_map(|p| p.recipe.texts.values()).map(|t| t.ingredients.len()).sum();
    println!("sample: {} recipes, {} ingredient lines in all languages", samples.len(), n_lines);

    // Scaling and conversion: each request over every sample recipe, many rounds.
    let requests = [
        ("servings=7", Request { servings: Some(7), units: None }),
        ("units=us", Request { servings: None, units: Some(System::Us) }),
        ("units=metric", Request { servings: None, units: Some(System::Metric) }),
        ("servings=3&units=us", Request { servings: Some(3), units: Some(System::Us) }),
    ];
    println!("\n| request | p50 per recipe | p99 per recipe | mean per ingredient line |");
    println!("|---|---|---|---|");
    for (name, request) in requests {
        let mut per_recipe = Vec::new();
        let started = Instant::now();
        let rounds = 200;
        for _ in 0..rounds {
            for recipe in &samples {
                let t = Instant::now();
                let adjusted = adjust(recipe, request);
                std::hint::black_box(&adjusted);
                per_recipe.push(t.elapsed().as_secs_f64() * 1e6);
            }
        }
        let per_line = started.elapsed().as_secs_f64() * 1e6 / (rounds * n_lines) as f64;
        let (p50, p99) = quantiles(per_recipe);
        println!("| `{name}` | {p50:.1} µs | {p99:.1} µs | {per_line:.2} µs |");
    }

    // Cooklang out and back on the sample.
    let mut export_us = Vec::new();
    let (mut texts, mut same) = (0, 0);
    for recipe in &samples {
        for lang in recipe.recipe.languages() {
            let t = Instant::now();
            std::hint::black_box(cooklang::export(recipe, lang, ""));
            export_us.push(t.elapsed().as_secs_f64() * 1e6);
            texts += 1;
            match import::round_trip(recipe, lang) {
                Ok(()) => same += 1,
                Err(why) => println!("differs: {} ({}): {why}", recipe.slug, lang.code()),
            }
        }
    }
    let (p50, p99) = quantiles(export_us);
    println!("\nCooklang export: p50 {p50:.1} µs, p99 {p99:.1} µs per recipe text");
    println!("round trip, sample: {same} of {texts} texts ({:.1} %)", 100.0 * same as f64 / texts as f64);

    // The generated corpus (the same generator as the build benchmarks).
    let n: usize = std::env::var("BENCH_RECIPES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let started = Instant::now();
    let (mut texts, mut same, mut recipes) = (0usize, 0usize, 0usize);
    for idx in 0..n {
        let (slug, doc) = tests::corpus::generate(&templates, idx, 0xC0FFEE);
        let recipe = published(&slug, &doc);
        recipes += 1;
        for lang in recipe.recipe.languages() {
            texts += 1;
            match import::round_trip(&recipe, lang) {
                Ok(()) => same += 1,
                Err(why) if texts - same <= 5 => println!("differs: {slug} ({}): {why}", lang.code()),
                Err(_) => {}
            }
        }
    }
    println!(
        "round trip, {recipes} generated recipes: {same} of {texts} texts ({:.3} %), {:.1} s",
        100.0 * same as f64 / texts as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
