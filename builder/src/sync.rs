//! `builder sync --api URL --repo DIR`: turns the API's public change feed into git commits, one per
//! change, so everything written through the API becomes open data in the content repo.
//!
//! Each commit writes `<content>/recipes/<slug>.json` (the document with its server fields, without
//! `slug`, which is the file name) and `<content>/.sync-state` (the last synced `seq`), authored by
//! the owner's handle at the change's time, with the change note as its message. Keeping the state in
//! the same commit makes a rerun idempotent: it asks the feed for what came after, and commits nothing
//! when nothing did. Commits are a function of the feed and the parent alone (no clock is read).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use domain::recipe::{Recipe, ServerFields};
use domain::write::{Change, ChangePage};
use serde::{Deserialize, Serialize};

const STATE_FILE: &str = ".sync-state";
const PAGE: u32 = 500;

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    last_seq: u64,
}

/// A recipe as a content file holds it: the published document less its slug.
#[derive(Serialize)]
struct ContentDoc<'a> {
    #[serde(flatten)]
    recipe: &'a Recipe,
    #[serde(flatten)]
    server: &'a ServerFields,
}

pub fn sync(api: &str, repo_path: &Path, content_path: &str) -> Result<ExitCode> {
    let repo = git2::Repository::open(repo_path)
        .with_context(|| format!("opening git repo {}", repo_path.display()))?;
    let workdir = repo.workdir().context("the content repo must have a work tree")?.to_path_buf();
    let content = content_path.trim_end_matches('/');
    let state_rel = format!("{content}/{STATE_FILE}");
    let state: State = match std::fs::read(workdir.join(&state_rel)) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("reading {state_rel}"))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => State::default(),
        Err(err) => return Err(err).with_context(|| format!("reading {state_rel}")),
    };

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let client = reqwest::Client::builder().user_agent("commonplace-builder-sync").build()?;
    let mut since = state.last_seq;
    let mut n_commits = 0;
    loop {
        let url = format!("{}/api/changes?since={since}&limit={PAGE}", api.trim_end_matches('/'));
        let page: ChangePage = runtime
            .block_on(async {
                let response = client.get(&url).send().await?.error_for_status()?;
                response.json().await
            })
            .with_context(|| format!("fetching {url}"))?;
        for change in &page.items {
            if change.seq <= since {
                bail!("the feed went backwards: seq {} after {since}", change.seq);
            }
            commit_change(&repo, &workdir, content, &state_rel, change)?;
            since = change.seq;
            n_commits += 1;
        }
        match page.next_since {
            Some(next) if !page.items.is_empty() => since = since.max(next),
            _ => break,
        }
    }
    eprintln!("synced {n_commits} change(s) from {api}; last seq {since}");
    Ok(ExitCode::SUCCESS)
}

fn commit_change(
    repo: &git2::Repository,
    workdir: &Path,
    content: &str,
    state_rel: &str,
    change: &Change,
) -> Result<()> {
    let doc = &change.document;
    if doc.slug != change.slug || !domain::slug::is_valid(&change.slug) {
        bail!("change {} names slug `{}` but carries `{}`", change.seq, change.slug, doc.slug);
    }
    let file_rel = format!("{content}/recipes/{}.json", change.slug);
    let mut json = serde_json::to_string_pretty(&ContentDoc { recipe: &doc.recipe, server: &doc.server })?;
    json.push('\n');
    let state = serde_json::to_string_pretty(&State { last_seq: change.seq })? + "\n";
    for (rel, bytes) in [(&file_rel, json.as_bytes()), (&state_rel.to_string(), state.as_bytes())] {
        let full = workdir.join(rel);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, bytes).with_context(|| format!("writing {}", full.display()))?;
    }

    let mut index = repo.index()?;
    index.add_path(Path::new(&file_rel))?;
    index.add_path(Path::new(state_rel))?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let seconds = time::OffsetDateTime::parse(&change.at, &time::format_description::well_known::Rfc3339)
        .with_context(|| format!("change {} has time `{}`", change.seq, change.at))?
        .unix_timestamp();
    let when = git2::Time::new(seconds, 0);
    let author =
        git2::Signature::new(&change.owner, &format!("{}@users.commonplace.invalid", change.owner), &when)?;
    let committer = git2::Signature::new("Commonplace sync", "sync@commonplace.invalid", &when)?;
    let message = format!(
        "{}\n\nCommonplace-Change: {}\nCommonplace-Kind: {}\nCommonplace-Version: {}\n",
        change.note.trim(),
        change.seq,
        change.kind.code(),
        change.version
    );
    let parent = match repo.head() {
        Ok(head) => Some(head.peel_to_commit()?),
        Err(err) if err.code() == git2::ErrorCode::UnbornBranch => None,
        Err(err) => return Err(err.into()),
    };
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &author, &committer, &message, &tree, &parents)?;
    Ok(())
}
