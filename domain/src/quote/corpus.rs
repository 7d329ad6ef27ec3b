//! "Who said this?" without the episode: attribution over the whole corpus.
//!
//! [`super::phrase::places`] reads the phrase index for the places a quote may be and the passages
//! around each; [`attribute_corpus`] runs the one attribution of [`super::attribute`] on each place
//! and keeps the best. No transcript is loaded whole, so the question costs about what a phrase
//! search does.
//!
//! Which place is the answer: the one whose words match the quote best; among places that hold it
//! word for word, the earliest published, since a later one is most often a clip replayed or a guest
//! quoting themselves. `trust` is `high` only when, besides the seed's rule (verbatim, one speaker, a
//! confident or human name), exactly one passage of the whole corpus holds the quote: we chose that
//! rule over "the earliest is certain" because nothing in a transcript says which telling was the
//! first one (an episode can air a recording made long before), so two places are always a
//! question for a person.

use serde::{Deserialize, Serialize};

use super::phrase::{self, Hit, Index, Parts, PhraseError, Places, Reach};
use super::{Attribution, Prepared, Trust, attribute, normalise, words_of};
use crate::transcript::{EpisodeRef, NameState};

pub use super::phrase::MAX_ALTERNATIVES;

/// A quote cut into the pieces an editor joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edits {
    /// The pieces with words, in order.
    pub pieces: Vec<String>,
    /// An ellipsis joined two pieces, or a bracketed insertion stood for the original words.
    pub edited: bool,
    /// The bracketed insertions as written, brackets and all.
    pub insertions: Vec<String>,
}

/// Cuts a quote at each ellipsis (`…`, `...`) and each `[bracketed]` insertion. An ellipsis at the
/// start or the end only says the quote is part of a longer turn, which every quote is: that is
/// not an edit.
pub fn split_edits(quote: &str) -> Edits {
    let mut pieces = vec![String::new()];
    let mut insertions = Vec::new();
    let mut rest = quote;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("...").or_else(|| rest.strip_prefix('…')) {
            pieces.push(String::new());
            rest = after;
        } else if c == '[' {
            let close = rest.find(']').map_or(rest.len(), |end| end + 1);
            insertions.push(rest[..close].to_string());
            pieces.push(String::new());
            rest = &rest[close..];
        } else {
            pieces.last_mut().expect("one piece").push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let pieces: Vec<String> = pieces
        .into_iter()
        .map(|piece| piece.trim().to_string())
        .filter(|piece| !normalise::tokens(piece).is_empty())
        .collect();
    Edits { edited: !insertions.is_empty() || pieces.len() > 1, pieces, insertions }
}

/// Another place that holds the quote word for word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Alternative {
    pub episode: EpisodeRef,
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    /// Where the quote starts, estimated inside its passage.
    pub start_s: f64,
}

/// The places `quote` may be in the whole corpus, or the parts of the index still to read: where its
/// words stand verbatim or most of its rare grams meet, or, when those grams are few and none of
/// their places holds the quote, where its tiles meet. The tiles cost about twice the reads, so only
/// the quotes that need them pay for them (BENCHMARKS.md).
pub fn places(index: &Index, quote: &str, parts: &impl Parts) -> Result<Places, PhraseError> {
    let pieces: Vec<Vec<String>> = split_edits(quote).pieces.iter().map(|piece| words_of(piece)).collect();
    let quote_words = words_of(quote);
    let first = phrase::places(index, &quote_words, &pieces, Reach::Rare, parts)?;
    let holds = |canonical: &crate::transcript::Canonical| {
        attribute(canonical, &Prepared::new(&canonical.segments), quote).found
    };
    if !first.unsure || first.transcripts.iter().any(holds) {
        return Ok(first);
    }
    phrase::places(index, &quote_words, &pieces, Reach::Tiles, parts)
}

/// The attribution of `quote` over the whole corpus, from the places [`places`]
/// found (their names brought up to date by the caller).
pub fn attribute_corpus(places: &Places, quote: &str) -> Attribution {
    let found: Vec<Attribution> = places
        .transcripts
        .iter()
        .map(|canonical| attribute(canonical, &Prepared::new(&canonical.segments), quote))
        .filter(|answer| answer.found)
        .collect();
    let rank = |answer: &Attribution| {
        let m = answer.found_at.as_ref().expect("found");
        let published = answer.episode.as_ref().and_then(|e| e.published.clone()).unwrap_or_default();
        // Among equals, the earliest published, then the earliest in its episode: the place a question
        // about that episode answers.
        let start_ms = (m.start_s * 1000.0).round() as i64;
        (m.matched_words, m.verbatim, std::cmp::Reverse(published), std::cmp::Reverse(start_ms))
    };
    let Some(mut best) = found.into_iter().reduce(|a, b| if rank(&b) > rank(&a) { b } else { a }) else {
        return Attribution {
            found: false,
            reason: Some("quote_not_found".into()),
            episode: None,
            found_at: None,
            matches: 0,
            alternatives: Vec::new(),
        };
    };
    let m = best.found_at.as_mut().expect("found");
    if places.verbatim_total != 1 {
        m.trust = Trust::Review;
    }
    // The best answer's own passage is one of the verbatim hits: the one of its episode nearest to it,
    // when it overlaps the answer. Only that one is left out; every other hit is an alternative, however
    // close (two people saying the same words one after the other).
    let best_id = best.episode.as_ref().map(|e| e.id.clone());
    let own = places
        .verbatim
        .iter()
        .enumerate()
        .filter(|(_, hit)| Some(&hit.episode.id) == best_id.as_ref() && overlaps(hit, m.start_s, m.end_s))
        .min_by(|(_, a), (_, b)| (a.start_s - m.start_s).abs().total_cmp(&(b.start_s - m.start_s).abs()))
        .map(|(idx, _)| idx);
    let alternatives = places
        .verbatim
        .iter()
        .enumerate()
        .filter(|(idx, _)| Some(*idx) != own)
        .map(|(_, hit)| hit)
        .take(MAX_ALTERNATIVES)
        .map(|hit: &Hit| Alternative {
            episode: hit.episode.clone(),
            speaker: hit.speaker.clone(),
            name: hit.name.clone(),
            name_state: hit.name_state,
            start_s: hit.start_s,
        })
        .collect();
    best.matches = places.verbatim_total.max(1);
    best.alternatives = alternatives;
    best
}

/// Whether a verbatim hit is the best answer's own place (its times are estimates: a second's slack).
fn overlaps(hit: &Hit, start_s: f64, end_s: f64) -> bool {
    hit.start_s <= end_s + 1.0 && start_s <= hit.end_s + 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ellipses_and_brackets_cut_a_quote_into_pieces() {
        let check = |quote: &str, pieces: &[&str], edited: bool| {
            let edits = split_edits(quote);
            assert_eq!(edits.pieces, pieces, "{quote}");
            assert_eq!(edits.edited, edited, "{quote}");
        };
        check("Patience is the one thing", &["Patience is the one thing"], false);
        check("Patience is … nobody can sell you", &["Patience is", "nobody can sell you"], true);
        check("“Patience is...nobody can sell you”", &["“Patience is", "nobody can sell you”"], true);
        check("[Patience] is the one thing", &["is the one thing"], true);
        check("the secret [of bread] is patience", &["the secret", "is patience"], true);
        check("…and that is why...", &["and that is why"], false);
        assert_eq!(split_edits("[It] is [not] sold").insertions, ["[It]", "[not]"]);
    }
}
