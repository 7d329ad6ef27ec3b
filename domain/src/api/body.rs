//! What a request must be before any operation reads it: a JSON body sent as `application/json` in
//! UTF-8, with every object's keys told apart, and a query string that decodes to UTF-8. The API's
//! bodies and `/mcp`'s messages are read here, so both doors refuse the same things.
//!
//! serde_json keeps the last of two equal keys; JSON (RFC 8259 §4) leaves duplicates undefined, and
//! two readers of one document may then see two documents (`{"gf":0,"gf":1}`), so a duplicate is
//! refused and named. A query's invalid UTF-8 would be read as U+FFFD and search for nothing anyone
//! typed, so it is refused too.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::Diagnostic;

/// Whether a `Content-Type` names JSON the API reads: `application/json` (any case), and if it names
/// a `charset`, UTF-8 (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
pub fn is_json_media_type(content_type: &str) -> bool {
    let mut parts = content_type.split(';');
    let media_type = parts.next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.all(|parameter| {
        let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
        let value = value.trim().trim_matches('"');
        !name.trim().eq_ignore_ascii_case("charset")
            || value.eq_ignore_ascii_case("utf-8")
            || value.eq_ignore_ascii_case("utf8")
    })
}

/// A JSON document whose objects name each key once; the error names the first key given twice
/// (with serde_json's line and column).
pub fn parse_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let Unique(value) = Unique::deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// A JSON value read with duplicate keys refused.
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Unique, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if obj.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            let Unique(value) = map.next_value()?;
            obj.insert(key, value);
        }
        Ok(Value::Object(obj))
    }
}

/// A query string's parameters, `application/x-www-form-urlencoded` as browsers send it (`+` is a
/// space, `%XX` a byte), or a problem naming the first parameter whose name or value is not UTF-8.
pub fn query_pairs(query: &str) -> Result<Vec<(String, String)>, Diagnostic> {
    let mut pairs = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (raw_name, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(raw_name)
            .ok_or_else(|| Diagnostic::new(String::from_utf8_lossy(&bytes_of(raw_name)), "is not UTF-8"))?;
        let value = decode(raw_value)
            .ok_or_else(|| Diagnostic::new(name.as_str(), "is not UTF-8 once its %-escapes are decoded"))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// The bytes a query component stands for: `+` is a space, `%XX` a byte, a `%` without two hex
/// digits itself.
fn bytes_of(component: &str) -> Vec<u8> {
    let raw = component.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < raw.len() {
        let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
        match raw[at] {
            b'+' => bytes.push(b' '),
            b'%' => match (raw.get(at + 1).copied().and_then(hex), raw.get(at + 2).copied().and_then(hex)) {
                (Some(high), Some(low)) => {
                    bytes.push(high * 16 + low);
                    at += 3;
                    continue;
                }
                _ => bytes.push(b'%'),
            },
            byte => bytes.push(byte),
        }
        at += 1;
    }
    bytes
}

fn decode(component: &str) -> Option<String> {
    String::from_utf8(bytes_of(component)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types_name_json_and_only_utf8() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
        ] {
            assert!(is_json_media_type(ok), "{ok}");
        }
        for refused in [
            "",
            "text/plain",
            "application/json; charset=latin1",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            assert!(!is_json_media_type(refused), "{refused}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused_by_name_at_any_depth() {
        let err = parse_json(br#"{"gf":0,"gf":1}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate key `gf`"), "{err}");
        let err = parse_json(br#"{"texts":{"en":{"title":"a","title":"b"}}}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate key `title`"), "{err}");
        let err = parse_json(br#"[{"q":1,"q":2}]"#).unwrap_err();
        assert!(err.to_string().contains("duplicate key `q`"), "{err}");
        assert_eq!(parse_json(br#"{"a":[1,2.5,"x",null,true,{"b":{}}]}"#).unwrap()["a"][1], 2.5);
        assert!(parse_json(b"{} {}").is_err(), "trailing text");
    }

    #[test]
    fn queries_decode_plus_and_escapes_and_refuse_invalid_utf8() {
        assert_eq!(
            query_pairs("q=lentil+soup&lang=pt&x=%C3%A7%25&flag").unwrap(),
            [("q", "lentil soup"), ("lang", "pt"), ("x", "ç%"), ("flag", "")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(query_pairs("q=100%").unwrap()[0].1, "100%");
        assert_eq!(query_pairs("q=%4").unwrap()[0].1, "%4");
        let problem = query_pairs("q=%FF%FE").unwrap_err();
        assert_eq!(problem.field, "q");
        assert!(query_pairs("%FF=1").is_err());
    }
}
