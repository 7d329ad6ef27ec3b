//! Cooklang out: one language of a recipe as a `.cook` file (<https://cooklang.org/docs/spec/>).
//!
//! Metadata goes in YAML front matter (title, description, servings, times, course, cuisine,
//! difficulty, diet, locale, licence, source URL, author, emoji). Our recipes list their
//! ingredients apart from their steps, and Cooklang has no such list: so the file opens with a
//! section of ingredient lines, each a paragraph holding one ingredient and nothing else (`@strong
//! white bread flour{500%g}`), then a section of the steps, each a paragraph with its text as
//! written and, when it has a timer, the timer at its end (`~{10%min}`). Tips close the file as a
//! note. Grown-up flags and gluten checks have no Cooklang form: they are comments, which a parser
//! drops and a reader sees.
//!
//! The reading rule that brings this back, which `builder import-recipe` applies to any `.cook`
//! file: a step made of one ingredient and nothing else is an ingredient line, not a step; a timer
//! that ends a step is that step's timer, not part of its text. Special characters in text (`@ # ~
//! { } %`, comment and block openers, a line's first `>` or `=`) are escaped with a backslash, which
//! the official parser (cooklang-rs) reads back as the character. Only standard Cooklang is written:
//! no extension (modifiers, aliases, notes after a quantity) is needed to read it.

use std::fmt::Write as _;

use crate::recipes::recipe::{Flag, Ingredient, Lang, Published, Step};

/// The words the file's two sections are named by.
fn section_names(lang: Lang) -> (&'static str, &'static str) {
    match lang {
        Lang::En => ("Ingredients", "Steps"),
        Lang::He => ("מצרכים", "אופן ההכנה"),
        Lang::Pt => ("Ingredientes", "Preparação"),
    }
}

/// Cooklang's own name of a diet flag (as its metadata conventions write them).
const DIETS: [(&str, &str); 5] = [
    (Flag::Gf.key(), "gluten-free"),
    (Flag::Vegan.key(), "vegan"),
    (Flag::Vegetarian.key(), "vegetarian"),
    (Flag::DairyFree.key(), "dairy-free"),
    (Flag::NutFree.key(), "nut-free"),
];

/// The Cooklang diet names of a recipe's flags, for the importer too.
pub fn diet_names() -> &'static [(&'static str, &'static str)] {
    &DIETS
}

/// The difficulty words the front matter uses (1–3).
pub const DIFFICULTIES: [&str; 3] = ["easy", "medium", "hard"];

/// The unit a step's timer is written in: cooklang-rs knows it as minutes.
pub const TIMER_UNIT: &str = "min";

/// One language of a recipe as Cooklang; `site` is the origin its source URL starts with
/// (`https://example.org`), or empty for a path alone.
pub fn export(published: &Published, lang: Lang, site: &str) -> String {
    let recipe = &published.recipe;
    let (lang, text) = recipe.text_for(lang);
    let mut out = String::from("---\n");
    let mut field = |key: &str, value: String| {
        let _ = writeln!(out, "{key}: {value}");
    };
    field("title", yaml_string(&text.title));
    field("description", yaml_string(&text.summary));
    field("servings", recipe.servings.to_string());
    field("prep time", format!("{} minutes", recipe.prep_min));
    field("cook time", format!("{} minutes", recipe.cook_min));
    field("time", format!("{} minutes", recipe.total_min()));
    field("course", recipe.course.code().to_string());
    if let Some(cuisine) = &recipe.cuisine {
        field("cuisine", yaml_string(cuisine));
    }
    field("difficulty", DIFFICULTIES[usize::from(recipe.difficulty.clamp(1, 3)) - 1].to_string());
    let diets: Vec<String> = DIETS
        .iter()
        .zip(Flag::ALL)
        .filter(|(_, flag)| recipe.flag(*flag))
        .map(|((_, name), _)| yaml_string(name))
        .collect();
    field("diet", format!("[{}]", diets.join(", ")));
    field("emoji", yaml_string(&recipe.emoji));
    field("locale", lang.bcp47().to_string());
    field("license", yaml_string(&recipe.licence));
    field("source", yaml_string(&format!("{site}/r/{}", published.slug)));
    field("author", yaml_string(&published.server.owner));
    field("version", published.server.version.to_string());
    out.push_str("---\n");

    let (ingredients_title, steps_title) = section_names(lang);
    let _ = writeln!(out, "\n= {ingredients_title}\n");
    for ingredient in &text.ingredients {
        out.push_str(&ingredient_line(ingredient));
        out.push_str("\n\n");
    }
    let _ = writeln!(out, "= {steps_title}\n");
    for step in &text.steps {
        out.push_str(&step_paragraph(step));
        out.push_str("\n\n");
    }
    if !text.tips.trim().is_empty() {
        for line in text.tips.lines().filter(|line| !line.trim().is_empty()) {
            let _ = writeln!(out, "> {}", escape(line.trim(), false));
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// `@name{q%unit}`, and a comment when the ingredient can hide gluten.
fn ingredient_line(ingredient: &Ingredient) -> String {
    let mut line = format!("@{}{{{}", escape(ingredient.i.trim(), true), number(ingredient.q));
    if let Some(unit) = &ingredient.u {
        let _ = write!(line, "%{}", escape(unit, false));
    }
    line.push('}');
    if ingredient.check {
        line.push_str(" -- check: can hide gluten");
    }
    line
}

/// A step's text on one line, its timer at the end, its grown-up flags in a comment.
fn step_paragraph(step: &Step) -> String {
    let text: Vec<&str> = step.t.split_whitespace().collect();
    let mut paragraph = escape(&text.join(" "), false);
    if let Some(min) = step.min {
        let _ = write!(paragraph, " ~{{{min}%{TIMER_UNIT}}}");
    }
    if !step.f.is_empty() {
        let _ = write!(paragraph, " -- grown-up: {}", step.f.join(", "));
    }
    paragraph
}

/// A quantity as Cooklang reads it back exactly: `2`, `1.5`, `0.3333333333333333`.
fn number(q: f64) -> String {
    if q.fract() == 0.0 && q.abs() < 9.0e15 { format!("{}", q as i64) } else { format!("{q}") }
}

/// Text with every character Cooklang would read as markup escaped. In a name, a leading modifier
/// character (`- & ? + =`, cooklang-rs extensions) is escaped too.
fn escape(text: &str, name: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous: Option<char> = None;
    for (idx, c) in text.chars().enumerate() {
        let special = match c {
            '@' | '#' | '~' | '{' | '}' | '%' | '\\' => true,
            // `--` opens a comment, `[-` a block comment, `-]` closes one.
            '-' => previous == Some('-') || previous == Some('['),
            ']' => previous == Some('-'),
            '>' | '=' => idx == 0,
            '&' | '?' | '+' => name && idx == 0,
            _ => false,
        } || (name && idx == 0 && c == '-');
        if special {
            out.push('\\');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// A YAML double-quoted scalar: JSON's string syntax is a subset of it.
fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipes::recipe::{Source, validate};
    use expect_test::expect;
    use serde_json::json;

    #[test]
    fn a_recipe_in_cooklang() {
        let doc = json!({
            "emoji": "🍞", "course": "baking", "difficulty": 2, "prep_min": 30, "cook_min": 30, "servings": 12,
            "gf": 0, "vegan": 0, "vegetarian": 1, "dairy_free": 1, "nut_free": 1,
            "texts": {"en": {
                "title": "Challah: \"the\" loaf", "summary": "Soft and sweet.",
                "ingredients": [
                    {"q": 500, "u": "g", "i": "strong white bread flour"},
                    {"q": 1.5, "u": "tsp", "i": "salt"},
                    {"q": 2, "i": "eggs, plus 1 more for glazing"},
                    {"q": 1, "u": "tbsp", "i": "soy sauce", "check": true},
                    {"q": 0.25, "u": "cup", "i": "-odd {name} @home"},
                ],
                "steps": [
                    {"t": "Mix the flour -- and salt -- at 100% speed; email a@b.c."},
                    {"t": "Knead until smooth.", "min": 10},
                    {"t": "> Bake until golden.", "min": 30, "f": ["oven", "hot"]},
                ],
                "tips": "Braid with children.\nCover with foil if it browns."
            }}
        });
        let (recipe, server) = validate(&doc, Source::ContentFile).unwrap();
        let published = Published { slug: "challah".into(), recipe, server };
        expect![[r#"
            ---
            title: "Challah: \"the\" loaf"
            description: "Soft and sweet."
            servings: 12
            prep time: 30 minutes
            cook time: 30 minutes
            time: 60 minutes
            course: baking
            difficulty: medium
            diet: ["vegetarian", "dairy-free", "nut-free"]
            emoji: "🍞"
            locale: en
            license: "CC0-1.0"
            source: "https://recipes.example.org/r/challah"
            author: "commonplace"
            version: 1
            ---

            = Ingredients

            @strong white bread flour{500%g}

            @salt{1.5%tsp}

            @eggs, plus 1 more for glazing{2}

            @soy sauce{1%tbsp} -- check: can hide gluten

            @\-odd \{name\} \@home{0.25%cup}

            = Steps

            Mix the flour -\- and salt -\- at 100\% speed; email a\@b.c.

            Knead until smooth. ~{10%min}

            \> Bake until golden. ~{30%min} -- grown-up: oven, hot

            > Braid with children.
            > Cover with foil if it browns.
        "#]]
        .assert_eq(&export(&published, Lang::En, "https://recipes.example.org"));
    }
}
