//! Diet versions (gluten-free, vegan, both): which kind is asked for, the substitution table that
//! guides the AI's rewrite, and the rules that check the result.
//!
//! The rules read ingredient names only, word by word after folding (case, accents, niqqud), against
//! lexicons of gluten and animal products in en, he and pt. An ingredient that names a qualifier
//! ("gluten-free", "sem glúten", "ללא גלוטן"; "oat milk", "leite de coco", "חלב קוקוס") is exempt for
//! that rule. Steps are not read: "serve with bread (gluten-free if needed)" is advice, not an
//! ingredient. The rules are deliberately conservative: a false alarm only means a version is not
//! published, while a missed word would publish a wrong flag. We rejected trusting the model's own
//! flags; they are checked here and set from the rules.
//!
//! `lexicon` holds the word lists and how an ingredient's words are matched against them, `rules`
//! what they find in a recipe (its findings, flags and diagnostics), and `guidance` the substitution
//! table and what the AI is told to replace.

mod guidance;
mod lexicon;
mod rules;

use crate::recipes::recipe::DietKind;

pub use guidance::{Substitution, guidance, substitutions};
pub use rules::{Rule, RuleFlags, check, ingredient_findings, rule_flags, satisfies, set_flags};

/// The slug a diet version of `source_slug` gets (before collision handling).
pub fn variant_slug(source_slug: &str, kind: DietKind) -> String {
    let suffix = kind.slug_suffix();
    let stem = &source_slug[..source_slug.len().min(crate::recipes::slug::MAX_LEN - suffix.len())];
    format!("{}{suffix}", stem.trim_end_matches('-'))
}

#[cfg(test)]
mod tests;
