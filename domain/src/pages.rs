//! The site's HTML pages: one template environment (minijinja) with every page's template compiled
//! in (`domain/templates/`), and the pages' `Content-Security-Policy`. Rendering is pure. The recipe
//! pages are rendered by `recipes::page`, the quote service's by `quotes::page`; both are methods of
//! [`Renderer`]. A caller's own templates join the same environment ([`Renderer::with_templates`]:
//! the Worker's kitchen). Behind the `pages` feature, so only the builder and the Worker pay for
//! minijinja.

use minijinja::Environment;

pub type Result<T> = std::result::Result<T, minijinja::Error>;

#[derive(Debug)]
pub struct Renderer {
    pub(crate) env: Environment<'static>,
}

/// Each name with its template's source, compiled in from `domain/templates/`, so a template's file
/// is named once.
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../templates/", $name)))),*]
    };
}

/// The templates, by name.
pub(crate) const TEMPLATES: [(&str, &str); 12] = templates![
    "base.html",
    "recipe.html",
    "cook.html",
    "home.html",
    "problem.html",
    "player.html",
    "quotes.html",
    "episode.html",
    "compare.html",
    "show.html",
    "search.html",
    "review.html",
];

/// The templates whose pages run inline scripts: the home page's search, the recipe's cook mode, the
/// quote pages' player.
const SCRIPTED_TEMPLATES: [&str; 3] = [
    include_str!("../templates/home.html"),
    include_str!("../templates/cook.html"),
    include_str!("../templates/player.html"),
];

impl Renderer {
    pub fn new() -> Result<Renderer> {
        let mut env = Environment::new();
        for (name, source) in TEMPLATES {
            env.add_template(name, source)?;
        }
        Ok(Renderer { env })
    }

    /// The site's templates and `extra` ones (name and source) that only the caller renders, with
    /// [`Renderer::render`].
    pub fn with_templates(extra: &[(&'static str, &'static str)]) -> Result<Renderer> {
        let mut renderer = Renderer::new()?;
        for (name, source) in extra {
            renderer.env.add_template(name, source)?;
        }
        Ok(renderer)
    }

    /// The template `name` rendered with `ctx`: a caller's own template ([`Renderer::with_templates`]).
    pub fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String> {
        self.env.get_template(name)?.render(ctx)
    }
}

/// The `Content-Security-Policy` of the site's pages, built or rendered by the Worker: what they
/// load and nothing else. Their scripts are the templates' inline `<script>` blocks, admitted by
/// hash (the templates put no value inside them, so the rendered text is the template's);
/// `<script type=…>` data blocks are not run. Styles are inline, `fetch` asks this site only, forms
/// post to it, and nothing may frame a page or change its base. A player may play an episode's
/// audio from its host (`media-src https:`) once a person presses play. No other origin appears.
pub fn content_security_policy() -> String {
    use sha2::{Digest, Sha256};
    let hashes: Vec<String> = SCRIPTED_TEMPLATES
        .iter()
        .flat_map(|template| template.split("<script>").skip(1))
        .filter_map(|rest| rest.split_once("</script>").map(|(script, _)| script))
        .map(|script| {
            format!("'sha256-{}'", data_encoding::BASE64.encode(&Sha256::digest(script.as_bytes())))
        })
        .collect();
    format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; img-src 'self' data:; \
         media-src https:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        hashes.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_template_renders_as_it_would_alone() {
        let (name, source) = ("extra.html", "<p title=\"{{ x }}\">{{ x }}</p>{% if not y %}!{% endif %}\n");
        let ctx = minijinja::context! { x => "<a href='/x'>&</a>" };
        let mut alone = minijinja::Environment::new();
        alone.add_template(name, source).unwrap();
        let expected = alone.get_template(name).unwrap().render(&ctx).unwrap();
        let shared = Renderer::with_templates(&[(name, source)]).unwrap().render(name, ctx).unwrap();
        assert_eq!(shared, expected);
        assert!(shared.contains("&lt;a") && shared.ends_with("!"), "{shared}");
    }

    #[test]
    fn the_page_policy_admits_each_inline_script_by_hash_and_no_other_origin() {
        let policy = content_security_policy();
        assert_eq!(policy.matches("'sha256-").count(), 3, "{policy}");
        assert!(!policy.contains("script-src 'unsafe-inline'") && !policy.contains("http:"), "{policy}");
    }
}
