//! `builder import-feed --feed URL --content DIR --show NAME`: a newsroom's show, from its RSS feed,
//! into the content repo — `show.json`, and for each episode whose feed item carries a publisher
//! transcript (`<podcast:transcript>`: WebVTT, Podcasting 2.0 JSON or SRT), its `episode.json`, the
//! transcript as a run (`runs/publisher-<format>.json`) and its `names.json` (the identification
//! sources, run at once: a WebVTT voice tag is the publisher's own naming of a speaker). Also
//! `builder import-episode`: one episode by its address, through `domain`'s intake step machine.
//!
//! Every address is fetched as untrusted (`domain::site::outbound`): the feed, each redirect and each
//! transcript, each name resolved and checked before a connection, within the size and time bounds of
//! its kind. Only a development run (`ENVIRONMENT=dev`) may fetch the loopback `host:port` pairs of
//! `FETCH_ALLOW_LOOPBACK`, which is how the tests' scripted feed host is reached.
//!
//! An episode the show already holds (the same normalised address) is left as it is, so a second
//! run imports only what the feed added. An item without a publisher transcript, a date or an
//! address is listed with the reason and skipped: nothing half-written is left.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use domain::quotes::feed::{self, Feed, FeedItem};
use domain::quotes::intake::{self, Answer, Intake, ShowRefusal, Step};
use domain::quotes::transcript::import::import;
use domain::quotes::transcript::{Episode, Run, RunKind, Show, normalise_source_url};
use domain::recipes::slug;
use domain::site::outbound::Fetched;

use crate::fetch::{self, Fetcher};
use crate::identify;
use crate::import::{decide_reviewed_names, write_json};

/// Where a feed's episodes go and how they are recorded: what `import-feed` and `import-episode`
/// share.
#[derive(Debug, clap::Args)]
pub struct Destination {
    /// The content folder (holding shows/).
    #[arg(long)]
    pub content: PathBuf,
    /// The show's folder name under shows/.
    #[arg(long)]
    pub show: String,
    /// The licence (SPDX id) the publisher grants, when the feed names none: a transcript is
    /// published only under one.
    #[arg(long)]
    pub licence: Option<String>,
    /// How the publisher's transcripts were made: asr, or human-edited when a person reviewed them.
    #[arg(long, value_parser = crate::parse_kind, default_value = "asr")]
    pub kind: RunKind,
    /// When the runs were made, YYYY-MM-DD (default: today).
    #[arg(long, default_value_t = crate::import::today())]
    pub created: String,
}

impl Destination {
    /// `<content>/shows/<show>`, the show's name checked.
    fn show_dir(&self) -> Result<PathBuf> {
        if !slug::is_valid(&self.show) {
            bail!("`{}` is not a show folder name: use lower-case letters, digits and -", self.show);
        }
        Ok(self.content.join("shows").join(&self.show))
    }

    /// Runs the identification sources over a new episode of the show.
    fn identify(&self, folder: &str) -> Result<()> {
        identify::run(&self.content, identify::Which::One(format!("{}/{folder}", self.show))).map(|_| ())
    }
}

/// What `builder import-feed` was asked to do.
#[derive(Debug)]
pub struct Request {
    pub feed: String,
    /// Only the first items in the feed's order.
    pub first: Option<usize>,
    pub to: Destination,
}

pub fn run(request: Request) -> Result<ExitCode> {
    let show_dir = request.to.show_dir()?;
    let fetcher = Fetcher::new(fetch::allowance()?)?;
    let (feed_url, bytes) = fetcher.get(&request.feed, Fetched::Feed)?;
    let feed = feed::parse(&bytes, &feed_url).map_err(|err| anyhow::anyhow!("{feed_url}: {err}"))?;
    let show = show_record(&show_dir, &feed, feed_url.as_str(), request.to.licence.as_deref())?;
    let mut held = held_addresses(&show_dir)?;
    let mut imported = Vec::new();
    let items = feed.items.iter().take(request.first.unwrap_or(usize::MAX));
    for item in items {
        let label = if item.title.is_empty() { item.key().unwrap_or("an item") } else { &item.title };
        match import_item(&fetcher, &feed, item, &show_dir, &held, &request) {
            Ok(Some((folder, address))) => {
                eprintln!("imported {label:?} into {}", show_dir.join(&folder).display());
                imported.push(folder);
                held.push(address);
            }
            Ok(None) => eprintln!("held already: {label:?}"),
            Err(err) => eprintln!("skipped {label:?}: {err:#}"),
        }
    }
    if !show_dir.join("show.json").exists() {
        write_json(&show_dir.join("show.json"), &show)?;
    }
    for folder in &imported {
        request.to.identify(folder)?;
    }
    eprintln!("{} of {} items imported into {}", imported.len(), feed.items.len(), show_dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The show's record: the one the folder holds, else one from the feed, which the site then follows.
fn show_record(show_dir: &Path, feed: &Feed, feed_url: &str, licence: Option<&str>) -> Result<Show> {
    if let Some(show) = held_show(show_dir)? {
        return Ok(show);
    }
    let mut show = intake::show_of(feed, licence).map_err(|refusal| match refusal {
        ShowRefusal::NoLicence { .. } => anyhow::anyhow!("{refusal}{LICENCE_HINT}"),
        other => anyhow::anyhow!("{other}"),
    })?;
    show.feed_url = Some(feed_url.to_string());
    Ok(show)
}

/// What the builder's user can do that a reader of the API cannot, when a feed names no licence.
const LICENCE_HINT: &str =
    "; if the publisher grants one elsewhere (its site, a letter), pass --licence with its SPDX id";

/// The show record the folder holds, if any.
fn held_show(show_dir: &Path) -> Result<Option<Show>> {
    let path = show_dir.join("show.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}", path.display())).map(Some)
}

/// The normalised addresses of the episodes the show holds.
fn held_addresses(show_dir: &Path) -> Result<Vec<String>> {
    let mut held = Vec::new();
    let Ok(entries) = std::fs::read_dir(show_dir) else { return Ok(held) };
    for entry in entries {
        let path = entry?.path().join("episode.json");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let episode: Episode =
                serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
            held.extend(normalise_source_url(&episode.source_url));
        }
    }
    Ok(held)
}

/// Imports one item: its folder and normalised address, or `None` when the show holds it already.
fn import_item(
    fetcher: &Fetcher,
    feed: &Feed,
    item: &FeedItem,
    show_dir: &Path,
    held: &[String],
    request: &Request,
) -> Result<Option<(String, String)>> {
    let Some(source_url) = intake::episode_address(feed, item) else {
        bail!("it has neither a page of its own nor audio: nothing addresses it");
    };
    let normalised = normalise_source_url(&source_url)
        .with_context(|| format!("{source_url} is not an episode address"))?;
    if held.contains(&normalised) {
        return Ok(None);
    }
    let Some((link, format)) = item.transcript_to_take() else {
        bail!("no publisher transcript (WebVTT, Podcasting 2.0 JSON or SRT) in the feed");
    };
    let (transcript_url, bytes) = fetcher.get(&link.url, Fetched::Transcript)?;
    let text = String::from_utf8(bytes).with_context(|| format!("{transcript_url} is not UTF-8 text"))?;
    let segments = import(format, &text, None).map_err(|err| anyhow::anyhow!("{transcript_url}: {err}"))?;
    let run = intake::publisher_run(format, segments, request.to.kind, &request.to.created);
    let episode =
        intake::record_of(feed, item, &run, transcript_url.to_string()).map_err(anyhow::Error::msg)?;
    let folder = write_episode(show_dir, &episode, &run)?;
    Ok(Some((folder, normalised)))
}

/// Writes a new episode folder under `show_dir`, named after its title: the run, the record, and for
/// a reviewed transcript its editors' names. Answers the folder's name.
fn write_episode(show_dir: &Path, episode: &Episode, run: &Run) -> Result<String> {
    let base = slug::from_title(&episode.title);
    let base = if base.is_empty() { "episode".to_string() } else { base };
    let folder = slug::first_free(&base, |taken| show_dir.join(taken).exists());
    let dir = show_dir.join(&folder);
    write_json(&dir.join("runs").join(format!("{}.json", run.pipeline)), run)?;
    write_json(&dir.join("episode.json"), episode)?;
    if run.kind == RunKind::HumanEdited {
        decide_reviewed_names(&dir, run)?;
    }
    Ok(folder)
}

/// What `builder import-episode` was asked to do.
#[derive(Debug)]
pub struct EpisodeRequest {
    /// The episode's page, audio or guid.
    pub address: String,
    /// Feeds to look in first (the show's, when it is known).
    pub feeds: Vec<String>,
    pub to: Destination,
}

/// `builder import-episode`: one episode by its address, through `domain`'s intake step machine
/// (its page, its feed, the publisher's transcript).
pub fn run_episode(request: EpisodeRequest) -> Result<ExitCode> {
    let show_dir = request.to.show_dir()?;
    let allowance = fetch::allowance()?;
    let fetcher = Fetcher::new(allowance.clone())?;
    let (machine, mut step) =
        Intake::start(&request.address, &request.feeds, &request.to.created, &allowance);
    // The episode joins the folder's show; a new show's licence is the feed's, else the one given.
    let fixed = held_show(&show_dir)?.map(|show| (request.to.show.clone(), show));
    let mut machine = machine.with_shows(intake::Shows {
        fixed,
        licence: request.to.licence.clone(),
        ..Default::default()
    });
    let arrived = loop {
        match step {
            Step::Fetch(wanted) => {
                step = match fetcher.fetch(&wanted.url, wanted.kind) {
                    Ok(response) => machine.give(Answer {
                        url: response.url.to_string(),
                        status: response.status,
                        content_type: response.content_type,
                        body: response.body,
                        size: None,
                    }),
                    Err(err) => machine.unreachable(format!("{err:#}")),
                };
            }
            Step::Arrived(arrived) => break *arrived,
            Step::Failed(reason) if request.to.licence.is_none() && reason.contains("names no licence") => {
                bail!("{reason}{LICENCE_HINT}")
            }
            Step::Failed(reason) => bail!("{reason}"),
            // The builder's machine is given no service, so it never asks for a transcription.
            Step::Transcribe(audio) => bail!("{} has no transcript to take", audio.title),
        }
    };
    let show = show_record(&show_dir, &arrived.feed, &arrived.feed_url, request.to.licence.as_deref())?;
    let normalised = normalise_source_url(&arrived.episode.source_url);
    if normalised.is_some_and(|address| held_addresses(&show_dir).is_ok_and(|held| held.contains(&address))) {
        eprintln!("held already: {:?} ({})", arrived.episode.title, arrived.episode.source_url);
        return Ok(ExitCode::SUCCESS);
    }
    let mut run = arrived.run;
    run.kind = request.to.kind;
    if !show_dir.join("show.json").exists() {
        write_json(&show_dir.join("show.json"), &show)?;
    }
    let folder = write_episode(&show_dir, &arrived.episode, &run)?;
    eprintln!(
        "imported {:?} into {} (feed {})",
        arrived.episode.title,
        show_dir.join(&folder).display(),
        arrived.feed_url
    );
    request.to.identify(&folder)?;
    Ok(ExitCode::SUCCESS)
}
