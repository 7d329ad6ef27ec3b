//! Limits per person and pages by bytes through the real Worker: the write limit shared by
//! every key of an account, the cap on live keys, sign-ins and new keys per client address, and a
//! change-feed page cut at 1 MiB whose cursor leads to every item exactly once.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::{Value, json};
use tests::Worker;
use tests::kitchen::{CONNECTING_IP, Kitchen, new_key_of};

use crate::recipes_write::{Answer, Api, recipe};

fn problem(answer: &Answer, status: u16, kind: &str) -> Result<()> {
    ensure!(answer.status.as_u16() == status, "expected {status}, got {}: {}", answer.status, answer.text);
    ensure!(answer.headers["content-type"] == "application/problem+json", "{:?}", answer.headers);
    ensure!(answer.body["type"] == format!("/problems/{kind}"), "{}", answer.body);
    ensure!(answer.body["status"] == status && answer.body["detail"].is_string(), "{}", answer.body);
    Ok(())
}

/// The `r=` of a `RateLimit` header.
fn remaining(answer: &Answer) -> Option<u32> {
    let header = answer.headers.get("ratelimit")?.to_str().ok()?;
    header.split(';').find_map(|part| part.strip_prefix("r=")).and_then(|r| r.parse().ok())
}

pub async fn writes_from_every_key_of_an_account_share_one_limit(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "three-keys").await?;
    let mut keys = Vec::new();
    for label in ["laptop", "phone", "agent"] {
        keys.push(Api::new(&w, &kitchen.new_key(label).await?));
    }
    // Invalid documents count as writes but store nothing. Writes go round the three keys; with a
    // limit per key they would pass 180 a minute. The window is a fixed minute: should it turn over
    // mid-test the count starts again, so the test writes until refused (at most two windows' worth).
    let bad = json!({"emoji": "x"});
    let mut last_remaining: Option<u32> = None;
    let mut refused = None;
    for n in 0..125 {
        let answer = keys[n % 3].create(&bad).await?;
        if answer.status == 429 {
            refused = Some(answer);
            break;
        }
        ensure!(answer.status == 422, "{}", answer.text);
        let now = remaining(&answer).context("no RateLimit header")?;
        // Each write, whichever key sent it, spends one of the account's writes (or a new minute began).
        if let Some(before) = last_remaining {
            ensure!(now + 1 == before || now == 59, "remaining went from {before} to {now} at write {n}");
        }
        last_remaining = Some(now);
    }
    let refused = refused.ok_or_else(|| anyhow!("125 writes over three keys were never refused"))?;
    problem(&refused, 429, "rate-limited")?;
    ensure!(refused.headers["ratelimit"].to_str()?.starts_with("\"writes\";r=0;t="), "{:?}", refused.headers);
    ensure!(refused.headers["ratelimit-policy"] == "\"writes\";q=60;w=60", "{:?}", refused.headers);
    ensure!(refused.body["detail"].as_str().unwrap().contains("per account"), "{}", refused.body);
    // Every key of the account is refused now; another account is not.
    for key in &keys {
        let again = key.create(&bad).await?;
        ensure!(again.status == 429 || again.status == 422, "{}", again.text);
    }
    let other = Api::new(&w, &Kitchen::sign_in(&w, "other-account").await?.new_key("tests").await?);
    ensure!(other.create(&bad).await?.status == 422, "another account was limited too");
    Ok(())
}

pub async fn a_key_past_the_cap_is_refused_until_one_is_revoked(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "key-hoarder").await?;
    let page = kitchen.page().await?;
    ensure!(page.contains("An account may hold 20 live keys; you hold 0."), "{page}");
    ensure!(page.contains("60 writes a minute and 20 AI requests an hour"), "{page}");
    for n in 1..=20 {
        kitchen.new_key(&format!("key {n}")).await?;
    }
    let full = kitchen.page().await?;
    ensure!(full.contains(r#"id="key-cap""#) && !full.contains(r#"id="new-key-form""#), "{full}");

    let refused = Answer::read(kitchen.post("/kitchen/keys", &[("label", "one too many")]).await?).await?;
    problem(&refused, 409, "too-many-keys")?;
    ensure!(refused.body["detail"].as_str().unwrap().contains("holds 20 live keys"), "{}", refused.body);
    ensure!(refused.headers["ratelimit-policy"] == "\"new-keys\";q=30;w=3600", "{:?}", refused.headers);
    ensure!(!kitchen.page().await?.contains("one too many"), "the refused key was stored");

    // Revoking one makes room for one.
    let id = kitchen.key_id("key 7").await?;
    let revoked = kitchen.post(&format!("/kitchen/keys/{id}/revoke"), &[]).await?;
    ensure!(revoked.status() == 303, "revoking answered {}", revoked.status());
    kitchen.new_key("a fresh one").await?;
    let refused = Answer::read(kitchen.post("/kitchen/keys", &[("label", "again too many")]).await?).await?;
    problem(&refused, 409, "too-many-keys")?;
    Ok(())
}

pub async fn sign_ins_from_one_address_are_limited(w: Arc<Worker>) -> Result<()> {
    let address = "198.51.100.23";
    let mut last = None;
    for n in 0..20 {
        let answer = Kitchen::try_sign_in(&w, &format!("crowd-{n}"), address).await?;
        ensure!(answer.status() == 303, "sign-in {n} answered {}", answer.status());
        ensure!(answer.headers()["ratelimit-policy"] == "\"sign-ins\";q=20;w=3600", "{:?}", answer.headers());
        last = Some(answer.headers()["ratelimit"].to_str()?.to_string());
    }
    ensure!(last.is_some_and(|h| h.starts_with("\"sign-ins\";r=0;")), "the twentieth sign-in left quota");
    // The 21st, even of an account that exists, is refused; the account is not made. A sign-in is a
    // browser's form, so the refusal is a page (it was the raw problem JSON), with the limit's headers.
    let refused = Answer::read(Kitchen::try_sign_in(&w, "crowd-20", address).await?).await?;
    ensure!(refused.status.as_u16() == 429, "{}: {}", refused.status, refused.text);
    let content_type = refused.headers["content-type"].to_str()?;
    ensure!(content_type.starts_with("text/html"), "a page, not {content_type}: {}", refused.text);
    ensure!(refused.text.contains("Too many sign-ins") && refused.text.contains("<main"), "{}", refused.text);
    ensure!(
        refused.headers["ratelimit"].to_str()?.starts_with("\"sign-ins\";r=0;t="),
        "{:?}",
        refused.headers
    );
    ensure!(refused.headers["retry-after"].to_str()?.parse::<u64>()? <= 3600, "{:?}", refused.headers);
    ensure!(Answer::read(Kitchen::try_sign_in(&w, "crowd-1", address).await?).await?.status.as_u16() == 429);
    let made = w.d1_query("SELECT COUNT(*) AS n FROM accounts WHERE handle LIKE 'crowd-%'")?;
    ensure!(made[0]["n"] == 20, "{made:?}");
    // Another address signs in as usual; the sign-in page says the limit.
    Kitchen::sign_in_from(&w, "crowd-20", "198.51.100.24").await?;
    let page = reqwest::Client::new().get(w.url("/kitchen")).header(CONNECTING_IP, address).send().await?;
    ensure!(page.text().await?.contains("At most 20 sign-ins an hour come from one address."));
    Ok(())
}

pub async fn new_keys_from_one_address_are_limited(w: Arc<Worker>) -> Result<()> {
    // Two accounts at one IPv6 /64 (a household, say, or one person with two accounts), which counts
    // as one address.
    let address = "2001:db8:77:1::5";
    let first = Kitchen::sign_in_from(&w, "house-one", address).await?;
    let second = Kitchen::sign_in_from(&w, "house-two", "2001:db8:77:1:ffff::9").await?;
    for n in 0..15 {
        first.new_key(&format!("one {n}")).await?;
        second.new_key(&format!("two {n}")).await?;
    }
    let refused = Answer::read(second.post("/kitchen/keys", &[("label", "the 31st")]).await?).await?;
    problem(&refused, 429, "rate-limited")?;
    ensure!(
        refused.headers["ratelimit"].to_str()?.starts_with("\"new-keys\";r=0;t="),
        "{:?}",
        refused.headers
    );
    ensure!(refused.headers["ratelimit-policy"] == "\"new-keys\";q=30;w=3600", "{:?}", refused.headers);
    // The same account from another address makes keys as usual.
    let elsewhere = Kitchen::sign_in_from(&w, "house-two", "203.0.113.99").await?;
    let made = elsewhere.post("/kitchen/keys", &[("label", "from work")]).await?;
    ensure!(made.status() == 200, "{}", made.status());
    ensure!(new_key_of(&made.text().await?).is_some(), "no key on the page");
    Ok(())
}

/// A valid recipe of about `kib` KiB: sixty long steps.
fn big_recipe(title: &str, kib: usize) -> Value {
    let mut doc = recipe(title);
    let sentence = "Stir the pot slowly and taste as you go. ";
    let step_chars = (kib * 1024 / 60).min(3900);
    let text: String = sentence.repeat(step_chars / sentence.len() + 1)[..step_chars].trim().to_string();
    let steps: Vec<Value> = (0..60).map(|_| json!({"t": text})).collect();
    doc["texts"]["en"]["steps"] = json!(steps);
    doc
}

pub async fn a_feed_page_stops_at_the_byte_budget_and_its_cursor_finds_the_rest(
    w: Arc<Worker>,
) -> Result<()> {
    let api = Api::new(&w, &Kitchen::sign_in(&w, "bulky-cook").await?.new_key("tests").await?);
    let start = api.get("/api/changes?limit=1000").await?;
    let since = start.body["last_seq"].as_u64().context("no last_seq")?;
    let mut written = Vec::new();
    for n in 0..8 {
        let made = api.create(&big_recipe(&format!("Bulky Stew {n}"), 228)).await?;
        ensure!(made.status == 201, "{}", made.text);
        ensure!(made.text.len() > 200 * 1024, "a recipe of {} bytes", made.text.len());
        written.push(made.body["slug"].as_str().unwrap_or_default().to_string());
    }

    // Eight items of ~230 KiB are ~1.8 MiB: a page of a thousand stops at 1 MiB, with a cursor.
    let first = api.get(&format!("/api/changes?since={since}&limit=1000")).await?;
    ensure!(first.status == 200, "{}", first.text);
    let items = first.body["items"].as_array().context("no items")?;
    let item_bytes: usize = items.iter().map(|item| item.to_string().len()).sum();
    ensure!((1..8).contains(&items.len()), "{} items on the first page", items.len());
    ensure!(item_bytes <= 1024 * 1024, "the page holds {item_bytes} bytes of items");
    let next = first.body["next_since"].as_u64().context("a page cut by bytes has no next_since")?;
    ensure!(first.body["next_cursor"].as_str() == Some(next.to_string().as_str()), "{}", first.body);
    ensure!(items.last().unwrap()["seq"] == next, "next_since is not the page's last seq");

    // Following the cursor meets every item exactly once, in order.
    let mut seqs = Vec::new();
    let mut slugs = Vec::new();
    let mut cursor = since.to_string();
    let mut pages = 0;
    loop {
        let page = api.get(&format!("/api/changes?cursor={cursor}&limit=1000")).await?;
        ensure!(page.status == 200, "{}", page.text);
        pages += 1;
        for item in page.body["items"].as_array().unwrap() {
            seqs.push(item["seq"].as_u64().unwrap());
            slugs.push(item["slug"].as_str().unwrap().to_string());
        }
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = next.to_string(),
            None => break,
        }
    }
    ensure!(pages >= 2, "{pages} page(s)");
    ensure!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
    ensure!(seqs.iter().collect::<BTreeSet<_>>().len() == seqs.len(), "an item came twice: {seqs:?}");
    ensure!(slugs == written, "{slugs:?} != {written:?}");
    // A small limit still pages by count.
    let two = api.get(&format!("/api/changes?since={since}&limit=2")).await?;
    ensure!(
        two.body["items"].as_array().unwrap().len() == 2 && two.body["next_since"].is_u64(),
        "{}",
        two.text
    );
    Ok(())
}
