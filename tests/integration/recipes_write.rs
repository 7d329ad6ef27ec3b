//! Keyed recipe writes through the real Worker and D1: auth, create, change, fork, the overlay on every
//! read route, the change feed, history, bad input, the write limit, and the two races.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use futures::future::join_all;
use futures::{StreamExt, TryStreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tests::kitchen::{Kitchen, key_for};
use tests::{Config, Worker, send_safe};

pub use tests::fixtures::recipe;

pub struct Api {
    pub base: String,
    pub key: String,
    pub client: reqwest::Client,
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Answer {
    /// A response read whole: its body as JSON, or `null` when it is none.
    pub async fn read(response: reqwest::Response) -> Result<Answer> {
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Answer { status, headers, body, text })
    }
}

impl Api {
    pub fn new(w: &Worker, key: &str) -> Api {
        Api { base: w.base.clone(), key: key.to_string(), client: reqwest::Client::new() }
    }

    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answer> {
        Answer::read(request.send().await?).await
    }

    /// A GET, sent again once when the connection it went out on closed unanswered ([`send_safe`]).
    pub async fn get(&self, path: &str) -> Result<Answer> {
        Answer::read(send_safe(self.client.get(format!("{}{path}", self.base))).await?).await
    }

    pub async fn create(&self, doc: &Value) -> Result<Answer> {
        self.send(self.client.post(format!("{}/api/recipes", self.base)).bearer_auth(&self.key).json(doc))
            .await
    }

    /// A create whose body is `body` as it stands, sent as `content_type`.
    pub async fn create_raw(&self, content_type: &str, body: impl Into<reqwest::Body>) -> Result<Answer> {
        let request = self.client.post(format!("{}/api/recipes", self.base)).bearer_auth(&self.key);
        self.send(request.header("Content-Type", content_type).body(body)).await
    }

    /// A create carrying `Idempotency-Key: key` (a structured-field string), sent again when the
    /// connection it went out on was closed under it, as `get` is: the key makes a send after the
    /// first answer what the first made, if it reached the Worker, so no recipe is made twice. While
    /// the first still holds the key (409 `idempotency-key-in-flight`: it runs, or it died and the
    /// key is let go after two minutes) it asks again shortly, as docs/api.md advises.
    pub async fn create_retried(&self, key: &str, doc: &Value) -> Result<Answer> {
        let request = || {
            self.client
                .post(format!("{}/api/recipes", self.base))
                .bearer_auth(&self.key)
                .header("Idempotency-Key", key)
                .json(doc)
        };
        let mut answer = match request().send().await {
            Err(err) if err.is_request() || err.is_connect() => self.send(request()).await?,
            sent => return Answer::read(sent?).await,
        };
        let asked_until = Instant::now() + Duration::from_secs(150);
        while answer.status == StatusCode::CONFLICT && Instant::now() < asked_until {
            tokio::time::sleep(Duration::from_millis(250)).await;
            answer = self.send(request()).await?;
        }
        Ok(answer)
    }

    pub async fn change(&self, slug: &str, doc: &Value, note: &str, if_match: Option<u64>) -> Result<Answer> {
        let mut body = doc.clone();
        body["note"] = json!(note);
        let mut request =
            self.client.put(format!("{}/api/r/{slug}", self.base)).bearer_auth(&self.key).json(&body);
        if let Some(version) = if_match {
            request = request.header("If-Match", format!("\"{version}\""));
        }
        self.send(request).await
    }

    pub async fn fork(&self, slug: &str) -> Result<Answer> {
        self.send(self.client.post(format!("{}/api/r/{slug}/fork", self.base)).bearer_auth(&self.key)).await
    }
}

fn problem(answer: &Answer, status: u16) -> Result<()> {
    ensure!(answer.status.as_u16() == status, "expected {status}, got {}: {}", answer.status, answer.text);
    ensure!(
        answer.headers["content-type"] == "application/problem+json",
        "{:?}",
        answer.headers["content-type"]
    );
    ensure!(answer.body["status"] == status && answer.body["title"].is_string(), "{}", answer.body);
    Ok(())
}

/// `answer`, once checked to be a 422 problem whose first error names `field`.
fn refused_naming(field: &str, answer: Answer) -> Result<Answer> {
    problem(&answer, 422)?;
    ensure!(answer.body["errors"][0]["field"] == field, "{}", answer.body);
    Ok(answer)
}

fn slug_of(answer: &Answer) -> String {
    answer.body["slug"].as_str().unwrap_or_default().to_string()
}

pub async fn me_names_the_key_owner_and_its_label(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "me-cook").await?;
    let key = kitchen.new_key("phone").await?;
    let api = Api::new(&w, &key);
    let me = api.send(api.client.get(w.url("/api/me")).bearer_auth(&key)).await?;
    ensure!(me.status == 200, "{}", me.text);
    ensure!(me.body["handle"] == "me-cook" && me.body["display_name"] == "me-cook", "{}", me.body);
    ensure!(me.body["key_label"] == "phone", "{}", me.body);
    Ok(())
}

pub async fn missing_unknown_and_revoked_keys_are_401_with_a_bearer_challenge(w: Arc<Worker>) -> Result<()> {
    let kitchen = Kitchen::sign_in(&w, "revoker").await?;
    let key = kitchen.new_key("old laptop").await?;
    let api = Api::new(&w, &key);
    ensure!(api.create(&recipe("Revocable salad")).await?.status == 201, "a live key writes");

    let revoke =
        kitchen.post(&format!("/kitchen/keys/{}/revoke", kitchen.key_id("old laptop").await?), &[]).await?;
    ensure!(revoke.status() == 303, "revoke answered {}", revoke.status());

    let missing = api.send(api.client.post(w.url("/api/recipes")).json(&recipe("No key salad"))).await?;
    let unknown = Api::new(&w, "cpk_0000").create(&recipe("Wrong key salad")).await?;
    let revoked = api.create(&recipe("Revoked salad")).await?;
    let me = api.send(api.client.get(w.url("/api/me")).bearer_auth(&key)).await?;
    for answer in [&missing, &unknown, &revoked, &me] {
        problem(answer, 401)?;
        ensure!(answer.headers["www-authenticate"].to_str()?.starts_with("Bearer"), "{:?}", answer.headers);
    }
    Ok(())
}

pub async fn create_assigns_a_slug_the_owner_and_cc0(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "creator").await?);
    let mut doc = recipe("Cucumber Ribbon Salad");
    doc["owner"] = json!("mallory");
    let first = api.create(&doc).await?;
    ensure!(first.status == 201, "{}", first.text);
    ensure!(
        first.headers["location"] == "/r/cucumber-ribbon-salad.json",
        "{:?}",
        first.headers.get("location")
    );
    ensure!(first.body["slug"] == "cucumber-ribbon-salad", "{}", first.body);
    ensure!(first.body["owner"] == "creator" && first.body["licence"] == "CC0-1.0", "{}", first.body);
    ensure!(first.body["version"] == 1 && first.body["created_at"].is_string(), "{}", first.body);
    ensure!(first.headers["ratelimit-policy"] == "\"writes\";q=60;w=60", "{:?}", first.headers);
    ensure!(first.headers["ratelimit"].to_str()?.starts_with("\"writes\";r="), "{:?}", first.headers);

    let second = api.create(&doc).await?;
    ensure!(slug_of(&second) == "cucumber-ribbon-salad-2", "{}", second.body);
    // A built recipe's slug is taken too.
    let hummus = api.create(&recipe("Hummus")).await?;
    ensure!(slug_of(&hummus).starts_with("hummus-"), "{}", hummus.body);

    // The overlay answers at once, on every read route.
    let read = api.get("/r/cucumber-ribbon-salad.json").await?;
    ensure!(read.status == 200 && read.body == first.body, "{}", read.text);
    let page = api.get("/r/cucumber-ribbon-salad").await?;
    ensure!(page.status == 200 && page.text.contains("<h1>Cucumber Ribbon Salad</h1>"), "{}", page.status);
    ensure!(
        page.text.contains("application/ld+json") && page.text.contains("creator"),
        "page lacks JSON-LD or owner"
    );
    let found = api.get("/api/recipes?q=cucumber+ribbon").await?;
    let slugs: Vec<&str> =
        found.body["items"].as_array().unwrap().iter().filter_map(|c| c["slug"].as_str()).collect();
    ensure!(
        slugs.contains(&"cucumber-ribbon-salad") && slugs.contains(&"cucumber-ribbon-salad-2"),
        "{slugs:?}"
    );
    Ok(())
}

/// New slugs lost most of a title: "סלט מלפפונים של כרמל" became `slt-mlppvnym-shl-krml`, "Ærø"
/// `r`, and a 200-character title `recipe`. A recipe titled only in Hebrew is found by its slug's words.
pub async fn slugs_of_hebrew_and_unusual_titles_keep_their_words_and_find_the_recipe(
    w: Arc<Worker>,
) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "slug-maker").await?);
    let mut hebrew = recipe("unused");
    hebrew["texts"] = json!({"he": {
        "title": "סלט מלפפונים של כרמל", "summary": "סלט קל ומהיר.",
        "ingredients": [{"q": 2, "i": "מלפפונים"}, {"q": 0.5, "u": "כפית", "i": "מלח"}],
        "steps": [{"t": "פורסים את המלפפונים.", "f": ["knife"]}], "tips": ""}});
    let long = "Grandmother's slow-roasted tomato and garlic soup ".repeat(4);
    ensure!(long.trim().chars().count() == 199, "a title of 199 characters");
    for (doc, want) in [
        (hebrew, "salat-malapaponim-shal-karamal"),
        (recipe("Ærø"), "aero"),
        (recipe(long.trim()), "grandmothers-slow-roasted-tomato-and-garlic-soup-grandmothers-slow-roasted"),
    ] {
        let made = api.create(&doc).await?;
        ensure!(made.status == 201, "{}", made.text);
        ensure!(slug_of(&made) == want, "{} for {}", made.body["slug"], doc["texts"]);
    }
    let found = api.get("/api/recipes?q=malapaponim").await?;
    ensure!(found.body["items"][0]["slug"] == "salat-malapaponim-shal-karamal", "{}", found.text);
    Ok(())
}

pub async fn change_needs_the_owner_a_note_and_the_current_version(w: Arc<Worker>) -> Result<()> {
    let owner = Api::new(&w, &key_for(&w, "changer").await?);
    let other = Api::new(&w, &key_for(&w, "stranger").await?);
    let created = owner.create(&recipe("Radish Pickle")).await?;
    let slug = slug_of(&created);

    problem(&other.change(&slug, &recipe("Radish Pickle"), "mine now", Some(1)).await?, 403)?;
    problem(&other.change("hummus", &recipe("Hummus"), "mine now", None).await?, 403)?;

    let no_note = owner.send(
        owner
            .client
            .put(w.url(&format!("/api/r/{slug}")))
            .bearer_auth(&owner.key)
            .json(&recipe("Radish Pickle")),
    );
    refused_naming("note", no_note.await?)?;

    let changed = owner.change(&slug, &recipe("Quick Radish Pickle"), "Shorter brine", Some(1)).await?;
    ensure!(changed.status == 200, "{}", changed.text);
    ensure!(
        changed.body["version"] == 2 && changed.body["texts"]["en"]["title"] == "Quick Radish Pickle",
        "{}",
        changed.body
    );
    ensure!(changed.body["created_at"] == created.body["created_at"], "{}", changed.body);
    ensure!(changed.headers["etag"] == "\"2\"", "{:?}", changed.headers.get("etag"));

    let stale = owner.change(&slug, &recipe("Radish Pickle Again"), "Back", Some(1)).await?;
    problem(&stale, 412)?;
    let read = owner.get(&format!("/r/{slug}.json")).await?;
    ensure!(read.body == changed.body, "a stale write changed the document: {}", read.text);
    Ok(())
}

pub async fn fork_makes_my_copy_and_a_fork_of_a_fork_keeps_the_chain(w: Arc<Worker>) -> Result<()> {
    let alice = Api::new(&w, &key_for(&w, "fork-alice").await?);
    let bob = Api::new(&w, &key_for(&w, "fork-bob").await?);
    let fork = alice.fork("shakshuka").await?;
    ensure!(fork.status == 201, "{}", fork.text);
    let fork_slug = slug_of(&fork);
    ensure!(fork_slug.starts_with("shakshuka-"), "{fork_slug}");
    ensure!(fork.body["forked_from"] == "shakshuka" && fork.body["owner"] == "fork-alice", "{}", fork.body);
    ensure!(fork.headers["location"] == format!("/r/{fork_slug}.json").as_str(), "{:?}", fork.headers);
    let original = alice.get("/r/shakshuka.json").await?;
    ensure!(fork.body["texts"] == original.body["texts"], "the fork's text differs");

    let fork2 = bob.fork(&fork_slug).await?;
    ensure!(fork2.status == 201 && fork2.body["forked_from"] == fork_slug.as_str(), "{}", fork2.body);
    ensure!(fork2.body["owner"] == "fork-bob" && slug_of(&fork2) != fork_slug, "{}", fork2.body);
    // Following `forked_from` from the fork of the fork leads back to the original.
    let parent = bob.get(&format!("/r/{}.json", fork2.body["forked_from"].as_str().unwrap())).await?;
    ensure!(parent.body["forked_from"] == "shakshuka", "{}", parent.body);

    // Alice may change her fork; Bob may not.
    problem(&bob.change(&fork_slug, &recipe("Bob's"), "mine", None).await?, 403)?;
    ensure!(
        alice.change(&fork_slug, &recipe("Green Shakshuka"), "Greens", None).await?.status == 200,
        "owner change"
    );
    problem(&alice.fork("no-such-recipe").await?, 404)?;
    Ok(())
}

pub async fn bad_input_is_a_problem_naming_what_is_wrong(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "careless").await?);
    let wrong_type = api.create_raw("text/plain", "{}").await?;
    problem(&wrong_type, 415)?;

    let huge = json!({"padding": "x".repeat(300 * 1024)}).to_string();
    let too_large = api.create_raw("application/json", huge).await?;
    problem(&too_large, 413)?;

    let malformed = api.create_raw("application/json", "{\"emoji\": ").await?;
    problem(&malformed, 400)?;

    let mut bad = recipe("Bad salad");
    bad["course"] = json!("lunch");
    bad["difficulty"] = json!(9);
    bad["texts"]["en"]["steps"][0]["f"] = json!(["fire"]);
    bad["colour"] = json!("green");
    let invalid = api.create(&bad).await?;
    problem(&invalid, 422)?;
    let fields: Vec<&str> =
        invalid.body["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
    for field in ["course", "difficulty", "texts.en.steps[0].f[0]", "colour"] {
        ensure!(fields.contains(&field), "{field} not listed: {fields:?}");
    }
    ensure!(invalid.body["errors"][0]["reason"].is_string(), "{}", invalid.body);

    problem(&api.change("no-such-recipe", &recipe("Ghost"), "boo", None).await?, 404)?;
    let bad_if_match = api.send(
        api.client
            .put(w.url("/api/r/hummus"))
            .bearer_auth(&api.key)
            .header("If-Match", "yesterday")
            .json(&json!({"note": "x"})),
    );
    ensure!(bad_if_match.await?.status.is_client_error(), "a bad If-Match is refused");
    // Nothing of the failed writes reached the feed.
    let feed = api.get("/api/changes?limit=1000").await?;
    let owners: Vec<&str> =
        feed.body["items"].as_array().unwrap().iter().filter_map(|c| c["owner"].as_str()).collect();
    ensure!(!owners.contains(&"careless"), "a failed write left a change: {owners:?}");
    Ok(())
}

/// Unclean text: each case alone in an otherwise good document is a 422 naming its field.
pub async fn unclean_text_is_422_naming_the_field(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "hidden-text").await?);
    let marks = format!("🍲{}", "\u{0301}".repeat(20_000));
    let cases: [(&str, &str, &str); 13] = [
        ("/emoji", "\u{202E}", "emoji"),
        ("/emoji", "\u{200B}", "emoji"),
        ("/emoji", &marks, "emoji"),
        ("/emoji", "🍲🥗", "emoji"),
        ("/texts/en/title", "Salad\u{0}", "texts.en.title"),
        ("/texts/en/title", "\u{202E}dalaS", "texts.en.title"),
        ("/texts/en/title", "Sal\u{200B}ad", "texts.en.title"),
        ("/texts/en/summary", "Crisp\u{7} and quick.", "texts.en.summary"),
        ("/texts/en/summary", "\u{1B}[31mCrisp", "texts.en.summary"),
        ("/texts/en/summary", "Crisp \u{202E}and quick.", "texts.en.summary"),
        ("/texts/en/tips", "Serve\u{85}", "texts.en.tips"),
        ("/texts/en/steps/1/t", "Salt\u{9B} and serve.", "texts.en.steps[1].t"),
        ("/texts/en/ingredients/1/i", "\u{FE0F}salt", "texts.en.ingredients[1].i"),
    ];
    for (pointer, text, field) in cases {
        let mut doc = recipe("Hidden salad");
        *doc.pointer_mut(pointer).unwrap() = json!(text);
        let answer = api.create(&doc).await?;
        problem(&answer, 422)?;
        let errors = answer.body["errors"].as_array().unwrap();
        ensure!(errors.len() == 1 && errors[0]["field"] == field, "{pointer}: {}", answer.body);
    }

    let created = api.create(&recipe("Clean salad")).await?;
    ensure!(created.status == 201, "{}", created.text);
    let changed = api.change(&slug_of(&created), &recipe("Clean salad"), "less\u{0} salt", Some(1)).await?;
    refused_naming("note", changed)?;
    let feed = api.get("/api/changes?limit=1000").await?;
    let mine = feed.body["items"].as_array().unwrap().iter().filter(|c| c["owner"] == "hidden-text").count();
    ensure!(mine == 1, "only the clean create reached the feed, not {mine} changes");
    Ok(())
}

pub async fn search_shows_overlay_recipes_and_hides_replaced_versions(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "searcher").await?);
    let created = api.create(&recipe("Zucchini Carpaccio")).await?;
    let slug = slug_of(&created);
    let slugs = |answer: &Answer| -> Vec<String> {
        answer.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["slug"].as_str().map(String::from))
            .collect()
    };
    ensure!(slugs(&api.get("/api/recipes?q=zucchini").await?) == [slug.clone()], "the new recipe is found");
    ensure!(
        api.change(&slug, &recipe("Kohlrabi Carpaccio"), "Kohlrabi is better", None).await?.status == 200,
        "change"
    );
    ensure!(slugs(&api.get("/api/recipes?q=zucchini").await?).is_empty(), "the old text is still found");
    let found = api.get("/api/recipes?q=kohlrabi&gf=1&course=salad").await?;
    ensure!(slugs(&found) == [slug.clone()] && found.body["total"] == 1, "{}", found.body);
    ensure!(found.body["items"][0]["title"] == "Kohlrabi Carpaccio", "{}", found.body);
    // Filters apply to overlay recipes as to built ones.
    ensure!(
        slugs(&api.get("/api/recipes?q=kohlrabi&course=soup").await?).is_empty(),
        "course filter ignored"
    );
    // Every recipe is listed once.
    let all = api.get("/api/recipes?limit=100").await?;
    let mut listed = slugs(&all);
    let n = listed.len();
    listed.sort();
    listed.dedup();
    ensure!(listed.len() == n && all.body["total"].as_u64() >= Some(46), "{listed:?}");
    Ok(())
}

pub async fn a_listing_filters_overlay_recipes_by_the_facets_the_build_filters_by(
    w: Arc<Worker>,
) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "lister").await?);
    let queries =
        [("gf=1&vegan=1&course=salad&max_min=10", true), ("course=soup", false), ("max_min=5", false)];
    let mut totals_before = Vec::new();
    for (query, _) in queries {
        totals_before.push(api.get(&format!("/api/recipes?{query}&limit=1")).await?.body["total"].clone());
    }
    let slug = slug_of(&api.create(&recipe("Radish Carpaccio")).await?);
    for ((query, shown), before) in queries.into_iter().zip(totals_before) {
        let page = api.get(&format!("/api/recipes?{query}&limit=100")).await?;
        let items = page.body["items"].as_array().cloned().unwrap_or_default();
        let slugs: Vec<&str> = items.iter().filter_map(|c| c["slug"].as_str()).collect();
        ensure!(slugs.contains(&slug.as_str()) == shown, "{query}: {slugs:?}");
        // Also a first page the built recipes fill counts only the overlay recipes the filters admit.
        let total = api.get(&format!("/api/recipes?{query}&limit=1")).await?.body["total"].clone();
        let grown = before.as_u64().unwrap_or_default() + u64::from(shown);
        ensure!(total.as_u64() == Some(grown), "{query}: total {total} after {before}");
    }
    Ok(())
}

/// An overlay recipe indexed under other facet rules (a Worker before this one) is given this
/// Worker's facet keys by the sweep, keeping its terms: a listing by its facets and a search by its
/// words find it again. Its own worker, whose isolate has not swept yet.
pub async fn a_sweep_gives_recipes_of_older_facet_rules_new_keys_and_keeps_their_terms() -> Result<()> {
    let w = Worker::start_with(Config::default()).await?;
    let api = Api::new(&w, &key_for(&w, "old-rules").await?);
    let slug = slug_of(&api.create(&recipe("Radish Carpaccio")).await?);
    let terms = |w: &Worker| -> Result<Value> {
        let rows = w.d1_query(&format!("SELECT count(*) AS n FROM overlay_terms WHERE slug = '{slug}'"))?;
        Ok(rows.first().map(|row| row["n"].clone()).unwrap_or_default())
    };
    let terms_before = terms(&w)?;
    ensure!(terms_before.as_u64() > Some(0), "the create wrote no terms: {terms_before}");
    // As a Worker of other rules left it: keys of no use to this one, and no sweep of this build yet.
    w.d1_execute(&format!(
        "UPDATE overlay_search SET facets = '', facets_version = 0 WHERE slug = '{slug}'; \
         UPDATE overlay_sweep SET generation = ''"
    ))?;
    let page = api.get("/api/recipes?course=salad&max_min=10&limit=100").await?;
    let listed: Vec<&str> =
        page.body["items"].as_array().into_iter().flatten().filter_map(|c| c["slug"].as_str()).collect();
    ensure!(listed.contains(&slug.as_str()), "the listing lost {slug}: {listed:?}");
    let row =
        w.d1_query(&format!("SELECT facets, facets_version FROM overlay_search WHERE slug = '{slug}'"))?;
    let facets = row.first().and_then(|row| row["facets"].as_str()).unwrap_or_default().to_string();
    ensure!(facets.contains(" course:salad "), "the sweep gave {slug} the keys {facets:?}");
    ensure!(terms(&w)? == terms_before, "the sweep rewrote the terms of {slug}");
    let found = api.get("/api/recipes?q=radish+carpaccio").await?;
    ensure!(found.body["items"][0]["slug"] == slug.as_str(), "{}", found.body);
    Ok(())
}

/// A recipe whose words no other recipe has: `quince`, `compote` and its number.
fn quince(n: usize) -> Value {
    let mut doc = recipe(&format!("Quince compote {n}"));
    doc["texts"]["en"]["summary"] = json!("Quinces poached slowly in syrup.");
    doc["texts"]["en"]["ingredients"] = json!([{"q": 2, "i": "quinces"}, {"q": 100, "u": "g", "i": "sugar"}]);
    doc["texts"]["en"]["steps"] = json!([{"t": "Poach the quinces until rosy.", "min": 40}]);
    doc
}

pub async fn a_search_answers_alike_before_and_after_two_thousand_writes_that_do_not_match_it() -> Result<()>
{
    // A worker of its own, its write limit raised so one account can write 2,000 recipes at once.
    let w = Worker::start_with(Config {
        vars: vec![("WRITES_PER_MINUTE".into(), "100000".into())],
        ..Config::default()
    })
    .await?;
    let api = Api::new(&w, &key_for(&w, "bulk-cook").await?);
    let searches = [
        "/api/recipes?q=hummus",
        "/api/recipes?q=humus",
        "/api/recipes?q=lemon&limit=5",
        "/api/recipes?q=tomato&vegan=1",
        "/api/recipes?q=%D7%97%D7%95%D7%9E%D7%95%D7%A1",
    ];
    let mut before = Vec::new();
    for path in searches {
        before.push(api.get(path).await?.body);
    }
    let listing = api.get("/api/recipes?limit=100").await?.body;
    let n_built = listing["total"].as_u64().unwrap_or_default();
    ensure!(n_built > 0 && n_built < 100, "the sample holds {n_built} recipes");

    let created: Vec<Answer> = futures::stream::iter(0..2_000)
        .map(|n| {
            let api = &api;
            async move { api.create_retried(&format!("\"bulk-{n}\""), &quince(n)).await }
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    let refused: Vec<&str> = created.iter().filter(|a| a.status != 201).map(|a| a.text.as_str()).collect();
    ensure!(refused.is_empty(), "{} writes refused, the first: {}", refused.len(), refused[0]);

    for (path, before) in searches.iter().zip(&before) {
        let after = api.get(path).await?.body;
        ensure!(&after == before, "{path} changed:\n{before}\n{after}");
    }
    // The new recipes are found, by a word and by a typo, and counted exactly.
    let found = api.get("/api/recipes?q=quince&limit=100").await?.body;
    ensure!(found["total"] == 2_000 && found["items"].as_array().map(Vec::len) == Some(100), "{found}");
    let typo = api.get("/api/recipes?q=quinse%20compote%201234").await?.body;
    ensure!(typo["total"] == 1 && typo["items"][0]["title"] == "Quince compote 1234", "{typo}");
    // A listing shows the build as before, then the new recipes in slug order.
    let after = api.get("/api/recipes?limit=100").await?.body;
    let items = after["items"].as_array().cloned().unwrap_or_default();
    let n = n_built as usize;
    ensure!(after["total"] == n_built + 2_000, "{}", after["total"]);
    ensure!(
        items[..n] == listing["items"].as_array().cloned().unwrap_or_default()[..],
        "the built part moved"
    );
    let slugs: Vec<&str> = items[n..].iter().filter_map(|c| c["slug"].as_str()).collect();
    let mut sorted = slugs.clone();
    sorted.sort_unstable();
    ensure!(
        slugs.len() == 100 - n && slugs == sorted && slugs[0].starts_with("quince-compote-"),
        "{slugs:?}"
    );
    Ok(())
}

pub async fn fifty_concurrent_changes_with_one_if_match_make_exactly_one_200(w: Arc<Worker>) -> Result<()> {
    let api = Arc::new(Api::new(&w, &key_for(&w, "racer").await?));
    let slug = slug_of(&api.create(&recipe("Race Salad")).await?);
    let attempts =
        (0..50).map(|n| {
            let api = api.clone();
            let slug = slug.clone();
            async move {
                api.change(&slug, &recipe(&format!("Race Salad {n}")), &format!("Try {n}"), Some(1)).await
            }
        });
    let answers: Vec<Answer> = join_all(attempts).await.into_iter().collect::<Result<_>>()?;
    let wins: Vec<&Answer> = answers.iter().filter(|a| a.status == 200).collect();
    // Each loser's `If-Match` names a version that is no longer current: 412 (RFC 9110 §13.1.1).
    let conflicts = answers.iter().filter(|a| a.status == 412).count();
    ensure!(wins.len() == 1 && conflicts == 49, "{} wins, {conflicts} precondition failures", wins.len());
    let read = api.get(&format!("/r/{slug}.json")).await?;
    ensure!(read.body == wins[0].body && read.body["version"] == 2, "lost or mixed document: {}", read.text);
    let history = api.get(&format!("/api/r/{slug}/history")).await?;
    ensure!(history.body["items"].as_array().unwrap().len() == 2, "{}", history.body);
    Ok(())
}

pub async fn twenty_concurrent_forks_get_twenty_distinct_slugs(w: Arc<Worker>) -> Result<()> {
    let owner = Api::new(&w, &key_for(&w, "forked").await?);
    let slug = slug_of(&owner.create(&recipe("Popular Slaw")).await?);
    let api = Arc::new(Api::new(&w, &key_for(&w, "forker").await?));
    let forks = (0..20).map(|_| {
        let api = api.clone();
        let slug = slug.clone();
        async move { api.fork(&slug).await }
    });
    let answers: Vec<Answer> = join_all(forks).await.into_iter().collect::<Result<_>>()?;
    let mut slugs: Vec<String> = answers.iter().filter(|a| a.status == 201).map(slug_of).collect();
    ensure!(slugs.len() == 20, "{:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
    slugs.sort();
    slugs.dedup();
    ensure!(slugs.len() == 20, "duplicate slugs: {slugs:?}");
    for fork in &slugs {
        let read = api.get(&format!("/r/{fork}.json")).await?;
        ensure!(read.body["forked_from"] == slug.as_str() && read.body["owner"] == "forker", "{}", read.text);
    }
    Ok(())
}

pub async fn change_feed_lists_every_write_in_order_and_pages(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "feeder").await?);
    let before = api.get("/api/changes?limit=1000").await?;
    let since = before.body["last_seq"].as_u64().unwrap_or(0);
    let slug = slug_of(&api.create(&recipe("Feed Salad")).await?);
    api.change(&slug, &recipe("Feed Salad Two"), "Second go", None).await?;
    let fork = slug_of(&api.fork(&slug).await?);

    let mut seen = Vec::new();
    let mut cursor = since;
    loop {
        let page = api.get(&format!("/api/changes?since={cursor}&limit=2")).await?;
        ensure!(page.status == 200 && page.headers["access-control-allow-origin"] == "*", "{}", page.text);
        for item in page.body["items"].as_array().unwrap() {
            seen.push(item.clone());
        }
        match page.body["next_since"].as_u64() {
            Some(next) => cursor = next,
            None => break,
        }
    }
    let seqs: Vec<u64> = seen.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    ensure!(seqs.windows(2).all(|p| p[0] < p[1]) && seqs.first().is_some_and(|s| *s > since), "{seqs:?}");
    let mine: Vec<(&str, &str, u64, &str)> = seen
        .iter()
        .filter(|c| c["owner"] == "feeder")
        .map(|c| {
            (
                c["kind"].as_str().unwrap(),
                c["slug"].as_str().unwrap(),
                c["version"].as_u64().unwrap(),
                c["note"].as_str().unwrap(),
            )
        })
        .collect();
    ensure!(
        mine == [
            ("create", slug.as_str(), 1, format!("Create {slug}").as_str()),
            ("change", slug.as_str(), 2, "Second go"),
            ("fork", fork.as_str(), 1, format!("Fork {slug} as {fork}").as_str()),
        ],
        "{mine:?}"
    );
    let last = seen.iter().find(|c| c["kind"] == "change" && c["owner"] == "feeder").unwrap();
    let read = api.get(&format!("/r/{slug}.json")).await?;
    ensure!(last["document"] == read.body, "the feed's document differs from the read");
    problem(&api.get("/api/changes?since=minus-one").await?, 400)?;
    Ok(())
}

pub async fn history_lists_api_changes_newest_first(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "historian").await?);
    let slug = slug_of(&api.create(&recipe("History Salad")).await?);
    api.change(&slug, &recipe("History Salad"), "More salt", None).await?;
    api.change(&slug, &recipe("History Salad"), "Less salt", None).await?;
    let history = api.get(&format!("/api/r/{slug}/history")).await?;
    ensure!(history.status == 200, "{}", history.text);
    let messages: Vec<&str> =
        history.body["items"].as_array().unwrap().iter().filter_map(|i| i["message"].as_str()).collect();
    ensure!(messages == ["Less salt", "More salt", format!("Create {slug}").as_str()], "{messages:?}");
    let item = &history.body["items"][0];
    ensure!(item["author"] == "historian" && item["version"] == 3 && item["date"].is_string(), "{item}");
    ensure!(history.body["next_cursor"].is_null(), "{}", history.body);
    // Pages of two: the cursor goes on where the page stopped, and a change made meanwhile (newer,
    // so first in the list) does not come again.
    let first = api.get(&format!("/api/r/{slug}/history?limit=2")).await?;
    let cursor = first.body["next_cursor"].as_str().unwrap_or_default().to_string();
    ensure!(first.body["items"].as_array().unwrap().len() == 2 && !cursor.is_empty(), "{}", first.text);
    api.change(&slug, &recipe("History Salad"), "A pinch more", None).await?;
    let rest = api.get(&format!("/api/r/{slug}/history?limit=2&cursor={cursor}")).await?;
    let messages: Vec<&str> =
        rest.body["items"].as_array().unwrap().iter().filter_map(|i| i["message"].as_str()).collect();
    ensure!(messages == [format!("Create {slug}").as_str()], "{messages:?}");
    ensure!(rest.body["next_cursor"].is_null(), "{}", rest.body);
    problem(&api.get(&format!("/api/r/{slug}/history?cursor=nonsense")).await?, 400)?;
    problem(&api.get("/api/r/no-such-recipe/history").await?, 404)?;
    Ok(())
}

pub async fn the_sixty_first_write_in_a_minute_is_429_with_rate_limit_headers(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "hasty").await?);
    // Invalid documents count as writes but store nothing, so the test leaves no recipes behind. The
    // limit counts per fixed minute; should a minute turn over mid-test, the count starts again, so
    // the test writes until refused (at most two windows' worth) instead of assuming where it is.
    let bad = json!({"emoji": "x"});
    let mut remaining = Vec::new();
    let mut refused = None;
    for _ in 0..125 {
        let answer = api.create(&bad).await?;
        if answer.status == 429 {
            refused = Some(answer);
            break;
        }
        ensure!(answer.status == 422, "{}", answer.text);
        let header = answer.headers["ratelimit"].to_str()?.to_string();
        remaining.push(header);
    }
    let refused = refused.ok_or_else(|| anyhow::anyhow!("125 writes were never refused"))?;
    problem(&refused, 429)?;
    let retry_after: u64 = refused.headers["retry-after"].to_str()?.parse()?;
    ensure!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    ensure!(refused.headers["ratelimit"].to_str()?.starts_with("\"writes\";r=0;t="), "{:?}", refused.headers);
    ensure!(refused.headers["ratelimit-policy"] == "\"writes\";q=60;w=60", "{:?}", refused.headers);
    ensure!(remaining.last().is_some_and(|h| h.starts_with("\"writes\";r=0;")), "{remaining:?}");
    // Another key is not affected.
    let other = Api::new(&w, &key_for(&w, "patient").await?);
    ensure!(other.create(&bad).await?.status == 422, "another key was limited too");
    Ok(())
}

/// Sends a change of `slug` with a raw `If-Match` header.
async fn change_if_match(api: &Api, slug: &str, doc: &Value, if_match: &str) -> Result<Answer> {
    let mut body = doc.clone();
    body["note"] = json!("a change");
    api.send(
        api.client
            .put(format!("{}/api/r/{slug}", api.base))
            .bearer_auth(&api.key)
            .header("If-Match", if_match)
            .json(&body),
    )
    .await
}

/// RFC 9110 §13.1.1: a list of entity tags matches when one is current, `*` matches, a weak tag never
/// does (412), and a value that is not an entity tag is a 400 that speaks of the header.
pub async fn if_match_lists_weak_tags_and_bare_numbers_follow_rfc_9110(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "precondition").await?);
    let created = api.create(&recipe("Precondition Salad")).await?;
    let slug = slug_of(&created);
    let doc = recipe("Precondition Salad");

    let listed = change_if_match(&api, &slug, &doc, "\"1\", \"999\"").await?;
    ensure!(listed.status == 200 && listed.body["version"] == 2, "{}", listed.text);
    ensure!(listed.headers["etag"] == "\"2\"", "{:?}", listed.headers);

    let weak = change_if_match(&api, &slug, &doc, "W/\"2\"").await?;
    problem(&weak, 412)?;
    ensure!(weak.body["detail"].as_str().unwrap_or_default().contains("W/\"2\""), "{}", weak.body);

    let star = change_if_match(&api, &slug, &doc, "*").await?;
    ensure!(star.status == 200 && star.body["version"] == 3, "{}", star.text);

    for not_a_tag in ["3", "yesterday", "\"3\" \"4\""] {
        let bare = change_if_match(&api, &slug, &doc, not_a_tag).await?;
        problem(&bare, 400)?;
        ensure!(bare.body["title"] == "A request header is not valid", "{}", bare.body);
        ensure!(bare.body["errors"][0]["field"] == "If-Match", "{}", bare.body);
    }
    let current = api.get(&format!("/r/{slug}.json")).await?;
    ensure!(current.body["version"] == 3, "a refused precondition changed nothing: {}", current.body);
    Ok(())
}

/// An API recipe is always CC0-1.0: a body naming another licence is refused by name, on a create
/// and on a change; naming CC0-1.0 (as a document read back does) is no problem.
pub async fn a_licence_in_the_body_is_refused_not_dropped(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "licensor").await?);
    let mut doc = recipe("Licensed Salad");
    doc["licence"] = json!("CC-BY-4.0");
    let refused = refused_naming("licence", api.create(&doc).await?)?;
    ensure!(
        refused.body["errors"][0]["reason"].as_str().unwrap_or_default().contains("CC0-1.0"),
        "{}",
        refused.body
    );

    doc["licence"] = json!("CC0-1.0");
    let created = api.create(&doc).await?;
    ensure!(created.status == 201 && created.body["licence"] == "CC0-1.0", "{}", created.text);
    let slug = slug_of(&created);
    doc["licence"] = json!("MIT");
    refused_naming("licence", api.change(&slug, &doc, "relicense", None).await?)?;
    // The document as read, server fields and licence included, goes back unchanged.
    let read = api.get(&format!("/r/{slug}.json")).await?;
    ensure!(api.change(&slug, &read.body, "same again", Some(1)).await?.status == 200, "round trip");
    Ok(())
}

/// Robustness of what a write reads: a key named twice, a charset other than UTF-8, quantities no
/// kitchen measures, and the bearer scheme in any case.
pub async fn duplicate_keys_charsets_tiny_quantities_and_bearer_case_are_handled(
    w: Arc<Worker>,
) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "robust").await?);
    let doc = recipe("Duplicate Salad").to_string();
    let twice = doc.replacen("\"gf\":1", "\"gf\":0,\"gf\":1", 1);
    ensure!(twice != doc, "the document names gf");
    let duplicate = api.create_raw("application/json", twice).await?;
    problem(&duplicate, 400)?;
    ensure!(
        duplicate.body["detail"].as_str().unwrap_or_default().contains("duplicate key `gf`"),
        "{}",
        duplicate.body
    );

    let latin1 = api.create_raw("application/json; charset=latin1", doc.clone()).await?;
    problem(&latin1, 415)?;
    let utf8 = api.create_raw("application/json; charset=UTF-8", doc.clone()).await?;
    ensure!(utf8.status == 201, "{}", utf8.text);

    for q in [json!(5e-324), json!(0.001), json!(1e6)] {
        let mut tiny = recipe("Tiny Salad");
        tiny["texts"]["en"]["ingredients"][0]["q"] = q.clone();
        refused_naming("texts.en.ingredients[0].q", api.create(&tiny).await?)
            .with_context(|| q.to_string())?;
    }

    for scheme in ["bearer", "BEARER", "bEaReR"] {
        let me = api
            .send(api.client.get(w.url("/api/me")).header("Authorization", format!("{scheme} {}", api.key)))
            .await?;
        ensure!(me.status == 200 && me.body["handle"] == "robust", "{scheme}: {}", me.text);
    }
    Ok(())
}
