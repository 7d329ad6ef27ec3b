//! A search's question: parsing `GET /api/search`, and cutting a phrase into the grams that the
//! dictionary is looked up by.

use crate::Diagnostic;
use crate::quotes::quote::normalise;
use crate::quotes::quote::views::Page;

pub const MAX_QUERY_CHARS: usize = 200;
/// The longest name a search by speaker takes.
pub const MAX_SPEAKER_CHARS: usize = 200;
/// Hits on a page of a search that does not say `limit`. Ten, as search engines show and as the
/// peers are measured with (BENCHMARKS.md): a hit carries its whole passage, and each hit
/// of a page is a ranged read of its own, since a phrase's hits lie scattered over the corpus.
pub const DEFAULT_LIMIT: usize = 10;

/// A parsed `GET /api/search`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub q: Option<String>,
    pub speaker: Option<String>,
    pub page: Page,
}

/// Parses the search parameters: `q` and/or `speaker` (one is needed), `limit`, `cursor`.
pub fn parse_query<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Query, Vec<Diagnostic>> {
    let mut query = Query { q: None, speaker: None, page: Page { offset: 0, limit: DEFAULT_LIMIT } };
    let mut problems = Vec::new();
    for (key, value) in crate::diagnostic::once_each(params, &mut problems) {
        match key {
            "q" if value.chars().count() > MAX_QUERY_CHARS => {
                problems.push(Diagnostic::new("q", format!("is longer than {MAX_QUERY_CHARS} characters")))
            }
            "q" if !value.trim().is_empty() && normalise::tokens(value).is_empty() => {
                problems.push(Diagnostic::new("q", "has no words"))
            }
            "q" => query.q = Some(value.trim().to_string()).filter(|q| !q.is_empty()),
            "speaker" => query.speaker = Some(value.trim().to_string()).filter(|s| !s.is_empty()),
            other => {
                if !query.page.read(other, value, &mut problems) {
                    problems.push(Diagnostic::new(other, "unknown parameter"));
                }
            }
        }
    }
    if problems.is_empty() && query.q.is_none() && query.speaker.is_none() {
        problems.push(Diagnostic::new("q", "give a phrase `q`, a `speaker`, or both"));
    }
    if problems.is_empty() { Ok(query) } else { Err(problems) }
}

pub(super) fn words_of(text: &str) -> Vec<String> {
    normalise::tokens(text).into_iter().map(|t| t.norm).collect()
}

/// Every gram of `words` (all of them when it is no longer than the index's longest gram).
pub(super) fn lattice(words: &[String]) -> Vec<String> {
    (1..=words.len()).flat_map(|n| words.windows(n).map(|w| w.join(" "))).collect()
}

/// A phrase longer than `n` words as windows of `n` words that cover it: one every `n` words, and
/// the last.
pub(super) fn tiles(words: &[String], n: usize) -> Vec<&[String]> {
    let mut tiles: Vec<&[String]> = words.chunks_exact(n).collect();
    if !words.len().is_multiple_of(n) {
        tiles.push(&words[words.len() - n..]);
    }
    tiles
}

pub(super) fn tile_keys(words: &[String], n: usize) -> Vec<String> {
    tiles(words, n).iter().map(|tile| tile.join(" ")).collect()
}

pub(super) fn windows(words: &[String], n: usize) -> Vec<String> {
    words.windows(n).map(|w| w.join(" ")).collect()
}
