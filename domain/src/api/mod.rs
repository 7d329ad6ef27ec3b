//! The API boundary, said once: one typed input per operation, its validation, its answer type, and
//! the table of routes ([`routes`]).
//!
//! An input struct is the one declaration of an operation's parameters. The Worker's HTTP handler
//! reads it from the path and query ([`from_query`]) or the body ([`from_json`]); the MCP tool of the
//! same operation deserialises its arguments straight into it ([`from_json`]); the builder generates
//! `openapi.json` and `tools.json` from its JSON Schema (feature `schema`). So a parameter's type,
//! range, enum and required-ness are written here and nowhere else, and both doors run the same
//! [`Input::validate`].
//!
//! Every field is an `Option`: a required one is marked `required` in its schema and checked by
//! `validate`, so a request with several problems hears of all of them. An operation's input is
//! declared once, in `input!` (`declare.rs`): its raw struct, what it checks into, and the checks.
//! As rust-analyzer keeps its wire types in one crate and rmcp types a tool's arguments as
//! `Parameters<T>`, the types live in `domain` and both shells use them.

pub mod body;
mod cooking;
mod declare;
mod input;
mod pages;
mod quotes;
mod recipes;
pub mod routes;

pub use cooking::{CooklangAsked, RecipeAsked, RecipeCooklang, RecipeView};
pub use input::{Input, from_json, from_page_query, from_query};
pub use pages::{
    QuoteCheck, QuoteChecked, ReviewAsked, ReviewQuery, RunComparison, RunsAsked, SEARCH_PAGE_HITS,
    SHOW_PAGE_EPISODES, SearchPageAsked, SearchPageQuery, ShowView,
};
pub use quotes::{
    EpisodeAsked, EpisodeList, EpisodePage, EpisodeRequest, EpisodesAsked, IntakeJob, JobState, QuoteAsked,
    QuoteAttribution, SpeakerStats, TranscriptQuery, TranscriptSearch,
};
pub use recipes::{
    AiChange, AiChangeAsked, AiWrite, CreateRecipe, DietAsked, DietVersion, FeedAsked, FeedQuery,
    GithubCallback, HistoryAsked, HistoryQuery, RecipePage, RecipeSearch, RecipeSlug, SignIn, Update,
    UpdateRecipe,
};

use crate::Diagnostic;

/// A paging cursor of `encode_cursor` (an offset): the base64url form of `o` and 1 to 9 digits. The
/// pattern admits exactly those strings, so a schema-valid cursor always decodes.
pub const CURSOR_PATTERN: &str = "^bz[AEIMQUYcgk](?:[w-z0-5](?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5])*\
(?:[MN][AQgw]|O[AQ]|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])?)?$";
/// The longest cursor [`CURSOR_PATTERN`] describes (an offset of nine digits).
pub const CURSOR_MAX_CHARS: usize = 14;
/// A history cursor after an API change (`HistoryCursor::Api`): the same shape as [`CURSOR_PATTERN`]
/// after `a` instead of `o`. A cursor after a git commit is also given out; it names a commit, and one
/// the history no longer holds is refused, so the description promises only the first kind.
pub const HISTORY_CURSOR_PATTERN: &str = "^YT[AEIMQUYcgk](?:[w-z0-5](?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5])*\
(?:[MN][AQgw]|O[AQ]|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])?)?$";

/// A required field's value, or its problem.
fn required<T>(field: &str, value: Option<T>, problems: &mut Vec<Diagnostic>) -> Option<T> {
    if value.is_none() {
        problems.push(Diagnostic::new(field, "is required"));
    }
    value
}

/// `limit` within `1..=max`, or its problem.
fn limit(value: Option<u32>, default: usize, max: usize, problems: &mut Vec<Diagnostic>) -> usize {
    match value {
        None => default,
        Some(n) if (1..=max).contains(&(n as usize)) => n as usize,
        Some(_) => {
            problems.push(Diagnostic::new("limit", format!("must be a whole number from 1 to {max}")));
            default
        }
    }
}

/// The offset an offset cursor names, or its problem.
fn offset(cursor: Option<&str>, problems: &mut Vec<Diagnostic>) -> usize {
    let Some(cursor) = cursor else { return 0 };
    let decoded =
        Some(cursor).filter(|cursor| cursor.len() <= CURSOR_MAX_CHARS).and_then(crate::paging::decode_cursor);
    decoded.unwrap_or_else(|| {
        problems.push(Diagnostic::new("cursor", "is not a cursor this API gave out"));
        0
    })
}

#[cfg(test)]
mod tests;
