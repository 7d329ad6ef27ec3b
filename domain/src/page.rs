//! HTML pages (minijinja): one per recipe with every language it has, a home page, a 404 page.
//!
//! Shared by the builder (every built page) and the Worker (pages of recipes in the D1 overlay, before
//! the next build), so a recipe's page is the same whichever of them renders it. Templates are compiled
//! in (`domain/templates/`); rendering is pure. Behind the `pages` feature, so only those two pay for
//! minijinja.
//!
//! Each language's section carries its own `lang` and `dir`, so Hebrew reads right to left beside
//! English; numbers sit in `<bdi>` so they keep their order inside Hebrew text. User text that shares
//! a line with other text (ingredient names, steps, the owner, card titles and summaries) sits in a
//! `<bdi>` too, with its language's direction where that is known, so it can never reorder what is
//! around it; titles, summaries and tips are blocks of their own, which the bidi algorithm treats as
//! separate paragraphs. `<title>` and `<meta>` cannot hold markup, so they drop control characters. Each page embeds
//! schema.org `Recipe` JSON-LD, one object per language.

use std::collections::BTreeMap;

use minijinja::{Environment, context};
use serde::Serialize;
use serde_json::{Value, json};

use crate::clean;
use crate::cooking::Adjusted;
use crate::recipe::{Course, Lang, Published, Text};
use crate::search::Card;

pub type Result<T> = std::result::Result<T, minijinja::Error>;

#[derive(Debug)]
pub struct Renderer {
    env: Environment<'static>,
}

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

fn difficulty_word(lang: Lang, difficulty: u8) -> &'static str {
    match (lang, difficulty) {
        (Lang::En, 1) => "easy",
        (Lang::En, 2) => "medium",
        (Lang::En, _) => "hard",
        (Lang::He, 1) => "קל",
        (Lang::He, 2) => "בינוני",
        (Lang::He, _) => "מאתגר",
        (Lang::Pt, 1) => "fácil",
        (Lang::Pt, 2) => "média",
        (Lang::Pt, _) => "difícil",
    }
}

fn flag_badge(lang: Lang, flag: &str) -> &'static str {
    match (lang, flag) {
        (Lang::En, "gf") => "gluten-free",
        (Lang::En, "vegan") => "vegan",
        (Lang::En, "vegetarian") => "vegetarian",
        (Lang::En, "dairy_free") => "dairy-free",
        (Lang::En, _) => "nut-free",
        (Lang::He, "gf") => "ללא גלוטן",
        (Lang::He, "vegan") => "טבעוני",
        (Lang::He, "vegetarian") => "צמחוני",
        (Lang::He, "dairy_free") => "ללא חלב",
        (Lang::He, _) => "ללא אגוזים",
        (Lang::Pt, "gf") => "sem glúten",
        (Lang::Pt, "vegan") => "vegan",
        (Lang::Pt, "vegetarian") => "vegetariano",
        (Lang::Pt, "dairy_free") => "sem lactose",
        (Lang::Pt, _) => "sem frutos secos",
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

/// A quantity as a cook writes it: `2`, `1½`, `1.25 kg` (`domain::cooking::quantity`).
pub fn amount(q: f64, unit: Option<&str>) -> String {
    crate::cooking::quantity::shown(q, unit)
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

/// schema.org Recipe for one language of a recipe.
fn json_ld(published: &Published, lang: Lang, text: &Text) -> Value {
    let recipe = &published.recipe;
    let diets: Vec<&str> =
        [("gf", "GlutenFreeDiet"), ("vegan", "VeganDiet"), ("vegetarian", "VegetarianDiet")]
            .iter()
            .filter(|(flag, _)| recipe.flag(flag))
            .map(|(_, diet)| *diet)
            .collect();
    let licence = if recipe.licence == crate::recipe::DEFAULT_LICENCE {
        "https://creativecommons.org/publicdomain/zero/1.0/".to_string()
    } else {
        format!("https://spdx.org/licenses/{}.html", recipe.licence)
    };
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
    });
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
    pub fn new() -> Result<Renderer> {
        let mut env = Environment::new();
        env.add_template("base.html", include_str!("../templates/base.html"))?;
        env.add_template("recipe.html", include_str!("../templates/recipe.html"))?;
        env.add_template("cook.html", include_str!("../templates/cook.html"))?;
        env.add_template("home.html", include_str!("../templates/home.html"))?;
        env.add_template("not_found.html", include_str!("../templates/not_found.html"))?;
        Ok(Renderer { env })
    }

    pub fn recipe_page(&self, published: &Published) -> Result<String> {
        self.recipe_page_adjusted(&crate::cooking::adjust(published, Default::default()))
    }

    /// The page of a recipe scaled or converted (`/r/{slug}?servings=&units=`), with its servings
    /// control and cook mode (`cook.html`).
    pub fn recipe_page_adjusted(&self, adjusted: &Adjusted) -> Result<String> {
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
                    "difficulty": difficulty_word(lang, recipe.difficulty),
                    "badges": crate::recipe::FLAGS.iter().filter(|f| recipe.flag(f)).map(|f| flag_badge(lang, f)).collect::<Vec<_>>(),
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
            recipe.texts.iter().map(|(lang, text)| json_ld(published, *lang, text)).collect();
        let owner = (published.server.owner != crate::recipe::SITE_OWNER).then_some(&published.server.owner);
        let html = self.env.get_template("recipe.html")?.render(context! {
            lang => page_lang.code(),
            dir => if page_lang.is_rtl() { "rtl" } else { "ltr" },
            // `<title>` and `<meta>` cannot isolate text, so they get it without controls.
            title => clean::without_controls(&page_text.title),
            description => clean::without_controls(&page_text.summary),
            tagline => "open recipes",
            footer => "Commonplace recipes are open data.",
            json_ld => script_safe(&json!(ld)),
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

    pub fn home_page(&self, cards: &[&Card], facets: &BTreeMap<String, u64>) -> Result<String> {
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
            lang => "en", dir => "ltr", title => "Open recipes", description => "Open recipes in English, Hebrew and Portuguese.",
            tagline => "open recipes", footer => "Recipes are CC0 open data.", n_recipes => facets.iter().filter(|(name, _)| name.starts_with("course:")).map(|(_, n)| n).sum::<u64>(), courses,
        })
    }

    pub fn not_found_page(&self) -> Result<String> {
        self.env.get_template("not_found.html")?.render(context! {
            lang => "en", dir => "ltr", title => "Not found", tagline => "open recipes", footer => "",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::{Source, validate};

    /// A page of a recipe in English and Hebrew whose English title is `title`, unchecked: the D1
    /// overlay can hold rows stored before validation refused such text.
    fn page_with_title(title: &str) -> String {
        let doc = json!({
            "emoji": "🍲", "course": "soup", "difficulty": 1, "prep_min": 5, "cook_min": 20, "servings": 2,
            "gf": 1, "vegan": 1, "vegetarian": 1, "dairy_free": 1, "nut_free": 1, "owner": "ana",
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
        Renderer::new().unwrap().recipe_page(&published).unwrap()
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

    #[test]
    fn amounts_read_like_a_cookbook() {
        assert_eq!(amount(2.0, Some("tbsp")), "2 tbsp");
        assert_eq!(amount(1.5, Some("cups")), "1½ cups");
        assert_eq!(amount(0.25, None), "¼");
        assert_eq!(amount(0.3, Some("kg")), "0.3 kg");
    }
}
