//! Slugs: `^[a-z0-9]+(-[a-z0-9]+)*$`, 3–80 characters, made from a title: the English one if the
//! recipe has it, else the Portuguese, else the Hebrew. `-2`, `-3`… on collision; a published slug is
//! never changed, so these rules only shape new ones.
//!
//! A title becomes ASCII words. Latin letters lose their accents, and the letters that have none to
//! lose take their usual spelling (æ → ae, ø → o, ß → ss, þ → th, đ → d, ł → l). Hebrew is romanised
//! by a small table: it writes few vowels, so a bare letter-by-letter spelling (`slt-mlpvnym`, what
//! `deunicode` and `any_ascii` give too) cannot be read. Vowels come from the niqqud when a title has
//! it, and otherwise from the vowel letters (ו as o, י as i, a final ה as a, א and ע as a) with an
//! `a` guessed between two consonants: "מלבי" → `malabi`, "סלט מלפפונים" → `salat-malapaponim`. A
//! guess is sometimes wrong, never unreadable. Other scripts separate words. Words are kept whole:
//! a long title is cut at the last word that fits, and only a first word longer than the limit is cut.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::recipes::recipe::{Lang, Recipe};

pub const MIN_LEN: usize = 3;
pub const MAX_LEN: usize = 80;

/// Whether `slug` has the published form.
pub fn is_valid(slug: &str) -> bool {
    (MIN_LEN..=MAX_LEN).contains(&slug.len())
        && slug.split('-').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The slug a recipe's title suggests: English if present, else the transliterated pt or he title.
pub fn from_recipe(recipe: &Recipe) -> String {
    let title = [Lang::En, Lang::Pt, Lang::He]
        .iter()
        .find_map(|lang| recipe.texts.get(lang))
        .map(|text| text.title.as_str())
        .unwrap_or_default();
    from_title(title)
}

/// Transliterates a title and joins its words with `-`, within [`MAX_LEN`].
pub fn from_title(title: &str) -> String {
    let ascii = ascii_words(title);
    let mut slug = String::new();
    for word in ascii.split_whitespace() {
        if slug.len() + word.len() + 1 > MAX_LEN {
            // Only a first word too long for any slug is cut.
            if slug.is_empty() {
                slug.push_str(&word[..MAX_LEN]);
            }
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(word);
    }
    while slug.len() < MIN_LEN {
        slug.push_str(if slug.is_empty() { "recipe" } else { "-x" });
    }
    slug
}

/// The first of `base`, `base-2`, `base-3`… that `taken` does not hold.
pub fn first_free(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| {
            let suffix = format!("-{n}");
            let stem = &base[..base.len().min(MAX_LEN - suffix.len())];
            format!("{}{suffix}", stem.trim_end_matches('-'))
        })
        .find(|candidate| !taken(candidate))
        .expect("an unbounded range always has a free slug")
}

/// A title as lower-case ASCII letters and digits, words separated by spaces.
fn ascii_words(title: &str) -> String {
    let mut ascii = String::with_capacity(title.len());
    // The Hebrew word being read: its letters with their points and geresh, romanised when it ends.
    let mut hebrew: Vec<char> = Vec::new();
    for c in title.nfd().flat_map(char::to_lowercase) {
        let hebrew_mark = is_combining_mark(c) || matches!(c, '\'' | '’' | '׳');
        if ('\u{05D0}'..='\u{05EA}').contains(&c) || (hebrew_mark && !hebrew.is_empty()) {
            hebrew.push(c);
            continue;
        }
        romanise_hebrew(&hebrew, &mut ascii);
        hebrew.clear();
        match latin_letter(c) {
            Some(latin) => ascii.push_str(latin),
            None if c.is_ascii_alphanumeric() => ascii.push(c),
            // Accents, apostrophes and the Catalan middle dot join a word's letters.
            None if is_combining_mark(c) || matches!(c, '\'' | '’' | '·') => {}
            None => ascii.push(' '),
        }
    }
    romanise_hebrew(&hebrew, &mut ascii);
    ascii
}

/// Latin letters that no accent makes (so NFD leaves them whole), in their usual ASCII spelling.
fn latin_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'ß' => "ss",
        'þ' => "th",
        'ð' | 'đ' => "d",
        'ł' | 'ŀ' => "l",
        'ħ' => "h",
        'ı' => "i",
        'ŋ' => "ng",
        'ŧ' => "t",
        'ĳ' => "ij",
        'ﬁ' => "fi",
        'ﬂ' => "fl",
        _ => return None,
    })
}

/// One Hebrew letter of a word with what is written on it.
struct HebrewLetter {
    letter: char,
    /// The vowel its niqqud spells, if any; `Some("")` for a sheva (no vowel).
    vowel: Option<&'static str>,
    dagesh: bool,
    /// A sin dot: ש read as s.
    sin: bool,
    /// A geresh after it: ג' j, צ' ch, ז' zh.
    geresh: bool,
    /// וו or יי inside a word: the consonant v or y.
    doubled: bool,
}

/// Romanises one Hebrew word (letters, points and geresh) onto `out`.
fn romanise_hebrew(word: &[char], out: &mut String) {
    let mut letters: Vec<HebrewLetter> = Vec::new();
    for &c in word {
        let is_letter = ('\u{05D0}'..='\u{05EA}').contains(&c);
        let Some(last) = letters.last_mut().filter(|_| !is_letter) else {
            let l = HebrewLetter {
                letter: c,
                vowel: None,
                dagesh: false,
                sin: false,
                geresh: false,
                doubled: false,
            };
            letters.push(l);
            continue;
        };
        match c {
            '\u{05B0}' => last.vowel = last.vowel.or(Some("")),
            '\u{05B1}' | '\u{05B5}' | '\u{05B6}' => last.vowel = Some("e"),
            '\u{05B2}' | '\u{05B3}' | '\u{05B7}' | '\u{05B8}' => last.vowel = Some("a"),
            '\u{05B4}' => last.vowel = Some("i"),
            '\u{05B9}' | '\u{05BA}' | '\u{05C7}' => last.vowel = Some("o"),
            '\u{05BB}' => last.vowel = Some("u"),
            '\u{05BC}' => last.dagesh = true,
            '\u{05C2}' => last.sin = true,
            '\'' | '’' | '׳' => last.geresh = true,
            _ => {}
        }
    }
    letters.dedup_by(|later, earlier| {
        let doubled = matches!(earlier.letter, 'ו' | 'י') && later.letter == earlier.letter;
        earlier.doubled |= doubled;
        doubled
    });
    // With niqqud the vowels are written; without, an `a` is guessed between two consonants.
    let pointed = letters.iter().any(|l| l.vowel.is_some());
    let n = letters.len();
    for (i, l) in letters.iter().enumerate() {
        let at_end = i + 1 == n;
        let next = letters.get(i + 1);
        let after_vowel = out.ends_with(['a', 'e', 'i', 'o', 'u']);
        // A vowel letter after a written vowel only lengthens it.
        let silent_after_vowel = |spelt: &'static str| if pointed && after_vowel { "" } else { spelt };
        let (spelt, is_vowel) = match l.letter {
            'ו' if i == 0 || l.doubled => ("v", false),
            'ו' if l.dagesh && l.vowel.is_none() => ("u", true),
            'ו' if l.vowel == Some("o") => ("o", true),
            'ו' if l.vowel.is_some() => ("v", false),
            'ו' => (silent_after_vowel("o"), true),
            'י' if i == 0 || l.doubled || l.vowel.is_some() => ("y", false),
            'י' => (silent_after_vowel("i"), true),
            'ה' if at_end && !l.dagesh => (if after_vowel { "" } else { "a" }, true),
            'א' | 'ע' if l.vowel.is_some() => ("", false),
            'א' | 'ע' => {
                // At a word's start it carries the vowel letter after it: אורז `oraz`, עוגה `oga`.
                let carries_next = i == 0 && next.is_some_and(|next| matches!(next.letter, 'ו' | 'י'));
                (if after_vowel || carries_next { "" } else { "a" }, true)
            }
            _ => (hebrew_consonant(l, at_end), false),
        };
        out.push_str(spelt);
        if is_vowel {
            continue;
        }
        match (l.vowel, next) {
            (Some(vowel), _) => out.push_str(vowel),
            (None, Some(next)) if !pointed && !reads_as_vowel(next, i + 2 == n) => out.push('a'),
            _ => {}
        }
    }
}

/// Whether a letter of an unpointed word reads as a vowel (`last`: it ends the word).
fn reads_as_vowel(l: &HebrewLetter, last: bool) -> bool {
    match l.letter {
        'ו' | 'י' => !l.doubled,
        'א' | 'ע' => true,
        'ה' => last,
        _ => false,
    }
}

/// A consonant's spelling: the common modern Israeli one.
fn hebrew_consonant(l: &HebrewLetter, at_end: bool) -> &'static str {
    match l.letter {
        'ב' if at_end => "v",
        'ב' => "b",
        'ג' if l.geresh => "j",
        'ג' => "g",
        'ד' => "d",
        'ה' => "h",
        'ז' if l.geresh => "zh",
        'ז' => "z",
        'ח' => "ch",
        'ט' | 'ת' => "t",
        'כ' | 'ק' => "k",
        'ך' => "ch",
        'ל' => "l",
        'מ' | 'ם' => "m",
        'נ' | 'ן' => "n",
        'ס' => "s",
        'פ' => "p",
        'ף' => "f",
        'צ' | 'ץ' if l.geresh => "ch",
        'צ' | 'ץ' => "ts",
        'ר' => "r",
        'ש' if l.sin => "s",
        'ש' => "sh",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each title becomes the slug beside it.
    fn check(cases: &[(&str, &str)]) {
        for (title, slug) in cases {
            assert_eq!(from_title(title), *slug, "{title}");
        }
    }

    #[test]
    fn titles_become_slugs() {
        check(&[
            ("Bacalhau à Brás", "bacalhau-a-bras"),
            ("  Mum's best  Pancakes!! ", "mums-best-pancakes"),
            ("?", "recipe"),
        ]);
        assert!(from_title(&"long ".repeat(40)).len() <= MAX_LEN);
    }

    #[test]
    fn hebrew_titles_keep_their_words_readable() {
        check(&[
            ("סלט מלפפונים של כרמל", "salat-malapaponim-shal-karamal"),
            ("מלבי", "malabi"),
            ("מג׳דרה", "majadara"),
            ("מג'דרה", "majadara"),
            ("כדורי תמרים", "kadori-tamarim"),
            ("סביח", "sabich"),
            ("חלה", "chala"),
            ("חלב", "chalav"),
            ("עוגת גבינה", "ogat-gabina"),
            // With niqqud, its vowels.
            ("שַׁקְשׁוּקָה", "shakshuka"),
            ("פִּיתָה", "pita"),
            ("סלט 3 צבעים", "salat-3-tsabaim"),
        ]);
    }

    #[test]
    fn letters_without_an_accent_to_drop_are_spelt_not_lost() {
        check(&[
            ("Ærø", "aero"),
            ("Smørrebrød", "smorrebrod"),
            ("Weißwurst", "weisswurst"),
            ("Þorramatur", "thorramatur"),
            ("Łódź pierogi", "lodz-pierogi"),
            ("Đuveč", "duvec"),
            ("Pa amb tomàquet i col·lecció", "pa-amb-tomaquet-i-colleccio"),
            ("Coq au vin ﬁne", "coq-au-vin-fine"),
            ("Crème brûlée", "creme-brulee"),
        ]);
    }

    #[test]
    fn a_long_title_is_cut_at_a_word_not_dropped() {
        let words = ["grandmothers", "slow", "roasted", "tomato", "and", "garlic", "soup"];
        let title = "Grandmother's slow-roasted tomato and garlic soup ".repeat(4);
        assert_eq!(title.trim().chars().count(), 199);
        let slug = from_title(title.trim());
        assert!(is_valid(&slug), "{slug}");
        let kept: Vec<&str> = slug.split('-').collect();
        let whole: Vec<&str> = words.iter().cycle().take(kept.len()).copied().collect();
        assert_eq!(kept, whole, "whole words, in order");
        let next = words[kept.len() % words.len()];
        assert!(slug.len() + 1 + next.len() > MAX_LEN, "{slug} has room for `{next}`");
        let one_word = "a".repeat(200);
        assert_eq!(from_title(&one_word), "a".repeat(MAX_LEN));
    }

    #[test]
    fn collisions_count_up() {
        let taken = ["soup", "soup-2"];
        assert_eq!(first_free("soup", |s| taken.contains(&s)), "soup-3");
        assert_eq!(first_free("stew", |s| taken.contains(&s)), "stew");
    }

    #[test]
    fn validity() {
        assert!(is_valid("caldo-verde"));
        for not_a_slug in ["Caldo-verde", "ab", "a--b", "-abc"] {
            assert!(!is_valid(not_a_slug), "{not_a_slug}");
        }
    }
}
