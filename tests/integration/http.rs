//! HTTP as RFC 9110 has it, on every kind of answer the Worker gives (issue 15): conditional GETs
//! (`If-None-Match` lists and `*`), a `Content-Type` on every published file, methods the Worker does
//! not serve; and recipe pages as Google's rich results read them (extruct, the third-party validator).

use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use reqwest::{Method, StatusCode};
use tests::Worker;
use tests::kitchen::key_for;

use crate::recipes_write::{Api, recipe};

async fn conditional_get(w: &Worker, path: &str, if_none_match: &str) -> Result<StatusCode> {
    let response =
        reqwest::Client::new().get(w.url(path)).header("If-None-Match", if_none_match).send().await?;
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED {
        ensure!(response.bytes().await?.is_empty(), "{path}: a 304 has no body");
    }
    Ok(status)
}

/// One path of each kind the Worker answers a GET for: a static asset, a packed file, a drawn card,
/// a rendered page, an API answer.
const GETS: [&str; 8] = [
    "/llms.txt",
    "/SHA256SUMS",
    "/r/hummus.json",
    "/r/hummus.16x9.png",
    "/r/hummus",
    "/api/recipes?q=soup",
    "/api/shows",
    "/episodes.jsonl",
];

pub async fn if_none_match_lists_and_star_answer_304_on_every_get(w: Arc<Worker>) -> Result<()> {
    for path in GETS {
        let response = reqwest::get(w.url(path)).await?;
        ensure!(response.status() == 200, "{path}: {}", response.status());
        ensure!(conditional_get(&w, path, "*").await? == 304, "{path}: If-None-Match: * is not 304");
        ensure!(conditional_get(&w, path, "\"not-this\"").await? == 200, "{path}: another tag is not 200");
        if let Some(etag) = response.headers().get("etag") {
            let listed = format!("\"not-this\", {}", etag.to_str()?);
            ensure!(
                conditional_get(&w, path, &listed).await? == 304,
                "{path}: a list naming {etag:?} is not 304"
            );
        }
    }
    // A recipe written through the API (the D1 overlay) answers the same way.
    let api = Api::new(&w, &key_for(&w, "conditional-reader").await?);
    let created = api.create(&recipe("Conditional Salad")).await?;
    ensure!(created.status == 201, "{}", created.text);
    let slug = created.body["slug"].as_str().context("slug")?.to_string();
    let path = format!("/r/{slug}.json");
    let read = api.get(&path).await?;
    let etag = read.headers.get("etag").context("an API-written recipe has an ETag")?.to_str()?.to_string();
    ensure!(conditional_get(&w, &path, &format!("\"0\", {etag}")).await? == 304, "overlay list");
    ensure!(conditional_get(&w, &path, "*").await? == 304, "overlay star");
    ensure!(conditional_get(&w, &path, "\"0\"").await? == 200, "overlay other tag");
    Ok(())
}

pub async fn every_published_file_has_a_content_type(w: Arc<Worker>) -> Result<()> {
    let sums = reqwest::get(w.url("/SHA256SUMS")).await?.text().await?;
    let mut paths: Vec<&str> =
        sums.lines().filter_map(|line| line.split_once("  ").map(|(_, p)| p)).collect();
    paths.extend(["SHA256SUMS", "datapackage.json", "recipes.jsonl"]);
    for path in paths {
        let response = reqwest::Client::new().head(w.url(&format!("/{path}"))).send().await?;
        ensure!(response.status() == 200, "/{path}: {}", response.status());
        let content_type =
            response.headers().get("content-type").map(|v| v.to_str().unwrap_or("").to_string());
        ensure!(content_type.as_deref().is_some_and(|t| !t.is_empty()), "/{path} has no Content-Type");
        let wanted = match path.rsplit_once('.').map(|(_, ext)| ext) {
            Some("jsonl") => "application/jsonl",
            Some("png") => "image/png",
            Some("json") => "application/json",
            _ if path == "SHA256SUMS" => "text/plain",
            _ => "",
        };
        ensure!(content_type.unwrap_or_default().starts_with(wanted), "/{path}: not {wanted}");
    }
    Ok(())
}

pub async fn unknown_methods_are_405_with_allow_never_another_method(w: Arc<Worker>) -> Result<()> {
    let query = Method::from_bytes(b"QUERY")?;
    for (path, allow) in [
        ("/api/me", "GET, HEAD"),
        ("/api/recipes", "GET, HEAD, POST"),
        ("/api/shows", "GET, HEAD"),
        ("/kitchen", "GET, HEAD"),
        ("/llms.txt", "GET, HEAD"),
        ("/r/hummus.json", "GET, HEAD"),
        ("/mcp", "POST"),
    ] {
        for method in [query.clone(), Method::DELETE] {
            let response = reqwest::Client::new().request(method.clone(), w.url(path)).send().await?;
            ensure!(response.status() == 405, "{method} {path}: {}", response.status());
            let allowed = response.headers().get("allow").map(|v| v.to_str().unwrap_or("").to_string());
            ensure!(allowed.as_deref() == Some(allow), "{method} {path}: Allow {allowed:?}");
        }
        // workerd itself answers a method outside its list (RFC 9110's and WebDAV's) with 501 Not
        // Implemented, before the Worker runs: also never another method's answer.
        let brew = reqwest::Client::new().request(Method::from_bytes(b"BREW")?, w.url(path)).send().await?;
        ensure!(brew.status() == 501, "BREW {path}: {}", brew.status());
    }
    Ok(())
}

/// Google's Recipe rich-result properties, read from the pages by extruct (`tests/validators/`): built
/// recipes (with a cuisine where the content names one) with their three drawn cards, and a recipe
/// written through the API, whose cards the Worker draws until the next build and whose
/// `datePublished` is its creation.
pub async fn recipe_pages_qualify_for_google_recipe_rich_results(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "rich-results").await?);
    let created = api.create(&recipe("Rich Result Salad")).await?;
    ensure!(created.status == 201, "{}", created.text);
    let slug = created.body["slug"].as_str().context("slug")?.to_string();
    let svg = reqwest::get(w.url(&format!("/r/{slug}.4x3.svg"))).await?;
    ensure!(svg.headers()["content-type"] == "image/svg+xml", "{:?}", svg.headers());
    let svg = svg.text().await?;
    ensure!(svg.contains(">Rich") && svg.contains("Salad</text>"), "the drawn card names the recipe: {svg}");
    let checker = tests::root().join("tests/validators/check_recipe_page.py");
    let python = tests::root().join("tests/.venv/bin/python");
    for args in [
        vec!["--expect-cuisine".to_string(), w.url("/r/shakshuka"), w.url("/r/caldo-verde")],
        vec![w.url("/r/pancakes"), w.url("/r/malabi")],
        vec!["--expect-date".to_string(), w.url(&format!("/r/{slug}"))],
    ] {
        let output =
            tokio::process::Command::new(&python).arg(&checker).args(&args).output().await.with_context(
                || format!("running {} (scripts/setup.sh --test installs it)", python.display()),
            )?;
        ensure!(
            output.status.success(),
            "extruct found problems:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
