//! The inputs of the quote service's pages. A page takes what its form sends and shows a problem
//! with it in words on the page (the form filled in again), so its fields carry only the bounds the
//! Worker holds them to: a person who mistyped an address gets the form back, not a JSON problem.
//! Beyond those bounds (an unknown parameter, a field too long, a broken cursor) a page is 400, as
//! every route is.

use serde::Deserialize;

#[cfg(feature = "schema")]
use super::{CURSOR_MAX_CHARS, CURSOR_PATTERN};
use super::{Input, done, offset, required};
use crate::Diagnostic;
#[cfg(feature = "schema")]
use crate::quotes::intake::MAX_ADDRESS_CHARS;
use crate::quotes::quote::MAX_QUOTE_CHARS;
use crate::quotes::quote::phrase;

/// Episodes a show's page lists at a time.
pub const SHOW_PAGE_EPISODES: usize = 50;
/// Hits the search page shows at a time.
pub const SEARCH_PAGE_HITS: usize = 10;

fn bounded(field: &str, value: Option<String>, max: usize, problems: &mut Vec<Diagnostic>) -> String {
    let value = value.unwrap_or_default();
    if value.chars().count() > max {
        problems.push(Diagnostic::new(field, format!("is longer than {max} characters")));
    }
    value
}

/// `GET /quotes`: the check-a-quote page. Without `quote` it is the empty form. Also `GET
/// /kitchen`'s: the address fills in its episode form, and the quote leads back to this page.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QuoteCheck {
    /// The quote, as you have it.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_QUOTE_CHARS)))]
    pub quote: Option<String>,
    /// The episode's address (its page or audio); empty: every episode.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_ADDRESS_CHARS)))]
    pub source_url: Option<String>,
}

/// What the check-a-quote page was asked, as typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuoteChecked {
    pub quote: String,
    pub source_url: String,
}

impl Input for QuoteCheck {
    type Valid = QuoteChecked;

    fn validate(self) -> Result<QuoteChecked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let quote = bounded("quote", self.quote, MAX_QUOTE_CHARS, &mut problems);
        let source_url =
            bounded("source_url", self.source_url, crate::quotes::intake::MAX_ADDRESS_CHARS, &mut problems);
        done(QuoteChecked { quote, source_url }, problems)
    }
}

/// `GET /search`: the phrase search page. Without `q` or `speaker` it is the empty form.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchPageQuery {
    /// A phrase to find.
    #[cfg_attr(feature = "schema", schemars(length(max = phrase::MAX_QUERY_CHARS)))]
    pub q: Option<String>,
    /// A person's name: only what they said.
    #[cfg_attr(feature = "schema", schemars(length(max = phrase::MAX_SPEAKER_CHARS)))]
    pub speaker: Option<String>,
    /// The next page's cursor.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS)))]
    pub cursor: Option<String>,
}

/// What the search page was asked: the fields as typed, and where in the hits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchPageAsked {
    pub q: String,
    pub speaker: String,
    /// A well-formed cursor, as given.
    pub cursor: Option<String>,
}

impl Input for SearchPageQuery {
    type Valid = SearchPageAsked;

    fn validate(self) -> Result<SearchPageAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let q = bounded("q", self.q, phrase::MAX_QUERY_CHARS, &mut problems);
        let speaker = bounded("speaker", self.speaker, phrase::MAX_SPEAKER_CHARS, &mut problems);
        offset(self.cursor.as_deref(), &mut problems);
        done(SearchPageAsked { q, speaker, cursor: self.cursor }, problems)
    }
}

/// `GET /shows/{show_id}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShowView {
    /// The show's id (from /api/shows).
    #[cfg_attr(feature = "schema", schemars(required, length(min = 1, max = 100)))]
    pub show_id: Option<String>,
    /// The next page's cursor.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS)))]
    pub cursor: Option<String>,
}

impl Input for ShowView {
    type Valid = super::EpisodesAsked;

    fn validate(self) -> Result<super::EpisodesAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let show = required("show_id", self.show_id, &mut problems);
        let page = crate::quotes::quote::views::Page {
            limit: SHOW_PAGE_EPISODES,
            offset: offset(self.cursor.as_deref(), &mut problems),
        };
        done(super::EpisodesAsked { show, page }, problems)
    }
}

/// `GET /episodes/{episode_id}/compare?a=…&b=…`: two runs of an episode side by side.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunComparison {
    /// The episode id (`ep_…`).
    #[cfg_attr(feature = "schema", schemars(required, length(min = 1, max = 100)))]
    pub episode_id: Option<String>,
    /// The first run's pipeline (default: the canonical run).
    #[cfg_attr(feature = "schema", schemars(length(max = 100)))]
    pub a: Option<String>,
    /// The second run's pipeline (default: the first other run).
    #[cfg_attr(feature = "schema", schemars(length(max = 100)))]
    pub b: Option<String>,
}

/// Which runs of which episode to compare.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunsAsked {
    pub episode_id: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

impl Input for RunComparison {
    type Valid = RunsAsked;

    fn validate(self) -> Result<RunsAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let episode_id = required("episode_id", self.episode_id, &mut problems).unwrap_or_default();
        let a = Some(bounded("a", self.a, 100, &mut problems)).filter(|a| !a.is_empty());
        let b = Some(bounded("b", self.b, 100, &mut problems)).filter(|b| !b.is_empty());
        done(RunsAsked { episode_id, a, b }, problems)
    }
}

/// `GET /kitchen/review`: the queue, and after a save the label just decided.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewQuery {
    /// The episode of the label just decided.
    #[cfg_attr(feature = "schema", schemars(length(max = 100)))]
    pub episode: Option<String>,
    /// The label just decided.
    #[cfg_attr(feature = "schema", schemars(length(max = 200)))]
    pub label: Option<String>,
}

/// The label just decided, if the page names one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewAsked {
    pub saved: Option<(String, String)>,
}

impl Input for ReviewQuery {
    type Valid = ReviewAsked;

    fn validate(self) -> Result<ReviewAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let episode = bounded("episode", self.episode, 100, &mut problems);
        let label = bounded("label", self.label, 200, &mut problems);
        let saved = (!episode.is_empty() && !label.is_empty()).then_some((episode, label));
        done(ReviewAsked { saved }, problems)
    }
}
