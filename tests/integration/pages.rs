//! Recipe pages, the home page and the page for a missing address in a real headless Chromium: what
//! a cook on a phone sees, and what axe-core finds (nothing) on each.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, ensure};
use tests::Worker;
use tests::browser::Browser;

pub async fn recipe_page_reads_right_to_left_in_hebrew_on_a_phone(w: Arc<Worker>) -> Result<()> {
    let browser = Browser::start().await?;
    browser.resize(390, 844).await?;
    browser.goto(&w.url("/r/shakshuka")).await?;
    let directions = browser
        .execute("return ['en','he','pt'].map(l => getComputedStyle(document.getElementById(l)).direction);")
        .await?;
    ensure!(directions == serde_json::json!(["ltr", "rtl", "ltr"]), "{directions}");
    let overflow =
        browser.execute("return document.documentElement.scrollWidth - window.innerWidth;").await?;
    ensure!(overflow.as_i64().unwrap_or(1) <= 0, "the page is wider than a phone: {overflow}");
    let recipes = browser
        .execute("return JSON.parse(document.querySelector('script[type=\"application/ld+json\"]').textContent).length;")
        .await?;
    ensure!(recipes == 3, "JSON-LD recipes: {recipes}");
    let grown_up = browser.text("#he .grownup").await?;
    ensure!(grown_up.contains("מבוגר"), "the grown-up flag is not in Hebrew: {grown_up}");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the recipe page: {violations:?}");
    std::fs::write(tests::root().join("tests/.work/recipe-page.png"), browser.screenshot().await?)?;
    Ok(())
}

pub async fn home_page_search_finds_a_recipe(w: Arc<Worker>) -> Result<()> {
    let browser = Browser::start().await?;
    // A browser following a stale link gets a page saying so; an API client, problem+json.
    let client = reqwest::Client::new();
    let html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let page = client.get(w.url("/episodes/ep_nosuchthing")).header("Accept", html).send().await?;
    let header = |r: &reqwest::Response, name: &str| {
        r.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    };
    ensure!(page.status() == 404 && header(&page, "content-type").starts_with("text/html"), "{page:?}");
    ensure!(header(&page, "vary").contains("Accept"), "{page:?}");
    ensure!(page.text().await?.contains("ep_nosuchthing"), "the page says what is missing");
    let problem = client.get(w.url("/episodes/ep_nosuchthing")).send().await?;
    ensure!(header(&problem, "content-type") == "application/problem+json", "{problem:?}");
    let api = client.get(w.url("/api/episodes/ep_nosuchthing")).header("Accept", html).send().await?;
    ensure!(header(&api, "content-type") == "application/problem+json", "the API answers problems: {api:?}");
    // A page no route serves, and the blank form to check a quote, as people reach them.
    for (path, kind) in
        [("/no-such-page", "the page for a missing address"), ("/quotes", "the blank quote form")]
    {
        browser.goto(&w.url(path)).await?;
        let violations = browser.axe_violations().await?;
        ensure!(violations.is_empty(), "axe on {kind}: {violations:?}");
    }
    browser.goto(&w.url("/")).await?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the home page: {violations:?}");
    browser.type_into("input[name=q]", "hummus").await?;
    browser.click("form.search button").await?;
    for _ in 0..50 {
        if browser.exists("#results li a").await? {
            let first = browser.text("#results li a").await?;
            ensure!(first.contains("Hummus"), "first result: {first}");
            let violations = browser.axe_violations().await?;
            ensure!(violations.is_empty(), "axe on the home page's results: {violations:?}");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("no search results appeared")
}
