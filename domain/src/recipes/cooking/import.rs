//! Recipes in: a Cooklang file or a schema.org `Recipe` (JSON-LD) turned into a draft content
//! document, with every problem a contributor must fix listed once, each naming its field.
//!
//! Cooklang is parsed by cooklang-rs (the `cooklang` crate, the format's official parser), never by
//! hand. The reading rules that match [`super::cooklang::export`]: the ingredients are the file's
//! ingredient definitions in order; a step holding one ingredient and nothing else is an ingredient
//! line, not a step; a timer that ends a step after its sentence is the step's timer (`min`), not part
//! of its text; notes are tips. What the source cannot say (course, difficulty, emoji, the diet flags,
//! a quantity it leaves out) is asked for in the diagnostics, never guessed. The draft then goes
//! through [`crate::recipes::recipe::validate`], whose problems are added for every field not asked about
//! already.

use cooklang::model::{Content, Item};
use cooklang::{Converter, CooklangParser, Extensions};
use serde_json::{Map, Value, json};

use super::units;
use crate::Diagnostic;
use crate::recipes::recipe::{Course, FLAGS, Lang, Published, Recipe, Source, validate};
use crate::text;

/// A recipe document made from another format, and what is wrong with it or missing from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub doc: Value,
    pub problems: Vec<Diagnostic>,
}

impl Draft {
    fn new() -> Draft {
        Draft { doc: Value::Object(Map::new()), problems: Vec::new() }
    }

    fn ask(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.problems.push(Diagnostic::new(field, reason));
    }

    /// `value`, or, when the source has none, `None` and the question `reason` about `field`.
    fn or_ask<T>(&mut self, value: Option<T>, field: impl Into<String>, reason: &str) -> Option<T> {
        if value.is_none() {
            self.ask(field, reason);
        }
        value
    }

    fn set(&mut self, key: &str, value: Value) {
        self.doc[key] = value;
    }

    /// The draft with the recipe validator's problems added, except those about a field already
    /// asked for (its question says more than "missing").
    pub fn checked(mut self) -> Draft {
        if let Err(found) = validate(&self.doc, Source::ContentFile) {
            let asked: Vec<String> = self.problems.iter().map(|p| p.field.clone()).collect();
            for problem in found {
                let covered = asked.iter().any(|field| {
                    problem.field == *field
                        || problem.field.starts_with(&format!("{field}."))
                        || problem.field.starts_with(&format!("{field}["))
                });
                if !covered {
                    self.problems.push(problem);
                }
            }
        }
        self
    }
}

/// The one-line summary of the front matter keys a Cooklang file can carry.
const COURSES: &str =
    "breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics";

/// A `.cook` file as a draft recipe in one language. `lang` overrides the file's `locale`.
pub fn from_cooklang(source: &str, lang: Option<Lang>) -> Draft {
    let mut draft = Draft::new();
    // Every extension cooklang-rs has, so files written for CookCLI read too, except unit checking,
    // which needs its unit tables: timers' units are read here (`time_unit_minutes`).
    let parser = CooklangParser::new(Extensions::all() - Extensions::ADVANCED_UNITS, Converter::empty());
    let result = parser.parse(source);
    for error in result.report().errors() {
        let line = error.labels.first().map(|(span, _)| line_of(source, span.start())).unwrap_or(1);
        draft.ask("cooklang", format!("line {line}: {}", error.message));
    }
    let Some(recipe) = result.output() else { return draft };
    let meta = |key: &str| recipe.metadata.get(key).and_then(yaml_text);
    let lang = lang.or_else(|| meta("locale").as_deref().and_then(lang_of));
    let question =
        "which language is this? add `locale: en` (or he, pt-PT) to the front matter, or pass --lang";
    let Some(lang) = draft.or_ask(lang, "texts", question) else { return draft };
    let at = |field: &str| format!("texts.{}.{field}", lang.code());

    // Metadata.
    match meta("servings").as_deref().and_then(first_number) {
        Some(n) => draft.set("servings", json!(n)),
        None => draft.ask("servings", "how many does it serve? add `servings: 4` to the front matter"),
    }
    times(
        &mut draft,
        meta("prep time").or_else(|| meta("prep_time")),
        meta("cook time").or_else(|| meta("cook_time")),
        meta("time").or_else(|| meta("duration")),
    );
    match meta("course").or_else(|| meta("category")) {
        Some(course) => match course_of(&course) {
            Some(course) => draft.set("course", json!(course.code())),
            None => draft.ask("course", format!("`{course}` is not a course we know; use one of {COURSES}")),
        },
        None => draft.ask("course", format!("which course is it? add `course:` with one of {COURSES}")),
    }
    if let Some(cuisine) = meta("cuisine") {
        draft.set("cuisine", json!(cuisine));
    }
    match meta("difficulty").as_deref().and_then(difficulty_of) {
        Some(n) => draft.set("difficulty", json!(n)),
        None => draft.ask("difficulty", "how hard is it? add `difficulty: easy` (or medium, hard)"),
    }
    match recipe.metadata.get("diet") {
        Some(diet) => {
            let names: Vec<String> = yaml_list(diet);
            set_diets(&mut draft, &names, &FLAGS);
        }
        None => set_diets(&mut draft, &[], &[]),
    }
    match meta("emoji") {
        Some(emoji) => draft.set("emoji", json!(emoji)),
        None => draft.ask("emoji", "add `emoji:` with one emoji for the dish"),
    }
    if let Some(licence) = meta("license").or_else(|| meta("licence")) {
        draft.set("licence", json!(licence));
    }

    // Text.
    let mut text = Map::new();
    if let Some(title) =
        draft.or_ask(meta("title"), at("title"), "the file has no title; add `title:` to the front matter")
    {
        text.insert("title".into(), json!(title));
    }
    if let Some(summary) = draft.or_ask(
        meta("description").or_else(|| meta("introduction")),
        at("summary"),
        "the file has no description; add `description:` with a sentence or two",
    ) {
        text.insert("summary".into(), json!(summary));
    }
    let mut ingredients = Vec::new();
    for ingredient in recipe.ingredients.iter().filter(|i| i.relation.is_definition()) {
        let line = ingredients.len();
        let mut out = Map::new();
        let name = ingredient.display_name().into_owned();
        match ingredient.quantity.as_ref().map(|q| (q.value(), q.unit())) {
            Some((cooklang::Value::Number(n), unit)) => {
                out.insert("q".into(), quantity(n.value()));
                if let Some(unit) = unit {
                    out.insert("u".into(), json!(unit));
                }
            }
            Some((other, _)) => draft.ask(
                at(&format!("ingredients[{line}].q")),
                format!("`{name}` has the quantity `{other}`; give one number (`@{name}{{2%g}}`)"),
            ),
            None => draft.ask(
                at(&format!("ingredients[{line}].q")),
                format!("`{name}` has no quantity in the file; give one (`@{name}{{1%pinch}}`)"),
            ),
        }
        out.insert("i".into(), json!(name));
        ingredients.push(Value::Object(out));
    }
    let mut steps = Vec::new();
    let mut tips = Vec::new();
    for section in &recipe.sections {
        for content in &section.content {
            match content {
                Content::Text(note) => tips.push(note.trim().to_string()),
                Content::Step(step) => {
                    if let Some(step) = step_of(recipe, &step.items) {
                        steps.push(step);
                    }
                }
            }
        }
    }
    text.insert("ingredients".into(), json!(ingredients));
    text.insert("steps".into(), json!(steps));
    text.insert("tips".into(), json!(tips.join("\n")));
    draft.set("texts", json!({lang.code(): text}));
    draft.checked()
}

/// A quantity as content files write it: `2`, not `2.0`.
fn quantity(q: f64) -> Value {
    if q.fract() == 0.0 && q.abs() < 9.0e15 { json!(q as i64) } else { json!(q) }
}

/// A step of our own from a Cooklang step, or `None` for an ingredient line.
fn step_of(recipe: &cooklang::Recipe, items: &[Item]) -> Option<Value> {
    let meaningful: Vec<&Item> = items
        .iter()
        .filter(|item| !matches!(item, Item::Text { value } if value.trim().is_empty()))
        .collect();
    if let [Item::Ingredient { .. }] = meaningful.as_slice() {
        return None;
    }
    // A timer after the step's last sentence (blanks aside) is the step's own timer.
    let mut body: &[Item] = items;
    let mut min = None;
    let last =
        items.iter().rposition(|item| !matches!(item, Item::Text { value } if value.trim().is_empty()));
    if let Some(last) = last
        && let Item::Timer { index } = &items[last]
    {
        let before: String = render(recipe, &items[..last]);
        let ends_sentence = before.trim_end().chars().last().is_some_and(|c| !c.is_alphanumeric());
        if ends_sentence || before.trim().is_empty() {
            min = timer_minutes(&recipe.timers[*index]);
            body = &items[..last];
        }
    }
    let timers: Vec<usize> = body
        .iter()
        .filter_map(|item| if let Item::Timer { index } = item { Some(*index) } else { None })
        .collect();
    if min.is_none() && timers.len() == 1 {
        min = timer_minutes(&recipe.timers[timers[0]]);
    }
    let text: Vec<String> = render(recipe, body).split_whitespace().map(str::to_string).collect();
    let mut step = Map::new();
    step.insert("t".into(), json!(text.join(" ")));
    if let Some(min) = min {
        step.insert("min".into(), json!(min));
    }
    Some(Value::Object(step))
}

/// A step's items as text: ingredients and cookware by name, timers and quantities as written.
fn render(recipe: &cooklang::Recipe, items: &[Item]) -> String {
    let mut out = String::new();
    for item in items {
        match item {
            Item::Text { value } => out.push_str(value),
            Item::Ingredient { index } => out.push_str(&recipe.ingredients[*index].display_name()),
            Item::Cookware { index } => out.push_str(recipe.cookware[*index].display_name()),
            Item::Timer { index } => {
                let timer = &recipe.timers[*index];
                match (&timer.quantity, &timer.name) {
                    (Some(quantity), _) => out.push_str(&quantity.to_string()),
                    (None, Some(name)) => out.push_str(name),
                    (None, None) => {}
                }
            }
            Item::InlineQuantity { index } => out.push_str(&recipe.inline_quantities[*index].to_string()),
        }
    }
    out
}

/// A timer's length in whole minutes (at least one), when its unit is a time we know.
fn timer_minutes(timer: &cooklang::Timer) -> Option<u32> {
    let quantity = timer.quantity.as_ref()?;
    let cooklang::Value::Number(n) = quantity.value() else { return None };
    let per_unit = time_unit_minutes(quantity.unit().unwrap_or("min"))?;
    Some(((n.value() * per_unit).ceil() as u32).max(1))
}

/// Minutes in one of a time unit, in the three languages.
fn time_unit_minutes(unit: &str) -> Option<f64> {
    match text::fold(unit).trim_end_matches('.') {
        "m" | "min" | "mins" | "minute" | "minutes" | "minuto" | "minutos" | "דקה" | "דקות" | "דק" => {
            Some(1.0)
        }
        "h" | "hr" | "hrs" | "hour" | "hours" | "hora" | "horas" | "שעה" | "שעות" => Some(60.0),
        "s" | "sec" | "secs" | "second" | "seconds" | "segundo" | "segundos" | "שניות" => {
            Some(1.0 / 60.0)
        }
        "d" | "day" | "days" | "dia" | "dias" | "יום" | "ימים" => Some(24.0 * 60.0),
        _ => None,
    }
}

/// Minutes in a written duration: `30`, `30 minutes`, `1 hour 30 minutes`, `1h30m`, `1.5 hours`,
/// ISO 8601 `PT1H30M`.
pub fn minutes(written: &str) -> Option<u32> {
    let written = written.trim();
    if let Some(iso) = written.strip_prefix("PT").or_else(|| written.strip_prefix("pt")) {
        return iso_minutes(iso);
    }
    if let Some(days) = written.strip_prefix('P').and_then(|rest| rest.split_once('T')) {
        let whole_days: f64 = days.0.trim_end_matches('D').parse().ok()?;
        return Some(whole_days as u32 * 24 * 60 + iso_minutes(days.1)?);
    }
    let mut total = 0.0;
    let mut number: Option<f64> = None;
    let mut found = false;
    let spaced: String = written
        .chars()
        .flat_map(|c| if c.is_ascii_digit() || c == '.' || c == ',' { vec![c] } else { vec![' ', c, ' '] })
        .collect();
    let mut words = spaced.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if let Ok(n) = word.replace(',', ".").parse::<f64>() {
            if let Some(previous) = number {
                total += previous;
            }
            number = Some(n);
            continue;
        }
        let mut unit = word.to_string();
        // A unit split into letters by the spacing above (`min`, `hours`) joins back up.
        while let Some(next) = words.peek() {
            if next.chars().all(char::is_alphabetic) && next.parse::<f64>().is_err() {
                unit.push_str(next);
                words.next();
            } else {
                break;
            }
        }
        if let (Some(n), Some(per)) = (number, time_unit_minutes(&unit)) {
            total += n * per;
            number = None;
            found = true;
        }
    }
    if let Some(n) = number {
        total += n;
        found = true;
    }
    found.then(|| total.round() as u32)
}

fn iso_minutes(iso: &str) -> Option<u32> {
    let mut total = 0.0;
    let mut digits = String::new();
    for c in iso.chars() {
        match c {
            '0'..='9' | '.' => digits.push(c),
            'H' | 'h' => total += digits.parse::<f64>().ok()? * 60.0,
            'M' | 'm' => total += digits.parse::<f64>().ok()?,
            'S' | 's' => total += digits.parse::<f64>().ok()? / 60.0,
            _ => return None,
        }
        if !c.is_ascii_digit() && c != '.' {
            digits.clear();
        }
    }
    digits.is_empty().then(|| total.round() as u32)
}

/// Prep and cook times, from what the source gives.
fn times(draft: &mut Draft, prep: Option<String>, cook: Option<String>, total: Option<String>) {
    let prep = prep.as_deref().and_then(minutes);
    let cook = cook.as_deref().and_then(minutes);
    let total = total.as_deref().and_then(minutes);
    match (prep, cook, total) {
        (Some(prep), Some(cook), _) => {
            draft.set("prep_min", json!(prep));
            draft.set("cook_min", json!(cook));
        }
        (Some(prep), None, Some(total)) if total >= prep => {
            draft.set("prep_min", json!(prep));
            draft.set("cook_min", json!(total - prep));
        }
        (None, Some(cook), Some(total)) if total >= cook => {
            draft.set("prep_min", json!(total - cook));
            draft.set("cook_min", json!(cook));
        }
        (prep, cook, total) => {
            let said = total.map(|t| format!(" (it gives {t} minutes in all)")).unwrap_or_default();
            if prep.is_none() {
                draft.ask("prep_min", format!("how many minutes of preparation?{said} add a prep time"));
            } else if let Some(prep) = prep {
                draft.set("prep_min", json!(prep));
            }
            if cook.is_none() {
                draft.ask("cook_min", format!("how many minutes of cooking?{said} add a cook time"));
            } else if let Some(cook) = cook {
                draft.set("cook_min", json!(cook));
            }
        }
    }
}

/// The diet flags from the names a source lists; flags it cannot express (`missing`) are asked for.
fn set_diets(draft: &mut Draft, names: &[String], expressible: &[&str]) {
    let listed = |flag: &str| {
        let name =
            super::cooklang::diet_names().iter().find(|(f, _)| *f == flag).map(|(_, n)| *n).unwrap_or(flag);
        names.iter().any(|n| {
            let n = text::fold(n).replace([' ', '_'], "-");
            n == name || n == flag.replace('_', "-") || n == format!("{}diet", name.replace('-', ""))
        })
    };
    for flag in FLAGS {
        if expressible.contains(&flag) {
            draft.set(flag, json!(u8::from(listed(flag))));
        }
    }
    // A vegan dish has no dairy: a consequence, not a guess.
    if draft.doc.get("vegan") == Some(&json!(1)) {
        draft.set("dairy_free", json!(1));
        draft.set("vegetarian", json!(1));
    }
    for flag in FLAGS {
        if draft.doc.get(flag).is_none() {
            let name =
                super::cooklang::diet_names().iter().find(|(f, _)| *f == flag).map_or(flag, |(_, n)| *n);
            draft.ask(
                flag,
                format!(
                    "the source does not say whether it is {name}; set `{flag}` to 1 or 0 (in Cooklang, list the \
                     diets it suits: `diet: [{name}]`, or `diet: []`)"
                ),
            );
        }
    }
}

/// The language of a locale tag: `en`, `en_GB`, `he-IL`, `pt-PT`.
fn lang_of(locale: &str) -> Option<Lang> {
    let code = locale.split(['-', '_']).next()?.to_ascii_lowercase();
    match code.as_str() {
        "iw" => Some(Lang::He),
        code => Lang::parse(code),
    }
}

/// A course from a word a source uses for it.
fn course_of(written: &str) -> Option<Course> {
    let words: Vec<String> = text::words(written).collect();
    if let Some(course) = words.iter().find_map(|w| Course::parse(w)) {
        return Some(course);
    }
    const SYNONYMS: &[(&str, Course)] = &[
        ("brunch", Course::Breakfast),
        ("appetizer", Course::Starter),
        ("appetiser", Course::Starter),
        ("starters", Course::Starter),
        ("tapas", Course::Starter),
        ("entrada", Course::Starter),
        ("soups", Course::Soup),
        ("sopa", Course::Soup),
        ("salads", Course::Salad),
        ("salada", Course::Salad),
        ("dinner", Course::Main),
        ("lunch", Course::Main),
        ("mains", Course::Main),
        ("prato", Course::Main),
        ("sides", Course::Side),
        ("acompanhamento", Course::Side),
        ("desserts", Course::Dessert),
        ("sobremesa", Course::Dessert),
        ("bread", Course::Baking),
        ("cake", Course::Baking),
        ("bolo", Course::Baking),
        ("pao", Course::Baking),
        ("snacks", Course::Snack),
        ("beverage", Course::Drink),
        ("drinks", Course::Drink),
        ("bebida", Course::Drink),
        ("dressing", Course::Sauce),
        ("molho", Course::Sauce),
        ("stock", Course::Basics),
        ("broth", Course::Basics),
    ];
    words.iter().find_map(|w| SYNONYMS.iter().find(|(s, _)| s == w).map(|(_, c)| *c))
}

fn difficulty_of(written: &str) -> Option<u8> {
    match text::fold(written.trim()).as_str() {
        "1" | "easy" | "facil" | "קל" => Some(1),
        "2" | "medium" | "media" | "medio" | "בינוני" => Some(2),
        "3" | "hard" | "dificil" | "קשה" | "מאתגר" => Some(3),
        _ => None,
    }
}

/// The first whole number in a text: `4`, `4 servings`, `serves 4-6`.
fn first_number(written: &str) -> Option<u32> {
    let digits: String =
        written.chars().skip_while(|c| !c.is_ascii_digit()).take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

fn yaml_text(value: &serde_yaml::Value) -> Option<String> {
    match value {
        serde_yaml::Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn yaml_list(value: &serde_yaml::Value) -> Vec<String> {
    match value {
        serde_yaml::Value::Sequence(items) => items.iter().filter_map(yaml_text).collect(),
        other => yaml_text(other)
            .map(|text| text.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default(),
    }
}

fn line_of(source: &str, offset: usize) -> usize {
    source[..offset.min(source.len())].matches('\n').count() + 1
}

/// A schema.org `Recipe` (the JSON-LD object itself, a list or an `@graph` holding one) as a draft.
pub fn from_schema_org(json_ld: &Value, lang: Option<Lang>) -> Draft {
    let mut draft = Draft::new();
    let Some(recipe) = find_recipe(json_ld) else {
        draft.ask("@type", "no schema.org `Recipe` object in the JSON-LD");
        return draft;
    };
    let text_of = |key: &str| recipe.get(key).and_then(plain_text);
    let lang = lang.or_else(|| text_of("inLanguage").as_deref().and_then(lang_of));
    let question = "which language is this? the JSON-LD has no `inLanguage`; pass --lang en (or he, pt)";
    let Some(lang) = draft.or_ask(lang, "texts", question) else { return draft };
    let at = |field: &str| format!("texts.{}.{field}", lang.code());
    match recipe.get("recipeYield").and_then(first_of).as_deref().and_then(first_number) {
        Some(n) => draft.set("servings", json!(n)),
        None => draft.ask("servings", "`recipeYield` does not say how many it serves; set `servings`"),
    }
    times(&mut draft, text_of("prepTime"), text_of("cookTime"), text_of("totalTime"));
    let categories: Vec<String> = list_of(recipe.get("recipeCategory"));
    match categories.iter().find_map(|c| course_of(c)) {
        Some(course) => draft.set("course", json!(course.code())),
        None => draft.ask(
            "course",
            format!(
                "`recipeCategory` ({}) names no course we know; set `course` to one of {COURSES}",
                categories.join(", ")
            ),
        ),
    }
    if let Some(cuisine) = list_of(recipe.get("recipeCuisine")).into_iter().next() {
        draft.set("cuisine", json!(cuisine));
    }
    draft.ask("difficulty", "schema.org has no difficulty; set `difficulty` to 1 (easy), 2 or 3");
    draft.ask("emoji", "schema.org has no emoji; set `emoji` to one emoji for the dish");
    match recipe.get("suitableForDiet") {
        Some(diets) => {
            let names: Vec<String> = list_of(Some(diets))
                .iter()
                .map(|d| d.rsplit('/').next().unwrap_or(d).trim_end_matches("Diet").to_string())
                .map(|d| match d.as_str() {
                    "GlutenFree" => "gluten-free".to_string(),
                    other => other.to_lowercase(),
                })
                .collect();
            set_diets(&mut draft, &names, &["gf", "vegan", "vegetarian"]);
        }
        None => {
            set_diets(&mut draft, &[], &[]);
        }
    }
    match text_of("license") {
        Some(licence) => match spdx_of(&licence) {
            Some(id) => draft.set("licence", json!(id)),
            None => draft.ask("licence", format!("`{licence}` is not a licence we can name; set `licence` to its SPDX id")),
        },
        None => draft.ask(
            "licence",
            "the page states no licence; set `licence` to the SPDX id of one that lets us publish it (CC0-1.0 for your own)",
        ),
    }
    let mut text = Map::new();
    if let Some(title) = draft.or_ask(text_of("name"), at("title"), "the Recipe has no `name`") {
        text.insert("title".into(), json!(title));
    }
    if let Some(summary) = draft.or_ask(
        text_of("description"),
        at("summary"),
        "the Recipe has no `description`; write a sentence or two",
    ) {
        text.insert("summary".into(), json!(summary));
    }
    let mut ingredients = Vec::new();
    for (line, written) in
        list_of(recipe.get("recipeIngredient").or_else(|| recipe.get("ingredients"))).iter().enumerate()
    {
        let (q, u, name) = ingredient_line(written, lang);
        let mut out = Map::new();
        match q {
            Some(q) => {
                out.insert("q".into(), quantity(q));
            }
            None => draft.ask(
                at(&format!("ingredients[{line}].q")),
                format!("`{written}` gives no single quantity; set `q` (and `u`)"),
            ),
        }
        if let Some(u) = u {
            out.insert("u".into(), json!(u));
        }
        out.insert("i".into(), json!(name));
        ingredients.push(Value::Object(out));
    }
    let steps: Vec<Value> =
        instructions(recipe.get("recipeInstructions")).into_iter().map(|t| json!({"t": t})).collect();
    text.insert("ingredients".into(), json!(ingredients));
    text.insert("steps".into(), json!(steps));
    text.insert("tips".into(), json!(""));
    draft.set("texts", json!({lang.code(): text}));
    draft.checked()
}

fn is_recipe(object: &Map<String, Value>) -> bool {
    let is = |t: &str| t == "Recipe" || t.ends_with("schema.org/Recipe") || t == "schema:Recipe";
    match object.get("@type") {
        Some(Value::String(t)) => is(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(is),
        _ => false,
    }
}

fn find_recipe(value: &Value) -> Option<&Map<String, Value>> {
    match value {
        Value::Object(object) if is_recipe(object) => Some(object),
        Value::Object(object) => object.get("@graph").and_then(find_recipe),
        Value::Array(items) => items.iter().find_map(find_recipe),
        _ => None,
    }
}

/// Text of a JSON-LD value: a string, a number, or an object's `@value` / `name` / `text`.
fn plain_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => {
            Some(s.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|s| !s.is_empty())
        }
        Value::Number(n) => Some(n.to_string()),
        Value::Object(o) => {
            ["@value", "text", "name", "@id", "url"].iter().find_map(|k| o.get(*k).and_then(plain_text))
        }
        Value::Array(items) => items.iter().find_map(plain_text),
        _ => None,
    }
}

fn first_of(value: &Value) -> Option<String> {
    list_of(Some(value)).into_iter().next()
}

fn list_of(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(plain_text).collect(),
        Some(Value::String(s)) if s.contains(',') && !s.contains(' ') => {
            s.split(',').map(|s| s.trim().to_string()).collect()
        }
        Some(other) => plain_text(other).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Steps from `recipeInstructions`: text, a list of texts or `HowToStep`s, or `HowToSection`s of them.
fn instructions(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => {
            s.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
        }
        Some(Value::Array(items)) => items.iter().flat_map(|item| instructions(Some(item))).collect(),
        Some(Value::Object(o)) => match o.get("itemListElement") {
            Some(inner) => instructions(Some(inner)),
            None => o.get("text").or_else(|| o.get("name")).and_then(plain_text).into_iter().collect(),
        },
        _ => Vec::new(),
    }
}

/// The SPDX id of a licence a page names by URL or id.
fn spdx_of(written: &str) -> Option<String> {
    let lower = written.trim().trim_end_matches('/').to_ascii_lowercase();
    if lower.contains("publicdomain/zero/1.0") || lower == "cc0-1.0" || lower == "cc0" {
        return Some("CC0-1.0".into());
    }
    if let Some(rest) = lower.split("creativecommons.org/licenses/").nth(1) {
        let mut parts = rest.split('/');
        let (kind, version) = (parts.next()?, parts.next()?);
        return Some(format!("CC-{}-{version}", kind.to_ascii_uppercase()));
    }
    if let Some(id) = lower.strip_prefix("https://spdx.org/licenses/") {
        return Some(written.trim()[written.trim().len() - id.len()..].trim_end_matches(".html").to_string());
    }
    let id = written.trim();
    (id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+')) && id.contains('-'))
        .then(|| id.to_string())
}

/// A written ingredient line as quantity, unit and name: `2 cups flour`, `1 ½ tsp salt`, `200g feta`,
/// `2 colheres de sopa de azeite`, `3 כוסות קמח`. A line with no single number has no quantity.
pub fn ingredient_line(written: &str, lang: Lang) -> (Option<f64>, Option<String>, String) {
    let written = written.trim();
    let mut rest = written;
    let mut q: Option<f64> = None;
    loop {
        let trimmed = rest.trim_start();
        let token_end = trimmed
            .char_indices()
            .find(|(_, c)| {
                !(c.is_ascii_digit() || matches!(c, '.' | ',' | '/' | '½' | '⅓' | '⅔' | '¼' | '¾' | '⅛'))
            })
            .map(|(idx, _)| idx)
            .unwrap_or(trimmed.len());
        if token_end == 0 {
            break;
        }
        let Some(value) = number_of(&trimmed[..token_end]) else { break };
        q = Some(q.unwrap_or(0.0) + value);
        rest = &trimmed[token_end..];
        // A range (`2-3`) is no single quantity.
        if rest.starts_with(['-', '–']) {
            return (None, None, written.to_string());
        }
    }
    let Some(q) = q else { return (None, None, written.to_string()) };
    let words: Vec<&str> = rest.split_whitespace().collect();
    for take in (1..=3.min(words.len())).rev() {
        let candidate = words[..take].join(" ");
        if units::recognise(&candidate).is_some() || units::is_counted(&candidate) {
            let mut name = words[take..].join(" ");
            if lang == Lang::Pt {
                name = name.strip_prefix("de ").map(str::to_string).unwrap_or(name);
            }
            return (Some(q), Some(candidate), name);
        }
    }
    (Some(q), None, words.join(" "))
}

fn number_of(token: &str) -> Option<f64> {
    let glyph = |c: char| match c {
        '½' => Some(0.5),
        '⅓' => Some(1.0 / 3.0),
        '⅔' => Some(2.0 / 3.0),
        '¼' => Some(0.25),
        '¾' => Some(0.75),
        '⅛' => Some(0.125),
        _ => None,
    };
    let (digits, tail): (String, String) = token.chars().partition(|c| glyph(*c).is_none());
    let fraction: f64 = tail.chars().filter_map(glyph).sum();
    if digits.is_empty() {
        return Some(fraction);
    }
    let whole = match digits.split_once('/') {
        Some((num, den)) => num.parse::<f64>().ok()? / den.parse::<f64>().ok().filter(|d| *d != 0.0)?,
        None => digits.replace(',', ".").parse::<f64>().ok()?,
    };
    Some(whole + fraction)
}

/// Whether one language of a recipe comes back the same from its Cooklang: the file is standard
/// Cooklang (cooklang-rs reads it with no extension) and [`from_cooklang`] gives back the same
/// document, but for what Cooklang cannot hold (grown-up flags and gluten checks, which it carries
/// as comments). `Err` says where the first difference is.
pub fn round_trip(published: &Published, lang: Lang) -> Result<(), String> {
    let cook = super::cooklang::export(published, lang, "https://example.org");
    let canonical = CooklangParser::canonical().parse(&cook);
    if canonical.report().has_errors() || canonical.output().is_none() {
        return Err(format!("the canonical parser refuses it: {:?}", canonical.report()));
    }
    let draft = from_cooklang(&cook, None);
    if !draft.problems.is_empty() {
        return Err(format!("problems: {:?}", draft.problems));
    }
    let back: Recipe = serde_json::from_value(draft.doc.clone()).map_err(|e| e.to_string())?;
    let mut expected = published.recipe.clone();
    expected.texts.retain(|l, _| *l == lang);
    for text in expected.texts.values_mut() {
        // Cooklang has no form for these; the exporter writes them as comments.
        for step in &mut text.steps {
            step.f.clear();
            step.t = step.t.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        for ingredient in &mut text.ingredients {
            ingredient.check = false;
        }
        text.tips = text.tips.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
    }
    if back != expected {
        let (a, b) = (serde_json::to_value(&back).unwrap(), serde_json::to_value(&expected).unwrap());
        return Err(first_difference("", &a, &b));
    }
    Ok(())
}

/// Where two JSON values first differ, and how.
fn first_difference(at: &str, a: &Value, b: &Value) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let (va, vb) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                if va != vb {
                    return first_difference(&format!("{at}.{key}"), va, vb);
                }
            }
            String::new()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let idx = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(0);
            first_difference(&format!("{at}[{idx}]"), &x[idx], &y[idx])
        }
        _ => format!("{at}: read back {a}, expected {b}"),
    }
}

#[cfg(test)]
mod tests;
