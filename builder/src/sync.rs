//! `builder sync --api URL --repo DIR`: turns the API's public change feed into git commits, one per
//! change, so everything written through the API becomes open data in the content repo.
//!
//! Each commit writes `<content>/recipes/<slug>.json` (the document with its server fields, without
//! `slug`, which is the file name) and `<content>/.sync-state` (the last synced `seq`), authored by
//! the owner's handle at the change's time, with the change note as its message. Keeping the state in
//! the same commit makes a rerun idempotent: it asks the feed for what came after, and commits nothing
//! when nothing did. Commits are a function of the feed and the parent alone (no clock is read).
//!
//! Episodes the Worker took in by their address come from a second feed, `/api/intake/episodes`:
//! each is one commit writing its folder `shows/<show>/<episode>/` (`episode.json`, `names.json`,
//! `runs/<pipeline>.json`, and the show's `show.json` when the show is new), authored by whoever
//! asked for it. An episode the content already holds (the same id) is passed over.
//!
//! Speaker names set by editors come from a third feed, `/api/episodes/changes`, after the episodes
//! (an editor may name a voice of an episode taken in since the last sync): each decision is one
//! commit writing the label's `human` entry into `shows/<show>/<episode>/names.json` (the episode
//! found by its id), authored by the editor, with its own position in `.sync-state`. The build
//! publishes that position (`episodes/decisions.json`), so the Worker knows which decisions it holds.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use domain::paging::{FeedPage, Positioned};
use domain::quotes::intake::TakenIn;
use domain::quotes::transcript::names::{BuiltDecisions, Names, SpeakerChange};
use domain::quotes::transcript::{Episode, episode_id, normalise_source_url};
use domain::recipes::recipe::{Recipe, ServerFields};
use domain::recipes::write::Change;
use serde::{Deserialize, Serialize};

pub const STATE_FILE: &str = ".sync-state";
const PAGE: u32 = 500;

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct State {
    last_seq: u64,
    /// The last speaker decision synced (absent until the first one).
    #[serde(default, skip_serializing_if = "is_zero")]
    speaker_last_seq: u64,
    /// The last episode taken in by its address synced (absent until the first one).
    #[serde(default, skip_serializing_if = "is_zero")]
    intake_last_seq: u64,
    /// The id of the speaker feed `speaker_last_seq` is a position in (absent until the first
    /// decision): a content repo follows one site's decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    speaker_feed: Option<String>,
}

/// The last speaker decision synced into the content whose `.sync-state` is `bytes`, and its feed
/// (none without one).
pub fn synced_decisions(bytes: Option<&[u8]>) -> Result<BuiltDecisions> {
    let Some(bytes) = bytes else { return Ok(BuiltDecisions::default()) };
    let state: State = serde_json::from_slice(bytes).with_context(|| format!("reading {STATE_FILE}"))?;
    Ok(BuiltDecisions { synced_seq: state.speaker_last_seq, feed: state.speaker_feed })
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    let content = content_folder(content_path);
    let state_rel = within(content, STATE_FILE);
    let mut state: State = match std::fs::read(workdir.join(&state_rel)) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("reading {state_rel}"))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => State::default(),
        Err(err) => return Err(err).with_context(|| format!("reading {state_rel}")),
    };

    let feeds = Feeds::new(api)?;
    let mut n_commits = 0;
    let mut pages = feeds.pages::<Change>("changes", "feed", state.last_seq);
    while let Some(page) = pages.next_page()? {
        for change in &page.items {
            state.last_seq = change.seq;
            commit_change(&repo, &workdir, content, &state_rel, change, &state)?;
            n_commits += 1;
        }
    }
    eprintln!("synced {n_commits} change(s) from {api}; last seq {}", pages.since);

    // Episodes before the decisions about them.
    let mut n_episodes = 0;
    let mut held = episode_folders(&workdir, content)?;
    let mut pages = feeds.pages::<TakenIn>("intake/episodes", "intake feed", state.intake_last_seq);
    while let Some(page) = pages.next_page()? {
        for item in &page.items {
            if held.iter().any(|(id, _)| id == &item.episode) {
                continue;
            }
            state.intake_last_seq = item.seq;
            let folder = commit_episode(&repo, &workdir, content, &state_rel, item, &state)?;
            held.push((item.episode.clone(), folder));
            n_episodes += 1;
        }
    }
    eprintln!("synced {n_episodes} episode(s) taken in from {api}; last seq {}", pages.since);

    let mut n_decisions = 0;
    let mut pages = feeds.pages::<SpeakerChange>("episodes/changes", "speaker feed", state.speaker_last_seq);
    while let Some(page) = pages.next_page()? {
        if let (Some(synced), Some(serving)) = (&state.speaker_feed, &page.feed)
            && synced != serving
        {
            bail!(
                "{state_rel} holds the decisions of speaker feed {synced}, and {api} serves feed {serving}: \
                 a content repo follows one site's decisions"
            );
        }
        for change in &page.items {
            let Some((_, folder)) = held.iter().find(|(id, _)| id == &change.episode) else {
                bail!(
                    "speaker decision {} names episode {}, which is not under {}",
                    change.seq,
                    change.episode,
                    within(content, "shows")
                );
            };
            state.speaker_last_seq = change.seq;
            state.speaker_feed.clone_from(&page.feed);
            commit_decision(&repo, &workdir, &state_rel, folder, change, &state)?;
            n_decisions += 1;
        }
    }
    eprintln!("synced {n_decisions} speaker decision(s) from {api}; last seq {}", pages.since);

    Ok(ExitCode::SUCCESS)
}

/// The content folder as a path relative to the work tree, without `./` or a trailing `/`: empty
/// when the content is the work tree itself (`--path .`), since git names no path `./x`.
fn content_folder(path: &str) -> &str {
    let mut path = path.trim().trim_end_matches('/');
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    if path == "." { "" } else { path }
}

/// `tail` inside the content folder, relative to the work tree.
fn within(content: &str, tail: &str) -> String {
    if content.is_empty() { tail.to_string() } else { format!("{content}/{tail}") }
}

/// A content file's text: pretty JSON with a final newline, as `builder import` writes.
fn pretty(value: &impl Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// One commit: an episode taken in, as a new folder of its show (and the show's record when the show
/// is new). Answers the folder, relative to the work tree.
fn commit_episode(
    repo: &git2::Repository,
    workdir: &Path,
    content: &str,
    state_rel: &str,
    item: &TakenIn,
    state: &State,
) -> Result<String> {
    let taken = &item.content;
    if !domain::recipes::slug::is_valid(&taken.show) {
        bail!("intake episode {} names the show folder `{}`, which is not a slug", item.seq, taken.show);
    }
    let show_rel = within(content, &format!("shows/{}", taken.show));
    let base = domain::recipes::slug::from_title(&taken.episode.title);
    let base = if base.is_empty() { "episode".to_string() } else { base };
    let name = domain::recipes::slug::first_free(&base, |taken| workdir.join(&show_rel).join(taken).exists());
    let folder = format!("{show_rel}/{name}");
    let mut files: Vec<(String, String)> = vec![(format!("{folder}/episode.json"), pretty(&taken.episode)?)];
    if !taken.names.labels.is_empty() {
        files.push((format!("{folder}/names.json"), pretty(&taken.names)?));
    }
    for run in &taken.runs {
        if !domain::recipes::slug::is_valid(&run.pipeline) {
            bail!("intake episode {} has a run named `{}`, which is not a file name", item.seq, run.pipeline);
        }
        files.push((format!("{folder}/runs/{}.json", run.pipeline), pretty(run)?));
    }
    if !workdir.join(&show_rel).join("show.json").exists() {
        files.push((format!("{show_rel}/show.json"), pretty(&taken.show_record)?));
    }
    files.push((state_rel.to_string(), pretty(&state)?));
    let message = format!(
        "Take in {} ({})\n\nCommonplace-Intake: {}\nCommonplace-Episode: {}\n",
        taken.episode.title, taken.episode.source_url, item.seq, item.episode
    );
    let borrowed: Vec<(&str, &[u8])> =
        files.iter().map(|(rel, text)| (rel.as_str(), text.as_bytes())).collect();
    commit_files(repo, workdir, &borrowed, &item.by, &item.at, &message)
        .with_context(|| format!("intake episode {}", item.seq))?;
    Ok(folder)
}

/// (episode id, `<content>/shows/<show>/<episode>` relative to the work tree) for every episode.
fn episode_folders(workdir: &Path, content: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let Ok(shows) = std::fs::read_dir(workdir.join(content).join("shows")) else { return Ok(out) };
    for show in shows {
        let show = show?;
        let Ok(episodes) = std::fs::read_dir(show.path()) else { continue };
        for episode in episodes {
            let path = episode?.path().join("episode.json");
            if !path.is_file() {
                continue;
            }
            let parsed: Episode = serde_json::from_slice(&std::fs::read(&path)?)
                .with_context(|| format!("reading {}", path.display()))?;
            let Some(normalised) = normalise_source_url(&parsed.source_url) else { continue };
            let rel =
                path.parent().expect("has a folder").strip_prefix(workdir)?.to_string_lossy().to_string();
            out.push((episode_id(&normalised), rel));
        }
    }
    Ok(out)
}

/// One commit: the decision as the label's `human` entry in the episode's names.json.
fn commit_decision(
    repo: &git2::Repository,
    workdir: &Path,
    state_rel: &str,
    folder: &str,
    change: &SpeakerChange,
    state: &State,
) -> Result<()> {
    let names_rel = format!("{folder}/names.json");
    let mut names: Names = match std::fs::read(workdir.join(&names_rel)) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("reading {names_rel}"))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Names::default(),
        Err(err) => return Err(err).with_context(|| format!("reading {names_rel}")),
    };
    names.labels.entry(change.label.clone()).or_default().human = Some(change.decision());
    let json = serde_json::to_string_pretty(&names)? + "\n";
    let state_json = serde_json::to_string_pretty(&state)? + "\n";
    let mut message = format!("Name {} as {} in {folder}\n\n", change.label, change.name);
    if let Some(note) = change.note.as_deref() {
        message.push_str(note.trim());
        message.push_str("\n\n");
    }
    message.push_str(&format!("Commonplace-Speaker-Decision: {}\n", change.seq));
    commit_files(
        repo,
        workdir,
        &[(&names_rel, json.as_bytes()), (state_rel, state_json.as_bytes())],
        &change.editor,
        &change.at,
        &message,
    )
}

fn commit_change(
    repo: &git2::Repository,
    workdir: &Path,
    content: &str,
    state_rel: &str,
    change: &Change,
    state: &State,
) -> Result<()> {
    let doc = &change.document;
    if doc.slug != change.slug || !domain::recipes::slug::is_valid(&change.slug) {
        bail!("change {} names slug `{}` but carries `{}`", change.seq, change.slug, doc.slug);
    }
    let file_rel = within(content, &format!("recipes/{}.json", change.slug));
    let mut json = serde_json::to_string_pretty(&ContentDoc { recipe: &doc.recipe, server: &doc.server })?;
    json.push('\n');
    let state = serde_json::to_string_pretty(&state)? + "\n";
    let message = format!(
        "{}\n\nCommonplace-Change: {}\nCommonplace-Kind: {}\nCommonplace-Version: {}\n",
        change.note.trim(),
        change.seq,
        change.kind.code(),
        change.version
    );
    commit_files(
        repo,
        workdir,
        &[(&file_rel, json.as_bytes()), (state_rel, state.as_bytes())],
        &change.owner,
        &change.at,
        &message,
    )
    .with_context(|| format!("change {}", change.seq))
}

/// Writes `files` (paths relative to the work tree) and commits them on HEAD, authored by `handle` at
/// `at` (ISO 8601), committed by the sync.
fn commit_files(
    repo: &git2::Repository,
    workdir: &Path,
    files: &[(&str, &[u8])],
    handle: &str,
    at: &str,
    message: &str,
) -> Result<()> {
    let mut index = repo.index()?;
    for (rel, bytes) in files {
        let full = workdir.join(rel);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, bytes).with_context(|| format!("writing {}", full.display()))?;
        index.add_path(Path::new(rel))?;
    }
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let seconds = time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .with_context(|| format!("time `{at}`"))?
        .unix_timestamp();
    let when = git2::Time::new(seconds, 0);
    let author = git2::Signature::new(handle, &format!("{handle}@users.commonplace.invalid"), &when)?;
    let committer = git2::Signature::new("Commonplace sync", "sync@commonplace.invalid", &when)?;
    let parent = match repo.head() {
        Ok(head) => Some(head.peel_to_commit()?),
        Err(err) if err.code() == git2::ErrorCode::UnbornBranch => None,
        Err(err) => return Err(err.into()),
    };
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &author, &committer, message, &tree, &parents)?;
    Ok(())
}

/// The Worker's feeds (`/api/{feed}`), read with one client.
struct Feeds {
    api: String,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Feeds {
    fn new(api: &str) -> Result<Feeds> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let client = reqwest::Client::builder().user_agent("commonplace-builder-sync").build()?;
        Ok(Feeds { api: api.trim_end_matches('/').to_string(), runtime, client })
    }

    /// The pages of `feed` after `since`, to its end; `what` names the feed in a refusal.
    fn pages<'a, T>(&'a self, feed: &'a str, what: &'a str, since: u64) -> Pages<'a, T> {
        Pages { feeds: self, feed, what, since, done: false, item: std::marker::PhantomData }
    }
}

/// Reads one feed a page at a time; `since` is the position reached.
struct Pages<'a, T> {
    feeds: &'a Feeds,
    feed: &'a str,
    what: &'a str,
    since: u64,
    done: bool,
    item: std::marker::PhantomData<T>,
}

impl<T: serde::de::DeserializeOwned + Positioned> Pages<'_, T> {
    /// The next page, or `None` after the last. A page whose positions do not go forward is refused
    /// whole: a feed never goes backwards.
    fn next_page(&mut self) -> Result<Option<FeedPage<T>>> {
        if self.done {
            return Ok(None);
        }
        let Feeds { api, runtime, client } = self.feeds;
        let url = format!("{api}/api/{}?since={}&limit={PAGE}", self.feed, self.since);
        let page: FeedPage<T> = runtime
            .block_on(async {
                let response = client.get(&url).send().await?.error_for_status()?;
                response.json().await
            })
            .with_context(|| format!("fetching {url}"))?;
        for item in &page.items {
            if item.seq() <= self.since {
                bail!("the {} went backwards: seq {} after {}", self.what, item.seq(), self.since);
            }
            self.since = item.seq();
        }
        match page.next_since {
            Some(next) if !page.items.is_empty() => self.since = self.since.max(next),
            _ => self.done = true,
        }
        Ok(Some(page))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `builder sync --path .` failed: git names no path `./shows/…`.
    #[test]
    fn a_content_folder_that_is_the_work_tree_names_its_files_without_dot() {
        for (given, folder) in
            [(".", ""), ("./", ""), ("", ""), ("content", "content"), ("./content/", "content")]
        {
            assert_eq!(content_folder(given), folder, "{given:?}");
        }
        assert_eq!(within("", "shows/x/show.json"), "shows/x/show.json");
        assert_eq!(within("content", ".sync-state"), "content/.sync-state");
    }
}
