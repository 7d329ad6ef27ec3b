//! The quote service through the real Worker: attribution, shows, episodes, transcripts, speakers,
//! phrase search, downloads, and every bad-input case.

use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use domain::quotes::page::{built_compare_page, built_episode_page};
use domain::quotes::quote::views::built_view_path;
use futures::future::join_all;
use serde_json::Value;
use tests::Worker;

const SOURDOUGH: &str = "https://commonplace.example/shows/kitchen-table/1-sourdough-slowly";
const JS_PARTY_299: &str = "https://changelog.com/jsparty/299";

async fn get(w: &Worker, path: &str) -> Result<(u16, String, Value)> {
    let response = reqwest::get(w.url(path)).await?;
    let status = response.status().as_u16();
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let text = response.text().await?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, content_type, body))
}

async fn ok(w: &Worker, path: &str) -> Result<Value> {
    let (status, _, body) = get(w, path).await?;
    ensure!(status == 200, "{path}: {status} {body}");
    Ok(body)
}

async fn problem(w: &Worker, path: &str, want: u16) -> Result<Value> {
    let (status, content_type, body) = get(w, path).await?;
    ensure!(status == want, "{path}: wanted {want}, got {status} {body}");
    ensure!(content_type == "application/problem+json", "{path}: {content_type}");
    ensure!(body["status"] == want && body["type"].is_string() && body["instance"].is_string(), "{body}");
    Ok(body)
}

/// Percent-encodes a query value (every byte but the unreserved ones).
pub fn enc(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

async fn attribute(w: &Worker, source_url: &str, quote: &str) -> Result<Value> {
    ok(w, &format!("/api/attribute?source_url={}&quote={}", enc(source_url), enc(quote))).await
}

async fn id_of(w: &Worker, source_url: &str) -> Result<String> {
    let list = ok(w, "/api/episodes?limit=100").await?;
    let found = list["items"].as_array().unwrap().iter().find(|e| e["source_url"] == source_url);
    Ok(found.ok_or_else(|| anyhow::anyhow!("no episode {source_url}"))?["id"].as_str().unwrap().to_string())
}

pub async fn attribute_finds_a_verbatim_quote_from_any_spelling_of_the_url(w: Arc<Worker>) -> Result<()> {
    let spelling =
        "HTTP://WWW.commonplace.example/shows/kitchen-table/1-sourdough-slowly/?utm_source=feed#t=3";
    let answer = attribute(&w, spelling, "“The secret is PATIENCE — not some magic ingredient”").await?;
    ensure!(answer["found"] == true, "{answer}");
    ensure!(answer["speaker"] == "SPEAKER_01" && answer["name"] == "Ben Okafor", "{answer}");
    ensure!(answer["name_state"] == "confident", "elimination + language model: {answer}");
    ensure!(
        answer["exact"] == true && answer["crosses_speaker"] == false && answer["trust"] == "high",
        "{answer}"
    );
    ensure!(
        answer["segment_start_s"] == 18.9 && answer["pipeline"] == "whisperx-3.1+pyannote-3.1",
        "{answer}"
    );
    let start = answer["start_s"].as_f64().unwrap();
    ensure!(start > 18.9 && start < answer["end_s"].as_f64().unwrap(), "inside the segment: {answer}");
    ensure!(answer["episode"]["id"].as_str().unwrap().starts_with("ep_"), "{answer}");
    ensure!(
        answer["episode"]["title"] == "Sourdough, slowly" && answer["episode"]["source_url"] == SOURDOUGH
    );
    Ok(())
}

/// `%67` is `g` (RFC 3986 §6.2.2.2), so these spellings once answered 404.
pub async fn attribute_reads_escaped_unreserved_characters_as_plain_ones(w: Arc<Worker>) -> Result<()> {
    for spelling in [
        "https://commonplace.example/shows/kitchen%2Dtable/%31-sourdough-slowly",
        "https://commonplace.example/%73hows/kitchen-table/1-sourdough-slowly",
    ] {
        let answer = attribute(&w, spelling, "The secret is patience").await?;
        ensure!(
            answer["found"] == true && answer["episode"]["source_url"] == SOURDOUGH,
            "{spelling}: {answer}"
        );
    }
    let answer =
        attribute(&w, "https://changelog.com/%6Asparty/%32%39%39", "I started in tech about 9-10 years ago")
            .await?;
    ensure!(answer["found"] == true && answer["episode"]["source_url"] == JS_PARTY_299, "{answer}");
    Ok(())
}

pub async fn attribute_lands_on_word_times(w: Arc<Worker>) -> Result<()> {
    let answer = attribute(&w, SOURDOUGH, "today we are talking about sourdough").await?;
    ensure!(answer["start_s"] == 3.45 && answer["end_s"] == 6.1, "word times: {answer}");
    ensure!(answer["segment_start_s"] == 0.52 && answer["name"] == "Ana Lima", "{answer}");
    Ok(())
}

pub async fn attribute_flags_tails_speaker_changes_and_misses(w: Arc<Worker>) -> Result<()> {
    let tail =
        attribute(&w, SOURDOUGH, "Rye flour and water, equal weights, every evening before I go to bed")
            .await?;
    ensure!(tail["found"] == true && tail["exact"] == false && tail["trust"] == "review", "{tail}");
    let across = attribute(&w, SOURDOUGH, "What do you feed it? Rye flour and water").await?;
    ensure!(across["crosses_speaker"] == true && across["trust"] == "review", "{across}");
    ensure!(across["speakers"].as_array().map(Vec::len) == Some(2), "{across}");
    // `cite` named only the first of two speakers while the page's heading named both.
    let (first, second) = (across["speakers"][0]["name"].as_str(), across["speakers"][1]["name"].as_str());
    let both = format!("{}, then {}, “", first.unwrap_or_default(), second.unwrap_or_default());
    let cite = across["cite"].as_str().unwrap_or_default();
    ensure!(
        first.is_some() && second.is_some() && cite.starts_with(&both),
        "both speakers are cited: {across}"
    );
    let reasons = across["review_reasons"].to_string();
    ensure!(reasons.contains("crosses from one speaker to another"), "the answer says why: {across}");
    let asr_error = attribute(&w, SOURDOUGH, "a slow doe at room temperature tastes better").await?;
    ensure!(
        asr_error["found"] == true
            && asr_error["exact"] == false
            && asr_error["verbatim"] == false
            && asr_error["trust"] == "review",
        "{asr_error}"
    );
    let missing = attribute(&w, SOURDOUGH, "we should all eat more lentils on tuesdays").await?;
    ensure!(missing["found"] == false && missing["reason"] == "quote_not_found", "{missing}");
    ensure!(missing["episode"]["source_url"] == SOURDOUGH && missing.get("name").is_none(), "{missing}");
    Ok(())
}

pub async fn attribute_on_a_real_changelog_episode_keeps_its_licence(w: Arc<Worker>) -> Result<()> {
    let answer = attribute(
        &w,
        "changelog.com/jsparty/299",
        "I started in tech about 9-10 years ago, and self-taught developer",
    )
    .await?;
    ensure!(answer["found"] == true && answer["name"] == "Valerie Phoenix", "{answer}");
    ensure!(answer["name_state"] == "human" && answer["trust"] == "high", "{answer}");
    ensure!(answer["times_estimated"] == true, "Changelog times between anchors are estimates: {answer}");
    ensure!(answer["episode"]["licence"] == "CC-BY-SA-4.0", "{answer}");
    ensure!(answer["episode"]["attribution"].as_str().unwrap().contains("Changelog Media LLC"), "{answer}");
    let numbers = attribute(&w, JS_PARTY_299, "I started in tech about nine ten years ago").await?;
    ensure!(numbers["found"] == true && numbers["name"] == "Valerie Phoenix", "{numbers}");
    Ok(())
}

pub async fn attribute_without_source_url_searches_every_episode(w: Arc<Worker>) -> Result<()> {
    let everywhere = |quote: &str| format!("/api/attribute?quote={}", enc(quote));
    // Said once in the whole sample: the episode, the speaker and a citation come back.
    let answer =
        ok(&w, &everywhere("I started in tech about 9-10 years ago, and self-taught developer")).await?;
    ensure!(answer["found"] == true && answer["name"] == "Valerie Phoenix", "{answer}");
    ensure!(answer["episode"]["source_url"] == JS_PARTY_299 && answer["match"] == 1, "{answer}");
    ensure!(answer["trust"] == "high" && answer["edited"] == false, "{answer}");
    ensure!(answer["alternatives"].as_array().is_some_and(Vec::is_empty), "{answer}");
    let cite = answer["cite"].as_str().unwrap_or_default();
    ensure!(
        cite.starts_with("Valerie Phoenix, “")
            && cite.contains("JS Party")
            && cite.contains(", at about 0:04:40."),
        "{cite}"
    );
    ensure!(answer["listen_url"] == JS_PARTY_299, "no audio is known: the episode's page: {answer}");
    // Edited with an ellipsis: found, flagged, and never `high`.
    let edited = ok(&w, &everywhere("I started in tech … self-taught developer")).await?;
    ensure!(edited["found"] == true && edited["edited"] == true && edited["trust"] == "review", "{edited}");
    // Edited with a bracketed word for the speaker's own: the words outside it stand verbatim, but
    // the quote is not what was said.
    let bracketed = ok(&w, &everywhere("[Valerie] started in tech about 9-10 years ago")).await?;
    ensure!(bracketed["name"] == "Valerie Phoenix" && bracketed["edited"] == true, "{bracketed}");
    ensure!(bracketed["trust"] == "review" && bracketed["verbatim"] == true, "{bracketed}");
    // Its tail changed: found where most of its words were said, not verbatim, never `high`.
    let tail = ok(&w, &everywhere("I started in tech about 9-10 years ago, and purple giraffes")).await?;
    ensure!(tail["name"] == "Valerie Phoenix" && tail["exact"] == false, "{tail}");
    ensure!(tail["trust"] == "review" && tail["episode"]["source_url"] == JS_PARTY_299, "{tail}");
    // The episode names its audio: the link starts at the quote.
    let sourdough = ok(&w, &everywhere("the secret is patience, not some magic ingredient")).await?;
    let listen = sourdough["listen_url"].as_str().unwrap_or_default();
    ensure!(listen.starts_with("https://commonplace.example/audio/sourdough-slowly.mp3#t="), "{sourdough}");
    let nowhere = ok(&w, &everywhere("purple giraffes ride the tractor quietly")).await?;
    ensure!(nowhere["found"] == false && nowhere["reason"] == "quote_not_found", "{nowhere}");
    ensure!(nowhere.get("episode").is_none() && nowhere["match"] == 0, "{nowhere}");
    Ok(())
}

pub async fn attribute_bad_input_is_problem_json(w: Arc<Worker>) -> Result<()> {
    let src = enc(SOURDOUGH);
    let missing = problem(&w, &format!("/api/attribute?source_url={src}"), 400).await?;
    ensure!(missing["errors"][0]["field"] == "quote", "{missing}");
    problem(&w, &format!("/api/attribute?source_url={src}&quote=%20%20"), 400).await?;
    let long =
        problem(&w, &format!("/api/attribute?source_url={src}&quote={}", "a".repeat(2001)), 400).await?;
    ensure!(long["errors"][0]["reason"].as_str().unwrap().contains("2000"), "{long}");
    problem(&w, "/api/attribute?source_url=ftp%3A%2F%2Fx&quote=hello", 400).await?;
    let unknown =
        problem(&w, "/api/attribute?source_url=https%3A%2F%2Fexample.org%2Fnothing&quote=hello", 404).await?;
    ensure!(unknown["detail"].as_str().unwrap().contains("example.org/nothing"), "{unknown}");
    Ok(())
}

pub async fn shows_list_episode_counts_and_licences(w: Arc<Worker>) -> Result<()> {
    let shows = ok(&w, "/api/shows").await?;
    let items = shows["items"].as_array().unwrap();
    ensure!(items.len() >= 3 && shows["total"] == items.len(), "{shows}");
    let kitchen = items.iter().find(|s| s["id"] == "kitchen-table").unwrap();
    ensure!(kitchen["episode_count"] == 6 && kitchen["licence"] == "CC0-1.0", "{kitchen}");
    let jsparty = items.iter().find(|s| s["id"] == "jsparty").unwrap();
    ensure!(jsparty["licence"] == "CC-BY-SA-4.0" && jsparty["episode_count"] == 2, "{jsparty}");
    Ok(())
}

pub async fn episodes_page_with_a_cursor(w: Arc<Worker>) -> Result<()> {
    let all = ok(&w, "/api/episodes?limit=100").await?;
    let total = all["total"].as_u64().unwrap();
    ensure!(total >= 12 && all["next_cursor"].is_null(), "{all}");
    let mut seen = Vec::new();
    let mut path = "/api/episodes?limit=5".to_string();
    loop {
        let page = ok(&w, &path).await?;
        for item in page["items"].as_array().unwrap() {
            ensure!(
                item["licence"].is_string() && item["url"].as_str().unwrap().starts_with("/api/episodes/ep_")
            );
            seen.push(item["id"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/episodes?limit=5&cursor={cursor}"),
            None => break,
        }
    }
    ensure!(seen.len() as u64 == total, "{seen:?}");
    let kitchen = ok(&w, "/api/episodes?show=kitchen-table").await?;
    ensure!(kitchen["total"] == 6 && kitchen["show"] == "kitchen-table", "{kitchen}");
    problem(&w, "/api/episodes?limit=0", 400).await?;
    Ok(())
}

pub async fn episode_record_has_every_run_and_the_name_votes(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, SOURDOUGH).await?;
    let record = ok(&w, &format!("/api/episodes/{id}")).await?;
    let runs: Vec<&str> =
        record["runs"].as_array().unwrap().iter().map(|r| r["pipeline"].as_str().unwrap()).collect();
    ensure!(runs == ["assemblyai-best", "whisperx-3.1+pyannote-3.1"], "{runs:?}");
    ensure!(record["canonical_run"] == "whisperx-3.1+pyannote-3.1", "{record}");
    // The two runs disagree: AssemblyAI gives Ana's question to B, and B's votes disagree.
    ensure!(
        record["runs"][0]["segments"][2]["speaker"] == "B"
            && record["runs"][1]["segments"][2]["speaker"] == "SPEAKER_00"
    );
    ensure!(
        record["names"]["B"]["name"].is_null() && record["names"]["B"]["name_state"] == "withheld",
        "{record}"
    );
    let votes = record["names"]["SPEAKER_01"]["votes"].as_array().unwrap();
    ensure!(votes.iter().any(|v| v["source"] == "elimination" && v["name"] == "Ben Okafor"), "{votes:?}");
    ensure!(record["downloads"]["webvtt"] == format!("/episodes/{id}/transcript.vtt"), "{record}");
    problem(&w, "/api/episodes/ep_aaaaaaaaaa", 404).await?;
    problem(&w, "/api/episodes/not-an-id", 404).await?;
    Ok(())
}

pub async fn transcript_narrows_by_speaker_and_window_and_echoes_filters(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, SOURDOUGH).await?;
    let whole = ok(&w, &format!("/api/episodes/{id}/transcript")).await?;
    ensure!(whole["segments"].as_array().unwrap().len() == 6, "{whole}");
    ensure!(whole["filters"] == serde_json::json!({"speaker": null, "from": null, "to": null}), "{whole}");
    let slice = ok(&w, &format!("/api/episodes/{id}/transcript?speaker=ben%20okafor&from=10&to=20")).await?;
    ensure!(
        slice["filters"] == serde_json::json!({"speaker": "ben okafor", "from": 10.0, "to": 20.0}),
        "{slice}"
    );
    let segments = slice["segments"].as_array().unwrap();
    ensure!(segments.len() == 2, "{slice}");
    ensure!(segments[0]["start_s"] == 10.0 && segments[0]["end_s"] == 14.2 && segments[0]["clipped"] == true);
    ensure!(segments[1]["start_s"] == 18.9 && segments[1]["end_s"] == 20.0, "{slice}");
    ensure!(segments.iter().all(|s| s["name"] == "Ben Okafor" && s["name_state"] == "confident"));
    let nobody = ok(&w, &format!("/api/episodes/{id}/transcript?speaker=Nobody")).await?;
    ensure!(nobody["segments"].as_array().unwrap().is_empty() && nobody["filters"]["speaker"] == "Nobody");
    let bad = problem(&w, &format!("/api/episodes/{id}/transcript?from=30&to=10"), 400).await?;
    ensure!(bad["errors"][0]["field"] == "from", "{bad}");
    problem(&w, &format!("/api/episodes/{id}/transcript?from=abc"), 400).await?;
    problem(&w, "/api/episodes/ep_aaaaaaaaaa/transcript", 404).await?;
    Ok(())
}

/// While no editor's decision about an episode is on record, its whole transcript and its page are
/// the files the build wrote, byte for byte: R2's body goes to the answer as it is.
pub async fn built_transcripts_and_pages_are_answered_byte_for_byte(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, JS_PARTY_299).await?;
    let two_runs = id_of(&w, SOURDOUGH).await?;
    let dist = tests::root().join("dist");
    for (path, built, content_type) in [
        (format!("/api/episodes/{id}/transcript"), built_view_path(&id), "application/json; charset=utf-8"),
        (format!("/episodes/{id}"), built_episode_page(&id), "text/html; charset=utf-8"),
        (format!("/episodes/{two_runs}/compare"), built_compare_page(&two_runs), "text/html; charset=utf-8"),
    ] {
        let built = std::fs::read(dist.join(&built))?;
        let response = reqwest::get(w.url(&path)).await?;
        let headers = response.headers().clone();
        ensure!(response.status() == 200, "{path}: {}", response.status());
        ensure!(headers.get("content-type").is_some_and(|t| t == content_type), "{path}: its type");
        // A length, where the runtime sends one, is the file's: R2 answered the whole range.
        let length =
            headers.get("content-length").map(|length| length.to_str().unwrap_or_default().to_string());
        ensure!(length.is_none_or(|length| length == built.len().to_string()), "{path}: its length");
        ensure!(response.bytes().await?[..] == built[..], "{path} is not the file the build wrote");
    }
    // The comparison the build stored is the page the Worker makes of the same pair asked for by name.
    let record = ok(&w, &format!("/api/episodes/{two_runs}")).await?;
    let canonical = record["canonical_run"].as_str().context("no canonical run")?;
    let runs = record["runs"].as_array().context("no runs")?;
    let other = runs.iter().filter_map(|run| run["pipeline"].as_str()).find(|p| *p != canonical);
    let other = enc(other.context("one run only")?);
    let named = format!("/episodes/{two_runs}/compare?a={}&b={other}", enc(canonical));
    let made = reqwest::get(w.url(&named)).await?;
    ensure!(made.status() == 200, "{named}: {}", made.status());
    let built = std::fs::read(dist.join(built_compare_page(&two_runs)))?;
    ensure!(made.bytes().await?[..] == built[..], "{named} is not the page the build stored");
    Ok(())
}

pub async fn speakers_share_speech_time_not_the_window(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, SOURDOUGH).await?;
    let stats = ok(&w, &format!("/api/episodes/{id}/speakers?from=0&to=100")).await?;
    let speakers = stats["speakers"].as_array().unwrap();
    ensure!(speakers.len() == 2, "{stats}");
    let share: f64 = speakers.iter().map(|s| s["share"].as_f64().unwrap()).sum();
    ensure!((share - 1.0).abs() < 0.001, "shares of speech sum to one even with a 100 s window: {stats}");
    let speech: f64 = speakers.iter().map(|s| s["seconds"].as_f64().unwrap()).sum();
    ensure!((speech - stats["speech_s"].as_f64().unwrap()).abs() < 0.01 && speech < 41.0, "{stats}");
    let ben = speakers.iter().find(|s| s["speaker"] == "SPEAKER_01").unwrap();
    ensure!(ben["segments"] == 3 && ben["first_s"] == 6.8 && ben["last_s"] == 41.0, "{ben}");
    ensure!(stats["window"] == serde_json::json!({"from": 0.0, "to": 100.0}), "{stats}");
    // a window without speech once answered `"speech_s": -0.0`.
    let silent = ok(&w, &format!("/api/episodes/{id}/speakers?from=100&to=200")).await?;
    ensure!(silent["speech_s"] == 0.0 && silent["speakers"] == serde_json::json!([]), "{silent}");
    ensure!(silent["speech_s"].as_f64().is_some_and(f64::is_sign_positive), "no negative zero: {silent}");
    problem(&w, &format!("/api/episodes/{id}/speakers?from=9&to=1"), 400).await?;
    problem(&w, &format!("/api/episodes/{id}/speakers?speaker=x"), 400).await?;
    Ok(())
}

/// Searches and attributions running at once in the one isolate share its phrase index and cache
/// (`edge/src/index.rs`): each answers exactly what it answers alone.
pub async fn phrase_reads_at_once_answer_as_they_do_alone(w: Arc<Worker>) -> Result<()> {
    let paths: Vec<String> = [
        "q=the",
        "q=is+the",
        "q=patience+is+the+one+thing",
        "q=tech+by+choice",
        "q=sourdough",
        "q=we&limit=100",
        "q=the&speaker=Valerie+Phoenix",
        "speaker=dora+salgado",
        "q=and+the+a+zebra",
    ]
    .iter()
    .map(|query| format!("/api/search?{query}"))
    .chain(["/api/attribute?quote=patience+is+the+one+thing".to_string()])
    .collect();
    let together = join_all(paths.iter().map(|path| ok(&w, path))).await;
    let mut paged = 0;
    for (path, answer) in paths.iter().zip(together) {
        let answer = answer?;
        let alone = ok(&w, path).await?;
        ensure!(answer == alone, "{path} answered differently at once:\n{answer}\nalone:\n{alone}");
        paged += usize::from(answer["hits"].as_array().is_some_and(|hits| hits.len() == 10));
    }
    ensure!(paged >= 2, "common words fill a page of ten by default");
    Ok(())
}

pub async fn search_finds_phrases_with_speakers_and_lists_a_person(w: Arc<Worker>) -> Result<()> {
    let hits = ok(&w, "/api/search?q=%E2%80%9Cpatience+is+the+one+thing%E2%80%9D").await?;
    ensure!(hits["total"] == 1, "{hits}");
    let hit = &hits["hits"][0];
    ensure!(
        hit["speaker"] == "SPEAKER_00"
            && hit["name"] == "Ana Lima"
            && hit["episode"]["title"] == "Sourdough, slowly"
    );
    let real = ok(&w, "/api/search?q=tech+by+choice&speaker=Valerie+Phoenix").await?;
    ensure!(real["total"].as_u64().unwrap() >= 2 && real["speaker"] == "Valerie Phoenix", "{real}");
    ensure!(
        real["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["name"] == "Valerie Phoenix" && h["episode"]["licence"] == "CC-BY-SA-4.0")
    );
    // `speaker` alone lists everything the person said, page by page.
    let mut seen = 0;
    let mut path = "/api/search?speaker=dora+salgado&limit=1".to_string();
    loop {
        let page = ok(&w, &path).await?;
        seen += page["hits"].as_array().unwrap().len();
        ensure!(page["q"].is_null() && page["total"] == 2, "{page}");
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/search?speaker=dora+salgado&limit=1&cursor={cursor}"),
            None => break,
        }
    }
    ensure!(seen == 2, "{seen}");
    let nobody = ok(&w, "/api/search?q=sourdough&speaker=Nobody").await?;
    ensure!(nobody["total"] == 0 && nobody["speaker"] == "Nobody", "{nobody}");
    problem(&w, "/api/search", 400).await?;
    problem(&w, &format!("/api/search?q={}", "a".repeat(201)), 400).await?;
    Ok(())
}

pub async fn transcripts_download_as_webvtt_and_podcasting20(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, JS_PARTY_299).await?;
    let (status, _, vtt) = get(&w, &format!("/episodes/{id}/transcript.vtt")).await?;
    let vtt = vtt.as_str().unwrap_or_default().to_string();
    ensure!(status == 200 && vtt.starts_with("WEBVTT") && vtt.contains("CC-BY-SA-4.0"), "{status}");
    ensure!(vtt.contains("<v Valerie Phoenix>"), "voices are named");
    let p20 = ok(&w, &format!("/episodes/{id}/transcript.p20.json")).await?;
    ensure!(
        p20["version"] == "1.0.0"
            && p20["licence"] == "CC-BY-SA-4.0"
            && p20["segments"][0]["startTime"].is_number()
    );
    let (status, _, jsonl) = get(&w, "/episodes.jsonl").await?;
    let jsonl = jsonl.as_str().map(str::to_string).unwrap_or_else(|| jsonl.to_string());
    ensure!(status == 200 && jsonl.lines().count() >= 12, "{status}");
    for line in jsonl.lines() {
        let episode: Value = serde_json::from_str(line)?;
        ensure!(episode["licence"].is_string(), "every line has its licence");
    }
    let (_, _, llms) = get(&w, "/llms.txt").await?;
    ensure!(
        llms.as_str().unwrap_or_default().contains("## Quote attribution"),
        "llms.txt has the quote section"
    );
    Ok(())
}

const GO_TIME_52: &str = "https://changelog.com/gotime/52";
const JS_PARTY_40: &str = "https://changelog.com/jsparty/40";

/// "Which one was the best recipe" is said by two people in one episode, sixteen seconds apart. With
/// the episode's address it once answered the first with `trust: high` and no `match` or
/// `alternatives`; both ways of asking now name the same place, the first, count two places and list
/// the other, and leave the name to a person.
pub async fn a_quote_two_people_said_in_one_episode_is_never_high(w: Arc<Worker>) -> Result<()> {
    let quote = "which one was the best recipe";
    let asked = attribute(&w, GO_TIME_52, quote).await?;
    let everywhere = ok(&w, &format!("/api/attribute?quote={}", enc(quote))).await?;
    for answer in [&asked, &everywhere] {
        ensure!(answer["found"] == true && answer["trust"] == "review" && answer["match"] == 2, "{answer}");
        ensure!(answer["name"] == "David Chase" && answer["verbatim"] == true, "{answer}");
        let alternatives = answer["alternatives"].as_array().unwrap();
        ensure!(alternatives.len() == 1 && alternatives[0]["name"] == "Ashley McNamara", "{answer}");
        ensure!(alternatives[0]["episode"]["source_url"] == GO_TIME_52, "{answer}");
    }
    ensure!(asked["start_s"] == everywhere["start_s"], "the same place:\n{asked}\n{everywhere}");
    // Said once: the one place, nothing else, and `high` (a name an editor's source made human).
    let once = attribute(&w, JS_PARTY_299, "I started in tech about 9-10 years ago").await?;
    ensure!(once["match"] == 1 && once["alternatives"] == serde_json::json!([]), "{once}");
    ensure!(once["trust"] == "high", "{once}");
    // Not found in the episode asked about: none, and no alternatives.
    let missing = attribute(&w, GO_TIME_52, "purple giraffes ride the tractor quietly").await?;
    ensure!(missing["found"] == false && missing["match"] == 0, "{missing}");
    ensure!(missing["alternatives"] == serde_json::json!([]), "{missing}");
    Ok(())
}

/// A quote with a word changed answered `exact: true` beside `verbatim: false`.
pub async fn a_changed_word_is_neither_exact_nor_verbatim(w: Arc<Worker>) -> Result<()> {
    let changed =
        attribute(&w, JS_PARTY_299, "I started in tech about 9-10 months ago, and self-taught developer")
            .await?;
    ensure!(changed["found"] == true && changed["name"] == "Valerie Phoenix", "{changed}");
    ensure!(changed["exact"] == false && changed["verbatim"] == false, "{changed}");
    ensure!(changed["trust"] == "review", "{changed}");
    let whole = attribute(&w, JS_PARTY_299, "I started in tech about 9-10 years ago").await?;
    ensure!(whole["exact"] == true && whole["verbatim"] == true, "{whole}");
    Ok(())
}

/// The same place was `times_estimated: false` from `/api/attribute` and `true` from `/api/search`,
/// though its start was interpolated inside a turn with no word times.
pub async fn times_estimated_agrees_between_attribute_and_search(w: Arc<Worker>) -> Result<()> {
    let phrase = "started in tech about 9-10 years ago";
    let answer = attribute(&w, JS_PARTY_299, phrase).await?;
    let hits = ok(&w, &format!("/api/search?q={}", enc(phrase))).await?;
    ensure!(hits["total"] == 1, "{hits}");
    let hit = &hits["hits"][0];
    ensure!(answer["times_estimated"] == true && hit["times_estimated"] == true, "{answer}\n{hit}");
    let (a, h) = (answer["start_s"].as_f64().unwrap(), hit["start_s"].as_f64().unwrap());
    ensure!((a - h).abs() < 0.01, "one place, one time: {a} and {h}");
    // A turn's measured start is no estimate: a quote from a turn's first word starts there.
    let transcript = ok(&w, &format!("/api/episodes/{}/transcript", id_of(&w, JS_PARTY_299).await?)).await?;
    let turn = transcript["segments"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|s| s["text"].as_str().unwrap_or_default().len())
        .unwrap();
    let first_words: Vec<&str> = turn["text"].as_str().unwrap().split_whitespace().take(10).collect();
    let from_start = attribute(&w, JS_PARTY_299, &first_words.join(" ")).await?;
    ensure!(from_start["start_s"] == turn["start_s"], "{from_start}\n{turn}");
    Ok(())
}

/// `from=…&to=…` returned an empty clipped turn at `to` (a turn that starts where the window ends),
/// and the speakers call counted its speaker with 0 s and 1 segment.
pub async fn a_turn_that_only_touches_the_window_is_not_in_it(w: Arc<Worker>) -> Result<()> {
    let id = id_of(&w, JS_PARTY_299).await?;
    let whole = ok(&w, &format!("/api/episodes/{id}/transcript")).await?;
    let turns = whole["segments"].as_array().unwrap();
    let (from, to) = (turns[3]["end_s"].as_f64().unwrap(), turns[9]["start_s"].as_f64().unwrap());
    let slice = ok(&w, &format!("/api/episodes/{id}/transcript?from={from}&to={to}")).await?;
    let inside = slice["segments"].as_array().unwrap();
    ensure!(!inside.is_empty(), "{slice}");
    for turn in inside {
        let (start, end) = (turn["start_s"].as_f64().unwrap(), turn["end_s"].as_f64().unwrap());
        ensure!(start < to && end > from && !turn["text"].as_str().unwrap().is_empty(), "{turn}");
    }
    let stats = ok(&w, &format!("/api/episodes/{id}/speakers?from={from}&to={to}")).await?;
    let counted: usize =
        stats["speakers"].as_array().unwrap().iter().map(|s| s["segments"].as_u64().unwrap() as usize).sum();
    ensure!(counted == inside.len(), "{stats}");
    ensure!(
        stats["speakers"].as_array().unwrap().iter().all(|s| s["seconds"].as_f64().unwrap() > 0.0),
        "{stats}"
    );
    Ok(())
}

/// `speaker` alone left out turns without a word to search (`[laughs]`, `Mm-hmm.`), though the seed
/// lists "everything that person said".
pub async fn speaker_alone_lists_turns_without_searchable_words(w: Arc<Worker>) -> Result<()> {
    let mut path = "/api/search?speaker=Suz+Hinton&limit=100".to_string();
    let mut laughs = 0;
    loop {
        let page = ok(&w, &path).await?;
        laughs += page["hits"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|hit| hit["text"] == "[laughs]" && hit["episode"]["source_url"] == JS_PARTY_40)
            .count();
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/search?speaker=Suz+Hinton&limit=100&cursor={cursor}"),
            None => break,
        }
    }
    ensure!(laughs == 1, "the turn `[laughs]` at 2764.4 s is listed once: {laughs}");
    Ok(())
}
