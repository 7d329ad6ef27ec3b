//! Cooklang and schema.org in: what a draft holds, what it asks for, and the round trip of every
//! sample recipe through Cooklang and the official parser.

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::*;
use crate::recipes::recipe::Published;

fn problems(draft: &Draft) -> String {
    draft.problems.iter().map(|p| format!("{p}\n")).collect()
}

fn check_draft(draft: Draft, expect_doc: Expect, expect_problems: Expect) {
    expect_doc.assert_eq(&serde_json::to_string_pretty(&draft.doc).unwrap());
    expect_problems.assert_eq(&problems(&draft));
}

#[test]
fn a_cooklang_file_with_everything_becomes_a_valid_recipe() {
    let source = "---
title: Lemon rice
description: Bright, quick rice.
servings: 4
prep time: 10 min
cook time: 1h 5m
course: side
difficulty: easy
diet: [vegan, gluten-free, nut-free]
emoji: 🍋
locale: en
---

Rinse @basmati rice{300%g} in a #sieve{}.

Simmer with @water{600%ml} and @salt{1/2%tsp}. ~{15%minutes}

Stir in the zest of @lemon{1}, then rest for ~{5%min} off the heat

> Good cold, too.
";
    let draft = from_cooklang(source, None);
    check_draft(
        draft,
        expect![[r#"
        {
          "cook_min": 65,
          "course": "side",
          "dairy_free": 1,
          "difficulty": 1,
          "emoji": "🍋",
          "gf": 1,
          "nut_free": 1,
          "prep_min": 10,
          "servings": 4,
          "texts": {
            "en": {
              "ingredients": [
                {
                  "i": "basmati rice",
                  "q": 300,
                  "u": "g"
                },
                {
                  "i": "water",
                  "q": 600,
                  "u": "ml"
                },
                {
                  "i": "salt",
                  "q": 0.5,
                  "u": "tsp"
                },
                {
                  "i": "lemon",
                  "q": 1
                }
              ],
              "steps": [
                {
                  "t": "Rinse basmati rice in a sieve."
                },
                {
                  "min": 15,
                  "t": "Simmer with water and salt."
                },
                {
                  "min": 5,
                  "t": "Stir in the zest of lemon, then rest for 5 min off the heat"
                }
              ],
              "summary": "Bright, quick rice.",
              "tips": "Good cold, too.",
              "title": "Lemon rice"
            }
          },
          "vegan": 1,
          "vegetarian": 1
        }"#]],
        expect![""],
    );
}

#[test]
fn what_a_cooklang_file_does_not_say_is_asked_for() {
    let source = "---
title: Toast
---
Toast the @bread{2%slices}, then butter with @butter{}.
";
    let draft = from_cooklang(source, Some(Lang::En));
    check_draft(
        draft,
        expect![[r#"
        {
          "texts": {
            "en": {
              "ingredients": [
                {
                  "i": "bread",
                  "q": 2,
                  "u": "slices"
                },
                {
                  "i": "butter"
                }
              ],
              "steps": [
                {
                  "t": "Toast the bread, then butter with butter."
                }
              ],
              "tips": "",
              "title": "Toast"
            }
          }
        }"#]],
        expect![[r#"
            servings: how many does it serve? add `servings: 4` to the front matter
            prep_min: how many minutes of preparation? add a prep time
            cook_min: how many minutes of cooking? add a cook time
            course: which course is it? add `course:` with one of breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics
            difficulty: how hard is it? add `difficulty: easy` (or medium, hard)
            gf: the source does not say whether it is gluten-free; set `gf` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [gluten-free]`, or `diet: []`)
            vegan: the source does not say whether it is vegan; set `vegan` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [vegan]`, or `diet: []`)
            vegetarian: the source does not say whether it is vegetarian; set `vegetarian` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [vegetarian]`, or `diet: []`)
            dairy_free: the source does not say whether it is dairy-free; set `dairy_free` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [dairy-free]`, or `diet: []`)
            nut_free: the source does not say whether it is nut-free; set `nut_free` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [nut-free]`, or `diet: []`)
            emoji: add `emoji:` with one emoji for the dish
            texts.en.summary: the file has no description; add `description:` with a sentence or two
            texts.en.ingredients[1].q: `butter` has no quantity in the file; give one (`@butter{1%pinch}`)
        "#]],
    );
}

#[test]
fn cooklang_syntax_errors_name_their_line() {
    let draft = from_cooklang("---\nlocale: en\n---\nMix @flour{2%cups and stir.\n\nBake ~{%min}.\n", None);
    expect![[r#"
        cooklang: line 6: Empty quantity value
    "#]]
    .assert_eq(&problems(&draft));
}

#[test]
fn a_schema_org_recipe_becomes_a_draft_that_asks_what_schema_org_cannot_say() {
    let json_ld = json!({"@context": "https://schema.org", "@graph": [
        {"@type": "WebPage", "name": "A page"},
        {"@type": ["Recipe"], "name": "Pão de ló", "description": "Bolo fofo de Ovar.", "inLanguage": "pt-PT",
         "recipeYield": ["8", "8 fatias"], "prepTime": "PT20M", "totalTime": "PT1H", "recipeCategory": "Sobremesa",
         "suitableForDiet": "https://schema.org/VegetarianDiet",
         "license": "https://creativecommons.org/publicdomain/zero/1.0/",
         "recipeIngredient": ["6 ovos", "150 g de açúcar", "2 colheres de sopa de farinha", "1 ½ colher de chá de sal", "raspa de limão"],
         "recipeInstructions": [
            {"@type": "HowToSection", "name": "Massa", "itemListElement": [
                {"@type": "HowToStep", "text": "Bata os ovos com o açúcar."},
                {"@type": "HowToStep", "text": "Envolva a farinha."}]},
            {"@type": "HowToStep", "text": "Leve ao forno 40 minutos."}]}
    ]});
    check_draft(
        from_schema_org(&json_ld, None),
        expect![[r#"
        {
          "cook_min": 40,
          "course": "dessert",
          "gf": 0,
          "licence": "CC0-1.0",
          "prep_min": 20,
          "servings": 8,
          "texts": {
            "pt": {
              "ingredients": [
                {
                  "i": "ovos",
                  "q": 6
                },
                {
                  "i": "açúcar",
                  "q": 150,
                  "u": "g"
                },
                {
                  "i": "farinha",
                  "q": 2,
                  "u": "colheres de sopa"
                },
                {
                  "i": "sal",
                  "q": 1.5,
                  "u": "colher de chá"
                },
                {
                  "i": "raspa de limão"
                }
              ],
              "steps": [
                {
                  "t": "Bata os ovos com o açúcar."
                },
                {
                  "t": "Envolva a farinha."
                },
                {
                  "t": "Leve ao forno 40 minutos."
                }
              ],
              "summary": "Bolo fofo de Ovar.",
              "tips": "",
              "title": "Pão de ló"
            }
          },
          "vegan": 0,
          "vegetarian": 1
        }"#]],
        expect![[r#"
            difficulty: schema.org has no difficulty; set `difficulty` to 1 (easy), 2 or 3
            emoji: schema.org has no emoji; set `emoji` to one emoji for the dish
            dairy_free: the source does not say whether it is dairy-free; set `dairy_free` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [dairy-free]`, or `diet: []`)
            nut_free: the source does not say whether it is nut-free; set `nut_free` to 1 or 0 (in Cooklang, list the diets it suits: `diet: [nut-free]`, or `diet: []`)
            texts.pt.ingredients[4].q: `raspa de limão` gives no single quantity; set `q` (and `u`)
        "#]],
    );
}

#[test]
fn ingredient_lines_are_read_like_a_cook() {
    let lines = [
        ("2 cups all-purpose flour", Lang::En),
        ("1 ½ tsp salt", Lang::En),
        ("1/2 cup milk", Lang::En),
        ("200g feta", Lang::En),
        ("3 large eggs", Lang::En),
        ("2-3 cloves garlic", Lang::En),
        ("Salt to taste", Lang::En),
        ("2 colheres de sopa de azeite", Lang::Pt),
        ("3 כוסות קמח", Lang::He),
        ("1,5 l de água", Lang::Pt),
    ];
    let table: String = lines
        .iter()
        .map(|(line, lang)| {
            let (q, u, i) = ingredient_line(line, *lang);
            format!("{line} → {q:?} {u:?} {i:?}\n")
        })
        .collect();
    expect![[r#"
        2 cups all-purpose flour → Some(2.0) Some("cups") "all-purpose flour"
        1 ½ tsp salt → Some(1.5) Some("tsp") "salt"
        1/2 cup milk → Some(0.5) Some("cup") "milk"
        200g feta → Some(200.0) Some("g") "feta"
        3 large eggs → Some(3.0) None "large eggs"
        2-3 cloves garlic → None None "2-3 cloves garlic"
        Salt to taste → None None "Salt to taste"
        2 colheres de sopa de azeite → Some(2.0) Some("colheres de sopa") "azeite"
        3 כוסות קמח → Some(3.0) Some("כוסות") "קמח"
        1,5 l de água → Some(1.5) Some("l") "água"
    "#]]
    .assert_eq(&table);
}

#[test]
fn durations_are_read_in_their_usual_forms() {
    let cases = [
        "30",
        "30 minutes",
        "1 hour 30 minutes",
        "1h30m",
        "1.5 hours",
        "PT1H30M",
        "PT45M",
        "P1DT2H",
        "90 min",
        "2 horas",
        "soon",
    ];
    let table: String = cases.iter().map(|c| format!("{c} → {:?}\n", minutes(c))).collect();
    expect![[r#"
        30 → Some(30)
        30 minutes → Some(30)
        1 hour 30 minutes → Some(90)
        1h30m → Some(90)
        1.5 hours → Some(90)
        PT1H30M → Some(90)
        PT45M → Some(45)
        P1DT2H → Some(1560)
        90 min → Some(90)
        2 horas → Some(120)
        soon → None
    "#]]
    .assert_eq(&table);
}

/// Every sample recipe, every language: its Cooklang read back by the official parser (with and
/// without cooklang-rs's extensions) gives the same ingredients, quantities, units, steps, timers
/// and metadata.
#[test]
// A test reads the sample recipes from disk; the rule against IO is for the library (domain/clippy.toml).
#[allow(clippy::disallowed_methods)]
fn every_sample_recipe_survives_the_cooklang_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/recipes");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let (mut texts, mut failures) = (0, Vec::new());
    for path in paths {
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let (recipe, server) = validate(&doc, Source::ContentFile).unwrap();
        let slug = path.file_stem().unwrap().to_string_lossy().to_string();
        let published = Published { slug: slug.clone(), recipe, server };
        for lang in published.recipe.languages() {
            texts += 1;
            if let Err(why) = round_trip(&published, lang) {
                failures.push(format!("{slug} ({}): {why}", lang.code()));
            }
        }
    }
    assert!(texts >= 69, "the sample has {texts} texts");
    assert!(failures.is_empty(), "{} of {texts} texts differ:\n{}", failures.len(), failures.join("\n"));
}
