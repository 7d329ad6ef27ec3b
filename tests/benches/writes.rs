//! Write latency through the real Worker (`wrangler dev --local`: workerd + SQLite-backed D1) over
//! loopback HTTP: `POST /api/recipes` (create) and `PUT /api/r/{slug}` (change with `If-Match`).
//!
//! Creates: BENCH_CREATES requests (default 1000), each a new title, BENCH_CONCURRENCY (default 8) in
//! flight. Changes: one recipe per connection, each changed in turn with the version it last got, so
//! no change loses a race (the race itself is an integration test). Every answer must be 201/200.
//! The write limit is raised for the run (`WRITES_PER_MINUTE`), since one key does all the writes.
//!
//! `cargo bench -p tests --bench writes`; figures go to BENCHMARKS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use futures::future::join_all;
use serde_json::json;
use tests::fixtures::recipe;
use tests::kitchen::key_for;
use tests::{Config, Worker};

/// Sends one request and reads its whole answer: how long that took, and the status.
async fn timed(request: reqwest::RequestBuilder) -> Result<(Duration, reqwest::StatusCode)> {
    let at = Instant::now();
    let answer = request.send().await?;
    let status = answer.status();
    answer.bytes().await?;
    Ok((at.elapsed(), status))
}

/// Every task's times, or the first failure.
async fn gathered(
    tasks: impl Iterator<Item = tokio::task::JoinHandle<Result<Vec<Duration>>>>,
) -> Result<Vec<Duration>> {
    let mut times = Vec::new();
    for task in join_all(tasks).await {
        times.extend(task??);
    }
    Ok(times)
}

fn report(what: &str, mut times: Vec<Duration>, wall: Duration) {
    let summary = tests::latency_summary(&mut times);
    println!("{what}: {summary} throughput={:.0}/s", times.len() as f64 / wall.as_secs_f64());
}

#[tokio::main]
async fn main() -> Result<()> {
    let n: usize = std::env::var("BENCH_CREATES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let concurrency: usize =
        std::env::var("BENCH_CONCURRENCY").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let worker = Worker::start_with(Config {
        vars: vec![("WRITES_PER_MINUTE".into(), "1000000".into())],
        ..Config::default()
    })
    .await?;
    let key = Arc::new(key_for(&worker, "bencher").await?);
    let client = reqwest::Client::new();
    let base = Arc::new(worker.base.clone());

    // Creates: `concurrency` workers share a counter of titles.
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let tasks = (0..concurrency).map(|_| {
        let (client, key, base, next) = (client.clone(), key.clone(), base.clone(), next.clone());
        tokio::spawn(async move {
            let mut times = Vec::new();
            loop {
                let idx = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if idx >= n {
                    break;
                }
                let body = recipe(&format!("Bench salad number {idx}"));
                let request =
                    client.post(format!("{base}/api/recipes")).bearer_auth(key.as_str()).json(&body);
                let (took, status) = timed(request).await?;
                times.push(took);
                ensure!(status == 201, "create answered {status}");
            }
            Ok::<_, anyhow::Error>(times)
        })
    });
    report("create", gathered(tasks).await?, started.elapsed());

    // Changes: each worker changes its own recipe `n / concurrency` times.
    let per_worker = n / concurrency;
    let started = Instant::now();
    let tasks = (0..concurrency).map(|worker_idx| {
        let (client, key, base) = (client.clone(), key.clone(), base.clone());
        tokio::spawn(async move {
            let slug = format!("bench-salad-number-{worker_idx}");
            let mut times = Vec::new();
            for version in 1..=per_worker as u64 {
                let mut body = recipe(&format!("Bench salad number {worker_idx}"));
                body["note"] = json!(format!("Change {version}"));
                let request = client
                    .put(format!("{base}/api/r/{slug}"))
                    .bearer_auth(key.as_str())
                    .header("If-Match", format!("\"{version}\""))
                    .json(&body);
                let (took, status) = timed(request).await?;
                times.push(took);
                ensure!(status == 200, "change of {slug} v{version} answered {status}");
            }
            Ok::<_, anyhow::Error>(times)
        })
    });
    report("change", gathered(tasks).await?, started.elapsed());
    Ok(())
}
