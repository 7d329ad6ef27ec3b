//! Clean text: the one rule every stored text field follows, for content files and API bodies alike.
//!
//! Text we store ends up in pages, `<title>`, `llms.txt`, git commits, WebVTT and model prompts, so
//! characters that are invisible or that reorder the text around them are refused where they come
//! in, with the field named, rather than escaped in each of those places. Two kinds of field:
//!
//! - [`TextKind::Line`] (titles, names, ingredient lines, labels): one line of visible text. No control
//!   characters at all (not even newline or tab), no bidirectional formatting characters (the page
//!   isolates the field already, so it needs none) and no invisible characters: Unicode's
//!   default-ignorable code points such as U+200B ZERO WIDTH SPACE, U+200C ZERO WIDTH NON-JOINER,
//!   U+00AD SOFT HYPHEN, U+2060 WORD JOINER, U+FEFF and the Hangul fillers. A zero width joiner
//!   is kept only inside an emoji (`👩‍🍳`), tag characters only inside an emoji flag (`🏴󠁧󠁢󠁳󠁣󠁴󠁿`).
//! - [`TextKind::Prose`] (summaries, steps, tips, notes, transcript text): newline and tab but no other
//!   control character; bidirectional embeddings, overrides and isolates only when closed in the
//!   same line (U+202A–U+202E by U+202C, U+2066–U+2068 by U+2069, properly nested), since an
//!   unclosed one reorders whatever follows it in any plain-text copy. Marks (LRM, RLM, ALM) and the
//!   joiners that scripts need are fine in prose.
//!
//! Both refuse NUL and every other C0 and C1 control, U+2028 and U+2029, a variation selector that
//! follows no character it can modify, and tag characters outside an emoji flag (they are invisible,
//! and a way to smuggle instructions to a language model).
//!
//! The `emoji` field is [`is_one_emoji`]: one well-formed emoji sequence of UTS #51 (a character
//! with emoji presentation or with U+FE0F, a keycap, a flag, a tag flag, a skin-tone modifier
//! sequence, or a ZWJ sequence of these), one grapheme, at most [`MAX_EMOJI_CODE_POINTS`] code
//! points. The rejected alternative was the list of RGI emoji (the `emojis` crate): exact, but its
//! table of every emoji with names and shortcodes would ship in the Worker, and a new emoji would wait
//! for a crate release. `unicode-properties` gives the emoji properties alone.

use unicode_normalization::char::is_combining_mark;
use unicode_properties::{EmojiStatus, UnicodeEmoji};
use unicode_segmentation::UnicodeSegmentation;

use crate::Diagnostic;

/// The longest RGI emoji, a kiss with two skin tones, has 10 code points.
pub const MAX_EMOJI_CODE_POINTS: usize = 10;

/// Which rule a text field follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// One line of visible text.
    Line,
    /// Paragraphs: newline and tab allowed, balanced bidirectional controls allowed.
    Prose,
}

const ZWJ: char = '\u{200D}';
const VS16: char = '\u{FE0F}';
const PDF: char = '\u{202C}';
const PDI: char = '\u{2069}';
const BLACK_FLAG: char = '\u{1F3F4}';
const CANCEL_TAG: char = '\u{E007F}';

/// The problem with `text` as a field of `kind`, if it has one, naming `field`.
pub fn check(field: &str, text: &str, kind: TextKind) -> Option<Diagnostic> {
    // Nearly all text is printable ASCII; it needs no closer look.
    if text
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) || (kind == TextKind::Prose && matches!(b, b'\n' | b'\t')))
    {
        return None;
    }
    scan(text, kind).err().map(|problem| Diagnostic::new(field, problem.reason(kind)))
}

/// The problem with `text` as the `emoji` field, if it has one.
pub fn emoji(field: &str, text: &str) -> Option<Diagnostic> {
    (!is_one_emoji(text)).then(|| Diagnostic::new(field, "must be exactly one emoji character, such as 🍲"))
}

/// `text` with every control and bidirectional formatting character left out: for `<title>` and
/// `<meta>`, where markup cannot isolate text. Validation keeps them out of stored text already; this
/// also covers rows stored before it did.
pub fn without_controls(text: &str) -> String {
    text.chars().filter(|c| !c.is_control() && !is_bidi_control(*c)).collect()
}

/// `text` made to pass [`check`] as a field of `kind` by leaving out what it refuses: for text a
/// machine wrote (a transcription service's answer, an imported transcript), where no person is there
/// to fix it and an invisible character means nothing. Line and paragraph separators become spaces, and
/// so do newlines and tabs in a [`TextKind::Line`].
pub fn tidied(text: &str, kind: TextKind) -> String {
    if check("", text, kind).is_none() {
        return text.to_string();
    }
    let spaced = |c: char| {
        matches!(c, '\u{2028}' | '\u{2029}') || (kind == TextKind::Line && matches!(c, '\n' | '\t'))
    };
    let mut out: String = text
        .chars()
        .map(|c| if spaced(c) { ' ' } else { c })
        .filter(|&c| {
            (kind == TextKind::Prose && matches!(c, '\n' | '\t'))
                || !(c.is_control() || is_invisible(c) || is_bidi_control(c))
        })
        .collect();
    if check("", &out, kind).is_some() {
        // A joiner or a variation selector out of place: emoji sequences give way.
        out.retain(|c| c != ZWJ && !is_variation_selector(c));
    }
    out
}

/// Whether `text` is one emoji (see the module documentation).
pub fn is_one_emoji(text: &str) -> bool {
    let chars: Vec<char> = text.chars().take(MAX_EMOJI_CODE_POINTS + 1).collect();
    if chars.is_empty() || chars.len() > MAX_EMOJI_CODE_POINTS || text.graphemes(true).nth(1).is_some() {
        return false;
    }
    let Some(mut at) = emoji_element(&chars, 0) else { return false };
    while at < chars.len() {
        if chars[at] != ZWJ {
            return false;
        }
        let Some(next) = emoji_element(&chars, at + 1) else { return false };
        at = next;
    }
    true
}

/// One element of an emoji ZWJ sequence starting at `at`; the index after it.
fn emoji_element(chars: &[char], at: usize) -> Option<usize> {
    let first = *chars.get(at)?;
    let next = |offset: usize| chars.get(at + offset).copied();
    if is_regional_indicator(first) {
        return next(1).filter(|c| is_regional_indicator(*c)).map(|_| at + 2);
    }
    if matches!(first, '0'..='9' | '#' | '*') {
        return (next(1) == Some(VS16) && next(2) == Some('\u{20E3}')).then_some(at + 3);
    }
    let status = first.emoji_status();
    if !first.is_emoji_char() {
        return None;
    }
    // U+FE0F asks for emoji style; a skin-tone modifier implies it.
    let styled = next(1) == Some(VS16) || (is_modifier_base(status) && next(1).is_some_and(is_modifier));
    let mut end = if styled { at + 2 } else { at + 1 };
    if first == BLACK_FLAG {
        end += tag_sequence_len(chars[end..].iter().copied())?;
    }
    (styled || has_emoji_presentation(status)).then_some(end)
}

/// After a black flag: how many of the `following` characters are its tag sequence (tag letters
/// closed by CANCEL TAG; 0 when no tag follows), or `None` when the tags do not make one. The tags must
/// spell a subdivision id (`gbsct`: a region and 1–4 letters or digits), so a flag cannot carry hidden
/// text.
fn tag_sequence_len(following: impl Iterator<Item = char>) -> Option<usize> {
    let mut n_tags = 0;
    for c in following {
        match c {
            CANCEL_TAG => return (3..=6).contains(&n_tags).then_some(n_tags + 1),
            '\u{E0030}'..='\u{E0039}' | '\u{E0061}'..='\u{E007A}' => n_tags += 1,
            '\u{E0020}'..='\u{E007E}' => return None,
            _ => break,
        }
    }
    (n_tags == 0).then_some(0)
}

fn has_emoji_presentation(status: EmojiStatus) -> bool {
    matches!(
        status,
        EmojiStatus::EmojiPresentation
            | EmojiStatus::EmojiPresentationAndModifierBase
            | EmojiStatus::EmojiPresentationAndEmojiComponent
            | EmojiStatus::EmojiPresentationAndModifierAndEmojiComponent
    )
}

fn is_modifier_base(status: EmojiStatus) -> bool {
    matches!(status, EmojiStatus::EmojiModifierBase | EmojiStatus::EmojiPresentationAndModifierBase)
}

/// The five skin-tone modifiers.
fn is_modifier(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

/// Unicode's `Bidi_Control`: the marks, embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// LRI, RLI and FSI, which PDI closes (PDF closes the embeddings and overrides).
fn is_isolate(c: char) -> bool {
    ('\u{2066}'..='\u{2068}').contains(&c)
}

/// The variation selectors (VS1–VS256).
fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Default-ignorable code points (Unicode's DerivedCoreProperties) other than the bidirectional
/// controls, the zero width joiner and the variation selectors, which have rules of their own.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200C}'
            | '\u{2060}'..='\u{2065}'
            | '\u{206A}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E00FF}'
            | '\u{E01F0}'..='\u{E0FFF}'
    )
}

/// A character a variation selector can follow. U+FE0E and U+FE0F choose text or emoji style, so
/// they follow an emoji character; VS1–VS14 follow a visible base character (math symbols, Mongolian,
/// CJK compatibility ideographs); VS17–VS256 choose an ideograph's glyph, so they follow an ideograph.
fn can_take_selector(base: char, selector: char) -> bool {
    match selector {
        '\u{FE0E}' | VS16 => base.is_emoji_char(),
        '\u{FE00}'..='\u{FE0D}' => {
            !(base.is_control()
                || base.is_whitespace()
                || is_combining_mark(base)
                || is_variation_selector(base)
                || is_invisible(base)
                || is_bidi_control(base)
                || base == ZWJ)
        }
        _ => {
            matches!(base, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{3FFFF}')
        }
    }
}

/// Whether a zero width joiner between `before` (skipping U+FE0F and skin tones) and `after` joins
/// two emoji, as in `👩‍🍳`.
fn joins_emoji(before: Option<char>, after: Option<char>) -> bool {
    let is_emoji = |c: char| !c.is_ascii() && c.is_emoji_char() && !is_modifier(c);
    before.is_some_and(is_emoji) && after.is_some_and(is_emoji)
}

/// What is wrong, and where (`at` counts characters from 1).
#[derive(Debug)]
struct Problem {
    at: usize,
    c: char,
    what: What,
}

#[derive(Debug)]
enum What {
    Control,
    LineBreak,
    BidiInLine,
    NotClosed,
    ClosesNothing,
    Invisible,
    LoneSelector,
    Tag,
}

impl Problem {
    fn reason(&self, kind: TextKind) -> String {
        let (at, code) = (self.at, format!("U+{:04X}", self.c as u32));
        match self.what {
            What::Control if kind == TextKind::Line && matches!(self.c, '\n' | '\t') => {
                format!("must be a single line: character {at} is {code}, a line break or tab")
            }
            What::Control => format!(
                "character {at} is the control character {code}; {}",
                if kind == TextKind::Line {
                    "a single line takes none"
                } else {
                    "only newline and tab may appear"
                }
            ),
            What::LineBreak => {
                format!("character {at} is {code}, a line or paragraph separator; use a newline")
            }
            What::BidiInLine => format!(
                "character {at} is the bidirectional control {code}; leave it out: the page isolates this text \
                 already"
            ),
            What::NotClosed => {
                let closer = if is_isolate(self.c) { "U+2069" } else { "U+202C" };
                format!(
                    "the bidirectional control {code} at character {at} is not closed by {closer} in the same line"
                )
            }
            What::ClosesNothing => {
                format!("the bidirectional control {code} at character {at} closes nothing that is open")
            }
            What::Invisible => format!("character {at} is the invisible {code}; leave it out"),
            What::LoneSelector => {
                format!("the variation selector {code} at character {at} follows no character it can modify")
            }
            What::Tag => {
                format!("character {at} is the invisible tag character {code}, not part of an emoji flag")
            }
        }
    }
}

/// Reads `text` once, keeping the bidirectional embeddings and isolates that are open in this line.
fn scan(text: &str, kind: TextKind) -> Result<(), Problem> {
    let mut open: Vec<(usize, char)> = Vec::new();
    let mut prev: Option<char> = None;
    // The last character that is not U+FE0F or a skin tone: what a joiner joins.
    let mut base: Option<char> = None;
    let mut chars = text.chars();
    let mut at = 0;
    while let Some(c) = chars.next() {
        at += 1;
        let problem = |what| Err(Problem { at, c, what });
        match c {
            '\n' if kind == TextKind::Prose => close_line(&open)?,
            '\t' if kind == TextKind::Prose => {}
            _ if c.is_control() => return problem(What::Control),
            '\u{2028}' | '\u{2029}' => return problem(What::LineBreak),
            _ if kind == TextKind::Line && is_bidi_control(c) => return problem(What::BidiInLine),
            // LRE, RLE, LRO, RLO (closed by PDF); LRI, RLI, FSI (closed by PDI).
            '\u{202A}' | '\u{202B}' | '\u{202D}' | '\u{202E}' | '\u{2066}'..='\u{2068}' => open.push((at, c)),
            PDF | PDI => match open.last() {
                Some((_, opener)) if is_isolate(*opener) == (c == PDI) => {
                    open.pop();
                }
                // An isolate's end while an embedding inside it is still open.
                Some((at, opener)) if c == PDI && open.iter().any(|(_, o)| is_isolate(*o)) => {
                    return Err(Problem { at: *at, c: *opener, what: What::NotClosed });
                }
                _ => return problem(What::ClosesNothing),
            },
            _ if is_variation_selector(c) && !prev.is_some_and(|p| can_take_selector(p, c)) => {
                return problem(What::LoneSelector);
            }
            ZWJ if kind == TextKind::Line && !joins_emoji(base, chars.clone().next()) => {
                return problem(What::Invisible);
            }
            BLACK_FLAG => {
                let Some(n_tags) = tag_sequence_len(chars.clone()) else {
                    let tag = chars.next().unwrap_or(c);
                    return Err(Problem { at: at + 1, c: tag, what: What::Tag });
                };
                at += n_tags;
                for _ in 0..n_tags {
                    chars.next();
                }
            }
            '\u{E0000}'..='\u{E007F}' => return problem(What::Tag),
            _ if kind == TextKind::Line && is_invisible(c) => return problem(What::Invisible),
            _ => {}
        }
        prev = Some(c);
        if c != VS16 && !is_modifier(c) {
            base = Some(c);
        }
    }
    close_line(&open)
}

/// A line ends with nothing open.
fn close_line(open: &[(usize, char)]) -> Result<(), Problem> {
    match open.first() {
        Some(&(at, c)) => Err(Problem { at, c, what: What::NotClosed }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    /// A readable form of a test input: escaped invisibles, and long inputs cut short.
    fn shown(text: &str) -> String {
        let n_chars = text.chars().count();
        let head: String = text.chars().take(60).collect();
        if n_chars > 60 { format!("{head:?}… ({n_chars} characters)") } else { format!("{head:?}") }
    }

    fn check_each(cases: &[&str], judge: impl Fn(&str) -> Option<Diagnostic>, expect: Expect) {
        let lines: Vec<String> = cases
            .iter()
            .map(|text| match judge(text) {
                None => format!("{}: ok", shown(text)),
                Some(problem) => format!("{}: {}", shown(text), problem.reason),
            })
            .collect();
        expect.assert_eq(&(lines.join("\n") + "\n"));
    }

    #[test]
    fn an_emoji_is_one_emoji_sequence() {
        let marks = format!("🍲{}", "\u{0301}".repeat(20_000));
        let cases = [
            // Emoji presentation, U+FE0F, skin tones, ZWJ sequences (a cook, a family, a kiss), flags,
            // keycaps, a subdivision flag.
            "🍲",
            "☕",
            "❤️",
            "👍🏽",
            "☝🏿",
            "🧑🏾‍🍳",
            "👨‍👩‍👧‍👦",
            "👩🏻‍❤️‍💋‍👨🏼",
            "🏳️‍🌈",
            "🇵🇹",
            "🇮🇱",
            "#️⃣",
            "1️⃣",
            "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
            // An override, a zero width space alone or after an emoji, 20,000 combining marks, two emoji,
            // two flags, a letter, a digit, text style, half a flag, a dangling joiner, a skin tone on
            // a soup, an unclosed or made-up tag flag, a trailing space, nothing.
            "\u{202E}",
            "\u{200B}",
            "🍲\u{200B}",
            &marks,
            "🍲🥗",
            "🇵🇹🇮🇱",
            "a",
            "1",
            "❤",
            "☕\u{FE0E}",
            "🇵",
            "🍲\u{200D}",
            "🍲🏽",
            "🏴\u{E0067}\u{E0062}",
            "🏴\u{E0041}\u{E0042}\u{E0043}\u{E007F}",
            "🍲 ",
            "",
        ];
        let (ok, refused): (Vec<&str>, Vec<&str>) = cases.iter().partition(|text| is_one_emoji(text));
        let list = |texts: Vec<&str>| texts.into_iter().map(shown).collect::<Vec<_>>().join(" ");
        expect![[r##"
            one emoji: "🍲" "☕" "❤\u{fe0f}" "👍🏽" "☝🏿" "🧑🏾\u{200d}🍳" "👨\u{200d}👩\u{200d}👧\u{200d}👦" "👩🏻\u{200d}❤\u{fe0f}\u{200d}💋\u{200d}👨🏼" "🏳\u{fe0f}\u{200d}🌈" "🇵🇹" "🇮🇱" "#\u{fe0f}\u{20e3}" "1\u{fe0f}\u{20e3}" "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"
            refused: "\u{202e}" "\u{200b}" "🍲\u{200b}" "🍲\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}"… (20001 characters) "🍲🥗" "🇵🇹🇮🇱" "a" "1" "❤" "☕\u{fe0e}" "🇵" "🍲\u{200d}" "🍲🏽" "🏴\u{e0067}\u{e0062}" "🏴\u{e0041}\u{e0042}\u{e0043}\u{e007f}" "🍲 " ""
        "##]].assert_eq(&format!("one emoji: {}\nrefused: {}\n", list(ok), list(refused)));
        assert_eq!(
            emoji("emoji", "ab").unwrap().to_string(),
            "emoji: must be exactly one emoji character, such as 🍲"
        );
    }

    #[test]
    fn a_line_is_visible_text_on_one_line() {
        check_each(
            &[
                "Pancakes",
                "Pão de ló",
                "שקשוקה",
                "Family 👨‍👩‍👧 dinner",
                "Hot ♨️ soup",
                "Scottish 🏴󠁧󠁢󠁳󠁣󠁴󠁿 shortbread",
                "Soup no. 1️⃣",
                "Soup\u{0}",
                "Soup\u{7}",
                "Soup\u{1B}[31m",
                "Soup\u{85}",
                "Soup\u{9B}",
                "Two\nlines",
                "Tab\there",
                "Soup\u{2028}",
                "\u{202E}puoS",
                "Soup\u{200F}",
                "\u{2067}שקשוקה\u{2069}",
                "So\u{200B}up",
                "So\u{200C}up",
                "So\u{200D}up",
                "So\u{AD}up",
                "\u{FEFF}Soup",
                "Soup\u{3164}",
                "\u{FE0F}Soup",
                "Soup\u{FE0F}",
                "Soup \u{E0041}\u{E0042}",
                "Soup 🏴\u{E0069}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}\u{E0020}\u{E0061}\u{E006C}\u{E006C}\u{E007F}",
            ],
            |text| check("title", text, TextKind::Line),
            expect![[r#"
                "Pancakes": ok
                "Pão de ló": ok
                "שקשוקה": ok
                "Family 👨\u{200d}👩\u{200d}👧 dinner": ok
                "Hot ♨\u{fe0f} soup": ok
                "Scottish 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} shortbread": ok
                "Soup no. 1\u{fe0f}\u{20e3}": ok
                "Soup\0": character 5 is the control character U+0000; a single line takes none
                "Soup\u{7}": character 5 is the control character U+0007; a single line takes none
                "Soup\u{1b}[31m": character 5 is the control character U+001B; a single line takes none
                "Soup\u{85}": character 5 is the control character U+0085; a single line takes none
                "Soup\u{9b}": character 5 is the control character U+009B; a single line takes none
                "Two\nlines": must be a single line: character 4 is U+000A, a line break or tab
                "Tab\there": must be a single line: character 4 is U+0009, a line break or tab
                "Soup\u{2028}": character 5 is U+2028, a line or paragraph separator; use a newline
                "\u{202e}puoS": character 1 is the bidirectional control U+202E; leave it out: the page isolates this text already
                "Soup\u{200f}": character 5 is the bidirectional control U+200F; leave it out: the page isolates this text already
                "\u{2067}שקשוקה\u{2069}": character 1 is the bidirectional control U+2067; leave it out: the page isolates this text already
                "So\u{200b}up": character 3 is the invisible U+200B; leave it out
                "So\u{200c}up": character 3 is the invisible U+200C; leave it out
                "So\u{200d}up": character 3 is the invisible U+200D; leave it out
                "So\u{ad}up": character 3 is the invisible U+00AD; leave it out
                "\u{feff}Soup": character 1 is the invisible U+FEFF; leave it out
                "Soupㅤ": character 5 is the invisible U+3164; leave it out
                "\u{fe0f}Soup": the variation selector U+FE0F at character 1 follows no character it can modify
                "Soup\u{fe0f}": the variation selector U+FE0F at character 5 follows no character it can modify
                "Soup \u{e0041}\u{e0042}": character 6 is the invisible tag character U+E0041, not part of an emoji flag
                "Soup 🏴\u{e0069}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}\u{e0020}\u{e0061}\u{e006c}\u{e006c}\u{e007f}": character 7 is the invisible tag character U+E0069, not part of an emoji flag
            "#]],
        );
    }

    #[test]
    fn prose_may_break_lines_and_must_close_what_it_opens() {
        check_each(
            &[
                "Mix.\nServe.\tHot.",
                "Add \u{202B}שמן זית\u{202C} to the pan.",
                "\u{2067}שמן זית\u{2069} first, then \u{202A}a\u{2066}b\u{2069}\u{202C}.",
                "Stir \u{200F}(2) and go.",
                "می\u{200C}خواهم",
                "Mix.\u{7}",
                "NUL\u{0}",
                "CRLF\r\n",
                "Add \u{202E}reversed",
                "Close \u{202C} nothing",
                "Two \u{202B}lines\n\u{202C}",
                "\u{2067}a\u{202B}b\u{2069}",
                "Lone \u{FE0F}",
                "Hidden \u{E0049}\u{E0047}",
                "Para\u{2029}graph",
            ],
            |text| check("texts.en.summary", text, TextKind::Prose),
            expect![[r#"
                "Mix.\nServe.\tHot.": ok
                "Add \u{202b}שמן זית\u{202c} to the pan.": ok
                "\u{2067}שמן זית\u{2069} first, then \u{202a}a\u{2066}b\u{2069}\u{202c}.": ok
                "Stir \u{200f}(2) and go.": ok
                "می\u{200c}خواهم": ok
                "Mix.\u{7}": character 5 is the control character U+0007; only newline and tab may appear
                "NUL\0": character 4 is the control character U+0000; only newline and tab may appear
                "CRLF\r\n": character 5 is the control character U+000D; only newline and tab may appear
                "Add \u{202e}reversed": the bidirectional control U+202E at character 5 is not closed by U+202C in the same line
                "Close \u{202c} nothing": the bidirectional control U+202C at character 7 closes nothing that is open
                "Two \u{202b}lines\n\u{202c}": the bidirectional control U+202B at character 5 is not closed by U+202C in the same line
                "\u{2067}a\u{202b}b\u{2069}": the bidirectional control U+202B at character 3 is not closed by U+202C in the same line
                "Lone \u{fe0f}": the variation selector U+FE0F at character 6 follows no character it can modify
                "Hidden \u{e0049}\u{e0047}": character 8 is the invisible tag character U+E0049, not part of an emoji flag
                "Para\u{2029}graph": character 5 is U+2029, a line or paragraph separator; use a newline
            "#]],
        );
    }

    #[test]
    fn the_head_text_loses_controls() {
        assert_eq!(without_controls("\u{202E}Soup\u{0}\u{200F} \u{2067}x\u{2069}"), "Soup x");
    }

    #[test]
    fn machine_text_is_tidied_to_pass() {
        let cases = [
            ("com\u{00AD}pli\u{200B}cated", TextKind::Line, "complicated"),
            ("one\ntwo\u{2028}three\u{0}", TextKind::Line, "one two three"),
            ("one\ntwo\u{202E}", TextKind::Prose, "one\ntwo"),
            ("a\u{FE0F}b \u{200D}", TextKind::Line, "ab "),
            ("👩\u{200D}🍳 fine", TextKind::Line, "👩\u{200D}🍳 fine"),
        ];
        for (text, kind, tidy) in cases {
            assert_eq!(tidied(text, kind), tidy, "{text:?}");
            assert_eq!(check("f", &tidied(text, kind), kind), None, "{text:?}");
        }
    }
}
