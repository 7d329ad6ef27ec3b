//! The quote service's pages (minijinja): check a quote (`/quotes`), an episode (`/episodes/{id}`)
//! and two of its runs compared, a show, phrase search (`/search`) and the editors' review queue
//! (`/kitchen/review`). The Worker renders them; the build renders each episode's page and its first
//! comparison ahead ([`built_episode_page`], [`built_compare_page`]).
//!
//! Every page works without JavaScript: forms are GET forms whose answer is a shareable address
//! (the review form posts), times are links. The one script (`player.html`, admitted by hash like
//! the recipe pages' scripts) moves a player to its quote's second and follows `#t=` anchors. A
//! player loads nothing until a person presses play (`preload="none"`), so a page requests nothing
//! from another site by itself. A turn's anchor is `#t=<whole seconds>`, the form of a media
//! fragment, so `/episodes/{id}#t=65` cites a turn and its moment at once. Transcript text sits in
//! `dir="auto"` blocks and names in `<bdi>`: a Hebrew turn reads right to left beside English.

use std::collections::BTreeMap;

use minijinja::context;
use serde::Serialize;
use serde_json::{Value, json};

use crate::pages::{Renderer, Result};
use crate::quotes::intake::JobState;
use crate::quotes::quote::cite::{clock, listen_url};
use crate::quotes::quote::phrase::{Answer as SearchAnswer, Query};
use crate::quotes::quote::views::{self, Filters, SegmentView};
use crate::quotes::quote::{Attribution, MAX_QUOTE_CHARS};
use crate::quotes::transcript::compare::{Comparison, MAX_LISTED};
use crate::quotes::transcript::names::{self, LabelReport, NameState, Vote, VoteSource};
use crate::quotes::transcript::normalise::tokens;
use crate::quotes::transcript::review::Entry;
use crate::quotes::transcript::{Canonical, EpisodeHead, EpisodeRef, EpisodeSummary, ShowSummary};

const TAGLINE: &str = "who said it";
const FOOTER: &str = "Transcripts keep their own licences, shown with each episode.";

/// A name's state in a reporter's words.
pub fn state_word(state: NameState) -> &'static str {
    state.word()
}

fn source_word(source: VoteSource) -> &'static str {
    match source {
        VoteSource::Asr => "the transcription service",
        VoteSource::LanguageModel => "the language model",
        VoteSource::VoiceMatch => "the voice match",
        VoteSource::Elimination => "elimination",
    }
}

fn and_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why the name of `label` is in its state: which sources agreed, which one alone vouches, who
/// disagreed, or who decided.
pub fn state_reason(label: &str, report: Option<&LabelReport>) -> String {
    let Some(report) = report else { return "No source named this voice.".into() };
    if let Some(human) = &report.human {
        let note = human.note.as_deref().map(|note| format!(" ({note})")).unwrap_or_default();
        return format!("Decided by {}{note}.", human.by);
    }
    let named: Vec<&Vote> = report.votes.iter().filter(|vote| vote.name.is_some()).collect();
    let sources: Vec<&str> = named.iter().map(|vote| source_word(vote.source)).collect();
    match report.name_state {
        NameState::Confident => capitalised(&format!("{} agree.", and_list(&sources))),
        _ if names::is_merged_label(label) => {
            let voices: Vec<&str> = label.split(names::MERGED).collect();
            let named = match sources.as_slice() {
                [] => String::new(),
                [one] => format!("; {one} names them, but"),
                many => format!("; {} name them, but", and_list(many)),
            };
            format!(
                "The transcription service could not tell the voices {} apart, so these turns may be any \
                 of theirs{} no one name is certain for them.",
                and_list(&voices),
                if named.is_empty() { " and".to_string() } else { named },
            )
        }
        _ if names::holds_several_voices(label) => "Nobody separated the voices of this transcript: these \
             turns may be several people's, and no one name is certain for them."
            .into(),
        NameState::Tentative => {
            format!("Only {} names them; no other source confirms it.", and_list(&sources))
        }
        NameState::Withheld => {
            let said: Vec<String> = named
                .iter()
                .map(|vote| {
                    format!("{} says {}", source_word(vote.source), vote.name.as_deref().unwrap_or_default())
                })
                .collect();
            format!("The sources disagree: {}.", said.join("; "))
        }
        NameState::Human | NameState::Unknown => "No source named this voice.".into(),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Who a label is, for a reader: the name, or what stands in for it.
fn who(name: Option<&str>, label: &str, state: NameState) -> String {
    match (name, state) {
        (Some(name), _) => name.to_string(),
        (None, NameState::Withheld) => format!("name withheld ({label})"),
        (None, _) => format!("unidentified ({label})"),
    }
}

/// The anchor of a moment: whole seconds.
pub fn anchor(seconds: f64) -> u64 {
    seconds.max(0.0).floor() as u64
}

fn turn_href(episode: &str, seconds: f64) -> String {
    format!("/episodes/{episode}#t={}", anchor(seconds))
}

/// The audio a page's player plays, when the episode's audio is a file a browser can play.
fn playable(episode: &EpisodeRef) -> Option<String> {
    let audio = url::Url::parse(episode.audio_url.as_deref()?).ok()?;
    let host = audio.host_str().unwrap_or_default();
    (audio.scheme() == "https" && !host.ends_with("youtube.com") && !host.ends_with("youtu.be"))
        .then(|| audio.to_string())
}

fn duration(seconds: f64) -> String {
    let minutes = (seconds / 60.0).round() as u64;
    if minutes >= 60 {
        format!("{} h {:02} min", minutes / 60, minutes % 60)
    } else {
        format!("{minutes} min")
    }
}

/// A segment's text split around the words of `quote` it holds (the longest run of them, in order).
fn marked(text: &str, quote_norms: &[String]) -> (String, String, String) {
    let found = tokens(text);
    let mut best: Option<(usize, usize)> = None;
    for start in 0..found.len() {
        for offset in 0..quote_norms.len() {
            let run = found[start..]
                .iter()
                .zip(&quote_norms[offset..])
                .take_while(|(token, norm)| &token.norm == *norm)
                .count();
            if run > 0 && best.is_none_or(|(_, len)| run > len) {
                best = Some((start, run));
            }
        }
    }
    match best.filter(|(_, len)| *len >= quote_norms.len().min(2)) {
        Some((start, len)) => {
            let (from, to) = (found[start].start, found[start + len - 1].end);
            (text[..from].to_string(), text[from..to].to_string(), text[to..].to_string())
        }
        None => (text.to_string(), String::new(), String::new()),
    }
}

/// The version of the episode's pages as the build stores them (its page and its runs compared); it
/// changes whenever their markup does, so a Worker never serves a stored page its own code would not
/// render. The unit test
/// `built_episode_pages_are_this_versions` holds a sample page's hash to it: when it fails, change
/// this number with the expectation.
pub const EPISODE_PAGE_VERSION: u32 = 4;

/// Where the build stores an episode's page, as rendered with the names it resolved.
pub fn built_episode_page(episode_id: &str) -> String {
    format!("episodes/{episode_id}/page.v{EPISODE_PAGE_VERSION}.html")
}

/// Where the build stores the page comparing an episode's canonical run with the first other one
/// (`/episodes/{id}/compare` without a pair asked for), as rendered with the names it resolved.
pub fn built_compare_page(episode_id: &str) -> String {
    format!("episodes/{episode_id}/compare.v{EPISODE_PAGE_VERSION}.html")
}

/// What the quote page shows of a question and its answer.
#[derive(Debug, Default)]
pub struct QuoteView<'a> {
    pub quote: &'a str,
    pub source_url: &'a str,
    pub n_episodes: usize,
    /// The question's problems, in words.
    pub problems: Vec<String>,
    pub answer: Option<&'a Attribution>,
    /// The report behind the found speaker's name.
    pub report: Option<&'a LabelReport>,
    /// The turns around the quote.
    pub context: &'a [SegmentView],
    /// Passages close to a quote that was not found.
    pub closest: Option<&'a SearchAnswer>,
    /// An address we do not hold, and its intake job if it has one.
    pub unknown: Option<&'a UnknownEpisode>,
}

/// An address no published episode has: where its intake job stands, if anyone asked for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnknownEpisode {
    /// The job's state.
    pub state: Option<JobState>,
    /// Why it failed.
    pub reason: Option<String>,
    /// The job's address in the API.
    pub job_url: Option<String>,
}

/// What an intake job is doing, in a reader's words; `None` once it failed.
fn job_words(state: JobState) -> Option<&'static str> {
    match state {
        JobState::Queued => Some("waiting its turn"),
        JobState::Fetching => Some("reading the episode's page and feed"),
        JobState::Transcribing => Some("being transcribed"),
        JobState::Identifying => Some("naming its speakers"),
        JobState::Ready => Some("ready"),
        JobState::Failed => None,
    }
}

/// What the review queue's page shows.
#[derive(Debug)]
pub struct ReviewView<'a> {
    /// The editor's handle.
    pub account: &'a str,
    /// The session's CSRF token, which each form posts.
    pub csrf: &'a str,
    /// The entries shown, most cited first.
    pub entries: &'a [Entry],
    /// The people each show knows, by show.
    pub known: &'a BTreeMap<String, Vec<String>>,
    /// How many entries the queue holds.
    pub total: usize,
    /// The label just decided: `{episode, label, name, state}`.
    pub saved: Option<Value>,
    /// A decision refused, shown at its entry with what was typed.
    pub refused: Option<&'a Refused>,
}

/// A decision the review form sent and the server refused: the form is shown again as it was.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refused {
    /// The episode of the label.
    pub episode: String,
    /// The label whose name was refused.
    pub label: String,
    /// The name typed (empty when a source's vote was confirmed).
    pub name: String,
    /// The note typed.
    pub note: String,
    /// Why, in words.
    pub problem: String,
}

fn hit_views(answer: &SearchAnswer) -> Vec<Value> {
    answer
        .hits
        .iter()
        .map(|hit| {
            json!({
                "episode": hit.episode.id, "title": hit.episode.title, "clock": clock(hit.start_s),
                "href": turn_href(&hit.episode.id, hit.start_s), "text": hit.text,
                "who": who(hit.name.as_deref(), &hit.speaker, hit.name_state), "state": state_word(hit.name_state),
            })
        })
        .collect()
}

impl Renderer {
    pub fn quote_page(&self, view: &QuoteView<'_>) -> Result<String> {
        let answer = view.answer.map(|answer| {
            let Some(found) = &answer.found_at else {
                let reason = match (answer.reason.as_deref(), &answer.episode) {
                    (Some("quote_not_found"), Some(episode)) => format!(
                        "The transcript of “{}” does not have these words, nor most of them in order. \
                         Only this episode was searched.",
                        episode.title
                    ),
                    (Some("quote_not_found"), None) => {
                        "No transcript we hold has these words, nor most of them in order.".into()
                    }
                    _ => "The quote was not found.".into(),
                };
                let everywhere = answer.episode.as_ref().map(|_| {
                    format!("/quotes?{}", url::form_urlencoded::Serializer::new(String::new()).append_pair("quote", view.quote).finish())
                });
                return json!({"found": false, "reason": reason, "trust": "review", "episode": answer.episode, "everywhere": everywhere});
            };
            let episode = answer.episode.as_ref();
            let quote_norms: Vec<String> = tokens(&found.text).into_iter().map(|t| t.norm).collect();
            let context: Vec<Value> = view
                .context
                .iter()
                .map(|turn| {
                    let inside = turn.start_s <= found.end_s && found.start_s <= turn.end_s;
                    let (before, mark, after) = if inside {
                        marked(&turn.text, &quote_norms)
                    } else {
                        (turn.text.clone(), String::new(), String::new())
                    };
                    json!({
                        "clock": clock(turn.start_s), "href": turn_href(episode.map_or("", |e| &e.id), turn.start_s),
                        "who": who(turn.name.as_deref(), &turn.speaker, turn.name_state), "state": state_word(turn.name_state),
                        "before": before, "mark": mark, "after": after,
                    })
                })
                .collect();
            let alternatives: Vec<Value> = answer
                .alternatives
                .iter()
                .map(|alt| {
                    json!({
                        "href": turn_href(&alt.episode.id, alt.start_s), "clock": clock(alt.start_s), "title": alt.episode.title,
                        "who": who(alt.name.as_deref(), &alt.speaker, alt.name_state), "state": state_word(alt.name_state),
                    })
                })
                .collect();
            json!({
                "found": true,
                "who": who(found.name.as_deref(), &found.speaker, found.name_state),
                "then": found.speakers.iter().skip(1).map(|part| who(part.name.as_deref(), &part.speaker, part.name_state)).collect::<Vec<_>>(),
                "estimated": found.start_estimated,
                "state": state_word(found.name_state),
                "state_reason": state_reason(&found.speaker, view.report),
                "trust": if found.trust == crate::quotes::quote::Trust::High { "high" } else { "review" },
                "trust_reasons": found.review_reasons,
                "clock": clock(found.start_s),
                "start": anchor(found.start_s),
                // The quote's second on the episode page, whose player starts there and shows its turn.
                "turn_href": turn_href(episode.map_or("", |e| &e.id), found.start_s),
                "episode": episode,
                "audio": episode.and_then(playable).map(|audio| format!("{audio}#t={}", anchor(found.start_s))),
                "listen_url": found.listen_url,
                "cite": found.cite,
                "pipeline": found.pipeline,
                "context": context,
                "alternatives": alternatives,
            })
        });
        let title =
            if view.quote.is_empty() { "Check a quote".to_string() } else { format!("“{}”", view.quote) };
        self.env.get_template("quotes.html")?.render(context! {
            lang => "en", dir => "ltr", title => crate::clean::without_controls(&title),
            description => "Who said a quote in a podcast episode, and when.",
            tagline => TAGLINE, footer => FOOTER,
            quote => view.quote, source_url => view.source_url, n_episodes => view.n_episodes,
            max_quote => MAX_QUOTE_CHARS, problems => view.problems, answer,
            unknown => view.unknown.map(|unknown| json!({
                "failed": unknown.state == Some(JobState::Failed),
                "final": unknown.state == Some(JobState::Failed)
                    && unknown.reason.as_deref().is_some_and(crate::quotes::intake::is_final),
                "doing": unknown.state.and_then(job_words),
                "reason": unknown.reason, "job_url": unknown.job_url,
                "ask": format!("/kitchen?{}", url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("source_url", view.source_url).append_pair("quote", view.quote).finish()),
            })),
            closest => view.closest.map(hit_views),
        })
    }

    /// An episode's page: its canonical transcript (names with editors' decisions in force), who
    /// spoke how much, its runs and downloads. The build stores it ([`built_episode_page`]); the
    /// Worker renders it for an episode decided since, or taken in.
    pub fn episode_page(&self, record: &EpisodeHead, canonical: &Canonical) -> Result<String> {
        let all = Filters::default();
        let segments = &views::transcript(canonical, &all).segments;
        let stats = &views::speakers(canonical, &all);
        let episode = &canonical.episode;
        let mut seen = std::collections::BTreeSet::new();
        let audio = playable(episode);
        let turns: Vec<Value> = segments
            .iter()
            .enumerate()
            .map(|(idx, turn)| {
                let at = anchor(turn.start_s);
                // A turn is cited by its second; the first turn of that second holds the anchor.
                let id = seen.insert(at).then(|| format!("t={at}"));
                let same_speaker = idx > 0 && segments[idx - 1].speaker == turn.speaker;
                json!({
                    "id": id, "anchor": at, "clock": clock(turn.start_s), "text": turn.text,
                    "who": who(turn.name.as_deref(), &turn.speaker, turn.name_state),
                    "state": (!same_speaker).then(|| state_word(turn.name_state)),
                    "listen": episode.audio_url.as_ref().map(|_| listen_url(episode, turn.start_s)),
                })
            })
            .collect();
        let longest = stats.speakers.iter().map(|s| s.seconds).fold(0.0f64, f64::max).max(1.0);
        let bars: Vec<Value> = stats
            .speakers
            .iter()
            .map(|s| {
                json!({
                    "speaker": s.speaker, "seconds": s.seconds, "share": s.share,
                    "who": who(s.name.as_deref(), &s.speaker, s.name_state), "clock": clock(s.seconds),
                    "percent": (s.share * 100.0).round() as u64, "width": (s.seconds / longest * 600.0).round().max(1.0),
                })
            })
            .collect();
        let speakers: Vec<Value> = stats
            .speakers
            .iter()
            .map(|s| {
                json!({
                    "label": s.speaker, "who": who(s.name.as_deref(), &s.speaker, s.name_state),
                    "state": state_word(s.name_state), "clock": clock(s.seconds), "segments": s.segments,
                })
            })
            .collect();
        let runs: Vec<Value> = record
            .runs
            .iter()
            .map(|run| {
                // A publisher's transcript (`publisher-<format>`) may be machine-made or edited;
                // what a reader needs first is whose it is.
                let kind = match run.kind {
                    crate::quotes::transcript::RunKind::HumanEdited => "edited by a person",
                    _ if run.pipeline.starts_with("publisher-") => "the publisher's transcript",
                    crate::quotes::transcript::RunKind::Asr => "speech recognition",
                };
                json!({"pipeline": run.pipeline, "kind": kind, "created": run.created,
                       "canonical": run.pipeline == record.canonical_run})
            })
            .collect();
        let downloads: Vec<Value> = record
            .downloads
            .iter()
            .map(|(name, href)| json!({"name": download_name(name), "href": href}))
            .chain([json!({"name": "every run (JSON)", "href": format!("/episodes/{}.json", record.id)})])
            .collect();
        self.env.get_template("episode.html")?.render(context! {
            lang => "en", dir => "ltr", title => crate::clean::without_controls(&episode.title),
            description => format!("The transcript of {}, with who said what and when.", crate::clean::without_controls(&episode.title)),
            tagline => TAGLINE, footer => FOOTER,
            episode, duration => duration(record.duration_s), audio, turns, speakers, runs, downloads,
            canonical_run => record.canonical_run, compared => record.other_than(&record.canonical_run),
            check_href => format!("/quotes?{}", url::form_urlencoded::Serializer::new(String::new()).append_pair("source_url", &episode.source_url).finish()),
            chart => json!({"bars": bars}),
        })
    }

    /// Two runs of an episode compared; labels are shown with their names.
    pub fn compare_page(
        &self,
        record: &EpisodeHead,
        first: &str,
        second: &str,
        diff: &Comparison,
    ) -> Result<String> {
        let named = |label: &str| {
            let report = record.names.get(label);
            let state = report.map_or(NameState::Unknown, |r| r.name_state);
            let name = report.and_then(|r| r.name.as_deref());
            match name {
                Some(name) => format!("{name} ({label}, {})", state_word(state)),
                None => format!("{label} ({})", state_word(state)),
            }
        };
        let turn_changes: Vec<Value> = diff
            .turn_changes
            .iter()
            .map(|t| json!({"anchor": anchor(t.from_s), "clock": clock(t.from_s), "first": named(&t.first), "second": named(&t.second), "words": t.words}))
            .collect();
        let word_changes: Vec<Value> = diff
            .word_changes
            .iter()
            .map(|w| json!({"anchor": anchor(w.at_s), "clock": clock(w.at_s), "first": w.first, "second": w.second}))
            .collect();
        let labels: Vec<Value> =
            diff.labels.iter().map(|(b, a)| json!({"second": named(b), "first": named(a)})).collect();
        self.env.get_template("compare.html")?.render(context! {
            lang => "en", dir => "ltr", title => format!("{first} and {second}: {}", crate::clean::without_controls(&record.title)),
            tagline => TAGLINE, footer => FOOTER,
            episode => json!({"id": record.id, "title": record.title}), first, second, diff, labels, turn_changes, word_changes,
            truncated => diff.word_changes_total > MAX_LISTED || diff.turn_changes_total > MAX_LISTED, max_listed => MAX_LISTED,
        })
    }

    /// A show and a page of its episodes; `next` is the next page's cursor.
    pub fn show_page(
        &self,
        show: &ShowSummary,
        episodes: &[EpisodeSummary],
        next: Option<&str>,
    ) -> Result<String> {
        let episodes: Vec<Value> = episodes
            .iter()
            .map(|e| json!({"id": e.id, "title": e.title, "published": e.published, "duration": duration(e.duration_s)}))
            .collect();
        // The show's site is a link only when it is a web address.
        let site = show
            .url
            .as_deref()
            .filter(|url| url::Url::parse(url).is_ok_and(|url| matches!(url.scheme(), "http" | "https")));
        self.env.get_template("show.html")?.render(context! {
            lang => "en", dir => "ltr", title => crate::clean::without_controls(&show.title), description => show.description,
            tagline => TAGLINE, footer => FOOTER, show, site, episodes, next,
        })
    }

    /// Phrase search: the form, and when asked its hits; `next` is the next page's address.
    pub fn search_page(
        &self,
        query: Option<&Query>,
        asked: (&str, &str),
        problems: &[String],
        answer: Option<&SearchAnswer>,
        next: Option<&str>,
    ) -> Result<String> {
        let title = match query.and_then(|q| q.q.as_deref()) {
            Some(q) => format!("“{q}” in transcripts"),
            None => "Search transcripts".to_string(),
        };
        self.env.get_template("search.html")?.render(context! {
            lang => "en", dir => "ltr", title => crate::clean::without_controls(&title),
            description => "Find a phrase in every podcast transcript, by speaker.",
            tagline => TAGLINE, footer => FOOTER, q => asked.0, speaker => asked.1, problems,
            asked => answer.is_some(), total => answer.map_or(0, |a| a.total), hits => answer.map(hit_views), next,
        })
    }

    /// The review queue of an editor (`account`): `entries` with the people each show knows, the
    /// form's CSRF token, and the decision just saved.
    pub fn review_page(&self, view: &ReviewView<'_>) -> Result<String> {
        let ReviewView { account, csrf, entries, known, total, saved, refused } = view;
        let entries: Vec<EntryShown<'_>> =
            entries.iter().enumerate().map(|(idx, entry)| EntryShown::of(idx, entry, *refused)).collect();
        // A refusal of a label this page does not show is said above the queue.
        let refused_elsewhere = refused
            .filter(|r| !view.entries.iter().any(|e| e.episode == r.episode && e.label == r.label))
            .map(|r| format!("{} ({} in {})", r.problem, r.label, r.episode));
        // One list of suggestions per show, however many of its labels the page shows.
        let known: Vec<Value> =
            known.iter().map(|(show, people)| json!({"id": known_id(show), "people": people})).collect();
        self.env.get_template("review.html")?.render(context! {
            lang => "en", dir => "ltr", title => "Names to review", tagline => TAGLINE, footer => FOOTER,
            account, csrf, entries, known, total, saved, refused_elsewhere,
            max_name => names::MAX_DECISION_NAME_CHARS, max_note => names::MAX_DECISION_NOTE_CHARS,
        })
    }
}

/// One entry of the review page, borrowed from the queue's (no copy of its text).
#[derive(Serialize)]
struct EntryShown<'a> {
    id: String,
    episode: &'a str,
    title: &'a str,
    label: &'a str,
    state: String,
    turns: usize,
    words: usize,
    votes: Vec<VoteShown<'a>>,
    first_turns: Vec<TurnShown<'a>>,
    known: String,
    confirm: Vec<&'a str>,
    refused: Option<&'a Refused>,
    /// The label may hold several people's speech ([`names::holds_several_voices`]): the page says
    /// so and offers no name to give it.
    several_voices: bool,
}

#[derive(Serialize)]
struct VoteShown<'a> {
    source: &'static str,
    name: Option<&'a str>,
    evidence: &'a str,
}

#[derive(Serialize)]
struct TurnShown<'a> {
    clock: String,
    href: String,
    text: &'a str,
    start: u64,
    audio: Option<&'a str>,
    listen: Option<String>,
}

impl<'a> EntryShown<'a> {
    fn of(idx: usize, entry: &'a Entry, refused: Option<&'a Refused>) -> EntryShown<'a> {
        let episode = EpisodeRef {
            id: entry.episode.clone(),
            title: String::new(),
            source_url: String::new(),
            show: String::new(),
            licence: String::new(),
            attribution: None,
            show_title: None,
            published: None,
            audio_url: entry.audio_url.clone(),
        };
        // The audio a browser plays here, as `playable` would have it.
        let audio = playable(&episode).map(|_| entry.audio_url.as_deref().unwrap_or_default());
        let mut confirm: Vec<&str> = entry.votes.iter().filter_map(|v| v.name.as_deref()).collect();
        crate::sorted::sort(&mut confirm);
        confirm.dedup();
        EntryShown {
            id: format!("entry-{idx}"),
            episode: &entry.episode,
            title: &entry.title,
            label: &entry.label,
            state: format!(
                "{}{}",
                state_word(entry.name_state),
                entry.name.as_deref().map(|n| format!(": {n}")).unwrap_or_default()
            ),
            turns: entry.turns,
            words: entry.words,
            votes: entry
                .votes
                .iter()
                .map(|v| VoteShown {
                    source: source_word(v.source),
                    name: v.name.as_deref(),
                    evidence: &v.evidence,
                })
                .collect(),
            first_turns: entry
                .first_turns
                .iter()
                .map(|t| TurnShown {
                    clock: clock(t.start_s),
                    href: turn_href(&entry.episode, t.start_s),
                    text: &t.text,
                    start: anchor(t.start_s),
                    audio,
                    listen: entry.audio_url.as_ref().map(|_| listen_url(&episode, t.start_s)),
                })
                .collect(),
            known: known_id(&entry.show),
            confirm,
            refused: refused.filter(|r| r.episode == entry.episode && r.label == entry.label),
            several_voices: names::holds_several_voices(&entry.label),
        }
    }
}

/// The id of a show's list of known people on the review page.
fn known_id(show: &str) -> String {
    format!("known-{show}")
}

fn download_name(key: &str) -> &str {
    match key {
        "json" => "transcript (JSON)",
        "webvtt" => "captions (WebVTT)",
        "podcasting20" => "Podcasting 2.0 transcript",
        other => other,
    }
}

/// Words of a quote that was not found, searched for together.
const CLOSEST_WORDS: usize = 3;
/// The most searches for a quote's closest passages.
const CLOSEST_SEARCHES: usize = 8;

/// The phrases a page searches for a quote that was not found, in order, until one has hits: three of
/// its words in a row at its start, at its end, then between. None for a quote of one word.
pub fn closest_phrases(quote: &str) -> Vec<String> {
    let words: Vec<&str> = tokens(quote).iter().map(|t| &quote[t.start..t.end]).collect();
    if words.len() < 2 {
        return Vec::new();
    }
    let take = CLOSEST_WORDS.min(words.len());
    let mut starts: Vec<usize> = vec![0, words.len() - take];
    starts.extend(1..words.len() - take);
    starts.dedup();
    starts.into_iter().take(CLOSEST_SEARCHES).map(|start| words[start..start + take].join(" ")).collect()
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::quotes::transcript::{RunHead, RunKind};

    /// The pages stored ones of this version hold, and the templates they are made of: a change
    /// here is a change of [`EPISODE_PAGE_VERSION`].
    #[test]
    fn built_episode_pages_are_this_versions() {
        let mut canonical = crate::quotes::quote::tests::canonical();
        canonical.episode.audio_url = Some("https://media.example/kitchen-table/1.mp3".into());
        canonical.episode.published = Some("2026-01-01".into());
        canonical.episode.attribution = Some("© The Kitchen Table".into());
        let report = |name: Option<&str>, name_state| LabelReport {
            name: name.map(str::to_string),
            name_state,
            votes: Vec::new(),
            human: None,
        };
        let run = |pipeline: &str| RunHead {
            pipeline: pipeline.into(),
            kind: RunKind::Asr,
            created: "2026-01-01".into(),
        };
        let head = EpisodeHead {
            id: canonical.episode.id.clone(),
            title: canonical.episode.title.clone(),
            canonical_run: canonical.pipeline.clone(),
            duration_s: 65.0,
            names: BTreeMap::from([
                ("S0".to_string(), report(Some("Ana Lima"), NameState::Confident)),
                ("S1".to_string(), report(Some("Ben Okafor"), NameState::Human)),
                ("S2".to_string(), report(None, NameState::Withheld)),
            ]),
            downloads: BTreeMap::from([("json".to_string(), "/episodes/x/transcript.json".to_string())]),
            runs: vec![run(&canonical.pipeline), run("assemblyai-best")],
            compared: None,
        };
        let renderer = Renderer::new().unwrap();
        let html = renderer.episode_page(&head, &canonical).unwrap();
        let mut other = canonical.clone();
        other.pipeline = "assemblyai-best".into();
        other.segments[0].text = "Bread is a slow food.".into();
        // A turn the other run gives to another voice, so the comparison lists a change of speaker.
        other.segments[1].speaker = "S2".into();
        let run_of = |c: &Canonical| crate::quotes::transcript::Run {
            pipeline: c.pipeline.clone(),
            kind: RunKind::Asr,
            created: "2026-01-01".into(),
            imported_from: None,
            segments: c.segments.clone(),
            speaker_embeddings: None,
            speaker_names: None,
        };
        let diff = crate::quotes::transcript::compare::compare(&run_of(&canonical), &run_of(&other));
        let compared = renderer.compare_page(&head, &canonical.pipeline, "assemblyai-best", &diff).unwrap();
        assert!(!diff.turn_changes.is_empty() && !diff.word_changes.is_empty(), "{diff:?}");
        assert!(compared.contains("Ben Okafor (S1, decided by an editor)"), "{compared}");
        let mut hasher = Sha256::new();
        hasher.update(html.as_bytes());
        hasher.update(compared.as_bytes());
        for (name, source) in crate::pages::TEMPLATES {
            if ["base.html", "episode.html", "player.html", "compare.html"].contains(&name) {
                hasher.update(source.as_bytes());
            }
        }
        let hash: String = hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
        expect_test::expect!["v4: 6560f533759c38fd"].assert_eq(&format!("v{EPISODE_PAGE_VERSION}: {hash}"));
    }

    #[test]
    fn a_quote_not_found_is_searched_by_its_start_its_end_then_between() {
        let phrases = closest_phrases("Bread, she said, is a slow food");
        assert_eq!(phrases[..3], ["Bread she said", "a slow food", "she said is"]);
        assert_eq!(phrases.len(), 5);
        assert_eq!(closest_phrases("yes no"), ["yes no"]);
        assert!(closest_phrases("bread").is_empty());
        assert_eq!(closest_phrases(&"word ".repeat(40)).len(), CLOSEST_SEARCHES);
    }

    #[test]
    fn the_quote_is_marked_in_its_turn_even_with_other_punctuation() {
        let norms: Vec<String> = tokens("bread is a slow food").into_iter().map(|t| t.norm).collect();
        let (before, mark, after) = marked("Well, Bread is a slow food, really.", &norms);
        assert_eq!(
            (before.as_str(), mark.as_str(), after.as_str()),
            ("Well, ", "Bread is a slow food", ", really.")
        );
        // A quote that crosses into the next turn marks the part this turn holds.
        let (_, mark, _) = marked("and then: bread is", &norms);
        assert_eq!(mark, "bread is");
    }

    #[test]
    fn a_state_says_which_sources_agree_or_disagree() {
        let report = LabelReport {
            name: None,
            name_state: NameState::Withheld,
            votes: vec![
                Vote::new(VoteSource::Asr, Some("Ana Lima".into()), "said so"),
                Vote::new(VoteSource::LanguageModel, Some("Dora Salgado".into()), "introduced"),
            ],
            human: None,
        };
        assert_eq!(
            state_reason("S0", Some(&report)),
            "The sources disagree: the transcription service says Ana Lima; the language model says Dora Salgado."
        );
        let merged = LabelReport {
            name: Some("Ana Lima".into()),
            name_state: NameState::Tentative,
            votes: vec![Vote::new(VoteSource::Asr, Some("Ana Lima".into()), "said so")],
            human: None,
        };
        assert_eq!(
            state_reason("A+B", Some(&merged)),
            "The transcription service could not tell the voices A and B apart, so these turns may be any \
             of theirs; the transcription service names them, but no one name is certain for them."
        );
        assert_eq!(
            state_reason("UNKNOWN", Some(&merged)),
            "Nobody separated the voices of this transcript: these turns may be several people's, and no \
             one name is certain for them."
        );
    }
}
