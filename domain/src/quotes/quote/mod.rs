//! Quote attribution: who said a quote, and when (`GET /api/attribute`).
//!
//! [`Prepared`] turns a canonical transcript into normalised tokens (see [`normalise`]), each as the
//! id of its word, once per episode. [`attribute`] then finds a quote in a few steps: word for word by
//! its first word's places; else the quote's rarest tokens propose alignments (diagonals), each
//! scored by a local word-level alignment (Smith-Waterman over tokens) that tolerates
//! speech-recognition errors — a word one edit away counts half, and a missing or extra word costs
//! little — and the best one decides.
//! We rejected character-level fuzzy search over the whole text: it is slower by orders of magnitude on
//! a three-hour transcript and puts `start_s` between words instead of on them.

pub mod cite;
pub mod corpus;
#[cfg(test)]
pub(crate) mod fixtures;
// The tokeniser lives with the transcripts it reads.
pub use crate::quotes::transcript::normalise;
pub mod phrase;
mod stored;
pub mod views;

use stored::Numbers;
pub use stored::{READING_VERSION, Reading, reading_path};

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::quotes::transcript::names;
use crate::quotes::transcript::{Canonical, EpisodeRef, NameState, Segment, round_ms};

/// Longest quote we accept, in characters.
pub const MAX_QUOTE_CHARS: usize = 2000;
/// Anchors with more occurrences than this propose too many alignments to be useful.
const MAX_ANCHOR_POSTINGS: usize = 4000;
const MAX_ANCHORS: usize = 6;
const MAX_PROPOSALS: usize = 4;

const SCORE_EXACT: i32 = 2;
const SCORE_FUZZY: i32 = 1;
const SCORE_MISMATCH: i32 = -2;
const SCORE_GAP: i32 = -2;

/// A transcript token: its segment and its byte range in the segment's text. Its times are worked
/// out only for the few tokens an answer names ([`Prepared::times`]).
#[derive(Debug, Clone)]
struct TokenAt {
    segment: u32,
    start: u32,
    end: u32,
}

/// When a token was said.
#[derive(Debug, Clone, Copy)]
struct Times {
    start_s: f64,
    end_s: f64,
    /// `start_s` is not a measured time: no timed word starts the token, and it is not its
    /// segment's first word with a measured segment start (it was interpolated inside the segment).
    start_estimated: bool,
    /// `end_s` likewise, by the token's last timed word or its segment's measured end.
    end_estimated: bool,
}

/// A canonical transcript made ready for attribution: its tokens in order, each as the id of its
/// word. Words are kept sorted, end to end in one string; the lists of numbers are kept as the file
/// for the quote reads stores them ([`Numbers`]: little-endian bytes of the least width that holds
/// them), so reading a stored index is a few copies, not a loop per token. What an answer needs of
/// a token beyond its word (its segment, its place in the text) is worked out for the few tokens it
/// names, and each word's places only for a quote not found word for word.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// Each token's word, by its place among the words of `text`.
    ids: Numbers<'static>,
    /// Segment `s`'s tokens are `first[s]..first[s + 1]`; segments after the last token's have none.
    first: Vec<u32>,
    /// Each token's start, as bytes after the end of the token before it in its segment (or after
    /// the segment's start) ...
    gaps: Numbers<'static>,
    /// ... and its length in bytes.
    lens: Numbers<'static>,
    /// The words in order, end to end: word `id` is `text[bounds[id]..bounds[id + 1]]`.
    text: String,
    bounds: Vec<u32>,
    /// The places of each word, made the first time a quote is not found word for word
    /// ([`best_alignment`]).
    postings: OnceLock<Postings>,
}

/// The places of word `id`, in order: `places[starts[id]..starts[id + 1]]`.
#[derive(Debug, Clone, Default)]
struct Postings {
    starts: Vec<u32>,
    places: Vec<u32>,
}

impl Prepared {
    pub fn new(segments: &[Segment]) -> Prepared {
        let mut first_ids: HashMap<String, u32> = HashMap::new();
        let (mut tokens, mut ids) = (Vec::new(), Vec::new());
        for (segment_idx, segment) in segments.iter().enumerate() {
            for token in normalise::tokens(&segment.text) {
                let next = first_ids.len() as u32;
                ids.push(*first_ids.entry(token.norm).or_insert(next));
                tokens.push(TokenAt {
                    segment: segment_idx as u32,
                    start: token.start as u32,
                    end: token.end as u32,
                });
            }
        }
        let mut words: Vec<(String, u32)> = first_ids.into_iter().collect();
        words.sort_unstable();
        let mut sorted_id = vec![0u32; words.len()];
        for (id, (_, first)) in words.iter().enumerate() {
            sorted_id[*first as usize] = id as u32;
        }
        for id in &mut ids {
            *id = sorted_id[*id as usize];
        }
        let mut text = String::new();
        let mut bounds = Vec::with_capacity(words.len() + 1);
        bounds.push(0);
        for (word, _) in &words {
            text.push_str(word);
            bounds.push(text.len() as u32);
        }
        let n_segments = tokens.last().map_or(0, |token| token.segment as usize + 1);
        let mut first = vec![0u32; n_segments + 1];
        let (mut gaps, mut lens) = (Vec::with_capacity(tokens.len()), Vec::with_capacity(tokens.len()));
        let mut last: Option<&TokenAt> = None;
        for token in &tokens {
            first[token.segment as usize + 1] += 1;
            let after = last.filter(|last| last.segment == token.segment).map_or(0, |last| last.end);
            gaps.push(token.start - after);
            lens.push(token.end - token.start);
            last = Some(token);
        }
        for segment in 0..n_segments {
            first[segment + 1] += first[segment];
        }
        Prepared {
            ids: Numbers::of(&ids),
            first,
            gaps: Numbers::of(&gaps),
            lens: Numbers::of(&lens),
            text,
            bounds,
            postings: OnceLock::new(),
        }
    }

    /// The word of id `id` (empty for an id no word has).
    fn word(&self, id: u32) -> &str {
        between(&self.bounds, id).and_then(|range| self.text.get(range)).unwrap_or_default()
    }

    /// The id of `word`, when the transcript says it.
    fn id_of(&self, word: &str) -> Option<u32> {
        let (mut low, mut high) = (0, self.bounds.len().saturating_sub(1));
        while low < high {
            let middle = (low + high) / 2;
            match self.word(middle as u32).cmp(word) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle as u32),
            }
        }
        None
    }

    /// The word id of token `idx`.
    fn id(&self, idx: usize) -> u32 {
        self.ids.get(idx)
    }

    /// Whether the tokens from `start` on are the words `ids`, in order.
    fn holds_at(&self, start: usize, ids: &[u32]) -> bool {
        start + ids.len() <= self.n_tokens()
            && ids.iter().enumerate().all(|(at, id)| self.id(start + at) == *id)
    }

    /// The places of the word of id `id`, in order.
    fn places_of(&self, id: u32) -> &[u32] {
        let postings = self.postings.get_or_init(|| {
            let n_words = self.bounds.len().saturating_sub(1);
            let mut starts = vec![0u32; n_words + 1];
            // An id past the words (in a damaged file) has no places.
            for id in self.ids.iter().map(|id| id as usize).filter(|id| *id < n_words) {
                starts[id + 1] += 1;
            }
            for id in 0..n_words {
                starts[id + 1] += starts[id];
            }
            let mut filled = starts.clone();
            let mut places = vec![0u32; starts[n_words] as usize];
            for (place, id) in self.ids.iter().enumerate() {
                let id = id as usize;
                if id < n_words {
                    places[filled[id] as usize] = place as u32;
                    filled[id] += 1;
                }
            }
            Postings { starts, places }
        });
        between(&postings.starts, id).and_then(|range| postings.places.get(range)).unwrap_or_default()
    }

    /// The segment of token `idx` (`idx` < [`Prepared::n_tokens`]; past them, the last token's).
    fn segment_of(&self, idx: usize) -> usize {
        let last = self.first.len().saturating_sub(2);
        self.first.partition_point(|first| *first as usize <= idx).saturating_sub(1).min(last)
    }

    /// Token `idx`: its segment and its place in the segment's text, added up from the segment's
    /// first token.
    fn token(&self, idx: usize) -> TokenAt {
        let segment = self.segment_of(idx);
        let (mut start, mut end) = (0u32, 0u32);
        for at in self.first.get(segment).map_or(idx, |first| *first as usize)..=idx {
            start = end.saturating_add(self.gaps.get(at));
            end = start.saturating_add(self.lens.get(at));
        }
        TokenAt { segment: segment as u32, start, end }
    }

    /// When token `idx` was said, by its timed words, else interpolated by character position in its
    /// segment: a segment's first word starts at its start and its last word ends at its end.
    /// `segments` are the ones the index was made of.
    fn times(&self, segments: &[Segment], idx: usize) -> Times {
        let token = self.token(idx);
        let segment = &segments[token.segment as usize];
        let (start, end) = (token.start as usize, token.end as usize);
        let timed = word_times(segment).and_then(|times| {
            let first = times.iter().find(|(from, to, ..)| *from <= start && start < *to)?;
            let last = times.iter().rev().find(|(from, to, ..)| *from < end && end <= *to).unwrap_or(first);
            Some(Times { start_s: first.2, end_s: last.3, start_estimated: first.4, end_estimated: last.4 })
        });
        if let Some(timed) = timed {
            return timed;
        }
        let first = self.first.get(token.segment as usize).is_none_or(|first| idx == *first as usize);
        let last = self.first.get(token.segment as usize + 1).is_none_or(|next| idx + 1 == *next as usize);
        let chars =
            |range: std::ops::Range<usize>| segment.text.get(range).map_or(0, |text| text.chars().count());
        let n_chars = segment.text.chars().count().max(1) as f64;
        let span = segment.end_s - segment.start_s;
        let chars_before = chars(0..start);
        let token_chars = chars(start..end);
        let (start_s, start_estimated) = if first {
            (segment.start_s, segment.start_estimated)
        } else {
            (segment.start_s + span * chars_before as f64 / n_chars, true)
        };
        let (end_s, end_estimated) = if last {
            (segment.end_s, segment.end_estimated)
        } else {
            (segment.start_s + span * (chars_before + token_chars) as f64 / n_chars, true)
        };
        Times { start_s, end_s, start_estimated, end_estimated }
    }

    pub fn n_tokens(&self) -> usize {
        self.ids.len()
    }
}

/// `bounds[id]..bounds[id + 1]`, when both are there: where item `id` of a list kept end to end is.
fn between(bounds: &[u32], id: u32) -> Option<std::ops::Range<usize>> {
    let id = id as usize;
    let (from, to) = (bounds.get(id)?, bounds.get(id.checked_add(1)?)?);
    Some(*from as usize..*to as usize)
}

/// A timed word's place in its segment's text: `(start byte, end byte, start_s, end_s, estimated)`.
type WordSpan = (usize, usize, f64, f64, bool);

/// The byte ranges of a segment's timed words in its text, found in order.
fn word_times(segment: &Segment) -> Option<Vec<WordSpan>> {
    let words = segment.words.as_ref()?;
    let mut out = Vec::with_capacity(words.len());
    let mut cursor = 0;
    for word in words {
        let needle = word.w.trim();
        if needle.is_empty() {
            continue;
        }
        let found = segment.text[cursor..].find(needle)?;
        let start = cursor + found;
        let end = start + needle.len();
        out.push((start, end, word.start_s, word.end_s, word.estimated));
        cursor = end;
    }
    Some(out)
}

/// Whether the answer may be used as it is (`high`: verbatim, one speaker, a confident or human
/// name, one place) or is for a person to check (`review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    High,
    Review,
}

/// One speaker's part of a quote that crosses a speaker change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpeakerPart {
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    pub start_s: f64,
}

/// Where a quote was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Match {
    /// The name of the speaker at the quote's first word (`null` when withheld or unknown).
    pub name: Option<String>,
    pub name_state: NameState,
    pub speaker: String,
    pub start_s: f64,
    /// The measured start of the segment holding the quote's first word; when that segment's start is
    /// itself an estimate, the latest measured segment start before it (`null` if there is none).
    pub segment_start_s: Option<f64>,
    pub end_s: f64,
    /// `start_s` or `end_s` is not a measured time: no timed word and no measured segment boundary
    /// is there, so the time was interpolated inside its segment by character position. `/api/search`
    /// marks its hits by the same rule.
    pub times_estimated: bool,
    /// `start_s` alone is not a measured time (`times_estimated` says the start or the end): the
    /// citation and the quote page then say "about". Not in the API's answer, which has
    /// `times_estimated`.
    #[serde(skip)]
    pub start_estimated: bool,
    /// The quote matched whole and word for word: false when only a leading (or any) portion of it
    /// matched, and when a word of it was changed, missing or added. The same as `verbatim`, under the
    /// name the API's contract gives it.
    pub exact: bool,
    /// Every word of the quote (of each piece, for an edited quote) matched the transcript word for
    /// word, after normalisation: always equal to `exact`.
    pub verbatim: bool,
    pub crosses_speaker: bool,
    /// Each speaker's part, in order, when `crosses_speaker`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speakers: Vec<SpeakerPart>,
    pub pipeline: String,
    pub trust: Trust,
    /// The transcript's words that matched (each piece of an edited quote, joined by ` … `).
    pub text: String,
    pub matched_words: usize,
    pub quote_words: usize,
    /// The quote was edited the way quotes are in print: pieces joined by an ellipsis (`…`, `...`),
    /// or a `[bracketed]` word standing for the original ones. Each piece was found, in order,
    /// close together; `trust` is then `review`.
    pub edited: bool,
    /// A plain-text citation: speaker, episode, show, date, and the start as `h:mm:ss`.
    pub cite: String,
    /// The audio at the quote's start when the episode's audio is known, else the episode's page.
    pub listen_url: String,
    /// Why `trust` is `review`, each reason in words (absent when `trust` is `high`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub review_reasons: Vec<String>,
}

impl Match {
    /// The reasons this answer is `review`, in words, `places` being how many places hold the quote.
    fn reasons(&self, places: u64) -> Vec<String> {
        let mut reasons = Vec::new();
        if !self.verbatim {
            reasons.push(if self.matched_words >= self.quote_words {
                "not word for word (every word matched, but some only closely: a spelling or a form differs)"
                    .into()
            } else {
                format!(
                    "not word for word (only {} of the quote's {} words matched)",
                    self.matched_words, self.quote_words
                )
            });
        }
        if self.edited {
            reasons.push("an edited quote (pieces joined by … or a [bracketed] word)".into());
        }
        if self.crosses_speaker {
            reasons.push("it crosses from one speaker to another".into());
        }
        if places > 1 {
            reasons.push(format!("said in more than one place ({places})"));
        }
        if names::holds_several_voices(&self.speaker) {
            reasons.push(format!(
                "the voice `{}` may be several people: nobody separated the voices of this transcript, so no \
                 one name is certain for it",
                self.speaker
            ));
        } else if !self.name_state.is_trustworthy() {
            reasons.push(format!("the name is {}", self.name_state.word()));
        }
        reasons
    }
}

impl Attribution {
    /// The answer with its [`Match::review_reasons`] filled, once `matches` is final.
    fn explained(mut self) -> Attribution {
        let matches = self.matches;
        if let Some(found) = self.found_at.as_mut() {
            found.review_reasons =
                if found.trust == Trust::Review { found.reasons(matches) } else { Vec::new() };
        }
        self
    }
}

/// The answer of `/api/attribute`: `found` with a [`Match`], or `reason` saying why nothing was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Attribution {
    pub found: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The episode asked about, or the one the quote was found in; absent when a search of the whole
    /// corpus found nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode: Option<EpisodeRef>,
    #[serde(flatten)]
    pub found_at: Option<Match>,
    /// How many places hold the quote (its longest piece, for an edited quote) word for word: in the
    /// episode asked about, or, without `source_url`, passages of the whole corpus. At least 1 when
    /// found, 0 when not; `trust` is `high` only when it is 1.
    #[serde(rename = "match")]
    pub matches: u64,
    /// The other places that hold the quote word for word (two people saying the same words, a guest
    /// repeating themselves, a clip replayed later), up to [`corpus::MAX_ALTERNATIVES`], earliest first.
    pub alternatives: Vec<corpus::Alternative>,
}

/// Checks `quote` as `/api/attribute` receives it.
pub fn check_quote(quote: Option<&str>) -> Result<&str, Diagnostic> {
    let quote = quote.map(str::trim).unwrap_or_default();
    if quote.is_empty() {
        return Err(Diagnostic::new("quote", "is required and must not be empty"));
    }
    if quote.chars().count() > MAX_QUOTE_CHARS {
        return Err(Diagnostic::new("quote", format!("is longer than {MAX_QUOTE_CHARS} characters")));
    }
    if normalise::tokens(quote).is_empty() {
        return Err(Diagnostic::new("quote", "has no words"));
    }
    Ok(quote)
}

/// The best local alignment of the quote against one window of the transcript.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Alignment {
    score: i32,
    quote_start: usize,
    quote_end: usize,
    token_start: usize,
    token_end: usize,
    exact: usize,
    fuzzy: usize,
    edits: usize,
}

/// Finds `quote` in the transcript. A quote with the marks of an edit ([`corpus::split_edits`]) is
/// found piece by piece, unless the transcript holds it as it stands: its words verbatim, and each
/// bracketed insertion in the text there. (Transcripts have ellipses and bracketed non-speech too: a
/// quote copied from one with them is not an edited quote. Bracketed words are no words to match,
/// so "[The project] is a gift" stands verbatim where "Open source is a gift" was said; only the
/// bracket's own text, there or not, tells the two apart.)
pub fn attribute(canonical: &Canonical, prepared: &Prepared, quote: &str) -> Attribution {
    let whole = attribute_pieces(canonical, prepared, &[words_of(quote)], false);
    let edits = corpus::split_edits(quote);
    if !edits.edited || stands_as_written(canonical, &whole, &edits.insertions) {
        return whole.explained();
    }
    let pieces: Vec<Vec<String>> = edits.pieces.iter().map(|piece| words_of(piece)).collect();
    let edited = attribute_pieces(canonical, prepared, &pieces, true);
    if edited.found { edited.explained() } else { whole.explained() }
}

/// Whether a quote's words were found verbatim, and each of its bracketed insertions is in the text of
/// the segments there (the transcript's own `[laughs]`, copied with the quote).
fn stands_as_written(canonical: &Canonical, whole: &Attribution, insertions: &[String]) -> bool {
    let Some(m) = whole.found_at.as_ref().filter(|m| m.verbatim) else { return false };
    if insertions.is_empty() {
        return true;
    }
    let said: String = canonical
        .segments
        .iter()
        .filter(|segment| segment.start_s <= m.end_s && m.start_s <= segment.end_s)
        .map(|segment| segment.text.to_lowercase())
        .collect();
    insertions.iter().all(|insertion| said.contains(&insertion.to_lowercase()))
}

/// Finds the pieces of a quote, in order and close together. Where the longest piece stands word
/// for word in more than one place, the answer is the first of them in time that the other pieces
/// complete (so a search of the whole corpus, which reads the episode's earliest place, answers the
/// same place), the others are its `alternatives`, and `trust` is `review`: two places are a
/// question for a person, inside one episode as across the corpus.
fn attribute_pieces(
    canonical: &Canonical,
    prepared: &Prepared,
    pieces: &[Vec<String>],
    edited: bool,
) -> Attribution {
    let not_found = || Attribution {
        found: false,
        reason: Some("quote_not_found".into()),
        episode: Some(canonical.episode.clone()),
        found_at: None,
        matches: 0,
        alternatives: Vec::new(),
    };
    let Some(longest) = (0..pieces.len()).max_by_key(|&idx| (pieces[idx].len(), usize::MAX - idx)) else {
        return not_found();
    };
    let key = &pieces[longest];
    let places = verbatim_places(prepared, key);
    let key_ids: Vec<Option<u32>> = key.iter().map(|word| prepared.id_of(word)).collect();
    let found = places
        .iter()
        .take(MAX_PLACES_TRIED)
        .find_map(|&at| {
            complete(prepared, pieces, longest, align(prepared, &key_ids, key, at, at + key.len()))
        })
        .or_else(|| {
            let anchor = best_alignment(prepared, key, None).filter(|a| enough(a, key))?;
            complete(prepared, pieces, longest, anchor)
        });
    let Some(found) = found else { return not_found() };
    let answered_at = found[longest].token_start;
    let alternatives: Vec<corpus::Alternative> = places
        .iter()
        .filter(|&&at| at != answered_at)
        .take(corpus::MAX_ALTERNATIVES)
        .map(|&at| {
            let label = &canonical.segments[prepared.segment_of(at)].speaker;
            let start_s = prepared.times(&canonical.segments, at).start_s;
            let resolved = canonical.speaker(label);
            corpus::Alternative {
                episode: canonical.episode.clone(),
                speaker: label.clone(),
                name: resolved.name,
                name_state: resolved.name_state,
                start_s: round_ms(start_s),
            }
        })
        .collect();
    let matches = u64::try_from(places.len()).unwrap_or(u64::MAX).max(1);

    let (first_alignment, last_alignment) = (&found[0], &found[found.len() - 1]);
    let (first_idx, last_idx) = (first_alignment.token_start, last_alignment.token_end - 1);
    let segments = &canonical.segments;
    let (first, last) = (prepared.times(segments, first_idx), prepared.times(segments, last_idx));
    let first_segment = prepared.segment_of(first_idx);
    let label = &segments[first_segment].speaker;
    let mut speakers: Vec<SpeakerPart> = Vec::new();
    for idx in first_idx..=last_idx {
        let speaker = &segments[prepared.segment_of(idx)].speaker;
        if speakers.last().is_none_or(|part| &part.speaker != speaker) {
            let resolved = canonical.speaker(speaker);
            speakers.push(SpeakerPart {
                speaker: speaker.clone(),
                name: resolved.name,
                name_state: resolved.name_state,
                start_s: prepared.times(segments, idx).start_s,
            });
        }
    }
    let crosses_speaker = speakers.iter().any(|part| &part.speaker != label);
    if !crosses_speaker {
        speakers.clear();
    }
    let verbatim = found.iter().zip(pieces).all(|(a, piece)| {
        a.quote_start == 0 && a.quote_end == piece.len() && a.exact == piece.len() && a.edits == 0
    });
    let resolved = canonical.speaker(label);
    let one_voice = !names::holds_several_voices(label);
    let trust = if verbatim
        && !edited
        && !crosses_speaker
        && one_voice
        && resolved.name_state.is_trustworthy()
        && matches == 1
    {
        Trust::High
    } else {
        Trust::Review
    };
    let segment_start_s =
        segments[..=first_segment].iter().rev().find(|s| !s.start_estimated).map(|s| s.start_s);
    let text: Vec<String> =
        found.iter().map(|a| span_text(segments, prepared, a.token_start, a.token_end - 1)).collect();
    let voices: Vec<(Option<&str>, &str)> = if crosses_speaker {
        speakers.iter().map(|part| (part.name.as_deref(), part.speaker.as_str())).collect()
    } else {
        vec![(resolved.name.as_deref(), label.as_str())]
    };
    let start_s = round_ms(first.start_s);

    Attribution {
        found: true,
        reason: None,
        episode: Some(canonical.episode.clone()),
        found_at: Some(Match {
            cite: cite::cite(&canonical.episode, &voices, start_s, first.start_estimated),
            listen_url: cite::listen_url(&canonical.episode, start_s),
            name: resolved.name,
            name_state: resolved.name_state,
            speaker: label.clone(),
            start_s,
            segment_start_s: segment_start_s.map(round_ms),
            end_s: round_ms(last.end_s),
            times_estimated: first.start_estimated || last.end_estimated,
            start_estimated: first.start_estimated,
            exact: verbatim,
            verbatim,
            crosses_speaker,
            speakers,
            pipeline: canonical.pipeline.clone(),
            trust,
            text: text.join(" … "),
            matched_words: found.iter().map(|a| a.exact + a.fuzzy).sum(),
            quote_words: pieces.iter().map(Vec::len).sum(),
            edited,
            review_reasons: Vec::new(),
        }),
        matches,
        alternatives,
    }
}

/// How many of the places that hold a quote's longest piece word for word are tried as its anchor,
/// earliest first, before its best alignment is (an edited quote whose other pieces are not near).
const MAX_PLACES_TRIED: usize = 8;

/// Where `words` stand one after the other in the transcript, earliest first, as the index of each
/// place's first token; places do not overlap.
fn verbatim_places(prepared: &Prepared, words: &[String]) -> Vec<usize> {
    let Some(ids) = words.iter().map(|word| prepared.id_of(word)).collect::<Option<Vec<u32>>>() else {
        return Vec::new();
    };
    let Some(first) = ids.first() else { return Vec::new() };
    let mut places: Vec<usize> = Vec::new();
    for start in prepared.ids.places(*first) {
        if places.last().is_none_or(|&last| start >= last + ids.len()) && prepared.holds_at(start, &ids) {
            places.push(start);
        }
    }
    places
}

/// The alignments of every piece of a quote, given the longest piece's: the others in order,
/// within [`NEAR_TOKENS`] of their neighbour, or `None` when one is not there.
fn complete(
    prepared: &Prepared,
    pieces: &[Vec<String>],
    longest: usize,
    anchor: Alignment,
) -> Option<Vec<Alignment>> {
    let near = |a: &Alignment| {
        (a.token_start.saturating_sub(NEAR_TOKENS), (a.token_end + NEAR_TOKENS).min(prepared.n_tokens()))
    };
    let mut found: Vec<Alignment> = vec![anchor];
    for idx in (0..longest).rev() {
        let (from, _) = near(&found[0]);
        let a = best_alignment(prepared, &pieces[idx], Some((from, found[0].token_start)))
            .filter(|a| enough(a, &pieces[idx]))?;
        found.insert(0, a);
    }
    for piece in &pieces[longest + 1..] {
        let last = found.last().expect("the anchor");
        let (_, to) = near(last);
        let a = best_alignment(prepared, piece, Some((last.token_end, to))).filter(|a| enough(a, piece))?;
        found.push(a);
    }
    Some(found)
}

/// How far from the longest piece of an edited quote the other pieces may be, in words.
const NEAR_TOKENS: usize = 300;

fn words_of(text: &str) -> Vec<String> {
    normalise::tokens(text).into_iter().map(|t| t.norm).collect()
}

/// Whether an alignment matched enough of its quote to count as found.
fn enough(alignment: &Alignment, quote: &[String]) -> bool {
    let n_quote = quote.len();
    let matched = alignment.exact + alignment.fuzzy;
    let needed = if n_quote <= 3 { n_quote } else { 3.max(n_quote.div_ceil(2)) };
    matched >= needed && alignment.token_end > alignment.token_start
}

/// The transcript text from token `first` to token `last`, across segments (an empty one adds
/// nothing).
fn span_text(segments: &[Segment], prepared: &Prepared, first: usize, last: usize) -> String {
    let (first, last) = (prepared.token(first), prepared.token(last));
    let mut parts = Vec::new();
    for segment_idx in first.segment..=last.segment {
        let text = &segments[segment_idx as usize].text;
        let from = if segment_idx == first.segment { first.start as usize } else { 0 };
        let to = if segment_idx == last.segment { last.end as usize } else { text.len() };
        parts.push(text.get(from..to).unwrap_or_default().trim());
    }
    parts.retain(|part| !part.is_empty());
    parts.join(" ")
}

/// Proposes alignments from the quote's rarest tokens and keeps the best-scoring one; `within`
/// keeps to a range of tokens.
fn best_alignment(
    prepared: &Prepared,
    quote: &[String],
    within: Option<(usize, usize)>,
) -> Option<Alignment> {
    if let Some((from, to)) = within {
        let ids: Vec<Option<u32>> = quote.iter().map(|word| prepared.id_of(word)).collect();
        return (from < to).then(|| align(prepared, &ids, quote, from, to)).filter(|a| a.score > 0);
    }
    let ids: Vec<Option<u32>> = quote.iter().map(|word| prepared.id_of(word)).collect();
    let mut anchors: Vec<(usize, usize)> = ids
        .iter()
        .enumerate()
        .filter_map(|(idx, id)| id.map(|id| (prepared.places_of(id).len(), idx)))
        .collect();
    if anchors.is_empty() {
        return None;
    }
    anchors.sort_unstable();
    let rare: Vec<(usize, usize)> =
        anchors.iter().copied().filter(|(n, _)| *n <= MAX_ANCHOR_POSTINGS).take(MAX_ANCHORS).collect();
    let anchors = if rare.is_empty() { anchors[..1].to_vec() } else { rare };

    let mut votes: HashMap<i64, u32> = HashMap::new();
    for (_, quote_idx) in &anchors {
        let id = ids[*quote_idx].expect("anchors have ids");
        for &position in prepared.places_of(id) {
            *votes.entry(i64::from(position) - *quote_idx as i64).or_default() += 1;
        }
    }
    let mut proposals: Vec<(u32, i64)> = votes.into_iter().map(|(diagonal, n)| (n, diagonal)).collect();
    proposals.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));

    let mut best: Option<Alignment> = None;
    let mut tried: Vec<i64> = Vec::new();
    let band = 8 + quote.len() as i64 / 8;
    for (_, diagonal) in proposals {
        if tried.len() >= MAX_PROPOSALS {
            break;
        }
        if tried.iter().any(|t| (t - diagonal).abs() <= band / 2) {
            continue;
        }
        tried.push(diagonal);
        let from = (diagonal - band).max(0) as usize;
        let to = ((diagonal + quote.len() as i64 + band).max(0) as usize).min(prepared.n_tokens());
        if from >= to {
            continue;
        }
        let alignment = align(prepared, &ids, quote, from, to);
        if best.is_none_or(|b| alignment.score > b.score) {
            best = Some(alignment);
        }
    }
    best.filter(|b| b.score > 0)
}

/// How well a quote word matches a transcript word.
fn word_score(prepared: &Prepared, quote_id: Option<u32>, quote_word: &str, token_idx: usize) -> (i32, bool) {
    let token_id = prepared.id(token_idx);
    if quote_id == Some(token_id) {
        return (SCORE_EXACT, true);
    }
    let token_word = prepared.word(token_id);
    if quote_word.len() >= 4 && token_word.len() >= 4 && crate::text::within_one_edit(quote_word, token_word)
    {
        return (SCORE_FUZZY, false);
    }
    (SCORE_MISMATCH, false)
}

/// Smith-Waterman over words: the best local alignment of the quote inside tokens `from..to`.
fn align(prepared: &Prepared, ids: &[Option<u32>], quote: &[String], from: usize, to: usize) -> Alignment {
    let rows = quote.len() + 1;
    let cols = to - from + 1;
    let mut score = vec![0i32; rows * cols];
    // 0 = stop, 1 = diagonal, 2 = up (quote word skipped), 3 = left (transcript word skipped).
    let mut step = vec![0u8; rows * cols];
    let mut best = (0i32, 0usize, 0usize);
    for i in 1..rows {
        for j in 1..cols {
            let (pair, _) = word_score(prepared, ids[i - 1], &quote[i - 1], from + j - 1);
            let diagonal = score[(i - 1) * cols + j - 1] + pair;
            let up = score[(i - 1) * cols + j] + SCORE_GAP;
            let left = score[i * cols + j - 1] + SCORE_GAP;
            let (value, dir) = [(0, 0u8), (diagonal, 1), (up, 2), (left, 3)]
                .into_iter()
                .fold((i32::MIN, 0u8), |acc, cand| if cand.0 > acc.0 { cand } else { acc });
            score[i * cols + j] = value;
            step[i * cols + j] = dir;
            if value > best.0 {
                best = (value, i, j);
            }
        }
    }
    let (best_score, end_i, end_j) = best;
    let (mut i, mut j) = (end_i, end_j);
    let (mut exact, mut fuzzy, mut edits) = (0, 0, 0);
    while i > 0 && j > 0 && step[i * cols + j] != 0 {
        match step[i * cols + j] {
            1 => {
                let (pair, is_exact) = word_score(prepared, ids[i - 1], &quote[i - 1], from + j - 1);
                if is_exact {
                    exact += 1;
                } else if pair > 0 {
                    fuzzy += 1;
                    edits += 1;
                } else {
                    edits += 1;
                }
                i -= 1;
                j -= 1;
            }
            2 => {
                edits += 1;
                i -= 1;
            }
            _ => {
                edits += 1;
                j -= 1;
            }
        }
    }
    Alignment {
        score: best_score,
        quote_start: i,
        quote_end: end_i,
        token_start: from + j,
        token_end: from + end_j,
        exact,
        fuzzy,
        edits,
    }
}

#[cfg(test)]
pub(crate) mod tests;
