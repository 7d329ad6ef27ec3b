//! Content problems where people and tools can find them: each names its file and, when it is about
//! the file's text, the line and column of its field.
//!
//! `domain` validates a parsed `serde_json::Value` and names fields by path (`texts.en.steps[2].f[0]`);
//! serde_json keeps no positions, so a problem file is parsed once more with dprint's `jsonc-parser`,
//! which keeps every node's byte range, and the path is walked down that tree. Only files with problems
//! pay for the second parse. Columns count characters (Unicode scalar values) from 1, like rustc's, so
//! a Hebrew line places the cursor where an editor shows it.
//!
//! Two printed forms: `file:line:col: field: reason` (what compilers print, so editors and terminals
//! jump to it) and GitHub Actions workflow commands (`::error file=…,line=…,col=…::…`), which a pull
//! request shows on the file and line.

use std::fmt;
use std::path::{Component, PathBuf};

use domain::Diagnostic;
use jsonc_parser::ast::Value;
use jsonc_parser::common::Ranged;

use crate::source::{ContentFile, Source};

/// A line and a column, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub col: usize,
}

/// One content problem. `file` is relative to the content folder; `at` is absent when the problem
/// is about a file's name or a file that is missing rather than about its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub file: String,
    pub at: Option<Position>,
    pub field: String,
    pub reason: String,
}

impl Problem {
    /// A problem with a file or folder as a whole.
    pub fn whole(file: impl Into<String>, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Problem { file: file.into(), at: None, field: field.into(), reason: reason.into() }
    }

    /// A file that is not JSON, or not of the expected shape, at the place serde_json stopped.
    pub fn json(file: &ContentFile, err: &serde_json::Error) -> Self {
        let said = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let reason = said.strip_suffix(&suffix).unwrap_or(&said).to_string();
        // serde_json counts the column in bytes and points at the byte it stopped on; 0 is the start
        // of a line it had just begun (such as the end of the file after a newline).
        let text = String::from_utf8_lossy(&file.bytes);
        let lines = Lines::of(&text);
        let at = lines.position(lines.start(err.line()) + err.column().saturating_sub(1));
        Problem { file: file.path.clone(), at: Some(at), field: "(json)".into(), reason }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.field.is_empty() { "(document)" } else { &self.field };
        match self.at {
            Some(Position { line, col }) => write!(f, "{}:{line}:{col}: {field}: {}", self.file, self.reason),
            None => write!(f, "{}: {field}: {}", self.file, self.reason),
        }
    }
}

/// Places each diagnostic of one JSON file at its field: a property at its name, an array element
/// at its first character, and a field that is missing at the object that lacks it.
pub fn located(file: &ContentFile, diagnostics: impl IntoIterator<Item = Diagnostic>) -> Vec<Problem> {
    let text = String::from_utf8_lossy(&file.bytes);
    let parsed = jsonc_parser::parse_to_ast(&text, &Default::default(), &Default::default());
    let root = parsed.as_ref().ok().and_then(|parsed| parsed.value.as_ref());
    let lines = Lines::of(&text);
    diagnostics
        .into_iter()
        .map(|diagnostic| {
            let offset = root.map_or(0, |root| offset_of(root, &diagnostic.field));
            Problem {
                file: file.path.clone(),
                at: Some(lines.position(offset)),
                field: diagnostic.field,
                reason: diagnostic.reason,
            }
        })
        .collect()
}

/// The byte offset of the deepest node of `field` (a path such as `texts.en.steps[2].f[0]`) that the
/// document has. A key may itself hold `.` or `[`, so at each object the longest key that the rest of
/// the path starts with wins.
fn offset_of(root: &Value, field: &str) -> usize {
    let mut node = root;
    let mut offset = root.range().start;
    let mut rest = field;
    let mut at_root = true;
    while !rest.is_empty() {
        match node {
            Value::Object(object) => {
                let path = if at_root { Some(rest) } else { rest.strip_prefix('.') };
                let Some(path) = path else { break };
                let ends_key = |key: &str| {
                    path.starts_with(key)
                        && matches!(path[key.len()..].chars().next(), None | Some('.' | '['))
                };
                let Some(prop) = object
                    .properties
                    .iter()
                    .filter(|prop| ends_key(prop.name.as_str()))
                    .max_by_key(|prop| prop.name.as_str().len())
                else {
                    break;
                };
                offset = prop.name.range().start;
                rest = &path[prop.name.as_str().len()..];
                node = &prop.value;
            }
            Value::Array(array) => {
                let Some((idx, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) else {
                    break;
                };
                let Some(element) = idx.parse::<usize>().ok().and_then(|idx| array.elements.get(idx)) else {
                    break;
                };
                offset = element.range().start;
                rest = after;
                node = element;
            }
            _ => break,
        }
        at_root = false;
    }
    offset
}

/// Where each line of a text starts, so a file with thousands of problems (a long transcript) finds
/// each position without rescanning the text.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn of(text: &'t str) -> Self {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(idx, _)| idx + 1)).collect();
        Lines { text, starts }
    }

    /// The byte offset where line `line` (from 1) starts; the end of the text for a line past it.
    fn start(&self, line: usize) -> usize {
        self.starts.get(line.saturating_sub(1)).copied().unwrap_or(self.text.len())
    }

    /// The line and character column of a byte offset (rounded down to a character boundary).
    fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_idx = self.starts.partition_point(|&start| start <= offset) - 1;
        let col = self.text[self.starts[line_idx]..offset].chars().count() + 1;
        Position { line: line_idx + 1, col }
    }
}

/// How `builder check` and `builder build` print problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `file:line:col: field: reason`, one per line.
    Text,
    /// GitHub Actions annotations: `::error file=…,line=…,col=…::field: reason`.
    Github,
}

/// Prints every problem on stdout with paths as the caller can open them (the content folder joined
/// on), and the count on stderr.
pub fn print(source: &Source, format: Format, problems: &[Problem]) {
    for problem in problems {
        println!("{}", render(source, format, problem));
    }
    eprintln!("{} problem(s); nothing was written", problems.len());
}

/// The problems as text lines, for an error message.
pub fn lines(source: &Source, problems: &[Problem]) -> String {
    problems.iter().map(|problem| render(source, Format::Text, problem)).collect::<Vec<_>>().join("\n")
}

fn render(source: &Source, format: Format, problem: &Problem) -> String {
    let file = shown_path(source, &problem.file);
    match format {
        Format::Text => Problem { file, ..problem.clone() }.to_string(),
        Format::Github => {
            let mut properties = format!("file={}", escape_property(&file));
            if let Some(Position { line, col }) = problem.at {
                properties.push_str(&format!(",line={line},col={col}"));
            }
            let field = if problem.field.is_empty() { "(document)" } else { &problem.field };
            format!("::error {properties}::{}", escape_data(&format!("{field}: {}", problem.reason)))
        }
    }
}

/// A content file's path as seen from where the builder runs: the content folder, or for a git
/// source the repository and the content's place in it, joined on (without `./` parts), so an
/// annotation names the file relative to a repository checked out in the working directory.
fn shown_path(source: &Source, file: &str) -> String {
    let joined: PathBuf = match source {
        Source::WorkTree(dir) => dir.join(file),
        Source::Git { repo, path, .. } => repo.join(path).join(file),
    };
    let parts: PathBuf = joined.components().filter(|part| *part != Component::CurDir).collect();
    parts.to_string_lossy().into_owned()
}

/// Workflow command data escaping (what `@actions/core` does), so a reason cannot end the command.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, fields: &[&str], expect: expect_test::Expect) {
        let file = ContentFile { path: "recipes/x.json".into(), bytes: text.as_bytes().to_vec() };
        let problems = located(&file, fields.iter().map(|field| Diagnostic::new(*field, "is wrong")));
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect.assert_eq(&shown.join("\n"));
    }

    #[test]
    fn fields_are_placed_at_their_names_elements_or_the_object_that_lacks_them() {
        let text = r#"{
  "course": "lunch",
  "texts": {
    "he": {"title": "חומוס", "steps": [{"t": "x"}, {"t": "y", "f": ["boil", "toaster"]}]}
  },
  "a.b": {"c": 1}
}"#;
        check(
            text,
            &["course", "texts.he.steps[1].f[1]", "texts.he.steps[0].min", "texts.he.steps[7]", "a.b.c", ""],
            expect_test::expect![[r#"
                recipes/x.json:2:3: course: is wrong
                recipes/x.json:4:77: texts.he.steps[1].f[1]: is wrong
                recipes/x.json:4:40: texts.he.steps[0].min: is wrong
                recipes/x.json:4:30: texts.he.steps[7]: is wrong
                recipes/x.json:6:11: a.b.c: is wrong
                recipes/x.json:1:1: (document): is wrong"#]],
        );
    }

    #[test]
    fn a_json_syntax_error_keeps_serde_jsons_place_in_characters() {
        let text = "{\"title\": \"חומוס\" \"x\"}";
        let err = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let file = ContentFile { path: "recipes/x.json".into(), bytes: text.as_bytes().to_vec() };
        expect_test::expect!["recipes/x.json:1:19: (json): expected `,` or `}`"]
            .assert_eq(&Problem::json(&file, &err).to_string());
        let err = serde_json::from_str::<serde_json::Value>("{\n").unwrap_err();
        let file = ContentFile { path: "recipes/x.json".into(), bytes: b"{\n".to_vec() };
        expect_test::expect!["recipes/x.json:2:1: (json): EOF while parsing an object"]
            .assert_eq(&Problem::json(&file, &err).to_string());
    }

    #[test]
    fn github_annotations_escape_what_would_end_the_command() {
        let source = Source::Git { repo: ".".into(), rev: "HEAD".into(), path: "content".into() };
        let problem = Problem {
            file: "recipes/a,b.json".into(),
            at: Some(Position { line: 3, col: 7 }),
            field: "texts.en.title".into(),
            reason: "is 100% wrong:\nfix it".into(),
        };
        expect_test::expect![
            "::error file=content/recipes/a%2Cb.json,line=3,col=7::texts.en.title: is 100%25 wrong:%0Afix it"
        ]
        .assert_eq(&render(&source, Format::Github, &problem));
        let whole = Problem::whole("shows/x", "(folder)", "missing");
        expect_test::expect!["::error file=content/shows/x::(folder): missing"].assert_eq(&render(
            &source,
            Format::Github,
            &whole,
        ));
    }
}
