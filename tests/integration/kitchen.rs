//! The kitchen page in a real headless Chromium: GitHub sign-in against a scripted OAuth server,
//! making a key (shown once), using it, revoking it; cookies and CSRF.

use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use reqwest::header::COOKIE;
use serde_json::Value;
use tests::browser::Browser;
use tests::kitchen::Kitchen;
use tests::oauth::{self, GitHub, User};
use tests::{Config, Worker};

pub async fn github_sign_in_key_lifecycle_in_a_browser() -> Result<()> {
    let github =
        GitHub::start(User { id: 4242, login: "Octo-Cook".into(), name: "Octo Cook".into() }).await?;
    let w = Worker::start_with(Config {
        vars: vec![
            ("GITHUB_CLIENT_ID".into(), oauth::CLIENT_ID.into()),
            ("GITHUB_CLIENT_SECRET".into(), oauth::CLIENT_SECRET.into()),
            ("GITHUB_BASE_URL".into(), github.base.clone()),
            ("GITHUB_API_URL".into(), github.api()),
        ],
        ..Config::default()
    })
    .await?;
    let browser = Browser::start().await?;

    browser.goto(&w.url("/kitchen")).await?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the kitchen before signing in: {violations:?}");
    browser.click("#github-login").await?;
    browser.wait_for("#authorize").await?;
    ensure!(
        browser.current_url().await?.starts_with(&github.base),
        "not at GitHub: {}",
        browser.current_url().await?
    );
    browser.click("#authorize").await?;
    browser.wait_for("#handle").await?;
    let url = browser.current_url().await?;
    ensure!(url == w.url("/kitchen"), "back at {url}: {}", browser.source().await?);
    ensure!(browser.text("#handle").await? == "octo-cook", "{}", browser.source().await?);
    ensure!(browser.text("h1").await?.contains("Octo Cook"), "display name");
    // The browser also asks GitHub for a favicon; only the OAuth calls matter here.
    let log: Vec<String> = github.log().into_iter().filter(|line| !line.ends_with("/favicon.ico")).collect();
    ensure!(
        log == ["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /api/user"],
        "the OAuth exchange went differently: {log:?}"
    );

    let cookies = browser.cookies().await?;
    let session = cookies.iter().find(|c| c["name"] == "cp_session").context("no session cookie")?;
    ensure!(
        session["httpOnly"] == true && session["secure"] == true && session["sameSite"] == "Lax",
        "{session}"
    );

    browser.type_into("#label", "laptop").await?;
    browser.click("#new-key-form button").await?;
    browser.wait_for("#new-key").await?;
    let key = browser.text("#new-key").await?;
    ensure!(key.starts_with("cpk_") && key.len() > 40, "{key}");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the kitchen with a new key: {violations:?}");
    let client = reqwest::Client::new();
    let me: Value = client.get(w.url("/api/me")).bearer_auth(&key).send().await?.json().await?;
    ensure!(
        me["handle"] == "octo-cook" && me["display_name"] == "Octo Cook" && me["key_label"] == "laptop",
        "{me}"
    );

    // Shown once: a fresh look at the page lists the key by its prefix only.
    browser.goto(&w.url("/kitchen")).await?;
    ensure!(!browser.exists("#new-key").await?, "the key is shown again");
    let listed = browser.text("#keys li").await?;
    ensure!(listed.contains("laptop") && listed.contains(&key[..10]) && !listed.contains(&key), "{listed}");

    // A form without the session's CSRF token is refused, even with the session cookie.
    let session_cookie = format!("cp_session={}", session["value"].as_str().unwrap_or_default());
    let forged = client
        .post(w.url("/kitchen/keys"))
        .header(COOKIE, &session_cookie)
        .form(&[("label", "forged"), ("csrf", "0000")])
        .send()
        .await?;
    ensure!(forged.status() == 403, "a forged form answered {}", forged.status());
    let cross_site = client
        .post(w.url("/kitchen/keys"))
        .header(COOKIE, &session_cookie)
        .header("Origin", "https://evil.example")
        .form(&[("label", "forged")])
        .send()
        .await?;
    ensure!(cross_site.status() == 403, "a cross-site form answered {}", cross_site.status());

    // Recipes written with the key are listed on the page.
    let created = client
        .post(w.url("/api/recipes"))
        .bearer_auth(&key)
        .json(&crate::recipes_write::recipe("Browser Salad"))
        .send()
        .await?;
    ensure!(created.status() == 201, "{}", created.status());
    browser.goto(&w.url("/kitchen")).await?;
    ensure!(browser.text("#recipes").await?.contains("browser-salad"), "my recipes");

    // A recipe file imported into a draft, and the page that shows it: axe finds nothing.
    browser.type_into("#import-source", "---\ntitle: Browser Rice\n---\n\nSimmer @rice{300%g}.\n").await?;
    browser.click("#import-form button").await?;
    browser.wait_for("#draft").await?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the kitchen with a draft: {violations:?}");

    browser.click("#keys form button").await?;
    // The click returns before the browser's form post has been answered: wait for it, bounded.
    let mut status = reqwest::StatusCode::OK;
    for _ in 0..50 {
        status = client.get(w.url("/api/me")).bearer_auth(&key).send().await?.status();
        if status == 401 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    ensure!(status == 401, "a revoked key answered {status}");
    ensure!(browser.text("#keys li").await?.contains("revoked"), "the list does not say revoked");

    std::fs::write(tests::root().join("tests/.work/kitchen.png"), browser.screenshot().await?)?;
    browser.click("#logout").await?;
    browser.wait_for("#github-login").await.context("still signed in after signing out")?;
    Ok(())
}

pub async fn local_sign_in_exists_only_in_dev(w: Arc<Worker>) -> Result<()> {
    // The shared worker is a development run (the harness gives it ENVIRONMENT=dev, as dev.sh does).
    Kitchen::sign_in(&w, "local-cook").await?;
    let prod = Worker::start_with(Config {
        vars: vec![("ENVIRONMENT".into(), "production".into())],
        ..Config::default()
    })
    .await?;
    let page = reqwest::get(prod.url("/kitchen")).await?.text().await?;
    ensure!(!page.contains("dev-login"), "the production kitchen offers a local sign-in");
    let answer = reqwest::Client::new()
        .post(prod.url("/kitchen/login/dev"))
        .form(&[("handle", "intruder"), ("csrf", "x")])
        .send()
        .await?;
    ensure!(answer.status() == 404, "{}", answer.status());
    Ok(())
}

/// A session past its expiry is never read again; the next sign-in deletes such rows.
pub async fn expired_sessions_are_dropped_at_the_next_sign_in(w: Arc<Worker>) -> Result<()> {
    Kitchen::sign_in(&w, "stale-cook").await?;
    w.d1_execute(
        "INSERT INTO sessions (token_hash, account_id, csrf, created_at, expires_s) \
         SELECT 'expired-session', id, 'x', '2020-01-01T00:00:00Z', 1 FROM accounts WHERE handle = 'stale-cook'",
    )?;
    let count = |w: &Worker| -> Result<u64> {
        let rows = w.d1_query("SELECT COUNT(*) AS n FROM sessions WHERE token_hash = 'expired-session'")?;
        rows.first().and_then(|row| row["n"].as_u64()).context("a count")
    };
    ensure!(count(&w)? == 1, "the expired session was not planted");
    let again = Kitchen::sign_in(&w, "stale-cook").await?;
    ensure!(count(&w)? == 0, "the expired session is still there");
    ensure!(again.page().await?.contains("stale-cook"), "the new session works");
    Ok(())
}

pub async fn a_key_label_with_hidden_text_is_refused_naming_the_field(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "label-maker").await?;
    let answer = kitchen.post("/kitchen/keys", &[("label", "laptop\u{202E}")]).await?;
    ensure!(answer.status() == 200, "making a key answered {}", answer.status());
    let page = answer.text().await?;
    ensure!(tests::kitchen::new_key_of(&page).is_none(), "a key was made");
    ensure!(page.contains("label: character 7 is the bidirectional control U+202E"), "{page}");
    ensure!(!kitchen.page().await?.contains("data-key-id"), "a key was stored");
    Ok(())
}

/// The local sign-in refuses a handle that cannot be one with 400 (it answered 200), and the site's
/// own name with a reason that says it is reserved (it said "use a-z, 0-9 and -").
pub async fn a_bad_or_reserved_handle_is_a_400_saying_why(w: Arc<Worker>) -> Result<()> {
    let address = tests::kitchen::address_of("handle-tester");
    for (handle, reason) in [("Not A Handle", "a-z, 0-9 and -"), ("commonplace", "is reserved")] {
        let answer = Kitchen::try_sign_in(&w, handle, &address).await?;
        ensure!(answer.status() == 400, "{handle}: {}", answer.status());
        ensure!(answer.headers()["content-type"].to_str()?.starts_with("text/html"), "{handle}");
        let page = answer.text().await?;
        ensure!(page.contains(reason), "{handle}: {page}");
    }
    Ok(())
}

/// A new key is shown once, on the page that answers the form: 200, as `openapi.json` says.
pub async fn a_new_key_answers_200_as_described(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "key-describer").await?;
    let answer = kitchen.post("/kitchen/keys", &[("label", "described")]).await?;
    ensure!(answer.status() == 200, "{}", answer.status());
    ensure!(tests::kitchen::new_key_of(&answer.text().await?).is_some(), "the key is shown");
    let openapi: serde_json::Value = reqwest::get(w.url("/openapi.json")).await?.json().await?;
    let responses = &openapi["paths"]["/kitchen/keys"]["post"]["responses"];
    ensure!(responses["200"]["content"]["text/html"].is_object(), "{responses}");
    let dev = &openapi["paths"]["/kitchen/login/dev"]["post"]["responses"];
    ensure!(dev["400"]["content"]["text/html"].is_object(), "{dev}");
    Ok(())
}
