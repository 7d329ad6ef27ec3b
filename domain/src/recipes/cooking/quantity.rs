//! Quantities as cooks write and measure them: fractions for cups, spoons and counted things
//! (`1½`, `⅓`, `¾`), round numbers for grams and millilitres (`240 g`, never `237.5 g`), decimals for
//! kilograms and litres (`1.25 kg`), and whole eggs.
//!
//! Rounding is coarser as quantities grow, as a cook's measures are: half grams under 10 g, grams
//! under 100 g, 5 g under 500 g, 10 g under a kilogram; the nearest of ⅛ (spoons only), ¼, ⅓, ½, ⅔
//! and ¾ for fractions, halves from 10 and whole numbers from 20.

use super::units::{self, Unit};

/// The fractions a cook measures with, and how they are written.
const FRACTIONS: [(f64, &str); 6] =
    [(0.125, "⅛"), (0.25, "¼"), (1.0 / 3.0, "⅓"), (0.5, "½"), (2.0 / 3.0, "⅔"), (0.75, "¾")];

/// How a quantity is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Grams or millilitres.
    Small,
    /// Kilograms or litres.
    Large,
    /// Cups, ounces and counted things: the nearest of ¼, ⅓, ½, ⅔, ¾.
    Fraction,
    /// Spoons: ⅛ too.
    SpoonFraction,
    /// Things that only come whole (eggs): the nearest whole number, at least one.
    Whole,
}

impl Rounding {
    /// How a quantity of a unit word is rounded; `None` is a counted thing.
    pub fn for_unit(unit: Option<&str>) -> Rounding {
        match unit.and_then(units::recognise).map(|m| m.unit) {
            Some(Unit::Gram | Unit::Millilitre) => Rounding::Small,
            Some(Unit::Kilogram | Unit::Litre) => Rounding::Large,
            Some(Unit::Tablespoon | Unit::Teaspoon) => Rounding::SpoonFraction,
            _ => Rounding::Fraction,
        }
    }

    /// `q` as a cook would measure it.
    pub fn apply(self, q: f64) -> f64 {
        match self {
            Rounding::Small => {
                let step = match q {
                    q if q < 10.0 => 0.5,
                    q if q < 100.0 => 1.0,
                    q if q < 500.0 => 5.0,
                    _ => 10.0,
                };
                ((q / step).round() * step).max(step)
            }
            Rounding::Large => {
                let step = if q < 10.0 { 0.05 } else { 0.1 };
                two_places(((q / step).round() * step).max(step))
            }
            Rounding::Fraction => fraction(q, false),
            Rounding::SpoonFraction => fraction(q, true),
            Rounding::Whole => q.round().max(1.0),
        }
    }
}

fn two_places(q: f64) -> f64 {
    (q * 100.0).round() / 100.0
}

/// The nearest whole number plus one of the cook's fractions, kept to two decimals (`⅓` is 0.33, which
/// [`shown`] writes as `⅓` again). Halves from 10, whole numbers from 20; never zero.
fn fraction(q: f64, eighths: bool) -> f64 {
    if q >= 20.0 {
        return q.round();
    }
    if q >= 10.0 {
        return (q * 2.0).round() / 2.0;
    }
    let whole = q.trunc();
    let smallest = if eighths { 0.125 } else { 0.25 };
    let candidates = [0.0, 1.0]
        .into_iter()
        .chain(FRACTIONS.iter().map(|(value, _)| *value).filter(|value| *value >= smallest));
    let best = candidates
        .map(|part| whole + part)
        .filter(|value| *value > 0.0)
        .min_by(|a, b| (a - q).abs().total_cmp(&(b - q).abs()))
        .unwrap_or(smallest);
    two_places(best)
}

/// A quantity and its unit word as a cook writes them: `2 tbsp`, `1½ cups`, `¼`, `1.25 kg`, `240 g`.
pub fn shown(q: f64, unit: Option<&str>) -> String {
    let decimal = unit.and_then(units::recognise).is_some_and(|m| m.unit.is_decimal());
    let number = if decimal { decimal_number(q) } else { fraction_number(q) };
    match unit {
        Some(unit) => format!("{number} {unit}"),
        None => number,
    }
}

fn decimal_number(q: f64) -> String {
    format!("{}", two_places(q))
}

fn fraction_number(q: f64) -> String {
    let whole = q.trunc();
    let part = q - whole;
    if part.abs() < 0.01 {
        return format!("{whole}");
    }
    if part > 0.99 {
        return format!("{}", whole + 1.0);
    }
    match FRACTIONS.iter().find(|(value, _)| (part - value).abs() < 0.01) {
        Some((_, glyph)) if whole == 0.0 => glyph.to_string(),
        Some((_, glyph)) => format!("{whole}{glyph}"),
        None => decimal_number(q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn quantities_are_rounded_as_cooks_measure() {
        let cases: [(f64, Option<&str>); 18] = [
            (237.5, Some("g")),
            (208.333, Some("g")),
            (3.5, Some("g")),
            (0.2, Some("g")),
            (62.5, Some("ml")),
            (666.7, Some("ml")),
            (1.2345, Some("kg")),
            (0.3, Some("l")),
            (0.3, Some("cups")),
            (0.7, Some("cup")),
            (1.45, Some("cups")),
            (0.1, Some("tsp")),
            (0.05, Some("tsp")),
            (0.625, Some("tbsp")),
            (13.3, Some("handful")),
            (2.5, None),
            (0.1, None),
            (33.3, None),
        ];
        let table: String = cases
            .iter()
            .map(|(q, unit)| {
                let rounded = Rounding::for_unit(*unit).apply(*q);
                format!("{q} {} → {} ({rounded})\n", unit.unwrap_or("·"), shown(rounded, *unit))
            })
            .collect();
        expect![[r#"
            237.5 g → 240 g (240)
            208.333 g → 210 g (210)
            3.5 g → 3.5 g (3.5)
            0.2 g → 0.5 g (0.5)
            62.5 ml → 63 ml (63)
            666.7 ml → 670 ml (670)
            1.2345 kg → 1.25 kg (1.25)
            0.3 l → 0.3 l (0.3)
            0.3 cups → ⅓ cups (0.33)
            0.7 cup → ⅔ cup (0.67)
            1.45 cups → 1½ cups (1.5)
            0.1 tsp → ⅛ tsp (0.13)
            0.05 tsp → ⅛ tsp (0.13)
            0.625 tbsp → ⅔ tbsp (0.67)
            13.3 handful → 13½ handful (13.5)
            2.5 · → 2½ (2.5)
            0.1 · → ¼ (0.25)
            33.3 · → 33 (33)
        "#]]
        .assert_eq(&table);
    }

    #[test]
    fn whole_things_stay_whole() {
        let rounded: Vec<f64> = [2.5, 0.4, 1.49, 3.0].iter().map(|q| Rounding::Whole.apply(*q)).collect();
        assert_eq!(rounded, [3.0, 1.0, 1.0, 3.0]);
    }
}
