//! Reading a `requestedSchema`: what the spec allows in a form and nothing else, so whoever asks
//! the user never meets a field it cannot show.

use super::{Choice, Field, Form, Kind, TextFormat};
use crate::value_kind::value_kind;
use serde_json::{Map, Value};
use std::fmt;

/// Why a `requestedSchema` is not a form we can ask.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaError(String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "requestedSchema is not a flat form: {}. An elicitation form is an object whose \
             properties are strings, numbers, integers, booleans, enums or arrays of enum strings",
            self.0
        )
    }
}

fn error(text: impl Into<String>) -> SchemaError {
    SchemaError(text.into())
}

pub(super) fn parse(schema: &Value) -> Result<Form, SchemaError> {
    let root = schema
        .as_object()
        .ok_or_else(|| error(format!("it is {}, not an object", value_kind(schema))))?;
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Err(error(format!("its type is {other}, not \"object\""))),
        None => return Err(error("it has no \"type\": \"object\"")),
    }
    let properties = match root.get("properties") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(other) => {
            return Err(error(format!(
                "\"properties\" is {}, not an object",
                value_kind(other)
            )))
        }
    };
    let required = required_names(root, &properties)?;
    let fields = properties
        .iter()
        .map(|(name, property)| field(name, property, required.contains(&name.as_str())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Form { fields })
}

fn required_names<'a>(
    root: &'a Map<String, Value>,
    properties: &Map<String, Value>,
) -> Result<Vec<&'a str>, SchemaError> {
    let Some(required) = root.get("required") else {
        return Ok(vec![]);
    };
    let names = required
        .as_array()
        .and_then(|items| items.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .ok_or_else(|| error("\"required\" is not an array of property names"))?;
    match names.iter().find(|n| !properties.contains_key(**n)) {
        Some(missing) => Err(error(format!(
            "\"required\" names `{missing}`, which is not a property"
        ))),
        None => Ok(names),
    }
}

fn field(name: &str, property: &Value, required: bool) -> Result<Field, SchemaError> {
    let at = |text: String| error(format!("property `{name}` {text}"));
    let p = property
        .as_object()
        .ok_or_else(|| at(format!("is {}, not a schema object", value_kind(property))))?;
    let text = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_string);
    let count = |key: &str| -> Result<Option<u64>, SchemaError> {
        match p.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| at(format!("has \"{key}\" {v}, not a whole number"))),
        }
    };
    let number = |key: &str| -> Result<Option<f64>, SchemaError> {
        match p.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| at(format!("has \"{key}\" {v}, not a number"))),
        }
    };
    let kind = match p.get("type").and_then(Value::as_str) {
        Some("string") if p.contains_key("enum") || p.contains_key("oneOf") => Kind::Choice {
            options: choices(p).map_err(&at)?,
        },
        Some("string") => Kind::Text {
            min_length: count("minLength")?,
            max_length: count("maxLength")?,
            format: match p.get("format").and_then(Value::as_str) {
                None => None,
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                Some(other) => return Err(at(format!("has the unknown format \"{other}\""))),
            },
        },
        Some(t @ ("number" | "integer")) => Kind::Number {
            integer: t == "integer",
            minimum: number("minimum")?,
            maximum: number("maximum")?,
        },
        Some("boolean") => Kind::Boolean,
        Some("array") => {
            let items = p
                .get("items")
                .and_then(Value::as_object)
                .ok_or_else(|| at("is an array without an \"items\" object".into()))?;
            Kind::Choices {
                options: choices(items).map_err(|e| {
                    at(format!("is an array whose items are not enum strings: {e}"))
                })?,
                min_items: count("minItems")?,
                max_items: count("maxItems")?,
            }
        }
        Some("object") => return Err(at("is an object (nested objects are not allowed)".into())),
        Some(other) => return Err(at(format!("has the type \"{other}\""))),
        None => return Err(at("has no \"type\"".into())),
    };
    let mut field = Field {
        name: name.to_string(),
        title: text("title"),
        description: text("description"),
        required,
        kind,
        default: None,
    };
    if let Some(default) = p.get("default").filter(|d| !d.is_null()) {
        field
            .check(default)
            .map_err(|e| at(format!("has a default that does not fit it: {e}")))?;
        field.default = Some(default.clone());
    }
    Ok(field)
}

/// The options of `enum` (with the legacy `enumNames` as titles) or of `oneOf`/`anyOf` entries
/// `{ const, title }`.
fn choices(p: &Map<String, Value>) -> Result<Vec<Choice>, String> {
    let options = if let Some(values) = p.get("enum") {
        let values = values
            .as_array()
            .and_then(|v| v.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
            .ok_or("\"enum\" is not an array of strings")?;
        let titles = p.get("enumNames").and_then(Value::as_array);
        values
            .iter()
            .enumerate()
            .map(|(i, value)| Choice {
                value: value.to_string(),
                title: titles
                    .and_then(|t| t.get(i))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
            .collect()
    } else {
        let entries = p
            .get("oneOf")
            .or_else(|| p.get("anyOf"))
            .and_then(Value::as_array)
            .ok_or("no \"enum\", \"oneOf\" or \"anyOf\" list")?;
        entries
            .iter()
            .map(|entry| {
                let value = entry
                    .get("const")
                    .and_then(Value::as_str)
                    .ok_or("an option without a string \"const\"")?;
                Ok(Choice {
                    value: value.to_string(),
                    title: entry
                        .get("title")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
            })
            .collect::<Result<Vec<_>, &str>>()?
    };
    if options.is_empty() {
        return Err("an empty list of options".into());
    }
    Ok(options)
}
