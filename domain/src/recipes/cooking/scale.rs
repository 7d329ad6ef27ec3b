//! A recipe for the table in front of the cook: every quantity scaled to the servings asked for, and
//! weights and volumes written in the units asked for.
//!
//! One function, [`adjust`], serves `/r/{slug}.json?servings=N&units=…`, the recipe page's servings
//! control and the MCP `get_recipe` tool, so the three always agree. The answer is the recipe itself
//! (quantities rounded as cooks measure, see [`super::quantity`]) plus what was done to it:
//! `scaled_from`, and per ingredient line the conversions (`converted`, with the density used when a
//! volume became a weight or back) and the roundings worth a note (`rounded`: eggs come whole).
//!
//! A line is left exactly as its author wrote it unless scaling or a conversion changes it. Counted
//! things (no unit) and loose amounts (`handful`, `pinch`, `dente`) are scaled, never converted.
//! Conversions stay within weight or within volume, except for the ingredients in [`DENSITIES`],
//! where a weight becomes a volume for US cooks and a cup becomes grams for metric ones.

use serde::{Deserialize, Serialize};

use super::quantity::Rounding;
use super::units::{self, Dimension, Measure, System, Unit};
use crate::recipes::recipe::{Ingredient, Lang, Published};
use crate::text;

/// What a reader asked for: `servings` (1–100) and `units` (read and checked by
/// `crate::api::RecipeView` and `crate::api::RecipeCooklang`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Request {
    pub servings: Option<u32>,
    pub units: Option<System>,
}

impl Request {
    /// Whether the reader asked for the recipe as it is.
    pub fn is_plain(&self) -> bool {
        self.servings.is_none() && self.units.is_none()
    }
}

/// A recipe as a reader asked for it: the published document with quantities adjusted, and what was
/// done to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Adjusted {
    #[serde(flatten)]
    pub published: Published,
    /// The recipe these quantities were scaled from, when `servings` changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled_from: Option<ScaledFrom>,
    /// The units asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<System>,
    /// Every ingredient line whose unit changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub converted: Vec<Converted>,
    /// Lines rounded to whole things (eggs), with a note for the cook.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounded: Vec<Rounded>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScaledFrom {
    pub servings: u32,
    /// The original recipe.
    pub href: String,
}

/// A quantity and its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Amount {
    #[serde(serialize_with = "crate::recipes::recipe::whole_numbers_plain")]
    pub q: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u: Option<String>,
}

/// One ingredient line (`texts.<lang>.ingredients[line]`) whose unit changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Converted {
    pub lang: Lang,
    pub line: usize,
    /// As the recipe has it, scaled.
    pub from: Amount,
    pub to: Amount,
    /// Grams per millilitre, when a volume became a weight or a weight a volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density_g_per_ml: Option<f64>,
}

/// One ingredient line rounded to whole things.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rounded {
    pub lang: Lang,
    pub line: usize,
    /// The quantity before rounding.
    #[serde(serialize_with = "crate::recipes::recipe::whole_numbers_plain")]
    pub exact: f64,
    /// What to tell the cook, in the recipe's language.
    pub note: String,
}

/// Grams per millilitre of the common ingredients, by the word that names them in each language:
/// flour and rice as spooned into a cup, sugar granulated, butter solid.
pub const DENSITIES: &[(&[&str], f64)] = &[
    (&["flour", "farinha", "קמח"], 0.53),
    (&["sugar", "acucar", "סוכר"], 0.85),
    (&["butter", "manteiga", "חמאה"], 0.96),
    (&["rice", "arroz", "אורז"], 0.78),
    (&["milk", "leite", "חלב"], 1.03),
    (&["water", "agua", "מים"], 1.0),
    (&["oil", "azeite", "oleo", "שמן"], 0.92),
];

/// Words for things that only come whole.
const WHOLE_THINGS: &[&str] =
    &["egg", "eggs", "yolk", "yolks", "ovo", "ovos", "gema", "gemas", "ביצה", "ביצים", "חלמון", "חלמונים"];

/// The word that says what an ingredient is: English puts it last (`strong white bread flour`),
/// Portuguese and Hebrew first (`farinha de trigo`, `קמח לחם`); a comma or bracket ends the name.
fn head_word(lang: Lang, name: &str) -> Option<String> {
    let head = name.split([',', '(', ';']).next().unwrap_or(name);
    let mut words = text::words(head);
    match lang {
        Lang::En => words.last(),
        Lang::He | Lang::Pt => words.next(),
    }
}

/// The density of an ingredient, when it is one of [`DENSITIES`].
pub fn density(lang: Lang, name: &str) -> Option<f64> {
    let head = head_word(lang, name)?;
    DENSITIES.iter().find(|(words, _)| words.contains(&head.as_str())).map(|(_, density)| *density)
}

/// Whether an ingredient comes only whole (eggs, yolks).
fn is_whole_thing(name: &str) -> bool {
    let head = name.split([',', '(', ';']).next().unwrap_or(name);
    text::words(head).any(|word| WHOLE_THINGS.contains(&word.as_str()))
}

/// The recipe as `request` asks for it.
pub fn adjust(published: &Published, request: Request) -> Adjusted {
    let original = published.recipe.servings;
    let servings = request.servings.unwrap_or(original);
    let factor = f64::from(servings) / f64::from(original.max(1));
    let mut adjusted = Adjusted {
        published: published.clone(),
        scaled_from: (servings != original)
            .then(|| ScaledFrom { servings: original, href: format!("/r/{}.json", published.slug) }),
        units: request.units,
        converted: Vec::new(),
        rounded: Vec::new(),
    };
    adjusted.published.recipe.servings = servings;
    for (lang, text) in &mut adjusted.published.recipe.texts {
        for (line, ingredient) in text.ingredients.iter_mut().enumerate() {
            let outcome = adjust_line(*lang, ingredient, factor, request.units);
            if let Some((from, density)) = outcome.converted {
                let to = Amount { q: outcome.ingredient.q, u: outcome.ingredient.u.clone() };
                adjusted.converted.push(Converted { lang: *lang, line, from, to, density_g_per_ml: density });
            }
            if let Some(exact) = outcome.rounded_from {
                let note = whole_note(*lang, exact);
                adjusted.rounded.push(Rounded { lang: *lang, line, exact, note });
            }
            *ingredient = outcome.ingredient;
        }
    }
    adjusted
}

/// What happened to one line.
struct LineOutcome {
    ingredient: Ingredient,
    /// The scaled amount in the recipe's unit, and the density used, when the unit changed.
    converted: Option<(Amount, Option<f64>)>,
    /// The exact quantity, when rounding to whole things moved it.
    rounded_from: Option<f64>,
}

fn adjust_line(lang: Lang, ingredient: &Ingredient, factor: f64, system: Option<System>) -> LineOutcome {
    let scaled = factor != 1.0;
    let exact = ingredient.q * factor;
    let mut out = ingredient.clone();
    let unchanged = |ingredient: Ingredient| LineOutcome { ingredient, converted: None, rounded_from: None };
    let Some(word) = ingredient.u.as_deref() else {
        if !scaled {
            return unchanged(out);
        }
        if is_whole_thing(&ingredient.i) {
            out.q = Rounding::Whole.apply(exact);
            let moved = (out.q - exact).abs() >= 0.01;
            return LineOutcome {
                ingredient: out,
                converted: None,
                rounded_from: moved.then_some(two_places(exact)),
            };
        }
        out.q = Rounding::Fraction.apply(exact);
        return unchanged(out);
    };
    let Some(measure) = units::recognise(word) else {
        if scaled {
            out.q = Rounding::Fraction.apply(exact);
            out.u = Some(units::agree(word, lang, out.q > 1.0));
        }
        return unchanged(out);
    };
    let target = target(measure, exact * measure.base, system);
    if !scaled && target.is_none() {
        return unchanged(out);
    }
    let density = density(lang, &ingredient.i);
    let (unit, q, used_density) = place(measure, exact, target, density);
    // A cup kept as a cup is in the recipe's own cups, whatever their size (see `place`).
    let kept_cup = target.is_none() && matches!(unit, Unit::Cup | Unit::FluidOunce);
    let authors_unit = unit == measure.unit && (measure.base == unit.base() || kept_cup);
    if authors_unit && used_density.is_none() {
        out.q = q;
        out.u = Some(units::agree(word, lang, q > 1.0));
        return unchanged(out);
    }
    out.q = q;
    out.u = Some(unit.word(lang, q > 1.0).to_string());
    let from = Amount { q: two_places(exact), u: ingredient.u.clone() };
    LineOutcome { ingredient: out, converted: Some((from, used_density)), rounded_from: None }
}

/// Where a quantity goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Grams or kilograms.
    MetricMass,
    /// Millilitres or litres.
    MetricVolume,
    /// Ounces or pounds.
    UsMass,
    /// Cups, tablespoons or teaspoons.
    UsVolume,
}

/// The target a unit moves to for `system`; `None` keeps the unit's own family (grams and kilograms,
/// spoons among themselves, …).
fn target(measure: Measure, base_amount: f64, system: Option<System>) -> Option<Target> {
    let unit = measure.unit;
    let system = system?;
    let is_spoon = matches!(unit, Unit::Tablespoon | Unit::Teaspoon);
    match (system, unit.dimension()) {
        // Cooks of both systems use spoons, up to a quarter of a cup.
        _ if is_spoon && base_amount < 60.0 => None,
        (System::Metric, Dimension::Volume) if is_spoon => Some(Target::MetricVolume),
        (System::Us, Dimension::Volume) if is_spoon => Some(Target::UsVolume),
        _ if unit.belongs_to(system) => None,
        (System::Metric, Dimension::Mass) => Some(Target::MetricMass),
        (System::Metric, Dimension::Volume) => Some(Target::MetricVolume),
        (System::Us, Dimension::Mass) => Some(Target::UsMass),
        (System::Us, Dimension::Volume) => Some(Target::UsVolume),
    }
}

/// The unit and rounded quantity for `q` of `measure`, and the density used, if any. With no target
/// the quantity stays in its unit's family: grams become kilograms past 1,000, a scaled-down
/// tablespoon becomes teaspoons, a cup under a quarter becomes spoons.
fn place(measure: Measure, q: f64, target: Option<Target>, density: Option<f64>) -> (Unit, f64, Option<f64>) {
    let base_amount = q * measure.base;
    let unit = measure.unit;
    let (target, used) = match (target, density, unit.dimension()) {
        // A metric cook weighs what can be weighed; a US cook measures it in cups.
        (Some(Target::MetricVolume), Some(density), Dimension::Volume) => (Target::MetricMass, Some(density)),
        (Some(Target::UsMass), Some(density), Dimension::Mass) => (Target::UsVolume, Some(density)),
        (Some(target), _, _) => (target, None),
        (None, _, _) => match unit {
            Unit::Gram | Unit::Kilogram => (Target::MetricMass, None),
            Unit::Millilitre | Unit::Litre => (Target::MetricVolume, None),
            Unit::Ounce | Unit::Pound => (Target::UsMass, None),
            // A cup (of whatever size the recipe meant) stays a cup down to a quarter.
            Unit::Cup | Unit::FluidOunce if q >= 0.25 => return (unit, Rounding::Fraction.apply(q), None),
            Unit::Cup | Unit::FluidOunce | Unit::Tablespoon | Unit::Teaspoon => {
                return spoons(base_amount, false, Some(unit));
            }
        },
    };
    let amount = match (used, unit.dimension()) {
        (Some(density), Dimension::Volume) => base_amount * density,
        (Some(density), Dimension::Mass) => base_amount / density,
        (None, _) => base_amount,
    };
    let (unit, q, _) = match target {
        Target::MetricMass => metric(amount, Unit::Gram, Unit::Kilogram),
        Target::MetricVolume => metric(amount, Unit::Millilitre, Unit::Litre),
        Target::UsMass => {
            let ounces = amount / Unit::Ounce.base();
            if ounces >= 16.0 {
                (Unit::Pound, Rounding::Fraction.apply(amount / Unit::Pound.base()), None)
            } else {
                (Unit::Ounce, Rounding::Fraction.apply(ounces), None)
            }
        }
        Target::UsVolume => spoons(amount, true, None),
    };
    (unit, q, used)
}

fn metric(amount: f64, small: Unit, large: Unit) -> (Unit, f64, Option<f64>) {
    let small_q = Rounding::Small.apply(amount);
    if small_q >= 1000.0 {
        (large, Rounding::Large.apply(amount / large.base()), None)
    } else {
        (small, small_q, None)
    }
}

/// Millilitres as cups (from a quarter cup, when cups are allowed), tablespoons or teaspoons. A
/// recipe's own spoon stays while it reads well: tablespoons down to one, teaspoons up to nine.
fn spoons(ml: f64, cups: bool, was: Option<Unit>) -> (Unit, f64, Option<f64>) {
    let unit = match ml {
        ml if cups && ml >= 60.0 => Unit::Cup,
        ml if was == Some(Unit::Teaspoon) && ml < 45.0 => Unit::Teaspoon,
        ml if ml >= 15.0 => Unit::Tablespoon,
        _ => Unit::Teaspoon,
    };
    let rounding = if unit == Unit::Cup { Rounding::Fraction } else { Rounding::SpoonFraction };
    (unit, rounding.apply(ml / unit.base()), None)
}

fn two_places(q: f64) -> f64 {
    (q * 100.0).round() / 100.0
}

/// The note for a line rounded to whole things.
fn whole_note(lang: Lang, exact: f64) -> String {
    let exact = two_places(exact);
    match lang {
        Lang::En => format!("rounded to whole eggs ({exact} exactly)"),
        Lang::He => format!("עוגל לביצים שלמות ({exact} בדיוק)"),
        Lang::Pt => {
            format!("arredondado a ovos inteiros ({} exatamente)", exact.to_string().replace('.', ","))
        }
    }
}

#[cfg(test)]
mod tests;
