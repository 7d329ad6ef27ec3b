//! Episodes taken in by their address through the real Worker: `POST /api/episodes`, the job on
//! the local queue, the fetches to a scripted publisher's host (`tests::scripted::podcast_host`,
//! the only loopback pair the worker may fetch), and every quote route answering for the episode
//! once it is ready.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use futures::future::join_all;
use serde_json::{Value, json};
use tests::browser::Browser;
use tests::kitchen::key_for;
use tests::openai::{API_KEY, MODEL, Reply, ScriptedAi};
use tests::scripted::{PodcastHost, podcast_host, resolver, trap};
use tests::transcribers::{self, KEY};
use tests::{Config, Worker};

/// A worker allowed to fetch the scripted podcast host, and that host.
struct IntakeSite {
    worker: Worker,
    host: PodcastHost,
    client: reqwest::Client,
    key: String,
}

impl IntakeSite {
    async fn start() -> Result<IntakeSite> {
        IntakeSite::start_with(&[]).await
    }

    /// A site with more settings (`{base}` is its own address).
    async fn start_with(settings: &[(&str, &str)]) -> Result<IntakeSite> {
        let host = podcast_host().await?;
        let mut vars = vec![("FETCH_ALLOW_LOOPBACK".to_string(), host.addr.to_string())];
        vars.extend(settings.iter().map(|(name, value)| (name.to_string(), value.to_string())));
        let worker = Worker::start_with(Config { vars, ..Config::default() }).await?;
        let key = key_for(&worker, "newsdesk").await?;
        Ok(IntakeSite { worker, host, client: unpooled()?, key })
    }

    fn on_host(&self, path: &str) -> String {
        format!("http://{}{path}", self.host.addr)
    }

    /// `POST /api/episodes` for `source_url`: status, `Location`, `Retry-After` and the body.
    async fn ask(&self, source_url: &str) -> Result<(u16, Option<String>, Option<String>, Value)> {
        let response = self
            .client
            .post(self.worker.url("/api/episodes"))
            .bearer_auth(&self.key)
            .json(&json!({ "source_url": source_url }))
            .send()
            .await?;
        let header =
            |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(String::from);
        let (location, retry_after) = (header("location"), header("retry-after"));
        Ok((response.status().as_u16(), location, retry_after, response.json().await?))
    }

    /// The job at `location` once it has finished (ready or failed), within a minute.
    async fn finished(&self, location: &str) -> Result<Value> {
        let start = Instant::now();
        loop {
            let job: Value = self.client.get(self.worker.url(location)).send().await?.json().await?;
            if matches!(job["state"].as_str(), Some("ready" | "failed")) {
                return Ok(job);
            }
            ensure!(
                start.elapsed() < Duration::from_secs(60),
                "the job did not finish in a minute: {job}\n--- wrangler log (tail) ---\n{}",
                self.worker.log_tail(60)
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The job of `address`, asked for (202) and then finished.
    async fn taken_in(&self, address: &str) -> Result<Value> {
        let (status, location, _, job) = self.ask(address).await?;
        ensure!(status == 202, "{address}: {status} {job}");
        self.finished(&location.context("a Location")?).await
    }

    /// The review queue's page as `handle` (signed in on the kitchen) sees it.
    async fn review_queue(&self, handle: &str) -> Result<String> {
        let desk = tests::kitchen::Kitchen::sign_in(&self.worker, handle).await?;
        let page = self
            .client
            .get(self.worker.url("/kitchen/review"))
            .header(reqwest::header::COOKIE, &desk.session)
            .header(tests::kitchen::CONNECTING_IP, &desk.address)
            .send()
            .await?;
        Ok(page.text().await?)
    }

    async fn get(&self, path: &str) -> Result<(u16, Value)> {
        let response = self.client.get(self.worker.url(path)).send().await?;
        Ok((response.status().as_u16(), response.json().await?))
    }
}

/// A client that opens a connection per request: these tests wait seconds between requests (for
/// jobs, crons and D1), longer than workerd keeps an idle connection, and a pooled connection closed
/// meanwhile fails the next request.
fn unpooled() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder().pool_max_idle_per_host(0).build()?)
}

/// What is said in `budget-day`, the episode most of these tests ask for.
const HARBOUR_QUOTE: &str = "the harbour vote was never about the harbour";

fn query(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// A reporter without a key: the quote page offers to ask for the episode; the kitchen keeps the
/// address through the sign-in and asks for it; the quote page then says it is coming, and answers
/// once it is published. An address the intake refuses is said on the kitchen page, kept.
pub async fn a_reporter_asks_for_an_episode_from_the_quote_page_which_then_answers() -> Result<()> {
    let site = IntakeSite::start().await?;
    let page = site.on_host("/self/episodes/budget-day");
    let check =
        site.worker.url(&format!("/quotes?quote={}&source_url={}", query(HARBOUR_QUOTE), query(&page)));
    let browser = Browser::start().await?;
    browser.goto(&check).await?;
    let unknown = browser.text("#unknown").await?;
    ensure!(unknown.contains("We can take it in"), "{unknown}");
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on the unknown episode's answer: {violations:?}");

    browser.click("#ask").await?;
    browser.wait_for("#dev-login").await?;
    ensure!(browser.exists("#ask-after-sign-in").await?, "the kitchen does not say what is kept for after");
    browser.type_into("#handle", "reporter").await?;
    browser.click("#dev-login button").await?;
    browser.wait_for("#episode-form").await?;
    let filled = browser
        .execute("return [document.getElementById('episode-address').value, document.querySelector('#episode-form input[name=quote]').value];")
        .await?;
    ensure!(filled == json!([page, HARBOUR_QUOTE]), "the form after signing in: {filled}");
    browser.click("#episode-form button").await?;

    // Back on the quote page: coming, then answered.
    browser.wait_for("#unknown, #answer").await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut said = browser.text("main").await?;
    ensure!(browser.current_url().await?.contains("/quotes?quote="), "not back on the quote page");
    ensure!(
        said.contains("Someone asked for it, and it is") || said.contains("Said by Ines Varga"),
        "the page does not say the episode is coming: {said}"
    );
    while !said.contains("Said by Ines Varga") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        browser.goto(&check).await?;
        said = browser.text("main").await?;
    }
    ensure!(said.contains("Said by Ines Varga") && said.contains("Trust:"), "{said}");

    // Without the sign-in's token, or with no address: refused, as pages.
    let reporter = tests::kitchen::Kitchen::sign_in(&site.worker, "reporter-2").await?;
    let forged = reqwest::Client::new()
        .post(site.worker.url("/kitchen/episodes"))
        .header(reqwest::header::COOKIE, &reporter.session)
        .header(tests::kitchen::CONNECTING_IP, &reporter.address)
        .form(&[("source_url", page.as_str())])
        .send()
        .await?;
    ensure!(forged.status() == 403, "without its token: {}", forged.status());
    ensure!(forged.text().await?.contains("CSRF token is missing or stale"), "the refusal is not a page");
    let empty = reporter.post("/kitchen/episodes", &[("source_url", " ")]).await?;
    ensure!(empty.status() == 422, "no address: {}", empty.status());
    ensure!(empty.text().await?.contains("The address must not be empty"), "the kitchen does not say why");
    let asked = reporter.post("/kitchen/episodes", &[("source_url", page.as_str())]).await?;
    ensure!(
        asked.status() == 200,
        "without a quote, the kitchen says where the job stands: {}",
        asked.status()
    );
    ensure!(asked.text().await?.contains("the job is ready"), "the job asked again is not said to be ready");

    // An address the intake may not fetch: the kitchen says why and keeps it.
    browser.goto(&site.worker.url("/kitchen")).await?;
    browser.type_into("#episode-address", "http://10.1.2.3/private-feed").await?;
    browser.click("#episode-form button").await?;
    browser.wait_for("main > p[role=status]").await?;
    let refused = browser.text("main").await?;
    let kept = browser.execute("return document.getElementById('episode-address').value;").await?;
    ensure!(refused.contains("The address") && kept == "http://10.1.2.3/private-feed", "{refused} / {kept}");
    Ok(())
}

/// Asked for by its page, an episode comes in through the page's feed and the publisher's
/// transcript, and then every quote route answers for it: attribution by the page's address and by
/// the episode's own, the record, the transcript, the speakers and the list of episodes.
pub async fn an_episode_asked_for_by_its_page_comes_in_and_every_quote_route_answers() -> Result<()> {
    let site = IntakeSite::start().await?;
    let page = site.on_host("/self/episodes/budget-day");
    let (status, body) = site
        .get(&format!("/api/attribute?source_url={}&quote={}", query(&page), query(HARBOUR_QUOTE)))
        .await?;
    ensure!(status == 404, "an address nobody asked for is 404, not {status}: {body}");
    ensure!(
        body["detail"].as_str().is_some_and(|d| d.contains("POST /api/episodes")),
        "the 404 says how to ask for it: {body}"
    );

    let (status, location, retry_after, job) = site.ask(&page).await?;
    ensure!(status == 202, "asking is 202 Accepted, not {status}: {job}");
    let location = location.context("a Location")?;
    ensure!(location == format!("/api/intake/{}", job["id"].as_str().unwrap_or_default()), "{location}");
    ensure!(retry_after.is_some_and(|s| s.parse::<u32>().is_ok()), "a Retry-After in seconds");

    let job = site.finished(&location).await?;
    ensure!(job["state"] == "ready", "the job is ready: {job}");
    let episode = job["episode_id"].as_str().context("the ready job names its episode")?.to_string();
    let (status, again, _, same) = site.ask(&page).await?;
    ensure!(status == 200 && same["id"] == job["id"], "asked again, the same finished job: {status} {same}");
    ensure!(again.as_deref() == Some(location.as_str()), "…at the same Location");

    let (status, attribution) = site
        .get(&format!("/api/attribute?source_url={}&quote={}", query(&page), query(HARBOUR_QUOTE)))
        .await?;
    ensure!(status == 200, "attributed by the page's address: {status} {attribution}");
    ensure!(attribution["found"] == true && attribution["exact"] == true, "{attribution}");
    ensure!(attribution["name"] == "Ines Varga", "the voice tag names her: {attribution}");
    ensure!(attribution["start_s"].as_f64().is_some_and(|s| (6.0..12.0).contains(&s)), "{attribution}");
    ensure!(attribution["episode"]["licence"] == "CC-BY-4.0", "the feed's licence: {attribution}");

    // Before any build, phrase search and attribution over every episode find it too.
    let (status, found) = site.get(&format!("/api/search?q={}", query(HARBOUR_QUOTE))).await?;
    let hit = found["hits"]
        .as_array()
        .and_then(|hits| hits.iter().find(|h| h["episode"]["id"] == episode.as_str()));
    ensure!(status == 200 && hit.is_some_and(|h| h["name"] == "Ines Varga"), "searched: {status} {found}");
    let (status, everywhere) = site.get(&format!("/api/attribute?quote={}", query(HARBOUR_QUOTE))).await?;
    ensure!(status == 200 && everywhere["found"] == true, "attributed over every episode: {everywhere}");
    ensure!(
        everywhere["episode"]["id"] == episode.as_str() && everywhere["name"] == "Ines Varga",
        "{everywhere}"
    );

    let (status, record) = site.get(&format!("/api/episodes/{episode}")).await?;
    ensure!(status == 200 && record["id"] == episode.as_str(), "the record: {status} {record}");
    ensure!(
        record["runs"][0]["pipeline"] == "publisher-webvtt",
        "the publisher's transcript is the run: {record}"
    );
    let (status, transcript) = site.get(&format!("/api/episodes/{episode}/transcript")).await?;
    ensure!(status == 200 && transcript["segments"].as_array().is_some_and(|s| s.len() == 2), "{transcript}");
    let (status, speakers) = site.get(&format!("/api/episodes/{episode}/speakers")).await?;
    ensure!(status == 200, "speakers: {status} {speakers}");
    let (status, list) = site.get("/api/episodes?limit=100").await?;
    let listed =
        list["items"].as_array().is_some_and(|items| items.iter().any(|e| e["id"] == episode.as_str()));
    ensure!(status == 200 && listed, "the episode is listed: {list}");

    // Downloads, as the build lays them out.
    let download = |path: String| {
        let client = site.client.clone();
        let url = site.worker.url(&path);
        async move {
            let response = client.get(url).send().await?;
            ensure!(response.status() == 200, "{path}: {}", response.status());
            Ok::<_, anyhow::Error>(response.bytes().await?.to_vec())
        }
    };
    let vtt = download(format!("/episodes/{episode}/transcript.vtt")).await?;
    ensure!(String::from_utf8_lossy(&vtt).contains("<v Ines Varga>"), "the WebVTT download keeps the voices");
    let served_record = download(format!("/episodes/{episode}.json")).await?;
    let served_transcript = download(format!("/episodes/{episode}/transcript.json")).await?;

    // Before any sync, an editor spells her name as she does (the feed's roster has it without the
    // accent): the episode is synced before the decision about it, and the content still builds.
    let label = transcript["segments"]
        .as_array()
        .and_then(|segments| segments.iter().find(|s| s["name"] == "Ines Varga"))
        .and_then(|segment| segment["speaker"].as_str())
        .context("her label")?
        .to_string();
    site.worker.d1_execute("UPDATE accounts SET role = 'editor' WHERE handle = 'newsdesk'")?;
    // The review queue lists her voice, which one source named, before any build has the episode.
    let queue = site.review_queue("newsdesk").await?;
    let entry = format!("<a href=\"/episodes/{episode}\"><bdi>Budget day");
    ensure!(
        queue.contains(&entry) && queue.contains(&label),
        "the queue lacks the episode taken in: {queue}"
    );
    let named = site
        .client
        .put(site.worker.url(&format!("/api/episodes/{episode}/speakers/{}", label.replace(' ', "%20"))))
        .bearer_auth(&site.key)
        .json(&serde_json::json!({"name": "Inês Varga"}))
        .send()
        .await?;
    ensure!(named.status() == 200, "named: {}", named.status());

    // `builder sync` commits it to a content repo, authored by whoever asked, once, and then the
    // decision; a build of that repo publishes the very bytes the intake served, and the name.
    let dir = tests::root().join(format!("tests/.work/intake-sync-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo = dir.join("repo");
    crate::sync::init_repo(&repo)?;
    let repo_arg = repo.to_string_lossy().to_string();
    crate::sync::builder(&["sync", "--api", &site.worker.base, "--repo", &repo_arg])?;
    let commits = crate::sync::log(&repo)?;
    ensure!(commits.len() == 3, "one commit for the episode, one for the name: {}", commits.len());
    ensure!(
        commits[1].author == "newsdesk" && commits[1].summary.starts_with("Take in Budget day"),
        "{}",
        commits[1].summary
    );
    ensure!(commits[0].summary.starts_with(&format!("Name {label} as Inês Varga")), "{}", commits[0].summary);
    crate::sync::builder(&["sync", "--api", &site.worker.base, "--repo", &repo_arg])?;
    ensure!(crate::sync::log(&repo)?.len() == 3, "a second sync commits nothing");
    let out = dir.join("dist");
    tests::build_git_head(&repo, &out)?;
    // The same bytes but for the names, which now hold the decision.
    let without = |bytes: &[u8], field: &str| -> Result<(Value, Value)> {
        let mut value: Value = serde_json::from_slice(bytes)?;
        let taken = value[field].take();
        Ok((value, taken))
    };
    let built_record = std::fs::read(out.join(format!("episodes/{episode}.json")))?;
    let ((built, names), (served, _)) = (without(&built_record, "names")?, without(&served_record, "names")?);
    ensure!(built == served, "the built record differs from the served one");
    ensure!(names[&label]["name"] == "Inês Varga" && names[&label]["name_state"] == "human", "{names}");
    let built_transcript = std::fs::read(out.join(format!("episodes/{episode}/transcript.json")))?;
    let ((built, speakers), (served, _)) =
        (without(&built_transcript, "speakers")?, without(&served_transcript, "speakers")?);
    ensure!(built == served, "the built transcript differs from the served one");
    ensure!(speakers[&label]["name"] == "Inês Varga", "{speakers}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// One address asked at the same moment by several requests is one job; each refused address
/// (inside a network, or the cloud's metadata) is a 422 naming `source_url`, and nothing is queued.
pub async fn one_job_per_address_and_inside_addresses_are_refused() -> Result<()> {
    let site = IntakeSite::start().await?;
    let page = site.on_host("/self/episodes/rail-strike");
    let asks = join_all((0..5).map(|_| site.ask(&page))).await;
    let mut ids = Vec::new();
    for asked in asks {
        let (status, _, _, job) = asked?;
        ensure!(matches!(status, 200 | 202), "{status} {job}");
        ids.push(job["id"].as_str().unwrap_or_default().to_string());
    }
    ids.dedup();
    ensure!(ids.len() == 1, "one job for one address: {ids:?}");
    let rows = site.worker.d1_query("SELECT COUNT(*) AS n FROM intake_jobs")?;
    ensure!(rows[0]["n"] == 1, "one row: {rows:?}");

    for inside in [
        "http://127.0.0.1:9/episode",
        "http://10.0.0.7/episode",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/episode",
        "http://localhost/episode",
        "ftp://example.org/episode",
        "https://user:secret@example.org/episode",
    ] {
        let (status, _, _, problem) = site.ask(inside).await?;
        ensure!(status == 422, "{inside}: 422, not {status}: {problem}");
        ensure!(problem["errors"][0]["field"] == "source_url", "{inside}: names the field: {problem}");
    }
    let rows = site.worker.d1_query("SELECT COUNT(*) AS n FROM intake_jobs")?;
    ensure!(rows[0]["n"] == 1, "nothing queued for a refused address: {rows:?}");
    // An address without its scheme was refused here though `/api/attribute` takes it.
    let (status, _, _, job) = site.ask("ledger.example.org/episodes/budget-day").await?;
    ensure!(
        status == 202 && job["source_url"] == "https://ledger.example.org/episodes/budget-day",
        "{status} {job}"
    );
    Ok(())
}

/// A job that cannot make an episode ends `failed` with a reason a person can act on, and the 404
/// of `/api/attribute` for its address says so: a transcript that redirects inside the network, an
/// audio file no feed lists (no transcription service is configured), a page that answers 404.
pub async fn a_job_that_cannot_make_an_episode_fails_with_its_reason() -> Result<()> {
    let site = IntakeSite::start().await?;
    let cases = [
        ("/self/episodes/inside", "169.254.169.254"),
        ("/audio/99.mp3", "TRANSCRIBE_PROVIDER"),
        ("/nowhere", "HTTP 404"),
    ];
    for (path, says) in cases {
        let address = site.on_host(path);
        let job = site.taken_in(&address).await?;
        ensure!(job["state"] == "failed", "{path}: failed: {job}");
        let reason = job["reason"].as_str().unwrap_or_default();
        ensure!(reason.contains(says), "{path}: the reason says {says:?}: {reason}");
        let (status, body) =
            site.get(&format!("/api/attribute?source_url={}&quote=anything", query(&address))).await?;
        let detail = body["detail"].as_str().unwrap_or_default();
        ensure!(status == 404 && detail.contains("failed"), "{path}: the 404 tells where it stands: {body}");
    }
    Ok(())
}

/// A content folder, `tests/.work/<name>-<process>/content`, of shows that follow feeds: each a
/// folder, a title and the feed, under CC BY 4.0. Returns the work folder and the content.
fn content_following(name: &str, shows: &[(&str, &str, &str)]) -> Result<(PathBuf, PathBuf)> {
    let work = tests::root().join(format!("tests/.work/{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let content = work.join("content");
    for (folder, title, feed_url) in shows {
        let dir = content.join("shows").join(folder);
        std::fs::create_dir_all(&dir)?;
        let show = json!({"title": title, "licence": "CC-BY-4.0", "feed_url": feed_url});
        std::fs::write(dir.join("show.json"), show.to_string())?;
    }
    Ok((work, content))
}

/// A show that names its feed is followed: the cron (`/__scheduled`) reads the feed (here through
/// slices of the followed feeds, as a site with more feeds than one invocation queues does),
/// each of its items with a publisher transcript comes in as an episode of that show, each item that
/// cannot fails with its reason, and the next run's read is a conditional GET the host answers 304,
/// which makes no job.
pub async fn a_followed_feed_brings_its_new_episodes_in_and_reads_again_conditionally() -> Result<()> {
    let host = podcast_host().await?;
    let feed_url = format!("http://{}/self/feed.xml", host.addr);
    // A second followed show, and one feed an invocation: the cron queues two slices, and each
    // slice's invocation queues its feed.
    let quiet_url = format!("http://{}/quiet/feed.xml", host.addr);
    let (work, content) = content_following(
        "followed",
        &[
            ("morning-ledger", "The Morning Ledger", feed_url.as_str()),
            ("quiet-hour", "Quiet Hour", quiet_url.as_str()),
        ],
    )?;
    std::fs::create_dir_all(content.join("recipes"))?;
    let settings = [("FOLLOW_FEEDS_PER_INVOCATION", "1")];
    let worker = tests::worker_on_content(&content, &host.addr.to_string(), &settings).await?;
    let client = unpooled()?;
    let jobs = |worker: &Worker| {
        worker.d1_query("SELECT source_url, state, reason, episode_id, show, guid FROM intake_jobs")
    };

    let cron = client.get(worker.url("/__scheduled")).send().await?;
    ensure!(cron.status().is_success(), "the cron ran: {}", cron.status());
    let start = Instant::now();
    let rows = loop {
        let rows = jobs(&worker)?;
        let finished =
            rows.iter().filter(|row| matches!(row["state"].as_str(), Some("ready" | "failed"))).count();
        if rows.len() == 4 && finished == 4 {
            break rows;
        }
        ensure!(start.elapsed() < Duration::from_secs(90), "the feed's four items did not finish: {rows:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let ready: Vec<&Value> = rows.iter().filter(|row| row["state"] == "ready").collect();
    ensure!(ready.len() == 2, "the two items with a publisher transcript came in: {rows:?}");
    ensure!(ready.iter().all(|row| row["show"] == "morning-ledger"), "into the followed show: {rows:?}");
    ensure!(rows.iter().any(|row| row["guid"] == "ledger-42"), "each job keeps its item's guid: {rows:?}");
    let read = worker.d1_query("SELECT url FROM followed_feeds ORDER BY url")?;
    let read: Vec<&str> = read.iter().filter_map(|row| row["url"].as_str()).collect();
    ensure!(read == [quiet_url.as_str(), feed_url.as_str()], "both feeds were read, a slice each: {read:?}");
    let trailer = rows.iter().find(|row| row["source_url"].as_str().is_some_and(|u| u.ends_with("/trailer")));
    let reason = trailer.and_then(|row| row["reason"].as_str()).unwrap_or_default();
    ensure!(reason.contains("no transcript"), "the trailer says why: {rows:?}");

    let episode = ready.iter().find_map(|row| {
        row["source_url"].as_str().filter(|u| u.ends_with("/rail-strike")).and(row["episode_id"].as_str())
    });
    let episode = episode.context("the rail strike episode")?;
    let record: Value =
        client.get(worker.url(&format!("/api/episodes/{episode}"))).send().await?.json().await?;
    ensure!(record["show"] == "morning-ledger" && record["licence"] == "CC-BY-4.0", "{record}");
    let quote = "nobody expected the union to hold";
    let source = record["source_url"].as_str().unwrap_or_default();
    let answer: Value = client
        .get(worker.url(&format!("/api/attribute?source_url={}&quote={}", query(source), query(quote))))
        .send()
        .await?
        .json()
        .await?;
    ensure!(answer["found"] == true && answer["exact"] == true, "{answer}");

    let before = host.feed_not_modified();
    client.get(worker.url("/__scheduled")).send().await?;
    let start = Instant::now();
    while host.feed_not_modified() == before {
        ensure!(start.elapsed() < Duration::from_secs(30), "the second read was not conditional");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    ensure!(jobs(&worker)?.len() == 4, "a 304 makes no job");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

impl IntakeSite {
    /// A site that buys transcriptions from `service` (`assemblyai`, `deepgram`) at `base`, polling
    /// every second, with more settings.
    async fn transcribing(service: &str, base: &str, settings: &[(&str, &str)]) -> Result<IntakeSite> {
        let base_setting = if service == "assemblyai" { "ASSEMBLYAI_BASE_URL" } else { "DEEPGRAM_BASE_URL" };
        let key_setting = if service == "assemblyai" { "ASSEMBLYAI_API_KEY" } else { "DEEPGRAM_API_KEY" };
        let mut all = vec![
            ("TRANSCRIBE_PROVIDER", service),
            (base_setting, base),
            (key_setting, KEY),
            ("SITE_URL", "{base}"),
            ("INTAKE_POLL_SECONDS", "1"),
        ];
        all.extend_from_slice(settings);
        IntakeSite::start_with(&all).await
    }

    /// Asks for the untranscribed episode `name` (`tests::scripted::UNTRANSCRIBED`) by its page and
    /// waits for its job to finish.
    async fn take_in(&self, name: &str) -> Result<Value> {
        let (status, location, _, job) = self.ask(&self.on_host(&format!("/tx/episodes/{name}"))).await?;
        ensure!(status == 202, "{name}: asking is 202, not {status}: {job}");
        self.finished(&location.context("a Location")?).await
    }

    /// The charges of the day's transcriptions: job, state and seconds.
    fn charges(&self) -> Result<Vec<(String, String, i64)>> {
        let rows = self.worker.d1_query(
            "SELECT j.source_url, t.state, t.seconds FROM intake_transcriptions t \
             JOIN intake_jobs j ON j.id = t.job_id ORDER BY j.source_url",
        )?;
        Ok(rows
            .iter()
            .map(|row| {
                let url = row["source_url"].as_str().unwrap_or_default();
                let name = url.rsplit('/').next().unwrap_or_default().to_string();
                (
                    name,
                    row["state"].as_str().unwrap_or_default().to_string(),
                    row["seconds"].as_i64().unwrap_or(-1),
                )
            })
            .collect())
    }
}

/// The callbacks the service made for the transcription of the episode `name`, with the Worker's
/// answers (`callback <id> <status> <body>`).
fn callbacks_of(events: &[String], name: &str) -> Vec<String> {
    let id = events.iter().find_map(|event| {
        let mut words = event.strip_prefix("submitted ")?.split(' ');
        let id = words.next()?;
        words.next().filter(|audio| audio.contains(&format!("/{name}-"))).map(|_| id.to_string())
    });
    let Some(id) = id else { return Vec::new() };
    events.iter().filter(|event| event.starts_with(&format!("callback {id} "))).cloned().collect()
}

/// Through the scripted AssemblyAI: episodes whose feed has no transcript are transcribed from their
/// audio and named by the service's speaker identification; a webhook delivered twice is one
/// transcription, one that never comes is made up for by polling, an audio link that is dead fails
/// the job with the service's reason and costs nothing; one episode asked for by two addresses at
/// once is bought once; the day's budget refuses what would pass it and, once spent, refuses asking
/// at all with 429 and the `RateLimit` headers.
pub async fn assemblyai_transcribes_episodes_without_a_transcript_within_the_days_budget() -> Result<()> {
    let service = transcribers::assemblyai().await?;
    // The site's AI votes on arrival, reading the host's introduction.
    let ai = ScriptedAi::start().await?;
    let introductions = json!({
        "A": {"name": "Rosa Quint", "evidence": "I'm Rosa Quint"},
        "B": {"name": "Ines Varga", "evidence": "My guest today is Ines Varga"},
    });
    ai.on("Labels: A, B", vec![Reply::Json(introductions)]);
    let settings = [
        ("INTAKE_HOURS_PER_ACCOUNT_PER_DAY", "1"),
        ("INTAKE_MAX_AUDIO_HOURS", "2"),
        ("AI_BASE_URL", ai.base.as_str()),
        ("AI_API_KEY", API_KEY),
        ("AI_MODEL", MODEL),
    ];
    let site = IntakeSite::transcribing("assemblyai", &service.base(), &settings).await?;

    let names = ["clean", "twice", "quiet", "gone"];
    let jobs = join_all(names.iter().map(|name| site.take_in(name))).await;
    let jobs: Vec<Value> = jobs.into_iter().collect::<Result<_>>()?;
    for (name, job) in names.iter().zip(&jobs).take(3) {
        ensure!(job["state"] == "ready", "{name} was transcribed: {job}");
    }
    // An audio address that answers 404 stops the job before anything is submitted or charged.
    let reason = jobs[3]["reason"].as_str().unwrap_or_default();
    ensure!(
        jobs[3]["state"] == "failed" && reason.contains("HTTP 404") && reason.contains("nothing was bought"),
        "gone: {}",
        jobs[3]
    );

    // Named by the service, kept as its labels with the names beside them, and attributable.
    let episode = jobs[0]["episode_id"].as_str().context("clean's episode")?;
    let (_, record) = site.get(&format!("/api/episodes/{episode}")).await?;
    ensure!(record["runs"][0]["pipeline"] == "assemblyai-universal-2", "the service's run: {record}");
    ensure!(record["runs"][0]["imported_from"] == "assemblyai", "{record}");
    let page = site.on_host("/tx/episodes/clean");
    let quote = "it was about clean";
    let (status, answer) =
        site.get(&format!("/api/attribute?source_url={}&quote={}", query(&page), query(quote))).await?;
    ensure!(status == 200 && answer["found"] == true && answer["exact"] == true, "{status} {answer}");
    ensure!(answer["speaker"] == "B" && answer["name"] == "Ines Varga", "named by the service: {answer}");
    // The service and the language model agree, so the name is confident and the answer trusted;
    // voice match said why it abstained.
    ensure!(answer["name_state"] == "confident" && answer["trust"] == "high", "two sources agree: {answer}");
    ensure!(
        record.to_string().contains("no embeddings"),
        "voice match's abstention is in the record: {record}"
    );
    ensure!(answer["episode"]["licence"] == "CC-BY-4.0", "the feed's licence: {answer}");
    // Audio a page cannot play (an http address) was offered as "the episode's page": the link says
    // what it is.
    let check = format!("/quotes?quote={}&source_url={}", query(quote), query(&page));
    let html = site.client.get(site.worker.url(&check)).send().await?.text().await?;
    ensure!(html.contains("id=\"listen\">Listen from 0:00:"), "the link to the audio: {html}");

    let events = service.events();
    let submitted = |name: &str| {
        events.iter().filter(|e| e.starts_with("submitted ") && e.contains(&format!("/{name}-"))).count()
    };
    ensure!(submitted("twice") == 1 && submitted("clean") == 1, "one submission an episode: {events:?}");
    let twice = callbacks_of(&events, "twice");
    ensure!(twice.len() == 2, "the webhook came twice: {events:?}");
    ensure!(
        twice[0].contains("200")
            && twice[0].contains("\"accepted\":true")
            && twice[1].contains("\"accepted\":false"),
        "the second delivery changed nothing: {twice:?}"
    );
    ensure!(callbacks_of(&events, "quiet").is_empty(), "no webhook for quiet: {events:?}");
    ensure!(events.iter().any(|e| e.starts_with("poll ") && e.ends_with("completed")), "polled: {events:?}");

    // Charged once each, by the length the service measured; the dead link is never charged.
    let charges = site.charges()?;
    let expected: Vec<(String, String, i64)> =
        [("clean", "completed", 600), ("quiet", "completed", 600), ("twice", "completed", 600)]
            .iter()
            .map(|(n, s, c)| (n.to_string(), s.to_string(), *c))
            .collect();
    ensure!(charges == expected, "{charges:?}");
    let (status, _, _, again) = site.ask(&page).await?;
    ensure!(status == 200 && again["state"] == "ready", "asked again: the same job, {status} {again}");
    ensure!(site.charges()? == expected, "asking again charges nothing");

    // An episode with a publisher transcript buys nothing, even where a service is configured.
    let (_, location, _, _) = site.ask(&site.on_host("/self/episodes/budget-day")).await?;
    let published = site.finished(&location.context("a Location")?).await?;
    ensure!(published["state"] == "ready", "{published}");
    ensure!(site.charges()? == expected, "a publisher transcript is not charged: {:?}", site.charges()?);

    // Over the longest audio, and over the day's budget: failed with reasons, nothing charged.
    let long = site.take_in("long").await?;
    let reason = long["reason"].as_str().unwrap_or_default();
    ensure!(long["state"] == "failed" && reason.contains("INTAKE_MAX_AUDIO_HOURS"), "{long}");
    let big = site.take_in("big").await?;
    let reason = big["reason"].as_str().unwrap_or_default();
    ensure!(big["state"] == "failed" && reason.contains("INTAKE_HOURS_PER_ACCOUNT_PER_DAY"), "{big}");
    ensure!(site.charges()?.len() == 3, "nothing charged for either: {:?}", site.charges()?);
    // One episode asked for at once by its page and by a share link to it: two jobs, one
    // transcription bought once, and one episode that both addresses find.
    let (page, share) = (site.on_host("/tx/episodes/fill"), site.on_host("/tx/share/fill"));
    let (by_page, by_share) = tokio::join!(site.ask(&page), site.ask(&share));
    let fill = site.finished(&by_page?.1.context("a Location")?).await?;
    let shared = site.finished(&by_share?.1.context("a Location")?).await?;
    ensure!(fill["state"] == "ready", "half an hour fits the hour: {fill}");
    ensure!(
        shared["state"] == "ready" && shared["episode_id"] == fill["episode_id"],
        "the share link's job ends with the page's episode: {shared} {fill}"
    );
    let events = service.events();
    let fills = events.iter().filter(|e| e.starts_with("submitted ") && e.contains("/fill-")).count();
    ensure!(fills == 1, "one submission for both addresses: {events:?}");
    let charged: Vec<_> = site.charges()?.into_iter().filter(|(name, _, _)| name == "fill").collect();
    ensure!(charged == [("fill".to_string(), "completed".to_string(), 1800)], "charged once: {charged:?}");
    let quote = "it was about fill";
    let (status, answer) =
        site.get(&format!("/api/attribute?source_url={}&quote={}", query(&share), query(quote))).await?;
    ensure!(status == 200 && answer["found"] == true, "the share link finds the episode: {status} {answer}");

    // The hour is spent: asking is refused at once, with the budget's headers.
    let response = site
        .client
        .post(site.worker.url("/api/episodes"))
        .bearer_auth(&site.key)
        .json(&json!({ "source_url": site.on_host("/self/episodes/budget-day") }))
        .send()
        .await?;
    ensure!(response.status() == 429, "past the budget: {}", response.status());
    let header = |name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    };
    ensure!(
        header("ratelimit-policy") == "\"transcribed-hours\";q=1;w=86400",
        "{}",
        header("ratelimit-policy")
    );
    ensure!(header("ratelimit").starts_with("\"transcribed-hours\";r=0;t="), "{}", header("ratelimit"));
    let problem: Value = response.json().await?;
    ensure!(
        problem["status"] == 429 && problem["title"].as_str().is_some_and(|t| t.contains("budget")),
        "{problem}"
    );
    Ok(())
}

/// A service that takes a submission and answers it after `TRANSCRIBE_CALL_SECONDS`: the job fails
/// saying so, its charge stands (the service may be transcribing it), and the jobs queued behind it
/// are not held.
pub async fn a_late_transcription_service_fails_its_job_and_keeps_the_charge() -> Result<()> {
    let service = transcribers::assemblyai().await?;
    let settings = [("TRANSCRIBE_CALL_SECONDS", "1")];
    let site = IntakeSite::transcribing("assemblyai", &service.base(), &settings).await?;

    let (stalled, clean) = tokio::join!(site.take_in("stall"), site.take_in("clean"));
    let (stalled, clean) = (stalled?, clean?);
    let reason = stalled["reason"].as_str().unwrap_or_default();
    ensure!(
        stalled["state"] == "failed"
            && reason.contains("did not answer within 1 s (TRANSCRIBE_CALL_SECONDS)"),
        "{stalled}"
    );
    ensure!(clean["state"] == "ready", "the job beside it: {clean}");
    let charges = site.charges()?;
    ensure!(
        charges.iter().any(|charge| *charge == ("stall".to_string(), "failed".to_string(), 600)),
        "the late answer's charge stands: {charges:?}"
    );
    Ok(())
}

/// Through the scripted Deepgram, which answers only by calling back: the callback brings the
/// episode in, a second one changes nothing, one without the job's token is refused, and a callback
/// that never comes fails the job at its deadline.
pub async fn deepgram_answers_by_its_callback_and_one_that_never_comes_ends_the_job() -> Result<()> {
    let service = transcribers::deepgram().await?;
    let settings = [("TRANSCRIBE_TIMEOUT_SECONDS", "3"), ("INTAKE_MAX_AUDIO_HOURS", "2")];
    let site = IntakeSite::transcribing("deepgram", &service.base(), &settings).await?;

    let names = ["clean", "twice", "quiet", "gone", "early"];
    let jobs: Vec<Value> =
        join_all(names.iter().map(|name| site.take_in(name))).await.into_iter().collect::<Result<_>>()?;
    ensure!(jobs[0]["state"] == "ready" && jobs[1]["state"] == "ready", "{jobs:?}");
    let quiet = jobs[2]["reason"].as_str().unwrap_or_default();
    ensure!(jobs[2]["state"] == "failed" && quiet.contains("callback never came"), "{}", jobs[2]);
    let gone = jobs[3]["reason"].as_str().unwrap_or_default();
    ensure!(
        jobs[3]["state"] == "failed" && gone.contains("HTTP 404") && gone.contains("nothing was bought"),
        "{}",
        jobs[3]
    );
    ensure!(
        !service.events().iter().any(|e| e.starts_with("submitted ") && e.contains("/gone-")),
        "audio that answers 404 is never submitted: {:?}",
        service.events()
    );
    ensure!(jobs[4]["state"] == "ready", "a callback before the submission's answer is kept: {}", jobs[4]);
    // Deepgram cannot be told to stop, so the audio is measured before it is bought: a feed that
    // claims ten minutes for two and a half hours is taken at the file's length, past the longest:
    // a WAV by its header, an M4A by its index after its media (a second, ranged read).
    let liar = site.take_in("liar").await?;
    let reason = liar["reason"].as_str().unwrap_or_default();
    ensure!(
        liar["state"] == "failed"
            && reason.contains("2.5 hours long by its audio file")
            && reason.contains("INTAKE_MAX_AUDIO_HOURS"),
        "{liar}"
    );
    let boxed = site.take_in("boxed").await?;
    let reason = boxed["reason"].as_str().unwrap_or_default();
    ensure!(boxed["state"] == "failed" && reason.contains("2.5 hours long by its audio file"), "{boxed}");
    let events = service.events();
    ensure!(
        !events.iter().any(|e| e.contains("/liar-") || e.contains("/boxed-")),
        "nothing submitted: {events:?}"
    );

    let episode = jobs[0]["episode_id"].as_str().context("clean's episode")?;
    let (_, record) = site.get(&format!("/api/episodes/{episode}")).await?;
    ensure!(record["runs"][0]["pipeline"] == "deepgram-nova-3", "{record}");
    let page = site.on_host("/tx/episodes/clean");
    let (status, answer) = site
        .get(&format!("/api/attribute?source_url={}&quote={}", query(&page), query("it was about clean")))
        .await?;
    ensure!(
        status == 200 && answer["found"] == true && answer["speaker"] == "speaker_1",
        "{status} {answer}"
    );

    let events = service.events();
    let twice = callbacks_of(&events, "twice");
    ensure!(twice.len() == 2 && twice[1].contains("\"accepted\":false"), "{events:?}");

    // A callback must carry the job's token, and be about the job's transcription.
    let job = jobs[0]["id"].as_str().unwrap_or_default();
    for (path, expected) in [
        (format!("/api/intake/{job}/transcribed"), 401),
        (format!("/api/intake/{job}/transcribed?token=forged"), 401),
        ("/api/intake/in_nobodyasked/transcribed?token=x".to_string(), 404),
    ] {
        let response = site.client.post(site.worker.url(&path)).json(&json!({"results": {}})).send().await?;
        ensure!(response.status() == expected, "{path}: {}", response.status());
    }
    let charges = site.charges()?;
    let quiet_charge = charges.iter().find(|(name, _, _)| name == "quiet");
    ensure!(quiet_charge.is_some_and(|(_, state, _)| state == "failed"), "{charges:?}");
    Ok(())
}

/// A host name that resolves to loopback was fetched by the Worker (`POST /api/episodes` answered 202
/// and the trap logged the request). Every name is resolved and checked first — the address asked
/// for and each redirect's target — and a name that only resolves nowhere says so in words.
pub async fn a_name_that_resolves_inside_a_network_is_never_fetched() -> Result<()> {
    let (trap, hits) = trap().await?;
    let zone = vec![
        ("trap.newsroom.test".to_string(), "127.0.0.1".parse()?),
        ("both.newsroom.test".to_string(), "93.184.215.14".parse()?),
        ("both.newsroom.test".to_string(), "::1".parse()?),
        ("office.newsroom.test".to_string(), "10.0.0.7".parse()?),
    ];
    let dns = resolver(zone).await?;
    let resolver_url = format!("http://{}/dns-query", dns.addr);
    let site = IntakeSite::start_with(&[("FETCH_RESOLVER", resolver_url.as_str())]).await?;
    let port = trap.addr.port();
    let redirect = format!("http://trap.newsroom.test:{port}/via-redirect");
    let cases = [
        (format!("http://trap.newsroom.test:{port}/x"), "resolves to 127.0.0.1: loopback address"),
        (format!("http://both.newsroom.test:{port}/x"), "resolves to ::1: loopback address"),
        (format!("http://office.newsroom.test:{port}/x"), "resolves to 10.0.0.7: private address"),
        (site.on_host(&format!("/redirect?to={}", query(&redirect))), "resolves to 127.0.0.1"),
        (format!("http://nowhere.newsroom.test:{port}/x"), "no address is known for its name"),
    ];
    for (address, says) in &cases {
        let job = site.taken_in(address).await?;
        let reason = job["reason"].as_str().unwrap_or_default();
        ensure!(job["state"] == "failed" && reason.contains(says), "{address}: says {says:?}: {job}");
        ensure!(
            !reason.contains("internal error"),
            "{address}: the platform's words are not a reason: {reason}"
        );
    }
    ensure!(hits.load(std::sync::atomic::Ordering::SeqCst) == 0, "the trap was reached");
    Ok(())
}

/// A publisher's WebVTT without voice tags became one label holding every voice, which an editor
/// could name as one person, turning the host's line into `trust: high` under the guest's name. The
/// feed's licence, written in lower case, was refused. Through the Worker: the licence is taken as
/// SPDX spells it, with the feed's credit line; the label is marked as several voices in the review
/// queue, a decision naming it is refused with the reason, and its quotes stay `review`, saying why.
pub async fn a_transcript_whose_voices_nobody_separated_is_never_high() -> Result<()> {
    let site = IntakeSite::start().await?;
    let page = site.on_host("/mono/episodes/budget-day");
    let job = site.taken_in(&page).await?;
    ensure!(job["state"] == "ready", "a lower-case SPDX id is a licence: {job}");
    let episode = job["episode_id"].as_str().context("the episode")?;
    let (_, record) = site.get(&format!("/api/episodes/{episode}")).await?;
    ensure!(record["licence"] == "CC-BY-4.0", "stored as SPDX spells it: {record}");
    ensure!(record["attribution"] == "© 2026 Ledger Media", "the feed's credit line: {record}");
    ensure!(record["runs"][0]["segments"][0]["speaker"] == "UNKNOWN", "one label for every voice: {record}");

    site.worker.d1_execute("UPDATE accounts SET role = 'editor' WHERE handle = 'newsdesk'")?;
    let named = site
        .client
        .put(site.worker.url(&format!("/api/episodes/{episode}/speakers/UNKNOWN")))
        .bearer_auth(&site.key)
        .json(&json!({"name": "Ines Varga"}))
        .send()
        .await?;
    let status = named.status().as_u16();
    let problem: Value = named.json().await?;
    ensure!(status == 422 && problem["errors"][0]["field"] == "label", "{status} {problem}");
    let why = problem["errors"][0]["reason"].as_str().unwrap_or_default();
    ensure!(why.contains("nobody separated") && why.contains("cannot be given one"), "{problem}");

    let (status, answer) = site
        .get(&format!("/api/attribute?source_url={}&quote={}", query(&page), query(HARBOUR_QUOTE)))
        .await?;
    ensure!(status == 200 && answer["found"] == true && answer["verbatim"] == true, "{answer}");
    ensure!(answer["trust"] == "review", "several voices are never high: {answer}");
    ensure!(answer["review_reasons"].to_string().contains("may be several people"), "says why: {answer}");

    let queue = site.review_queue("newsdesk").await?;
    let at = queue.find(&format!("<a href=\"/episodes/{episode}\">")).context("the episode in the queue")?;
    let entry = &queue[at..queue[at..].find("</section>").map_or(queue.len(), |end| at + end)];
    ensure!(
        entry.contains("Several voices") && !entry.contains("<form"),
        "marked, and no name offered: {entry}"
    );
    // An episode taken in had no way to listen from the queue.
    ensure!(entry.contains("<audio controls"), "each turn can be heard: {entry}");
    Ok(())
}

/// An episode whose feed grants no licence the site can publish went to `transcribing`, was bought,
/// and failed only then; its reason told a journalist to "pass --licence", and the quote page offered
/// to ask again. It fails when its feed is read: nothing is submitted or charged, and the reason says
/// that nothing can be done here, as the quote page does.
pub async fn a_licence_the_site_cannot_publish_stops_the_job_before_anything_is_bought() -> Result<()> {
    let service = transcribers::assemblyai().await?;
    let site = IntakeSite::transcribing("assemblyai", &service.base(), &[]).await?;
    let page = site.on_host("/closed/episodes/doors");
    let job = site.taken_in(&page).await?;
    let reason = job["reason"].as_str().unwrap_or_default();
    ensure!(job["state"] == "failed" && reason.contains("names no licence"), "{job}");
    ensure!(reason.contains("nothing can be done here") && !reason.contains("--licence"), "{reason}");
    ensure!(service.events().iter().all(|e| !e.starts_with("submitted ")), "bought: {:?}", service.events());
    ensure!(site.charges()?.is_empty(), "charged: {:?}", site.charges()?);
    let states = site.worker.d1_query("SELECT state FROM intake_jobs")?;
    ensure!(states.iter().all(|row| row["state"] != "transcribing"), "{states:?}");

    let quote_page = site
        .client
        .get(site.worker.url(&format!("/quotes?quote=closed&source_url={}", query(&page))))
        .send()
        .await?
        .text()
        .await?;
    ensure!(quote_page.contains("nothing can be done here"), "the page gives the reason: {quote_page}");
    ensure!(!quote_page.contains("id=\"ask\"") && !quote_page.contains("ask again"), "{quote_page}");
    Ok(())
}

/// Episodes a journalist asked for from a feed a show follows landed in a new show made from the
/// feed's title, and `builder sync` wrote a second `show.json`. An item of a followed feed joins the
/// show that follows it, whoever asks for it.
pub async fn an_item_of_a_followed_feed_joins_its_show_whoever_asks() -> Result<()> {
    let host = podcast_host().await?;
    // Spelt as the show's page would give it, not as the episode page links it.
    let feed_url = format!("http://{}/self/feed.xml/", host.addr);
    let (work, content) = content_following("joins", &[("ledger", "Ledger", feed_url.as_str())])?;
    let worker = tests::worker_on_content(&content, &host.addr.to_string(), &[]).await?;
    let key = key_for(&worker, "reporter").await?;
    let site = IntakeSite { worker, host, client: unpooled()?, key };
    let job = site.taken_in(&site.on_host("/self/episodes/budget-day")).await?;
    ensure!(job["state"] == "ready", "{job}");
    let episode = job["episode_id"].as_str().context("the episode")?;
    let (_, record) = site.get(&format!("/api/episodes/{episode}")).await?;
    ensure!(record["show"] == "ledger", "into the show that follows the feed: {record}");
    let taken: Value = site.client.get(site.worker.url("/api/intake/episodes")).send().await?.json().await?;
    ensure!(taken["items"][0]["content"]["show"] == "ledger", "what sync writes: {taken}");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
