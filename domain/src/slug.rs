//! Slugs: `^[a-z0-9]+(-[a-z0-9]+)*$`, 3–80 characters, made from a title (DESIGN.md §2).

use crate::recipe::{Lang, Recipe};
use crate::text::fold;

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

/// Folds accents, transliterates Hebrew, and joins the words with `-`.
pub fn from_title(title: &str) -> String {
    let mut ascii = String::new();
    for c in fold(title).chars() {
        match hebrew_letter(c) {
            Some(latin) => ascii.push_str(latin),
            None if c.is_ascii_alphanumeric() => ascii.push(c.to_ascii_lowercase()),
            None => ascii.push(' '),
        }
    }
    let mut slug = String::new();
    for word in ascii.split_whitespace() {
        if slug.len() + word.len() + 1 > MAX_LEN {
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

/// A simple, readable transliteration of Hebrew letters (final forms included).
fn hebrew_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'א' => "a",
        'ב' => "b",
        'ג' => "g",
        'ד' => "d",
        'ה' => "h",
        'ו' => "v",
        'ז' => "z",
        'ח' => "ch",
        'ט' => "t",
        'י' => "y",
        'כ' | 'ך' => "k",
        'ל' => "l",
        'מ' | 'ם' => "m",
        'נ' | 'ן' => "n",
        'ס' => "s",
        'ע' => "a",
        'פ' | 'ף' => "p",
        'צ' | 'ץ' => "ts",
        'ק' => "k",
        'ר' => "r",
        'ש' => "sh",
        'ת' => "t",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_become_slugs() {
        assert_eq!(from_title("Bacalhau à Brás"), "bacalhau-a-bras");
        assert_eq!(from_title("  Mum's best  Pancakes!! "), "mums-best-pancakes");
        assert_eq!(from_title("שַׁקְשׁוּקָה"), "shkshvkh");
        assert_eq!(from_title("?"), "recipe");
        assert!(from_title(&"long ".repeat(40)).len() <= MAX_LEN);
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
        assert!(!is_valid("Caldo-verde"));
        assert!(!is_valid("ab"));
        assert!(!is_valid("a--b"));
        assert!(!is_valid("-abc"));
    }
}
