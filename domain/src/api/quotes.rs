//! The quote operations' inputs and answers: attribution, phrase search, transcripts,
//! speaker statistics, the episode list, and episodes asked for by their address.

pub use crate::quotes::intake::JobState;
use serde::{Deserialize, Serialize};

use super::declare::input;
#[cfg(feature = "schema")]
use super::{CURSOR_MAX_CHARS, CURSOR_PATTERN};
use super::{Input, limit, offset, required};
use crate::Diagnostic;
#[cfg(feature = "schema")]
use crate::quotes::intake::MAX_ADDRESS_CHARS;
#[cfg(feature = "schema")]
use crate::quotes::quote::MAX_QUOTE_CHARS;
use crate::quotes::quote::views::{DEFAULT_LIMIT, Filters, MAX_LIMIT, Page};
use crate::quotes::quote::{check_quote, phrase};
use crate::quotes::transcript::{normalise, normalise_source_url};

input! {
    /// `GET /api/attribute`, `attribute_quote`.
    pub struct QuoteAttribution {
        /// The episode's source address (its page URL; any spelling of it works). Leave it out to search
        /// every episode.
        source_url: String {
            regex(pattern = r"^https?://[A-Za-z0-9][A-Za-z0-9.-]{0,62}(/[A-Za-z0-9._~/-]*)?$")
        },
        /// The quote, as you have it.
        quote: String {
            required, length(min = 1, max = MAX_QUOTE_CHARS), regex(pattern = r"[A-Za-z0-9]{2}")
        },
    }
    /// A checked attribution question: the episode's normalised address, if one was given (else the
    /// whole corpus), and the quote.
    => pub struct QuoteAsked {
        pub source_url: Option<String>,
        pub quote: String,
    }
    |input, problems| {
        let url = input.source_url.filter(|url| !url.trim().is_empty());
        let normalised = url.map(|url| {
            let normalised = normalise_source_url(&url);
            if normalised.is_none() {
                problems.push(Diagnostic::new("source_url", "must be an http(s) URL with a host"));
            }
            normalised
        });
        let quote = check_quote(input.quote.as_deref()).map_err(|problem| problems.push(problem)).ok();
        Some(QuoteAsked { source_url: normalised.flatten(), quote: quote?.to_string() })
    }
}

input! {
    /// `GET /api/search`, `search_transcripts`.
    #[derive(Default)]
    pub struct TranscriptSearch {
        /// A phrase to find. Give `q`, `speaker`, or both.
        q: String { length(max = phrase::MAX_QUERY_CHARS), regex(pattern = r"[A-Za-z0-9]{2}") },
        /// A person's name: only what they said (alone: everything they said).
        speaker: String { length(min = 1, max = phrase::MAX_SPEAKER_CHARS) },
        /// Hits per page (default 10; each hit carries its whole passage).
        limit: u32 { range(min = 1, max = MAX_LIMIT) },
        /// `next_cursor` of the previous page.
        cursor: String { regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS) },
    }
    => phrase::Query
    |input, problems| {
        let q = input.q.map(|q| q.trim().to_string()).filter(|q| !q.is_empty());
        if let Some(q) = &q {
            if q.chars().count() > phrase::MAX_QUERY_CHARS {
                let reason = format!("is longer than {} characters", phrase::MAX_QUERY_CHARS);
                problems.push(Diagnostic::new("q", reason));
            } else if normalise::tokens(q).is_empty() {
                problems.push(Diagnostic::new("q", "has no words"));
            }
        }
        let speaker = input.speaker.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        if speaker.as_ref().is_some_and(|s| s.chars().count() > phrase::MAX_SPEAKER_CHARS) {
            let reason = format!("is longer than {} characters", phrase::MAX_SPEAKER_CHARS);
            problems.push(Diagnostic::new("speaker", reason));
        }
        let page = Page {
            limit: limit(input.limit, phrase::DEFAULT_LIMIT, MAX_LIMIT, problems),
            offset: offset(input.cursor.as_deref(), problems),
        };
        if problems.is_empty() && q.is_none() && speaker.is_none() {
            problems.push(Diagnostic::new("q", "give a phrase `q`, a `speaker`, or both"));
        }
        Some(phrase::Query { q, speaker, page })
    }
}

fn page(limit_asked: Option<u32>, cursor: Option<&str>, problems: &mut Vec<Diagnostic>) -> Page {
    Page { limit: limit(limit_asked, DEFAULT_LIMIT, MAX_LIMIT, problems), offset: offset(cursor, problems) }
}

input! {
    /// `GET /api/episodes/{episode_id}/transcript`, `get_transcript`.
    pub struct TranscriptQuery {
        /// The episode id (`ep_…`, from list_episodes or attribute_quote).
        episode_id: String { required },
        /// Only the turns of this person (by name).
        speaker: String { length(min = 1), regex(pattern = r"\S") },
        /// Start of the window, in seconds.
        from: f64 { range(min = 0.0) },
        /// End of the window, in seconds (not before `from`).
        to: f64 { range(min = 0.0) },
    }
    /// A checked question about one episode: its id, and the speaker and window to narrow it to.
    => pub struct EpisodeAsked {
        pub episode_id: String,
        pub filters: Filters,
    }
    |input, problems| {
        let id = required("episode_id", input.episode_id, problems);
        let speaker = input.speaker.map(|speaker| speaker.trim().to_string());
        if speaker.as_ref().is_some_and(String::is_empty) {
            problems.push(Diagnostic::new("speaker", "must not be empty"));
        }
        let filters = window(Filters { speaker, from: input.from, to: input.to }, problems);
        Some(EpisodeAsked { episode_id: id?, filters })
    }
}

input! {
    /// `GET /api/episodes/{episode_id}/speakers`, `speaker_stats`.
    pub struct SpeakerStats {
        /// The episode id (`ep_…`).
        episode_id: String { required },
        /// Start of the window, in seconds.
        from: f64 { range(min = 0.0) },
        /// End of the window, in seconds (not before `from`).
        to: f64 { range(min = 0.0) },
    }
    => EpisodeAsked
    |input, problems| {
        let id = required("episode_id", input.episode_id, problems);
        let filters = window(Filters { speaker: None, from: input.from, to: input.to }, problems);
        Some(EpisodeAsked { episode_id: id?, filters })
    }
}

/// The time window's rules: seconds, 0 or more, `from` not after `to`.
fn window(filters: Filters, problems: &mut Vec<Diagnostic>) -> Filters {
    for (field, seconds) in [("from", filters.from), ("to", filters.to)] {
        if seconds.is_some_and(|s| !(s.is_finite() && s >= 0.0)) {
            problems.push(Diagnostic::new(field, "must be a number of seconds, 0 or more"));
        }
    }
    if let (Some(from), Some(to)) = (filters.from, filters.to)
        && from > to
    {
        problems.push(Diagnostic::new("from", "must not be after `to`"));
    }
    filters
}

input! {
    /// `GET /api/episodes`, `list_episodes`.
    #[derive(Default)]
    pub struct EpisodeList {
        /// Only episodes of this show (its id, from /api/shows).
        show: String,
        /// Episodes per page (default 20).
        limit: u32 { range(min = 1, max = MAX_LIMIT) },
        /// `next_cursor` of the previous page.
        cursor: String { regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS) },
    }
    /// A checked page of episodes: of one show (of every show when `None`), and which page.
    => pub struct EpisodesAsked {
        pub show: Option<String>,
        pub page: Page,
    }
    |input, problems| {
        let page = page(input.limit, input.cursor.as_deref(), problems);
        Some(EpisodesAsked { show: input.show, page })
    }
}

/// The answer of `GET /api/episodes` and `list_episodes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodePage {
    pub show: Option<String>,
    pub items: Vec<crate::quotes::transcript::EpisodeSummary>,
    pub total: usize,
    pub next_cursor: Option<String>,
}

/// What an address must start with (any case; the rest is checked as every fetch is): `http://`
/// or `https://`, or a host with no scheme at all (`example.org/ep/42`, taken as `https://`), never
/// another scheme (`ftp://`, `mailto:`).
#[cfg(feature = "schema")]
const ADDRESS_PATTERN: &str = "^\\s*([Hh][Tt][Tt][Pp][Ss]?://|[^:/\\s]+(/|:[0-9]|$))";

/// `POST /api/episodes`'s body and the `request_episode` tool's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodeRequest {
    /// The episode's page, or its audio when a feed lists it: http or https (an address without its
    /// scheme is the https one), no user name or password, not an address inside a network
    /// (loopback, private, link-local, metadata).
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_ADDRESS_CHARS), regex(pattern = ADDRESS_PATTERN)))]
    pub source_url: String,
}

impl Input for EpisodeRequest {
    /// The address, trimmed; `crate::quotes::intake::asked` checks it as a fetch would.
    type Valid = String;

    fn validate(self) -> Result<String, Vec<Diagnostic>> {
        let address = self.source_url.trim().to_string();
        if address.is_empty() {
            return Err(vec![Diagnostic::new(
                "source_url",
                "must not be empty: the episode's page or audio",
            )]);
        }
        Ok(address)
    }
}

/// An intake job: the answer of `POST /api/episodes`, `GET /api/intake/{job_id}` and
/// `request_episode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IntakeJob {
    /// `in_` and ten characters: one job per normalised address.
    pub id: String,
    /// The address as it was first asked for.
    pub source_url: String,
    pub state: JobState,
    /// Why it failed, in words a person can act on.
    pub reason: Option<String>,
    /// The episode, once ready.
    pub episode_id: Option<String>,
    /// Its record (`/api/episodes/{id}`), once ready.
    pub episode_url: Option<String>,
    /// Where the job stands: GET it again.
    pub url: String,
    pub created_at: String,
    pub updated_at: String,
}
