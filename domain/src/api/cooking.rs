//! The inputs of a recipe read the way a cook asks for it: scaled to the table, in the
//! cook's units, or as Cooklang. `crate::recipes::cooking` does the work; these say what may be asked.

use super::declare::input;
use super::required;
use crate::Diagnostic;
use crate::recipes::cooking::Request;
use crate::recipes::cooking::units::System;
use crate::recipes::recipe::{Lang, MAX_SERVINGS};

input! {
    /// `GET /r/{slug}.json`, the page `GET /r/{slug}` and the `get_recipe` tool: one recipe, scaled and
    /// converted when asked.
    pub struct RecipeView {
        /// The recipe's slug, as in `/r/{slug}.json` (from search_recipes).
        slug: String { required },
        /// Scale every quantity to this many servings; the answer names `scaled_from`.
        servings: u32 { range(min = 1, max = MAX_SERVINGS) },
        /// Convert weights and volumes to these units; the answer lists the lines `converted`.
        units: System,
    }
    /// A checked recipe read: the recipe and how to scale and convert it.
    => pub struct RecipeAsked {
        pub slug: String,
        pub request: Request,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let request = request(input.servings, input.units, problems);
        Some(RecipeAsked { slug: slug?, request })
    }
}

input! {
    /// `GET /r/{slug}.cook`: one language of a recipe as Cooklang, scaled and converted as [`RecipeView`].
    pub struct RecipeCooklang {
        /// The recipe's slug.
        slug: String { required },
        /// The language to write (default: English, else the recipe's first language).
        lang: Lang,
        /// Scale every quantity to this many servings.
        servings: u32 { range(min = 1, max = MAX_SERVINGS) },
        /// Convert weights and volumes to these units.
        units: System,
    }
    /// A checked Cooklang read: the recipe, the language to write (its default one when `None`), and
    /// how to scale and convert it.
    => pub struct CooklangAsked {
        pub slug: String,
        pub lang: Option<Lang>,
        pub request: Request,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let request = request(input.servings, input.units, problems);
        Some(CooklangAsked { slug: slug?, lang: input.lang, request })
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
