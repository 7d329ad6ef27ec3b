//! The words a recipe page or card shows for a recipe's difficulty and diet flags, per language.

use super::{Flag, Lang};

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
pub fn flag_word(lang: Lang, flag: Flag) -> &'static str {
    match (lang, flag) {
        (Lang::En, Flag::Gf) => "gluten-free",
        (Lang::En, Flag::Vegan) => "vegan",
        (Lang::En, Flag::Vegetarian) => "vegetarian",
        (Lang::En, Flag::DairyFree) => "dairy-free",
        (Lang::En, Flag::NutFree) => "nut-free",
        (Lang::He, Flag::Gf) => "ללא גלוטן",
        (Lang::He, Flag::Vegan) => "טבעוני",
        (Lang::He, Flag::Vegetarian) => "צמחוני",
        (Lang::He, Flag::DairyFree) => "ללא חלב",
        (Lang::He, Flag::NutFree) => "ללא אגוזים",
        (Lang::Pt, Flag::Gf) => "sem glúten",
        (Lang::Pt, Flag::Vegan) => "vegan",
        (Lang::Pt, Flag::Vegetarian) => "vegetariano",
        (Lang::Pt, Flag::DairyFree) => "sem lactose",
        (Lang::Pt, Flag::NutFree) => "sem frutos secos",
    }
}
