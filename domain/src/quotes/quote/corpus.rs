//! "Who said this?" without the episode: attribution over the whole corpus.
//!
//! A [`Question`] is a step machine. Each turn, [`Question::places`] reads the phrase index for the
//! places the quote may be and the passages around each (or names the parts of the index still to
//! read); the caller brings the passages' names up to date and gives them to
//! [`Question::attribute`], which runs the one attribution of [`super::attribute`] on each passage,
//! once, and answers with the best — or asks for a wider turn. The quote is cut into words once. No
//! transcript is loaded whole, so the question costs about what a phrase search does.
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
use crate::quotes::transcript::{EpisodeRef, NameState};

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

/// One quote asked of the whole corpus. The caller's loop:
///
/// ```text
/// let mut question = Question::new(quote);
/// loop {
///     let mut places = /* question.places(index, parts), with the parts it names read, until it answers */;
///     /* the passages' names brought up to date */
///     if let Turn::Answered(answer) = question.attribute(&places) { break answer }
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Question {
    quote: String,
    words: Vec<String>,
    pieces: Vec<Vec<String>>,
    reach: Reach,
    /// Each passage attributed so far, by where it is ([`passage_key`]).
    attributed: Vec<(PassageKey, Attribution)>,
}

/// What a turn ended in.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    Answered(Box<Attribution>),
    /// The quote's rare grams met in a few places and none of them holds it: the next turn reads the
    /// index by the quote's tiles, which costs about twice the reads, so only the quotes that need them
    /// pay for them (BENCHMARKS.md).
    Wider,
}

/// A passage: its episode, and its first segment's start and last segment's end in milliseconds.
type PassageKey = (String, i64, i64);

fn passage_key(canonical: &crate::quotes::transcript::Canonical) -> PassageKey {
    let ms = |s: f64| (s * 1000.0).round() as i64;
    let first = canonical.segments.first().map_or(0, |segment| ms(segment.start_s));
    let last = canonical.segments.last().map_or(0, |segment| ms(segment.end_s));
    (canonical.episode.id.clone(), first, last)
}

impl Question {
    pub fn new(quote: &str) -> Question {
        Question {
            quote: quote.to_string(),
            words: words_of(quote),
            pieces: split_edits(quote).pieces.iter().map(|piece| words_of(piece)).collect(),
            reach: Reach::Rare,
            attributed: Vec::new(),
        }
    }

    /// The places this turn's reach finds — where the quote's words stand verbatim or most of its
    /// rare grams meet, or in a wider turn, where its tiles meet — or the parts of the index still to
    /// read ([`PhraseError::Need`]): asked again with those, it goes on.
    pub fn places(&self, index: &Index, parts: &impl Parts) -> Result<Places, PhraseError> {
        phrase::places(index, &self.words, &self.pieces, self.reach, parts)
    }

    /// This turn's places in `overlay` (the episodes taken in since the build), to
    /// [`Places::join`] to the built index's before [`Question::attribute`].
    pub fn overlay_places(&self, overlay: &phrase::Overlay) -> Result<Places, crate::index::Corrupt> {
        overlay.places(&self.words, &self.pieces, self.reach)
    }

    /// The answer from this turn's places (their names brought up to date by the caller), or a wider
    /// turn. Each passage is attributed once, whatever the number of turns.
    pub fn attribute(&mut self, places: &Places) -> Turn {
        let found: Vec<Attribution> = places
            .transcripts
            .iter()
            .map(|canonical| self.attributed_once(canonical))
            .filter(|answer| answer.found)
            .collect();
        if self.reach == Reach::Rare && places.unsure && found.is_empty() {
            self.reach = Reach::Tiles;
            return Turn::Wider;
        }
        Turn::Answered(Box::new(best_of(places, found)))
    }

    fn attributed_once(&mut self, canonical: &crate::quotes::transcript::Canonical) -> Attribution {
        let key = passage_key(canonical);
        if let Some((_, answer)) = self.attributed.iter().find(|(at, _)| *at == key) {
            return answer.clone();
        }
        let answer = attribute(canonical, &Prepared::new(&canonical.segments), &self.quote);
        self.attributed.push((key, answer.clone()));
        answer
    }
}

/// The answer among the passages that hold the quote (`found`), with the places' verbatim hits as
/// its count and alternatives.
fn best_of(places: &Places, found: Vec<Attribution>) -> Attribution {
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
    best.explained()
}

/// Whether a verbatim hit is the best answer's own place (its times are estimates: a second's slack).
fn overlaps(hit: &Hit, start_s: f64, end_s: f64) -> bool {
    hit.start_s <= end_s + 1.0 && start_s <= hit.end_s + 1.0
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::quotes::quote::fixtures::{segment, sourdough};
    use crate::quotes::transcript::{Canonical, RunKind};

    fn passage(start_s: f64, text: &str) -> Canonical {
        Canonical {
            episode: sourdough(),
            pipeline: "human".into(),
            kind: RunKind::HumanEdited,
            speakers: BTreeMap::new(),
            segments: vec![segment("S0", start_s, start_s + 5.0, text)],
        }
    }

    #[test]
    fn a_wider_turn_attributes_only_the_passages_it_has_not_seen() {
        let mut question = Question::new("patience nobody can sell you");
        let elsewhere = passage(10.0, "bread wants flour and water and salt");
        let unsure = Places {
            transcripts: vec![elsewhere.clone()],
            verbatim_total: 0,
            verbatim: Vec::new(),
            unsure: true,
        };
        assert_eq!(question.attribute(&unsure), Turn::Wider);
        assert_eq!(question.reach, Reach::Tiles);
        let holding = passage(60.0, "patience is the one thing nobody can sell you");
        let tiles = Places {
            transcripts: vec![elsewhere, holding],
            verbatim_total: 0,
            verbatim: Vec::new(),
            unsure: true,
        };
        let Turn::Answered(answer) = question.attribute(&tiles) else { panic!("a wider turn answers") };
        assert!(answer.found);
        assert_eq!(answer.found_at.map(|m| m.trust), Some(Trust::Review));
        // The passage seen in both turns was attributed once.
        assert_eq!(question.attributed.len(), 2);
    }

    #[test]
    fn a_sure_turn_that_finds_nothing_answers_not_found() {
        let mut question = Question::new("patience nobody can sell you");
        let places = Places {
            transcripts: vec![passage(10.0, "bread wants flour and water and salt")],
            verbatim_total: 0,
            verbatim: Vec::new(),
            unsure: false,
        };
        let Turn::Answered(answer) = question.attribute(&places) else { panic!("a sure turn answers") };
        assert!(!answer.found);
        assert_eq!(answer.reason.as_deref(), Some("quote_not_found"));
    }

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
