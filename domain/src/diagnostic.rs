//! One problem with one field of a document, so a contributor can fix all of them in one pass.

use serde::{Deserialize, Serialize};

/// A validation problem: `field` is a JSON path such as `texts.he.steps[2].f[0]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub field: String,
    pub reason: String,
}

impl Diagnostic {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Diagnostic { field: field.into(), reason: reason.into() }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// Query parameters with each name once, in order. A repeated name is a problem rather than a
/// silent "last one wins", so a caller never gets an answer to a question they did not ask.
pub fn once_each<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<(&'a str, &'a str)> {
    let mut kept: Vec<(&'a str, &'a str)> = Vec::new();
    for (key, value) in params {
        if kept.iter().any(|(seen, _)| *seen == key) {
            problems.push(Diagnostic::new(key, "is given more than once"));
        } else {
            kept.push((key, value));
        }
    }
    kept
}
