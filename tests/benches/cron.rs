//! The cron over many followed feeds, through the real Worker (`wrangler dev --local`: workerd, the
//! local queue, D1 and R2): BENCH_FEEDS shows (default 1,000), each following its own feed on a
//! scripted host on loopback.
//!
//! Round one reads every feed for the first time (200, no items yet) and keeps its `ETag`. Round two
//! is the steady state: every feed is read conditionally, BENCH_CHANGED of them (default 10) have a
//! new episode with a publisher transcript and answer 200, the others 304. For each round: the wall
//! time from `GET /__scheduled` until every feed was read (and, in round two, every new episode is
//! `ready`), the feed reads the host answered, and the queue messages sent. The no-IO request
//! (`OPTIONS /api/recipes`) is timed in the same run.
//!
//! `cargo bench -p tests --bench cron`; figures go to BENCHMARKS.md ("Intake").

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use tests::Worker;
use tests::scripted::{Listener, podcast_feed, respond, serve_requests};

/// What the scripted host saw.
#[derive(Default)]
struct Seen {
    /// Round two has begun: the changed feeds have a new episode and a new `ETag`.
    changed: AtomicBool,
    reads: AtomicUsize,
    not_modified: AtomicUsize,
}

/// `/f/{n}.xml` for each feed, `/f/{n}/ep` and `/f/{n}/t.vtt` for a changed feed's new episode.
async fn feed_host(changed: usize, seen: Arc<Seen>) -> Result<Listener> {
    serve_requests(seen, move |seen, request, mut stream| async move {
        let host = request.host();
        let path = request.path.clone();
        if let Some(n) = path.strip_prefix("/f/").and_then(|rest| rest.strip_suffix(".xml")) {
            seen.reads.fetch_add(1, Ordering::SeqCst);
            let n: usize = n.parse().unwrap_or(usize::MAX);
            let news = seen.changed.load(Ordering::SeqCst) && n < changed;
            let etag = if news { "\"two\"" } else { "\"one\"" };
            if request.headers.get("if-none-match").map(String::as_str) == Some(etag) {
                seen.not_modified.fetch_add(1, Ordering::SeqCst);
                let _ = respond(&mut stream, "304 Not Modified", &[("ETag", etag)], "").await;
                return;
            }
            let mut channel = format!(
                "<title>Show {n}</title><link>http://{host}/f/{n}/</link>\
                 <podcast:license>CC-BY-4.0</podcast:license>"
            );
            if news {
                let _ = write!(
                    channel,
                    "<item><title>News {n}</title><link>http://{host}/f/{n}/ep</link><guid>news-{n}</guid>\
                     <pubDate>Mon, 23 Nov 2026 06:00:00 +0000</pubDate>\
                     <podcast:transcript url=\"/f/{n}/t.vtt\" type=\"text/vtt\"/></item>"
                );
            }
            let feed = podcast_feed("", &channel);
            let headers = [("Content-Type", "application/rss+xml"), ("ETag", etag)];
            let _ = respond(&mut stream, "200 OK", &headers, &feed).await;
        } else if path.ends_with("/t.vtt") {
            let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:05.000\n<v Rosa Quint>The ferry runs again.\n";
            let _ = respond(&mut stream, "200 OK", &[("Content-Type", "text/vtt")], vtt).await;
        } else {
            let _ = respond(&mut stream, "404 Not Found", &[], "").await;
        }
    })
    .await
}

fn count(worker: &Worker, sql: &str) -> Result<u64> {
    let rows = worker.d1_query(sql)?;
    Ok(rows.first().and_then(|row| row["n"].as_u64()).unwrap_or(0))
}

/// Waits until `done` holds, looking every half second; the time it took.
async fn until(start: Instant, what: &str, mut done: impl FnMut() -> Result<bool>) -> Result<Duration> {
    while !done()? {
        ensure!(start.elapsed() < Duration::from_secs(900), "{what} did not happen in 15 minutes");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(start.elapsed())
}

#[tokio::main]
async fn main() -> Result<()> {
    let feeds: usize = std::env::var("BENCH_FEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let changed: usize = std::env::var("BENCH_CHANGED").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let seen = Arc::new(Seen::default());
    let host = feed_host(changed, seen.clone()).await?;

    let work = tests::root().join(format!("tests/.work/bench-cron-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let content = work.join("content");
    std::fs::create_dir_all(content.join("recipes"))?;
    for n in 0..feeds {
        let show = content.join(format!("shows/show-{n:04}"));
        std::fs::create_dir_all(&show)?;
        let record = serde_json::json!({
            "title": format!("Show {n}"), "licence": "CC-BY-4.0",
            "feed_url": format!("http://{}/f/{n}.xml", host.addr),
        });
        std::fs::write(show.join("show.json"), record.to_string())?;
    }
    let worker = tests::worker_on_content(&content, &host.addr.to_string(), &[]).await?;
    let client = reqwest::Client::new();
    let mut noio = Vec::new();
    for _ in 0..20 {
        let at = Instant::now();
        client.request(reqwest::Method::OPTIONS, worker.url("/api/recipes")).send().await?.bytes().await?;
        noio.push(at.elapsed());
    }
    noio.sort();
    let base_ms = noio[noio.len() / 2].as_secs_f64() * 1000.0;

    // Round one: every feed read for the first time.
    let start = Instant::now();
    let cron = client.get(worker.url("/__scheduled")).send().await?;
    ensure!(cron.status().is_success(), "the cron: {}", cron.status());
    let first =
        until(start, "every feed read once", || Ok(seen.reads.load(Ordering::SeqCst) >= feeds)).await?;
    let kept = until(start, "every feed's validators kept", || {
        Ok(count(&worker, "SELECT COUNT(*) AS n FROM followed_feeds WHERE etag IS NOT NULL")? >= feeds as u64)
    })
    .await?;
    let reads_one = seen.reads.load(Ordering::SeqCst);

    // Round two: conditional reads; the changed feeds' new episodes come in.
    seen.changed.store(true, Ordering::SeqCst);
    let start = Instant::now();
    client.get(worker.url("/__scheduled")).send().await?;
    let second =
        until(start, "every feed read again", || Ok(seen.reads.load(Ordering::SeqCst) >= reads_one + feeds))
            .await?;
    let ready = until(start, "the new episodes ready", || {
        Ok(count(&worker, "SELECT COUNT(*) AS n FROM intake_jobs WHERE state = 'ready'")? >= changed as u64)
    })
    .await?;
    let jobs = count(&worker, "SELECT COUNT(*) AS n FROM intake_jobs")?;
    let not_modified = seen.not_modified.load(Ordering::SeqCst);
    let reads_two = seen.reads.load(Ordering::SeqCst) - reads_one;

    println!("no-IO request (OPTIONS /api/recipes): p50 {base_ms:.1} ms");
    println!(
        "round one ({feeds} feeds, first reads): every feed read in {:.1} s, validators kept in {:.1} s; \
         {reads_one} feed reads, {feeds} queue messages",
        first.as_secs_f64(),
        kept.as_secs_f64()
    );
    println!(
        "round two ({feeds} feeds, {changed} changed): every feed read in {:.1} s, the {changed} new \
         episodes ready in {:.1} s; {reads_two} feed reads, {not_modified} answered 304, {jobs} jobs; \
         {} queue messages ({feeds} feeds + {jobs} jobs)",
        second.as_secs_f64(),
        ready.as_secs_f64(),
        feeds as u64 + jobs
    );
    println!(
        "per invocation: the cron reads shows.json once and sends {} batches of at most 100 messages; \
         a feed's message makes 1 fetch (the feed), and a changed feed's also reads episodes/by-url.json \
         and sends 1 batch of its new jobs",
        feeds.div_ceil(100)
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
