//! The inputs of the quote service's pages. A page takes what its form sends and shows a problem
//! with it in words on the page (the form filled in again), so its fields carry only the bounds the
//! Worker holds them to: a person who mistyped an address gets the form back, not a JSON problem.
//! Beyond those bounds (an unknown parameter, a field too long, a broken cursor) a page is 400, as
//! every route is.

use super::declare::input;
#[cfg(feature = "schema")]
use super::{CURSOR_MAX_CHARS, CURSOR_PATTERN};
use super::{offset, required};
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

input! {
    /// `GET /quotes`: the check-a-quote page. Without `quote` it is the empty form. Also `GET
    /// /kitchen`'s: the address fills in its episode form, and the quote leads back to this page.
    #[derive(Default)]
    pub struct QuoteCheck {
        /// The quote, as you have it.
        quote: String { length(max = MAX_QUOTE_CHARS) },
        /// The episode's address (its page or audio); empty: every episode.
        source_url: String { length(max = MAX_ADDRESS_CHARS) },
    }
    /// What the check-a-quote page was asked, as typed.
    #[derive(Default)]
    => pub struct QuoteChecked {
        pub quote: String,
        pub source_url: String,
    }
    |input, problems| {
        let quote = bounded("quote", input.quote, MAX_QUOTE_CHARS, problems);
        let source_url =
            bounded("source_url", input.source_url, crate::quotes::intake::MAX_ADDRESS_CHARS, problems);
        Some(QuoteChecked { quote, source_url })
    }
}

input! {
    /// `GET /search`: the phrase search page. Without `q` or `speaker` it is the empty form.
    #[derive(Default)]
    pub struct SearchPageQuery {
        /// A phrase to find.
        q: String { length(max = phrase::MAX_QUERY_CHARS) },
        /// A person's name: only what they said.
        speaker: String { length(max = phrase::MAX_SPEAKER_CHARS) },
        /// The next page's cursor.
        cursor: String { regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS) },
    }
    /// What the search page was asked: the fields as typed, and where in the hits.
    #[derive(Default)]
    => pub struct SearchPageAsked {
        pub q: String,
        pub speaker: String,
        /// A well-formed cursor, as given.
        pub cursor: Option<String>,
    }
    |input, problems| {
        let q = bounded("q", input.q, phrase::MAX_QUERY_CHARS, problems);
        let speaker = bounded("speaker", input.speaker, phrase::MAX_SPEAKER_CHARS, problems);
        offset(input.cursor.as_deref(), problems);
        Some(SearchPageAsked { q, speaker, cursor: input.cursor })
    }
}

input! {
    /// `GET /shows/{show_id}`.
    #[derive(Default)]
    pub struct ShowView {
        /// The show's id (from /api/shows).
        show_id: String { required, length(min = 1, max = 100) },
        /// The next page's cursor.
        cursor: String { regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS) },
    }
    => super::EpisodesAsked
    |input, problems| {
        let show = required("show_id", input.show_id, problems);
        let page = crate::quotes::quote::views::Page {
            limit: SHOW_PAGE_EPISODES,
            offset: offset(input.cursor.as_deref(), problems),
        };
        Some(super::EpisodesAsked { show, page })
    }
}

input! {
    /// `GET /episodes/{episode_id}/compare?a=…&b=…`: two runs of an episode side by side.
    #[derive(Default)]
    pub struct RunComparison {
        /// The episode id (`ep_…`).
        episode_id: String { required, length(min = 1, max = 100) },
        /// The first run's pipeline (default: the canonical run).
        a: String { length(max = 100) },
        /// The second run's pipeline (default: the first other run).
        b: String { length(max = 100) },
    }
    /// Which runs of which episode to compare.
    #[derive(Default)]
    => pub struct RunsAsked {
        pub episode_id: String,
        pub a: Option<String>,
        pub b: Option<String>,
    }
    |input, problems| {
        let episode_id = required("episode_id", input.episode_id, problems);
        let a = Some(bounded("a", input.a, 100, problems)).filter(|a| !a.is_empty());
        let b = Some(bounded("b", input.b, 100, problems)).filter(|b| !b.is_empty());
        Some(RunsAsked { episode_id: episode_id?, a, b })
    }
}

input! {
    /// `GET /kitchen/review`: the queue, and after a save the label just decided.
    #[derive(Default)]
    pub struct ReviewQuery {
        /// The episode of the label just decided.
        episode: String { length(max = 100) },
        /// The label just decided.
        label: String { length(max = 200) },
    }
    /// The label just decided, if the page names one.
    #[derive(Default)]
    => pub struct ReviewAsked {
        pub saved: Option<(String, String)>,
    }
    |input, problems| {
        let episode = bounded("episode", input.episode, 100, problems);
        let label = bounded("label", input.label, 200, problems);
        let saved = (!episode.is_empty() && !label.is_empty()).then_some((episode, label));
        Some(ReviewAsked { saved })
    }
}
