//! Validating a recipe document: every problem at once, each with its field path, before the
//! document is turned into the typed [`Recipe`].

use serde_json::{Map, Value};

use super::{
    Course, FLAGS, Lang, MAX_CREDIT_CHARS, MAX_CUISINE_CHARS, MAX_DIFFICULTY, MAX_INGREDIENTS, MAX_MINUTES,
    MAX_QUANTITY, MAX_SERVINGS, MAX_STEPS, MAX_TEXT_CHARS, MAX_TITLE_CHARS, MAX_UNIT_CHARS, MIN_QUANTITY,
    PHOTO_EXTENSIONS, Recipe, SERVER_FIELDS, SITE_OWNER, STEP_FLAGS, ServerFields,
};
use crate::Diagnostic;
use crate::clean::{self, TextKind};

/// Where a document comes from decides which fields it may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A file in the content repo: server-set fields (except `slug`, which is the file name) are allowed.
    ContentFile,
    /// An API body: server-set fields are ignored, so a client may send back what it read.
    Api,
}

/// Validates a recipe document and returns every problem, or the typed document and its server fields.
pub fn validate(value: &Value, source: Source) -> Result<(Recipe, ServerFields), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let Some(obj) = value.as_object() else {
        return Err(vec![Diagnostic::new("", "a recipe must be a JSON object")]);
    };
    let mut v = Validator { problems: &mut problems };

    for key in obj.keys() {
        let known = matches!(
            key.as_str(),
            "emoji"
                | "course"
                | "difficulty"
                | "prep_min"
                | "cook_min"
                | "servings"
                | "texts"
                | "licence"
                | "cuisine"
        ) || FLAGS.contains(&key.as_str());
        let server = SERVER_FIELDS.contains(&key.as_str());
        if source == Source::ContentFile && key == "slug" {
            v.push(key, "the slug is the file name; remove this field");
        } else if !known && !server {
            v.push(key, "unknown field");
        }
    }

    v.emoji(obj);
    match v.required(obj, "course").and_then(Value::as_str) {
        Some(code) if Course::parse(code).is_some() => {}
        Some(_) => v.push("course", format!("must be one of {}", course_list())),
        None if obj.contains_key("course") => v.push("course", "must be a string"),
        None => {}
    }
    v.integer(obj, "difficulty", 1, i64::from(MAX_DIFFICULTY));
    v.integer(obj, "prep_min", 0, MAX_MINUTES as i64);
    v.integer(obj, "cook_min", 0, MAX_MINUTES as i64);
    v.integer(obj, "servings", 1, MAX_SERVINGS as i64);
    for flag in FLAGS {
        v.integer(obj, flag, 0, 1);
    }
    if let Some(licence) = obj.get("licence") {
        match licence.as_str() {
            Some(id) if is_spdx_id(id) => {}
            _ => v.push("licence", "must be an SPDX licence id such as CC0-1.0 or CC-BY-4.0"),
        }
    }
    if let Some(cuisine) = obj.get("cuisine") {
        v.string_at(Some(cuisine), "cuisine", TextField::line(MAX_CUISINE_CHARS));
    }
    let flag = |name: &str| obj.get(name).and_then(Value::as_i64) == Some(1);
    if flag("vegan") && obj.get("vegetarian").and_then(Value::as_i64) == Some(0) {
        v.push("vegetarian", "a vegan recipe is vegetarian too: set it to 1");
    }
    if flag("vegan") && obj.get("dairy_free").and_then(Value::as_i64) == Some(0) {
        v.push("dairy_free", "a vegan recipe is dairy-free too: set it to 1");
    }
    v.texts(obj);

    if source == Source::ContentFile {
        v.server_fields(obj);
    }

    if !problems.is_empty() {
        return Err(problems);
    }
    let mut doc = obj.clone();
    doc.retain(|key, _| !SERVER_FIELDS.contains(&key.as_str()));
    let recipe: Recipe = serde_json::from_value(Value::Object(doc))
        .map_err(|err| vec![Diagnostic::new("", format!("unexpected shape: {err}"))])?;
    let server = match source {
        Source::Api => ServerFields::default(),
        Source::ContentFile => {
            let mut fields: Map<String, Value> = obj
                .iter()
                .filter(|(key, _)| SERVER_FIELDS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            fields.entry("owner").or_insert_with(|| Value::from(SITE_OWNER));
            fields.entry("version").or_insert_with(|| Value::from(1));
            serde_json::from_value(Value::Object(fields))
                .map_err(|err| vec![Diagnostic::new("", format!("server fields: {err}"))])?
        }
    };
    Ok((recipe, server))
}

fn course_list() -> String {
    Course::ALL.iter().map(|course| course.code()).collect::<Vec<_>>().join(", ")
}

/// An SPDX licence id: letters, digits, `.`, `-` and `+`, starting with a letter.
fn is_spdx_id(id: &str) -> bool {
    id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_alphabetic())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// What one text field of a recipe must be.
#[derive(Clone, Copy)]
struct TextField {
    max_chars: usize,
    non_empty: bool,
    kind: TextKind,
}

impl TextField {
    fn line(max_chars: usize) -> TextField {
        TextField { max_chars, non_empty: true, kind: TextKind::Line }
    }

    fn prose() -> TextField {
        TextField { max_chars: MAX_TEXT_CHARS, non_empty: true, kind: TextKind::Prose }
    }
}

struct Validator<'p> {
    problems: &'p mut Vec<Diagnostic>,
}

impl Validator<'_> {
    fn push(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.problems.push(Diagnostic::new(field, reason));
    }

    fn required<'v>(&mut self, obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
        let value = obj.get(key);
        if value.is_none() {
            self.push(key, "is required");
        }
        value
    }

    fn integer(&mut self, obj: &Map<String, Value>, key: &str, min: i64, max: i64) {
        self.integer_at(obj.get(key), key, min, max, true);
    }

    fn integer_at(&mut self, value: Option<&Value>, path: &str, min: i64, max: i64, required: bool) {
        match value {
            None if required => self.push(path, "is required"),
            None => {}
            Some(value) => match value.as_i64() {
                Some(n) if (min..=max).contains(&n) => {}
                Some(_) => self.push(path, format!("must be between {min} and {max}")),
                None => self.push(path, format!("must be a whole number from {min} to {max}")),
            },
        }
    }

    fn string_at(&mut self, value: Option<&Value>, path: &str, field: TextField) {
        match value {
            None => self.push(path, "is required"),
            Some(Value::String(s)) => {
                let n_chars = s.chars().count();
                if field.non_empty && s.trim().is_empty() {
                    self.push(path, "must not be empty");
                } else if n_chars > field.max_chars {
                    let max_chars = field.max_chars;
                    self.push(path, format!("is {n_chars} characters; at most {max_chars} are allowed"));
                } else if let Some(problem) = clean::check(path, s, field.kind) {
                    self.problems.push(problem);
                }
            }
            Some(_) => self.push(path, "must be a string"),
        }
    }

    fn emoji(&mut self, obj: &Map<String, Value>) {
        match self.required(obj, "emoji") {
            None => {}
            Some(Value::String(s)) => self.problems.extend(clean::emoji("emoji", s)),
            Some(_) => self.push("emoji", "must be a string: one emoji character, such as 🍲"),
        }
    }

    fn texts(&mut self, obj: &Map<String, Value>) {
        let Some(texts) = self.required(obj, "texts") else { return };
        let Some(texts) = texts.as_object() else {
            self.push("texts", "must be an object keyed by language code (en, he, pt)");
            return;
        };
        if texts.is_empty() {
            self.push("texts", "needs at least one language (en, he or pt)");
        }
        for (code, text) in texts {
            let path = format!("texts.{code}");
            let Some(lang) = Lang::parse(code) else {
                self.push(path, "unknown language; use en, he or pt");
                continue;
            };
            self.text(&path, lang, text);
        }
    }

    fn text(&mut self, path: &str, lang: Lang, text: &Value) {
        let Some(text) = text.as_object() else {
            self.push(path, "must be an object with title, summary, ingredients, steps and tips");
            return;
        };
        for key in text.keys() {
            if !matches!(key.as_str(), "title" | "summary" | "ingredients" | "steps" | "tips") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        self.string_at(text.get("title"), &format!("{path}.title"), TextField::line(MAX_TITLE_CHARS));
        if let Some(title) = text.get("title").and_then(Value::as_str)
            && !title.trim().is_empty()
            && !script_matches(lang, title)
        {
            let expected = if lang == Lang::He { "Hebrew letters" } else { "Latin letters" };
            self.push(format!("{path}.title"), format!("is not written in {} ({expected})", lang.code()));
        }
        self.string_at(text.get("summary"), &format!("{path}.summary"), TextField::prose());
        if text.contains_key("tips") {
            let tips = TextField { non_empty: false, ..TextField::prose() };
            self.string_at(text.get("tips"), &format!("{path}.tips"), tips);
        }
        self.list(text, path, "ingredients", MAX_INGREDIENTS, |v, p, item| v.ingredient(p, item));
        self.list(text, path, "steps", MAX_STEPS, |v, p, item| v.step(p, item));
    }

    fn list(
        &mut self,
        text: &Map<String, Value>,
        path: &str,
        key: &str,
        max: usize,
        mut each: impl FnMut(&mut Self, &str, &Value),
    ) {
        let path = format!("{path}.{key}");
        match text.get(key) {
            None => self.push(path, "is required"),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    self.push(&*path, "needs at least one entry");
                } else if items.len() > max {
                    self.push(&*path, format!("has {} entries; at most {max} are allowed", items.len()));
                }
                for (idx, item) in items.iter().enumerate() {
                    each(self, &format!("{path}[{idx}]"), item);
                }
            }
            Some(_) => self.push(path, "must be an array"),
        }
    }

    fn ingredient(&mut self, path: &str, item: &Value) {
        let Some(item) = item.as_object() else {
            self.push(path, "must be an object with q, i and optionally u and check");
            return;
        };
        for key in item.keys() {
            if !matches!(key.as_str(), "q" | "u" | "i" | "check") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        match item.get("q") {
            None => self.push(format!("{path}.q"), "is required (use 1 with a unit such as \"pinch\")"),
            Some(q) => match q.as_f64() {
                Some(q) if (MIN_QUANTITY..=MAX_QUANTITY).contains(&q) => {}
                _ => self.push(
                    format!("{path}.q"),
                    format!("must be a number from {MIN_QUANTITY} to {MAX_QUANTITY}"),
                ),
            },
        }
        if let Some(unit) = item.get("u") {
            self.string_at(Some(unit), &format!("{path}.u"), TextField::line(MAX_UNIT_CHARS));
        }
        self.string_at(item.get("i"), &format!("{path}.i"), TextField::line(MAX_TITLE_CHARS));
        match item.get("check") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                self.push(format!("{path}.check"), "leave it out rather than setting it to false")
            }
            Some(_) => self.push(format!("{path}.check"), "must be true, or absent"),
        }
    }

    fn step(&mut self, path: &str, item: &Value) {
        let Some(item) = item.as_object() else {
            self.push(path, "must be an object with t and optionally min and f");
            return;
        };
        for key in item.keys() {
            if !matches!(key.as_str(), "t" | "min" | "f") {
                self.push(format!("{path}.{key}"), "unknown field");
            }
        }
        self.string_at(item.get("t"), &format!("{path}.t"), TextField::prose());
        self.integer_at(item.get("min"), &format!("{path}.min"), 1, MAX_MINUTES as i64, false);
        match item.get("f") {
            None => {}
            Some(Value::Array(flags)) => {
                for (idx, flag) in flags.iter().enumerate() {
                    let flag_path = format!("{path}.f[{idx}]");
                    match flag.as_str() {
                        Some(name) if STEP_FLAGS.contains(&name) => {
                            if flags[..idx].contains(flag) {
                                self.push(flag_path, "is listed twice");
                            }
                        }
                        _ => self.push(flag_path, format!("must be one of {}", STEP_FLAGS.join(", "))),
                    }
                }
            }
            Some(_) => self.push(format!("{path}.f"), "must be an array of flags"),
        }
    }

    fn server_fields(&mut self, obj: &Map<String, Value>) {
        if let Some(owner) = obj.get("owner") {
            self.string_at(Some(owner), "owner", TextField::line(64));
        }
        for key in ["forked_from", "created_at", "updated_at"] {
            if let Some(value) = obj.get(key) {
                self.string_at(Some(value), key, TextField { non_empty: false, ..TextField::line(200) });
            }
        }
        if let Some(version) = obj.get("version") {
            self.integer_at(Some(version), "version", 1, i64::MAX, true);
        }
        if let Some(variant) = obj.get("variant_of") {
            let ok = variant.get("slug").is_some_and(Value::is_string)
                && variant
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| matches!(k, "gf" | "vegan" | "both"));
            if !ok {
                self.push("variant_of", "must be {\"slug\": …, \"kind\": \"gf\" | \"vegan\" | \"both\"}");
            }
        }
        if let Some(photo) = obj.get("photo") {
            self.photo(photo);
        }
        if let Some(generated) = obj.get("generated_by") {
            let ok = generated.get("model").is_some_and(Value::is_string)
                && generated.get("prompt_sha256").is_some_and(Value::is_string);
            if !ok {
                self.push("generated_by", "must be {\"model\": …, \"prompt_sha256\": …}");
            }
        }
    }

    /// A content file's `photo`: every problem of it, each at its own field.
    fn photo(&mut self, photo: &Value) {
        let Some(obj) = photo.as_object() else {
            self.push(
                "photo",
                "must be {\"file\": \"photos/<name>.jpg\", \"licence\": <SPDX id>, \"credit\": …}",
            );
            return;
        };
        for key in obj.keys().filter(|key| !matches!(key.as_str(), "file" | "licence" | "credit")) {
            self.push(format!("photo.{key}"), "unknown field");
        }
        match obj.get("file").map(Value::as_str) {
            None => self.push("photo.file", "is required"),
            Some(Some(file)) if is_photo_file(file) => {}
            Some(_) => self.push(
                "photo.file",
                format!(
                    "must name an image under photos/: lower-case letters, digits, `-`, `_` and `.`, ending in .{}",
                    PHOTO_EXTENSIONS.join(", .")
                ),
            ),
        }
        match obj.get("licence").map(Value::as_str) {
            None => {
                self.push("photo.licence", "is required: open data must say under which licence the photo is")
            }
            Some(Some(id)) if is_spdx_id(id) => {}
            Some(_) => self.push("photo.licence", "must be an SPDX licence id such as CC-BY-4.0 or CC0-1.0"),
        }
        match obj.get("credit") {
            None => self.push("photo.credit", "is required: open data must say whose photo it is"),
            credit => self.string_at(credit, "photo.credit", TextField::line(MAX_CREDIT_CHARS)),
        }
    }
}

/// `photos/<name>.<ext>`: one folder deep, a plain file name, an image extension.
fn is_photo_file(file: &str) -> bool {
    let Some(name) = file.strip_prefix("photos/") else { return false };
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    !stem.is_empty()
        && name.len() <= 120
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        && PHOTO_EXTENSIONS.contains(&ext)
}

/// Whether a title is written in the script its language uses.
pub fn script_matches(lang: Lang, text: &str) -> bool {
    let is_hebrew = |c: char| ('\u{05D0}'..='\u{05EA}').contains(&c);
    let letters = text.chars().filter(|c| c.is_alphabetic());
    match lang {
        Lang::He => letters.clone().any(is_hebrew),
        Lang::En | Lang::Pt => {
            letters.clone().any(|c| c.is_ascii_alphabetic() || ('\u{C0}'..='\u{24F}').contains(&c))
        }
    }
}
