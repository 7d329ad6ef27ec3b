//! The words a recipe page or card shows for a recipe's difficulty and diet flags, per language.

use super::Lang;

/// The difficulty as a cook says it, in `lang`.
pub fn difficulty_word(lang: Lang, difficulty: u8) -> &'static str {
    match (lang, difficulty) {
        (Lang::En, 1) => "easy",
        (Lang::En, 2) => "medium",
        (Lang::En, _) => "hard",
        (Lang::He, 1) => "קל",
        (Lang::He, 2) => "בינוני",
        (Lang::He, _) => "מאתגר",
        (Lang::Pt, 1) => "fácil",
        (Lang::Pt, 2) => "média",
        (Lang::Pt, _) => "difícil",
    }
}

/// A diet flag's name in `lang`.
pub fn flag_word(lang: Lang, flag: &str) -> &'static str {
    match (lang, flag) {
        (Lang::En, "gf") => "gluten-free",
        (Lang::En, "vegan") => "vegan",
        (Lang::En, "vegetarian") => "vegetarian",
        (Lang::En, "dairy_free") => "dairy-free",
        (Lang::En, _) => "nut-free",
        (Lang::He, "gf") => "ללא גלוטן",
        (Lang::He, "vegan") => "טבעוני",
        (Lang::He, "vegetarian") => "צמחוני",
        (Lang::He, "dairy_free") => "ללא חלב",
        (Lang::He, _) => "ללא אגוזים",
        (Lang::Pt, "gf") => "sem glúten",
        (Lang::Pt, "vegan") => "vegan",
        (Lang::Pt, "vegetarian") => "vegetariano",
        (Lang::Pt, "dairy_free") => "sem lactose",
        (Lang::Pt, _) => "sem frutos secos",
    }
}
