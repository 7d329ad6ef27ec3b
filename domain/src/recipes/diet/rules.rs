//! What the rules find in a recipe's ingredients: each finding with its word, the five flags they
//! allow, whether a recipe already is a diet's, and the diagnostics of one that is not.

use super::lexicon::{DAIRY, GLUTEN, GLUTEN_FREE, MEAT, NUTS, OTHER_ANIMAL, PLANT, find, tokens};
use crate::Diagnostic;
use crate::recipes::recipe::DietKind;
use crate::recipes::recipe::{Ingredient, Lang, Recipe};

/// Which rule an ingredient breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Gluten,
    /// A `check` ingredient (one that can hide gluten) not stated to be gluten-free.
    HiddenGluten,
    Meat,
    Dairy,
    /// Eggs, honey and other animal products that are not meat or dairy.
    OtherAnimal,
    Nut,
}

/// What the rules find in one ingredient, each finding with the word that triggered it.
pub fn ingredient_findings(lang: Lang, ingredient: &Ingredient) -> Vec<(Rule, &'static str)> {
    let tokens = tokens(&ingredient.i);
    let mut found = Vec::new();
    let gluten_free = find(lang, &tokens, &GLUTEN_FREE).is_some();
    if !gluten_free {
        if let Some(word) = find(lang, &tokens, &GLUTEN) {
            found.push((Rule::Gluten, word));
        } else if ingredient.check {
            found.push((Rule::HiddenGluten, "check"));
        }
    }
    let plant = find(lang, &tokens, &PLANT).is_some();
    if !plant {
        for (rule, lexicon) in
            [(Rule::Meat, &MEAT), (Rule::Dairy, &DAIRY), (Rule::OtherAnimal, &OTHER_ANIMAL)]
        {
            if let Some(word) = find(lang, &tokens, lexicon) {
                found.push((rule, word));
            }
        }
    } else if let Some(word) = find(lang, &tokens, &MEAT) {
        // "vegetable" does not make "chicken" harmless; only milk-like and egg-like words are replaced.
        found.push((Rule::Meat, word));
    }
    if let Some(word) = find(lang, &tokens, &NUTS) {
        found.push((Rule::Nut, word));
    }
    found
}

/// The flags the rules allow, ingredient by ingredient over every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleFlags {
    pub gf: bool,
    pub vegan: bool,
    pub vegetarian: bool,
    pub dairy_free: bool,
    pub nut_free: bool,
}

pub fn rule_flags(recipe: &Recipe) -> RuleFlags {
    let mut flags = RuleFlags { gf: true, vegan: true, vegetarian: true, dairy_free: true, nut_free: true };
    for (lang, text) in &recipe.texts {
        for ingredient in &text.ingredients {
            for (rule, _) in ingredient_findings(*lang, ingredient) {
                match rule {
                    Rule::Gluten | Rule::HiddenGluten => flags.gf = false,
                    Rule::Meat => {
                        flags.vegetarian = false;
                        flags.vegan = false;
                    }
                    Rule::Dairy => {
                        flags.dairy_free = false;
                        flags.vegan = false;
                    }
                    Rule::OtherAnimal => flags.vegan = false,
                    Rule::Nut => flags.nut_free = false,
                }
            }
        }
    }
    flags
}

/// Whether `recipe` already is a `kind` recipe: flagged so, and the rules agree.
pub fn satisfies(recipe: &Recipe, kind: DietKind) -> bool {
    let rules = rule_flags(recipe);
    (!kind.needs_gf() || (recipe.gf == 1 && rules.gf))
        && (!kind.needs_vegan() || (recipe.vegan == 1 && rules.vegan))
}

/// Every ingredient that keeps `recipe` from being a `kind` recipe, each naming its field and word.
pub fn check(recipe: &Recipe, kind: DietKind) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (lang, text) in &recipe.texts {
        for (idx, ingredient) in text.ingredients.iter().enumerate() {
            let field = format!("texts.{}.ingredients[{idx}].i", lang.code());
            for (rule, word) in ingredient_findings(*lang, ingredient) {
                let reason = match rule {
                    Rule::Gluten if kind.needs_gf() => format!("`{}` contains gluten ({word})", ingredient.i),
                    Rule::HiddenGluten if kind.needs_gf() => {
                        format!("`{}` can hide gluten: name a gluten-free one", ingredient.i)
                    }
                    Rule::Meat | Rule::Dairy | Rule::OtherAnimal if kind.needs_vegan() => {
                        format!("`{}` is not vegan ({word})", ingredient.i)
                    }
                    _ => continue,
                };
                problems.push(Diagnostic::new(field.clone(), reason));
            }
        }
    }
    problems
}

/// Sets the five flags truthfully: a flag the rules refuse is cleared, the flags of the version's
/// kind are set (the caller has checked them with [`check`]), and vegan implies vegetarian and
/// dairy-free. A flag the model cleared stays cleared: the rules can prove a recipe is not gluten-free,
/// never that it is, beyond the words they know.
pub fn set_flags(recipe: &mut Recipe, kind: Option<DietKind>) {
    let rules = rule_flags(recipe);
    let keep = |claimed: u8, allowed: bool| u8::from(claimed == 1 && allowed);
    recipe.gf = keep(recipe.gf, rules.gf);
    recipe.vegan = keep(recipe.vegan, rules.vegan);
    recipe.vegetarian = keep(recipe.vegetarian, rules.vegetarian);
    recipe.dairy_free = keep(recipe.dairy_free, rules.dairy_free);
    recipe.nut_free = keep(recipe.nut_free, rules.nut_free);
    if let Some(kind) = kind {
        if kind.needs_gf() && rules.gf {
            recipe.gf = 1;
        }
        if kind.needs_vegan() && rules.vegan {
            recipe.vegan = 1;
        }
    }
    if recipe.vegan == 1 {
        recipe.vegetarian = 1;
        recipe.dairy_free = 1;
    }
}
