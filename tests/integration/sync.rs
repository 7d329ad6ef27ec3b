//! `builder sync`: the change feed becomes one git commit per change in a content repo; a rerun
//! commits nothing; a build from that repo publishes exactly what the API served, with history.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, ensure};
use serde_json::Value;
use tests::Worker;
use tests::kitchen::key_for;

use crate::recipes_write::{Api, recipe};

pub fn builder(args: &[&str]) -> Result<String> {
    let bin = tests::builder_bin();
    let output =
        Command::new(&bin).args(args).output().with_context(|| format!("running {}", bin.display()))?;
    ensure!(output.status.success(), "builder {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    Ok(String::from_utf8_lossy(&output.stdout).to_string())
}

/// A content repo with one commit holding the built hummus recipe; returns that commit.
pub fn init_repo(repo_dir: &Path) -> Result<String> {
    std::fs::create_dir_all(repo_dir.join("content/recipes"))?;
    let repo = git2::Repository::init(repo_dir)?;
    std::fs::copy(
        tests::root().join("content/recipes/hummus.json"),
        repo_dir.join("content/recipes/hummus.json"),
    )?;
    let mut index = repo.index()?;
    index.add_path(Path::new("content/recipes/hummus.json"))?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig =
        git2::Signature::new("commonplace", "site@commonplace.invalid", &git2::Time::new(1_700_000_000, 0))?;
    Ok(repo.commit(Some("HEAD"), &sig, &sig, "Add hummus", &tree, &[])?.to_string())
}

pub struct Entry {
    pub id: String,
    pub author: String,
    pub summary: String,
}

/// The repo's commits, newest first.
pub fn log(repo_dir: &Path) -> Result<Vec<Entry>> {
    let repo = git2::Repository::open(repo_dir)?;
    let mut walk = repo.revwalk()?;
    walk.push_head()?;
    walk.map(|id| {
        let commit = repo.find_commit(id?)?;
        Ok(Entry {
            id: commit.id().to_string(),
            author: commit.author().name().unwrap_or_default().to_string(),
            summary: commit.summary().unwrap_or_default().to_string(),
        })
    })
    .collect()
}

pub async fn sync_commits_each_change_and_the_next_build_publishes_it() -> Result<()> {
    // A worker of its own, so its feed holds only this test's changes.
    let w = Worker::start().await?;
    let api = Api::new(&w, &key_for(&w, "syncer").await?);
    let slaw = api.create(&recipe("Sync Slaw")).await?.body["slug"].as_str().unwrap().to_string();
    let changed = api.change(&slaw, &recipe("Sync Slaw"), "Less salt", Some(1)).await?;
    ensure!(changed.status == 200, "{}", changed.text);
    let fork = api.fork("hummus").await?.body["slug"].as_str().unwrap().to_string();
    let other = Api::new(&w, &key_for(&w, "other-cook").await?);
    let bowl = other.create(&recipe("Sync Bowl")).await?.body["slug"].as_str().unwrap().to_string();

    let dir = tests::root().join(format!("tests/.work/sync-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo_dir = dir.join("repo");
    let start = init_repo(&repo_dir)?;

    let repo_arg = repo_dir.to_string_lossy().to_string();
    builder(&["sync", "--api", &w.base, "--repo", &repo_arg])?;
    let commits = log(&repo_dir)?;
    ensure!(commits.len() == 5, "{} commits", commits.len());
    let messages: Vec<&str> = commits.iter().map(|c| c.summary.as_str()).collect();
    ensure!(
        messages
            == [
                format!("Create {bowl}").as_str(),
                &format!("Fork hummus as {fork}"),
                "Less salt",
                &format!("Create {slaw}"),
                "Add hummus"
            ],
        "{messages:?}"
    );
    let authors: Vec<&str> = commits.iter().map(|c| c.author.as_str()).collect();
    ensure!(authors == ["other-cook", "syncer", "syncer", "syncer", "commonplace"], "{authors:?}");
    ensure!(commits.last().unwrap().id == start, "sync rewrote history");

    // Idempotent: nothing new in the feed, nothing committed.
    builder(&["sync", "--api", &w.base, "--repo", &repo_arg])?;
    ensure!(log(&repo_dir)?[0].id == commits[0].id, "a second sync committed again");

    let out = dir.join("dist");
    tests::build_git_head(&repo_dir, &out)?;
    for slug in [&slaw, &fork, &bowl] {
        let served = reqwest::get(w.url(&format!("/r/{slug}.json"))).await?.text().await?;
        let built = std::fs::read_to_string(out.join(format!("r/{slug}.json")))?;
        ensure!(built == served, "{slug}: the build differs from what the API served\n{built}\n{served}");
    }
    let history: Value = serde_json::from_slice(&std::fs::read(out.join(format!("r/{slaw}.history.json")))?)?;
    let messages: Vec<&str> =
        history.as_array().unwrap().iter().filter_map(|i| i["message"].as_str()).collect();
    ensure!(messages == ["Less salt", format!("Create {slaw}").as_str()], "{messages:?}");
    ensure!(
        history[0]["author"] == "syncer" && history[0]["commit"].as_str().unwrap().len() == 40,
        "{history}"
    );

    // Deploy that build with the same database: the overlay rows retire and the build answers, each
    // recipe once, and writing on top of the built version works.
    let key = api.key.clone();
    let state = w.stop_keeping_state();
    let deployed = Worker::start_with(tests::Config {
        out: Some(out.clone()),
        state: Some(state),
        ..tests::Config::default()
    })
    .await?;
    let served = reqwest::get(deployed.url(&format!("/r/{slaw}.json"))).await?;
    // The overlay answers with the version as its ETag; the built file does not.
    let etag = served.headers().get("etag").map(|v| v.to_str().unwrap_or_default().to_string());
    ensure!(etag.as_deref() != Some("\"2\""), "{slaw} still comes from the overlay");
    let built = std::fs::read_to_string(out.join(format!("r/{slaw}.json")))?;
    ensure!(served.text().await? == built, "{slaw} is not the built file");
    let found = |q: &str| {
        let url = deployed.url(&format!("/api/recipes?q={q}"));
        async move { Ok::<Value, anyhow::Error>(reqwest::get(url).await?.json().await?) }
    };
    for (q, slug) in [("slaw", &slaw), ("bowl", &bowl)] {
        let answer = found(q).await?;
        let slugs: Vec<&str> =
            answer["items"].as_array().unwrap().iter().filter_map(|c| c["slug"].as_str()).collect();
        let times = slugs.iter().filter(|s| **s == slug.as_str()).count();
        ensure!(slugs.first() == Some(&slug.as_str()) && times == 1, "{q}: {slugs:?}");
    }
    let api = Api::new(&deployed, &key);
    let again = api.change(&slaw, &recipe("Sync Slaw"), "A little more salt", Some(2)).await?;
    ensure!(again.status == 200 && again.body["version"] == 3, "{}", again.text);
    let answer = found("slaw").await?;
    ensure!(answer["total"] == 1 && answer["items"][0]["slug"] == slaw.as_str(), "{answer}");
    drop(deployed);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
