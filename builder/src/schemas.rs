//! How every JSON Schema we publish is generated (`schemas/*.schema.json`, `openapi.json`, the MCP
//! tools' schemas): from the `domain` types, with only the formats JSON Schema itself defines.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The formats JSON Schema itself defines (2020-12 §7.3); a validator may reject any other, so
/// schemars' `uint32`, `int64`, `double`, … are dropped and become bounds ([`standard_formats`]).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops a format JSON Schema does not define; an integer format becomes its range.
pub(crate) fn standard_formats(schema: &mut Schema) {
    let Some(format) = schema.get("format").and_then(Value::as_str).map(str::to_string) else { return };
    if STANDARD_FORMATS.contains(&format.as_str()) {
        return;
    }
    schema.remove("format");
    let range: Option<(i64, i64)> = match format.as_str() {
        "uint8" => Some((0, u8::MAX.into())),
        "uint16" => Some((0, u16::MAX.into())),
        "uint32" | "uint" => Some((0, u32::MAX.into())),
        "uint64" => Some((0, i64::MAX)),
        "int8" => Some((i8::MIN.into(), i8::MAX.into())),
        "int16" => Some((i16::MIN.into(), i16::MAX.into())),
        "int32" | "int" => Some((i32::MIN.into(), i32::MAX.into())),
        _ => None,
    };
    if let Some((min, max)) = range {
        if schema.get("minimum").is_none() {
            schema.insert("minimum".into(), min.into());
        }
        if schema.get("maximum").is_none() {
            schema.insert("maximum".into(), max.into());
        }
    }
}

/// Settings for every schema we publish: standard formats only.
pub(crate) fn settings(base: SchemaSettings) -> SchemaSettings {
    base.with_transform(RecursiveTransform(standard_formats))
}

/// The published JSON Schema (draft 2020-12) of `T`.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let schema = settings(SchemaSettings::draft2020_12()).into_generator().into_root_schema_for::<T>();
    serde_json::to_value(schema).expect("schemas serialise")
}
