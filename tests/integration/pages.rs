//! Recipe pages and the home page in a real headless Chromium: what a cook on a phone sees.

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
    std::fs::write(tests::root().join("tests/.work/recipe-page.png"), browser.screenshot().await?)?;
    Ok(())
}

pub async fn home_page_search_finds_a_recipe(w: Arc<Worker>) -> Result<()> {
    let browser = Browser::start().await?;
    browser.goto(&w.url("/")).await?;
    browser.type_into("input[name=q]", "hummus").await?;
    browser.click("form.search button").await?;
    for _ in 0..50 {
        if browser.exists("#results li a").await? {
            let first = browser.text("#results li a").await?;
            ensure!(first.contains("Hummus"), "first result: {first}");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("no search results appeared")
}
