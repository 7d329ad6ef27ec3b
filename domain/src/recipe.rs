//! The recipe document (seed §2 plus DESIGN.md's "Recipes") and its validation.
//!
//! Validation walks a `serde_json::Value` rather than relying on serde's first error, so every problem
//! in a document is reported at once, each with its field path. Only a document with no problems is
//! turned into the typed [`Recipe`].

use std::collections::BTreeMap;

use crate::Diagnostic;
use crate::clean::{self, Kind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// The five diet flags, in the order the seed lists them.
pub const FLAGS: [&str; 5] = ["gf", "vegan", "vegetarian", "dairy_free", "nut_free"];

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

/// The recipe document as a person or an agent sends it (seed §2), plus its licence.
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

    pub fn flag(&self, name: &str) -> bool {
        match name {
            "gf" => self.gf == 1,
            "vegan" => self.vegan == 1,
            "vegetarian" => self.vegetarian == 1,
            "dairy_free" => self.dairy_free == 1,
            "nut_free" => self.nut_free == 1,
            _ => false,
        }
    }
}

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

/// Which diet version of another recipe this one is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VariantOf {
    pub slug: String,
    pub kind: String,
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

/// Where a document comes from decides which fields it may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A file in the content repo: server-set fields (except `slug`, which is the file name) are allowed.
    ContentFile,
    /// An API body: server-set fields are ignored, so a client may send back what it read.
    Api,
}

/// Validates a recipe document and returns every problem, or the typed document and its server fields.
pub fn validate(value: &Value, source: Source) -> Result<(Recipe, ServerFields), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let Some(obj) = value.as_object() else {
        return Err(vec![Diagnostic::new("", "a recipe must be a JSON object")]);
    };
    let mut v = Validator { problems: &mut problems };

    for key in obj.keys() {
        let known = matches!(
            key.as_str(),
            "emoji"
                | "course"
                | "difficulty"
                | "prep_min"
                | "cook_min"
                | "servings"
                | "texts"
                | "licence"
                | "cuisine"
        ) || FLAGS.contains(&key.as_str());
        let server = SERVER_FIELDS.contains(&key.as_str());
        if source == Source::ContentFile && key == "slug" {
            v.push(key, "the slug is the file name; remove this field");
        } else if !known && !server {
            v.push(key, "unknown field");
        }
    }

    v.emoji(obj);
    match v.required(obj, "course").and_then(Value::as_str) {
        Some(code) if Course::parse(code).is_some() => {}
        Some(_) => v.push("course", format!("must be one of {}", course_list())),
        None if obj.contains_key("course") => v.push("course", "must be a string"),
        None => {}
    }
    v.integer(obj, "difficulty", 1, i64::from(MAX_DIFFICULTY));
    v.integer(obj, "prep_min", 0, MAX_MINUTES as i64);
    v.integer(obj, "cook_min", 0, MAX_MINUTES as i64);
    v.integer(obj, "servings", 1, MAX_SERVINGS as i64);
    for flag in FLAGS {
        v.integer(obj, flag, 0, 1);
    }
    if let Some(licence) = obj.get("licence") {
        match licence.as_str() {
            Some(id) if is_spdx_id(id) => {}
            _ => v.push("licence", "must be an SPDX licence id such as CC0-1.0 or CC-BY-4.0"),
        }
    }
    if let Some(cuisine) = obj.get("cuisine") {
        v.string_at(Some(cuisine), "cuisine", TextField::line(MAX_CUISINE_CHARS));
    }
    let flag = |name: &str| obj.get(name).and_then(Value::as_i64) == Some(1);
    if flag("vegan") && obj.get("vegetarian").and_then(Value::as_i64) == Some(0) {
        v.push("vegetarian", "a vegan recipe is vegetarian too: set it to 1");
    }
    if flag("vegan") && obj.get("dairy_free").and_then(Value::as_i64) == Some(0) {
        v.push("dairy_free", "a vegan recipe is dairy-free too: set it to 1");
    }
    v.texts(obj);

    if source == Source::ContentFile {
        v.server_fields(obj);
    }

    if !problems.is_empty() {
        return Err(problems);
    }
    let mut doc = obj.clone();
    doc.retain(|key, _| !SERVER_FIELDS.contains(&key.as_str()));
    let recipe: Recipe = serde_json::from_value(Value::Object(doc))
        .map_err(|err| vec![Diagnostic::new("", format!("unexpected shape: {err}"))])?;
    let server = match source {
        Source::Api => ServerFields::default(),
        Source::ContentFile => {
            let mut fields: Map<String, Value> = obj
                .iter()
                .filter(|(key, _)| SERVER_FIELDS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            fields.entry("owner").or_insert_with(|| Value::from(SITE_OWNER));
            fields.entry("version").or_insert_with(|| Value::from(1));
            serde_json::from_value(Value::Object(fields))
                .map_err(|err| vec![Diagnostic::new("", format!("server fields: {err}"))])?
        }
    };
    Ok((recipe, server))
}

fn course_list() -> String {
    Course::ALL.iter().map(|course| course.code()).collect::<Vec<_>>().join(", ")
}

/// An SPDX licence id: letters, digits, `.`, `-` and `+`, starting with a letter.
fn is_spdx_id(id: &str) -> bool {
    id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_alphabetic())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// What one text field of a recipe must be.
#[derive(Clone, Copy)]
struct TextField {
    max_chars: usize,
    non_empty: bool,
    kind: Kind,
}

impl TextField {
    fn line(max_chars: usize) -> TextField {
        TextField { max_chars, non_empty: true, kind: Kind::Line }
    }

    fn prose() -> TextField {
        TextField { max_chars: MAX_TEXT_CHARS, non_empty: true, kind: Kind::Prose }
    }
}

struct Validator<'p> {
    problems: &'p mut Vec<Diagnostic>,
}

impl Validator<'_> {
    fn push(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.problems.push(Diagnostic::new(field, reason));
    }

    fn required<'v>(&mut self, obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
        let value = obj.get(key);
        if value.is_none() {
            self.push(key, "is required");
        }
        value
    }

    fn integer(&mut self, obj: &Map<String, Value>, key: &str, min: i64, max: i64) {
        self.integer_at(obj.get(key), key, min, max, true);
    }

    fn integer_at(&mut self, value: Option<&Value>, path: &str, min: i64, max: i64, required: bool) {
        match value {
            None if required => self.push(path, "is required"),
            None => {}
            Some(value) => match value.as_i64() {
                Some(n) if (min..=max).contains(&n) => {}
                Some(_) => self.push(path, format!("must be between {min} and {max}")),
                None => self.push(path, format!("must be a whole number from {min} to {max}")),
            },
        }
    }

    fn string_at(&mut self, value: Option<&Value>, path: &str, field: TextField) {
        match value {
            None => self.push(path, "is required"),
            Some(Value::String(s)) => {
                let n_chars = s.chars().count();
                if field.non_empty && s.trim().is_empty() {
                    self.push(path, "must not be empty");
                } else if n_chars > field.max_chars {
                    let max_chars = field.max_chars;
                    self.push(path, format!("is {n_chars} characters; at most {max_chars} are allowed"));
                } else if let Some(problem) = clean::check(path, s, field.kind) {
                    self.problems.push(problem);
                }
            }
            Some(_) => self.push(path, "must be a string"),
        }
    }

    fn emoji(&mut self, obj: &Map<String, Value>) {
        match self.required(obj, "emoji") {
            None => {}
            Some(Value::String(s)) => self.problems.extend(clean::emoji("emoji", s)),
            Some(_) => self.push("emoji", "must be a string: one emoji character, such as 🍲"),
        }
    }

    fn texts(&mut self, obj: &Map<String, Value>) {
        let Some(texts) = self.required(obj, "texts") else { return };
        let Some(texts) = texts.as_object() else {
            self.push("texts", "must be an object keyed by language code (en, he, pt)");
            return;
        };
        if texts.is_empty() {
            self.push("texts", "needs at least one language (en, he or pt)");
        }
        for (code, text) in texts {
            let path = format!("texts.{code}");
            let Some(lang) = Lang::parse(code) else {
                self.push(path, "unknown language; use en, he or pt");
                continue;
            };
            self.text(&path, lang, text);
        }
    }

    fn text(&mut self, path: &str, lang: Lang, text: &Value) {
        let Some(text) = text.as_object() else {
            self.push(path, "must be an object with title, summary, ingredients, steps and tips");
            return;
        };
        for key in text.keys() {
            if !matches!(key.as_str(), "title" | "summary" | "ingredients" | "steps" | "tips") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        self.string_at(text.get("title"), &format!("{path}.title"), TextField::line(MAX_TITLE_CHARS));
        if let Some(title) = text.get("title").and_then(Value::as_str)
            && !title.trim().is_empty()
            && !script_matches(lang, title)
        {
            let expected = if lang == Lang::He { "Hebrew letters" } else { "Latin letters" };
            self.push(format!("{path}.title"), format!("is not written in {} ({expected})", lang.code()));
        }
        self.string_at(text.get("summary"), &format!("{path}.summary"), TextField::prose());
        if text.contains_key("tips") {
            let tips = TextField { non_empty: false, ..TextField::prose() };
            self.string_at(text.get("tips"), &format!("{path}.tips"), tips);
        }
        self.list(text, path, "ingredients", MAX_INGREDIENTS, |v, p, item| v.ingredient(p, item));
        self.list(text, path, "steps", MAX_STEPS, |v, p, item| v.step(p, item));
    }

    fn list(
        &mut self,
        text: &Map<String, Value>,
        path: &str,
        key: &str,
        max: usize,
        mut each: impl FnMut(&mut Self, &str, &Value),
    ) {
        let path = format!("{path}.{key}");
        match text.get(key) {
            None => self.push(path, "is required"),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    self.push(&*path, "needs at least one entry");
                } else if items.len() > max {
                    self.push(&*path, format!("has {} entries; at most {max} are allowed", items.len()));
                }
                for (idx, item) in items.iter().enumerate() {
                    each(self, &format!("{path}[{idx}]"), item);
                }
            }
            Some(_) => self.push(path, "must be an array"),
        }
    }

    fn ingredient(&mut self, path: &str, item: &Value) {
        let Some(item) = item.as_object() else {
            self.push(path, "must be an object with q, i and optionally u and check");
            return;
        };
        for key in item.keys() {
            if !matches!(key.as_str(), "q" | "u" | "i" | "check") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        match item.get("q") {
            None => self.push(format!("{path}.q"), "is required (use 1 with a unit such as \"pinch\")"),
            Some(q) => match q.as_f64() {
                Some(q) if (MIN_QUANTITY..=MAX_QUANTITY).contains(&q) => {}
                _ => self.push(
                    format!("{path}.q"),
                    format!("must be a number from {MIN_QUANTITY} to {MAX_QUANTITY}"),
                ),
            },
        }
        if let Some(unit) = item.get("u") {
            self.string_at(Some(unit), &format!("{path}.u"), TextField::line(MAX_UNIT_CHARS));
        }
        self.string_at(item.get("i"), &format!("{path}.i"), TextField::line(MAX_TITLE_CHARS));
        match item.get("check") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                self.push(format!("{path}.check"), "leave it out rather than setting it to false")
            }
            Some(_) => self.push(format!("{path}.check"), "must be true, or absent"),
        }
    }

    fn step(&mut self, path: &str, item: &Value) {
        let Some(item) = item.as_object() else {
            self.push(path, "must be an object with t and optionally min and f");
            return;
        };
        for key in item.keys() {
            if !matches!(key.as_str(), "t" | "min" | "f") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        self.string_at(item.get("t"), &format!("{path}.t"), TextField::prose());
        self.integer_at(item.get("min"), &format!("{path}.min"), 1, MAX_MINUTES as i64, false);
        match item.get("f") {
            None => {}
            Some(Value::Array(flags)) => {
                for (idx, flag) in flags.iter().enumerate() {
                    let flag_path = format!("{path}.f[{idx}]");
                    match flag.as_str() {
                        Some(name) if STEP_FLAGS.contains(&name) => {
                            if flags[..idx].contains(flag) {
                                self.push(flag_path, "is listed twice");
                            }
                        }
                        _ => self.push(flag_path, format!("must be one of {}", STEP_FLAGS.join(", "))),
                    }
                }
            }
            Some(_) => self.push(format!("{path}.f"), "must be an array of flags"),
        }
    }

    fn server_fields(&mut self, obj: &Map<String, Value>) {
        if let Some(owner) = obj.get("owner") {
            self.string_at(Some(owner), "owner", TextField::line(64));
        }
        for key in ["forked_from", "created_at", "updated_at"] {
            if let Some(value) = obj.get(key) {
                self.string_at(Some(value), key, TextField { non_empty: false, ..TextField::line(200) });
            }
        }
        if let Some(version) = obj.get("version") {
            self.integer_at(Some(version), "version", 1, i64::MAX, true);
        }
        if let Some(variant) = obj.get("variant_of") {
            let ok = variant.get("slug").is_some_and(Value::is_string)
                && variant
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| matches!(k, "gf" | "vegan" | "both"));
            if !ok {
                self.push("variant_of", "must be {\"slug\": …, \"kind\": \"gf\" | \"vegan\" | \"both\"}");
            }
        }
        if let Some(photo) = obj.get("photo") {
            self.photo(photo);
        }
        if let Some(generated) = obj.get("generated_by") {
            let ok = generated.get("model").is_some_and(Value::is_string)
                && generated.get("prompt_sha256").is_some_and(Value::is_string);
            if !ok {
                self.push("generated_by", "must be {\"model\": …, \"prompt_sha256\": …}");
            }
        }
    }

    /// A content file's `photo`: every problem of it, each at its own field.
    fn photo(&mut self, photo: &Value) {
        let Some(obj) = photo.as_object() else {
            self.push(
                "photo",
                "must be {\"file\": \"photos/<name>.jpg\", \"licence\": <SPDX id>, \"credit\": …}",
            );
            return;
        };
        for key in obj.keys().filter(|key| !matches!(key.as_str(), "file" | "licence" | "credit")) {
            self.push(format!("photo.{key}"), "unknown field");
        }
        match obj.get("file").map(Value::as_str) {
            None => self.push("photo.file", "is required"),
            Some(Some(file)) if is_photo_file(file) => {}
            Some(_) => self.push(
                "photo.file",
                format!(
                    "must name an image under photos/: lower-case letters, digits, `-`, `_` and `.`, ending in .{}",
                    PHOTO_EXTENSIONS.join(", .")
                ),
            ),
        }
        match obj.get("licence").map(Value::as_str) {
            None => {
                self.push("photo.licence", "is required: open data must say under which licence the photo is")
            }
            Some(Some(id)) if is_spdx_id(id) => {}
            Some(_) => self.push("photo.licence", "must be an SPDX licence id such as CC-BY-4.0 or CC0-1.0"),
        }
        match obj.get("credit") {
            None => self.push("photo.credit", "is required: open data must say whose photo it is"),
            credit => self.string_at(credit, "photo.credit", TextField::line(MAX_CREDIT_CHARS)),
        }
    }
}

/// `photos/<name>.<ext>`: one folder deep, a plain file name, an image extension.
fn is_photo_file(file: &str) -> bool {
    let Some(name) = file.strip_prefix("photos/") else { return false };
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    !stem.is_empty()
        && name.len() <= 120
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        && PHOTO_EXTENSIONS.contains(&ext)
}

/// Whether a title is written in the script its language uses.
pub fn script_matches(lang: Lang, text: &str) -> bool {
    let is_hebrew = |c: char| ('\u{05D0}'..='\u{05EA}').contains(&c);
    let letters = text.chars().filter(|c| c.is_alphabetic());
    match lang {
        Lang::He => letters.clone().any(is_hebrew),
        Lang::En | Lang::Pt => {
            letters.clone().any(|c| c.is_ascii_alphabetic() || ('\u{C0}'..='\u{24F}').contains(&c))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};
    use serde_json::json;

    fn check(doc: Value, expect: Expect) {
        let actual = match validate(&doc, Source::ContentFile) {
            Ok((recipe, server)) => format!("ok {} langs, owner {}", recipe.texts.len(), server.owner),
            Err(problems) => problems.iter().map(|p| format!("{p}\n")).collect(),
        };
        expect.assert_eq(&actual);
    }

    fn good() -> Value {
        json!({
            "emoji": "🥞", "course": "breakfast", "difficulty": 1, "prep_min": 10, "cook_min": 15,
            "servings": 4, "gf": 0, "vegan": 0, "vegetarian": 1, "dairy_free": 0, "nut_free": 1,
            "texts": {"en": {"title": "Pancakes", "summary": "Soft pancakes.",
                "ingredients": [{"q": 200, "u": "g", "i": "flour"}],
                "steps": [{"t": "Mix.", "min": 2, "f": ["hot"]}], "tips": ""}}
        })
    }

    #[test]
    fn a_good_recipe_passes() {
        check(good(), expect!["ok 1 langs, owner commonplace"]);
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let mut doc = good();
        doc["emoji"] = json!("ab");
        doc["course"] = json!("lunch");
        doc["difficulty"] = json!(5);
        doc["vegan"] = json!(1);
        doc["vegetarian"] = json!(0);
        doc["colour"] = json!("red");
        doc["texts"]["en"]["steps"][0]["f"] = json!(["fire", "hot", "hot"]);
        doc["texts"]["en"]["ingredients"][0]["check"] = json!(false);
        doc["texts"]["he"] = json!({"title": "Pancakes", "summary": "", "ingredients": [], "steps": []});
        doc["texts"]["fr"] = json!({});
        check(
            doc,
            expect![[r#"
                colour: unknown field
                emoji: must be exactly one emoji character, such as 🍲
                course: must be one of breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics
                difficulty: must be between 1 and 3
                vegetarian: a vegan recipe is vegetarian too: set it to 1
                dairy_free: a vegan recipe is dairy-free too: set it to 1
                texts.en.ingredients[0].check: leave it out rather than setting it to false
                texts.en.steps[0].f[0]: must be one of knife, hot, oven, blender, boil
                texts.en.steps[0].f[2]: is listed twice
                texts.fr: unknown language; use en, he or pt
                texts.he.title: is not written in he (Hebrew letters)
                texts.he.summary: must not be empty
                texts.he.ingredients: needs at least one entry
                texts.he.steps: needs at least one entry
            "#]],
        );
    }

    #[test]
    fn unclean_text_is_refused_naming_its_field() {
        let mut doc = good();
        doc["emoji"] = json!("🍲\u{200B}");
        doc["owner"] = json!("cook\u{202E}");
        let en = &mut doc["texts"]["en"];
        en["title"] = json!("Pancakes\u{0}");
        en["summary"] = json!("Soft \u{202E}pancakes.");
        en["tips"] = json!("Ring the bell\u{7}");
        en["ingredients"][0]["u"] = json!("g\u{9B}");
        en["ingredients"][0]["i"] = json!("\u{FE0F}flour");
        en["steps"][0]["t"] = json!("Mix\u{1B}[2J.");
        check(
            doc,
            expect![[r#"
                emoji: must be exactly one emoji character, such as 🍲
                texts.en.title: character 9 is the control character U+0000; a single line takes none
                texts.en.summary: the bidirectional control U+202E at character 6 is not closed by U+202C in the same line
                texts.en.tips: character 14 is the control character U+0007; only newline and tab may appear
                texts.en.ingredients[0].u: character 2 is the control character U+009B; a single line takes none
                texts.en.ingredients[0].i: the variation selector U+FE0F at character 1 follows no character it can modify
                texts.en.steps[0].t: character 4 is the control character U+001B; only newline and tab may appear
                owner: character 5 is the bidirectional control U+202E; leave it out: the page isolates this text already
            "#]],
        );
    }

    #[test]
    fn api_bodies_ignore_server_fields_but_content_files_keep_them() {
        let mut doc = good();
        doc["owner"] = json!("mallory");
        doc["version"] = json!(7);
        let (_, server) = validate(&doc, Source::Api).unwrap();
        assert_eq!(server.owner, SITE_OWNER);
        let (_, server) = validate(&doc, Source::ContentFile).unwrap();
        assert_eq!((server.owner.as_str(), server.version), ("mallory", 7));
    }

    #[test]
    fn missing_fields_are_named() {
        check(
            json!({"texts": {"pt": {"title": "Caldo verde"}}}),
            expect![[r#"
                emoji: is required
                course: is required
                difficulty: is required
                prep_min: is required
                cook_min: is required
                servings: is required
                gf: is required
                vegan: is required
                vegetarian: is required
                dairy_free: is required
                nut_free: is required
                texts.pt.summary: is required
                texts.pt.ingredients: is required
                texts.pt.steps: is required
            "#]],
        );
    }
}
