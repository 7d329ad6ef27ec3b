//! `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): what the header may hold, how long
//! a key is remembered, and the fingerprint that tells a retry from another request under the same
//! key. The edge stores keys in D1 per account (`migrations/0007_…`) and decides replay, 409 and 422.

use sha2::{Digest, Sha256};

use crate::Diagnostic;

/// The header's name, as routes, OpenAPI and the problems name it.
pub const HEADER: &str = "Idempotency-Key";
/// The most characters a key may have between its quotes: room for a UUID or a ULID with a prefix.
pub const MAX_KEY_CHARS: usize = 255;
/// How long a key is remembered after its first use: a client retries within minutes, a day covers
/// a retry after a night's outage.
pub const KEY_LIFETIME_S: u64 = 24 * 3600;
/// How long a request holding a key may run before another may take the key over: longer than any
/// write, an AI one included (two upstream attempts of 30 s and storing), so only a request that
/// died loses its key.
pub const IN_FLIGHT_S: u64 = 120;

/// The key an `Idempotency-Key` header holds: a Structured Field string (RFC 8941 §3.3.3), as the
/// draft defines it — printable ASCII in double quotes, `\"` and `\\` escaped — of 1 to
/// [`MAX_KEY_CHARS`] characters. Most clients send the key bare (`Idempotency-Key: 8e03…`, as
/// Stripe's and most HTTP libraries do): a bare key of printable ASCII without spaces, quotes or
/// backslashes is the same key as its quoted form.
pub fn parse_key(header: &str) -> Result<String, Diagnostic> {
    let invalid = |why: &str| Diagnostic::new(HEADER, why);
    let header = header.trim_matches(' ');
    if !header.starts_with('"') {
        if header.is_empty() {
            return Err(invalid("must not be empty"));
        }
        if !header.chars().all(|c| matches!(c, '!'..='~') && c != '"' && c != '\\') {
            return Err(invalid(
                "must be a quoted string, such as \"8e03978e-40d5-43e8-bc93-6894a57f9324\", or that key bare, \
                 of printable ASCII without spaces, quotes or backslashes",
            ));
        }
        if header.chars().count() > MAX_KEY_CHARS {
            return Err(invalid(&format!("must be at most {MAX_KEY_CHARS} characters")));
        }
        return Ok(header.to_string());
    }
    let inner = header.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')).ok_or_else(|| {
        invalid("must be a quoted string, such as \"8e03978e-40d5-43e8-bc93-6894a57f9324\", or that key bare")
    })?;
    let mut key = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped @ ('"' | '\\')) => key.push(escaped),
                _ => return Err(invalid("may escape only \" and \\ with a backslash")),
            },
            '"' => return Err(invalid("must escape a \" inside the key as \\\"")),
            ' '..='~' => key.push(c),
            _ => return Err(invalid("may hold only printable ASCII characters")),
        }
    }
    if key.is_empty() {
        return Err(invalid("must not be empty"));
    }
    if key.chars().count() > MAX_KEY_CHARS {
        return Err(invalid(&format!("must be at most {MAX_KEY_CHARS} characters")));
    }
    Ok(key)
}

/// [`parse_key`]'s rule as a JSON Schema pattern, for `openapi.json`: a quoted string of 1 to
/// [`MAX_KEY_CHARS`] characters, each printable ASCII but `"` and `\`, or one of those escaped; or
/// a bare key of 1 to [`MAX_KEY_CHARS`] printable characters but space, `"` and `\`.
pub fn key_pattern() -> String {
    format!(
        r#"^("([\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\]){{1,{MAX_KEY_CHARS}}}"|[\x21\x23-\x5b\x5d-\x7e]{{1,{MAX_KEY_CHARS}}})$"#
    )
}

/// What identifies a request under a key: its method, path and body (the parsed JSON, so spacing
/// and key order do not make a retry another request), as SHA-256 hex.
pub fn fingerprint(method: &str, path: &str, body: Option<&serde_json::Value>) -> String {
    let mut hash = Sha256::new();
    hash.update(method.as_bytes());
    hash.update(b" ");
    hash.update(path.as_bytes());
    hash.update(b"\n");
    if let Some(body) = body {
        let mut canonical = String::new();
        write_sorted(body, &mut canonical);
        hash.update(canonical.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A value as JSON with every object's keys in order, whether or not the JSON map keeps the order
/// they came in (serde_json's `preserve_order` is a feature any crate of the build may turn on).
fn write_sorted(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            crate::sorted::sort_by(&mut entries, |a, b| a.0.cmp(b.0));
            out.push('{');
            for (n, (key, value)) in entries.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                write_sorted(value, out);
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_sorted(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_structured_field_string() {
        assert_eq!(parse_key("\"abc-123\"").unwrap(), "abc-123");
        assert_eq!(parse_key(" \"a \\\"b\\\" \\\\c\" ").unwrap(), "a \"b\" \\c");
        for bad in [
            "",
            "a b",
            "a\"b",
            "a\\b",
            "é",
            "\"\"",
            "\"a\\b\"",
            "\"a\"b\"",
            "\"é\"",
            "\"tab\there\"",
            "\"open",
        ] {
            assert!(parse_key(bad).is_err(), "{bad} was accepted");
        }
        assert_eq!(parse_key(&"k".repeat(MAX_KEY_CHARS + 1)).unwrap_err().field, HEADER);
        let longest = format!("\"{}\"", "k".repeat(MAX_KEY_CHARS));
        assert!(parse_key(&longest).is_ok());
        let too_long = format!("\"{}\"", "k".repeat(MAX_KEY_CHARS + 1));
        assert_eq!(parse_key(&too_long).unwrap_err().field, HEADER);
    }

    /// An `Idempotency-Key` sent as a bare token, as most clients send it, was refused with 400.
    #[test]
    fn a_bare_key_is_the_same_key_as_its_quoted_form() {
        for key in ["8e03978e-40d5-43e8-bc93-6894a57f9324", "01J9ZQ3V8K", "a:b/c=d"] {
            assert_eq!(parse_key(key).unwrap(), parse_key(&format!("\"{key}\"")).unwrap(), "{key}");
        }
        assert!(parse_key(&"k".repeat(MAX_KEY_CHARS)).is_ok());
    }

    #[test]
    fn the_published_pattern_is_the_parsers_rule() {
        assert_eq!(
            key_pattern(),
            r#"^("([\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,255}"|[\x21\x23-\x5b\x5d-\x7e]{1,255})$"#
        );
    }

    #[test]
    fn a_retry_has_the_fingerprint_of_its_first_request() {
        let a: serde_json::Value = serde_json::from_str(r#"{"b": 1, "a": [1, 2]}"#).unwrap();
        let b: serde_json::Value = serde_json::from_str(r#"{ "a":[1,2],"b":1 }"#).unwrap();
        let c: serde_json::Value = serde_json::from_str(r#"{"a": [1, 2], "b": 2}"#).unwrap();
        let of = |body| fingerprint("POST", "/api/recipes", Some(body));
        assert_eq!(of(&a), of(&b));
        assert_ne!(of(&a), of(&c));
        assert_ne!(fingerprint("POST", "/api/r/x/fork", None), fingerprint("POST", "/api/r/y/fork", None));
    }
}
