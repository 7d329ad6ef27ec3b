//! What the quote reads need of one episode, as the builder stores it
//! (`episodes/<id>/reading.v<N>.bin`): the canonical transcript, its token index, and the inputs its
//! names were resolved from, in one postcard file. An attribution, the quote page, a narrowed
//! transcript or speaker statistics read this one file and decode it, rather than read the
//! transcript's JSON and its index apart, parse the JSON and make the index: one ranged read instead
//! of two or three, and a decode that copies bytes instead of a parse that scans text.
//!
//! The file's types mirror [`Canonical`] field for field, with no field skipped when empty: postcard
//! is not self-describing, so the JSON types' `skip_serializing_if` would misalign it. The
//! conversions destructure every field, so a field added to the JSON types does not compile until it
//! is carried here. A file of another version, or one that does not decode whole, is not used
//! ([`Reading::decode`] answers `None`) and the caller reads the transcript's JSON instead.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{Prepared, TokenAt};
use crate::quotes::transcript::names::NameInputs;
use crate::quotes::transcript::{Canonical, EpisodeRef, NameState, RunKind, Segment, Speaker, Word};

/// The version of the stored file; it changes whenever [`crate::quotes::transcript::normalise::tokens`]
/// or this format does, so a Worker never answers from tokens its own code would not make. The unit
/// test `stored_tokens_are_this_versions` holds the tokens of a sample text: when it fails, change
/// this number with the expectation.
pub const READING_VERSION: u32 = 5;

/// Where the build stores what the quote reads need of an episode.
pub fn reading_path(episode_id: &str) -> String {
    format!("episodes/{episode_id}/reading.v{READING_VERSION}.bin")
}

/// An episode as the quote reads use it: its canonical transcript, the transcript's token index, and
/// `names.json` (the votes, labels and roster its names were resolved from) as JSON.
#[derive(Debug, Clone)]
pub struct Reading {
    pub canonical: Canonical,
    pub prepared: Prepared,
    pub names: String,
}

#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    version: u32,
    #[serde(with = "super::phrase::format::every_field")]
    episode: EpisodeRef,
    pipeline: String,
    kind: RunKind,
    speakers: Vec<(String, Option<String>, NameState)>,
    segments: Vec<StoredSegment>,
    #[serde(borrow)]
    tokens: Tokens<'a>,
    names: String,
}

#[derive(Serialize, Deserialize)]
struct StoredSegment {
    speaker: String,
    start_s: f64,
    end_s: f64,
    text: String,
    start_estimated: bool,
    end_estimated: bool,
    /// Each timed word: `(w, start_s, end_s, estimated)`.
    words: Option<Vec<(String, f64, f64, bool)>>,
}

/// The token index: its words, and each segment's tokens as word ids with byte offsets.
#[derive(Serialize, Deserialize)]
struct Tokens<'a> {
    /// Its words end to end, sorted, each once ...
    #[serde(borrow)]
    text: &'a str,
    /// ... and each word's length in bytes.
    #[serde(borrow)]
    word_lens: Numbers<'a>,
    /// How many tokens each segment has.
    #[serde(borrow)]
    per_segment: Numbers<'a>,
    /// Each token's word, by its place among the words of `text`.
    #[serde(borrow)]
    ids: Numbers<'a>,
    /// Each token's start: bytes after the end of the token before it in its segment (or after the
    /// segment's start).
    #[serde(borrow)]
    gaps: Numbers<'a>,
    /// Each token's length in bytes.
    #[serde(borrow)]
    lens: Numbers<'a>,
}

/// A list of numbers as the little-endian bytes of one width (1, 2 or 4: the least its largest
/// needs), borrowed from the file when read. Read back by one loop over the bytes, where a list of
/// postcard varints is decoded one number at a time: in the Worker's wasm, built for size, that was
/// more than half of the decode.
#[derive(Serialize, Deserialize)]
struct Numbers<'a> {
    width: u8,
    #[serde(borrow)]
    bytes: Cow<'a, [u8]>,
}

impl Numbers<'_> {
    fn of(values: &[u32]) -> Numbers<'static> {
        let width: u8 = match values.iter().copied().max().unwrap_or(0) {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        };
        let bytes =
            values.iter().flat_map(|value| value.to_le_bytes().into_iter().take(width as usize)).collect();
        Numbers { width, bytes: Cow::Owned(bytes) }
    }

    /// The numbers, or `None` when the bytes are not whole numbers of a width this format has.
    fn values(&self) -> Option<Vec<u32>> {
        let bytes = &self.bytes[..];
        match self.width {
            1 => Some(bytes.iter().map(|byte| u32::from(*byte)).collect()),
            2 if bytes.len().is_multiple_of(2) => {
                Some(bytes.chunks_exact(2).map(|b| u32::from(u16::from_le_bytes([b[0], b[1]]))).collect())
            }
            4 if bytes.len().is_multiple_of(4) => {
                Some(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
            }
            _ => None,
        }
    }
}

impl Reading {
    /// The file the build stores for an episode: `canonical` with its token index, and `names`.
    pub fn encode(canonical: &Canonical, names: &NameInputs) -> Vec<u8> {
        let Canonical { episode, pipeline, kind, speakers, segments } = canonical;
        let prepared = Prepared::new(segments);
        let stored = Stored {
            version: READING_VERSION,
            episode: episode.clone(),
            pipeline: pipeline.clone(),
            kind: *kind,
            speakers: speakers
                .iter()
                .map(|(label, Speaker { name, name_state })| (label.clone(), name.clone(), *name_state))
                .collect(),
            segments: segments.iter().map(StoredSegment::of).collect(),
            tokens: prepared.tokens_stored(),
            names: serde_json::to_string(names).expect("names encode"),
        };
        postcard::to_allocvec(&stored).expect("a reading encodes")
    }

    /// The file [`Reading::encode`] stored, or `None` when it is of another version or does not
    /// decode whole.
    pub fn decode(bytes: &[u8]) -> Option<Reading> {
        let (stored, rest): (Stored<'_>, _) = postcard::take_from_bytes(bytes).ok()?;
        if stored.version != READING_VERSION || !rest.is_empty() {
            return None;
        }
        let canonical = Canonical {
            episode: stored.episode,
            pipeline: stored.pipeline,
            kind: stored.kind,
            speakers: stored
                .speakers
                .into_iter()
                .map(|(label, name, name_state)| (label, Speaker { name, name_state }))
                .collect(),
            segments: stored.segments.into_iter().map(StoredSegment::into_segment).collect(),
        };
        let prepared = Prepared::of_stored(stored.tokens, &canonical.segments)?;
        Some(Reading { canonical, prepared, names: stored.names })
    }
}

impl StoredSegment {
    fn of(segment: &Segment) -> StoredSegment {
        let Segment { speaker, start_s, end_s, text, start_estimated, end_estimated, words } = segment;
        StoredSegment {
            speaker: speaker.clone(),
            start_s: *start_s,
            end_s: *end_s,
            text: text.clone(),
            start_estimated: *start_estimated,
            end_estimated: *end_estimated,
            words: words.as_ref().map(|words| {
                words
                    .iter()
                    .map(|Word { w, start_s, end_s, estimated }| (w.clone(), *start_s, *end_s, *estimated))
                    .collect()
            }),
        }
    }

    fn into_segment(self) -> Segment {
        let StoredSegment { speaker, start_s, end_s, text, start_estimated, end_estimated, words } = self;
        Segment {
            speaker,
            start_s,
            end_s,
            text,
            start_estimated,
            end_estimated,
            words: words.map(|words| {
                words
                    .into_iter()
                    .map(|(w, start_s, end_s, estimated)| Word { w, start_s, end_s, estimated })
                    .collect()
            }),
        }
    }
}

impl Prepared {
    /// The index as the file stores it.
    fn tokens_stored(&self) -> Tokens<'_> {
        let n_segments = self.tokens.last().map_or(0, |token| token.segment as usize + 1);
        let mut per_segment = vec![0u32; n_segments];
        let (mut gaps, mut lens) =
            (Vec::with_capacity(self.tokens.len()), Vec::with_capacity(self.tokens.len()));
        let mut last: Option<&TokenAt> = None;
        for token in &self.tokens {
            per_segment[token.segment as usize] += 1;
            let after = last.filter(|last| last.segment == token.segment).map_or(0, |last| last.end);
            gaps.push(token.start - after);
            lens.push(token.end - token.start);
            last = Some(token);
        }
        Tokens {
            text: &self.text,
            word_lens: Numbers::of(&self.bounds.windows(2).map(|pair| pair[1] - pair[0]).collect::<Vec<_>>()),
            per_segment: Numbers::of(&per_segment),
            ids: Numbers::of(&self.ids),
            gaps: Numbers::of(&gaps),
            lens: Numbers::of(&lens),
        }
    }

    /// The index stored for these segments, or `None` when it does not fit them.
    fn of_stored(stored: Tokens<'_>, segments: &[Segment]) -> Option<Prepared> {
        let (per_segment, ids) = (stored.per_segment.values()?, stored.ids.values()?);
        let (gaps, lens) = (stored.gaps.values()?, stored.lens.values()?);
        let n_tokens = ids.len();
        if per_segment.len() > segments.len()
            || gaps.len() != n_tokens
            || lens.len() != n_tokens
            || per_segment.iter().try_fold(0usize, |sum, n| sum.checked_add(*n as usize)) != Some(n_tokens)
        {
            return None;
        }
        let word_lens = stored.word_lens.values()?;
        let mut bounds = Vec::with_capacity(word_lens.len() + 1);
        bounds.push(0u32);
        for len in word_lens {
            let end = bounds[bounds.len() - 1].checked_add(len)?;
            if !stored.text.is_char_boundary(end as usize) {
                return None;
            }
            bounds.push(end);
        }
        let word = |id: usize| &stored.text[bounds[id] as usize..bounds[id + 1] as usize];
        let n_words = bounds.len() - 1;
        if bounds[n_words] as usize != stored.text.len()
            || (1..n_words).any(|id| word(id - 1) >= word(id))
            || ids.iter().any(|id| *id as usize >= n_words)
        {
            return None;
        }
        let mut tokens = Vec::with_capacity(n_tokens);
        let mut at = 0;
        for (segment_idx, n) in per_segment.iter().enumerate() {
            let text = &segments[segment_idx].text;
            let mut end = 0u32;
            for _ in 0..*n {
                let start = end.checked_add(gaps[at])?;
                end = start.checked_add(lens[at])?;
                if !(text.is_char_boundary(start as usize) && text.is_char_boundary(end as usize)) {
                    return None;
                }
                tokens.push(TokenAt { segment: segment_idx as u32, start, end });
                at += 1;
            }
        }
        Some(Prepared::of_text(stored.text.to_string(), bounds, tokens, ids))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::quotes::quote::attribute;
    use crate::quotes::quote::tests::canonical;
    use crate::quotes::transcript::normalise::normalised;

    /// The tokens a stored file of this version holds: a change here is a change of
    /// [`READING_VERSION`].
    #[test]
    fn stored_tokens_are_this_versions() {
        let text = "“Don’t Panic,” twenty-five [laughs] 3,200.0 people, uh, 100% & Café — version 2.5";
        expect!["v5: dont panic 25 3200 people 100 percent and cafe version 2.5"]
            .assert_eq(&format!("v{READING_VERSION}: {}", normalised(text)));
    }

    fn names() -> NameInputs {
        NameInputs { runs: vec![vec!["S0".into(), "S1".into()]], ..Default::default() }
    }

    #[test]
    fn a_stored_reading_answers_as_the_transcript_it_was_made_of() {
        let mut canonical = canonical();
        canonical.episode.audio_url = Some("https://example.org/a.mp3".into());
        canonical.segments[1].end_estimated = true;
        let read = Reading::decode(&Reading::encode(&canonical, &names())).expect("it decodes");
        assert_eq!(read.canonical, canonical);
        assert_eq!(serde_json::from_str::<NameInputs>(&read.names).unwrap(), names());
        let made = Prepared::new(&canonical.segments);
        assert_eq!(
            (&read.prepared.ids, &read.prepared.text, &read.prepared.bounds),
            (&made.ids, &made.text, &made.bounds)
        );
        assert_eq!((&read.prepared.starts, &read.prepared.places), (&made.starts, &made.places));
        let spans = |p: &Prepared| p.tokens.iter().map(|t| (t.segment, t.start, t.end)).collect::<Vec<_>>();
        assert_eq!(spans(&read.prepared), spans(&made));
        for quote in
            ["the secret is patience", "twelve years what do you feed it", "nobody can sell you a jar"]
        {
            assert_eq!(
                attribute(&canonical, &read.prepared, quote),
                attribute(&canonical, &made, quote),
                "{quote}"
            );
        }
    }

    #[test]
    fn a_file_of_another_version_or_not_whole_is_not_used() {
        let bytes = Reading::encode(&canonical(), &names());
        let mut other_version = bytes.clone();
        other_version[0] = (READING_VERSION + 1) as u8;
        assert!(Reading::decode(&other_version).is_none());
        assert!(Reading::decode(&bytes[..bytes.len() / 2]).is_none(), "cut short");
        let longer = [&bytes[..], b"more"].concat();
        assert!(Reading::decode(&longer).is_none(), "with bytes after its end");
    }

    #[test]
    fn numbers_take_the_width_their_largest_needs_and_read_back_whole() {
        for (values, width) in
            [(vec![], 1), (vec![0, 255, 7], 1), (vec![3, 256], 2), (vec![65_536, 1, u32::MAX], 4)]
        {
            let numbers = Numbers::of(&values);
            assert_eq!((numbers.width, numbers.bytes.len()), (width, values.len() * width as usize));
            let bytes = postcard::to_allocvec(&numbers).unwrap();
            let read: Numbers<'_> = postcard::from_bytes(&bytes).unwrap();
            assert!(matches!(read.bytes, Cow::Borrowed(_)), "read without a copy");
            assert_eq!(read.values(), Some(values));
        }
        let odd = Numbers { width: 2, bytes: Cow::Borrowed(&[1, 2, 3]) };
        let no_such_width = Numbers { width: 3, bytes: Cow::Borrowed(&[1, 2, 3]) };
        assert_eq!((odd.values(), no_such_width.values()), (None, None));
    }

    #[test]
    fn tokens_that_do_not_fit_their_segments_are_not_used() {
        let canonical = canonical();
        let tokens = Prepared::new(&canonical.segments);
        assert!(
            Prepared::of_stored(tokens.tokens_stored(), &canonical.segments[..1]).is_none(),
            "fewer segments"
        );
        let mut shorter = canonical.segments.clone();
        for segment in &mut shorter {
            segment.text.truncate(3);
        }
        assert!(
            Prepared::of_stored(tokens.tokens_stored(), &shorter).is_none(),
            "texts the tokens do not fit"
        );
        let mut longer_word = tokens.tokens_stored();
        longer_word.word_lens = Numbers::of(&[u32::try_from(longer_word.text.len()).unwrap() + 1]);
        assert!(Prepared::of_stored(longer_word, &canonical.segments).is_none(), "words past the text");
        let mut unsorted = tokens.tokens_stored();
        let reversed: String = unsorted.text.chars().rev().collect();
        unsorted.text = &reversed;
        assert!(Prepared::of_stored(unsorted, &canonical.segments).is_none(), "the words reversed");
    }
}
