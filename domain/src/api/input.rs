//! Reads an operation's typed input from query parameters or from JSON arguments, reporting every
//! problem rather than the first.
//!
//! Both readers drive the input type's own `Deserialize` (derived by serde), so the struct declared
//! in [`crate::api`] is the only description of an operation's parameters. A query value is text and
//! is parsed as the field's type asks (`"20"` for a number, `"1"` for a flag); a JSON argument keeps
//! its own type. To list every problem, each parameter is first read on its own (a bad one names
//! itself), then the good ones are read together and the input's [`Input::validate`] checks the
//! rest. Every field of an input is an `Option`, so the good parameters always make an input, and
//! `validate` says which required ones are missing.
//!
//! The rejected alternative was serde_urlencoded plus serde_json as they are: both stop at the first
//! problem, and a query's flag `1` is not a JSON `true`.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::Diagnostic;

/// An operation's input: what it deserialises from, and the checks the type alone cannot say.
pub trait Input: DeserializeOwned {
    /// What the operation works with once every check passed.
    type Valid;

    /// Checks what deserialising could not (ranges, required fields, rules across fields); every
    /// problem names its field.
    fn validate(self) -> Result<Self::Valid, Vec<Diagnostic>>;
}

/// Reads an input from query parameters (or path parameters joined to them), in the order given.
pub fn from_query<'a, I: Input>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<I::Valid, Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let kept = crate::diagnostic::once_each(params, &mut problems);
    let raw: Vec<(&str, Raw<'_>)> = kept.iter().map(|(key, value)| (*key, Raw::Text(value))).collect();
    let order: Vec<&str> = kept.iter().map(|(key, _)| *key).collect();
    read::<I>(raw, problems, |field, _| order.iter().position(|key| *key == field))
}

/// Reads a page's input from query parameters: as [`from_query`], except that a parameter the page
/// does not know is left out rather than refused. A shared link picks up parameters on its way
/// (`utm_source`, `fbclid`), and the person who follows it should get the page, not a problem.
pub fn from_page_query<'a, I: Input>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<I::Valid, Vec<Diagnostic>> {
    let mut fields: &'static [&'static str] = &[];
    let known = params.into_iter().filter(|(key, value)| {
        let mut one =
            Params { entries: vec![(*key, Raw::Text(value))].into_iter(), value: None, fields: &mut fields };
        !matches!(I::deserialize(&mut one), Err(Error::Unknown))
    });
    let known: Vec<(&str, &str)> = known.collect();
    from_query::<I>(known)
}

/// Reads an input from JSON arguments (an MCP tool call, an API body). Problems come in the order of
/// the input's fields, parameters the input does not know first.
pub fn from_json<I: Input>(value: &Value) -> Result<I::Valid, Vec<Diagnostic>> {
    let Some(obj) = value.as_object() else {
        return Err(vec![Diagnostic::new("", "must be a JSON object")]);
    };
    let raw: Vec<(&str, Raw<'_>)> = obj.iter().map(|(key, value)| (key.as_str(), Raw::Json(value))).collect();
    read::<I>(raw, Vec::new(), |field, fields| {
        Some(fields.iter().position(|f| *f == field).map_or(0, |i| i + 1))
    })
}

/// The common reader: each parameter alone, then the good ones together, then `validate`; problems
/// sorted by `rank` (a field's place; `None` last), stably.
fn read<'a, I: Input>(
    raw: Vec<(&'a str, Raw<'a>)>,
    mut problems: Vec<Diagnostic>,
    rank: impl Fn(&str, &[&str]) -> Option<usize>,
) -> Result<I::Valid, Vec<Diagnostic>> {
    let mut fields: &'static [&'static str] = &[];
    let mut good = Vec::new();
    for (key, value) in raw {
        let mut one =
            Params { entries: vec![(key, value.clone())].into_iter(), value: None, fields: &mut fields };
        match I::deserialize(&mut one) {
            Err(Error::Unknown) => problems.push(Diagnostic::new(key, "unknown parameter")),
            Err(Error::Invalid(reason)) => problems.push(Diagnostic::new(key, reason)),
            Ok(_) => good.push((key, value)),
        }
    }
    let mut all = Params { entries: good.into_iter(), value: None, fields: &mut fields };
    let valid = match I::deserialize(&mut all) {
        Ok(input) => input.validate(),
        Err(err) => Err(vec![Diagnostic::new("", err.to_string())]),
    };
    let valid = match valid {
        Ok(valid) if problems.is_empty() => return Ok(valid),
        Ok(_) => None,
        // A field already named by its own problem is not also "required".
        Err(more) => Some(
            more.into_iter().filter(|p| !problems.iter().any(|q| q.field == p.field)).collect::<Vec<_>>(),
        ),
    };
    problems.extend(valid.into_iter().flatten());
    crate::sorted::sort_by_key(&mut problems, |problem| rank(&problem.field, fields).unwrap_or(usize::MAX));
    Err(problems)
}

/// Why a parameter did not deserialise.
#[derive(Debug)]
enum Error {
    /// A parameter the input does not have.
    Unknown,
    /// A value of the wrong type; the reason is worded for the caller.
    Invalid(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unknown => f.write_str("unknown parameter"),
            Error::Invalid(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Invalid(msg.to_string())
    }

    fn unknown_field(_field: &str, _expected: &'static [&'static str]) -> Self {
        Error::Unknown
    }

    fn unknown_variant(_variant: &str, expected: &'static [&'static str]) -> Self {
        Error::Invalid(format!("must be {}", one_of(expected)))
    }

    fn invalid_type(_unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Error::Invalid(format!("must be {expected}"))
    }
}

/// `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// One parameter's value: query text, or a JSON value.
#[derive(Debug, Clone)]
enum Raw<'a> {
    Text(&'a str),
    Json(&'a Value),
}

/// The parameters as a map for the input's derived `Deserialize`; it notes the input's field names.
struct Params<'a, 'f, I: Iterator<Item = (&'a str, Raw<'a>)>> {
    entries: I,
    value: Option<Raw<'a>>,
    fields: &'f mut &'static [&'static str],
}

impl<'de, 'f, I: Iterator<Item = (&'de str, Raw<'de>)>> Deserializer<'de> for &mut Params<'de, 'f, I> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        *self.fields = fields;
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

impl<'de, 'f, I: Iterator<Item = (&'de str, Raw<'de>)>> MapAccess<'de> for Params<'de, 'f, I> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some(value);
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.value.take().expect("a value follows its key");
        seed.deserialize(value)
    }
}

/// Parses query text as the number type `T`.
fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, Error> {
    text.trim().parse().map_err(|_| Error::Invalid(format!("must be {what}")))
}

const WHOLE: &str = "a whole number";
const NUMBER: &str = "a number";

macro_rules! whole {
    ($($method:ident $visit:ident $ty:ty,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self {
                Raw::Text(text) => visitor.$visit(number::<$ty>(text, WHOLE)?),
                Raw::Json(value) => match value.as_i64().and_then(|n| <$ty>::try_from(n).ok()) {
                    Some(n) => visitor.$visit(n),
                    None => match value.as_u64().and_then(|n| <$ty>::try_from(n).ok()) {
                        Some(n) => visitor.$visit(n),
                        None => Err(Error::Invalid(format!("must be {WHOLE}"))),
                    },
                },
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Raw<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Raw::Text(text) => visitor.visit_borrowed_str(text),
            Raw::Json(value) => value.deserialize_any(visitor).map_err(|err| Error::Invalid(err.to_string())),
        }
    }

    /// A query flag is `1` (present means "must have"); a JSON flag is `true` or `false`.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Raw::Text("1") => visitor.visit_bool(true),
            Raw::Text(_) => Err(Error::Invalid("must be 1 (leave it out for no filter)".into())),
            Raw::Json(Value::Bool(flag)) => visitor.visit_bool(*flag),
            Raw::Json(_) => Err(Error::Invalid("must be true or false".into())),
        }
    }

    whole! {
        deserialize_u8 visit_u8 u8,
        deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64,
        deserialize_i32 visit_i32 i32,
        deserialize_i64 visit_i64 i64,
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Raw::Text(text) => visitor.visit_f64(number::<f64>(text, NUMBER)?),
            Raw::Json(value) => match value.as_f64() {
                Some(n) => visitor.visit_f64(n),
                None => Err(Error::Invalid(format!("must be {NUMBER}"))),
            },
        }
    }

    /// Present means `Some`; a JSON `null` is the same as leaving the parameter out.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Raw::Json(Value::Null) => visitor.visit_none(),
            raw => visitor.visit_some(raw),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Raw::Text(text) => visitor.visit_borrowed_str(text),
            Raw::Json(Value::String(text)) => visitor.visit_borrowed_str(text),
            Raw::Json(_) => Err(Error::Invalid("must be a string".into())),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    /// A unit variant by its name, so the reason lists the names.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Raw::Text(text) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(text)),
            Raw::Json(Value::String(text)) => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::new(text))
            }
            Raw::Json(_) => Err(Error::Invalid("must be a string".into())),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i128 u128 f32 char bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}
