//! Transcript and quote normalisation: the same tokens on the transcript side and the caller's side
//! (quote attribution, phrase search, and speaker identification's cues).
//!
//! Case, accents, punctuation, curly quotes and dashes vanish (a dash separates words, an apostrophe
//! joins them: `don’t` = `dont`); bracketed non-speech such as `[laughs]` is skipped; fillers (`um`,
//! `uh`, …) are dropped; number words become digits (`twenty-five` = `25`, `1,000` = `1000`), so a
//! caller's copy and a transcript that write numbers differently still meet. Every token keeps the byte
//! range of the text it came from, so a match can be placed on the words.

use crate::text::fold;

/// One normalised word and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub norm: String,
    /// Byte range in the source text.
    pub start: usize,
    pub end: usize,
}

const FILLERS: &[&str] = &["um", "umm", "uh", "uhh", "uhm", "erm", "er", "ah", "hmm", "hm", "mm", "mhm"];

const UNITS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: &[&str] = &["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

fn is_joiner(c: char) -> bool {
    matches!(c, '\'' | '’' | 'ʼ')
}

/// Raw words: runs of letters and digits; an apostrophe inside a word and `,`/`.` between digits join.
/// Read byte by byte, decoding only the characters that are not ASCII.
fn raw_words(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let char_at = |pos: usize| match bytes.get(pos) {
        Some(byte) if byte.is_ascii() => Some(char::from(*byte)),
        Some(_) => text[pos..].chars().next(),
        None => None,
    };
    let mut out = Vec::with_capacity(text.len() / 5);
    let mut bracket_depth = 0usize;
    let mut pos = 0;
    while let Some(c) = char_at(pos) {
        let start = pos;
        pos += c.len_utf8();
        if c == '[' {
            bracket_depth += 1;
            continue;
        }
        if c == ']' {
            bracket_depth = bracket_depth.saturating_sub(1);
            continue;
        }
        if bracket_depth > 0 || !is_word_char(c) {
            if bracket_depth == 0 && matches!(c, '%' | '&') {
                out.push((start, pos));
            }
            continue;
        }
        let mut prev = c;
        while let Some(c) = char_at(pos) {
            let next = || char_at(pos + c.len_utf8());
            let joins = is_word_char(c)
                || (is_joiner(c) && next().is_some_and(char::is_alphanumeric))
                || (matches!(c, ',' | '.')
                    && prev.is_ascii_digit()
                    && next().is_some_and(|n| n.is_ascii_digit()));
            if !joins {
                break;
            }
            pos += c.len_utf8();
            prev = c;
        }
        out.push((start, pos));
    }
    out
}

fn fold_word(raw: &str) -> String {
    match raw {
        "%" => "percent".into(),
        "&" => "and".into(),
        // Most words are ASCII: lower-cased in one pass, keeping what the general case keeps.
        _ if raw.is_ascii() => {
            let number = raw.as_bytes()[0].is_ascii_digit();
            let mut folded = String::with_capacity(raw.len());
            for byte in raw.bytes() {
                let kept = if number { !matches!(byte, b'\'' | b',') } else { byte.is_ascii_alphanumeric() };
                if kept {
                    folded.push(char::from(byte.to_ascii_lowercase()));
                }
            }
            if number {
                folded.truncate(folded.trim_end_matches(".0").len());
            }
            folded
        }
        _ => {
            let mut folded = fold(raw);
            if folded.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                folded.retain(|c| c != ',');
                folded.truncate(folded.trim_end_matches(".0").len());
            } else {
                folded.retain(char::is_alphanumeric);
            }
            folded
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum NumberWord {
    Unit(u64),
    Ten(u64),
    Hundred,
    Scale(u64),
}

fn number_word(word: &str) -> Option<NumberWord> {
    // Every number word is 3 to 9 letters long: most words are turned away by their length or
    // their first letter before any comparison.
    if !(3..=9).contains(&word.len()) || !word.starts_with(['z', 'o', 't', 'f', 's', 'e', 'n', 'h', 'm', 'b'])
    {
        return None;
    }
    if let Some(value) = UNITS.iter().position(|unit| *unit == word) {
        return Some(NumberWord::Unit(value as u64));
    }
    if let Some(idx) = TENS.iter().position(|ten| *ten == word) {
        return Some(NumberWord::Ten(20 + 10 * idx as u64));
    }
    match word {
        "hundred" => Some(NumberWord::Hundred),
        "thousand" => Some(NumberWord::Scale(1_000)),
        "million" => Some(NumberWord::Scale(1_000_000)),
        "billion" => Some(NumberWord::Scale(1_000_000_000)),
        _ => None,
    }
}

/// The tokens of a text, normalised.
pub fn tokens(text: &str) -> Vec<Token> {
    let mut words: Vec<Token> = Vec::new();
    for (start, end) in raw_words(text) {
        let norm = fold_word(&text[start..end]);
        if norm.is_empty() || FILLERS.contains(&norm.as_str()) {
            continue;
        }
        words.push(Token { norm, start, end });
    }
    combine_numbers(words)
}

/// Turns runs of number words into one digit token: `two hundred and five` stays three tokens
/// (`200 and 5`) but `twenty five` is `25` and `three thousand` is `3000`.
fn combine_numbers(mut words: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(words.len());
    let mut idx = 0;
    while idx < words.len() {
        let Some(first) = number_word(&words[idx].norm) else {
            out.push(take(&mut words[idx]));
            idx += 1;
            continue;
        };
        if matches!(first, NumberWord::Hundred | NumberWord::Scale(_)) {
            out.push(take(&mut words[idx]));
            idx += 1;
            continue;
        }
        let (mut total, mut current) = (0u64, 0u64);
        let mut last = None;
        let start = words[idx].start;
        let mut end = words[idx].end;
        while idx < words.len() {
            let Some(word) = number_word(&words[idx].norm) else { break };
            let fits = match (last, word) {
                (None, NumberWord::Unit(_) | NumberWord::Ten(_)) => true,
                (Some(NumberWord::Ten(_)), NumberWord::Unit(v)) => (1..=9).contains(&v),
                (Some(NumberWord::Unit(_) | NumberWord::Ten(_)), NumberWord::Hundred) => current < 100,
                (
                    Some(NumberWord::Unit(_) | NumberWord::Ten(_) | NumberWord::Hundred),
                    NumberWord::Scale(_),
                ) => true,
                (
                    Some(NumberWord::Hundred | NumberWord::Scale(_)),
                    NumberWord::Unit(_) | NumberWord::Ten(_),
                ) => true,
                _ => false,
            };
            if !fits {
                break;
            }
            match word {
                NumberWord::Unit(v) | NumberWord::Ten(v) => current += v,
                NumberWord::Hundred => current *= 100,
                NumberWord::Scale(scale) => {
                    total += current * scale;
                    current = 0;
                }
            }
            last = Some(word);
            end = words[idx].end;
            idx += 1;
        }
        out.push(Token { norm: (total + current).to_string(), start, end });
    }
    out
}

/// A token moved out of a list that is read no further.
fn take(token: &mut Token) -> Token {
    Token { norm: std::mem::take(&mut token.norm), start: token.start, end: token.end }
}

/// The normalised words of a text, joined by spaces (for tests and debugging).
pub fn normalised(text: &str) -> String {
    tokens(text).into_iter().map(|token| token.norm).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    /// Spellings that mean the same words normalise alike: each of `spellings` to what `expect` holds.
    fn check(spellings: &[&str], expect: Expect) {
        let first = normalised(spellings[0]);
        for spelling in &spellings[1..] {
            assert_eq!(normalised(spelling), first, "{spelling:?} and {:?} differ", spellings[0]);
        }
        expect.assert_eq(&first);
    }

    #[test]
    fn case_punctuation_quotes_and_dashes_vanish() {
        check(
            &["“Don’t Panic,” she said — twice!", "\"Don't panic\", she said -- twice."],
            expect!["dont panic she said twice"],
        );
        check(&["well-known, self‑hosted"], expect!["well known self hosted"]);
        check(&["Café CRÈME"], expect!["cafe creme"]);
    }

    #[test]
    fn fillers_and_non_speech_are_dropped() {
        check(&["So, um, I think, uh, yes [laughs] it is \\[laughter\\]"], expect!["so i think yes it is"]);
    }

    #[test]
    fn numbers_as_words_or_digits_meet() {
        check(&["twenty-five people", "25 people"], expect!["25 people"]);
        check(&["three thousand two hundred and five", "3,200 and 5"], expect!["3200 and 5"]);
        check(&["one two three"], expect!["1 2 3"]);
        check(&["a hundred percent"], expect!["a hundred percent"]);
        check(&["100% sure, version 2.5"], expect!["100 percent sure version 2.5"]);
        check(&["nineteen ninety nine"], expect!["19 99"]);
    }

    #[test]
    fn tokens_keep_their_byte_ranges() {
        let text = "Héllo — twenty five";
        let spans: Vec<&str> = tokens(text).iter().map(|t| &text[t.start..t.end]).collect();
        assert_eq!(spans, ["Héllo", "twenty five"]);
    }
}
