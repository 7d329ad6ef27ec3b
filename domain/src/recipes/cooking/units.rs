//! Units of weight and volume: the words cooks write for them in English, Hebrew and Portuguese, how
//! much each holds, and the words to write a converted quantity in.
//!
//! A unit word is recognised after folding (case, accents, geresh and gershayim, full stops), so
//! `Colheres de Sopa`, `מ"ל`, `מ״ל` and `fl. oz` are all found. A word we do not know (`handful`,
//! `dente`, `קורט`) is not a measure: its quantity is scaled and never converted. Words that name a
//! counted thing (`clove`, `lata`, `חופן`) still change between singular and plural when a quantity
//! crosses one.

use crate::recipes::recipe::Lang;
use crate::text;

/// What a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// In grams.
    Mass,
    /// In millilitres.
    Volume,
}

/// The units a converted quantity is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Gram,
    Kilogram,
    Millilitre,
    Litre,
    Ounce,
    Pound,
    FluidOunce,
    Cup,
    Tablespoon,
    Teaspoon,
}

/// A system of units a cook asks for (`?units=metric|us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum System {
    /// Grams, kilograms, millilitres, litres, and the 15 ml and 5 ml spoons.
    Metric,
    /// Ounces, pounds, cups, fluid ounces and spoons (US customary).
    Us,
}

impl System {
    pub fn parse(code: &str) -> Option<System> {
        match code {
            "metric" => Some(System::Metric),
            "us" => Some(System::Us),
            _ => None,
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            System::Metric => "metric",
            System::Us => "us",
        }
    }
}

impl Unit {
    pub fn dimension(self) -> Dimension {
        match self {
            Unit::Gram | Unit::Kilogram | Unit::Ounce | Unit::Pound => Dimension::Mass,
            _ => Dimension::Volume,
        }
    }

    /// Grams or millilitres in one of this unit, as written by a converted quantity. Spoons are the
    /// 15 ml and 5 ml measuring spoons (the US ones differ by 1.4 %, less than any cook measures);
    /// a cup is the US legal cup of 240 ml.
    pub fn base(self) -> f64 {
        match self {
            Unit::Gram | Unit::Millilitre => 1.0,
            Unit::Kilogram | Unit::Litre => 1000.0,
            Unit::Ounce => 28.349_523_125,
            Unit::Pound => 453.592_37,
            Unit::FluidOunce => 29.573_529_562_5,
            Unit::Cup => 240.0,
            Unit::Tablespoon => 15.0,
            Unit::Teaspoon => 5.0,
        }
    }

    /// Whether a cook in `system` uses this unit: spoons belong to both.
    pub fn belongs_to(self, system: System) -> bool {
        match self {
            Unit::Tablespoon | Unit::Teaspoon => true,
            Unit::Gram | Unit::Kilogram | Unit::Millilitre | Unit::Litre => system == System::Metric,
            Unit::Ounce | Unit::Pound | Unit::FluidOunce | Unit::Cup => system == System::Us,
        }
    }

    /// Whether a quantity of this unit is written with decimals (`1.25 kg`) rather than fractions.
    pub fn is_decimal(self) -> bool {
        matches!(self, Unit::Gram | Unit::Kilogram | Unit::Millilitre | Unit::Litre)
    }

    /// The word for this unit in `lang`, singular or plural.
    pub fn word(self, lang: Lang, plural: bool) -> &'static str {
        let (one, many) = self.words(lang);
        if plural { many } else { one }
    }

    fn words(self, lang: Lang) -> (&'static str, &'static str) {
        match (lang, self) {
            (Lang::En, Unit::Gram) => ("g", "g"),
            (Lang::En, Unit::Kilogram) => ("kg", "kg"),
            (Lang::En, Unit::Millilitre) => ("ml", "ml"),
            (Lang::En, Unit::Litre) => ("l", "l"),
            (Lang::En, Unit::Ounce) => ("oz", "oz"),
            (Lang::En, Unit::Pound) => ("lb", "lb"),
            (Lang::En, Unit::FluidOunce) => ("fl oz", "fl oz"),
            (Lang::En, Unit::Cup) => ("cup", "cups"),
            (Lang::En, Unit::Tablespoon) => ("tbsp", "tbsp"),
            (Lang::En, Unit::Teaspoon) => ("tsp", "tsp"),
            (Lang::He, Unit::Gram) => ("גרם", "גרם"),
            (Lang::He, Unit::Kilogram) => ("ק״ג", "ק״ג"),
            (Lang::He, Unit::Millilitre) => ("מ״ל", "מ״ל"),
            (Lang::He, Unit::Litre) => ("ליטר", "ליטר"),
            (Lang::He, Unit::Ounce) => ("אונקיה", "אונקיות"),
            (Lang::He, Unit::Pound) => ("ליברה", "ליברות"),
            (Lang::He, Unit::FluidOunce) => ("אונקיית נוזל", "אונקיות נוזל"),
            (Lang::He, Unit::Cup) => ("כוס", "כוסות"),
            (Lang::He, Unit::Tablespoon) => ("כף", "כפות"),
            (Lang::He, Unit::Teaspoon) => ("כפית", "כפיות"),
            (Lang::Pt, Unit::Gram) => ("g", "g"),
            (Lang::Pt, Unit::Kilogram) => ("kg", "kg"),
            (Lang::Pt, Unit::Millilitre) => ("ml", "ml"),
            (Lang::Pt, Unit::Litre) => ("l", "l"),
            (Lang::Pt, Unit::Ounce) => ("onça", "onças"),
            (Lang::Pt, Unit::Pound) => ("libra", "libras"),
            (Lang::Pt, Unit::FluidOunce) => ("onça líquida", "onças líquidas"),
            (Lang::Pt, Unit::Cup) => ("chávena", "chávenas"),
            (Lang::Pt, Unit::Tablespoon) => ("colher de sopa", "colheres de sopa"),
            (Lang::Pt, Unit::Teaspoon) => ("colher de chá", "colheres de chá"),
        }
    }
}

/// A unit word a recipe used, recognised: its unit, and how many grams or millilitres one of it holds
/// as that recipe meant it (a Portuguese `chávena` is 250 ml, a US `cup` 240 ml).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    pub unit: Unit,
    pub base: f64,
}

/// Unit words, folded with [`key`]: the unit and, where the word means a different amount from the
/// unit's own, that amount.
const MEASURES: &[(&str, Unit, Option<f64>)] = &[
    // English.
    ("g", Unit::Gram, None),
    ("gr", Unit::Gram, None),
    ("gram", Unit::Gram, None),
    ("grams", Unit::Gram, None),
    ("gramme", Unit::Gram, None),
    ("grammes", Unit::Gram, None),
    ("kg", Unit::Kilogram, None),
    ("kilo", Unit::Kilogram, None),
    ("kilos", Unit::Kilogram, None),
    ("kilogram", Unit::Kilogram, None),
    ("kilograms", Unit::Kilogram, None),
    ("ml", Unit::Millilitre, None),
    ("millilitre", Unit::Millilitre, None),
    ("millilitres", Unit::Millilitre, None),
    ("milliliter", Unit::Millilitre, None),
    ("milliliters", Unit::Millilitre, None),
    ("cl", Unit::Millilitre, Some(10.0)),
    ("dl", Unit::Millilitre, Some(100.0)),
    ("l", Unit::Litre, None),
    ("litre", Unit::Litre, None),
    ("litres", Unit::Litre, None),
    ("liter", Unit::Litre, None),
    ("liters", Unit::Litre, None),
    ("oz", Unit::Ounce, None),
    ("ounce", Unit::Ounce, None),
    ("ounces", Unit::Ounce, None),
    ("lb", Unit::Pound, None),
    ("lbs", Unit::Pound, None),
    ("pound", Unit::Pound, None),
    ("pounds", Unit::Pound, None),
    ("fl oz", Unit::FluidOunce, None),
    ("floz", Unit::FluidOunce, None),
    ("fluid ounce", Unit::FluidOunce, None),
    ("fluid ounces", Unit::FluidOunce, None),
    ("cup", Unit::Cup, None),
    ("cups", Unit::Cup, None),
    ("tbsp", Unit::Tablespoon, None),
    ("tbs", Unit::Tablespoon, None),
    ("tablespoon", Unit::Tablespoon, None),
    ("tablespoons", Unit::Tablespoon, None),
    ("tsp", Unit::Teaspoon, None),
    ("teaspoon", Unit::Teaspoon, None),
    ("teaspoons", Unit::Teaspoon, None),
    // Hebrew (gershayim and geresh fold away: מ״ל is מל, ק״ג is קג).
    ("גרם", Unit::Gram, None),
    ("גר", Unit::Gram, None),
    ("קג", Unit::Kilogram, None),
    ("קילו", Unit::Kilogram, None),
    ("קילוגרם", Unit::Kilogram, None),
    ("מל", Unit::Millilitre, None),
    ("מיליליטר", Unit::Millilitre, None),
    ("ליטר", Unit::Litre, None),
    ("ל", Unit::Litre, None),
    ("אונקיה", Unit::Ounce, None),
    ("אונקיות", Unit::Ounce, None),
    ("ליברה", Unit::Pound, None),
    ("ליברות", Unit::Pound, None),
    ("אונקיית נוזל", Unit::FluidOunce, None),
    ("אונקיות נוזל", Unit::FluidOunce, None),
    ("כוס", Unit::Cup, None),
    ("כוסות", Unit::Cup, None),
    ("כף", Unit::Tablespoon, None),
    ("כפות", Unit::Tablespoon, None),
    ("כפית", Unit::Teaspoon, None),
    ("כפיות", Unit::Teaspoon, None),
    // Portuguese (accents fold away: chávena is chavena).
    ("grama", Unit::Gram, None),
    ("gramas", Unit::Gram, None),
    ("quilo", Unit::Kilogram, None),
    ("quilos", Unit::Kilogram, None),
    ("quilograma", Unit::Kilogram, None),
    ("quilogramas", Unit::Kilogram, None),
    ("mililitro", Unit::Millilitre, None),
    ("mililitros", Unit::Millilitre, None),
    ("litro", Unit::Litre, None),
    ("litros", Unit::Litre, None),
    ("onca", Unit::Ounce, None),
    ("oncas", Unit::Ounce, None),
    ("libra", Unit::Pound, None),
    ("libras", Unit::Pound, None),
    ("onca liquida", Unit::FluidOunce, None),
    ("oncas liquidas", Unit::FluidOunce, None),
    ("chavena", Unit::Cup, Some(250.0)),
    ("chavenas", Unit::Cup, Some(250.0)),
    ("chavena de cha", Unit::Cup, Some(250.0)),
    ("chavenas de cha", Unit::Cup, Some(250.0)),
    ("xicara", Unit::Cup, None),
    ("xicaras", Unit::Cup, None),
    ("colher de sopa", Unit::Tablespoon, None),
    ("colheres de sopa", Unit::Tablespoon, None),
    ("c de sopa", Unit::Tablespoon, None),
    ("colher de cha", Unit::Teaspoon, None),
    ("colheres de cha", Unit::Teaspoon, None),
    ("c de cha", Unit::Teaspoon, None),
];

/// Words for counted things and loose amounts, as singular and plural pairs per language: never
/// converted, but kept in agreement with their number.
const COUNTED: &[(&str, &str)] = &[
    ("clove", "cloves"),
    ("sprig", "sprigs"),
    ("stick", "sticks"),
    ("tin", "tins"),
    ("can", "cans"),
    ("slice", "slices"),
    ("handful", "handfuls"),
    ("large handful", "large handfuls"),
    ("pinch", "pinches"),
    ("bunch", "bunches"),
    ("small bunch", "small bunches"),
    ("large bunch", "large bunches"),
    ("dente", "dentes"),
    ("raminho", "raminhos"),
    ("talo", "talos"),
    ("lata", "latas"),
    ("fatia", "fatias"),
    ("pitada", "pitadas"),
    ("mão-cheia", "mãos-cheias"),
    ("mão-cheia grande", "mãos-cheias grandes"),
    ("molho pequeno", "molhos pequenos"),
    ("שן", "שיני"),
    ("גבעול", "גבעולים"),
    ("חופן", "חופנים"),
    ("חופן גדול", "חופנים גדולים"),
    ("צרור", "צרורות"),
    ("צרור גדול", "צרורות גדולים"),
    ("קורט", "קורטים"),
];

/// A unit word folded for lookup: case, accents, geresh and gershayim, quotes and full stops gone,
/// spaces single.
fn key(word: &str) -> String {
    let folded = text::fold(word).replace(['"', '.'], " ");
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The measure a unit word names, if it is one we know.
pub fn recognise(word: &str) -> Option<Measure> {
    let key = key(word);
    MEASURES
        .iter()
        .find(|(known, _, _)| *known == key)
        .map(|(_, unit, base)| Measure { unit: *unit, base: base.unwrap_or(unit.base()) })
}

/// [`COUNTED`] folded with [`key`], once: scaling looks a word up for every line it scales.
fn counted_keys() -> &'static [(String, String, usize)] {
    static KEYS: std::sync::OnceLock<Vec<(String, String, usize)>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        COUNTED.iter().enumerate().map(|(idx, (one, many))| (key(one), key(many), idx)).collect()
    })
}

/// The [`COUNTED`] pair a folded word belongs to.
fn counted_pair(key: &str) -> Option<(&'static str, &'static str)> {
    counted_keys().iter().find(|(one, many, _)| key == one || key == many).map(|(_, _, idx)| COUNTED[*idx])
}

/// Whether a word names a counted thing or a loose amount we know (`clove`, `pitadas`, `חופן`).
pub fn is_counted(word: &str) -> bool {
    counted_pair(&key(word)).is_some()
}

/// The form of a unit word that agrees with a quantity: `cup` → `cups` for 2, `colheres de chá` →
/// `colher de chá` for 1, `שיני` → `שן` for 1. A word with no known pair, or whose recipe wrote an
/// abbreviation, comes back as it was.
pub fn agree(word: &str, lang: Lang, plural: bool) -> String {
    let key = key(word);
    if let Some(measure) = MEASURES.iter().find(|(known, _, _)| *known == key).map(|(_, unit, _)| *unit) {
        let (one, many) = measure.words(lang);
        if key == self::key(one) || key == self::key(many) {
            return measure.word(lang, plural).to_string();
        }
        return word.to_string();
    }
    match counted_pair(&key) {
        Some((one, many)) => if plural { many } else { one }.to_string(),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn unit_words_of_three_languages_are_recognised() {
        let words = [
            "g",
            "Grams",
            "kg",
            "ml",
            "L",
            "cups",
            "tbsp",
            "Tablespoons",
            "tsp",
            "fl. oz",
            "oz",
            "lbs",
            "dl",
            "כוס",
            "כוסות",
            "כף",
            "כפות",
            "כפית",
            "כפיות",
            "מ״ל",
            "מ\"ל",
            "ק״ג",
            "גרם",
            "ליטר",
            "chávena",
            "chávenas",
            "colher de sopa",
            "Colheres de Sopa",
            "colher de chá",
            "colheres de chá",
            "c. de chá",
            "litros",
            "quilo",
            "handful",
            "dentes",
            "קורט",
        ];
        let table: String = words
            .iter()
            .map(|word| match recognise(word) {
                Some(m) => format!("{word}: {:?} {} \n", m.unit, m.base),
                None => format!("{word}: not a measure\n"),
            })
            .collect();
        expect![[r#"
            g: Gram 1 
            Grams: Gram 1 
            kg: Kilogram 1000 
            ml: Millilitre 1 
            L: Litre 1000 
            cups: Cup 240 
            tbsp: Tablespoon 15 
            Tablespoons: Tablespoon 15 
            tsp: Teaspoon 5 
            fl. oz: FluidOunce 29.5735295625 
            oz: Ounce 28.349523125 
            lbs: Pound 453.59237 
            dl: Millilitre 100 
            כוס: Cup 240 
            כוסות: Cup 240 
            כף: Tablespoon 15 
            כפות: Tablespoon 15 
            כפית: Teaspoon 5 
            כפיות: Teaspoon 5 
            מ״ל: Millilitre 1 
            מ"ל: not a measure
            ק״ג: Kilogram 1000 
            גרם: Gram 1 
            ליטר: Litre 1000 
            chávena: Cup 250 
            chávenas: Cup 250 
            colher de sopa: Tablespoon 15 
            Colheres de Sopa: Tablespoon 15 
            colher de chá: Teaspoon 5 
            colheres de chá: Teaspoon 5 
            c. de chá: Teaspoon 5 
            litros: Litre 1000 
            quilo: Kilogram 1000 
            handful: not a measure
            dentes: not a measure
            קורט: not a measure
        "#]]
        .assert_eq(&table);
    }

    #[test]
    fn unit_words_agree_with_their_number() {
        let cases = [
            ("cups", Lang::En, false),
            ("cup", Lang::En, true),
            ("colheres de chá", Lang::Pt, false),
            ("colher de sopa", Lang::Pt, true),
            ("כפית", Lang::He, true),
            ("כוסות", Lang::He, false),
            ("cloves", Lang::En, false),
            ("שיני", Lang::He, false),
            ("mão-cheia", Lang::Pt, true),
            ("chávena", Lang::Pt, true),
            ("Tablespoons", Lang::En, false),
            ("large sprigs", Lang::En, false),
        ];
        let table: String = cases
            .iter()
            .map(|(word, lang, plural)| {
                format!(
                    "{word} ({}) → {}\n",
                    if *plural { "many" } else { "one" },
                    agree(word, *lang, *plural)
                )
            })
            .collect();
        expect![[r#"
            cups (one) → cup
            cup (many) → cups
            colheres de chá (one) → colher de chá
            colher de sopa (many) → colheres de sopa
            כפית (many) → כפיות
            כוסות (one) → כוס
            cloves (one) → clove
            שיני (one) → שן
            mão-cheia (many) → mãos-cheias
            chávena (many) → chávenas
            Tablespoons (one) → Tablespoons
            large sprigs (one) → large sprigs
        "#]]
        .assert_eq(&table);
    }
}
