//! The open-data part of `dist/`: bulk dumps, JSON Schemas, facets, llms.txt, and the manifests that
//! let a downloader check what they got (`datapackage.json`, `SHA256SUMS`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use domain::quotes::transcript::{EpisodeSummary, ShowSummary, licence_url};
use domain::recipes::recipe::{Course, Published, Recipe};
use domain::recipes::search::{Card, CardView, Manifest};
use serde_json::{Value, json};

use crate::output::{Out, sha256_hex, write_new};

/// The JSON Schemas we publish, by file name.
pub fn schemas() -> Vec<(&'static str, Value)> {
    let mut recipe = crate::schemas::schema_of::<Recipe>();
    recipe["$id"] = json!("/schemas/recipe.schema.json");
    recipe["description"] = json!(
        "A recipe as a contributor writes it in content/recipes/<slug>.json or sends it to POST /api/recipes. \
         The validator in `domain::recipe` is authoritative and adds cross-field rules (a vegan recipe is \
         vegetarian and dairy-free; titles are written in their language's script)."
    );
    let mut published = crate::schemas::schema_of::<Published>();
    published["$id"] = json!("/schemas/published-recipe.schema.json");
    let mut card = crate::schemas::schema_of::<CardView>();
    card["$id"] = json!("/schemas/recipe-card.schema.json");
    let mut history = crate::schemas::schema_of::<Vec<crate::history::Item>>();
    history["$id"] = json!("/schemas/recipe-history.schema.json");
    history["description"] =
        json!("/r/{slug}.history.json: the git commits that changed the recipe, newest first");
    let mut manifest = crate::schemas::schema_of::<Manifest>();
    manifest["$id"] = json!("/schemas/search-manifest.schema.json");
    manifest["description"] = json!("/search/manifest.json: the entry point of the static search index");
    vec![
        ("recipe.schema.json", recipe),
        ("published-recipe.schema.json", published),
        ("recipe-card.schema.json", card),
        ("recipe-history.schema.json", history),
        ("search-manifest.schema.json", manifest),
        ("slugs.schema.json", hand_written("slugs.schema.json", SLUGS)),
        ("facets.schema.json", hand_written("facets.schema.json", FACETS)),
        ("episodes-by-url.schema.json", hand_written("episodes-by-url.schema.json", BY_URL)),
        ("podcasting20-transcript.schema.json", hand_written("podcasting20-transcript.schema.json", P20)),
    ]
}

/// A schema written by hand for a file made without a Rust type of its own (a `json!` value or a
/// tuple list), with the `$schema` and `$id` every published schema has.
fn hand_written(id: &str, body: &str) -> Value {
    let mut schema: Value = serde_json::from_str(body).expect("the hand-written schemas are JSON");
    schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    schema["$id"] = json!(format!("/schemas/{id}"));
    schema
}

const SLUGS: &str = r#"{
  "title": "Built slugs",
  "description": "/slugs.json: every built recipe's slug and version, in search document-id order",
  "type": "array",
  "items": {"type": "array", "prefixItems": [{"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                                           {"type": "integer", "minimum": 1}],
            "minItems": 2, "maxItems": 2}
}"#;

const FACETS: &str = r#"{
  "title": "Facet counts",
  "description": "/facets.json: how many recipes each course, language and diet flag has",
  "type": "object",
  "required": ["course", "language", "flags"],
  "additionalProperties": false,
  "properties": {
    "course": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    "language": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    "flags": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
  }
}"#;

const BY_URL: &str = r#"{
  "title": "Episodes by source URL",
  "description": "/episodes/by-url.json: each episode's normalised source URL and its id",
  "type": "object",
  "additionalProperties": {"type": "string", "pattern": "^ep_[a-z2-7]{10}$"}
}"#;

const P20: &str = r#"{
  "title": "Podcasting 2.0 JSON transcript",
  "description": "/episodes/{id}/transcript.p20.json: the canonical transcript in the Podcasting 2.0 JSON transcript format, with the episode's licence",
  "type": "object",
  "required": ["version", "segments"],
  "properties": {
    "version": {"type": "string"},
    "title": {"type": "string"},
    "source": {"type": "string"},
    "licence": {"type": "string"},
    "attribution": {"type": ["string", "null"]},
    "segments": {"type": "array", "items": {
      "type": "object",
      "required": ["startTime", "endTime", "body"],
      "properties": {
        "speaker": {"type": ["string", "null"]},
        "startTime": {"type": "number", "minimum": 0},
        "endTime": {"type": "number", "minimum": 0},
        "body": {"type": "string"}
      }
    }}
  }
}"#;

/// The schemas and `facets.json`; `llms.txt` comes last, once every part of it is known ([`llms_txt`]).
pub fn write(out: &Out, facet_counts: &BTreeMap<String, u64>) -> Result<()> {
    for (name, schema) in schemas() {
        out.write(&format!("schemas/{name}"), serde_json::to_string_pretty(&schema)?.as_bytes())?;
    }
    out.write("facets.json", serde_json::to_string_pretty(&facets(facet_counts))?.as_bytes())?;
    Ok(())
}

fn facets(counts: &BTreeMap<String, u64>) -> Value {
    let pick = |prefix: &str| -> BTreeMap<String, u64> {
        counts
            .iter()
            .filter_map(|(name, n)| name.strip_prefix(prefix).map(|rest| (rest.to_string(), *n)))
            .collect()
    };
    let flags: BTreeMap<&str, u64> = domain::recipes::recipe::FLAGS
        .iter()
        .map(|flag| (*flag, counts.get(*flag).copied().unwrap_or(0)))
        .collect();
    json!({ "course": pick("course:"), "language": pick("lang:"), "flags": flags })
}

/// One service's part of `llms.txt`: prose for the opening (after the blockquote, where llmstxt.org
/// allows any Markdown but headings) and H2 sections that hold link lists only, so the reference
/// parser (PyPI `llms-txt`) reads every line.
pub struct LlmsPart {
    pub about: String,
    pub sections: String,
}

/// `llms.txt` (llmstxt.org): the H1 and blockquote, every part's prose, the recipe sections, then
/// every other part's sections. Recipe lists name their course in the note: an H3 per course would end
/// the H2 section for the parser.
pub fn llms_txt(cards: &[&Card], dump_parts: &[String], parts: &[LlmsPart]) -> String {
    let mut text = String::from(
        "# Commonplace\n\n\
         > Open recipes in English, Hebrew and European Portuguese, free for anyone to cook, copy and build on \
         (CC0 unless a recipe says otherwise), and quote attribution for podcast episodes.\n\n\
         Reading and searching need no key. Every recipe is JSON at `/r/{slug}.json` (all its languages) and a \
         page at `/r/{slug}`. Search is `GET /api/recipes?q=…` with optional `gf=1`, `vegan=1`, `vegetarian=1`, \
         `dairy_free=1`, `nut_free=1`, `course`, `max_min` (prep + cook minutes), `lang` (en, he, pt: the \
         language of the result cards), `limit` (1-100) and `cursor` (from `next_cursor`). Errors are RFC 9457 \
         problem+json. Steps may carry `min` (a timer) and `f` (a grown-up is needed: knife, hot, oven, blender, \
         boil); ingredients with `check: true` can hide gluten, so check the label.\n",
    );
    for part in parts.iter().filter(|part| !part.about.is_empty()) {
        text.push('\n');
        text.push_str(part.about.trim_end());
        text.push('\n');
    }
    text.push_str(
        "\n## Recipe API\n\n\
         - [Search recipes](/api/recipes?q=soup): `{\"items\":[card…],\"total\":N,\"next_cursor\":…}`\n\
         - [Recipe card schema](/schemas/recipe-card.schema.json): the fields of one search result\n\
         - [Recipe schema](/schemas/recipe.schema.json): the document a recipe file or a write holds\n\
         - [Published recipe schema](/schemas/published-recipe.schema.json): `/r/{slug}.json`, with server-set fields\n\n\
         ## Open data\n\n",
    );
    text.push_str(&dump_lines(dump_parts));
    text.push_str(
        "- [datapackage.json](/datapackage.json): Frictionless data package with sizes and SHA-256 of each file\n\
         - [SHA256SUMS](/SHA256SUMS): checksums of every published file\n\
         - [facets.json](/facets.json): counts by course, language and diet flag\n\n\
         ## Recipes\n\n",
    );
    let mut by_course: BTreeMap<Course, Vec<CardView>> = BTreeMap::new();
    for card in cards {
        by_course.entry(card.course).or_default().push(card.view(None));
    }
    for (course, views) in by_course {
        for view in views {
            text.push_str(&format!(
                "- [{}](/r/{}.json): {}; {}\n",
                one_line(&view.title),
                view.slug,
                course.code(),
                one_line(&view.summary)
            ));
        }
    }
    for part in parts {
        text.push_str(&part.sections);
    }
    text
}

/// The llms.txt lines for the recipe dump: one file, or its parts in order, each a link of its own.
fn dump_lines(parts: &[String]) -> String {
    let what = "every recipe, one JSON document a line (CC0-1.0 unless `licence` says otherwise)";
    match parts {
        [one] => {
            let zip = crate::cooklang_dump::zip_name(one);
            format!(
                "- [{one}](/{one}): {what}\n- [{zip}](/{zip}): every recipe as Cooklang, one `.cook` file per language\n"
            )
        }
        _ => parts
            .iter()
            .enumerate()
            .map(|(n, part)| {
                let zip = crate::cooklang_dump::zip_name(part);
                format!(
                    "- [{part}](/{part}): part {} of {} of the recipe dump, {what}; concatenated in this order the parts are the whole dump\n\
                     - [{zip}](/{zip}): the same part's recipes as Cooklang, one `.cook` file per language\n",
                    n + 1,
                    parts.len()
                )
            })
            .collect(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `datapackage.json` (Frictionless Data Package v2) for the dumps, then `SHA256SUMS` over every file.
/// Nothing here is a table: every resource is `type: "json"` (JSON Lines for the dumps), and a dump
/// names the JSON Schema of its lines in `jsonSchema`, as the Data Package recipe for JSON data
/// resources does; `schema` would be read as a Table Schema. `sums` holds
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
        "type": "json",
        "path": path,
        "format": "jsonl",
        "mediatype": "application/jsonl",
        "encoding": "utf-8",
        "bytes": dump_bytes,
        "jsonSchema": "schemas/published-recipe.schema.json",
        "licenses": [{"name": "CC0-1.0", "path": "https://creativecommons.org/publicdomain/zero/1.0/",
                      "title": "CC0 1.0 Universal (unless a recipe's `licence` field says otherwise)"}],
    });
    if let Some(hash) = hash {
        recipes["hash"] = json!(hash);
    }
    let licenses = recipes["licenses"].clone();
    resources.push(recipes);
    // The same recipes as Cooklang, a zip per dump part (`cooklang_dump.rs`).
    let zips: Vec<String> = dump_parts.iter().map(|part| crate::cooklang_dump::zip_name(part)).collect();
    let mut cooklang = json!({
        "name": "recipes-cooklang",
        "path": if zips.len() == 1 { json!(zips[0]) } else { json!(zips) },
        "format": "zip",
        "mediatype": "application/zip",
        "bytes": zips.iter().map(|z| size(z)).sum::<Result<u64>>()?,
        "description": "Every recipe in each of its languages as a Cooklang file (en/<slug>.cook, he/…, pt/…), \
                        metadata in front matter.",
        "licenses": licenses,
    });
    if let [one] = zips.as_slice() {
        cooklang["hash"] = json!(format!("sha256:{}", sha(one)?));
    }
    resources.push(cooklang);
    if let Ok(episodes_sha) = sha("episodes.jsonl") {
        resources.push(json!({
            "name": "episodes",
            "type": "json",
            "path": "episodes.jsonl",
            "format": "jsonl",
            "mediatype": "application/jsonl",
            "encoding": "utf-8",
            "bytes": size("episodes.jsonl")?,
            "hash": format!("sha256:{episodes_sha}"),
            "jsonSchema": "schemas/episode-line.schema.json",
            "description": "Canonical podcast transcripts, one episode a line; each line's `licence` and \
                            `attribution` fields are the terms of that episode, and `licenses` lists every \
                            licence and credit the episodes carry with the shows each covers.",
            "licenses": episode_licences(out_dir)?,
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
            "type": "json",
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
        "description": "Recipes in English, Hebrew and European Portuguese, and podcast transcripts for quote \
                        attribution, published by Commonplace.",
        // The package's own terms; a resource's `licenses` override them (transcripts keep their show's).
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

/// The `licenses` of the episodes resource, from what each published episode carries (`episodes.json`:
/// its show's licence and credit, or the episode's own): one entry per licence and credit, titled with
/// the credit and the shows it covers, so every licence present is listed and no show is credited to
/// another's holder. Licences the Creative Commons deeds do not cover link to their SPDX page.
fn episode_licences(out_dir: &Path) -> Result<Vec<Value>> {
    let read = |name: &str| -> Result<Vec<u8>> {
        std::fs::read(out_dir.join(name)).with_context(|| format!("reading {name}"))
    };
    let shows: Vec<ShowSummary> = serde_json::from_slice(&read("shows.json")?).context("shows.json")?;
    let episodes: Vec<EpisodeSummary> =
        serde_json::from_slice(&read("episodes.json")?).context("episodes.json")?;
    let titles: BTreeMap<&str, &str> = shows.iter().map(|s| (s.id.as_str(), s.title.as_str())).collect();
    let mut terms: BTreeMap<(&str, Option<&str>), BTreeMap<&str, usize>> = BTreeMap::new();
    for episode in &episodes {
        let show = titles.get(episode.show.as_str()).copied().unwrap_or(&episode.show);
        let key = (episode.licence.as_str(), episode.attribution.as_deref());
        *terms.entry(key).or_default().entry(show).or_default() += 1;
    }
    Ok(terms
        .into_iter()
        .map(|((licence, attribution), shows)| {
            let covers: Vec<String> = shows
                .iter()
                .map(|(show, n)| format!("{show}, {n} episode{}", if *n == 1 { "" } else { "s" }))
                .collect();
            let credit = attribution.map(|credit| format!(" — {credit}")).unwrap_or_default();
            let path = licence_url(licence)
                .map(String::from)
                .unwrap_or_else(|| format!("https://spdx.org/licenses/{licence}.html"));
            json!({"name": licence, "path": path, "title": format!("{licence}{credit} ({})", covers.join("; "))})
        })
        .collect())
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
