//! The recipe document (docs/recipes.md) and its validation.
//!
//! Validation walks a `serde_json::Value` rather than relying on serde's first error, so every problem
//! in a document is reported at once, each with its field path. Only a document with no problems is
//! turned into the typed [`Recipe`].
//!
//! This file holds the types; `validate` holds validation, and `words` the words a page shows for a
//! difficulty or a diet flag in each language.

mod validate;
mod words;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::text::Lang;
pub use validate::{Source, script_matches, validate};
pub use words::{difficulty_word, flag_word};

/// The licence a recipe has when it names none; every recipe written through the API has it.
pub const DEFAULT_LICENCE: &str = "CC0-1.0";
pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_INGREDIENTS: usize = 100;
pub const MAX_STEPS: usize = 60;
/// A week: nothing a home cook does takes longer, and it keeps `prep_min + cook_min` far from overflow.
pub const MAX_MINUTES: u32 = 7 * 24 * 60;
pub const MAX_SERVINGS: u32 = 100;
/// Difficulty runs from 1 (anyone) to this.
pub const MAX_DIFFICULTY: u8 = 3;
pub const MAX_TEXT_CHARS: usize = 4000;
pub const MAX_CUISINE_CHARS: usize = 60;
/// An ingredient's unit word (`tbsp`, `cloves`, `כפות`).
pub const MAX_UNIT_CHARS: usize = 40;
/// The smallest quantity: a hundredth, the finest step a quantity is shown in (`0.01 kg`), so no
/// quantity reads as 0. Less of anything is a `pinch` or `to taste`: `1` with that unit.
pub const MIN_QUANTITY: f64 = 0.01;
/// The largest quantity: 100 kg in grams, more than any kitchen holds.
pub const MAX_QUANTITY: f64 = 100_000.0;
/// A photo's credit line.
pub const MAX_CREDIT_CHARS: usize = 200;

/// The course of a dish: breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink,
/// sauce or basics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Course {
    Breakfast,
    Starter,
    Soup,
    Salad,
    Main,
    Side,
    Dessert,
    Baking,
    Snack,
    Drink,
    Sauce,
    Basics,
}

impl Course {
    pub const ALL: [Course; 12] = [
        Course::Breakfast,
        Course::Starter,
        Course::Soup,
        Course::Salad,
        Course::Main,
        Course::Side,
        Course::Dessert,
        Course::Baking,
        Course::Snack,
        Course::Drink,
        Course::Sauce,
        Course::Basics,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Course::Breakfast => "breakfast",
            Course::Starter => "starter",
            Course::Soup => "soup",
            Course::Salad => "salad",
            Course::Main => "main",
            Course::Side => "side",
            Course::Dessert => "dessert",
            Course::Baking => "baking",
            Course::Snack => "snack",
            Course::Drink => "drink",
            Course::Sauce => "sauce",
            Course::Basics => "basics",
        }
    }

    pub fn parse(code: &str) -> Option<Course> {
        Course::ALL.into_iter().find(|course| course.code() == code)
    }
}

/// A diet flag of a recipe. Each is a field of the document holding 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flag {
    Gf,
    Vegan,
    Vegetarian,
    DairyFree,
    NutFree,
}

impl Flag {
    /// The five, in the order the recipe document lists them (a card's flag bits too).
    pub const ALL: [Flag; 5] = [Flag::Gf, Flag::Vegan, Flag::Vegetarian, Flag::DairyFree, Flag::NutFree];

    /// The flag's field name in a recipe document.
    pub const fn key(self) -> &'static str {
        match self {
            Flag::Gf => "gf",
            Flag::Vegan => "vegan",
            Flag::Vegetarian => "vegetarian",
            Flag::DairyFree => "dairy_free",
            Flag::NutFree => "nut_free",
        }
    }
}

/// The five diet flags' field names, in [`Flag::ALL`]'s order.
pub const FLAGS: [&str; 5] =
    [Flag::Gf.key(), Flag::Vegan.key(), Flag::Vegetarian.key(), Flag::DairyFree.key(), Flag::NutFree.key()];

/// What a grown-up must do or watch for in a step.
pub const STEP_FLAGS: [&str; 5] = ["knife", "hot", "oven", "blender", "boil"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Ingredient {
    #[serde(serialize_with = "whole_numbers_plain")]
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_QUANTITY, max = MAX_QUANTITY)))]
    pub q: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String", length(min = 1, max = MAX_UNIT_CHARS)))]
    pub u: Option<String>,
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_TITLE_CHARS)))]
    pub i: String,
    /// Something to check before cooking (an allergen, a thing to buy ahead): `true`, or left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "schema::only_true"))]
    pub check: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Step {
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_TEXT_CHARS)))]
    pub t: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u32", range(min = 1, max = MAX_MINUTES)))]
    pub min: Option<u32>,
    /// What a grown-up must do or watch for in this step, each at most once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "schema::step_flags"))]
    pub f: Vec<String>,
}

/// One language's text of a recipe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Text {
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_TITLE_CHARS)))]
    pub title: String,
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_TEXT_CHARS)))]
    pub summary: String,
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_INGREDIENTS)))]
    pub ingredients: Vec<Ingredient>,
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_STEPS)))]
    pub steps: Vec<Step>,
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TEXT_CHARS)))]
    pub tips: String,
}

/// The recipe document as a person or an agent sends it, plus its licence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Recipe {
    pub emoji: String,
    pub course: Course,
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_DIFFICULTY)))]
    pub difficulty: u8,
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_MINUTES)))]
    pub prep_min: u32,
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_MINUTES)))]
    pub cook_min: u32,
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_SERVINGS)))]
    pub servings: u32,
    #[cfg_attr(feature = "schema", schemars(range(max = 1)))]
    pub gf: u8,
    #[cfg_attr(feature = "schema", schemars(range(max = 1)))]
    pub vegan: u8,
    #[cfg_attr(feature = "schema", schemars(range(max = 1)))]
    pub vegetarian: u8,
    #[cfg_attr(feature = "schema", schemars(range(max = 1)))]
    pub dairy_free: u8,
    #[cfg_attr(feature = "schema", schemars(range(max = 1)))]
    pub nut_free: u8,
    #[serde(default = "default_licence")]
    pub licence: String,
    /// The cooking tradition the dish comes from, in English (`Portuguese`, `Middle Eastern`), when
    /// one is known; schema.org's `recipeCuisine`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String", length(min = 1, max = MAX_CUISINE_CHARS)))]
    pub cuisine: Option<String>,
    pub texts: BTreeMap<Lang, Text>,
}

/// Schemas the derive cannot say, from the same constants validation reads.
#[cfg(feature = "schema")]
pub mod schema {
    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
    use serde_json::Value;

    use super::{Recipe, STEP_FLAGS};

    /// A flag that is `true` or left out: validation refuses `false` (leave it out instead).
    pub fn only_true(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"const": true})
    }

    /// A step's flags: each one of [`STEP_FLAGS`], at most once.
    pub fn step_flags(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": {"enum": STEP_FLAGS}, "uniqueItems": true})
    }

    /// The recipe document as an API body or a tool's argument takes it: [`Recipe`] without
    /// `licence`, which the server decides (CC0-1.0 for a new recipe; a change keeps the one it had).
    pub fn body(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Recipe::json_schema(generator);
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            properties.remove("licence");
        }
        schema
    }
}

/// Writes `2` rather than `2.0`, so published quantities read as a cook wrote them.
pub(crate) fn whole_numbers_plain<S: serde::Serializer>(q: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if q.fract() == 0.0 && q.abs() < 9.0e15 {
        serializer.serialize_i64(*q as i64)
    } else {
        serializer.serialize_f64(*q)
    }
}

fn default_licence() -> String {
    DEFAULT_LICENCE.to_string()
}

impl Recipe {
    pub fn total_min(&self) -> u32 {
        self.prep_min + self.cook_min
    }

    pub fn languages(&self) -> Vec<Lang> {
        self.texts.keys().copied().collect()
    }

    /// The text in `lang`, else English, else the first one the recipe has.
    pub fn text_for(&self, lang: Lang) -> (Lang, &Text) {
        self.texts
            .get_key_value(&lang)
            .or_else(|| self.texts.get_key_value(&Lang::En))
            .or_else(|| self.texts.iter().next())
            .map(|(lang, text)| (*lang, text))
            .expect("a valid recipe has at least one text")
    }

    /// Whether the recipe has the diet flag.
    pub fn flag(&self, flag: Flag) -> bool {
        let value = match flag {
            Flag::Gf => self.gf,
            Flag::Vegan => self.vegan,
            Flag::Vegetarian => self.vegetarian,
            Flag::DairyFree => self.dairy_free,
            Flag::NutFree => self.nut_free,
        };
        value == 1
    }

    /// The diet flags the recipe has, in [`Flag::ALL`]'s order.
    pub fn flags(&self) -> impl Iterator<Item = Flag> + '_ {
        Flag::ALL.into_iter().filter(|flag| self.flag(*flag))
    }
}

/// A diet version a key holder can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum DietKind {
    Gf,
    Vegan,
    Both,
}

impl DietKind {
    pub const ALL: [DietKind; 3] = [DietKind::Gf, DietKind::Vegan, DietKind::Both];

    pub fn code(self) -> &'static str {
        match self {
            DietKind::Gf => "gf",
            DietKind::Vegan => "vegan",
            DietKind::Both => "both",
        }
    }

    pub fn parse(code: &str) -> Option<DietKind> {
        DietKind::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// What the version's slug adds to the source's: `-gf`, `-vegan`, `-gf-vegan`.
    pub fn slug_suffix(self) -> &'static str {
        match self {
            DietKind::Gf => "-gf",
            DietKind::Vegan => "-vegan",
            DietKind::Both => "-gf-vegan",
        }
    }

    pub fn needs_gf(self) -> bool {
        matches!(self, DietKind::Gf | DietKind::Both)
    }

    pub fn needs_vegan(self) -> bool {
        matches!(self, DietKind::Vegan | DietKind::Both)
    }

    /// In words, for prompts and notes.
    pub fn describe(self) -> &'static str {
        match self {
            DietKind::Gf => "gluten-free",
            DietKind::Vegan => "vegan",
            DietKind::Both => "gluten-free and vegan",
        }
    }
}

/// Which diet version of another recipe this one is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VariantOf {
    pub slug: String,
    pub kind: DietKind,
}

/// How AI-made text came about: the model and a digest of the prompt (never the prompt itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GeneratedBy {
    pub model: String,
    pub prompt_sha256: String,
}

/// The server-set fields: returned, never taken from an API body. In content files they are written
/// by `builder sync`; hand-written recipes leave them out and get the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerFields {
    pub owner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<VariantOf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    pub version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by: Option<GeneratedBy>,
    /// A photo of the dish from the content repo. Only content files carry one (the API takes no
    /// uploads), so like the server-set fields an API body's `photo` is ignored, and a change through
    /// the API keeps the photo the recipe had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub photo: Option<Photo>,
}

/// A photo named by a recipe file: the image, its licence and whose it is. Open data must say whose
/// photo it is, so all three are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Photo {
    /// The image in the content repo: `photos/<name>.jpg` (or `.jpeg`, `.png`, `.webp`).
    pub file: String,
    /// The photo's licence, an SPDX id such as `CC-BY-4.0`.
    pub licence: String,
    /// Whom to credit, as the licence wants it: `Photo: Ana Lima`.
    pub credit: String,
}

/// Image files a photo may be.
pub const PHOTO_EXTENSIONS: [&str; 4] = ["jpg", "jpeg", "png", "webp"];

impl Photo {
    /// The file's extension, lower case (validation admits only [`PHOTO_EXTENSIONS`]).
    pub fn extension(&self) -> &str {
        self.file.rsplit_once('.').map(|(_, ext)| ext).unwrap_or_default()
    }

    /// Where the build publishes the photo of recipe `slug`, relative to the site root.
    pub fn published_path(&self, slug: &str) -> String {
        format!("r/{slug}.photo.{}", self.extension())
    }
}

/// The owner of recipes that came in through pull requests rather than the API.
pub const SITE_OWNER: &str = "commonplace";

impl Default for ServerFields {
    fn default() -> Self {
        ServerFields {
            owner: SITE_OWNER.to_string(),
            forked_from: None,
            variant_of: None,
            created_at: None,
            updated_at: None,
            version: 1,
            generated_by: None,
            photo: None,
        }
    }
}

/// The single-recipe read (`GET /r/{slug}.json`): the document with all languages and the server-set fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Published {
    /// The recipe's address (`/r/{slug}`): `^[a-z0-9]+(-[a-z0-9]+)*$`, 3–80 characters, made by the
    /// server from the English title, else the Portuguese or the transliterated Hebrew one, with `-2`,
    /// `-3`… when taken. It never changes.
    pub slug: String,
    #[serde(flatten)]
    pub recipe: Recipe,
    #[serde(flatten)]
    pub server: ServerFields,
}

/// Server-set fields, and the content-only `photo`: allowed in content files (sync writes them),
/// ignored in API bodies.
pub const SERVER_FIELDS: [&str; 9] = [
    "slug",
    "owner",
    "forked_from",
    "variant_of",
    "created_at",
    "updated_at",
    "version",
    "generated_by",
    "photo",
];

#[cfg(test)]
mod tests;
