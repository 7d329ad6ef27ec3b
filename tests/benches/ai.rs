//! The edge's own time per AI request, upstream excluded, and upstream calls per diet version under
//! concurrency, through the real Worker (`wrangler dev --local`) with the scripted chat service
//! (`tests::openai`) answering at once — so a request's time is the Worker's work (auth, quota,
//! prompt, validation, rules, D1 writes) plus loopback, not a model's.
//!
//! `cargo bench -p tests --bench ai`; BENCH_AI_WRITES (default 300) AI writes one after another,
//! BENCH_AI_VERSIONS (default 10) recipes each asked for `both` by 20 concurrent callers.
//! Figures go to BENCHMARKS.md.

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use futures::future::join_all;
use serde_json::{Value, json};
use tests::kitchen::key_for;
use tests::openai::{Reply, ScriptedAi};
use tests::{Config, Worker};

fn doc(title: &str, ingredients: &[&str], flags: u8) -> Value {
    let ingredients: Vec<Value> = ingredients.iter().map(|i| json!({"q": 1, "i": i})).collect();
    json!({
        "emoji": "🍞", "course": "breakfast", "difficulty": 1, "prep_min": 5, "cook_min": 5, "servings": 2,
        "gf": flags, "vegan": flags, "vegetarian": 1, "dairy_free": flags, "nut_free": 1,
        "texts": {"en": {"title": title, "summary": "Quick.", "ingredients": ingredients,
                         "steps": [{"t": "Toast and spread.", "min": 3, "f": ["hot"]}], "tips": ""}}
    })
}

fn report(what: &str, mut times: Vec<Duration>) {
    println!("{what}: {}", tests::latency_summary(&mut times));
}

#[tokio::main]
async fn main() -> Result<()> {
    let env =
        |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (n_writes, n_versions) = (env("BENCH_AI_WRITES", 300), env("BENCH_AI_VERSIONS", 10));
    let ai = ScriptedAi::start().await?;
    let vars = ai.worker_vars(&[("AI_PER_HOUR", "1000000"), ("WRITES_PER_MINUTE", "1000000")]);
    let worker = Worker::start_with(Config { vars, ..Config::default() }).await?;
    let key = key_for(&worker, "ai-bencher").await?;
    let client = reqwest::Client::new();
    ai.on("[bench]", vec![Reply::Json(doc("Bench Toast", &["gluten-free bread", "olive oil"], 1))]);

    // Warm-up: the isolate's first request loads slugs.json and compiles the Worker.
    let ai_write = || {
        client
            .post(worker.url("/api/ai/write"))
            .bearer_auth(&key)
            .json(&json!({"prompt": "toast [bench]", "lang": "en"}))
    };
    for _ in 0..5 {
        let answer = ai_write().send().await?;
        ensure!(answer.status() == 201, "warm-up answered {}", answer.status());
    }
    let mut times = Vec::with_capacity(n_writes);
    for _ in 0..n_writes {
        let started = Instant::now();
        let answer = ai_write().send().await?;
        let status = answer.status();
        answer.bytes().await?;
        times.push(started.elapsed());
        ensure!(status == 201, "AI write answered {status}");
    }
    report("POST /api/ai/write (upstream answers at once)", times);

    let mut calls = Vec::new();
    let mut times = Vec::new();
    for n in 0..n_versions {
        let title = format!("Buttered Bench Toast {n}");
        let created = client
            .post(worker.url("/api/recipes"))
            .bearer_auth(&key)
            .json(&doc(&title, &["bread", "butter"], 0))
            .send()
            .await?
            .json::<Value>()
            .await?;
        let slug = created["slug"].as_str().unwrap_or_default().to_string();
        let version = doc(&format!("{title} (gf, vegan)"), &["gluten-free bread", "plant butter"], 1);
        ai.on(&title, vec![Reply::Json(version)]);
        let requests = (0..20).map(|_| {
            let (client, url, key) =
                (client.clone(), worker.url(&format!("/api/r/{slug}/variant/both")), key.clone());
            async move {
                let started = Instant::now();
                let answer = client.post(url).bearer_auth(key).send().await?;
                let status = answer.status().as_u16();
                answer.bytes().await?;
                Ok::<_, anyhow::Error>((status, started.elapsed()))
            }
        });
        let answers: Vec<(u16, Duration)> = join_all(requests).await.into_iter().collect::<Result<_>>()?;
        ensure!(answers.iter().filter(|(s, _)| *s == 201).count() == 1, "{answers:?}");
        times.extend(answers.iter().map(|(_, t)| *t));
        calls.push(ai.calls(&title));
    }
    report("POST /api/r/{slug}/variant/both, 20 concurrent, first time", times);
    println!("upstream calls per diet version (20 concurrent callers each): {calls:?}");
    Ok(())
}
