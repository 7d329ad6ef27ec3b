//! Searching and writing with a large overlay, through the real Worker (`wrangler dev --local`: workerd,
//! SQLite-backed D1, local R2) over loopback HTTP: figures.
//!
//! 1. On a fresh state: search latency next to the no-IO request (`OPTIONS /api/recipes`), A B A B.
//! 2. BENCH_OVERLAY (default 10,000) recipes of about BENCH_DOC_KB (default 50) KiB written through
//!    `POST /api/recipes`, 8 at a time. Their words come from a made-up vocabulary, so the searches of
//!    step 1 (words of built recipes) match none of them, except `stir`, which every one of them has.
//! 3. The same searches again, side by side with the no-IO request, and `stir` (a word all overlay
//!    recipes hold: its cost grows with the matches, by design).
//! 4. An unrelated read (`/r/hummus.json`) alone, then while 4 connections run the searches of step 1,
//!    then while the same 4 connections send the no-IO request (the control).
//! 5. 100 concurrent creates of about 250 KiB: every answer must be 201 (no worker restart), then
//!    20 no-IO requests.
//! 6. A mixed load, 8 connections for BENCH_SECONDS (default 60): reads, pages, searches, creates,
//!    changes and the no-IO request, p50/p99 per route as ratios to the no-IO p50 of the same run.
//!
//! A 503 saying "Your worker restarted mid-request" comes from wrangler's dev proxy, not from the
//! Worker: the proxy answers so whenever its kept-alive connection to the Worker drops as a request
//! goes out (cloudflare/workers-sdk#14641: the Worker's isolate and its memory stay as they were).
//! Such a request never reached the Worker; it is sent again and counted as "dev proxy lost".
//!
//! BENCH_STATE=<dir> keeps the worker's state there: a second run with the same dir skips step 2, or
//! finishes it if the first run stopped half way.
//! `cargo bench -p tests --bench overlay`; figures go to BENCHMARKS.md.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use futures::future::join_all;
use futures::{StreamExt, TryStreamExt};
use reqwest::{Client, Method};
use serde_json::{Value, json};
use tests::kitchen::key_for;
use tests::{Config, Worker};

/// A small deterministic random source (xorshift), so every run writes the same recipes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Skewed towards small numbers, as word use is: a few words often, most rarely.
    fn skewed(&mut self, n: usize) -> usize {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((unit.powi(3) * n as f64) as usize).min(n - 1)
    }
}

/// Made-up words of two to four syllables: no built recipe has them.
fn vocabulary(n: usize) -> Vec<String> {
    const SYLLABLES: [&str; 24] = [
        "ka", "zo", "mi", "tru", "vel", "nax", "qui", "bor", "lem", "ptu", "sar", "wik", "dra", "fen", "gol",
        "hux", "jor", "kly", "mev", "nop", "rab", "sut", "vog", "yel",
    ];
    let mut rng = Rng(0x5eed);
    (0..n)
        .map(|_| {
            let parts = 2 + rng.below(3);
            (0..parts).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect::<String>()
        })
        .collect()
}

/// A recipe of about `kib` KiB: `steps` of made-up words, each also holding `stir`.
fn big_recipe(title: &str, kib: usize, words: &[String], rng: &mut Rng) -> Value {
    let n_steps = (kib * 1024).div_ceil(3_900).clamp(1, 60);
    let steps: Vec<Value> = (0..n_steps)
        .map(|_| {
            let mut text = String::from("Stir");
            while text.len() < 3_850.min(kib * 1024 / n_steps) {
                text.push(' ');
                text.push_str(&words[rng.skewed(words.len())]);
            }
            text.push('.');
            json!({"t": text})
        })
        .collect();
    json!({
        "emoji": "🍲", "course": "main", "difficulty": 2, "prep_min": 20, "cook_min": 40, "servings": 4,
        "gf": 0, "vegan": 0, "vegetarian": 1, "dairy_free": 0, "nut_free": 1,
        "texts": {"en": {
            "title": title, "summary": "A long made-up recipe for load tests.",
            "ingredients": [{"q": 2, "i": words[rng.below(words.len())].clone()}, {"q": 1, "u": "tsp", "i": "salt"}],
            "steps": steps, "tips": ""
        }}
    })
}

fn pick(times: &[Duration], q: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort();
    let idx = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[idx].as_secs_f64() * 1000.0
}

/// `p50 … ms p99 … ms` of `times`, as every line of this benchmark reports them.
fn p50_p99(times: &[Duration]) -> String {
    format!("p50 {:.2} ms p99 {:.2} ms", pick(times, 0.5), pick(times, 0.99))
}

/// Whether an answer is wrangler's dev proxy saying its connection to the Worker dropped (see the
/// module's docs); the Worker never saw that request.
fn dev_proxy_lost(status: u16, text: &str) -> bool {
    status == 503 && text.starts_with("Your worker restarted mid-request")
}

/// `rounds` timings of `target` while 4 connections send `load` (in turn) until it is done; and how
/// many load requests they sent.
async fn beside(
    client: &Client,
    target: &str,
    rounds: usize,
    load: &[(Method, String)],
) -> Result<(Vec<Duration>, usize)> {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = Arc::new(load.to_vec());
    let loops: Vec<_> = (0..4)
        .map(|task| {
            let (client, stop, load) = (client.clone(), stop.clone(), load.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let (method, url) = &load[(task + 4 * n) % load.len()];
                    timed(&client, method.clone(), url).await?;
                    n += 1;
                }
                Ok::<usize, anyhow::Error>(n)
            })
        })
        .collect();
    let mut times = Vec::new();
    for _ in 0..rounds {
        times.push(timed(client, Method::GET, target).await?);
    }
    stop.store(true, Ordering::Relaxed);
    let mut sent = 0;
    for n in join_all(loops).await {
        sent += n??;
    }
    Ok((times, sent))
}

/// `POST /api/recipes` with the bench's key.
async fn create(client: &Client, base: &str, key: &str, body: &Value) -> reqwest::Result<reqwest::Response> {
    client.post(format!("{base}/api/recipes")).bearer_auth(key).json(body).send().await
}

async fn timed(client: &Client, method: Method, url: &str) -> Result<Duration> {
    let at = Instant::now();
    let answer = client.request(method, url).send().await?;
    let status = answer.status();
    answer.bytes().await?;
    ensure!(status.is_success(), "{url} answered {status}");
    Ok(at.elapsed())
}

/// Each path in turn with the no-IO request between: p50/p99 of both and the ratio of the p50s.
async fn side_by_side(
    client: &Client,
    base: &str,
    label: &str,
    paths: &[String],
    rounds: usize,
) -> Result<()> {
    let (mut noio, mut reads) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        noio.push(timed(client, Method::OPTIONS, &format!("{base}/api/recipes")).await?);
        reads.push(timed(client, Method::GET, &format!("{base}{}", paths[round % paths.len()])).await?);
    }
    println!(
        "{label}: {}; no-IO {}; p50 ratio {:.2}×",
        p50_p99(&reads),
        p50_p99(&noio),
        pick(&reads, 0.5) / pick(&noio, 0.5)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let n_overlay: usize = std::env::var("BENCH_OVERLAY").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let doc_kib: usize = std::env::var("BENCH_DOC_KB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let state = std::env::var("BENCH_STATE").ok().map(PathBuf::from);
    let filled_marker = state.as_ref().map(|dir| dir.join(format!("overlay-{n_overlay}-{doc_kib}.done")));
    let filled = filled_marker.as_ref().is_some_and(|marker| marker.exists());
    let w = Worker::start_with(Config {
        vars: vec![("WRITES_PER_MINUTE".into(), "1000000".into())],
        state: state.clone(),
        ..Config::default()
    })
    .await?;
    let base = w.base.clone();
    let client = Client::builder().pool_max_idle_per_host(16).timeout(Duration::from_secs(300)).build()?;
    let key = Arc::new(key_for(&w, "overlay-bench").await?);

    let slugs: Vec<(String, u64)> =
        serde_json::from_slice(&std::fs::read(tests::root().join("dist/slugs.json"))?)?;
    let searches: Vec<String> = slugs
        .iter()
        .flat_map(|(slug, _)| slug.split('-').map(str::to_string).collect::<Vec<_>>())
        .filter(|word| word.len() > 3 && !word.chars().all(|c| c.is_ascii_digit()))
        .map(|word| format!("/api/recipes?q={word}"))
        .collect();
    let rounds = 400;
    for _ in 0..50 {
        timed(&client, Method::GET, &format!("{base}{}", searches[0])).await?;
    }
    if !filled {
        side_by_side(&client, &base, "fresh: search", &searches, rounds).await?;
    }

    // 2. The overlay.
    let words = Arc::new(vocabulary(20_000));
    if !filled {
        let started = Instant::now();
        // A fill an earlier run of the same BENCH_STATE left unfinished goes on where it stopped.
        let held: Value =
            client.get(format!("{base}/api/recipes?q=overlay&limit=1")).send().await?.json().await?;
        let held = held["total"].as_u64().unwrap_or(0) as usize;
        if held > 0 {
            eprintln!("{held} overlay recipes already written; going on from there");
        }
        let next = Arc::new(AtomicUsize::new(held));
        let lost = Arc::new(AtomicUsize::new(0));
        let tasks = (0..8).map(|task| {
            let (client, key, base, next, words, lost) =
                (client.clone(), key.clone(), base.clone(), next.clone(), words.clone(), lost.clone());
            tokio::spawn(async move {
                let mut rng = Rng(0x9e37_79b9 + task as u64);
                loop {
                    let idx = next.fetch_add(1, Ordering::Relaxed);
                    if idx >= n_overlay {
                        return Ok::<_, anyhow::Error>(());
                    }
                    let body = big_recipe(&format!("Overlay dish {idx}"), doc_kib, &words, &mut rng);
                    loop {
                        let sent = create(&client, &base, &key, &body).await;
                        // A kept-alive connection the server closed as the request went out: send again.
                        let Ok(answer) = sent else {
                            eprintln!(
                                "create {idx}: {}; sent again",
                                sent.err().map(|e| e.to_string()).unwrap_or_default()
                            );
                            continue;
                        };
                        let status = answer.status();
                        let text = answer.text().await?;
                        if dev_proxy_lost(status.as_u16(), &text) {
                            lost.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        ensure!(status == 201, "create {idx} answered {status}: {text}");
                        break;
                    }
                    if idx % 1000 == 999 {
                        eprintln!(
                            "{} overlay recipes after {:.0} s",
                            idx + 1,
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
            })
        });
        for result in join_all(tasks).await {
            result??;
        }
        println!(
            "wrote {n_overlay} overlay recipes of ~{doc_kib} KiB in {:.0} s ({} sent again: dev proxy lost)",
            started.elapsed().as_secs_f64(),
            lost.load(Ordering::Relaxed)
        );
        if let Some(marker) = &filled_marker {
            std::fs::write(marker, "")?;
        }
    }
    let listed: Value = client.get(format!("{base}/api/recipes?limit=1")).send().await?.json().await?;
    println!("the listing counts {} recipes", listed["total"]);

    // 3. The same searches, and one that matches every overlay recipe.
    for _ in 0..50 {
        timed(&client, Method::GET, &format!("{base}{}", searches[0])).await?;
    }
    side_by_side(&client, &base, &format!("{n_overlay} overlay: search"), &searches, rounds).await?;
    // With filters every overlay recipe passes, the overlay reads them as facet keys.
    let filters = "vegetarian=1&course=main&max_min=90";
    for (what, path, n_rounds) in [
        ("q=stir (matches all)", "/api/recipes?q=stir".to_string(), 40),
        ("listing", "/api/recipes?limit=20".to_string(), rounds),
        ("q=stir, filtered (matches all)", format!("/api/recipes?q=stir&{filters}"), 40),
        ("listing, filtered", format!("/api/recipes?{filters}&limit=20"), rounds),
    ] {
        side_by_side(&client, &base, &format!("{n_overlay} overlay: {what}"), &[path], n_rounds).await?;
    }

    // 4. An unrelated read, alone and beside searches in flight.
    let hummus = format!("{base}/r/hummus.json");
    let mut alone = Vec::new();
    for _ in 0..rounds {
        alone.push(timed(&client, Method::GET, &hummus).await?);
    }
    let search_urls: Vec<(Method, String)> =
        searches.iter().map(|path| (Method::GET, format!("{base}{path}"))).collect();
    let (beside_searches, searched) = beside(&client, &hummus, rounds, &search_urls).await?;
    // The control: the same 4 connections busy with the no-IO request, so what remains is the cost of
    // sharing one local isolate, whatever the neighbours do.
    let noio_urls = vec![(Method::OPTIONS, format!("{base}/api/recipes"))];
    let (beside_noio, _) = beside(&client, &hummus, rounds, &noio_urls).await?;
    println!(
        "/r/hummus.json alone {}; beside 4 searches in flight ({searched} done) {}; beside 4 no-IO loops {}",
        p50_p99(&alone),
        p50_p99(&beside_searches),
        p50_p99(&beside_noio)
    );

    // 5. 100 concurrent creates of ~250 KiB.
    let mut rng = Rng(0xb16);
    let bodies: Vec<Value> = (0..100)
        .map(|n| big_recipe(&format!("Big dish {} {n}", std::process::id()), 235, &words, &mut rng))
        .collect();
    let size = serde_json::to_vec(&bodies[0])?.len();
    let started = Instant::now();
    let statuses: Vec<u16> = futures::stream::iter(bodies)
        .map(|body| {
            let (client, key, base) = (client.clone(), key.clone(), base.clone());
            async move {
                let answer = create(&client, &base, &key, &body).await?;
                let status = answer.status().as_u16();
                let text = answer.text().await?;
                if dev_proxy_lost(status, &text) {
                    return Ok::<u16, anyhow::Error>(0);
                }
                if status != 201 {
                    eprintln!("{status}: {}", text.chars().take(300).collect::<String>());
                }
                Ok(status)
            }
        })
        .buffer_unordered(100)
        .try_collect()
        .await?;
    let mut by_status: BTreeMap<u16, usize> = BTreeMap::new();
    for status in statuses {
        *by_status.entry(status).or_default() += 1;
    }
    println!(
        "100 concurrent creates of {} KiB: {by_status:?} in {:.1} s (0: dev proxy lost)",
        size / 1024,
        started.elapsed().as_secs_f64()
    );
    let mut after: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..20 {
        let answer = client.request(Method::OPTIONS, format!("{base}/api/recipes")).send().await?;
        let status = answer.status().as_u16();
        let text = answer.text().await?;
        let seen =
            if dev_proxy_lost(status, &text) { "dev proxy lost".to_string() } else { status.to_string() };
        *after.entry(seen).or_default() += 1;
    }
    println!("then 20 no-IO requests: {after:?}");

    // 6. Mixed load.
    mixed(&client, &base, &key, &slugs, &searches, &words, seconds).await?;
    if state.is_some() {
        w.stop_keeping_state();
    }
    Ok(())
}

/// 8 connections for `seconds`, each request drawn from a fixed mix of routes.
async fn mixed(
    client: &Client,
    base: &str,
    key: &Arc<String>,
    slugs: &[(String, u64)],
    searches: &[String],
    words: &Arc<Vec<String>>,
    seconds: u64,
) -> Result<()> {
    // (route, share in 100)
    const MIX: [(&str, usize); 6] = [
        ("no-IO", 10),
        ("recipe-json", 35),
        ("recipe-page", 15),
        ("search", 30),
        ("create", 5),
        ("change", 5),
    ];
    let slugs = Arc::new(slugs.iter().map(|(slug, _)| slug.clone()).collect::<Vec<_>>());
    let searches = Arc::new(searches.to_vec());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let tasks = (0..8).map(|task| {
        let (client, base, key, slugs, searches, words) =
            (client.clone(), base.to_string(), key.clone(), slugs.clone(), searches.clone(), words.clone());
        tokio::spawn(async move {
            let mut rng = Rng(0xfeed + task as u64);
            let mut times: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
            let mut own: Option<(String, u64)> = None;
            let mut n = 0usize;
            let mut lost = 0usize;
            while Instant::now() < deadline {
                n += 1;
                let mut roll = rng.below(100);
                let route = MIX
                    .iter()
                    .find(|(_, share)| {
                        roll < *share || {
                            roll -= share;
                            false
                        }
                    })
                    .map_or("no-IO", |r| r.0);
                let at = Instant::now();
                let (status, expected) = match route {
                    "no-IO" => {
                        let answer =
                            client.request(Method::OPTIONS, format!("{base}/api/recipes")).send().await?;
                        let status = answer.status();
                        if dev_proxy_lost(status.as_u16(), &answer.text().await?) {
                            lost += 1;
                            continue;
                        }
                        (status, 204)
                    }
                    "recipe-json" => {
                        let slug = &slugs[rng.below(slugs.len())];
                        (client.get(format!("{base}/r/{slug}.json")).send().await?.status(), 200)
                    }
                    "recipe-page" => {
                        let slug = &slugs[rng.below(slugs.len())];
                        (client.get(format!("{base}/r/{slug}")).send().await?.status(), 200)
                    }
                    "search" => {
                        let path = &searches[rng.below(searches.len())];
                        (client.get(format!("{base}{path}")).send().await?.status(), 200)
                    }
                    "create" | "change" if own.is_none() || route == "create" => {
                        let body = big_recipe(
                            &format!("Mixed dish {} {task} {n}", std::process::id()),
                            50,
                            &words,
                            &mut rng,
                        );
                        let answer = create(&client, &base, &key, &body).await?;
                        let status = answer.status();
                        let text = answer.text().await?;
                        if dev_proxy_lost(status.as_u16(), &text) {
                            lost += 1;
                            continue;
                        }
                        let created: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        if let Some(slug) = created["slug"].as_str() {
                            own = Some((slug.to_string(), 1));
                        }
                        times.entry(route).or_default().push(at.elapsed());
                        ensure!(status == 201, "create answered {status}");
                        continue;
                    }
                    _ => {
                        let (slug, version) = own.clone().expect("created above");
                        let mut body = big_recipe(
                            &format!("Mixed dish {} {task} {n}", std::process::id()),
                            50,
                            &words,
                            &mut rng,
                        );
                        body["note"] = json!("Mixed load");
                        let answer = client
                            .put(format!("{base}/api/r/{slug}"))
                            .bearer_auth(key.as_str())
                            .header("If-Match", format!("\"{version}\""))
                            .json(&body)
                            .send()
                            .await?;
                        let status = answer.status();
                        if dev_proxy_lost(status.as_u16(), &answer.text().await?) {
                            lost += 1;
                            continue;
                        }
                        own = Some((slug, version + 1));
                        (status, 200)
                    }
                };
                times.entry(route).or_default().push(at.elapsed());
                ensure!(status.as_u16() == expected, "{route} answered {status}");
            }
            Ok::<_, anyhow::Error>((times, lost))
        })
    });
    let mut all: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
    let mut lost = 0;
    for result in join_all(tasks).await {
        let (times, task_lost) = result??;
        lost += task_lost;
        for (route, times) in times {
            all.entry(route).or_default().extend(times);
        }
    }
    let noio = pick(&all["no-IO"], 0.5);
    let total: usize = all.values().map(Vec::len).sum();
    println!(
        "mixed load, 8 connections, {seconds} s: {total} requests, {:.0}/s ({lost} dev proxy lost)",
        total as f64 / seconds as f64
    );
    for (route, times) in &all {
        println!(
            "  {route:12} n={:6} p50 {:7.2} ms ({:5.2}×) p99 {:7.2} ms ({:6.2}×)",
            times.len(),
            pick(times, 0.5),
            pick(times, 0.5) / noio,
            pick(times, 0.99),
            pick(times, 0.99) / noio
        );
    }
    Ok(())
}
