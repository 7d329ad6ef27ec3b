//! Attribution accuracy on episodes that come in through AssemblyAI (BENCHMARKS.md, "Intake"):
//! `cargo bench -p tests --bench intake_accuracy`.
//!
//! Real conversations through the real path. BENCH_EPISODES (default 30) episodes of the Changelog
//! corpus (CC BY-SA 4.0, © Changelog Media LLC, extracted into the ignored `tests/.work/corpus`), each
//! with its own roster, are served by a scripted publisher as a feed with `<podcast:person>` names and
//! audio but no transcript. The Worker in `wrangler dev --local` asks a scripted AssemblyAI for them;
//! the service answers the episode's real turns under anonymous labels (`A`, `B`, …) and its speaker
//! identification names labels from the roster it was told (`known_values`). The site's AI, a scripted
//! chat service, is asked about the voices with the real prompt and answers a name per label, quoting a
//! real line of that label as its evidence. Both are wrong or silent at stated rates
//! (`BENCH_SERVICE_ERROR`, `BENCH_SERVICE_ABSTAIN`, `BENCH_MODEL_ERROR`, `BENCH_MODEL_ABSTAIN`: of
//! labels, of votes): a wrong vote names someone else on the roster. Elimination, the name states,
//! the attribution and `trust` are the Worker's own.
//!
//! Then BENCH_QUOTES (default 10) quotes of each episode, ten words from the middle of a turn, are
//! attributed by the episode's page (`/api/attribute?source_url=…`) and each answer is checked
//! against the corpus's true speaker: how many are named rightly, in which state, and how many
//! answers say `trust: high` for a wrong name (the target is none).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use domain::quotes::transcript::import::parse_changelog;
use domain::quotes::transcript::{Segment, llm};
use futures::future::join_all;
use serde_json::{Value, json};
use tests::corpus::Rng;
use tests::kitchen::key_for;
use tests::openai::{API_KEY, MODEL, Reply, ScriptedAi};
use tests::scripted::{Listener, page_naming_feed, podcast_feed, respond, serve_requests, wav};
use tests::transcribers::{self, KEY, Said};
use tests::{Config, Worker};

/// One corpus episode as the bench serves it.
struct Episode {
    /// The audio's name, `c<n>`.
    name: String,
    title: String,
    /// Everyone who speaks, in order of first turn: the first is the host.
    people: Vec<String>,
    /// Turns under their labels (`A` for the first person, …).
    turns: Vec<Segment>,
    seconds: u32,
}

fn label(idx: usize) -> String {
    char::from(b'A' + idx as u8).to_string()
}

/// `n` episodes with two to five speakers and a roster no other chosen episode has, spread over the
/// corpus.
fn episodes(n: usize) -> Vec<Episode> {
    let dir = tests::corpus::changelog();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|show| show.path().is_dir())
        .flat_map(|show| std::fs::read_dir(show.path()).unwrap().flatten().map(|f| f.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let stride = (files.len() / (n * 3).max(1)).max(1);
    let mut chosen: Vec<Episode> = Vec::new();
    let mut rosters: Vec<Vec<String>> = Vec::new();
    for file in files.iter().step_by(stride) {
        if chosen.len() == n {
            break;
        }
        let segments = parse_changelog(&std::fs::read_to_string(file).unwrap());
        let mut people: Vec<String> = Vec::new();
        for segment in &segments {
            if !people.contains(&segment.speaker) {
                people.push(segment.speaker.clone());
            }
        }
        let mut sorted = people.clone();
        sorted.sort();
        if !(2..=5).contains(&people.len()) || rosters.contains(&sorted) {
            continue;
        }
        rosters.push(sorted);
        let turns: Vec<Segment> = segments
            .iter()
            .map(|s| {
                let idx = people.iter().position(|p| *p == s.speaker).unwrap();
                Segment { speaker: label(idx), ..s.clone() }
            })
            .collect();
        let seconds = turns.last().map_or(60.0, |t| t.end_s).ceil() as u32 + 1;
        let title = file.file_stem().unwrap().to_string_lossy().to_string();
        chosen.push(Episode { name: format!("c{}", chosen.len()), title, people, turns, seconds });
    }
    chosen
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A feed item: the audio's name, the title, the people and the length in seconds.
type Item = (String, String, Vec<String>, u32);

/// The scripted publisher: `/feed.xml` (the show's host at channel level, each episode's guests on
/// its item, no transcripts), `/ep/<name>` (a page naming the feed) and `/audio/<name>-<s>.wav`.
async fn publisher(episodes: &[Episode]) -> Result<Listener> {
    let items: Arc<Vec<Item>> = Arc::new(
        episodes.iter().map(|e| (e.name.clone(), e.title.clone(), e.people.clone(), e.seconds)).collect(),
    );
    serve_requests(items, |items, request, mut stream| async move {
        let host = request.host();
        let path = request.path.as_str();
        let _ = if path == "/feed.xml" {
            let mut channel = String::from(
                "<title>Corpus Hour</title><link>http://corpus.example/</link>\
                 <podcast:license>CC-BY-SA-4.0</podcast:license>",
            );
            for (name, title, people, seconds) in items.iter() {
                let mut persons = String::new();
                for (idx, person) in people.iter().enumerate() {
                    let role = if idx == 0 { "host" } else { "guest" };
                    let _ = write!(persons, "<podcast:person role=\"{role}\">{}</podcast:person>", escape(person));
                }
                let _ = write!(
                    channel,
                    "<item><title>{}</title><link>http://{host}/ep/{name}</link><guid>{name}</guid>\
                     <pubDate>Mon, 02 Nov 2026 06:00:00 +0000</pubDate>{persons}\
                     <itunes:duration>{seconds}</itunes:duration>\
                     <enclosure url=\"http://{host}/audio/{name}-{seconds}.wav\" length=\"1000\" type=\"audio/wav\"/></item>",
                    escape(title)
                );
            }
            let feed = podcast_feed(" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"", &channel);
            respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &feed).await
        } else if let Some(name) = path.strip_prefix("/ep/") {
            let page = page_naming_feed(name);
            respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], &page).await
        } else if let Some(file) = path.strip_prefix("/audio/") {
            let seconds = file.trim_end_matches(".wav").rsplit('-').next().and_then(|s| s.parse().ok());
            let body = wav(seconds.unwrap_or(3));
            tests::scripted::respond_bytes(&mut stream, "200 OK", &[("Content-Type", "audio/wav")], &body)
                .await
        } else {
            respond(&mut stream, "404 Not Found", &[], "").await
        };
    })
    .await
}

fn rate(name: &str, default: f64) -> f64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A source's vote for the person `truth`, at the stated rates: `None` to abstain.
fn vote(rng: &mut Rng, abstain: f64, error: f64, truth: &str, people: &[String]) -> Option<String> {
    if uniform(rng) < abstain {
        return None;
    }
    let others: Vec<&String> = people.iter().filter(|p| *p != truth).collect();
    if uniform(rng) < error && !others.is_empty() {
        return Some((*rng.pick(&others)).clone());
    }
    Some(truth.to_string())
}

/// The roster block of the real prompt (`llm::prompt`), which tells the scripted model which episode
/// it is asked about.
fn roster_block(people: &[String]) -> String {
    let user =
        llm::prompt(&tests::corpus::roster(people), &[], &[]).pop().map(|(_, user)| user).unwrap_or_default();
    user.split("\nLabels").next().unwrap_or_default().to_string()
}

#[derive(Default, Debug)]
struct Tally {
    asked: usize,
    found: usize,
    right: usize,
    wrong: usize,
    unnamed: usize,
    high: usize,
    high_wrong: usize,
    states: BTreeMap<String, (usize, usize)>,
}

#[tokio::main]
async fn main() -> Result<()> {
    let n: usize = std::env::var("BENCH_EPISODES").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let quotes: usize = std::env::var("BENCH_QUOTES").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let (service_error, service_abstain) =
        (rate("BENCH_SERVICE_ERROR", 0.1), rate("BENCH_SERVICE_ABSTAIN", 0.3));
    let (model_error, model_abstain) = (rate("BENCH_MODEL_ERROR", 0.1), rate("BENCH_MODEL_ABSTAIN", 0.2));
    let episodes = episodes(n);
    ensure!(episodes.len() == n, "the corpus gave {} episodes, not {n}", episodes.len());
    let mut rng = Rng::new(7);

    // What each source says of each label.
    let mut scripts: HashMap<String, Said> = HashMap::new();
    let ai = ScriptedAi::start().await?;
    for episode in &episodes {
        let utterances =
            episode.turns.iter().map(|t| (t.speaker.clone(), t.start_s, t.end_s, t.text.clone())).collect();
        let mut names = BTreeMap::new();
        let mut answer = serde_json::Map::new();
        for (idx, person) in episode.people.iter().enumerate() {
            if let Some(name) = vote(&mut rng, service_abstain, service_error, person, &episode.people) {
                names.insert(label(idx), name);
            }
            // The model's evidence is a real line of the label: the rule that evidence be quoted holds.
            let line = episode.turns.iter().find(|t| t.speaker == label(idx)).map(|t| t.text.clone());
            let said = vote(&mut rng, model_abstain, model_error, person, &episode.people);
            let evidence: String =
                line.unwrap_or_default().split_whitespace().take(8).collect::<Vec<_>>().join(" ");
            answer.insert(
                label(idx),
                json!({"name": said.unwrap_or_else(|| "abstain".into()), "evidence": evidence}),
            );
        }
        scripts.insert(episode.name.clone(), Said { utterances, names });
        ai.on(&roster_block(&episode.people), vec![Reply::Json(Value::Object(answer))]);
    }
    let service = transcribers::assemblyai_saying(Arc::new(scripts)).await?;
    let host = publisher(&episodes).await?;
    let allowed = format!("{},{}", host.addr, service.listener.addr);
    let settings = [
        ("FETCH_ALLOW_LOOPBACK", allowed.as_str()),
        ("TRANSCRIBE_PROVIDER", "assemblyai"),
        ("ASSEMBLYAI_BASE_URL", &service.base()),
        ("ASSEMBLYAI_API_KEY", KEY),
        ("SITE_URL", "{base}"),
        ("INTAKE_POLL_SECONDS", "1"),
        ("INTAKE_HOURS_PER_DAY", "100000"),
        ("INTAKE_HOURS_PER_ACCOUNT_PER_DAY", "100000"),
        ("INTAKE_MAX_AUDIO_HOURS", "24"),
        ("WRITES_PER_MINUTE", "100000"),
        ("AI_PER_HOUR", "100000"),
        ("AI_BASE_URL", &ai.base),
        ("AI_API_KEY", API_KEY),
        ("AI_MODEL", MODEL),
    ];
    let vars = settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let worker = Worker::start_with(Config { vars, ..Config::default() }).await?;
    let key = key_for(&worker, "bench-accuracy").await?;
    let client = reqwest::Client::new();

    // Every episode asked for by its page, four at a time.
    let started = Instant::now();
    let mut ready: Vec<(usize, String)> = Vec::new();
    for chunk in (0..episodes.len()).collect::<Vec<_>>().chunks(4) {
        let asks = chunk.iter().map(|&idx| {
            let (client, key, worker) = (&client, &key, &worker);
            let page = format!("http://{}/ep/{}", host.addr, episodes[idx].name);
            async move {
                let answer = client
                    .post(worker.url("/api/episodes"))
                    .bearer_auth(key)
                    .json(&json!({ "source_url": page }))
                    .send()
                    .await?;
                let location = answer.headers().get("location").context("a Location")?.to_str()?.to_string();
                let at = Instant::now();
                loop {
                    let job: Value = client.get(worker.url(&location)).send().await?.json().await?;
                    match job["state"].as_str() {
                        Some("ready") => return Ok::<_, anyhow::Error>((idx, page)),
                        Some("failed") => bail!("{page} failed: {job}"),
                        _ if at.elapsed() > Duration::from_secs(120) => bail!("{page} took over 2 minutes"),
                        _ => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
            }
        });
        for done in join_all(asks).await {
            ready.push(done?);
        }
    }
    let took = started.elapsed();

    // Quotes from the middle of turns of ten words or more, attributed by the episode's page.
    let mut tally = Tally::default();
    for (idx, page) in &ready {
        let episode = &episodes[*idx];
        let long: Vec<&Segment> =
            episode.turns.iter().filter(|t| t.text.split_whitespace().count() >= 14).collect();
        for _ in 0..quotes.min(long.len()) {
            let turn = long[rng.below(long.len())];
            let words: Vec<&str> = turn.text.split_whitespace().collect();
            let from = (words.len() - 10) / 2;
            let quote = words[from..from + 10].join(" ");
            let truth = &episode.people[usize::from(turn.speaker.as_bytes()[0] - b'A')];
            let answer: Value = client
                .get(worker.url("/api/attribute"))
                .query(&[("source_url", page.as_str()), ("quote", quote.as_str())])
                .send()
                .await?
                .json()
                .await?;
            tally.asked += 1;
            if answer["found"] != true {
                continue;
            }
            tally.found += 1;
            let name = answer["name"].as_str();
            let right = name == Some(truth.as_str());
            match name {
                None => tally.unnamed += 1,
                Some(_) if right => tally.right += 1,
                Some(_) => tally.wrong += 1,
            }
            let state = answer["name_state"].as_str().unwrap_or("none").to_string();
            let entry = tally.states.entry(state).or_default();
            entry.0 += 1;
            if name.is_some() && !right {
                entry.1 += 1;
            }
            if answer["trust"] == "high" {
                tally.high += 1;
                if !right {
                    tally.high_wrong += 1;
                    eprintln!("trust high and wrong: {quote:?} said by {truth}, answered {answer}");
                }
            }
        }
    }

    let pct = |part: usize, whole: usize| 100.0 * part as f64 / whole.max(1) as f64;
    println!(
        "{n} corpus episodes through the scripted AssemblyAI path in {:.0} s; service error {:.0} % / abstention \
         {:.0} %, model error {:.0} % / abstention {:.0} %",
        took.as_secs_f64(),
        service_error * 100.0,
        service_abstain * 100.0,
        model_error * 100.0,
        model_abstain * 100.0
    );
    println!(
        "quotes: {} asked, {} found; named rightly {:.1} %, wrongly {:.1} %, unnamed {:.1} %",
        tally.asked,
        tally.found,
        pct(tally.right, tally.found),
        pct(tally.wrong, tally.found),
        pct(tally.unnamed, tally.found)
    );
    for (state, (count, wrong)) in &tally.states {
        println!(
            "  name state {state}: {count} answers ({:.1} %), {wrong} of them wrong",
            pct(*count, tally.found)
        );
    }
    println!(
        "trust high: {} answers ({:.1} %), {} of them wrong (target 0)",
        tally.high,
        pct(tally.high, tally.found),
        tally.high_wrong
    );
    Ok(())
}
