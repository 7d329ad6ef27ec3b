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
