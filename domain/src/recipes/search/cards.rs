//! Cards: what a search result shows about a recipe, in every language it has, and the view the API
//! answers in one language.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::recipes::recipe::{Course, Flag, Lang, Recipe};

/// What a result shows about a recipe, in every language it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub slug: String,
    pub emoji: String,
    pub course: Course,
    /// 1 (easy) to 3 (hard).
    pub difficulty: u8,
    /// Minutes of preparation and of cooking: a listing filters on their sum.
    pub prep_min: u32,
    pub cook_min: u32,
    pub servings: u32,
    /// Diet flags as bits in [`Flag::ALL`] order.
    pub flags: u8,
    pub texts: BTreeMap<Lang, CardText>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardText {
    pub title: String,
    pub summary: String,
}

/// A card as the API answers it: one language chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CardView {
    pub slug: String,
    pub emoji: String,
    pub course: Course,
    pub difficulty: u8,
    pub prep_min: u32,
    pub cook_min: u32,
    pub total_min: u32,
    pub servings: u32,
    pub gf: u8,
    pub vegan: u8,
    pub vegetarian: u8,
    pub dairy_free: u8,
    pub nut_free: u8,
    pub languages: Vec<Lang>,
    pub lang: Lang,
    pub title: String,
    pub summary: String,
    pub url: String,
}

impl Card {
    pub fn from_recipe(slug: &str, recipe: &Recipe) -> Card {
        let flags = Flag::ALL
            .iter()
            .enumerate()
            .fold(0u8, |bits, (idx, flag)| if recipe.flag(*flag) { bits | (1 << idx) } else { bits });
        Card {
            slug: slug.to_string(),
            emoji: recipe.emoji.clone(),
            course: recipe.course,
            difficulty: recipe.difficulty,
            prep_min: recipe.prep_min,
            cook_min: recipe.cook_min,
            servings: recipe.servings,
            flags,
            texts: recipe
                .texts
                .iter()
                .map(|(lang, text)| {
                    (*lang, CardText { title: text.title.clone(), summary: text.summary.clone() })
                })
                .collect(),
        }
    }

    fn flag(&self, idx: usize) -> u8 {
        (self.flags >> idx) & 1
    }

    /// The card in `lang`, else English, else the first language the recipe has.
    pub fn view(&self, lang: Option<Lang>) -> CardView {
        let (lang, text) = lang
            .and_then(|lang| self.texts.get_key_value(&lang))
            .or_else(|| self.texts.get_key_value(&Lang::En))
            .or_else(|| self.texts.iter().next())
            .expect("a card has at least one text");
        CardView {
            slug: self.slug.clone(),
            emoji: self.emoji.clone(),
            course: self.course,
            difficulty: self.difficulty,
            prep_min: self.prep_min,
            cook_min: self.cook_min,
            total_min: self.prep_min + self.cook_min,
            servings: self.servings,
            gf: self.flag(0),
            vegan: self.flag(1),
            vegetarian: self.flag(2),
            dairy_free: self.flag(3),
            nut_free: self.flag(4),
            languages: self.texts.keys().copied().collect(),
            lang: *lang,
            title: text.title.clone(),
            summary: text.summary.clone(),
            url: format!("/r/{}", self.slug),
        }
    }
}
