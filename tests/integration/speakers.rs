//! Speaker names set by editors through the real Worker: who may set one (401 without a key,
//! 403 without the editor role), every quote answer showing a decision at once, the decision feed, and
//! `builder sync` committing each decision into the episode's names.json.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use tests::kitchen::key_for;
use tests::{Config, Worker, send_safe};

const SOURDOUGH: &str = "https://commonplace.example/shows/kitchen-table/1-sourdough-slowly";
const SOURDOUGH_DIR: &str = "content/shows/kitchen-table/sourdough-slowly";

struct Answer {
    status: u16,
    body: Value,
}

async fn put(w: &Worker, key: Option<&str>, path: &str, body: Value) -> Result<Answer> {
    let mut request = reqwest::Client::new().put(w.url(path)).json(&body);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    let text = response.text().await?;
    Ok(Answer { status, body: serde_json::from_str(&text).unwrap_or(Value::String(text)) })
}

async fn get(w: &Worker, path: &str) -> Result<Value> {
    get_as(w, None, path).await
}

async fn get_as(w: &Worker, key: Option<&str>, path: &str) -> Result<Value> {
    let mut request = reqwest::Client::new().get(w.url(path));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = send_safe(request).await?;
    ensure!(response.status() == 200, "{path}: {}", response.status());
    Ok(response.json().await?)
}

async fn episode_id(w: &Worker) -> Result<String> {
    let list = get(w, "/api/episodes?limit=100").await?;
    let found = list["items"].as_array().unwrap().iter().find(|e| e["source_url"] == SOURDOUGH);
    Ok(found.context("no sourdough episode")?["id"].as_str().unwrap().to_string())
}

/// A key whose account has the `editor` role (no route grants a role; an operator does it in D1).
async fn editor_key(w: &Worker, handle: &str) -> Result<String> {
    let key = key_for(w, handle).await?;
    w.d1_execute(&format!("UPDATE accounts SET role = 'editor' WHERE handle = '{handle}'"))?;
    Ok(key)
}

pub async fn speaker_names_need_a_key_and_the_editor_role(w: Arc<Worker>) -> Result<()> {
    let id = episode_id(&w).await?;
    let path = format!("/api/episodes/{id}/speakers/SPEAKER_01");
    let body = json!({"name": "Someone Else", "note": "a test"});

    let anonymous = put(&w, None, &path, body.clone()).await?;
    ensure!(anonymous.status == 401, "{} {}", anonymous.status, anonymous.body);
    let cook = key_for(&w, "speaker-cook").await?;
    let forbidden = put(&w, Some(&cook), &path, body.clone()).await?;
    ensure!(forbidden.status == 403, "{} {}", forbidden.status, forbidden.body);
    ensure!(forbidden.body["detail"].as_str().unwrap().contains("editor role"), "{}", forbidden.body);

    let editor = editor_key(&w, "speaker-checker").await?;
    let unknown =
        put(&w, Some(&editor), &format!("/api/episodes/{id}/speakers/SPEAKER_09"), body.clone()).await?;
    ensure!(unknown.status == 404, "{} {}", unknown.status, unknown.body);
    let invalid = put(&w, Some(&editor), &path, json!({"name": " ", "who": 1})).await?;
    ensure!(invalid.status == 422, "{} {}", invalid.status, invalid.body);
    let fields: Vec<&str> =
        invalid.body["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
    ensure!(fields == ["who", "name"], "{fields:?}");
    // A name that would reorder the text around it, and a note with a bell in it.
    let hidden =
        put(&w, Some(&editor), &path, json!({"name": "Ben\u{202E} Okafor", "note": "ding\u{7}"})).await?;
    ensure!(hidden.status == 422, "{} {}", hidden.status, hidden.body);
    let fields: Vec<&str> =
        hidden.body["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
    ensure!(fields == ["name", "note"], "{fields:?}");

    // Nothing was stored by any of these: the shared worker's names are as built.
    let transcript = get(&w, &format!("/api/episodes/{id}/transcript?speaker=Ben+Okafor")).await?;
    ensure!(!transcript["segments"].as_array().unwrap().is_empty(), "{transcript}");
    Ok(())
}

fn builder(args: &[&str]) -> Result<String> {
    let bin = tests::builder_bin();
    let output =
        Command::new(&bin).args(args).output().with_context(|| format!("running {}", bin.display()))?;
    ensure!(output.status.success(), "builder {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    Ok(String::from_utf8_lossy(&output.stderr).to_string())
}

/// A content repo holding the sourdough episode and its show, as built (`show.json`, the episode's
/// records and runs).
fn init_repo(repo_dir: &Path) -> Result<()> {
    let show = Path::new(SOURDOUGH_DIR).parent().context("the show's folder")?;
    std::fs::create_dir_all(repo_dir.join(show))?;
    // No recipes: the folder a build reads them from, empty.
    std::fs::create_dir_all(repo_dir.join("content/recipes"))?;
    std::fs::copy(tests::root().join(show).join("show.json"), repo_dir.join(show).join("show.json"))?;
    let copied = Command::new("cp")
        .arg("-r")
        .arg(tests::root().join(SOURDOUGH_DIR))
        .arg(repo_dir.join(show))
        .output()?;
    ensure!(copied.status.success(), "cp: {}", String::from_utf8_lossy(&copied.stderr));
    let repo = git2::Repository::init(repo_dir)?;
    let mut index = repo.index()?;
    index.add_all(["content"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig =
        git2::Signature::new("commonplace", "site@commonplace.invalid", &git2::Time::new(1_700_000_000, 0))?;
    repo.commit(Some("HEAD"), &sig, &sig, "Add the sourdough episode", &tree, &[])?;
    Ok(())
}

pub async fn an_editors_speaker_name_shows_at_once_and_syncs_to_git() -> Result<()> {
    // A worker of its own: the decision must not leak into the other tests' answers.
    let w = Worker::start().await?;
    let id = episode_id(&w).await?;
    let editor = editor_key(&w, "speaker-editor").await?;
    let named = put(
        &w,
        Some(&editor),
        &format!("/api/episodes/{id}/speakers/SPEAKER_01"),
        json!({"name": "Benedict Okafor", "note": "his full name, from the show notes"}),
    )
    .await?;
    ensure!(named.status == 200, "{} {}", named.status, named.body);
    ensure!(named.body["name_state"] == "human" && named.body["name"] == "Benedict Okafor", "{}", named.body);
    ensure!(named.body["human"]["by"] == "speaker-editor", "{}", named.body);
    // `B` of the other run was withheld (its sources disagree); a person settles it.
    let settled =
        put(&w, Some(&editor), &format!("/api/episodes/{id}/speakers/B"), json!({"name": "Ben Okafor"}))
            .await?;
    ensure!(settled.status == 200, "{} {}", settled.status, settled.body);

    // Every answer that names speakers shows the decision at once.
    let transcript = get(&w, &format!("/api/episodes/{id}/transcript?from=7&to=10")).await?;
    let segment = &transcript["segments"][0];
    ensure!(segment["speaker"] == "SPEAKER_01" && segment["name"] == "Benedict Okafor", "{transcript}");
    ensure!(segment["name_state"] == "human", "{transcript}");
    let speakers = get(&w, &format!("/api/episodes/{id}/speakers")).await?;
    let guest =
        speakers["speakers"].as_array().unwrap().iter().find(|s| s["speaker"] == "SPEAKER_01").unwrap();
    ensure!(guest["name"] == "Benedict Okafor" && guest["name_state"] == "human", "{speakers}");
    let quote = "I've kept the same starter alive for 12 years";
    let attribution = get(
        &w,
        &format!(
            "/api/attribute?source_url={}&quote={}",
            url::form_urlencoded::byte_serialize(SOURDOUGH.as_bytes()).collect::<String>(),
            url::form_urlencoded::byte_serialize(quote.as_bytes()).collect::<String>()
        ),
    )
    .await?;
    ensure!(
        attribution["name"] == "Benedict Okafor" && attribution["name_state"] == "human",
        "{attribution}"
    );
    ensure!(attribution["trust"] == "high", "{attribution}");
    let search = get(&w, "/api/search?q=outlived+two+ovens").await?;
    let hit = &search["hits"][0];
    ensure!(hit["name"] == "Benedict Okafor" && hit["name_state"] == "human", "{search}");
    let record = get(&w, &format!("/api/episodes/{id}")).await?;
    ensure!(record["names"]["B"]["name_state"] == "human", "{}", record["names"]);
    // The runs compared, whose page the build stored with the names it had, now name them too.
    let compared = reqwest::get(w.url(&format!("/episodes/{id}/compare"))).await?.text().await?;
    ensure!(compared.contains("Benedict Okafor (SPEAKER_01, decided by an editor)"), "{compared}");
    ensure!(
        record["names"]["SPEAKER_01"]["human"]["note"] == "his full name, from the show notes",
        "{}",
        record["names"]
    );

    // The public feed lists both decisions, oldest first.
    let feed = get(&w, "/api/episodes/changes?since=0").await?;
    let labels: Vec<&str> =
        feed["items"].as_array().unwrap().iter().filter_map(|i| i["label"].as_str()).collect();
    ensure!(labels == ["SPEAKER_01", "B"], "{feed}");

    // `builder sync` commits each decision into names.json; a rerun commits nothing.
    let dir = tests::root().join(format!("tests/.work/speakers-sync-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo_dir = dir.join("repo");
    init_repo(&repo_dir)?;
    let repo_arg = repo_dir.to_string_lossy().to_string();
    builder(&["sync", "--api", &w.base, "--repo", &repo_arg])?;
    commits_of_the_decisions(&w.base, &repo_dir)?;

    // A contributor then names the guest otherwise in git, and the next build publishes it: the build
    // says it holds both decisions, so the one in D1 no longer overrides what git says now.
    let names_path = repo_dir.join(SOURDOUGH_DIR).join("names.json");
    let mut names: Value = serde_json::from_slice(&std::fs::read(&names_path)?)?;
    names["labels"]["SPEAKER_01"]["human"]["name"] = json!("Benedict O. Okafor");
    std::fs::write(&names_path, serde_json::to_string_pretty(&names)? + "\n")?;
    let out = dir.join("dist");
    let content = repo_dir.join("content").to_string_lossy().to_string();
    builder(&["build", "--content", &content, "--out", &out.to_string_lossy()])?;
    let feed = feed["feed"].as_str().context("the feed's id")?;
    let synced: Value = serde_json::from_slice(&std::fs::read(out.join("episodes/decisions.json"))?)?;
    ensure!(synced == json!({"synced_seq": 2, "feed": feed}), "{synced}");
    let guest_name = |transcript: &Value| {
        let segments = transcript["segments"].as_array().cloned().unwrap_or_default();
        segments.iter().find(|s| s["speaker"] == "SPEAKER_01").map(|s| s["name"].clone())
    };
    let state = w.stop_keeping_state();
    let w = Worker::start_with(Config { out: Some(out.clone()), state: Some(state), ..Config::default() })
        .await?;
    let transcript = get(&w, &format!("/api/episodes/{id}/transcript")).await?;
    ensure!(guest_name(&transcript) == Some(json!("Benedict O. Okafor")), "{transcript}");
    let page = reqwest::get(w.url(&format!("/episodes/{id}"))).await?.text().await?;
    ensure!(page.contains("Benedict O. Okafor"), "the page shows the name git holds now");
    let compared = reqwest::get(w.url(&format!("/episodes/{id}/compare"))).await?.text().await?;
    ensure!(
        compared.contains("Benedict O. Okafor (SPEAKER_01, decided by an editor)"),
        "the comparison shows the name git holds now: {compared}"
    );

    // The same content as synced from another site, built beside the running Worker: that position
    // means nothing to this database, whose every decision is laid over the new build once the
    // Worker reads it; a decision after it shows at once.
    let state_path = repo_dir.join("content/.sync-state");
    let mut sync_state: Value = serde_json::from_slice(&std::fs::read(&state_path)?)?;
    sync_state["speaker_feed"] = json!("another-site");
    std::fs::write(&state_path, sync_state.to_string())?;
    builder(&["build", "--content", &content, "--out", &out.to_string_lossy()])?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let transcript = get(&w, &format!("/api/episodes/{id}/transcript")).await?;
        if guest_name(&transcript) == Some(json!("Benedict Okafor")) {
            break;
        }
        ensure!(std::time::Instant::now() < deadline, "the new build's position still counts: {transcript}");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    let again =
        put(&w, Some(&editor), &format!("/api/episodes/{id}/speakers/SPEAKER_01"), json!({"name": "Ben O."}))
            .await?;
    ensure!(again.status == 200, "{} {}", again.status, again.body);
    let transcript = get(&w, &format!("/api/episodes/{id}/transcript")).await?;
    ensure!(guest_name(&transcript) == Some(json!("Ben O.")), "{transcript}");
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// `builder sync` from the worker at `base` into the repo at `repo_dir` committed each decision into
/// names.json, by its editor, with its note; a second sync commits nothing.
fn commits_of_the_decisions(base: &str, repo_dir: &Path) -> Result<()> {
    let repo_arg = repo_dir.to_string_lossy().to_string();
    let repo = git2::Repository::open(repo_dir)?;
    let head = repo.head()?.peel_to_commit()?;
    ensure!(
        head.summary() == Some("Name B as Ben Okafor in content/shows/kitchen-table/sourdough-slowly"),
        "{:?}",
        head.summary()
    );
    ensure!(head.author().name() == Some("speaker-editor"), "{:?}", head.author().name());
    let first = head.parent(0)?;
    ensure!(
        first.message().unwrap_or_default().contains("his full name, from the show notes"),
        "{:?}",
        first.message()
    );
    let names: Value =
        serde_json::from_slice(&std::fs::read(repo_dir.join(SOURDOUGH_DIR).join("names.json"))?)?;
    ensure!(names["labels"]["SPEAKER_01"]["human"]["name"] == "Benedict Okafor", "{names}");
    ensure!(
        names["labels"]["SPEAKER_01"]["votes"].as_array().unwrap().len() == 2,
        "the votes were kept: {names}"
    );
    ensure!(names["labels"]["B"]["human"]["by"] == "speaker-editor", "{names}");
    builder(&["sync", "--api", base, "--repo", &repo_arg])?;
    ensure!(repo.head()?.peel_to_commit()?.id() == head.id(), "a second sync committed again");
    Ok(())
}

/// A decision another isolate stored: this isolate learns of it from the feed, at most a second after
/// it last looked, while a request with a key asks D1 and shows it at once (the rule recipe writes
/// follow too).
pub async fn a_decision_stored_elsewhere_reaches_readers_within_a_second() -> Result<()> {
    let w = Worker::start().await?;
    let editor = editor_key(&w, "olive-editor").await?;
    let search = "/api/search?q=makes+you+cough";
    let before = get(&w, search).await?;
    let hit = &before["hits"][0];
    ensure!(hit["speaker"] == "Dora Salgado" && hit["name"] == "Dora Salgado", "{before}");
    let id = hit["episode"]["id"].as_str().context("a hit's episode")?.to_string();

    // The row reaches D1 without passing through this Worker, as another isolate's write would.
    let account = w.d1_query("SELECT id FROM accounts WHERE handle = 'olive-editor'")?;
    let account_id = account[0]["id"].as_i64().context("the editor's account")?;
    w.d1_execute(&format!(
        "INSERT INTO speaker_decisions (episode_id, label, name, note, account_id, editor, at) \
         VALUES ('{id}', 'Dora Salgado', 'Dora Salgado Pires', NULL, {account_id}, 'olive-editor', \
         '2026-11-24T10:00:00Z')"
    ))?;
    let keyed = get_as(&w, Some(&editor), search).await?;
    ensure!(keyed["hits"][0]["name"] == "Dora Salgado Pires", "a keyed search missed it: {keyed}");
    ensure!(keyed["hits"][0]["name_state"] == "human", "{keyed}");
    let transcript = get_as(&w, Some(&editor), &format!("/api/episodes/{id}/transcript?from=5&to=9")).await?;
    ensure!(transcript["segments"][0]["name"] == "Dora Salgado Pires", "{transcript}");

    // Without a key: within a second of the isolate's last look (polled a little longer, since the
    // requests themselves take time on a loaded machine).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let anonymous = get(&w, search).await?;
        if anonymous["hits"][0]["name"] == "Dora Salgado Pires" {
            ensure!(anonymous["hits"][0]["name_state"] == "human", "{anonymous}");
            break;
        }
        ensure!(std::time::Instant::now() < deadline, "readers never saw the decision: {anonymous}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let record = get(&w, &format!("/api/episodes/{id}")).await?;
    ensure!(record["names"]["Dora Salgado"]["name"] == "Dora Salgado Pires", "{}", record["names"]);
    Ok(())
}
