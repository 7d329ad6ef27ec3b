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
/// needs), borrowed from the file when read. [`Prepared`] keeps its lists so too, and reads a number
/// where it needs it: reading the file copies each list whole, where a list of postcard varints is
/// decoded one number at a time (in the Worker's wasm, built for size, that was more than half of
/// the decode).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Numbers<'a> {
    width: u8,
    #[serde(borrow)]
    bytes: Cow<'a, [u8]>,
}

impl Numbers<'_> {
    pub(super) fn of(values: &[u32]) -> Numbers<'static> {
        let width: u8 = match values.iter().copied().max().unwrap_or(0) {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        };
        let bytes =
            values.iter().flat_map(|value| value.to_le_bytes().into_iter().take(width as usize)).collect();
        Numbers { width, bytes: Cow::Owned(bytes) }
    }

    /// How many numbers, or `None` when the bytes are not whole numbers of a width this format has.
    fn checked_len(&self) -> Option<usize> {
        let width = usize::from(self.width);
        (matches!(width, 1 | 2 | 4) && self.bytes.len().is_multiple_of(width))
            .then(|| self.bytes.len() / width)
    }

    pub(super) fn len(&self) -> usize {
        self.bytes.len() / usize::from(self.width.max(1))
    }

    /// The numbers in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bytes.chunks_exact(usize::from(self.width.max(1))).map(|number| match *number {
            [a] => u32::from(a),
            [a, b] => u32::from(u16::from_le_bytes([a, b])),
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
            _ => u32::MAX,
        })
    }

    /// Number `idx` (`u32::MAX` past the end, as a stored `u32::MAX` would read).
    pub(super) fn get(&self, idx: usize) -> u32 {
        let width = usize::from(self.width.max(1));
        let at = idx.saturating_mul(width);
        match self.bytes.get(at..at.saturating_add(width)) {
            Some(&[a]) => u32::from(a),
            Some(&[a, b]) => u32::from(u16::from_le_bytes([a, b])),
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
            _ => u32::MAX,
        }
    }

    /// Where `value` stands, in order: one pass over the bytes as they are, a plain loop per width
    /// (the Worker's wasm is built for size, and calls what it does not inline: an iterator's
    /// adapters would be calls for every number).
    pub(super) fn places(&self, value: u32) -> Vec<usize> {
        let (bytes, width) = (&self.bytes[..], usize::from(self.width.max(1)));
        let value = value.to_le_bytes();
        let mut found = Vec::new();
        if value[width.min(4)..].iter().any(|byte| *byte != 0) {
            return found;
        }
        let mut at = 0;
        while at + width <= bytes.len() {
            let same = match width {
                1 => bytes[at] == value[0],
                2 => bytes[at] == value[0] && bytes[at + 1] == value[1],
                _ => bytes.get(at..at + width) == value.get(..width),
            };
            if same {
                found.push(at / width);
            }
            at += width;
        }
        found
    }

    /// The numbers as a list, or `None` when the bytes are not whole numbers of a width this format
    /// has.
    fn values(&self) -> Option<Vec<u32>> {
        self.checked_len()?;
        Some(self.iter().collect())
    }

    fn borrowed(&self) -> Numbers<'_> {
        Numbers { width: self.width, bytes: Cow::Borrowed(&self.bytes) }
    }

    fn into_owned(self) -> Numbers<'static> {
        Numbers { width: self.width, bytes: Cow::Owned(self.bytes.into_owned()) }
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
        let per_segment: Vec<u32> = self.first.windows(2).map(|pair| pair[1] - pair[0]).collect();
        Tokens {
            text: &self.text,
            word_lens: Numbers::of(&self.bounds.windows(2).map(|pair| pair[1] - pair[0]).collect::<Vec<_>>()),
            per_segment: Numbers::of(&per_segment),
            ids: self.ids.borrowed(),
            gaps: self.gaps.borrowed(),
            lens: self.lens.borrowed(),
        }
    }

    /// The index stored for these segments, or `None` when it does not fit them: more segments than
    /// there are, lists of different lengths, or words past the text of the words. What a token
    /// holds is not checked token by token: it is read only for the tokens an answer names, and read
    /// whole (an id past the words is no word; a place past its segment's text, or inside a
    /// character, takes no text and is timed as the segment's start), so a file the build did not
    /// make answers wrongly but never fails. Nor is the words' order checked: words out of order
    /// make a lookup miss, never fail.
    fn of_stored(stored: Tokens<'_>, segments: &[Segment]) -> Option<Prepared> {
        let n_tokens = stored.ids.checked_len()?;
        let per_segment = stored.per_segment.values()?;
        if per_segment.len() > segments.len()
            || stored.gaps.checked_len()? != n_tokens
            || stored.lens.checked_len()? != n_tokens
        {
            return None;
        }
        let mut first = Vec::with_capacity(per_segment.len() + 1);
        first.push(0u32);
        for n in &per_segment {
            first.push(first[first.len() - 1].checked_add(*n)?);
        }
        if first[first.len() - 1] as usize != n_tokens {
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
        if bounds[bounds.len() - 1] as usize != stored.text.len() {
            return None;
        }
        Some(Prepared {
            ids: stored.ids.into_owned(),
            first,
            gaps: stored.gaps.into_owned(),
            lens: stored.lens.into_owned(),
            text: stored.text.to_string(),
            bounds,
            postings: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::quotes::quote::tests::canonical;
    use crate::quotes::quote::{attribute, fixtures};
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
        assert_eq!((&read.prepared.text, &read.prepared.bounds), (&made.text, &made.bounds));
        let ids = |p: &Prepared| p.ids.iter().collect::<Vec<_>>();
        assert_eq!(ids(&read.prepared), ids(&made));
        assert_eq!(read.prepared.first, made.first);
        let spans = |p: &Prepared| {
            (0..p.n_tokens()).map(|idx| p.token(idx)).map(|t| (t.segment, t.start, t.end)).collect::<Vec<_>>()
        };
        assert_eq!(spans(&read.prepared), spans(&made));
        let n_words = u32::try_from(made.bounds.len() - 1).unwrap();
        for id in 0..n_words {
            assert_eq!(read.prepared.places_of(id), made.places_of(id));
        }
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
            for (idx, value) in values.iter().enumerate() {
                let places: Vec<usize> = (0..values.len()).filter(|at| values[*at] == *value).collect();
                assert_eq!((read.places(*value), read.get(idx)), (places, *value));
            }
            assert_eq!(
                read.places(u32::MAX - 1),
                Vec::<usize>::new(),
                "a number no width-{width} list holds"
            );
            assert_eq!(read.get(values.len()), u32::MAX, "past the end");
            assert_eq!(read.values(), Some(values));
        }
        // A number wider than the list's width is in no place, whatever its low bytes.
        for (values, wider) in [(vec![0, 255, 7], u32::MAX), (vec![3, 256], 0x1_0003)] {
            assert_eq!(Numbers::of(&values).places(wider), Vec::<usize>::new());
        }
        let odd = Numbers { width: 2, bytes: Cow::Borrowed(&[1, 2, 3]) };
        let no_such_width = Numbers { width: 3, bytes: Cow::Borrowed(&[1, 2, 3]) };
        assert_eq!((odd.values(), no_such_width.values()), (None, None));
    }

    #[test]
    fn an_index_that_does_not_fit_its_segments_is_not_used() {
        let canonical = canonical();
        let tokens = Prepared::new(&canonical.segments);
        assert!(
            Prepared::of_stored(tokens.tokens_stored(), &canonical.segments[..1]).is_none(),
            "fewer segments"
        );
        let mut longer_word = tokens.tokens_stored();
        longer_word.word_lens = Numbers::of(&[u32::try_from(longer_word.text.len()).unwrap() + 1]);
        assert!(Prepared::of_stored(longer_word, &canonical.segments).is_none(), "words past the text");
        let mut fewer_gaps = tokens.tokens_stored();
        fewer_gaps.gaps = Numbers::of(&vec![0; tokens.n_tokens() - 1]);
        assert!(Prepared::of_stored(fewer_gaps, &canonical.segments).is_none(), "lists of different lengths");
    }

    /// Turns without a word (a sound, an empty turn) between and after others: each token keeps its
    /// turn, the stored index is the one made from the text, and its bytes are this version's (a
    /// change of them is a change of [`READING_VERSION`]).
    #[test]
    fn turns_without_words_keep_every_token_in_its_turn() {
        let mut canonical = canonical();
        canonical.segments = ["alpha beta", "[laughs]", "gamma", "", "delta epsilon", "[music]"]
            .into_iter()
            .enumerate()
            .map(|(idx, text)| fixtures::segment("S0", idx as f64 * 10.0, idx as f64 * 10.0 + 9.0, text))
            .collect();
        let made = Prepared::new(&canonical.segments);
        assert_eq!(made.first, [0, 2, 2, 3, 3, 5]);
        let turns: Vec<usize> = (0..made.n_tokens()).map(|idx| made.segment_of(idx)).collect();
        assert_eq!(turns, [0, 0, 2, 4, 4]);
        let stored = postcard::to_allocvec(&made.tokens_stored()).unwrap();
        let hex: String = stored.iter().map(|byte| format!("{byte:02x}")).collect();
        expect!["1a616c7068616265746164656c7461657073696c6f6e67616d6d610105050405070501050200010002010500010402030105000100000101050504050507"].assert_eq(&hex);
        let read = Reading::decode(&Reading::encode(&canonical, &names())).expect("it decodes");
        for quote in ["beta gamma", "gamma delta", "beta [laughs] gamma", "epsilon"] {
            assert_eq!(
                attribute(&canonical, &read.prepared, quote),
                attribute(&canonical, &made, quote),
                "{quote}"
            );
            assert!(attribute(&canonical, &made, quote).found, "{quote}");
        }
        assert_eq!(attribute(&canonical, &made, "gamma delta").found_at.unwrap().text, "gamma delta");
    }

    /// Tokens are not checked one by one on reading: one that does not fit its text (past it, or
    /// inside a character), or names no word, takes no text and matches nothing, and the answer is
    /// made all the same.
    #[test]
    fn tokens_that_do_not_fit_answer_without_failing() {
        let mut canonical = canonical();
        canonical.segments[1].text = "Café crème, café au lait: the secret is patience with a café".into();
        let tokens = Prepared::new(&canonical.segments);
        let n = tokens.n_tokens();
        let quotes =
            ["the secret is patience", "café au lait the secret", "the secret … patience", "welcome"];
        let answer = |stored: Tokens<'_>| {
            let prepared = Prepared::of_stored(stored, &canonical.segments).expect("read");
            quotes.map(|quote| attribute(&canonical, &prepared, quote))
        };
        let n_words = u32::try_from(tokens.bounds.len() - 1).unwrap();
        // Every other id past the words, the first at u32::MAX: the others still propose alignments.
        let mut ids = tokens.tokens_stored();
        let damaged: Vec<u32> = (0..n)
            .map(|idx| match idx % 2 {
                0 if idx == 0 => u32::MAX,
                0 => tokens.id(idx) + n_words,
                _ => tokens.id(idx),
            })
            .collect();
        ids.ids = Numbers::of(&damaged);
        answer(ids);
        // Places inside a character, past the text, and at u32::MAX.
        for (gap, len) in [(4, 1), (1, 1_000), (u32::MAX, 1), (0, u32::MAX)] {
            let mut places = tokens.tokens_stored();
            places.gaps = Numbers::of(&vec![gap; n]);
            places.lens = Numbers::of(&vec![len; n]);
            for found in answer(places).iter().filter_map(|answer| answer.found_at.as_ref()) {
                assert!(found.start_s >= 0.0 && found.text.len() <= 200, "{found:?}");
            }
        }
        // Ids from a small generator, of every width.
        let mut seed = 7u32;
        for bound in [200, 60_000, u32::MAX] {
            let mut random = tokens.tokens_stored();
            let ids: Vec<u32> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    match bound {
                        u32::MAX => u32::MAX - seed % 8,
                        _ => seed % bound.min(n_words + 3),
                    }
                })
                .collect();
            random.ids = Numbers::of(&ids);
            answer(random);
        }
        // The list of ids intact, the text answers.
        let intact = answer(tokens.tokens_stored());
        assert!(intact[0].found && intact[1].found, "{intact:?}");
    }
}
