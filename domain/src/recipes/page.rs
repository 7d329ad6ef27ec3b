//! HTML pages (minijinja): one per recipe with every language it has, a home page, a 404 page.
//!
//! The Worker renders every recipe page, from the recipe's current document (built, or in the D1
//! overlay); the builder renders the home and 404 pages. Templates are compiled in
//! (`domain/templates/`, `crate::pages`); rendering is pure. Behind the `pages` feature, so only
//! those two pay for minijinja.
//!
//! Each language's section carries its own `lang` and `dir`, so Hebrew reads right to left beside
//! English; numbers sit in `<bdi>` so they keep their order inside Hebrew text. User text that shares
//! a line with other text (ingredient names, steps, the owner, card titles and summaries) sits in a
//! `<bdi>` too, with its language's direction where that is known, so it can never reorder what is
//! around it; titles, summaries and tips are blocks of their own, which the bidi algorithm treats as
//! separate paragraphs. `<title>` and `<meta>` cannot hold markup, so they drop control characters. Each page embeds
//! schema.org `Recipe` JSON-LD, one object per language.

use std::collections::BTreeMap;

use minijinja::context;
use serde::Serialize;
use serde_json::{Value, json};

use crate::recipes::cooking::Adjusted;
use crate::recipes::recipe::{Course, Flag, Lang, Published, Text};
use crate::recipes::search::Card;
use crate::{clean, recipes::card};

pub use crate::pages::{Renderer, Result};

/// The words a page needs, in one language.
#[derive(Serialize)]
struct Labels {
    prep: &'static str,
    cook: &'static str,
    serves: &'static str,
    difficulty: &'static str,
    min: &'static str,
    ingredients: &'static str,
    steps: &'static str,
    tips: &'static str,
    check: &'static str,
}

fn labels(lang: Lang) -> Labels {
    match lang {
        Lang::En => Labels {
            prep: "Prep",
            cook: "Cook",
            serves: "Serves",
            difficulty: "Difficulty",
            min: "min",
            ingredients: "Ingredients",
            steps: "Steps",
            tips: "Tips",
            check: "may contain gluten: check the label",
        },
        Lang::He => Labels {
            prep: "הכנה",
            cook: "בישול",
            serves: "מנות",
            difficulty: "רמת קושי",
            min: "דק׳",
            ingredients: "מצרכים",
            steps: "אופן ההכנה",
            tips: "טיפים",
            check: "עלול להכיל גלוטן: בדקו את התווית",
        },
        Lang::Pt => Labels {
            prep: "Preparação",
            cook: "Cozedura",
            serves: "Doses",
            difficulty: "Dificuldade",
            min: "min",
            ingredients: "Ingredientes",
            steps: "Preparação passo a passo",
            tips: "Dicas",
            check: "pode conter glúten: confirme o rótulo",
        },
    }
}

fn language_name(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "English",
        Lang::He => "עברית",
        Lang::Pt => "Português",
    }
}

/// What a step's flag tells the grown-up, with an icon a child can read too.
fn step_flag(lang: Lang, flag: &str) -> String {
    let (icon, en, he, pt) = match flag {
        "knife" => ("🔪", "knife", "סכין", "faca"),
        "hot" => ("🔥", "hot", "חם", "quente"),
        "oven" => ("♨️", "oven", "תנור", "forno"),
        "blender" => ("🌀", "blender", "בלנדר", "liquidificadora"),
        _ => ("💧", "boiling", "רתיחה", "fervura"),
    };
    match lang {
        Lang::En => format!("{icon} grown-up: {en}"),
        Lang::He => format!("{icon} עם מבוגר: {he}"),
        Lang::Pt => format!("{icon} com um adulto: {pt}"),
    }
}

fn course_label(course: Course) -> &'static str {
    match course {
        Course::Breakfast => "Breakfast",
        Course::Starter => "Starters",
        Course::Soup => "Soups",
        Course::Salad => "Salads",
        Course::Main => "Mains",
        Course::Side => "Sides",
        Course::Dessert => "Desserts",
        Course::Baking => "Baking",
        Course::Snack => "Snacks",
        Course::Drink => "Drinks",
        Course::Sauce => "Sauces",
        Course::Basics => "Basics",
    }
}

/// A quantity as a cook writes it: `2`, `1½`, `1.25 kg` (`domain::recipes::cooking::quantity`).
pub fn amount(q: f64, unit: Option<&str>) -> String {
    crate::recipes::cooking::quantity::shown(q, unit)
}

/// The words of the servings control and cook mode, in one language.
#[derive(Serialize)]
struct CookLabels {
    servings: &'static str,
    units: &'static str,
    as_written: &'static str,
    metric: &'static str,
    us: &'static str,
    update: &'static str,
    original: &'static str,
    cook_mode: &'static str,
    step: &'static str,
    of: &'static str,
    previous: &'static str,
    next: &'static str,
    close: &'static str,
    start_timer: &'static str,
    stop_timer: &'static str,
    times_up: &'static str,
    min: &'static str,
}

fn cook_labels(lang: Lang) -> CookLabels {
    match lang {
        Lang::En => CookLabels {
            servings: "Servings",
            units: "Units",
            as_written: "as written",
            metric: "metric",
            us: "US",
            update: "Update",
            original: "back to the recipe as written",
            cook_mode: "Cook mode",
            step: "Step",
            of: "of",
            previous: "Previous",
            next: "Next",
            close: "Close",
            start_timer: "Start timer",
            stop_timer: "Stop timer",
            times_up: "Time's up!",
            min: "min",
        },
        Lang::He => CookLabels {
            servings: "מנות",
            units: "יחידות",
            as_written: "כפי שנכתב",
            metric: "מטרי",
            us: "אמריקאי",
            update: "עדכון",
            original: "חזרה למתכון המקורי",
            cook_mode: "מצב בישול",
            step: "שלב",
            of: "מתוך",
            previous: "הקודם",
            next: "הבא",
            close: "סגירה",
            start_timer: "הפעלת טיימר",
            stop_timer: "עצירת הטיימר",
            times_up: "הזמן נגמר!",
            min: "דק׳",
        },
        Lang::Pt => CookLabels {
            servings: "Doses",
            units: "Unidades",
            as_written: "como escrito",
            metric: "métricas",
            us: "americanas",
            update: "Atualizar",
            original: "voltar à receita original",
            cook_mode: "Modo cozinha",
            step: "Passo",
            of: "de",
            previous: "Anterior",
            next: "Seguinte",
            close: "Fechar",
            start_timer: "Iniciar temporizador",
            stop_timer: "Parar temporizador",
            times_up: "Acabou o tempo!",
            min: "min",
        },
    }
}

fn minutes(n: u32) -> String {
    format!("PT{n}M")
}

/// The recipe's images as schema.org `ImageObject`s, first the one link previews show: its photo with
/// licence and credit, or else its cards (`domain::recipes::card`: the drawn PNG, or the three SVGs of a
/// recipe the build has not drawn), which credit the emoji art. URLs are
/// absolute (`site` is the page's origin): link previews and crawlers take them as they stand.
pub fn images(published: &Published, site: &str, cards: card::Format) -> Vec<Value> {
    if let Some(photo) = &published.server.photo {
        return vec![json!({
            "@type": "ImageObject",
            "url": format!("{site}/{}", photo.published_path(&published.slug)),
            "license": licence_url(&photo.licence),
            "creditText": photo.credit,
        })];
    }
    card::ratios(cards)
        .iter()
        .map(|ratio| {
            let (width, height) = ratio.size();
            json!({
                "@type": "ImageObject",
                "url": format!("{site}/{}", card::path(&published.slug, *ratio, cards)),
                "width": width,
                "height": height,
                "creditText": card::EMOJI_CREDIT,
            })
        })
        .collect()
}

/// A licence's page: CC0 by its deed, any other SPDX id by its SPDX page.
fn licence_url(spdx: &str) -> String {
    if spdx == crate::recipes::recipe::DEFAULT_LICENCE {
        "https://creativecommons.org/publicdomain/zero/1.0/".to_string()
    } else {
        format!("https://spdx.org/licenses/{spdx}.html")
    }
}

/// Words a search may know the recipe by, beyond its category and cuisine (Google's `keywords`):
/// its diet flags, how hard it is, and "quick" when it takes half an hour or less.
fn keywords(published: &Published, lang: Lang) -> String {
    let recipe = &published.recipe;
    let mut words: Vec<&str> =
        recipe.flags().map(|flag| crate::recipes::recipe::flag_word(lang, flag)).collect();
    words.push(crate::recipes::recipe::difficulty_word(lang, recipe.difficulty));
    if recipe.total_min() <= 30 {
        words.push(match lang {
            Lang::En => "quick",
            Lang::He => "מהיר",
            Lang::Pt => "rápido",
        });
    }
    words.join(", ")
}

/// schema.org Recipe for one language of a recipe.
fn json_ld(published: &Published, lang: Lang, text: &Text, site: &str, cards: card::Format) -> Value {
    let recipe = &published.recipe;
    let diets: Vec<&str> =
        [(Flag::Gf, "GlutenFreeDiet"), (Flag::Vegan, "VeganDiet"), (Flag::Vegetarian, "VegetarianDiet")]
            .iter()
            .filter(|(flag, _)| recipe.flag(*flag))
            .map(|(_, diet)| *diet)
            .collect();
    let licence = licence_url(&recipe.licence);
    let mut ld = json!({
        "@context": "https://schema.org",
        "@type": "Recipe",
        "@id": format!("/r/{}#{}", published.slug, lang.code()),
        "name": text.title,
        "description": text.summary,
        "inLanguage": lang.bcp47(),
        "recipeCategory": recipe.course.code(),
        "prepTime": minutes(recipe.prep_min),
        "cookTime": minutes(recipe.cook_min),
        "totalTime": minutes(recipe.total_min()),
        "recipeYield": recipe.servings.to_string(),
        "recipeIngredient": text.ingredients.iter().map(|i| format!("{} {}", amount(i.q, i.u.as_deref()), i.i)).collect::<Vec<_>>(),
        "recipeInstructions": text.steps.iter().map(|s| json!({"@type": "HowToStep", "text": s.t})).collect::<Vec<_>>(),
        "license": licence,
        "author": {"@type": "Person", "name": published.server.owner},
        "image": images(published, site, cards),
        "keywords": keywords(published, lang),
    });
    if let Some(cuisine) = &recipe.cuisine {
        ld["recipeCuisine"] = json!(cuisine);
    }
    // When the recipe was first published: the API's creation time, or for a recipe from the content
    // repo the commit that added its file (the builder sets `created_at` from git).
    if let Some(created) = &published.server.created_at {
        ld["datePublished"] = json!(created);
    }
    if let Some(updated) = &published.server.updated_at {
        ld["dateModified"] = json!(updated);
    }
    if !diets.is_empty() {
        ld["suitableForDiet"] =
            json!(diets.iter().map(|d| format!("https://schema.org/{d}")).collect::<Vec<_>>());
    }
    ld
}

/// JSON inside `<script>` must not be able to close the element.
fn script_safe(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

impl Renderer {
    /// The page of one recipe as a reader asked for it (`/r/{slug}?servings=&units=`: scaled or
    /// converted, `domain::recipes::cooking`), with its servings control and cook mode (`cook.html`); `site` is
    /// the origin its absolute links start with (`https://host`), and `cards` says whether the build
    /// drew its cards or the Worker draws them.
    pub fn recipe_page(&self, adjusted: &Adjusted, site: &str, cards: card::Format) -> Result<String> {
        let published = &adjusted.published;
        let recipe = &published.recipe;
        let (page_lang, page_text) = recipe.text_for(Lang::En);
        let sections: Vec<Value> = recipe
            .texts
            .iter()
            .map(|(lang, text)| {
                let lang = *lang;
                json!({
                    "lang": lang.code(),
                    "dir": if lang.is_rtl() { "rtl" } else { "ltr" },
                    "language_name": language_name(lang),
                    "title": text.title,
                    "summary": text.summary,
                    "tips": text.tips,
                    "labels": labels(lang),
                    "difficulty": crate::recipes::recipe::difficulty_word(lang, recipe.difficulty),
                    "badges": recipe.flags().map(|flag| crate::recipes::recipe::flag_word(lang, flag)).collect::<Vec<_>>(),
                    "ingredients": text.ingredients.iter().enumerate().map(|(line, i)| json!({
                        "amount": amount(i.q, i.u.as_deref()), "name": i.i, "check": i.check,
                        "note": adjusted.rounded.iter().find(|r| r.lang == lang && r.line == line).map(|r| &r.note),
                    })).collect::<Vec<_>>(),
                    "cook": cook_labels(lang),
                    "steps": text.steps.iter().map(|s| json!({
                        "text": s.t, "min": s.min, "flags": s.f.iter().map(|f| step_flag(lang, f)).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let ld: Vec<Value> =
            recipe.texts.iter().map(|(lang, text)| json_ld(published, *lang, text, site, cards)).collect();
        let image = images(published, site, cards)
            .into_iter()
            .next()
            .and_then(|image| image["url"].as_str().map(String::from));
        let owner =
            (published.server.owner != crate::recipes::recipe::SITE_OWNER).then_some(&published.server.owner);
        let html = self.env.get_template("recipe.html")?.render(context! {
            lang => page_lang.code(),
            dir => if page_lang.is_rtl() { "rtl" } else { "ltr" },
            // `<title>` and `<meta>` cannot isolate text, so they get it without controls.
            title => clean::without_controls(&page_text.title),
            description => clean::without_controls(&page_text.summary),
            tagline => "open recipes",
            footer => "Commonplace recipes are open data.",
            json_ld => script_safe(&json!(ld)),
            og_image => image,
            og_url => format!("{site}/r/{}", published.slug),
            sections,
            emoji => recipe.emoji,
            prep_min => recipe.prep_min,
            cook_min => recipe.cook_min,
            servings => recipe.servings,
            slug => published.slug,
            licence => recipe.licence,
            owner,
            scaled_from => adjusted.scaled_from.as_ref().map(|from| from.servings),
            units => adjusted.units.map(|units| units.code()),
            controls => cook_labels(page_lang),
        })?;
        Ok(html)
    }

    /// The home page: both services, and the recipes by course; `n_episodes` is how many episodes the
    /// quote service holds.
    pub fn home_page(
        &self,
        cards: &[&Card],
        facets: &BTreeMap<String, u64>,
        n_episodes: usize,
    ) -> Result<String> {
        let mut by_course: BTreeMap<Course, Vec<Value>> = BTreeMap::new();
        for card in cards {
            let view = card.view(None);
            by_course.entry(card.course).or_default().push(json!({
                "slug": view.slug, "emoji": view.emoji, "title": view.title, "summary": view.summary,
                "lang": view.lang.code(), "dir": if view.lang.is_rtl() { "rtl" } else { "ltr" },
            }));
        }
        let courses: Vec<Value> = by_course
            .into_iter()
            .map(|(course, cards)| json!({"course": course.code(), "label": course_label(course), "cards": cards}))
            .collect();
        self.env.get_template("home.html")?.render(context! {
            lang => "en", dir => "ltr", title => "Open recipes, and who said it", description => "Open recipes in English, Hebrew and Portuguese, and who said a quote in a podcast.",
            tagline => "open recipes and quotes", n_episodes, footer => "Recipes are CC0 open data.", n_recipes => facets.iter().filter(|(name, _)| name.starts_with("course:")).map(|(_, n)| n).sum::<u64>(), courses,
        })
    }

    /// The page a person's browser gets for an address that names nothing, with what was missing
    /// (`detail`, the problem's) when there is something to say.
    pub fn not_found_page(&self, detail: Option<&str>) -> Result<String> {
        let text = match detail {
            Some(detail) => format!("There is no page here: {detail}."),
            None => "There is no page here.".into(),
        };
        self.problem_page("Not found", &text)
    }

    /// The page a person's browser gets for a refused request: the problem's title and detail.
    pub fn problem_page(&self, title: &str, text: &str) -> Result<String> {
        self.env.get_template("problem.html")?.render(context! {
            lang => "en", dir => "ltr", title, text, tagline => "open recipes and quotes", footer => "",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipes::recipe::{Source, validate};

    /// A page of a recipe in English and Hebrew whose English title is `title`, unchecked: the D1
    /// overlay can hold rows stored before validation refused such text.
    fn page_with_title(title: &str) -> String {
        let doc = json!({
            "emoji": "🍲", "course": "soup", "difficulty": 1, "prep_min": 5, "cook_min": 20, "servings": 2,
            "gf": 1, "vegan": 1, "vegetarian": 1, "dairy_free": 1, "nut_free": 1, "owner": "ana",
            "cuisine": "Portuguese", "created_at": "2025-03-01T10:00:00Z",
            "texts": {
                "en": {"title": "Soup", "summary": "Warm.", "ingredients": [{"q": 1, "u": "l", "i": "water"}],
                    "steps": [{"t": "Simmer.", "min": 20}]},
                "he": {"title": "מרק", "summary": "חם.", "ingredients": [{"q": 1, "u": "ליטר", "i": "מים"}],
                    "steps": [{"t": "מבשלים.", "min": 20}]}
            }
        });
        let (mut recipe, server) = validate(&doc, Source::ContentFile).unwrap();
        recipe.texts.get_mut(&Lang::En).unwrap().title = title.to_string();
        let published = Published { slug: "soup".into(), recipe, server };
        Renderer::new()
            .unwrap()
            .recipe_page(
                &crate::recipes::cooking::adjust(&published, Default::default()),
                "https://example.org",
                card::Format::Png,
            )
            .unwrap()
    }

    #[test]
    fn the_title_element_carries_no_bidi_or_other_control() {
        let page = page_with_title("\u{202E}Soup\u{0}\u{200F} \u{2067}night\u{2069}");
        let head = &page[page.find("<title>").unwrap()..page.find("</title>").unwrap()];
        assert_eq!(head, "<title>Soup night · Commonplace");
        assert!(page.contains("<h1>\u{202E}Soup"), "the body shows what is stored, in its own block");
    }

    #[test]
    fn user_text_beside_other_text_is_isolated() {
        let page = page_with_title("Soup");
        for isolated in [
            r#"<bdi>1 l</bdi> <bdi dir="ltr">water</bdi>"#,
            r#"<bdi dir="ltr">Simmer.</bdi> <span class="timer">"#,
            r#"<bdi>1 ליטר</bdi> <bdi dir="rtl">מים</bdi>"#,
            r#"<bdi dir="rtl">מבשלים.</bdi>"#,
            " · <bdi>ana</bdi>",
        ] {
            assert!(page.contains(isolated), "{isolated} is not on the page");
        }
    }

    /// The JSON-LD objects of a page, one per language.
    fn json_ld_of(page: &str) -> Vec<Value> {
        let start = page.find("application/ld+json\">").unwrap() + "application/ld+json\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        serde_json::from_str(&page[start..end]).unwrap()
    }

    #[test]
    fn every_recipe_has_images_keywords_and_a_publication_date_for_rich_results() {
        let page = page_with_title("Soup");
        let ld = json_ld_of(&page);
        assert_eq!(ld.len(), 2);
        let urls: Vec<&str> =
            ld[0]["image"].as_array().unwrap().iter().map(|i| i["url"].as_str().unwrap()).collect();
        assert_eq!(urls, ["https://example.org/r/soup.16x9.png"]);
        // minijinja escapes `/` in attributes (`&#x2f;`), which every HTML parser reads back.
        assert!(page.contains(r#"<meta property="og:image" content="https:&#x2f;&#x2f;example.org&#x2f;r&#x2f;soup.16x9.png">"#), "{page}");
        assert_eq!(ld[0]["keywords"], "gluten-free, vegan, vegetarian, dairy-free, nut-free, easy, quick");
        assert_eq!(ld[1]["inLanguage"], "he");
        assert_eq!(ld[0]["datePublished"], "2025-03-01T10:00:00Z");
        assert_eq!(ld[0]["recipeCuisine"], "Portuguese");
    }

    #[test]
    fn a_photo_replaces_the_cards_and_carries_its_licence_and_credit() {
        let doc = json!({
            "emoji": "🍲", "course": "soup", "difficulty": 1, "prep_min": 5, "cook_min": 20, "servings": 2,
            "gf": 0, "vegan": 0, "vegetarian": 0, "dairy_free": 0, "nut_free": 0,
            "photo": {"file": "photos/soup.jpg", "licence": "CC-BY-4.0", "credit": "Photo: Ana Lima"},
            "texts": {"en": {"title": "Soup", "summary": "Warm.", "ingredients": [{"q": 1, "u": "l", "i": "water"}],
                "steps": [{"t": "Simmer."}]}}
        });
        let (recipe, server) = validate(&doc, Source::ContentFile).unwrap();
        let published = Published { slug: "soup".into(), recipe, server };
        let page = Renderer::new()
            .unwrap()
            .recipe_page(
                &crate::recipes::cooking::adjust(&published, Default::default()),
                "https://example.org",
                card::Format::Png,
            )
            .unwrap();
        let ld = json_ld_of(&page);
        assert_eq!(
            ld[0]["image"],
            json!([{"@type": "ImageObject", "url": "https://example.org/r/soup.photo.jpg",
                    "license": "https://spdx.org/licenses/CC-BY-4.0.html", "creditText": "Photo: Ana Lima"}])
        );
        assert!(ld[0].get("datePublished").is_none(), "no date is made up");
    }

    #[test]
    fn amounts_read_like_a_cookbook() {
        assert_eq!(amount(2.0, Some("tbsp")), "2 tbsp");
        assert_eq!(amount(1.5, Some("cups")), "1½ cups");
        assert_eq!(amount(0.25, None), "¼");
        assert_eq!(amount(0.3, Some("kg")), "0.3 kg");
    }
}
