//! Scaling and conversion, line by line, in the three languages.

use expect_test::{Expect, expect};
use serde_json::json;

use super::*;
use crate::recipes::cooking::quantity::shown;
use crate::recipes::recipe::{Source, validate};

/// A recipe for 4 with one language's ingredient lines `(q, unit, name)`.
fn recipe(lang: &str, lines: &[(f64, Option<&str>, &str)]) -> Published {
    let ingredients: Vec<_> = lines
        .iter()
        .map(|(q, u, i)| match u {
            Some(u) => json!({"q": q, "u": u, "i": i}),
            None => json!({"q": q, "i": i}),
        })
        .collect();
    let doc = json!({
        "emoji": "🍲", "course": "main", "difficulty": 1, "prep_min": 10, "cook_min": 20, "servings": 4,
        "gf": 0, "vegan": 0, "vegetarian": 0, "dairy_free": 0, "nut_free": 0,
        "texts": {lang: {"title": title(lang), "summary": title(lang), "ingredients": ingredients, "steps": [{"t": "Cook."}]}},
    });
    let (recipe, server) = validate(&doc, Source::Api).unwrap_or_else(|p| panic!("{p:?}"));
    Published { slug: "dish".into(), recipe, server }
}

fn title(lang: &str) -> &'static str {
    match lang {
        "he" => "תבשיל",
        "pt" => "Prato",
        _ => "Dish",
    }
}

/// Each line before and after, with what the answer says about it.
fn check(lang: &str, lines: &[(f64, Option<&str>, &str)], query: &[(&str, &str)], expect: Expect) {
    let published = recipe(lang, lines);
    let params = [("slug", "dish")].into_iter().chain(query.iter().copied());
    let request = crate::api::from_query::<crate::api::RecipeView>(params).unwrap().request;
    let adjusted = adjust(&published, request);
    let lang = Lang::parse(lang).unwrap();
    let before = &published.recipe.texts[&lang].ingredients;
    let after = &adjusted.published.recipe.texts[&lang].ingredients;
    let mut out = String::new();
    for (line, (b, a)) in before.iter().zip(after).enumerate() {
        out.push_str(&format!("{} {} → {}", shown(b.q, b.u.as_deref()), b.i, shown(a.q, a.u.as_deref())));
        if let Some(c) = adjusted.converted.iter().find(|c| c.line == line) {
            out.push_str(" [converted");
            if let Some(d) = c.density_g_per_ml {
                out.push_str(&format!(" at {d} g/ml"));
            }
            out.push(']');
        }
        if let Some(r) = adjusted.rounded.iter().find(|r| r.line == line) {
            out.push_str(&format!(" [{}]", r.note));
        }
        out.push('\n');
    }
    expect.assert_eq(&out);
}

const BAKE: &[(f64, Option<&str>, &str)] = &[
    (500.0, Some("g"), "strong white bread flour"),
    (7.0, Some("g"), "instant dried yeast"),
    (60.0, Some("g"), "sugar"),
    (1.5, Some("tsp"), "salt"),
    (2.0, None, "eggs, plus 1 more for glazing"),
    (80.0, Some("ml"), "sunflower oil"),
    (200.0, Some("ml"), "lukewarm water"),
    (2.0, Some("tbsp"), "sesame seeds"),
    (3.0, Some("cloves"), "garlic"),
    (1.0, Some("handful"), "parsley"),
    (1.0, Some("kg"), "potatoes"),
    (1.0, Some("cup"), "whole milk"),
];

#[test]
fn scaling_up_rounds_like_a_cook() {
    check(
        "en",
        BAKE,
        &[("servings", "6")],
        expect![[r#"
            500 g strong white bread flour → 750 g
            7 g instant dried yeast → 11 g
            60 g sugar → 90 g
            1½ tsp salt → 2¼ tsp
            2 eggs, plus 1 more for glazing → 3
            80 ml sunflower oil → 120 ml
            200 ml lukewarm water → 300 ml
            2 tbsp sesame seeds → 3 tbsp
            3 cloves garlic → 4½ cloves
            1 handful parsley → 1½ handfuls
            1 kg potatoes → 1.5 kg
            1 cup whole milk → 1½ cups
        "#]],
    );
}

#[test]
fn scaling_down_keeps_things_whole_and_spoons_small() {
    check(
        "en",
        BAKE,
        &[("servings", "1")],
        expect![[r#"
            500 g strong white bread flour → 125 g
            7 g instant dried yeast → 2 g
            60 g sugar → 15 g
            1½ tsp salt → ⅓ tsp
            2 eggs, plus 1 more for glazing → 1 [rounded to whole eggs (0.5 exactly)]
            80 ml sunflower oil → 20 ml
            200 ml lukewarm water → 50 ml
            2 tbsp sesame seeds → 1½ tsp [converted]
            3 cloves garlic → ¾ clove
            1 handful parsley → ¼ handful
            1 kg potatoes → 250 g [converted]
            1 cup whole milk → ¼ cup
        "#]],
    );
}

#[test]
fn us_units_measure_flour_in_cups_and_potatoes_in_pounds() {
    check(
        "en",
        BAKE,
        &[("units", "us")],
        expect![[r#"
            500 g strong white bread flour → 4 cups [converted at 0.53 g/ml]
            7 g instant dried yeast → ¼ oz [converted]
            60 g sugar → ⅓ cup [converted at 0.85 g/ml]
            1½ tsp salt → 1½ tsp
            2 eggs, plus 1 more for glazing → 2
            80 ml sunflower oil → ⅓ cup [converted]
            200 ml lukewarm water → ¾ cup [converted]
            2 tbsp sesame seeds → 2 tbsp
            3 cloves garlic → 3 cloves
            1 handful parsley → 1 handful
            1 kg potatoes → 2¼ lb [converted]
            1 cup whole milk → 1 cup
        "#]],
    );
}

#[test]
fn metric_units_weigh_a_cup_of_flour() {
    check(
        "en",
        &[
            (2.0, Some("cups"), "all-purpose flour"),
            (0.5, Some("cup"), "caster sugar"),
            (1.0, Some("cup"), "chicken stock"),
            (8.0, Some("oz"), "cheddar, grated"),
            (1.5, Some("lb"), "ground beef"),
            (4.0, Some("fl oz"), "cream"),
            (6.0, Some("tbsp"), "butter, melted"),
            (1.0, Some("tbsp"), "olive oil"),
            (2.0, None, "onions"),
        ],
        &[("units", "metric")],
        expect![[r#"
            2 cups all-purpose flour → 255 g [converted at 0.53 g/ml]
            ½ cup caster sugar → 100 g [converted at 0.85 g/ml]
            1 cup chicken stock → 240 ml [converted]
            8 oz cheddar, grated → 225 g [converted]
            1½ lb ground beef → 680 g [converted]
            4 fl oz cream → 120 ml [converted]
            6 tbsp butter, melted → 86 g [converted at 0.96 g/ml]
            1 tbsp olive oil → 1 tbsp
            2 onions → 2
        "#]],
    );
}

#[test]
fn hebrew_units_are_understood_and_written_in_hebrew() {
    check(
        "he",
        &[
            (2.0, Some("כוסות"), "קמח לבן"),
            (1.0, Some("כוס"), "סוכר"),
            (1.0, Some("כף"), "שמן זית"),
            (1.0, Some("כפית"), "מלח"),
            (250.0, Some("מ״ל"), "חלב"),
            (3.0, None, "ביצים"),
            (2.0, Some("שיני"), "שום"),
        ],
        &[("servings", "2"), ("units", "metric")],
        expect![[r#"
            2 כוסות קמח לבן → 125 גרם [converted at 0.53 g/ml]
            1 כוס סוכר → 100 גרם [converted at 0.85 g/ml]
            1 כף שמן זית → 1½ כפיות [converted]
            1 כפית מלח → ½ כפית
            250 מ״ל חלב → 125 מ״ל
            3 ביצים → 2 [עוגל לביצים שלמות (1.5 בדיוק)]
            2 שיני שום → 1 שן
        "#]],
    );
}

#[test]
fn portuguese_units_are_understood_and_written_in_portuguese() {
    check(
        "pt",
        &[
            (2.0, Some("chávenas"), "farinha de trigo"),
            (1.0, Some("colher de sopa"), "azeite"),
            (2.0, Some("colheres de chá"), "sal"),
            (500.0, Some("g"), "arroz carolino"),
            (3.0, None, "ovos"),
            (1.0, Some("dente"), "alho"),
            (1.0, Some("l"), "água"),
        ],
        &[("servings", "10"), ("units", "us")],
        expect![[r#"
            2 chávenas farinha de trigo → 5 chávenas
            1 colher de sopa azeite → 2½ colheres de sopa
            2 colheres de chá sal → 5 colheres de chá
            500 g arroz carolino → 6⅔ chávenas [converted at 0.78 g/ml]
            3 ovos → 8 [arredondado a ovos inteiros (7,5 exatamente)]
            1 dente alho → 2½ dentes
            1 l água → 10½ chávenas [converted]
        "#]],
    );
}

#[test]
fn a_recipe_asked_for_as_it_is_comes_back_unchanged() {
    let published = recipe("en", BAKE);
    let adjusted = adjust(&published, Request::default());
    assert_eq!(adjusted.published, published);
    assert!(adjusted.scaled_from.is_none() && adjusted.converted.is_empty() && adjusted.rounded.is_empty());
    let same_servings = adjust(&published, Request { servings: Some(4), units: None });
    assert_eq!(same_servings.published, published);
}

#[test]
fn the_answer_names_the_original_and_the_servings() {
    let adjusted = adjust(&recipe("en", BAKE), Request { servings: Some(8), units: None });
    assert_eq!(adjusted.published.recipe.servings, 8);
    assert_eq!(adjusted.scaled_from, Some(ScaledFrom { servings: 4, href: "/r/dish.json".into() }));
}
