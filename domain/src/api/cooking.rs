//! The inputs of a recipe read the way a cook asks for it: scaled to the table, in the
//! cook's units, or as Cooklang. `crate::recipes::cooking` does the work; these say what may be asked.

use serde::Deserialize;

use super::{Input, done, required};
use crate::Diagnostic;
use crate::recipes::cooking::Request;
use crate::recipes::cooking::units::System;
use crate::recipes::recipe::{Lang, MAX_SERVINGS};

/// `GET /r/{slug}.json`, the page `GET /r/{slug}` and the `get_recipe` tool: one recipe, scaled and
/// converted when asked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipeView {
    /// The recipe's slug, as in `/r/{slug}.json` (from search_recipes).
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// Scale every quantity to this many servings; the answer names `scaled_from`.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_SERVINGS)))]
    pub servings: Option<u32>,
    /// Convert weights and volumes to these units; the answer lists the lines `converted`.
    pub units: Option<System>,
}

/// A checked recipe read: the recipe and how to scale and convert it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeAsked {
    pub slug: String,
    pub request: Request,
}

impl Input for RecipeView {
    type Valid = RecipeAsked;

    fn validate(self) -> Result<Self::Valid, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let request = request(self.servings, self.units, &mut problems);
        done(RecipeAsked { slug: slug.unwrap_or_default(), request }, problems)
    }
}

/// `GET /r/{slug}.cook`: one language of a recipe as Cooklang, scaled and converted as [`RecipeView`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipeCooklang {
    /// The recipe's slug.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// The language to write (default: English, else the recipe's first language).
    pub lang: Option<Lang>,
    /// Scale every quantity to this many servings.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_SERVINGS)))]
    pub servings: Option<u32>,
    /// Convert weights and volumes to these units.
    pub units: Option<System>,
}

/// A checked Cooklang read: the recipe, the language to write (its default one when `None`), and
/// how to scale and convert it.
#[derive(Debug, Clone, PartialEq)]
pub struct CooklangAsked {
    pub slug: String,
    pub lang: Option<Lang>,
    pub request: Request,
}

impl Input for RecipeCooklang {
    type Valid = CooklangAsked;

    fn validate(self) -> Result<Self::Valid, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let request = request(self.servings, self.units, &mut problems);
        done(CooklangAsked { slug: slug.unwrap_or_default(), lang: self.lang, request }, problems)
    }
}

/// What a cook asked for, or the problem with `servings` (1 to [`MAX_SERVINGS`]).
fn request(servings: Option<u32>, units: Option<System>, problems: &mut Vec<Diagnostic>) -> Request {
    let servings = servings.filter(|n| {
        let fine = (1..=MAX_SERVINGS).contains(n);
        if !fine {
            problems.push(Diagnostic::new(
                "servings",
                format!("must be a whole number from 1 to {MAX_SERVINGS}"),
            ));
        }
        fine
    });
    Request { servings, units }
}
