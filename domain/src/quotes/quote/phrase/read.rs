//! Decoding what a search has read: an entry's passages (its inline list, narrowed by marks, or
//! its bitmap), passage blocks, and a passage as a hit, timed where the phrase stands in it.

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::format::{
    Block, Entry, Index, Mark, Part, Parts, Passage, Passages, PhraseError, corrupt, decode_gaps, require,
};
use crate::quotes::quote::normalise::{self, Token};
use crate::quotes::transcript::{EpisodeRef, NameState, round_ms};

/// One place a phrase was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hit {
    pub episode: EpisodeRef,
    pub start_s: f64,
    pub end_s: f64,
    pub times_estimated: bool,
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    /// The whole passage the phrase is in.
    pub text: String,
}

/// An entry's passages; a bitmap must have been read.
pub(super) fn passages_of(
    index: &Index,
    parts: &impl Parts,
    entry: &Entry,
) -> Result<RoaringBitmap, PhraseError> {
    match entry.passages {
        Passages::Inline { gaps, .. } => {
            let list = decode_gaps(gaps).ok_or_else(|| corrupt(&index.manifest.dict))?;
            RoaringBitmap::from_sorted_iter(list).map_err(|_| corrupt(&index.manifest.dict).into())
        }
        Passages::Bitmap { offset, len, .. } => {
            let part = index.bitmap(offset, len);
            let bytes = parts.part(&part).expect("required");
            RoaringBitmap::deserialize_from(bytes).map_err(|_| corrupt(&part.file).into())
        }
    }
}

/// The passages a rare entry lists where `words` may stand (the phrase holds the entry's gram):
/// those whose [`Mark`]s allow the words on either side of the gram in the phrase. `None` for a
/// frequent entry, whose bitmap says only where the gram is.
pub(super) fn listed(
    index: &Index,
    entry: &Entry,
    words: &[String],
) -> Option<Result<RoaringBitmap, PhraseError>> {
    let Passages::Inline { gaps, marks } = entry.passages else { return None };
    let Some(list) = decode_gaps(gaps).filter(|list| marks.is_empty() || marks.len() == list.len()) else {
        return Some(Err(corrupt(&index.manifest.dict).into()));
    };
    let sides = sides_of(entry.key, words);
    // A speaker's passages have no marks; and an entry is always a gram of the phrase, but were
    // it not, every passage it lists would stay a candidate.
    if marks.is_empty() || sides.is_empty() {
        return Some(Ok(list.into_iter().collect()));
    }
    let allowed = |mark: &u8| sides.iter().any(|(before, after)| Mark(*mark).allows(*before, *after));
    Some(Ok(list
        .into_iter()
        .zip(marks)
        .filter(|(_, mark)| allowed(mark))
        .map(|(passage, _)| passage)
        .collect()))
}

/// The words on either side of each place the words of gram `key` stand in `words` (`None` past
/// either end).
fn sides_of<'w>(key: &str, words: &'w [String]) -> Vec<(Option<&'w str>, Option<&'w str>)> {
    let gram: Vec<&str> = key.split(' ').collect();
    let n = gram.len();
    (0..(words.len() + 1).saturating_sub(n))
        .filter(|&at| words[at..at + n].iter().zip(&gram).all(|(word, part)| word == part))
        .map(|at| (at.checked_sub(1).map(|idx| words[idx].as_str()), words.get(at + n).map(String::as_str)))
        .collect()
}

pub(super) fn bitmap_part(index: &Index, entry: &Entry) -> Option<Part> {
    match entry.passages {
        Passages::Inline { .. } => None,
        Passages::Bitmap { offset, len, .. } => Some(index.bitmap(offset, len)),
    }
}

/// The passage blocks a search has read.
pub(super) struct Blocks {
    decoded: Vec<(Part, Block)>,
}

impl Blocks {
    pub(super) fn read(
        index: &Index,
        parts: &impl Parts,
        passages: impl Iterator<Item = u32>,
    ) -> Result<Blocks, PhraseError> {
        let mut wanted = Vec::new();
        for passage in passages {
            wanted.push(index.block(passage).ok_or_else(|| corrupt(&index.manifest.passages))?);
        }
        wanted.sort();
        wanted.dedup();
        require(parts, wanted.iter().cloned())?;
        let mut decoded = Vec::with_capacity(wanted.len());
        for part in wanted {
            let block = Block::unpack(parts.part(&part).expect("required"), &part.file)?;
            decoded.push((part, block));
        }
        Ok(Blocks { decoded })
    }

    pub(super) fn get(&self, index: &Index, passage: u32) -> Result<(&Block, &Passage), PhraseError> {
        let part = index.block(passage).ok_or_else(|| corrupt(&index.manifest.passages))?;
        let (_, block) = self.decoded.iter().find(|(p, _)| *p == part).expect("block read");
        let entry = block
            .passages
            .get((passage % index.manifest.passages_per_block) as usize)
            .ok_or_else(|| corrupt(&part.file))?;
        Ok((block, entry))
    }

    /// Passage `passage` as a hit, its times those of `words` inside it (the whole passage's when
    /// they are not in it: a speaker's passage).
    pub(super) fn hit(&self, index: &Index, passage: u32, words: &[String]) -> Result<Hit, PhraseError> {
        let (block, entry) = self.get(index, passage)?;
        hit(block, entry, words, &index.manifest.passages)
    }
}

/// Passage `entry` of `block` (read from `file`) as a hit, its times those of `words` inside it
/// (the whole passage's when they are not in it: a speaker's passage).
pub(super) fn hit(block: &Block, entry: &Passage, words: &[String], file: &str) -> Result<Hit, PhraseError> {
    let episode = block.episodes.get(entry.episode as usize).ok_or_else(|| corrupt(file))?;
    let tokens = normalise::tokens(&entry.text);
    let (start_s, end_s, times_estimated) = match find_words(&tokens, words) {
        Some(position) => phrase_times(entry, &tokens, position, words.len()),
        None => (entry.start_s, entry.end_s, entry.start_estimated || entry.end_estimated),
    };
    Ok(Hit {
        episode: episode.episode.clone(),
        start_s: round_ms(start_s),
        end_s: round_ms(end_s),
        times_estimated,
        speaker: entry.speaker.clone(),
        name: entry.name.clone(),
        name_state: entry.name_state,
        text: entry.text.clone(),
    })
}

/// Where `words` begin in `tokens`, if they occur there one after the other.
pub(super) fn find_words(tokens: &[Token], words: &[String]) -> Option<usize> {
    if words.is_empty() || tokens.len() < words.len() {
        return None;
    }
    (0..=tokens.len() - words.len())
        .find(|&at| words.iter().zip(&tokens[at..]).all(|(word, token)| *word == token.norm))
}

/// The phrase's times inside its passage, in proportion to character position, and whether either
/// is an estimate. The rule is attribution's ([`crate::quotes::quote::Prepared`]): a phrase that starts
/// with the passage's first word starts at the passage's start, one that ends with its last word
/// ends at its end, and those times are as measured as the passage's; any other is interpolated.
fn phrase_times(passage: &Passage, tokens: &[Token], position: usize, n_words: usize) -> (f64, f64, bool) {
    let last_idx = position + n_words.max(1) - 1;
    let (Some(first), Some(last)) = (tokens.get(position), tokens.get(last_idx)) else {
        return (passage.start_s, passage.end_s, passage.start_estimated || passage.end_estimated);
    };
    let n_chars = passage.text.chars().count().max(1) as f64;
    let span = passage.end_s - passage.start_s;
    let at = |byte: usize| passage.start_s + span * passage.text[..byte].chars().count() as f64 / n_chars;
    let (start_s, start_estimated) =
        if position == 0 { (passage.start_s, passage.start_estimated) } else { (at(first.start), true) };
    let (end_s, end_estimated) = if last_idx + 1 == tokens.len() {
        (passage.end_s, passage.end_estimated)
    } else {
        (at(last.end), true)
    };
    (start_s, end_s, start_estimated || end_estimated)
}
