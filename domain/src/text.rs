//! Text folding and tokenising for search, the same on the index side and the query side.
//!
//! Folding: Unicode NFD, combining marks dropped (accents and Hebrew niqqud alike), lower case.
//! Words are folded first and stemmed second, so `feijão` and `feijao` stem alike.
//! English and Portuguese are stemmed with Snowball; Hebrew words also yield their forms without the
//! one-letter prefixes ו ה ב ל מ ש כ, on both sides, so `בשמן` and `שמן` meet.

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// A language a recipe can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    He,
    Pt,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::He, Lang::Pt];

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::He => "he",
            Lang::Pt => "pt",
        }
    }

    pub fn parse(code: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|lang| lang.code() == code)
    }

    /// The BCP 47 tag for HTML `lang` and schema.org `inLanguage`.
    pub fn bcp47(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::He => "he",
            Lang::Pt => "pt-PT",
        }
    }

    pub fn is_rtl(self) -> bool {
        self == Lang::He
    }
}

/// Hebrew one-letter prefixes (and, the, in, to, from, that, as).
pub const HEBREW_PREFIXES: [char; 7] = ['ו', 'ה', 'ב', 'ל', 'מ', 'ש', 'כ'];

/// The fewest letters a search keeps of a Hebrew word without its prefixes.
const SEARCH_STEM_LETTERS: usize = 3;

/// Words too common to help a search; dropped on both sides.
const STOPWORDS: &[&str] = &[
    // en
    "a", "an", "and", "the", "of", "with", "to", "in", "on", "for", "or", "at", "by", "from", "into",
    // pt (folded)
    "o", "os", "as", "e", "de", "do", "da", "dos", "das", "com", "em", "no", "na", "nos", "nas", "um", "uma",
    "para", "ao", "ou", // he
    "עם", "של", "את", "על", "או", "גם",
];

/// Folds case, accents and niqqud; removes apostrophes and Hebrew geresh inside words.
pub fn fold(text: &str) -> String {
    // ASCII has no accents to take apart: most of a transcript, folded without decomposing it.
    if text.is_ascii() {
        return text.bytes().filter(|b| *b != b'\'').map(|b| char::from(b.to_ascii_lowercase())).collect();
    }
    text.nfd()
        .filter(|c| !is_combining_mark(*c) && !matches!(c, '\'' | '’' | '׳' | '״' | '\u{05BE}'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Folded words: runs of letters and digits.
pub fn words(text: &str) -> impl Iterator<Item = String> {
    let folded = fold(text);
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect::<Vec<_>>()
        .into_iter()
}

fn is_hebrew(word: &str) -> bool {
    word.chars().next().is_some_and(|c| ('\u{05D0}'..='\u{05EA}').contains(&c))
}

fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Stems a folded word in one language.
pub struct Stemmers {
    en: Stemmer,
    pt: Stemmer,
}

impl std::fmt::Debug for Stemmers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stemmers")
    }
}

impl Default for Stemmers {
    fn default() -> Self {
        Stemmers { en: Stemmer::create(Algorithm::English), pt: Stemmer::create(Algorithm::Portuguese) }
    }
}

impl Stemmers {
    /// The terms a word of a document in `lang` is indexed under.
    pub fn index_terms(&self, lang: Lang, word: &str, out: &mut Vec<String>) {
        if is_stopword(word) {
            return;
        }
        if is_hebrew(word) {
            out.push(word.to_string());
            out.extend(hebrew_unprefixed(word, SEARCH_STEM_LETTERS));
            return;
        }
        let stem = match lang {
            Lang::En => self.en.stem(word).into_owned(),
            Lang::Pt => self.pt.stem(word).into_owned(),
            Lang::He => word.to_string(),
        };
        out.push(stem);
    }

    /// The terms a query word may match, in the order to prefer them. The query's language is not
    /// known, so a Latin word is tried as English and as Portuguese.
    pub fn query_variants(&self, word: &str) -> Vec<String> {
        let mut variants = vec![word.to_string()];
        if is_hebrew(word) {
            variants.extend(hebrew_unprefixed(word, SEARCH_STEM_LETTERS));
        } else {
            variants.push(self.en.stem(word).into_owned());
            variants.push(self.pt.stem(word).into_owned());
        }
        let mut seen = Vec::with_capacity(variants.len());
        variants.retain(|v| {
            let new = !seen.contains(v);
            seen.push(v.clone());
            new
        });
        variants
    }
}

/// A Hebrew word without its first, then its first two, letters while they are prefix letters and
/// at least `min_letters` remain: the one rule for Hebrew prefixes. Search keeps three letters (a
/// shorter stem matches too much); the diet lexicon keeps one (its entries are whole words, so only an
/// exact entry can match, "דג" included).
pub fn hebrew_unprefixed(word: &str, min_letters: usize) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut forms = Vec::new();
    for n_prefix in 1..=2 {
        if chars.len() < n_prefix + min_letters
            || !chars[..n_prefix].iter().all(|c| HEBREW_PREFIXES.contains(c))
        {
            break;
        }
        forms.push(chars[n_prefix..].iter().collect());
    }
    forms
}

/// The words of a query that take part in matching: folded, stopwords dropped unless nothing else is left.
pub fn query_words(query: &str) -> Vec<String> {
    let all: Vec<String> = words(query).collect();
    let kept: Vec<String> = all.iter().filter(|w| !is_stopword(w)).cloned().collect();
    if kept.is_empty() { all } else { kept }
}

/// Whether two words are at most one edit apart (insert, delete, substitute, or swap two neighbours).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    match long.len() - short.len() {
        0 => {
            let diffs: Vec<usize> = (0..short.len()).filter(|&i| short[i] != long[i]).collect();
            match diffs.as_slice() {
                [] | [_] => true,
                [i, j] => *j == i + 1 && short[*i] == long[*j] && short[*j] == long[*i],
                _ => false,
            }
        }
        1 => {
            let prefix = short.iter().zip(long.iter()).take_while(|(x, y)| x == y).count();
            short[prefix..] == long[prefix + 1..]
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn check_index(lang: Lang, text: &str, expect: Expect) {
        let stemmers = Stemmers::default();
        let mut terms = Vec::new();
        for word in words(text) {
            stemmers.index_terms(lang, &word, &mut terms);
        }
        expect.assert_eq(&terms.join(" "));
    }

    #[test]
    fn english_is_folded_and_stemmed() {
        check_index(Lang::En, "Roasted Tomatoes with Crème fraîche", expect!["roast tomato creme fraich"]);
    }

    #[test]
    fn portuguese_accents_fold_before_stemming() {
        check_index(Lang::Pt, "Feijão com Pão-de-ló e Açúcar", expect!["feija pao lo acuc"]);
        check_index(Lang::Pt, "feijao", expect!["feija"]);
    }

    #[test]
    fn hebrew_niqqud_is_stripped_and_prefixes_unfold() {
        check_index(Lang::He, "שַׁקְשׁוּקָה בשמן זית", expect!["שקשוקה קשוקה בשמן שמן זית"]);
        check_index(Lang::He, "וכשהבצל", expect!["וכשהבצל כשהבצל שהבצל"]);
    }

    #[test]
    fn query_variants_cover_both_stemmers() {
        let stemmers = Stemmers::default();
        assert_eq!(stemmers.query_variants("tomatoes"), ["tomatoes", "tomato"]);
        assert_eq!(stemmers.query_variants("והשום"), ["והשום", "השום", "שום"]);
    }

    #[test]
    fn stopwords_drop_unless_alone() {
        assert_eq!(query_words("Soup with the lentils"), ["soup", "lentils"]);
        assert_eq!(query_words("The"), ["the"]);
    }

    #[test]
    fn one_edit_covers_typos() {
        assert!(within_one_edit("chiken", "chicken"));
        assert!(within_one_edit("tomaot", "tomato"));
        assert!(within_one_edit("salt", "salt"));
        assert!(within_one_edit("rice", "ricw"));
        assert!(!within_one_edit("rice", "price2"));
        assert!(!within_one_edit("abcd", "badc"));
    }
}
