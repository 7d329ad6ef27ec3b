//! An episode by its address: the step machine that goes from the address a journalist gives to an
//! episode record and a run, reading one document at a time — the page, its feed, the publisher's
//! transcript. The caller only fetches what a step names ([`Step::Fetch`]) and hands back the answer;
//! every address is checked here before it is named ([`crate::site::outbound`]), and the caller checks
//! each redirect with [`crate::site::outbound::redirect`].
//!
//! The address is resolved, in order: an item of a feed the caller already follows (its page, audio
//! or `guid`); else the page's own feed (`<link rel="alternate" type="application/rss+xml">`) and the
//! item whose page is this one; an audio file that no followed feed lists, or an episode whose feed
//! has no transcript, needs a transcription service, which is said in the failure.
//!
//! Around the machine, what the Worker's intake decides without IO: the job of an address ([`job_id`]),
//! the new items of a followed feed ([`new_items`]), and an arrival named and published
//! ([`publish_arrival`]).

use serde::{Deserialize, Serialize};
use url::Url;

use crate::Diagnostic;
use crate::quotes::feed::{self, Feed, FeedItem, Person as FeedPerson};
use crate::quotes::transcript::identify::{asr_votes_of, is_anonymous_label, merge};
use crate::quotes::transcript::import::{Format, import};
use crate::quotes::transcript::names::name_key;
use crate::quotes::transcript::publish::{Built, publish};
use crate::quotes::transcript::url::has_scheme;
use crate::quotes::transcript::{
    Episode, Names, Person, Role, Run, RunKind, Segment, Show, licence_url, normalise_source_url,
    validate_episode, validate_run, validate_show,
};
use crate::quotes::transcript::{Vote, VoteSource, episode_id, voice};
use crate::site::outbound::{self, Allowance, Fetched};
use std::collections::BTreeMap;

pub mod audio;
pub mod transcribe;

use transcribe::Service;

/// The longest address `POST /api/episodes` takes.
pub const MAX_ADDRESS_CHARS: usize = 2048;

/// An address asked for (`POST /api/episodes`): as given, and normalised (the key of its one job).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub source_url: String,
    pub normalised_url: String,
}

/// The address `POST /api/episodes` and `request_episode` ask for (`crate::api::EpisodeRequest`,
/// trimmed), checked as every fetch will be; each problem names `source_url`.
///
/// An address written without its scheme (`example.org/ep/42`, as `/api/attribute` takes it) is
/// the `https` one.
pub fn asked(address: &str, allowance: &Allowance) -> Result<Asked, Vec<Diagnostic>> {
    let problem = |reason: String| Err(vec![Diagnostic::new("source_url", reason)]);
    if address.chars().count() > MAX_ADDRESS_CHARS {
        return problem(format!("must be at most {MAX_ADDRESS_CHARS} characters"));
    }
    let with_scheme;
    let address = if has_scheme(address) {
        address
    } else {
        with_scheme = format!("https://{address}");
        &with_scheme
    };
    if let Err(refusal) = outbound::check(address, allowance) {
        return problem(format!("`{address}` cannot be fetched: {refusal}"));
    }
    match normalise_source_url(address) {
        Some(normalised_url) => Ok(Asked { source_url: address.to_string(), normalised_url }),
        None => problem(format!("`{address}` is not an episode's web address")),
    }
}

/// An episode the Worker's intake published, as the content repo will hold it: what `builder sync`
/// writes into `shows/<show>/` (the show's record only when the folder has none yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Content {
    /// The show's folder name.
    pub show: String,
    pub show_record: Show,
    pub episode: Episode,
    pub names: Names,
    pub runs: Vec<Run>,
}

/// One item of the public feed of episodes the intake published (`GET /api/intake/episodes`), oldest
/// first: what `builder sync` commits, one commit an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TakenIn {
    pub seq: u64,
    /// The episode's id.
    pub episode: String,
    /// Who asked for it (the account's handle): the commit's author.
    pub by: String,
    pub at: String,
    pub content: Content,
}

/// A page of that feed.
pub type TakenInPage = crate::paging::FeedPage<TakenIn>;

impl crate::paging::Positioned for TakenIn {
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// What to read next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    pub url: String,
    pub kind: Fetched,
}

/// What a fetch answered, after the redirects the caller followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The address that answered (the last redirect's target).
    pub url: String,
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    /// The whole body's length as the host told it (`Content-Range`'s total, else
    /// `Content-Length`): more than `body` holds when the fetch was cut ([`Fetched::cuts`]).
    pub size: Option<u64>,
}

/// The next read, the episode, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Fetch(Fetch),
    /// The episode has no transcript to take: its audio is to be transcribed, and the run handed
    /// back with [`Intake::transcribed`].
    Transcribe(Box<Audio>),
    Arrived(Box<Arrival>),
    /// A reason a person can act on.
    Failed(String),
}

/// An episode's audio to transcribe.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    /// Checked as every address is.
    pub audio_url: String,
    pub title: String,
    /// What it is charged before the service measures it ([`transcribe::estimated_hours`]).
    pub hours: f64,
    /// The people the feed names (the show's, then the episode's), for a service that names voices.
    pub known_names: Vec<String>,
}

/// An episode that came in: its show as its feed describes it, its record and its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    pub feed_url: String,
    pub feed: Feed,
    /// The show the episode joins: its folder and record ([`Shows::show_for`]).
    pub show: (String, Show),
    pub episode: Episode,
    pub run: Run,
}

/// Which show an arriving episode joins, decided as soon as its feed is read — before its transcript
/// is fetched or its audio bought, so a show the site cannot publish stops the job while it costs
/// nothing.
#[derive(Debug, Clone, Default)]
pub struct Shows {
    /// The show every episode joins whatever its feed (the builder's `--show` folder, when it
    /// holds a `show.json`).
    pub fixed: Option<(String, Show)>,
    /// Published shows that follow a feed (`feed_url`): an item of one's feed joins that show,
    /// whoever asked for it.
    pub following: Vec<(String, Show)>,
    /// The licence a person says the publisher grants (`--licence`), for a show made from a feed
    /// that names none.
    pub licence: Option<String>,
}

impl Shows {
    /// The show of an item of the feed read at `feed_urls` (as asked, and as answered after its
    /// redirects, compared as episode addresses are): the fixed one, else the show following that
    /// feed, else a new show made from the feed (in the folder its title names), which needs a
    /// licence this site publishes under.
    pub fn show_for(&self, feed_urls: &[&str], feed: &Feed) -> Result<(String, Show), String> {
        if let Some(fixed) = &self.fixed {
            return Ok(fixed.clone());
        }
        let wanted: Vec<String> = feed_urls.iter().filter_map(|url| normalise_source_url(url)).collect();
        let following = self.following.iter().find(|(_, show)| {
            show.feed_url.as_deref().and_then(normalise_source_url).is_some_and(|url| wanted.contains(&url))
        });
        if let Some(following) = following {
            return Ok(following.clone());
        }
        let slug = crate::recipes::slug::from_title(&feed.title);
        let slug = if slug.is_empty() { "show".to_string() } else { slug };
        show_of(feed, self.licence.as_deref()).map(|show| (slug, show)).map_err(|refusal| refusal.to_string())
    }
}

/// One address being taken in.
#[derive(Debug, Clone)]
pub struct Intake {
    address: String,
    allowance: Allowance,
    created: String,
    service: Option<Service>,
    shows: Shows,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// Asked for the address itself.
    Address,
    /// Asked for a feed; `rest` are the feeds still to try, `then_address` whether the address
    /// itself is to be read when none holds the item (the feeds were the followed ones).
    Feed {
        url: String,
        rest: Vec<String>,
        then_address: bool,
        page: Option<String>,
    },
    /// Asked for the item's transcript.
    Transcript {
        read: Box<Read>,
        format: Format,
    },
    /// Waiting for the item's audio to be transcribed.
    Audio {
        read: Box<Read>,
    },
    Done,
}

/// A feed read and the item found in it, with the show it joins.
#[derive(Debug, Clone)]
struct Read {
    feed_url: String,
    feed: Feed,
    item: FeedItem,
    show: (String, Show),
}

impl Intake {
    /// Takes in `address`, looking first in `followed` (feeds the caller follows). `created` is the
    /// run's date (`YYYY-MM-DD`), `allowance` the development run's loopback pairs.
    pub fn start(address: &str, followed: &[String], created: &str, allowance: &Allowance) -> (Intake, Step) {
        let mut intake = Intake {
            address: address.trim().to_string(),
            allowance: allowance.clone(),
            created: created.to_string(),
            service: None,
            shows: Shows::default(),
            state: State::Done,
        };
        let step = match followed.split_first() {
            Some((first, rest)) => intake.feed(first, rest.to_vec(), true, None),
            None if Url::parse(address.trim()).is_err() => Step::Failed(format!(
                "`{}` is not a web address: a guid is found only in its show's feed, so name the feed too",
                address.trim()
            )),
            None => intake.read_address(),
        };
        (intake, step)
    }

    /// Has an episode with no transcript of its own transcribed by `service` ([`Step::Transcribe`])
    /// rather than failing.
    pub fn with_service(mut self, service: Option<Service>) -> Intake {
        self.service = service;
        self
    }

    /// Decides an arrival's show by `shows` ([`Shows::show_for`]) rather than always making one
    /// from its feed.
    pub fn with_shows(mut self, shows: Shows) -> Intake {
        self.shows = shows;
        self
    }

    /// The step after `answer`, the answer to the last [`Step::Fetch`].
    pub fn give(&mut self, answer: Answer) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Address => self.address_read(answer),
            State::Feed { url, rest, then_address, page } => {
                self.feed_read(&url, answer, rest, then_address, page)
            }
            State::Transcript { read, format } => self.transcript_read(*read, format, answer),
            State::Audio { .. } | State::Done => {
                Step::Failed("the intake was not reading anything: nothing was asked".into())
            }
        }
    }

    /// The step after the audio of [`Step::Transcribe`] was transcribed as `run`.
    pub fn transcribed(&mut self, run: Run) -> Step {
        let State::Audio { read } = std::mem::replace(&mut self.state, State::Done) else {
            return Step::Failed("the intake was not waiting for a transcription".into());
        };
        let audio_url = read.item.audio_url.clone().unwrap_or_default();
        match arrival(*read, audio_url, run) {
            Ok(arrived) => Step::Arrived(Box::new(arrived)),
            Err(reason) => Step::Failed(reason),
        }
    }

    /// The step after the last [`Step::Fetch`] could not be answered at all (no such host, a
    /// timeout, a refused redirect, a body over its bound): `reason` says why. A followed feed that
    /// cannot be read is passed over, as one that answers an error is.
    pub fn unreachable(&mut self, reason: String) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Feed { rest, then_address, page, .. } => self.next_feed(rest, then_address, page, reason),
            State::Address | State::Transcript { .. } | State::Audio { .. } | State::Done => {
                Step::Failed(reason)
            }
        }
    }

    /// The next feed to read, else the address itself (when the feeds were the followed ones), else
    /// `why` the last one failed.
    fn next_feed(
        &mut self,
        rest: Vec<String>,
        then_address: bool,
        page: Option<String>,
        why: String,
    ) -> Step {
        match rest.split_first() {
            Some((first, others)) => self.feed(first, others.to_vec(), then_address, page),
            None if then_address => self.read_address(),
            None => Step::Failed(why),
        }
    }

    fn checked(&self, url: &str, kind: Fetched) -> Result<Fetch, String> {
        let checked = outbound::check(url, &self.allowance).map_err(|refusal| format!("{url}: {refusal}"))?;
        Ok(Fetch { url: checked.to_string(), kind })
    }

    fn read_address(&mut self) -> Step {
        match self.checked(&self.address, Fetched::Page) {
            Ok(fetch) => {
                self.state = State::Address;
                Step::Fetch(fetch)
            }
            Err(reason) => Step::Failed(reason),
        }
    }

    fn feed(&mut self, url: &str, rest: Vec<String>, then_address: bool, page: Option<String>) -> Step {
        match self.checked(url, Fetched::Feed) {
            Ok(fetch) => {
                self.state = State::Feed { url: fetch.url.clone(), rest, then_address, page };
                Step::Fetch(fetch)
            }
            Err(reason) => Step::Failed(reason),
        }
    }

    fn address_read(&mut self, answer: Answer) -> Step {
        if !(200..300).contains(&answer.status) {
            return Step::Failed(format!("{} answered HTTP {}", self.address, answer.status));
        }
        let kind = answer.content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        if (kind.starts_with("audio/") || kind.starts_with("video/")) && self.service.is_some() {
            return Step::Failed(format!(
                "{} is an audio file that no followed feed lists: without its feed, its show and its \
                 licence are unknown, so it cannot be published; ask for it by its episode's page, or \
                 follow its show's feed",
                self.address
            ));
        }
        if kind.starts_with("audio/") || kind.starts_with("video/") {
            return Step::Failed(format!(
                "{} is an audio file that no followed feed lists: taking it in needs a transcription \
                 service (TRANSCRIBE_PROVIDER), and none is configured",
                self.address
            ));
        }
        if looks_like_feed(&kind, &answer.body) {
            return Step::Failed(format!(
                "{} is a feed: give the address of one of its episodes (its page, its audio or its guid)",
                self.address
            ));
        }
        let links = feed_links(&answer.body, &answer.url);
        let Some((first, rest)) = links.split_first() else {
            return Step::Failed(format!(
                "the page at {} names no RSS feed (<link rel=\"alternate\" type=\"application/rss+xml\">), \
                 so its episode cannot be found",
                answer.url
            ));
        };
        self.feed(first, rest.to_vec(), false, Some(answer.url))
    }

    fn feed_read(
        &mut self,
        url: &str,
        answer: Answer,
        rest: Vec<String>,
        then_address: bool,
        page: Option<String>,
    ) -> Step {
        let next = |intake: &mut Intake, why: String| {
            intake.next_feed(rest.clone(), then_address, page.clone(), why)
        };
        if !(200..300).contains(&answer.status) {
            return next(self, format!("the feed at {url} answered HTTP {}", answer.status));
        }
        let base = Url::parse(&answer.url).or_else(|_| Url::parse(url));
        let Ok(base) = base else { return Step::Failed(format!("{url} is not an address")) };
        let parsed = match feed::parse(&answer.body, &base) {
            Ok(parsed) => parsed,
            Err(err) => return next(self, format!("the feed at {url}: {err}")),
        };
        let wanted = [Some(self.address.as_str()), page.as_deref()];
        let item =
            parsed.items.iter().find(|item| wanted.iter().flatten().any(|address| item.is_named_by(address)));
        let Some(item) = item.cloned() else {
            return next(
                self,
                format!("the feed at {url} has no item whose page, audio or guid is {}", self.address),
            );
        };
        // What stops the job is found before anything is fetched for the item or bought for it.
        let show = match self.shows.show_for(&[url, &answer.url], &parsed) {
            Ok(show) => show,
            Err(reason) => return Step::Failed(reason),
        };
        if let Some(reason) = item_licence_problem(&item) {
            return Step::Failed(reason);
        }
        let transcript = item.transcript_to_take().map(|(link, format)| (link.url.clone(), format));
        let read = Read { feed_url: answer.url.clone(), feed: parsed, item, show };
        let Some((link, format)) = transcript else {
            if self.service.is_some() {
                return self.audio_to_transcribe(read);
            }
            let item = read.item;
            return Step::Failed(format!(
                "\"{}\" has no transcript in its feed (<podcast:transcript> in WebVTT, Podcasting 2.0 JSON or \
                 SRT), and this site transcribes no audio (no TRANSCRIBE_PROVIDER is configured): nothing can \
                 be done here until the publisher's feed carries a transcript",
                item.title
            ));
        };
        match self.checked(&link, Fetched::Transcript) {
            Ok(fetch) => {
                self.state = State::Transcript { read: Box::new(read), format };
                Step::Fetch(fetch)
            }
            Err(reason) => Step::Failed(format!("the transcript of \"{}\": {reason}", read.item.title)),
        }
    }

    /// The item's audio to transcribe, once checked.
    fn audio_to_transcribe(&mut self, read: Read) -> Step {
        let (feed, item) = (&read.feed, &read.item);
        let Some(audio) = item.audio_url.clone() else {
            return Step::Failed(format!(
                "\"{}\" has neither a transcript nor audio in its feed: there is nothing to transcribe",
                item.title
            ));
        };
        let audio_url = match self.checked(&audio, Fetched::Page) {
            Ok(checked) => checked.url,
            Err(reason) => return Step::Failed(format!("the audio of \"{}\": {reason}", item.title)),
        };
        let mut known_names: Vec<String> = Vec::new();
        for person in feed.persons.iter().chain(&item.persons) {
            if !known_names.contains(&person.name) {
                known_names.push(person.name.clone());
            }
        }
        let audio = Audio {
            audio_url,
            title: item.title.clone(),
            hours: transcribe::estimated_hours(item.duration_s, item.audio_bytes),
            known_names,
        };
        self.state = State::Audio { read: Box::new(read) };
        Step::Transcribe(Box::new(audio))
    }

    fn transcript_read(&mut self, read: Read, format: Format, answer: Answer) -> Step {
        if !(200..300).contains(&answer.status) {
            return Step::Failed(format!("the transcript at {} answered HTTP {}", answer.url, answer.status));
        }
        let Ok(text) = String::from_utf8(answer.body) else {
            return Step::Failed(format!("the transcript at {} is not UTF-8 text", answer.url));
        };
        let segments = match import(format, &text, None) {
            Ok(segments) => segments,
            Err(err) => {
                return Step::Failed(format!(
                    "the transcript at {} is not {}: {err}",
                    answer.url,
                    format.code()
                ));
            }
        };
        let run = publisher_run(format, segments, RunKind::Asr, &self.created);
        match arrival(read, answer.url, run) {
            Ok(arrived) => Step::Arrived(Box::new(arrived)),
            Err(reason) => Step::Failed(reason),
        }
    }
}

/// The episode of the item `read` with its transcript's `run`, read from `transcript_url`.
fn arrival(read: Read, transcript_url: String, run: Run) -> Result<Arrival, String> {
    let Read { feed_url, feed, item, show } = read;
    let episode = record_of(&feed, &item, &run, transcript_url)?;
    Ok(Arrival { feed_url, feed, show, episode, run })
}

/// Why an item's own licence (`<podcast:license>` on the item) stops it, if it does.
fn item_licence_problem(item: &FeedItem) -> Option<String> {
    let licence = item.licence.as_deref()?;
    canonical_licence(licence).is_none().then(|| {
        format!(
            "\"{}\" is licensed `{licence}`, which this site cannot publish (it publishes {}); nothing \
             can be done here unless the publisher licenses the episode under one of them",
            item.title,
            PUBLISHABLE.join(", ")
        )
    })
}

/// The record of `item` with its transcript's `run`, checked as `builder check` checks content: an
/// item that cannot make one says why, and nothing is written for it.
pub fn record_of(feed: &Feed, item: &FeedItem, run: &Run, transcript_url: String) -> Result<Episode, String> {
    let Some(source_url) = episode_address(feed, item) else {
        return Err("it has neither a page of its own nor audio: nothing addresses it".into());
    };
    let published = match (&item.published, &item.pub_date) {
        (Some(date), _) => date.clone(),
        (None, Some(written)) => return Err(format!("its pubDate `{written}` is not a date")),
        (None, None) => return Err("it has no pubDate".into()),
    };
    if let Some(problem) = item_licence_problem(item) {
        return Err(problem);
    }
    let episode = Episode {
        title: item.title.clone(),
        source_url,
        published,
        roster: roster(&feed.persons, &item.persons, run),
        canonical_run: None,
        licence: item.licence.as_deref().and_then(canonical_licence).map(str::to_string),
        attribution: None,
        derived_from: Some(transcript_url),
        audio_url: item.audio_url.clone(),
    };
    let problems: Vec<String> = validate_episode(&episode)
        .iter()
        .map(ToString::to_string)
        .chain(validate_run(run).iter().map(|problem| format!("run {problem}")))
        .collect();
    if problems.is_empty() { Ok(episode) } else { Err(problems.join("; ")) }
}

/// The id of the one job of a normalised address (`in_` and the address's hash, as an episode id
/// is `ep_` and the same hash).
pub fn job_id(normalised_url: &str) -> String {
    format!("in_{}", &episode_id(normalised_url)["ep_".len()..])
}

/// The newest items of a followed feed looked at each time it changes: a show's back catalogue is not
/// taken in all at once, only what it publishes from now on and its latest episodes.
pub const FEED_ITEMS_PER_READ: usize = 20;

/// An item of a followed feed to take in: its address as given and normalised, and what else it is
/// known by (its `guid`, its audio's normalised address), which its job keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewItem {
    pub source_url: String,
    pub normalised_url: String,
    pub guid: Option<String>,
    pub audio: Option<String>,
}

/// What the site already holds of a followed feed: whether an episode is published (by episode id),
/// and the `guid`s and audio addresses of the items it made jobs of.
pub struct Known<'a> {
    pub published: &'a dyn Fn(&str) -> bool,
    pub guids: &'a std::collections::HashSet<String>,
    pub audio: &'a std::collections::HashSet<String>,
}

/// The items of `feed` (its [`FEED_ITEMS_PER_READ`] newest) the site does not hold: not known by
/// their `guid`, then by their audio, then by their address's episode. A publisher that moves its
/// pages or its audio keeps its `guid`s, so a moved item is not taken in twice.
pub fn new_items(feed: &Feed, known: &Known) -> Vec<NewItem> {
    feed.items
        .iter()
        .take(FEED_ITEMS_PER_READ)
        .filter_map(|item| {
            let guid = item.guid.clone().filter(|guid| !guid.trim().is_empty());
            let audio = item.audio_url.as_deref().and_then(normalise_source_url);
            if guid.as_ref().is_some_and(|guid| known.guids.contains(guid))
                || audio.as_ref().is_some_and(|audio| known.audio.contains(audio))
            {
                return None;
            }
            let source_url = episode_address(feed, item)?;
            let normalised_url = normalise_source_url(&source_url)?;
            (!(known.published)(&episode_id(&normalised_url))).then_some(NewItem {
                source_url,
                normalised_url,
                guid,
                audio,
            })
        })
        .collect()
}

/// The names of an episode on arrival: the service's own identification (source 1), the language
/// model's votes when it was asked (source 2, `language_model`), and voice match's abstention for every
/// label of a run without speaker embeddings, said in the record (source 3). Elimination (source 4)
/// is worked out whenever the names are resolved, never stored.
pub fn names_on_arrival(runs: &[Run], language_model: Option<&BTreeMap<String, Vote>>) -> Names {
    let mut names = merge(&Names::default(), VoteSource::Asr, &asr_votes_of(runs));
    let mut unheard: BTreeMap<String, Vote> = BTreeMap::new();
    for run in runs.iter().filter(|run| run.speaker_embeddings.is_none()) {
        for segment in &run.segments {
            unheard.entry(segment.speaker.clone()).or_insert_with(|| {
                Vote::new(
                    VoteSource::VoiceMatch,
                    None,
                    format!("no embeddings: run {} carries none", run.pipeline),
                )
                .with_model(voice::MATCHER)
            });
        }
    }
    names = merge(&names, VoteSource::VoiceMatch, &unheard);
    if let Some(votes) = language_model {
        names = merge(&names, VoteSource::LanguageModel, votes);
    }
    names
}

/// An episode that arrived, named and published in the show it joins ([`Arrival::show`]): its
/// content files and what the build would make. `language_model` is source 2's votes, when the
/// model was asked ([`names_on_arrival`]).
pub fn publish_arrival(
    arrival: Arrival,
    language_model: Option<&BTreeMap<String, Vote>>,
) -> Result<(Content, Built), String> {
    let Arrival { show: (show, show_record), episode, run, .. } = arrival;
    let runs = vec![run];
    let names = names_on_arrival(&runs, language_model);
    let built = publish(&show, &show_record, episode.clone(), names.clone(), runs.clone())
        .ok_or_else(|| "the episode has no address this site can key it by".to_string())?;
    Ok((Content { show, show_record, episode, names, runs }, built))
}

/// What a failure's reason says when asking again cannot help: the publisher has to change
/// something first. A reason without it names what the reader can do (check the address, ask again
/// later).
pub const NOTHING_TO_DO: &str = "nothing can be done here";

/// Whether a failed job's `reason` is one asking again cannot mend ([`NOTHING_TO_DO`]).
pub fn is_final(reason: &str) -> bool {
    reason.contains(NOTHING_TO_DO)
}

/// The licences this site publishes transcripts under, as SPDX spells them.
pub const PUBLISHABLE: [&str; 3] = ["CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0"];

/// The SPDX id of a licence this site publishes under, spelt as SPDX does: ids match without
/// regard to case (`cc-by-4.0` is `CC-BY-4.0`), as the SPDX specification says.
pub fn canonical_licence(id: &str) -> Option<&'static str> {
    let id = id.trim();
    PUBLISHABLE
        .into_iter()
        .find(|known| known.eq_ignore_ascii_case(id))
        .filter(|known| licence_url(known).is_some())
}

/// Why a show cannot be made from a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShowRefusal {
    /// Neither the feed nor a person names a licence this site publishes under: what the feed says.
    NoLicence { said: Option<String> },
    /// A person named a licence this site does not publish under.
    NotPublishable(String),
    /// The feed does not make a valid record: each problem.
    Invalid(Vec<String>),
}

impl core::fmt::Display for ShowRefusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ShowRefusal::NoLicence { said } => {
                let said = said
                    .as_deref()
                    .map_or("it names none, in <podcast:license> or <copyright>".into(), |said| {
                        format!("it says `{said}`")
                    });
                write!(
                    f,
                    "the show's feed names no licence this site publishes under ({said}); the site publishes \
                     transcripts only under {}, so nothing can be done here until the publisher's feed names \
                     one",
                    PUBLISHABLE.join(", ")
                )
            }
            ShowRefusal::NotPublishable(licence) => write!(
                f,
                "`{licence}` is not a licence this site publishes under: it publishes {}",
                PUBLISHABLE.join(", ")
            ),
            ShowRefusal::Invalid(problems) => {
                write!(f, "the feed does not make a show record: {}", problems.join("; "))
            }
        }
    }
}

/// The show's record from its feed: its title, page, description, credit line and licence — `given`
/// (what the publisher grants, told by a person), else the feed's own when it is one this site
/// publishes under, spelt as SPDX does. The credit line is the feed's `<copyright>` when it says
/// more than the licence, else its author (`itunes:author`).
pub fn show_of(feed: &Feed, given: Option<&str>) -> Result<Show, ShowRefusal> {
    let licence = match (given, feed.licence.as_deref()) {
        (Some(given), _) => {
            canonical_licence(given).ok_or_else(|| ShowRefusal::NotPublishable(given.trim().to_string()))?
        }
        (None, Some(named)) => canonical_licence(named)
            .ok_or_else(|| ShowRefusal::NoLicence { said: Some(named.to_string()) })?,
        (None, None) => return Err(ShowRefusal::NoLicence { said: None }),
    };
    let credit = feed
        .copyright
        .clone()
        .filter(|copyright| canonical_licence(copyright).is_none())
        .or_else(|| feed.author.clone());
    let show = Show {
        title: feed.title.clone(),
        url: feed.link.clone(),
        description: feed.description.clone(),
        licence: licence.to_string(),
        attribution: credit,
        feed_url: None,
    };
    let problems: Vec<String> = validate_show(&show).iter().map(ToString::to_string).collect();
    if problems.is_empty() { Ok(show) } else { Err(ShowRefusal::Invalid(problems)) }
}

/// The address an item's episode is known by: its page, unless another item of the feed shares it
/// or it is the show's own page (many feeds give every item the show's home page), then its audio.
pub fn episode_address(feed: &Feed, item: &FeedItem) -> Option<String> {
    let shared = |link: &str| {
        feed.link.as_deref() == Some(link)
            || feed.items.iter().filter(|other| other.link.as_deref() == Some(link)).count() > 1
    };
    item.link.clone().filter(|link| !shared(link)).or_else(|| item.audio_url.clone())
}

/// A publisher's transcript as a run: pipeline `publisher-<format>`.
pub fn publisher_run(format: Format, segments: Vec<Segment>, kind: RunKind, created: &str) -> Run {
    Run {
        pipeline: format!("publisher-{}", format.code()),
        kind,
        created: created.to_string(),
        imported_from: Some(format.code().to_string()),
        segments,
        speaker_embeddings: None,
        speaker_names: None,
    }
}

/// An episode's roster from its feed's people (the show's, then the item's, each once). When the run
/// names every voice, a person who is not among them does not speak in this episode and is left off
/// (`builder check` would flag them); otherwise any of them may.
pub fn roster(show: &[FeedPerson], item: &[FeedPerson], run: &Run) -> Vec<Person> {
    let voices: Vec<String> = run.segments.iter().map(|segment| name_key(&segment.speaker)).collect();
    let all_named = !run.segments.iter().any(|segment| is_anonymous_label(&segment.speaker));
    let mut roster: Vec<Person> = Vec::new();
    for person in show.iter().chain(item) {
        if all_named && !voices.contains(&name_key(&person.name)) {
            continue;
        }
        let role = if matches!(person.role.as_str(), "host" | "co-host") { Role::Host } else { Role::Guest };
        if !roster.iter().any(|known| known.name == person.name) {
            roster.push(Person { name: person.name.clone(), role, no_voiceprint: false });
        }
    }
    roster
}

/// Whether an answer is a feed rather than a page.
fn looks_like_feed(content_type: &str, body: &[u8]) -> bool {
    let xml_type = matches!(content_type, "application/rss+xml" | "application/xml" | "text/xml")
        || (content_type.ends_with("+xml") && content_type != "application/xhtml+xml");
    let start = String::from_utf8_lossy(&body[..body.len().min(512)])
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_string();
    xml_type || start.starts_with("<?xml") || start.starts_with("<rss")
}

/// The feeds a page names (`<link rel="alternate" type="application/rss+xml" href>`), absolute, in
/// the page's order.
pub fn feed_links(html: &[u8], page_url: &str) -> Vec<String> {
    let Ok(base) = Url::parse(page_url) else { return Vec::new() };
    let mut links = Vec::new();
    for token in html5gum::Tokenizer::new(html).flatten() {
        let html5gum::Token::StartTag(tag) = token else { continue };
        if tag.name.as_slice() != b"link" {
            continue;
        }
        let attr = |name: &str| {
            tag.attributes.get(name.as_bytes()).map(|value| String::from_utf8_lossy(value).trim().to_string())
        };
        let rel = attr("rel").unwrap_or_default().to_ascii_lowercase();
        let kind = attr("type").unwrap_or_default().to_ascii_lowercase();
        let is_feed = rel.split_ascii_whitespace().any(|word| word == "alternate")
            && matches!(kind.as_str(), "application/rss+xml" | "application/xml" | "text/xml");
        let url = attr("href").filter(|_| is_feed).and_then(|href| base.join(&href).ok()).map(String::from);
        if let Some(url) = url.filter(|url| !links.contains(url)) {
            links.push(url);
        }
    }
    links
}

/// Where an intake job stands: `queued`, `fetching`, `transcribing`, `identifying`, then `ready` or
/// `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Fetching,
    Transcribing,
    Identifying,
    Ready,
    Failed,
}

impl JobState {
    pub const ALL: [JobState; 6] = [
        JobState::Queued,
        JobState::Fetching,
        JobState::Transcribing,
        JobState::Identifying,
        JobState::Ready,
        JobState::Failed,
    ];

    /// The state's name, as stored and answered.
    pub fn code(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Fetching => "fetching",
            JobState::Transcribing => "transcribing",
            JobState::Identifying => "identifying",
            JobState::Ready => "ready",
            JobState::Failed => "failed",
        }
    }

    pub fn from_code(code: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|state| state.code() == code)
    }

    /// Whether the job has finished (ready or failed).
    pub fn finished(self) -> bool {
        matches!(self, JobState::Ready | JobState::Failed)
    }
}

#[cfg(test)]
mod tests;
