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

use serde::{Deserialize, Serialize};

pub use guidance::{Substitution, guidance, substitutions};
pub use rules::{Rule, RuleFlags, check, ingredient_findings, rule_flags, satisfies, set_flags};

/// A diet version a key holder can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Gf,
    Vegan,
    Both,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Gf, Kind::Vegan, Kind::Both];

    pub fn code(self) -> &'static str {
        match self {
            Kind::Gf => "gf",
            Kind::Vegan => "vegan",
            Kind::Both => "both",
        }
    }

    pub fn parse(code: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// What the version's slug adds to the source's: `-gf`, `-vegan`, `-gf-vegan`.
    pub fn slug_suffix(self) -> &'static str {
        match self {
            Kind::Gf => "-gf",
            Kind::Vegan => "-vegan",
            Kind::Both => "-gf-vegan",
        }
    }

    pub fn needs_gf(self) -> bool {
        matches!(self, Kind::Gf | Kind::Both)
    }

    pub fn needs_vegan(self) -> bool {
        matches!(self, Kind::Vegan | Kind::Both)
    }

    /// In words, for prompts and notes.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Gf => "gluten-free",
            Kind::Vegan => "vegan",
            Kind::Both => "gluten-free and vegan",
        }
    }
}

/// The slug a diet version of `source_slug` gets (before collision handling).
pub fn variant_slug(source_slug: &str, kind: Kind) -> String {
    let suffix = kind.slug_suffix();
    let stem = &source_slug[..source_slug.len().min(crate::slug::MAX_LEN - suffix.len())];
    format!("{}{suffix}", stem.trim_end_matches('-'))
}

#[cfg(test)]
mod tests;
