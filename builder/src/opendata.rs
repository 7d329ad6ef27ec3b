//! The open-data part of `dist/`: bulk dumps, JSON Schemas, facets, llms.txt, and the manifests that
//! let a downloader check what they got (`datapackage.json`, `SHA256SUMS`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use domain::recipe::{Course, Published, Recipe};
use domain::search::{Card, CardView};
use serde_json::{Value, json};

use crate::output::{Out, sha256_hex, write_new};

pub struct Inputs<'a> {
    pub cards: &'a [&'a Card],
    pub facets: &'a BTreeMap<String, u64>,
    /// The recipe dump's file names (see `jsonl.rs`).
    pub dump_parts: &'a [String],
}

/// The JSON Schemas we publish, by file name.
pub fn schemas() -> Vec<(&'static str, Value)> {
    let mut recipe = serde_json::to_value(schemars::schema_for!(Recipe)).expect("schema serialises");
    recipe["$id"] = json!("/schemas/recipe.schema.json");
    recipe["description"] = json!(
        "A recipe as a contributor writes it in content/recipes/<slug>.json or sends it to POST /api/recipes. \
         The validator in `domain::recipe` is authoritative and adds cross-field rules (a vegan recipe is \
         vegetarian and dairy-free; titles are written in their language's script)."
    );
    let mut published = serde_json::to_value(schemars::schema_for!(Published)).expect("schema serialises");
    published["$id"] = json!("/schemas/published-recipe.schema.json");
    let mut card = serde_json::to_value(schemars::schema_for!(CardView)).expect("schema serialises");
    card["$id"] = json!("/schemas/recipe-card.schema.json");
    vec![
        ("recipe.schema.json", recipe),
        ("published-recipe.schema.json", published),
        ("recipe-card.schema.json", card),
    ]
}

pub fn write(out: &Out, inputs: &Inputs) -> Result<()> {
    for (name, schema) in schemas() {
        out.write(&format!("schemas/{name}"), serde_json::to_string_pretty(&schema)?.as_bytes())?;
    }
    out.write("facets.json", serde_json::to_string_pretty(&facets(inputs.facets))?.as_bytes())?;
    out.write("llms.txt", llms_txt(inputs.cards, inputs.dump_parts).as_bytes())?;
    Ok(())
}

fn facets(counts: &BTreeMap<String, u64>) -> Value {
    let pick = |prefix: &str| -> BTreeMap<String, u64> {
        counts
            .iter()
            .filter_map(|(name, n)| name.strip_prefix(prefix).map(|rest| (rest.to_string(), *n)))
            .collect()
    };
    let flags: BTreeMap<&str, u64> =
        domain::recipe::FLAGS.iter().map(|flag| (*flag, counts.get(*flag).copied().unwrap_or(0))).collect();
    json!({ "course": pick("course:"), "language": pick("lang:"), "flags": flags })
}

/// The recipe service's part of llms.txt (llmstxt.org): what it is, how to read it, what to download.
fn llms_txt(cards: &[&Card], dump_parts: &[String]) -> String {
    let mut by_course: BTreeMap<Course, Vec<CardView>> = BTreeMap::new();
    for card in cards {
        by_course.entry(card.course).or_default().push(card.view(None));
    }
    let mut text = String::from(
        "# Commonplace\n\n\
         > Open recipes in English, Hebrew and European Portuguese, free for anyone to cook, copy and build on \
         (CC0 unless a recipe says otherwise).\n\n\
         Reading and searching need no key. Every recipe is JSON at `/r/{slug}.json` (all its languages) and a \
         page at `/r/{slug}`. Search is `GET /api/recipes?q=…` with optional `gf=1`, `vegan=1`, `vegetarian=1`, \
         `dairy_free=1`, `nut_free=1`, `course`, `max_min` (prep + cook minutes), `lang` (en, he, pt: the \
         language of the result cards), `limit` (1-100) and `cursor` (from `next_cursor`). Errors are RFC 9457 \
         problem+json. Steps may carry `min` (a timer) and `f` (a grown-up is needed: knife, hot, oven, blender, \
         boil); ingredients with `check: true` can hide gluten, so check the label.\n\n\
         ## API\n\n\
         - [Search recipes](/api/recipes?q=soup): `{\"items\":[card…],\"total\":N,\"next_cursor\":…}`\n\
         - [Recipe card schema](/schemas/recipe-card.schema.json): the fields of one search result\n\
         - [Recipe schema](/schemas/recipe.schema.json): the document a recipe file or a write holds\n\
         - [Published recipe schema](/schemas/published-recipe.schema.json): `/r/{slug}.json`, with server-set fields\n\n\
         ## Open data\n\n\
         {dump}\
         - [datapackage.json](/datapackage.json): Frictionless data package with sizes and SHA-256 of each file\n\
         - [SHA256SUMS](/SHA256SUMS): checksums of every published file\n\
         - [facets.json](/facets.json): counts by course, language and diet flag\n\n\
         ## Recipes\n",
    )
    .replace("{dump}", &dump_line(dump_parts));
    for (course, views) in by_course {
        text.push_str(&format!("\n### {}\n\n", course.code()));
        for view in views {
            text.push_str(&format!(
                "- [{}](/r/{}.json): {}\n",
                view.title,
                view.slug,
                one_line(&view.summary)
            ));
        }
    }
    text
}

/// The llms.txt line for the recipe dump: one file, or its parts in order.
fn dump_line(parts: &[String]) -> String {
    let what = "every recipe, one JSON document a line (CC0-1.0 unless `licence` says otherwise)";
    match parts {
        [one] => format!("- [{one}](/{one}): {what}\n"),
        _ => {
            let links: Vec<String> = parts.iter().map(|p| format!("[{p}](/{p})")).collect();
            format!(
                "- Recipe dump in {} parts, {what}; concatenated in this order they are the whole dump: {}\n",
                parts.len(),
                links.join(", ")
            )
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `datapackage.json` (Frictionless) for the dumps, then `SHA256SUMS` over every file. `sums` holds
/// every other file's SHA-256 (hex), sorted by path; sizes come from the files in `out_dir`.
pub fn write_manifests(out_dir: &Path, sums: &[(&str, &str)], dump_parts: &[String]) -> Result<()> {
    let sha = |path: &str| -> Result<&str> {
        let idx = sums
            .binary_search_by(|(p, _)| (*p).cmp(path))
            .map_err(|_| anyhow::anyhow!("{path} has no checksum"))?;
        Ok(sums[idx].1)
    };
    let size = |path: &str| -> Result<u64> {
        Ok(std::fs::metadata(out_dir.join(path))
            .with_context(|| format!("reading the size of {path}"))?
            .len())
    };
    let mut resources = Vec::new();
    let (path, hash) = match dump_parts {
        [one] => (json!(one), Some(format!("sha256:{}", sha(one)?))),
        // Several parts form one resource; each part's checksum is in SHA256SUMS.
        _ => (json!(dump_parts), None),
    };
    let dump_bytes = dump_parts.iter().map(|p| size(p)).sum::<Result<u64>>()?;
    let mut recipes = json!({
        "name": "recipes",
        "path": path,
        "format": "jsonl",
        "mediatype": "application/jsonl",
        "encoding": "utf-8",
        "bytes": dump_bytes,
        "schema": "schemas/published-recipe.schema.json",
        "licenses": [{"name": "CC0-1.0", "path": "https://creativecommons.org/publicdomain/zero/1.0/",
                      "title": "CC0 1.0 Universal (unless a recipe's `licence` field says otherwise)"}],
    });
    if let Some(hash) = hash {
        recipes["hash"] = json!(hash);
    }
    resources.push(recipes);
    if let Ok(episodes_sha) = sha("episodes.jsonl") {
        // Transcripts keep their show's licence; Changelog transcripts are CC BY-SA 4.0, never CC0.
        resources.push(json!({
            "name": "episodes",
            "path": "episodes.jsonl",
            "format": "jsonl",
            "mediatype": "application/jsonl",
            "encoding": "utf-8",
            "bytes": size("episodes.jsonl")?,
            "hash": format!("sha256:{episodes_sha}"),
            "schema": "schemas/canonical-transcript.schema.json",
            "description": "Canonical podcast transcripts, one episode a line; each line's `licence` and \
                            `attribution` fields are the terms of that episode.",
            "licenses": [
                {"name": "CC-BY-SA-4.0", "path": "https://creativecommons.org/licenses/by-sa/4.0/",
                 "title": "CC BY-SA 4.0, © Changelog Media LLC (episodes whose licence is CC-BY-SA-4.0)"},
                {"name": "CC0-1.0", "path": "https://creativecommons.org/publicdomain/zero/1.0/",
                 "title": "CC0 1.0 (episodes whose licence is CC0-1.0)"}
            ],
        }));
    }
    let schemas_from = sums.partition_point(|(p, _)| *p < "schemas/");
    let described = sums[schemas_from..]
        .iter()
        .take_while(|(p, _)| p.starts_with("schemas/"))
        .chain(sums.iter().filter(|(p, _)| *p == "facets.json"));
    for (path, sha256) in described {
        resources.push(json!({
            "name": path.trim_end_matches(".json").replace(['/', '.'], "-"),
            "path": path,
            "format": "json",
            "mediatype": "application/json",
            "bytes": size(path)?,
            "hash": format!("sha256:{sha256}"),
        }));
    }
    let package = json!({
        "$schema": "https://datapackage.org/profiles/2.0/datapackage.json",
        "name": "commonplace",
        "title": "Commonplace: open recipes and quote attributions",
        "description": "Recipes in English, Hebrew and European Portuguese, published by Commonplace.",
        "licenses": [{"name": "CC0-1.0", "path": "https://creativecommons.org/publicdomain/zero/1.0/"}],
        "resources": resources,
    });
    let package_bytes = serde_json::to_string_pretty(&package)?;
    write_new(&out_dir.join("datapackage.json"), package_bytes.as_bytes())?;

    let package_sha = sha256_hex(package_bytes.as_bytes());
    let mut text = String::with_capacity(sums.len() * 100);
    let mut package_listed = false;
    for (path, sha256) in sums.iter().filter(|(p, _)| !matches!(*p, "datapackage.json" | "SHA256SUMS")) {
        if !package_listed && *path > "datapackage.json" {
            text.push_str(&format!("{package_sha}  datapackage.json\n"));
            package_listed = true;
        }
        text.push_str(sha256);
        text.push_str("  ");
        text.push_str(path);
        text.push('\n');
    }
    if !package_listed {
        text.push_str(&format!("{package_sha}  datapackage.json\n"));
    }
    write_new(&out_dir.join("SHA256SUMS"), text.as_bytes())?;
    Ok(())
}

/// The last build's `SHA256SUMS` with this rebuild's changes: a new checksum, or `None` for a file
/// that is gone. Both are sorted by path, so this is one merge.
pub fn merge_sums<'a>(
    old: &'a str,
    changes: &'a BTreeMap<String, Option<String>>,
) -> Result<Vec<(&'a str, &'a str)>> {
    let mut merged = Vec::with_capacity(old.len() / 90 + changes.len());
    let mut changes = changes.iter().peekable();
    for line in old.lines() {
        let (sha, path) = line.split_once("  ").with_context(|| format!("SHA256SUMS line `{line}`"))?;
        while let Some((changed, _)) = changes.peek()
            && changed.as_str() < path
        {
            let (changed, sum) = changes.next().expect("peeked");
            merged.extend(sum.as_deref().map(|sum| (changed.as_str(), sum)));
        }
        match changes.peek() {
            Some((changed, sum)) if changed.as_str() == path => {
                merged.extend(sum.as_deref().map(|sum| (path, sum)));
                changes.next();
            }
            _ => merged.push((path, sha)),
        }
    }
    for (changed, sum) in changes {
        merged.extend(sum.as_deref().map(|sum| (changed.as_str(), sum)));
    }
    Ok(merged)
}
