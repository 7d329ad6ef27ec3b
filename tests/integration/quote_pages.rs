//! The quote service's pages as journalists and editors use them: over plain HTTP for what a page
//! says, and in a real headless Chromium for what it does (the player's second, a turn's link, the
//! chart) and for axe-core, which must find no violation on any page kind.

use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use reqwest::header::{COOKIE, LOCATION};
use serde_json::{Value, json};
use tests::Worker;
use tests::browser::Browser;
use tests::kitchen::{CONNECTING_IP, Kitchen, csrf_of};

const SOURDOUGH: &str = "https://commonplace.example/shows/kitchen-table/1-sourdough-slowly";
const ROOFTOP: &str = "https://commonplace.example/shows/kitchen-table/2-rooftop-tomatoes";
const JS_PARTY_299: &str = "https://changelog.com/jsparty/299";

fn enc(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn quote_path(source_url: Option<&str>, quote: &str) -> String {
    match source_url {
        Some(url) => format!("/quotes?quote={}&source_url={}", enc(quote), enc(url)),
        None => format!("/quotes?quote={}", enc(quote)),
    }
}

/// A page's HTML, which must answer 200 as HTML.
async fn html(w: &Worker, path: &str) -> Result<String> {
    let answer = reqwest::get(w.url(path)).await?;
    let status = answer.status();
    let kind = answer.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let body = answer.text().await?;
    ensure!(status == 200 && kind.starts_with("text/html"), "{path}: {status} {kind}: {body}");
    Ok(body)
}

async fn json_of(w: &Worker, path: &str) -> Result<Value> {
    let answer = reqwest::get(w.url(path)).await?;
    ensure!(answer.status() == 200, "{path}: {}", answer.status());
    Ok(answer.json().await?)
}

async fn episode_id(w: &Worker, source_url: &str) -> Result<String> {
    let answer = json_of(w, &format!("/api/attribute?source_url={}&quote=the", enc(source_url))).await?;
    Ok(answer["episode"]["id"].as_str().context("no episode id")?.to_string())
}

/// The text of a page without its markup (what a reader sees, roughly).
fn words_of(page: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out.replace("&#x27;", "'").replace("&quot;", "\"").replace("&amp;", "&").replace("&#x2f;", "/");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub async fn the_check_a_quote_form_answers_each_kind_of_quote(w: Arc<Worker>) -> Result<()> {
    // The home page leads to it, and the empty form is a GET form.
    let home = html(&w, "/").await?;
    ensure!(home.contains(r#"href="/quotes""#), "the home page does not lead to the quote service");
    let form = html(&w, "/quotes").await?;
    ensure!(form.contains(r#"method="get" action="/quotes""#) && !form.contains("id=\"answer\""), "{form}");

    // Exact: a confirmed name, `high`, the citation, the episode's licence and credit.
    let exact = words_of(
        &html(
            &w,
            &quote_path(
                Some(JS_PARTY_299),
                "I started in tech about 9-10 years ago, and self-taught developer",
            ),
        )
        .await?,
    );
    // Its time is estimated (no timed word there): the page and the citation say "about", and why.
    tests::ensure_says(
        "the exact answer",
        &exact,
        &[
            "Said by Valerie Phoenix",
            "Name: decided by an editor. Decided by Changelog transcript editors",
            "Trust: high.",
            "licence CC-BY-SA-4.0",
            "Changelog Media LLC",
            "Valerie Phoenix, “JS Party #299”, JS Party, 2026-02-18, at about 0:04:40.",
            "When: at about 0:04:40",
            "The transcript has no time at these words",
        ],
    )?;

    // Crossing speakers, and a changed word: `review`, with the reason in words.
    let crossing =
        words_of(&html(&w, &quote_path(Some(SOURDOUGH), "What do you feed it? Rye flour and water")).await?);
    ensure!(
        crossing.contains("Trust: review.")
            && crossing.contains("it crosses from one speaker to another")
            && crossing.contains("Said by Ana Lima, then Ben Okafor"),
        "{crossing}"
    );
    // A quote that starts a turn starts at a measured time, not said to be a guess.
    let measured = words_of(
        &html(&w, &quote_path(Some(SOURDOUGH), "Patience is the one thing nobody can sell you")).await?,
    );
    ensure!(
        measured.contains("When: at 0:") && !measured.contains("has no time at these words"),
        "{measured}"
    );
    let changed = words_of(
        &html(&w, &quote_path(Some(SOURDOUGH), "a slow doe at room temperature tastes better")).await?,
    );
    ensure!(
        changed.contains("not word for word (only 7 of the quote's 8 words matched)"),
        "a changed word is not counted as matched: {changed}"
    );

    // Edited the way print edits quotes: the pieces are found, and it says so.
    let edited = words_of(
        &html(
            &w,
            &quote_path(
                Some(SOURDOUGH),
                "Rye flour and water … The secret is patience, not some magic ingredient",
            ),
        )
        .await?,
    );
    ensure!(edited.contains("an edited quote"), "{edited}");

    // In context, the quote is marked in its turn.
    let marked = html(&w, &quote_path(Some(SOURDOUGH), "The secret is patience")).await?;
    ensure!(marked.contains("<mark>The secret is patience</mark>"), "the quote is not marked: {marked}");

    // Absent: not found, and the passages closest to it.
    let absent = words_of(
        &html(&w, &quote_path(Some(SOURDOUGH), "my grandmother said the secret is love and good butter"))
            .await?,
    );
    // Only the episode asked about was searched: the page says so, and offers every episode.
    ensure!(
        absent.contains("Not found")
            && absent.contains("The transcript of “Sourdough, slowly” does not have these words")
            && absent.contains("Only this episode was searched.")
            && absent.contains("Check this quote in every episode we hold")
            && absent.contains("The closest passages Passages of any episode we hold"),
        "{absent}"
    );
    let closest = &absent[absent.find("The closest passages").unwrap_or(0)..];
    ensure!(closest.contains("The secret is patience, not some magic ingredient"), "{closest}");

    // An address we do not hold, and one that is no address: said on the page, the form kept.
    let unknown = words_of(
        &html(&w, &quote_path(Some("https://example.org/podcast/ep1"), "open source is a gift")).await?,
    );
    ensure!(
        unknown.contains("We don't hold this episode yet") && unknown.contains("POST /api/episodes"),
        "{unknown}"
    );
    let broken = html(&w, &quote_path(Some("ftp://x"), "open source")).await?;
    ensure!(broken.contains("The episode&#x27;s address must be an http(s) URL with a host."), "{broken}");
    ensure!(broken.contains(r#"value="ftp:&#x2f;&#x2f;x""#), "the form lost what was typed: {broken}");

    // A shared link's extra parameters are left out; a field beyond its bounds is 400, and a
    // browser is told so on a page.
    let shared =
        html(&w, "/quotes?quote=The+secret+is+patience&utm_source=newsletter&fbclid=a&fbclid=b").await?;
    ensure!(words_of(&shared).contains("Said by Ben Okafor"), "{shared}");
    let long = format!("/quotes?quote={}", "a".repeat(2001));
    let refused = reqwest::Client::new().get(w.url(&long)).header("Accept", "text/html").send().await?;
    let kind =
        refused.headers().get("Content-Type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    ensure!(
        refused.status() == 400 && kind.starts_with("text/html"),
        "too long: {} {kind}",
        refused.status()
    );
    let said = words_of(&refused.text().await?);
    ensure!(said.contains("quote: is longer than 2000 characters."), "{said}");
    let api = reqwest::get(w.url("/api/attribute?quote=x&colour=red")).await?;
    ensure!(api.status() == 400, "the API takes an unknown parameter: {}", api.status());
    Ok(())
}

pub async fn the_answer_plays_from_the_quotes_second_and_its_link_opens_the_turn(
    w: Arc<Worker>,
) -> Result<()> {
    let quote = "Patience is the one thing nobody can sell you in a jar";
    let api =
        json_of(&w, &format!("/api/attribute?source_url={}&quote={}", enc(SOURDOUGH), enc(quote))).await?;
    let second = api["start_s"].as_f64().context("no start")?.floor();
    let browser = Browser::start().await?;
    browser.resize(390, 844).await?;
    browser.goto(&w.url(&quote_path(Some(SOURDOUGH), quote))).await?;
    let at = browser.execute("return document.getElementById('player').currentTime;").await?;
    ensure!(at.as_f64() == Some(second), "the player is at {at}, the quote at {second}");
    let source = browser.execute("return document.getElementById('player').getAttribute('src');").await?;
    ensure!(source.as_str().is_some_and(|s| s.ends_with(&format!("#t={second}"))), "{source}");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the answer page: {violations:?}");
    ensure!(narrow_enough(&browser).await?, "the answer is wider than a phone");
    // A Hebrew quote reads right to left in the form, inside the English page.
    browser.goto(&w.url(&quote_path(None, "הסוד הוא סבלנות"))).await?;
    let direction = browser
        .execute("return [getComputedStyle(document.getElementById('quote')).direction, document.documentElement.dir];")
        .await?;
    ensure!(direction == json!(["rtl", "ltr"]), "the Hebrew quote's direction: {direction}");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on a Hebrew quote: {violations:?}");
    // Not found, with the closest passages: the same.
    browser
        .goto(&w.url(&quote_path(Some(SOURDOUGH), "the secret is love and good butter, she said")))
        .await?;
    ensure!(browser.exists("#closest-h").await?, "no closest passages: {}", browser.source().await?);
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on a quote not found: {violations:?}");
    ensure!(narrow_enough(&browser).await?, "a quote not found is wider than a phone");
    browser
        .goto(&w.url(&quote_path(Some(SOURDOUGH), "Patience is the one thing nobody can sell you in a jar")))
        .await?;

    // The time links to the turn on the episode page, which opens there with its player at that second.
    browser.click("#at").await?;
    browser.wait_for(".turn:target").await?;
    let url = browser.current_url().await?;
    ensure!(url.ends_with(&format!("#t={second}")), "{url}");
    let target = browser
        .execute("const t = document.querySelector(':target'); const r = t.getBoundingClientRect(); return [t.id, r.top >= 0 && r.top < innerHeight, t.textContent];")
        .await?;
    ensure!(target[0] == format!("t={second}") && target[1] == true, "{target}");
    ensure!(target[2].as_str().unwrap_or_default().contains(quote), "{target}");
    let at = browser.execute("return document.getElementById('player').currentTime;").await?;
    ensure!(at.as_f64() == Some(second), "the episode's player is at {at}");

    // A quote inside a turn: its time links to its own second, and the episode page shows the turn
    // that holds it (Valerie's, from 0:04:33).
    let inside = "I started in tech about 9-10 years ago";
    browser.goto(&w.url(&quote_path(Some(JS_PARTY_299), inside))).await?;
    browser.click("#at").await?;
    browser.wait_for(".turn.target").await?;
    let url = browser.current_url().await?;
    ensure!(url.ends_with("#t=280"), "{url}");
    let shown = browser.execute("return document.querySelector('.turn.target').id;").await?;
    ensure!(shown == "t=273", "the turn shown: {shown}");
    Ok(())
}

/// Whether the page in `browser` fits its window's width (no sideways scrolling).
async fn narrow_enough(browser: &Browser) -> Result<bool> {
    let overflow =
        browser.execute("return document.documentElement.scrollWidth - window.innerWidth;").await?;
    Ok(overflow.as_i64().is_some_and(|px| px <= 0))
}

/// The rows of a comparison's word changes: each run's words.
const WORD_CHANGES: &str = "return [...document.querySelectorAll('tr.word-change')].map(r => [...r.cells].slice(1).map(c => c.textContent.trim()));";

pub async fn an_episode_page_charts_its_speakers_and_compares_its_runs(w: Arc<Worker>) -> Result<()> {
    let id = episode_id(&w, SOURDOUGH).await?;
    let browser = Browser::start().await?;
    browser.resize(390, 844).await?;
    browser.goto(&w.url(&format!("/episodes/{id}"))).await?;
    // What the chart shows (each bar's words and drawn length) is what /speakers says.
    let chart = browser
        .execute("return [...document.querySelectorAll('.chart li')].map(li => [li.dataset.speaker, li.querySelector('.bar-label').textContent, li.querySelector('rect').getBoundingClientRect().width]);")
        .await?;
    let stats = json_of(&w, &format!("/api/episodes/{id}/speakers")).await?;
    let speakers = stats["speakers"].as_array().context("no speakers")?;
    let bars = chart.as_array().context("no chart")?;
    ensure!(bars.len() == speakers.len(), "the chart {chart} is not /speakers {stats}");
    let longest = speakers.iter().filter_map(|s| s["seconds"].as_f64()).fold(0.0, f64::max);
    let widest = bars.iter().filter_map(|bar| bar[2].as_f64()).fold(0.0, f64::max);
    for (bar, s) in bars.iter().zip(speakers) {
        let seconds = s["seconds"].as_f64().context("seconds")?;
        let percent = format!("({}%)", (s["share"].as_f64().context("share")? * 100.0).round());
        let clock =
            format!("{}:{:02}:{:02}", seconds as u64 / 3600, seconds as u64 / 60 % 60, seconds as u64 % 60);
        let label = bar[1].as_str().unwrap_or_default();
        let drawn = bar[2].as_f64().unwrap_or_default() / widest;
        ensure!(
            bar[0] == s["speaker"] && label.contains(&percent) && label.contains(&clock),
            "the bar {bar} does not say {s}"
        );
        ensure!((drawn - seconds / longest).abs() < 0.01, "the bar {bar} is {drawn} long for {s}");
    }
    let turns = browser.execute("return document.querySelectorAll('.turn[id^=\"t=\"]').length;").await?;
    let transcript = json_of(&w, &format!("/api/episodes/{id}/transcript")).await?;
    // The whole transcript is the build's; one narrowed to all of it is made per request, alike.
    let made = json_of(&w, &format!("/api/episodes/{id}/transcript?from=0")).await?;
    ensure!(
        made["segments"] == transcript["segments"] && made["episode"] == transcript["episode"],
        "the built transcript {transcript} is not the one made per request {made}"
    );
    ensure!(
        turns == json!(transcript["segments"].as_array().map_or(0, Vec::len)),
        "turns with an anchor: {turns}"
    );
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the episode page: {violations:?}");
    ensure!(narrow_enough(&browser).await?, "the episode page is wider than a phone");

    // The form to compare two runs starts at the pair the link compares: the canonical run, then
    // the first other.
    let record = json_of(&w, &format!("/api/episodes/{id}")).await?;
    let canonical = record["canonical_run"].as_str().context("no canonical run")?;
    let mut pipelines =
        record["runs"].as_array().into_iter().flatten().filter_map(|run| run["pipeline"].as_str());
    let other = pipelines.find(|p| *p != canonical).context("one run only")?;
    let chosen = browser
        .execute("return ['a', 'b'].map(name => document.querySelector(`select[name=${name}]`).value);")
        .await?;
    ensure!(chosen == json!([canonical, other]), "the form's pair: {chosen}");

    // The two runs compared, by the episode page's link: Whisper's `Ana` where AssemblyAI heard
    // `Anna`, and the turn AssemblyAI gave to the guest where the canonical run has the host.
    browser.click(&format!("a[href=\"/episodes/{id}/compare\"]")).await?;
    browser.find("tr.word-change").await?;
    let words = browser.execute(WORD_CHANGES).await?;
    ensure!(
        words.as_array().is_some_and(|rows| rows.contains(&json!(["Ana", "Anna"]))),
        "word changes: {words}"
    );
    let turns = browser
        .execute("return [...document.querySelectorAll('tr.turn-change')].map(r => [...r.cells].map(c => c.textContent.trim()));")
        .await?;
    let rows = turns.as_array().context("no turn changes")?;
    ensure!(rows.len() == 1, "turn changes: {turns}");
    ensure!(
        rows[0][0] == "0:00:14"
            && rows[0][1].as_str().is_some_and(|c| c.starts_with("Ana Lima (SPEAKER_00"))
            && rows[0][2].as_str().is_some_and(|c| c.starts_with("B ("))
            && rows[0][3] == "7",
        "{turns}"
    );
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the comparison: {violations:?}");
    ensure!(narrow_enough(&browser).await?, "the comparison is wider than a phone");
    // The pair the other way round is not the one the build compared: the Worker compares it from
    // the record's runs, by the same code.
    browser.goto(&w.url(&format!("/episodes/{id}/compare?a={}&b={}", enc(other), enc(canonical)))).await?;
    let words = browser.execute(WORD_CHANGES).await?;
    ensure!(
        words.as_array().is_some_and(|rows| rows.contains(&json!(["Anna", "Ana"]))),
        "word changes the other way round: {words}"
    );

    // The show's page lists the episode; an unknown one is 404.
    browser.goto(&w.url("/shows/kitchen-table")).await?;
    let listed =
        browser.execute(&format!("return !!document.querySelector('a[href=\"/episodes/{id}\"]');")).await?;
    ensure!(listed == true, "the show page does not list the episode");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the show page: {violations:?}");
    for missing in
        ["/shows/no-such-show", "/episodes/ep_nosuchone", &format!("/episodes/{id}/compare?a=nope")]
    {
        let answer = reqwest::get(w.url(missing)).await?;
        ensure!(answer.status() == 404, "{missing}: {}", answer.status());
    }
    Ok(())
}

pub async fn the_search_page_finds_a_phrase_by_speaker_with_links_to_the_moment(
    w: Arc<Worker>,
) -> Result<()> {
    let page = html(&w, "/search?q=patience&speaker=Ben+Okafor").await?;
    let text = words_of(&page);
    ensure!(text.contains("The secret is patience"), "{text}");
    ensure!(!text.contains("Patience is the one thing"), "Ana's turn is listed under Ben: {text}");
    let id = episode_id(&w, SOURDOUGH).await?;
    let hits = json_of(&w, "/api/search?q=patience&speaker=Ben+Okafor").await?;
    let second = hits["hits"][0]["start_s"].as_f64().context("no hit")?.floor();
    let link = format!(r#"href="&#x2f;episodes&#x2f;{id}#t={second}""#);
    ensure!(page.contains(&link), "no link to the moment ({link}): {page}");
    let empty = words_of(&html(&w, "/search?q=%3F%3F%3F").await?);
    ensure!(empty.contains("The phrase has no words."), "{empty}");
    let browser = Browser::start().await?;
    browser.goto(&w.url("/search?q=open+source")).await?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the search page: {violations:?}");
    Ok(())
}

pub async fn an_editor_names_a_label_in_the_review_queue_and_the_answer_becomes_high(
    w: Arc<Worker>,
) -> Result<()> {
    let quote = "Cherry tomatoes and stubborn people";
    let attribute = format!("/api/attribute?source_url={}&quote={}", enc(ROOFTOP), enc(quote));
    let before = json_of(&w, &attribute).await?;
    ensure!(before["trust"] == "review" && before["name_state"] == "tentative", "{before}");

    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let anonymous = plain.get(w.url("/kitchen/review")).send().await?;
    ensure!(anonymous.status() == 303, "not signed in: {}", anonymous.status());
    let cook = Kitchen::sign_in(&w, "page-cook").await?;
    let refused = plain
        .get(w.url("/kitchen/review"))
        .header(COOKIE, &cook.session)
        .header(CONNECTING_IP, &cook.address)
        .send()
        .await?;
    ensure!(refused.status() == 403, "a cook opened the review queue: {}", refused.status());
    let as_page = plain
        .get(w.url("/kitchen/review"))
        .header(COOKIE, &cook.session)
        .header(CONNECTING_IP, &cook.address)
        .header("Accept", "text/html")
        .send()
        .await?;
    let said = words_of(&as_page.text().await?);
    ensure!(said.contains("editor"), "a cook's browser is not told why: {said}");
    let kitchen = |who: &Kitchen| {
        plain.get(w.url("/kitchen")).header(COOKIE, &who.session).header(CONNECTING_IP, &who.address).send()
    };
    let cooks = kitchen(&cook).await?.text().await?;
    ensure!(!cooks.contains(r#"href="/kitchen/review""#), "a cook's kitchen leads to the queue");
    let cook_posts = plain
        .post(w.url("/kitchen/review"))
        .header(COOKIE, &cook.session)
        .header(CONNECTING_IP, &cook.address)
        .form(&[
            ("csrf", csrf_of(&cooks)?),
            ("episode", episode_id(&w, ROOFTOP).await?),
            ("label", "speaker_1".into()),
            ("name", "Someone".into()),
        ])
        .send()
        .await?;
    ensure!(cook_posts.status() == 403, "a cook named a speaker: {}", cook_posts.status());
    let said = cook_posts.text().await?;
    ensure!(!said.contains("form class=\"review\""), "a cook's refusal shows the queue: {said}");

    let editor = Kitchen::sign_in(&w, "page-editor").await?;
    w.d1_execute("UPDATE accounts SET role = 'editor' WHERE handle = 'page-editor'")?;
    let editors = kitchen(&editor).await?.text().await?;
    ensure!(editors.contains(r#"href="/kitchen/review""#), "an editor's kitchen does not lead to the queue");
    let review = |path: &str| {
        plain.get(w.url(path)).header(COOKIE, &editor.session).header(CONNECTING_IP, &editor.address).send()
    };
    let queue = review("/kitchen/review").await?.text().await?;
    let text = words_of(&queue);
    tests::ensure_says(
        "the queue",
        &text,
        &[
            "speaker_1 in Tomatoes on a roof in Lisbon",
            "the guest is never named on air",
            "elimination: Inês Duarte",
        ],
    )?;
    ensure!(queue.contains(r#"<option value="Ben Okafor">"#), "no suggestion of the show's people: {queue}");
    let csrf = csrf_of(&queue)?;
    let id = episode_id(&w, ROOFTOP).await?;
    let post = |fields: Vec<(&'static str, String)>| {
        plain
            .post(w.url("/kitchen/review"))
            .header(COOKIE, &editor.session)
            .header(CONNECTING_IP, &editor.address)
            .form(&fields)
            .send()
    };
    let fields = vec![
        ("episode", id.clone()),
        ("label", "speaker_1".to_string()),
        ("confirm", "Inês Duarte".to_string()),
    ];
    let forged = post(fields.clone()).await?;
    ensure!(forged.status() == 403, "a form without its CSRF token: {}", forged.status());
    let said = words_of(&forged.text().await?);
    ensure!(said.contains("CSRF token is missing or stale"), "the refusal is not a page: {said}");
    // A name the API refuses: the queue again, the problem at its entry, what was typed kept.
    let long = "N".repeat(201);
    let refused = post(vec![
        ("episode", id.clone()),
        ("label", "speaker_1".to_string()),
        ("name", long.clone()),
        ("note", "she says so at 0:12".to_string()),
        ("csrf", csrf.clone()),
    ])
    .await?;
    ensure!(refused.status() == 422, "a name too long: {}", refused.status());
    let page = refused.text().await?;
    ensure!(
        words_of(&page).contains("Not saved: name: must be at most 200 characters")
            && page.contains(&format!(r#"value="{long}""#))
            && page.contains(r#"value="she says so at 0:12""#),
        "the refused form lost what was typed: {page}"
    );
    let elsewhere = post(vec![
        ("episode", id.clone()),
        ("label", "nobody".to_string()),
        ("name", "X".to_string()),
        ("csrf", csrf.clone()),
    ])
    .await?;
    ensure!(elsewhere.status() == 404, "an unknown label: {}", elsewhere.status());
    let said = words_of(&elsewhere.text().await?);
    ensure!(said.contains("Not saved:") && said.contains("(nobody in"), "{said}");
    let mut signed = fields.clone();
    signed.push(("csrf", csrf.clone()));
    let saved = post(signed).await?;
    ensure!(saved.status() == 303, "saving answered {}", saved.status());
    let back = saved.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    ensure!(back.starts_with("/kitchen/review?episode="), "{back}");
    let after = words_of(&review(&back).await?.text().await?);
    ensure!(
        after.contains("Saved: speaker_1 in") && after.contains("is now Inês Duarte (decided by an editor)"),
        "{after}"
    );
    ensure!(
        !after.contains("speaker_1 in Tomatoes on a roof in Lisbon"),
        "the decided label is still queued: {after}"
    );

    let answer = json_of(&w, &attribute).await?;
    ensure!(
        answer["trust"] == "high" && answer["name"] == "Inês Duarte" && answer["name_state"] == "human",
        "{answer}"
    );
    // The episode's page and whole transcript, which the build wrote before the decision, show it.
    let page = words_of(&html(&w, &format!("/episodes/{id}")).await?);
    ensure!(page.contains("decided by an editor"), "the episode page misses the decision: {page}");
    let whole = json_of(&w, &format!("/api/episodes/{id}/transcript")).await?;
    let turns: Vec<&Value> =
        whole["segments"].as_array().into_iter().flatten().filter(|s| s["speaker"] == "speaker_1").collect();
    ensure!(
        !turns.is_empty() && turns.iter().all(|s| s["name_state"] == "human" && s["name"] == "Inês Duarte"),
        "the whole transcript misses the decision: {whole}"
    );
    let changes = json_of(&w, "/api/episodes/changes?since=0&limit=100").await?;
    let recorded =
        changes["items"].as_array().into_iter().flatten().any(|c| {
            c["episode"] == id.as_str() && c["label"] == "speaker_1" && c["editor"] == "page-editor"
        });
    ensure!(recorded, "the decision feed does not name the editor: {changes}");

    // The queue in a browser, signed in: axe finds nothing.
    let browser = Browser::start().await?;
    browser.goto(&w.url("/kitchen")).await?;
    let token = editor.session.trim_start_matches("cp_session=");
    browser.add_cookie("cp_session", token).await?;
    browser.goto(&w.url("/kitchen/review")).await?;
    ensure!(browser.exists("form.review").await?, "the queue shows no form: {}", browser.source().await?);
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the review queue: {violations:?}");
    // Refused (a name longer than the API takes, sent past the field's own bound): the queue again,
    // the problem at its entry.
    browser
        .execute("const f = document.querySelector('form.review'); f.elements.name.value = 'N'.repeat(201); f.submit(); return true;")
        .await?;
    browser.wait_for("form.review .problem").await?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on a refused decision: {violations:?}");

    // The queue takes a session it saw allowed lately without asking D1; signed out, it is gone at
    // once all the same.
    let shown = review("/kitchen/review").await?;
    ensure!(shown.status() == 200, "the queue before signing out: {}", shown.status());
    let out = plain
        .post(w.url("/kitchen/logout"))
        .header(COOKIE, &editor.session)
        .header(CONNECTING_IP, &editor.address)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await?;
    ensure!(out.status() == 303, "signing out answered {}", out.status());
    let gone = review("/kitchen/review").await?;
    ensure!(gone.status() == 303, "the queue after signing out: {}", gone.status());
    Ok(())
}

/// A queue longer than its first part (200 entries), with all but ten of that part decided through
/// the API: the page still shows 25 labels, the other fifteen read from the next part, most cited
/// first, and counts the labels left.
pub async fn the_review_page_reads_the_queues_next_part_once_the_first_is_decided() -> Result<()> {
    let root = tests::root();
    let work = root.join(format!("tests/.work/review-parts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let content = work.join("content");
    let show = content.join("shows/kitchen-table");
    std::fs::create_dir_all(content.join("recipes"))?;
    std::fs::create_dir_all(&show)?;
    std::fs::copy(root.join("content/shows/kitchen-table/show.json"), show.join("show.json"))?;
    // 230 copies of the rooftop episode, whose guest no source names.
    let rooftop = root.join("content/shows/kitchen-table/rooftop-tomatoes");
    for n in 0..230 {
        let folder = show.join(format!("roof-{n:03}"));
        let copied = std::process::Command::new("cp").arg("-r").arg(&rooftop).arg(&folder).output()?;
        ensure!(copied.status.success(), "cp: {}", String::from_utf8_lossy(&copied.stderr));
        let path = folder.join("episode.json");
        let mut episode: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        episode["title"] = json!(format!("Roof {n:03}"));
        episode["source_url"] = json!(format!("https://commonplace.example/shows/kitchen-table/roof-{n:03}"));
        std::fs::write(&path, serde_json::to_string_pretty(&episode)?)?;
    }
    let w = tests::worker_on_content(&content, "127.0.0.1:9", &[("WRITES_PER_MINUTE", "1000")]).await?;
    let dist = work.join("dist");
    let head: Value = serde_json::from_slice(&std::fs::read(dist.join("episodes/review.json"))?)?;
    let next: Value = serde_json::from_slice(&std::fs::read(dist.join("episodes/review/1.json"))?)?;
    let (first, second) =
        (head["entries"].as_array().context("entries")?, next["entries"].as_array().context("entries")?);
    ensure!(head["total"] == 230 && first.len() == 200 && second.len() == 30, "{}", head["total"]);

    let editor = Kitchen::sign_in(&w, "parts-editor").await?;
    let key = editor.new_key("tests").await?;
    w.d1_execute("UPDATE accounts SET role = 'editor' WHERE handle = 'parts-editor'")?;
    let client = reqwest::Client::new();
    for chunk in first[10..].chunks(8) {
        let puts = chunk.iter().map(|entry| {
            let path = format!(
                "/api/episodes/{}/speakers/{}",
                entry["episode"].as_str().unwrap_or_default(),
                entry["label"].as_str().unwrap_or_default()
            );
            client.put(w.url(&path)).bearer_auth(&key).json(&json!({"name": "Inês Duarte"})).send()
        });
        for answered in futures::future::join_all(puts).await {
            let status = answered?.status();
            ensure!(status == 200, "a decision answered {status}");
        }
    }

    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    // Readers learn of decisions within a second; the page is the editor's, who sees them at once
    // only for the episode just saved, so it is asked until it has caught up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let page = loop {
        let page = plain
            .get(w.url("/kitchen/review"))
            .header(COOKIE, &editor.session)
            .header(CONNECTING_IP, &editor.address)
            .send()
            .await?
            .text()
            .await?;
        if page.contains("<p>40 to review.</p>") || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    ensure!(page.contains("<p>40 to review.</p>"), "not 230 less 190 decided: {}", words_of(&page));
    let shown: Vec<String> = page
        .split("<section class=\"entry\"")
        .skip(1)
        .filter_map(|section| section.split("<bdi>Roof ").nth(1).map(|rest| rest[..3].to_string()))
        .collect();
    let expected: Vec<String> = first[..10]
        .iter()
        .chain(&second[..15])
        .map(|entry| entry["title"].as_str().unwrap_or_default().trim_start_matches("Roof ").to_string())
        .collect();
    ensure!(shown == expected, "the page shows {shown:?}, not {expected:?}");
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
