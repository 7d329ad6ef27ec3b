//! Recipe validation: a good document passes, and every problem of a bad one is named at once.

use super::*;
use expect_test::{Expect, expect};
use serde_json::{Value, json};

fn check(doc: Value, expect: Expect) {
    let actual = match validate(&doc, Source::ContentFile) {
        Ok((recipe, server)) => format!("ok {} langs, owner {}", recipe.texts.len(), server.owner),
        Err(problems) => problems.iter().map(|p| format!("{p}\n")).collect(),
    };
    expect.assert_eq(&actual);
}

fn good() -> Value {
    json!({
        "emoji": "🥞", "course": "breakfast", "difficulty": 1, "prep_min": 10, "cook_min": 15,
        "servings": 4, "gf": 0, "vegan": 0, "vegetarian": 1, "dairy_free": 0, "nut_free": 1,
        "texts": {"en": {"title": "Pancakes", "summary": "Soft pancakes.",
            "ingredients": [{"q": 200, "u": "g", "i": "flour"}],
            "steps": [{"t": "Mix.", "min": 2, "f": ["hot"]}], "tips": ""}}
    })
}

#[test]
fn a_good_recipe_passes() {
    check(good(), expect!["ok 1 langs, owner commonplace"]);
}

#[test]
fn every_problem_is_reported_at_once() {
    let mut doc = good();
    doc["emoji"] = json!("ab");
    doc["course"] = json!("lunch");
    doc["difficulty"] = json!(5);
    doc["vegan"] = json!(1);
    doc["vegetarian"] = json!(0);
    doc["colour"] = json!("red");
    doc["texts"]["en"]["steps"][0]["f"] = json!(["fire", "hot", "hot"]);
    doc["texts"]["en"]["ingredients"][0]["check"] = json!(false);
    doc["texts"]["he"] = json!({"title": "Pancakes", "summary": "", "ingredients": [], "steps": []});
    doc["texts"]["fr"] = json!({});
    check(
        doc,
        expect![[r#"
            colour: unknown field
            emoji: must be exactly one emoji character, such as 🍲
            course: must be one of breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics
            difficulty: must be between 1 and 3
            vegetarian: a vegan recipe is vegetarian too: set it to 1
            dairy_free: a vegan recipe is dairy-free too: set it to 1
            texts.en.ingredients[0].check: leave it out rather than setting it to false
            texts.en.steps[0].f[0]: must be one of knife, hot, oven, blender, boil
            texts.en.steps[0].f[2]: is listed twice
            texts.fr: unknown language; use en, he or pt
            texts.he.title: is not written in he (Hebrew letters)
            texts.he.summary: must not be empty
            texts.he.ingredients: needs at least one entry
            texts.he.steps: needs at least one entry
        "#]],
    );
}

#[test]
fn unclean_text_is_refused_naming_its_field() {
    let mut doc = good();
    doc["emoji"] = json!("🍲\u{200B}");
    doc["owner"] = json!("cook\u{202E}");
    let en = &mut doc["texts"]["en"];
    en["title"] = json!("Pancakes\u{0}");
    en["summary"] = json!("Soft \u{202E}pancakes.");
    en["tips"] = json!("Ring the bell\u{7}");
    en["ingredients"][0]["u"] = json!("g\u{9B}");
    en["ingredients"][0]["i"] = json!("\u{FE0F}flour");
    en["steps"][0]["t"] = json!("Mix\u{1B}[2J.");
    check(
        doc,
        expect![[r#"
            emoji: must be exactly one emoji character, such as 🍲
            texts.en.title: character 9 is the control character U+0000; a single line takes none
            texts.en.summary: the bidirectional control U+202E at character 6 is not closed by U+202C in the same line
            texts.en.tips: character 14 is the control character U+0007; only newline and tab may appear
            texts.en.ingredients[0].u: character 2 is the control character U+009B; a single line takes none
            texts.en.ingredients[0].i: the variation selector U+FE0F at character 1 follows no character it can modify
            texts.en.steps[0].t: character 4 is the control character U+001B; only newline and tab may appear
            owner: character 5 is the bidirectional control U+202E; leave it out: the page isolates this text already
        "#]],
    );
}

#[test]
fn api_bodies_ignore_server_fields_but_content_files_keep_them() {
    let mut doc = good();
    doc["owner"] = json!("mallory");
    doc["version"] = json!(7);
    let (_, server) = validate(&doc, Source::Api).unwrap();
    assert_eq!(server.owner, SITE_OWNER);
    let (_, server) = validate(&doc, Source::ContentFile).unwrap();
    assert_eq!((server.owner.as_str(), server.version), ("mallory", 7));
}

#[test]
fn missing_fields_are_named() {
    check(
        json!({"texts": {"pt": {"title": "Caldo verde"}}}),
        expect![[r#"
            emoji: is required
            course: is required
            difficulty: is required
            prep_min: is required
            cook_min: is required
            servings: is required
            gf: is required
            vegan: is required
            vegetarian: is required
            dairy_free: is required
            nut_free: is required
            texts.pt.summary: is required
            texts.pt.ingredients: is required
            texts.pt.steps: is required
        "#]],
    );
}
