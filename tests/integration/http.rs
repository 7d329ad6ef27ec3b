//! HTTP as RFC 9110 has it, on every kind of answer the Worker gives: conditional GETs
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
/// recipes (with a cuisine where the content names one) with their drawn card, and a recipe
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
    // A built card's shapes the build does not draw are at their SVG address.
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let moved = no_redirects.get(w.url("/r/hummus.1x1.png")).send().await?;
    ensure!(moved.status() == 301, "{}", moved.status());
    ensure!(moved.headers()["location"] == "/r/hummus.1x1.svg", "{:?}", moved.headers());
    let checker = tests::root().join("tests/validators/check_recipe_page.py").to_string_lossy().to_string();
    for args in [
        vec!["--expect-cuisine".to_string(), w.url("/r/shakshuka"), w.url("/r/caldo-verde")],
        vec![w.url("/r/pancakes"), w.url("/r/malabi")],
        vec!["--expect-date".to_string(), w.url(&format!("/r/{slug}"))],
    ] {
        let args: Vec<String> = std::iter::once(checker.clone()).chain(args).collect();
        tests::venv_check("python", &args, "extruct found problems:\n").await?;
    }
    Ok(())
}

/// A path no route has is 404 whatever the method, as its GET is: a POST to a diet version with no
/// kind was a 405 that named GET, which answered 404.
pub async fn a_path_that_is_no_route_is_404_for_every_method(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "no-route").await?);
    for path in ["/api/r/pancakes/variant/", "/api/nothing-here", "/no-such-page"] {
        let get = reqwest::get(w.url(path)).await?.status();
        let post = api.send(api.client.post(w.url(path)).bearer_auth(&api.key)).await?;
        ensure!(get == 404 && post.status == 404, "{path}: GET {get}, POST {}: {}", post.status, post.text);
        ensure!(post.headers.get("allow").is_none(), "{path}: {:?}", post.headers);
    }
    // A built file that GET answers is still a 405 to another method.
    let post = reqwest::Client::new().post(w.url("/facets.json")).send().await?;
    ensure!(post.status() == 405 && post.headers()["allow"] == "GET, HEAD", "{}", post.status());
    Ok(())
}

/// A query that is not UTF-8 once decoded is refused naming its parameter; it answered every recipe.
pub async fn a_query_that_is_not_utf8_is_a_400_naming_the_parameter(w: Arc<Worker>) -> Result<()> {
    let response = reqwest::get(w.url("/api/recipes?q=%FF%FE")).await?;
    ensure!(response.status() == 400, "{}", response.status());
    let problem: serde_json::Value = response.json().await?;
    ensure!(problem["errors"][0]["field"] == "q", "{problem}");
    let fine = reqwest::get(w.url("/api/recipes?q=%C3%A7%C3%A3o")).await?;
    ensure!(fine.status() == 200, "{}", fine.status());
    Ok(())
}

/// Answers that hold user text are never sniffed as HTML, and pages carry a policy that admits their
/// own inline scripts, styles and same-origin requests, and no other origin.
pub async fn cooklang_is_nosniff_and_pages_have_a_content_security_policy(w: Arc<Worker>) -> Result<()> {
    let cook = reqwest::get(w.url("/r/hummus.cook")).await?;
    ensure!(
        cook.status() == 200 && cook.headers()["x-content-type-options"] == "nosniff",
        "{:?}",
        cook.headers()
    );
    let api = Api::new(&w, &key_for(&w, "policy").await?);
    let created = api.create(&recipe("Policy Salad")).await?;
    let slug = created.body["slug"].as_str().context("slug")?.to_string();
    let quote = "/quotes?quote=patience&source_url=https%3A%2F%2Fcommonplace.example%2Fshows%2Fkitchen-table%2F1-sourdough-slowly";
    for path in [
        "/".to_string(),
        "/r/shakshuka".to_string(),
        format!("/r/{slug}"),
        quote.to_string(),
        "/search".to_string(),
    ] {
        let page = reqwest::get(w.url(&path)).await?;
        let headers = page.headers().clone();
        let policy =
            headers.get("content-security-policy").map(|v| v.to_str().unwrap_or_default().to_string());
        let policy = policy.with_context(|| format!("{path}: no Content-Security-Policy"))?;
        ensure!(headers["x-content-type-options"] == "nosniff", "{path}");
        ensure!(policy.contains("default-src 'none'") && policy.contains("'sha256-"), "{path}: {policy}");
        // No origin is named; a player may fetch an episode's audio over https once pressed.
        ensure!(
            !policy.contains("://")
                && policy.matches("http").count() == 1
                && policy.contains("media-src https:;")
                && !policy.contains("script-src 'unsafe-inline'"),
            "{path}: {policy}"
        );
    }
    let kitchen = reqwest::get(w.url("/kitchen")).await?;
    let policy = kitchen.headers()["content-security-policy"].to_str()?.to_string();
    ensure!(
        policy.starts_with("default-src 'none'; style-src 'unsafe-inline'"),
        "the kitchen keeps its own: {policy}"
    );
    Ok(())
}

/// What schemathesis found looser than the description: a history cursor longer than its
/// `maxLength`, and GitHub's callback without its required `code` and `state`, both answered 200.
pub async fn parameters_outside_the_description_are_refused(w: Arc<Worker>) -> Result<()> {
    // `a` and nineteen digits with leading zeros: sequence 1, but longer than the schema allows.
    let long = "YTAwMDAwMDAwMDAwMDAwMDAwMDE";
    ensure!(long.len() > 26, "longer than the published maxLength");
    let history = reqwest::get(w.url(&format!("/api/r/hummus/history?cursor={long}"))).await?;
    ensure!(history.status() == 400, "{}", history.status());
    for query in ["", "?error=access_denied", "?state=x"] {
        let callback = reqwest::get(w.url(&format!("/kitchen/callback/github{query}"))).await?;
        ensure!(callback.status() == 400, "{query}: {}", callback.status());
    }
    let declined = reqwest::get(w.url("/kitchen/callback/github?error=access_denied&state=x")).await?;
    ensure!(declined.status() == 200, "GitHub's own refusal shows the kitchen: {}", declined.status());
    Ok(())
}
