//! The diet rules on ingredients in en, he and pt, the kinds and their slugs, flags and guidance.

use super::*;
use crate::recipes::recipe::{Ingredient, Lang, Recipe};
use expect_test::{Expect, expect};

fn ingredient(name: &str, check: bool) -> Ingredient {
    Ingredient { q: 1.0, u: None, i: name.to_string(), check }
}

/// Each line: the ingredient, then what the rules find in it.
fn check_table(lang: Lang, names: &[&str], expect: Expect) {
    let mut out = String::new();
    for name in names {
        let (name, check) = match name.strip_suffix(" [check]") {
            Some(name) => (name, true),
            None => (*name, false),
        };
        let found: Vec<String> = ingredient_findings(lang, &ingredient(name, check))
            .into_iter()
            .map(|(rule, word)| format!("{rule:?}({word})"))
            .collect();
        out.push_str(&format!("{name}: {}\n", if found.is_empty() { "-".into() } else { found.join(" ") }));
    }
    expect.assert_eq(&out);
}

#[test]
fn english_lexicons() {
    check_table(
        Lang::En,
        &[
            "plain flour",
            "gluten-free flour blend",
            "rice flour",
            "Soy sauce",
            "tamari",
            "rolled oats [check]",
            "gluten-free rolled oats [check]",
            "baking powder [check]",
            "whole milk",
            "oat milk",
            "soy milk",
            "unsalted butter",
            "peanut butter",
            "2 eggs, beaten",
            "eggplant",
            "flax egg",
            "chicken stock",
            "vegetable stock",
            "honey or maple syrup",
            "coconut cream",
            "chickpeas",
            "walnuts",
        ],
        expect![[r#"
            plain flour: Gluten(flour)
            gluten-free flour blend: -
            rice flour: -
            Soy sauce: Gluten(soy sauce)
            tamari: -
            rolled oats: Gluten(oats)
            gluten-free rolled oats: -
            baking powder: HiddenGluten(check)
            whole milk: Dairy(milk)
            oat milk: Gluten(oat)
            soy milk: -
            unsalted butter: Dairy(butter)
            peanut butter: Nut(peanut)
            2 eggs, beaten: OtherAnimal(eggs)
            eggplant: -
            flax egg: -
            chicken stock: Meat(chicken)
            vegetable stock: -
            honey or maple syrup: OtherAnimal(honey)
            coconut cream: -
            chickpeas: -
            walnuts: Nut(walnuts)
        "#]],
    );
}

#[test]
fn hebrew_lexicons_see_through_prefixes_and_niqqud() {
    check_table(
        Lang::He,
        &[
            "קמח לבן",
            "קמח אורז",
            "תערובת קמח ללא גלוטן",
            "וּפירורי לחם",
            "חלב",
            "משקה סויה",
            "חלב קוקוס",
            "והחמאה",
            "חמאה צמחית",
            "ביצים",
            "ביצת פשתן",
            "חזה עוף",
            "דבש",
            "שמן זית",
            "אבקת אפייה [check]",
            "אבקת אפייה ללא גלוטן [check]",
        ],
        expect![[r#"
            קמח לבן: Gluten(קמח)
            קמח אורז: -
            תערובת קמח ללא גלוטן: -
            וּפירורי לחם: Gluten(לחם)
            חלב: Dairy(חלב)
            משקה סויה: -
            חלב קוקוס: -
            והחמאה: Dairy(חמאה)
            חמאה צמחית: -
            ביצים: OtherAnimal(ביצים)
            ביצת פשתן: -
            חזה עוף: Meat(עוף)
            דבש: OtherAnimal(דבש)
            שמן זית: -
            אבקת אפייה: HiddenGluten(check)
            אבקת אפייה ללא גלוטן: -
        "#]],
    );
}

#[test]
fn portuguese_lexicons_fold_accents() {
    check_table(
        Lang::Pt,
        &[
            "farinha de trigo",
            "farinha de arroz",
            "mistura de farinhas sem glúten",
            "pão",
            "pão sem glúten",
            "leite",
            "leite de coco",
            "bebida de soja",
            "manteiga",
            "manteiga de amendoim",
            "ovos",
            "chouriço de carne [check]",
            "bacalhau",
            "mel",
            "azeite",
            "fermento em pó sem glúten [check]",
        ],
        expect![[r#"
            farinha de trigo: Gluten(trigo)
            farinha de arroz: -
            mistura de farinhas sem glúten: -
            pão: Gluten(pao)
            pão sem glúten: -
            leite: Dairy(leite)
            leite de coco: -
            bebida de soja: -
            manteiga: Dairy(manteiga)
            manteiga de amendoim: Nut(amendoim)
            ovos: OtherAnimal(ovos)
            chouriço de carne: HiddenGluten(check) Meat(carne)
            bacalhau: Meat(bacalhau)
            mel: OtherAnimal(mel)
            azeite: -
            fermento em pó sem glúten: -
        "#]],
    );
}

#[test]
fn kinds_and_slugs() {
    assert_eq!(DietKind::parse("both"), Some(DietKind::Both));
    assert_eq!(DietKind::parse("keto"), None);
    assert_eq!(variant_slug("pancakes", DietKind::Gf), "pancakes-gf");
    assert_eq!(variant_slug("pancakes", DietKind::Vegan), "pancakes-vegan");
    assert_eq!(variant_slug("pancakes", DietKind::Both), "pancakes-gf-vegan");
    assert!(variant_slug(&"a".repeat(80), DietKind::Both).len() <= crate::recipes::slug::MAX_LEN);
}

fn pancakes() -> Recipe {
    let value = serde_json::json!({
        "emoji": "🥞", "course": "breakfast", "difficulty": 1, "prep_min": 10, "cook_min": 15,
        "servings": 4, "gf": 1, "vegan": 1, "vegetarian": 1, "dairy_free": 1, "nut_free": 1,
        "texts": {"en": {"title": "Pancakes", "summary": "Soft.",
            "ingredients": [{"q": 200, "u": "g", "i": "plain flour"}, {"q": 2, "i": "eggs"},
                            {"q": 300, "u": "ml", "i": "milk"}],
            "steps": [{"t": "Mix."}]}}
    });
    crate::recipes::recipe::validate(&value, crate::recipes::recipe::Source::Api).unwrap().0
}

#[test]
fn flags_claimed_falsely_are_cleared() {
    let mut recipe = pancakes();
    assert!(!satisfies(&recipe, DietKind::Gf));
    set_flags(&mut recipe, None);
    assert_eq!(
        (recipe.gf, recipe.vegan, recipe.vegetarian, recipe.dairy_free, recipe.nut_free),
        (0, 0, 1, 0, 1)
    );
    let problems: Vec<String> = check(&recipe, DietKind::Both).iter().map(|p| p.to_string()).collect();
    expect![[r#"
        [
            "texts.en.ingredients[0].i: `plain flour` contains gluten (flour)",
            "texts.en.ingredients[1].i: `eggs` is not vegan (eggs)",
            "texts.en.ingredients[2].i: `milk` is not vegan (milk)",
        ]
    "#]]
    .assert_debug_eq(&problems);
}

#[test]
fn guidance_names_the_table_substitute() {
    let lines = guidance(&pancakes(), DietKind::Vegan);
    expect![[r#"
        [
            "[en] `eggs` → use flax eggs (per egg: 1 tbsp ground flaxseed + 3 tbsp water)",
            "[en] `milk` → use soy milk",
        ]
    "#]]
    .assert_debug_eq(&lines);
}
