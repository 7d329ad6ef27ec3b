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

use super::Prepared;
use crate::quotes::transcript::names::NameInputs;
use crate::quotes::transcript::{Canonical, EpisodeRef, NameState, RunKind, Segment, Speaker, Word};

/// The version of the stored file; it changes whenever [`crate::quotes::transcript::normalise::tokens`]
/// or this format does, so a Worker never answers from tokens its own code would not make. The unit
/// test `stored_tokens_are_this_versions` holds the tokens of a sample text: when it fails, change
/// this number with the expectation.
pub const READING_VERSION: u32 = 6;

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

/// The token index as [`Prepared`] holds it, each list of numbers as its bytes, so reading it back
/// is a copy per list rather than a loop per token (in the Worker's wasm, built for size, the loops
/// were most of an attribution's time).
#[derive(Serialize, Deserialize)]
struct Tokens<'a> {
    /// Its words end to end, sorted, each once ...
    #[serde(borrow)]
    text: &'a str,
    /// ... word `id` being `text[bounds[id]..bounds[id + 1]]`.
    #[serde(borrow)]
    bounds: Numbers<'a>,
    /// Each token's segment, start and end (bytes in the segment's text).
    #[serde(borrow)]
    spans: Numbers<'a>,
    /// Each token's word.
    #[serde(borrow)]
    ids: Numbers<'a>,
    /// The tokens of word `id`: `places[starts[id]..starts[id + 1]]`.
    #[serde(borrow)]
    starts: Numbers<'a>,
    #[serde(borrow)]
    places: Numbers<'a>,
}

/// A list of numbers as their little-endian bytes, four each, borrowed from the file when read.
#[derive(Serialize, Deserialize)]
struct Numbers<'a> {
    #[serde(borrow)]
    bytes: Cow<'a, [u8]>,
}

impl Numbers<'_> {
    fn of(values: &[u32]) -> Numbers<'static> {
        Numbers { bytes: Cow::Owned(values.iter().flat_map(|value| value.to_le_bytes()).collect()) }
    }

    /// The numbers (one copy of the bytes), or `None` when the bytes are not whole numbers.
    fn values(&self) -> Option<Vec<u32>> {
        if !self.bytes.len().is_multiple_of(4) {
            return None;
        }
        let mut values: Vec<u32> = bytemuck::pod_collect_to_vec(&self.bytes);
        if cfg!(target_endian = "big") {
            values.iter_mut().for_each(|value| *value = u32::from_le(*value));
        }
        Some(values)
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
        Tokens {
            text: &self.text,
            bounds: Numbers::of(&self.bounds),
            spans: Numbers::of(&self.spans),
            ids: Numbers::of(&self.ids),
            starts: Numbers::of(&self.starts),
            places: Numbers::of(&self.places),
        }
    }

    /// The index stored for these segments, or `None` when it does not fit them: every number that
    /// indexes something is within it, and every word within the words' text on a character
    /// boundary. Tokens' byte offsets are checked against their segment's length only: the few an
    /// answer quotes are cut by [`str::get`] (`span_text`), so no file can make a read panic.
    fn of_stored(stored: Tokens<'_>, segments: &[Segment]) -> Option<Prepared> {
        let (bounds, spans, ids) = (stored.bounds.values()?, stored.spans.values()?, stored.ids.values()?);
        let (starts, places) = (stored.starts.values()?, stored.places.values()?);
        let (text, n_tokens) = (stored.text, ids.len());
        let n_words = bounds.len().checked_sub(1)?;
        let ascending = |numbers: &[u32]| numbers.windows(2).all(|pair| pair[0] <= pair[1]);
        let words_fit = bounds.first() == Some(&0)
            && bounds.last() == u32::try_from(text.len()).ok().as_ref()
            && ascending(&bounds)
            && bounds.iter().all(|bound| text.is_char_boundary(*bound as usize))
            && bounds.windows(3).all(|w| {
                let bytes = text.as_bytes();
                bytes[w[0] as usize..w[1] as usize] < bytes[w[1] as usize..w[2] as usize]
            });
        let places_fit = starts.len() == n_words + 1
            && starts.first() == Some(&0)
            && starts.last().map(|last| *last as usize) == Some(n_tokens)
            && ascending(&starts)
            && places.len() == n_tokens
            && places.iter().all(|place| (*place as usize) < n_tokens)
            && ids.iter().all(|id| (*id as usize) < n_words);
        let spans_fit = spans.len() == 3 * n_tokens
            && spans.chunks_exact(3).all(|span| {
                segments
                    .get(span[0] as usize)
                    .is_some_and(|segment| span[1] <= span[2] && (span[2] as usize) <= segment.text.len())
            });
        if !(words_fit && places_fit && spans_fit) {
            return None;
        }
        Some(Prepared { spans, ids, text: text.to_string(), bounds, starts, places })
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
        expect!["v6: dont panic 25 3200 people 100 percent and cafe version 2.5"]
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
        assert_eq!(read.prepared.spans, made.spans);
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
    fn numbers_read_back_whole_from_their_bytes() {
        for values in [vec![], vec![0, 255, 7], vec![65_536, 1, u32::MAX]] {
            let numbers = Numbers::of(&values);
            assert_eq!(numbers.bytes.len(), 4 * values.len());
            let bytes = postcard::to_allocvec(&numbers).unwrap();
            let read: Numbers<'_> = postcard::from_bytes(&bytes).unwrap();
            assert!(matches!(read.bytes, Cow::Borrowed(_)), "read without a copy");
            assert_eq!(read.values(), Some(values));
        }
        assert_eq!(Numbers { bytes: Cow::Borrowed(&[1, 2, 3]) }.values(), None, "not whole numbers");
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
        let mut bounds = tokens.bounds.clone();
        *bounds.last_mut().unwrap() += 1;
        longer_word.bounds = Numbers::of(&bounds);
        assert!(Prepared::of_stored(longer_word, &canonical.segments).is_none(), "words past the text");
        let mut far_place = tokens.tokens_stored();
        let mut places = tokens.places.clone();
        places[0] = u32::try_from(places.len()).unwrap();
        far_place.places = Numbers::of(&places);
        assert!(Prepared::of_stored(far_place, &canonical.segments).is_none(), "a place past the tokens");
        let mut far_id = tokens.tokens_stored();
        let mut ids = tokens.ids.clone();
        ids[0] = u32::try_from(tokens.bounds.len()).unwrap();
        far_id.ids = Numbers::of(&ids);
        assert!(Prepared::of_stored(far_id, &canonical.segments).is_none(), "an id past the words");
        let mut unsorted = tokens.tokens_stored();
        let reversed: String = unsorted.text.chars().rev().collect();
        unsorted.text = &reversed;
        assert!(Prepared::of_stored(unsorted, &canonical.segments).is_none(), "the words reversed");
    }
}
