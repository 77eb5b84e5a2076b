//! Arguments a model sends as the wrong JSON type, converted where the schema demands another
//! type and the conversion is safe, as Pi 1.5 does for its own MCP tools: `"2"` for a number or
//! integer, `"true"`/`"false"` for a boolean, JSON text for an object or array, and a number or
//! boolean for a string. A value the schema already accepts is left alone, so a string is never
//! converted where the schema allows one; a value that still does not fit is left as sent, for
//! the checker to explain.

use super::{is_type, item_schemas};
use serde_json::{Map, Value};

/// `$ref` chains and nesting deeper than this are not followed.
const MAX_DEPTH: usize = 32;

/// Converts `args` in place to fit `schema` where safe; returns how many values changed.
pub fn coerce_arguments(schema: &Value, args: &mut Map<String, Value>) -> usize {
    let mut coercer = Coercer {
        root: schema,
        changed: 0,
    };
    coercer.object(schema, args, 0);
    coercer.changed
}

struct Coercer<'a> {
    root: &'a Value,
    changed: usize,
}

impl<'a> Coercer<'a> {
    /// The schema with a local `$ref` followed.
    fn target(&self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
                .unwrap_or(schema),
            None => schema,
        }
    }

    fn value(&mut self, schema: &'a Value, value: &mut Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let schema = self.target(schema);
        if let Some(converted) = convert(schema, value) {
            *value = converted;
            self.changed += 1;
        }
        match value {
            Value::Object(map) => self.object(schema, map, depth),
            Value::Array(items) => self.array(schema, items, depth),
            _ => {}
        }
    }

    fn object(&mut self, schema: &'a Value, map: &mut Map<String, Value>, depth: usize) {
        let schema = self.target(schema);
        let properties = schema.get("properties").and_then(Value::as_object);
        let extra = schema.get("additionalProperties").filter(|s| s.is_object());
        for (key, item) in map.iter_mut() {
            if let Some(sub) = properties.and_then(|p| p.get(key)).or(extra) {
                self.value(sub, item, depth + 1);
            }
        }
        for part in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.object(part, map, depth + 1);
        }
    }

    fn array(&mut self, schema: &'a Value, items: &mut [Value], depth: usize) {
        let Some(schema) = schema.as_object() else {
            return;
        };
        let item_schema = item_schemas(schema);
        for (i, item) in items.iter_mut().enumerate() {
            if let Some(sub) = item_schema(i) {
                self.value(sub, item, depth + 1);
            }
        }
    }
}

/// The types `schema` allows (`type`, or those of its `anyOf`/`oneOf` forms); `None`: any.
fn allowed_types(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => return Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => {}
    }
    let forms = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))?
        .as_array()?;
    let mut types = vec![];
    for form in forms {
        types.extend(allowed_types(form)?);
    }
    Some(types)
}

/// `value` as the first type `schema` allows that it converts to safely; `None` when it already
/// fits (or nothing fits).
fn convert(schema: &Value, value: &Value) -> Option<Value> {
    let types = allowed_types(schema)?;
    if types.is_empty() || types.iter().any(|t| is_type(value, t)) {
        return None;
    }
    types.iter().find_map(|t| convert_to(value, t))
}

fn convert_to(value: &Value, name: &str) -> Option<Value> {
    match (value, name) {
        (Value::String(s), "number") => number(s.trim()).filter(Value::is_number),
        (Value::String(s), "integer") => number(s.trim()).filter(|n| is_type(n, "integer")),
        (Value::String(s), "boolean") => match s.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        (Value::String(s), "object" | "array") => serde_json::from_str::<Value>(s.trim())
            .ok()
            .filter(|parsed| is_type(parsed, name)),
        (Value::Number(n), "string") => Some(Value::String(n.to_string())),
        (Value::Bool(b), "string") => Some(Value::String(b.to_string())),
        _ => None,
    }
}

/// A decimal number as written (`"2"`, `"-0.5"`, `"1e3"`), never `"0x10"`, `""` or `"NaN"`.
fn number(text: &str) -> Option<Value> {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    if !plain {
        return None;
    }
    serde_json::from_str::<serde_json::Number>(text.trim_start_matches('+'))
        .ok()
        .map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn coerced(schema: Value, args: Value) -> (Value, usize) {
        let Value::Object(mut map) = args else {
            panic!("args must be an object")
        };
        let changed = coerce_arguments(&schema, &mut map);
        (Value::Object(map), changed)
    }

    #[test]
    fn converts_where_the_schema_demands_another_type() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "n": {"type": "integer"}, "b": {"type": "boolean"},
            "o": {"type": "object", "properties": {"depth": {"type": "integer"}}},
            "l": {"type": "array", "items": {"type": "number"}}, "s": {"type": "string"},
            "t": {"type": "string"}
        }});
        let (args, changed) = coerced(
            schema,
            json!({"a": " 2.5 ", "n": "7", "b": "false", "o": "{\"depth\": \"3\"}", "l": "[1, \"2\"]", "s": 42, "t": true}),
        );
        assert_eq!(
            args,
            json!({"a": 2.5, "n": 7, "b": false, "o": {"depth": 3}, "l": [1, 2], "s": "42", "t": "true"})
        );
        assert_eq!(changed, 9);
    }

    #[test]
    fn never_where_a_string_is_allowed_or_the_text_does_not_convert() {
        let schema = json!({"type": "object", "properties": {
            "id": {"type": ["string", "number"]}, "any": {}, "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "x": {"type": "number"}
        }});
        let args = json!({"id": "2", "any": "3", "either": "4", "n": "2.5", "b": "yes", "o": "[1]", "x": "0x10"});
        let (after, changed) = coerced(schema, args.clone());
        assert_eq!((after, changed), (args, 0));
    }

    #[test]
    fn follows_refs_all_of_any_of_and_items() {
        let schema = json!({
            "type": "object",
            "$defs": {"count": {"type": "integer"}},
            "properties": {
                "c": {"$ref": "#/$defs/count"},
                "choice": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "rows": {"type": "array", "items": {"type": "object", "properties": {"on": {"type": "boolean"}}}}
            },
            "allOf": [{"properties": {"late": {"type": "number"}}}]
        });
        let (args, _) = coerced(
            schema,
            json!({"c": "4", "choice": "1", "rows": [{"on": "true"}], "late": "9"}),
        );
        assert_eq!(
            args,
            json!({"c": 4, "choice": 1, "rows": [{"on": true}], "late": 9})
        );
    }
}
