//! Our own time from `POST /api/episodes` to `ready`, through the real Worker (`wrangler dev --local`:
//! workerd, the local queue, D1 and R2), for one-hour episodes whose publisher transcripts a scripted
//! host on loopback serves at once (so the publisher's time is excluded, as the issue asks).
//!
//! A scripted publisher serves a feed of BENCH_EPISODES items (default 30), each with its page (which
//! names the feed) and a one-hour WebVTT transcript of two named voices (720 cues). Each episode is
//! asked for by its page, one after another, and its job is read every 20 ms until it is `ready`;
//! between episodes the no-IO request (`OPTIONS /api/recipes`) is timed, so the figures come as
//! ratios to it, from the same run.
//!
//! `cargo bench -p tests --bench intake`; figures go to BENCHMARKS.md ("Intake"). With
//! `BENCH_OUT=tests/.work/corpus-dist` the Worker serves the corpus's build (scripts/bench-quotes.sh).

use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use tests::kitchen::key_for;
use tests::scripted::{Listener, page_naming_feed, podcast_feed, respond, serve_requests};
use tests::{Config, Worker};

/// A one-hour transcript: 720 cues of five seconds, two voices taking turns every four cues.
fn hour_of_webvtt(episode: usize) -> String {
    let mut vtt = String::from("WEBVTT\n\n");
    let stamp = |s: usize| format!("{:02}:{:02}:{:02}.000", s / 3600, s / 60 % 60, s % 60);
    for cue in 0..720 {
        let voice = if cue / 4 % 2 == 0 { "Rosa Quint" } else { "Ines Varga" };
        let _ = writeln!(
            vtt,
            "{} --> {}\n<v {voice}>In episode {episode}, cue {cue}, we talk about the harbour, the budget \
             and what the council said about the ferry timetable this week.\n",
            stamp(cue * 5),
            stamp(cue * 5 + 5)
        );
    }
    vtt
}

/// The scripted publisher: `/feed.xml`, `/ep/{n}` (a page naming the feed), `/t/{n}.vtt`.
async fn publisher(episodes: usize) -> Result<Listener> {
    let transcripts: Arc<Vec<String>> = Arc::new((0..episodes).map(hour_of_webvtt).collect());
    serve_requests(transcripts, |transcripts, request, mut stream| async move {
        let host = request.host();
        let path = request.path.as_str();
        let _ = if path == "/feed.xml" {
            let mut channel =
                String::from("<title>The Bench Ledger</title><podcast:license>CC-BY-4.0</podcast:license>");
            for n in 0..transcripts.len() {
                let _ = write!(
                    channel,
                    "<item><title>Episode {n}</title><link>http://{host}/ep/{n}</link><guid>bench-{n}</guid>\
                     <pubDate>Mon, 02 Nov 2026 06:00:00 +0000</pubDate>\
                     <podcast:transcript url=\"/t/{n}.vtt\" type=\"text/vtt\"/></item>"
                );
            }
            let feed = podcast_feed("", &channel);
            respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &feed).await
        } else if let Some(n) = path.strip_prefix("/ep/") {
            let page = page_naming_feed(&format!("Episode {n}"));
            respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], &page).await
        } else if let Some(n) = path.strip_prefix("/t/").and_then(|t| t.strip_suffix(".vtt")) {
            let vtt = n.parse::<usize>().ok().and_then(|n| transcripts.get(n)).cloned().unwrap_or_default();
            respond(&mut stream, "200 OK", &[("Content-Type", "text/vtt")], &vtt).await
        } else {
            respond(&mut stream, "404 Not Found", &[], "").await
        };
    })
    .await
}

fn quantile(times: &mut [Duration], q: f64) -> Duration {
    times.sort();
    times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> Result<()> {
    let n: usize = std::env::var("BENCH_EPISODES").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let host = publisher(n).await?;
    // BENCH_OUT: a build to serve instead of the sample's (the corpus's, from scripts/bench-quotes.sh).
    let out = std::env::var("BENCH_OUT").ok().map(std::path::PathBuf::from);
    let worker = Worker::start_with(Config {
        vars: vec![
            ("FETCH_ALLOW_LOOPBACK".into(), host.addr.to_string()),
            ("WRITES_PER_MINUTE".into(), "100000".into()),
        ],
        out,
        ..Config::default()
    })
    .await?;
    let key = key_for(&worker, "bench-newsdesk").await?;
    let client = reqwest::Client::new();
    let (mut ready, mut noio) = (Vec::new(), Vec::new());
    for episode in 0..n {
        let at = Instant::now();
        client.request(reqwest::Method::OPTIONS, worker.url("/api/recipes")).send().await?.bytes().await?;
        noio.push(at.elapsed());

        let page = format!("http://{}/ep/{episode}", host.addr);
        let at = Instant::now();
        let answer = client
            .post(worker.url("/api/episodes"))
            .bearer_auth(&key)
            .json(&json!({ "source_url": page }))
            .send()
            .await?;
        ensure!(answer.status() == 202, "asking: {}", answer.status());
        let location = answer.headers().get("location").context("a Location")?.to_str()?.to_string();
        loop {
            let job: Value = client.get(worker.url(&location)).send().await?.json().await?;
            match job["state"].as_str() {
                Some("ready") => break,
                Some("failed") => anyhow::bail!("episode {episode} failed: {job}"),
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        ready.push(at.elapsed());
    }
    let base = ms(quantile(&mut noio, 0.5));
    let (p50, p99) = (ms(quantile(&mut ready, 0.5)), ms(quantile(&mut ready, 0.99)));
    println!("no-IO request (OPTIONS /api/recipes): p50 {base:.1} ms");
    println!(
        "request to ready, one-hour episode, publisher transcript (n={n}): p50 {p50:.0} ms ({:.0}x no-IO), \
         p99 {p99:.0} ms ({:.0}x no-IO)",
        p50 / base,
        p99 / base
    );
    Ok(())
}
