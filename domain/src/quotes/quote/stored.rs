//! A transcript's token index as the builder stores it (`quotes/tokens/<episode id>.bin`), so an
//! attribution in one episode reads it beside the transcript rather than tokenising the whole
//! transcript again: decoding it is a small part of the work of making it.
//!
//! The file is postcard: the version, the index's words in order, and for each segment its tokens as
//! word ids with byte offsets. A file of another version, or one that does not fit the transcript it is
//! read with, is not used ([`Prepared::decode`] answers `None`) and the caller makes the index.

use serde::{Deserialize, Serialize};

use super::{Prepared, TokenAt};
use crate::quotes::transcript::Segment;

/// The version of the stored index; it changes whenever [`crate::quotes::transcript::normalise::tokens`]
/// or this format does, so a Worker never answers from tokens its own code would not make. The unit
/// test `stored_tokens_are_this_versions` holds the tokens of a sample text: when it fails, change
/// this number with the expectation.
pub const TOKENS_VERSION: u32 = 2;

/// Where the build stores an episode's index.
pub fn tokens_path(episode_id: &str) -> String {
    format!("{}/tokens/{episode_id}.bin", super::phrase::DIR)
}

#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    version: u32,
    /// Sorted, each once.
    #[serde(borrow)]
    words: Vec<&'a str>,
    /// How many tokens each segment has.
    per_segment: Vec<u32>,
    /// Each token's word, by its place in `words`.
    ids: Vec<u32>,
    /// Each token's start: bytes after the end of the token before it in its segment (or after the
    /// segment's start).
    gaps: Vec<u32>,
    /// Each token's length in bytes.
    lens: Vec<u32>,
}

impl Prepared {
    /// The index as the builder stores it.
    pub fn encode(&self) -> Vec<u8> {
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
        let stored = Stored {
            version: TOKENS_VERSION,
            words: (0..self.bounds.len().saturating_sub(1) as u32).map(|id| self.word(id)).collect(),
            per_segment,
            ids: self.ids.clone(),
            gaps,
            lens,
        };
        postcard::to_allocvec(&stored).expect("an index encodes")
    }

    /// The index stored by [`Prepared::encode`] for these segments, or `None` when it is of another
    /// version or does not fit them.
    pub fn decode(bytes: &[u8], segments: &[Segment]) -> Option<Prepared> {
        let stored: Stored<'_> = postcard::from_bytes(bytes).ok()?;
        let n_tokens = stored.ids.len();
        if stored.version != TOKENS_VERSION
            || stored.per_segment.len() > segments.len()
            || stored.gaps.len() != n_tokens
            || stored.lens.len() != n_tokens
            || stored.per_segment.iter().try_fold(0usize, |sum, n| sum.checked_add(*n as usize))
                != Some(n_tokens)
        {
            return None;
        }
        if stored.words.windows(2).any(|pair| pair[0] >= pair[1])
            || stored.ids.iter().any(|id| *id as usize >= stored.words.len())
        {
            return None;
        }
        let mut tokens = Vec::with_capacity(n_tokens);
        let mut at = 0;
        for (segment_idx, n) in stored.per_segment.iter().enumerate() {
            let text = &segments[segment_idx].text;
            let mut end = 0u32;
            for _ in 0..*n {
                let start = end.checked_add(stored.gaps[at])?;
                end = start.checked_add(stored.lens[at])?;
                if !(text.is_char_boundary(start as usize) && text.is_char_boundary(end as usize)) {
                    return None;
                }
                tokens.push(TokenAt { segment: segment_idx as u32, start, end });
                at += 1;
            }
        }
        let prepared = Prepared::of(stored.words.into_iter(), tokens, stored.ids);
        Some(prepared)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::quotes::quote::attribute;
    use crate::quotes::quote::tests::canonical;
    use crate::quotes::transcript::normalise::normalised;

    /// The tokens a stored index of this version holds: a change here is a change of
    /// [`TOKENS_VERSION`].
    #[test]
    fn stored_tokens_are_this_versions() {
        let text = "“Don’t Panic,” twenty-five [laughs] 3,200.0 people, uh, 100% & Café — version 2.5";
        expect!["v2: dont panic 25 3200 people 100 percent and cafe version 2.5"]
            .assert_eq(&format!("v{TOKENS_VERSION}: {}", normalised(text)));
    }

    #[test]
    fn a_stored_index_answers_as_the_one_made_from_the_transcript() {
        let canonical = canonical();
        let made = Prepared::new(&canonical.segments);
        let read = Prepared::decode(&made.encode(), &canonical.segments).expect("it fits");
        assert_eq!(
            (&read.ids, &read.text, &read.bounds, &read.starts, &read.places),
            (&made.ids, &made.text, &made.bounds, &made.starts, &made.places)
        );
        let spans = |p: &Prepared| p.tokens.iter().map(|t| (t.segment, t.start, t.end)).collect::<Vec<_>>();
        assert_eq!(spans(&read), spans(&made));
        for quote in
            ["the secret is patience", "twelve years what do you feed it", "nobody can sell you a jar"]
        {
            assert_eq!(attribute(&canonical, &read, quote), attribute(&canonical, &made, quote), "{quote}");
        }
    }

    #[test]
    fn an_index_of_another_version_or_transcript_is_not_used() {
        let canonical = canonical();
        let bytes = Prepared::new(&canonical.segments).encode();
        let mut other_version = bytes.clone();
        other_version[0] = (TOKENS_VERSION + 1) as u8;
        assert!(Prepared::decode(&other_version, &canonical.segments).is_none());
        assert!(Prepared::decode(&bytes, &canonical.segments[..1]).is_none(), "fewer segments");
        let mut shorter = canonical.segments.clone();
        for segment in &mut shorter {
            segment.text.truncate(3);
        }
        assert!(Prepared::decode(&bytes, &shorter).is_none(), "texts the tokens do not fit");
        assert!(Prepared::decode(&bytes[..bytes.len() / 2], &canonical.segments).is_none(), "cut short");
    }
}
