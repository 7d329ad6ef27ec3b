//! `builder import-feed --feed URL --content DIR --show NAME`: a newsroom's show, from its RSS feed,
//! into the content repo — `show.json`, and for each episode whose feed item carries a publisher
//! transcript (`<podcast:transcript>`: WebVTT, Podcasting 2.0 JSON or SRT), its `episode.json`, the
//! transcript as a run (`runs/publisher-<format>.json`) and its `names.json` (the identification
//! sources, run at once: a WebVTT voice tag is the publisher's own naming of a speaker).
//!
//! Every address is fetched as untrusted (`domain::site::outbound`): the feed, each redirect and each
//! transcript, each name resolved and checked before a connection, within the size and time bounds of
//! its kind. Only a development run (`ENVIRONMENT=dev`) may fetch the loopback `host:port` pairs of
//! `FETCH_ALLOW_LOOPBACK`, which is how the tests' scripted feed host is reached.
//!
//! An episode the show already holds (the same normalised address) is left as it is, so a second
//! run imports only what the feed added. An item without a publisher transcript, a date or an
//! address is listed with the reason and skipped: nothing half-written is left.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use domain::quotes::feed::{self, Feed, FeedItem};
use domain::quotes::transcript::import::import;
use domain::quotes::transcript::names::name_key;
use domain::quotes::transcript::{
    Episode, Person, Role, Run, RunKind, Show, licence_url, normalise_source_url,
};
use domain::recipes::slug;
use domain::site::outbound::{self, Allowance, Fetched};
use url::Url;

use crate::identify;
use crate::import::{decide_reviewed_names, write_json};

/// What `builder import-feed` was asked to do.
#[derive(Debug)]
pub struct Request {
    pub feed: String,
    pub content: PathBuf,
    pub show: String,
    /// The licence (SPDX) when the feed names none: a transcript is published only under one.
    pub licence: Option<String>,
    /// Publisher transcripts a person reviewed are `human-edited`; by default they are `asr`.
    pub kind: RunKind,
    /// Only the newest items.
    pub newest: Option<usize>,
    pub created: String,
}

pub fn run(request: Request) -> Result<ExitCode> {
    if !slug::is_valid(&request.show) {
        bail!("`{}` is not a show folder name: use lower-case letters, digits and -", request.show);
    }
    let fetcher = Fetcher::new(allowance()?)?;
    let (feed_url, bytes) = fetcher.get(&request.feed, Fetched::Feed)?;
    let feed = feed::parse(&bytes, &feed_url).map_err(|err| anyhow::anyhow!("{feed_url}: {err}"))?;
    let show_dir = request.content.join("shows").join(&request.show);
    let show = show_record(&show_dir, &feed, request.licence.as_deref())?;
    let held = held_addresses(&show_dir)?;
    let mut imported = Vec::new();
    let items = feed.items.iter().take(request.newest.unwrap_or(usize::MAX));
    for item in items {
        let label = if item.title.is_empty() { item.key().unwrap_or("an item") } else { &item.title };
        match import_item(&fetcher, &feed, item, &show_dir, &held, &request) {
            Ok(Some(folder)) => {
                eprintln!("imported {label:?} into {}", show_dir.join(&folder).display());
                imported.push(folder);
            }
            Ok(None) => eprintln!("held already: {label:?}"),
            Err(err) => eprintln!("skipped {label:?}: {err:#}"),
        }
    }
    if !show_dir.join("show.json").exists() {
        write_json(&show_dir.join("show.json"), &show)?;
    }
    for folder in &imported {
        identify::run(&request.content, identify::Which::One(format!("{}/{folder}", request.show)))?;
    }
    eprintln!("{} of {} items imported into {}", imported.len(), feed.items.len(), show_dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The loopback pairs a development run may fetch; refused outside one.
fn allowance() -> Result<Allowance> {
    let list = std::env::var("FETCH_ALLOW_LOOPBACK").unwrap_or_default();
    if list.trim().is_empty() {
        return Ok(Allowance::default());
    }
    if std::env::var("ENVIRONMENT").as_deref() != Ok("dev") {
        bail!("FETCH_ALLOW_LOOPBACK is honoured only in a development run (ENVIRONMENT=dev)");
    }
    Allowance::parse(&list).map_err(anyhow::Error::msg)
}

/// The show's record: the one the folder holds, else one from the feed.
fn show_record(show_dir: &Path, feed: &Feed, licence: Option<&str>) -> Result<Show> {
    let path = show_dir.join("show.json");
    if path.exists() {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        return serde_json::from_str(&text).with_context(|| format!("{}", path.display()));
    }
    let licence = match (licence, feed.licence.as_deref()) {
        (Some(given), _) => given.to_string(),
        (None, Some(named)) if licence_url(named).is_some() => named.to_string(),
        (None, named) => bail!(
            "the feed names no licence this site publishes under ({}): pass --licence with an SPDX id, \
             such as CC-BY-4.0, that the publisher grants",
            named.map_or("no <podcast:license> or <copyright>".to_string(), |named| format!(
                "it says `{named}`"
            ))
        ),
    };
    if licence_url(&licence).is_none() {
        bail!("`{licence}` is not a licence this site publishes under (docs/quotes.md lists them)");
    }
    Ok(Show {
        title: feed.title.clone(),
        url: feed.link.clone(),
        description: String::new(),
        licence,
        attribution: None,
    })
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

/// Imports one item: its folder, or `None` when the show holds it already.
fn import_item(
    fetcher: &Fetcher,
    feed: &Feed,
    item: &FeedItem,
    show_dir: &Path,
    held: &[String],
    request: &Request,
) -> Result<Option<String>> {
    let Some(source_url) = item.link.clone().or_else(|| item.audio_url.clone()) else {
        bail!("it has neither a page nor audio");
    };
    let normalised = normalise_source_url(&source_url)
        .with_context(|| format!("{source_url} is not an episode address"))?;
    if held.contains(&normalised) {
        return Ok(None);
    }
    let Some(published) = item.published.clone() else { bail!("it has no pubDate") };
    let Some((link, format)) = item.transcript_to_take() else {
        bail!("no publisher transcript (WebVTT, Podcasting 2.0 JSON or SRT) in the feed");
    };
    let (transcript_url, bytes) = fetcher.get(&link.url, Fetched::Transcript)?;
    let text = String::from_utf8(bytes).with_context(|| format!("{transcript_url} is not UTF-8 text"))?;
    let segments = import(format, &text, None).map_err(|err| anyhow::anyhow!("{transcript_url}: {err}"))?;
    let pipeline = format!("publisher-{}", format.code());
    let run = Run {
        pipeline: pipeline.clone(),
        kind: request.kind,
        created: request.created.clone(),
        imported_from: Some(format.code().to_string()),
        segments,
        speaker_embeddings: None,
    };
    // When the transcript names every voice, a person of the feed who is not among them does not speak
    // in this episode (`builder check` would flag them); otherwise any of them may.
    let voices: Vec<String> = run.segments.iter().map(|segment| name_key(&segment.speaker)).collect();
    let all_named = !voices.iter().any(|voice| voice == &name_key("UNKNOWN"));
    let mut roster: Vec<Person> = Vec::new();
    for person in feed.persons.iter().chain(&item.persons) {
        if all_named && !voices.contains(&name_key(&person.name)) {
            continue;
        }
        let role = if matches!(person.role.as_str(), "host" | "co-host") { Role::Host } else { Role::Guest };
        if !roster.iter().any(|known| known.name == person.name) {
            roster.push(Person { name: person.name.clone(), role });
        }
    }
    let episode = Episode {
        title: item.title.clone(),
        source_url,
        published,
        roster,
        canonical_run: None,
        licence: item.licence.clone().filter(|licence| licence_url(licence).is_some()),
        attribution: None,
        derived_from: Some(transcript_url.to_string()),
        audio_url: item.audio_url.clone(),
    };
    let base = slug::from_title(&item.title);
    let base = if base.is_empty() { "episode".to_string() } else { base };
    let folder = slug::first_free(&base, |taken| show_dir.join(taken).exists());
    let dir = show_dir.join(&folder);
    write_json(&dir.join("runs").join(format!("{pipeline}.json")), &run)?;
    write_json(&dir.join("episode.json"), &episode)?;
    if run.kind == RunKind::HumanEdited {
        decide_reviewed_names(&dir, &run)?;
    }
    Ok(Some(folder))
}

/// Fetches addresses a user gave, as `domain::site::outbound` rules.
struct Fetcher {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    allowance: Allowance,
}

impl Fetcher {
    fn new(allowance: Allowance) -> Result<Fetcher> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("commonplace-builder/", env!("CARGO_PKG_VERSION")))
            // Each redirect is checked before it is followed.
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(CheckedResolver { allowance: allowance.clone() }))
            .build()?;
        Ok(Fetcher { runtime, client, allowance })
    }

    /// The final address and the body of `address`, within the bounds of `kind`.
    fn get(&self, address: &str, kind: Fetched) -> Result<(Url, Vec<u8>)> {
        let mut url = outbound::check(address, &self.allowance)
            .map_err(|refusal| anyhow::anyhow!("{address}: {refusal}"))?;
        let limit = Duration::from_millis(kind.timeout_ms());
        self.runtime.block_on(async {
            tokio::time::timeout(limit, async {
                for followed in 0.. {
                    let response =
                        self.client.get(url.clone()).send().await.with_context(|| format!("{url}"))?;
                    if response.status().is_redirection() {
                        let location = response
                            .headers()
                            .get(reqwest::header::LOCATION)
                            .and_then(|value| value.to_str().ok())
                            .with_context(|| format!("{url} redirects nowhere"))?;
                        url = outbound::redirect(&url, location, followed, &self.allowance)
                            .map_err(|refusal| anyhow::anyhow!("{url} redirects to {location}: {refusal}"))?;
                        continue;
                    }
                    if !response.status().is_success() {
                        bail!("{url} answered {}", response.status());
                    }
                    return Ok((url.clone(), read_bounded(response, kind, &url).await?));
                }
                unreachable!("the loop returns")
            })
            .await
            .map_err(|_| {
                anyhow::anyhow!("{address}: {} took longer than {} s", kind.noun(), limit.as_secs())
            })?
        })
    }
}

/// The body, refused when it is longer than `kind` allows (told by `Content-Length` or counted).
async fn read_bounded(mut response: reqwest::Response, kind: Fetched, url: &Url) -> Result<Vec<u8>> {
    let max = kind.max_bytes();
    let too_long = || anyhow::anyhow!("{url}: {} is larger than {} MiB", kind.noun(), max / (1024 * 1024));
    if response.content_length().is_some_and(|length| length > max as u64) {
        return Err(too_long());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.with_context(|| format!("{url}"))? {
        if body.len() + chunk.len() > max {
            return Err(too_long());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Resolves names, refusing one that resolves to an address inside a network (a name is checked where
/// it is resolved: a rebinding name cannot pass the address check and then connect inside).
struct CheckedResolver {
    allowance: Allowance,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allowed = self.allowance.names_host(&host);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allowed {
                for addr in &addrs {
                    outbound::check_ip(addr.ip())
                        .map_err(|refusal| format!("{host} resolves to {refusal}"))?;
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}
