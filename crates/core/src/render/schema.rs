//! JSON Schemas as the model reads them best: a one-line TypeScript-like shape for search
//! results, and a parameter list (name, type, required, description, enum, default) for
//! `describe` and for failed calls. Each line is cleaned (`clean::line`): names, descriptions and
//! values are the server's.

use pi_mcp_connection::clean;
use serde_json::{Map, Value};

/// Shapes longer than this collapse their nested objects to `{…}`; still longer, they give the
/// required parameters and name the optional ones.
const SHAPE_BUDGET: usize = 200;
/// Nesting shown in parameter lists.
const MAX_DEPTH: usize = 3;

/// `{ message: string; count?: number = 3; mode?: "a" | "b" }`; `None` without parameters.
pub fn shape(schema: &Value) -> Option<String> {
    let props = properties(schema)?;
    let full = object_shape(schema, props, usize::MAX);
    let shape = if full.len() <= SHAPE_BUDGET {
        full
    } else {
        let flat = object_shape(schema, props, 0);
        match flat.len() <= SHAPE_BUDGET {
            true => flat,
            false => required_shape(schema, props),
        }
    };
    Some(clean::line(&shape).into_owned())
}

/// The required parameters' shapes, and the optional ones by name.
fn required_shape(schema: &Value, props: &Map<String, Value>) -> String {
    let required = required(schema);
    let mut fields: Vec<String> = props
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .map(|(name, prop)| format!("{}: {}", key(name), type_shape(prop, 0)))
        .collect();
    let optional: Vec<String> = props
        .keys()
        .filter(|name| !required.contains(&name.as_str()))
        .map(|name| key(name))
        .collect();
    if !optional.is_empty() {
        fields.push(format!("optional {}", optional.join(", ")));
    }
    format!("{{ {} }}", fields.join("; "))
}

fn object_shape(schema: &Value, props: &Map<String, Value>, depth: usize) -> String {
    let required = required(schema);
    let fields: Vec<String> = props
        .iter()
        .map(|(name, prop)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let default = prop
                .get("default")
                .map(|d| format!(" = {}", short_json(d)))
                .unwrap_or_default();
            format!(
                "{}{optional}: {}{default}",
                key(name),
                type_shape(prop, depth)
            )
        })
        .collect();
    if fields.is_empty() {
        "{}".into()
    } else {
        format!("{{ {} }}", fields.join("; "))
    }
}

fn type_shape(schema: &Value, depth: usize) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(short_json)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(constant) = schema.get("const") {
        return short_json(constant);
    }
    if let Some(variants) = variants(schema) {
        let mut parts: Vec<String> = variants.iter().map(|v| type_shape(v, depth)).collect();
        parts.dedup();
        return parts.join(" | ");
    }
    match type_names(schema).as_slice() {
        [] if properties(schema).is_some() => nested(schema, depth),
        [] => "any".into(),
        names => names
            .iter()
            .map(|t| match *t {
                "object" if properties(schema).is_some() => nested(schema, depth),
                "object" => "object".into(),
                "array" => match schema.get("items") {
                    Some(items) => {
                        let inner = type_shape(items, depth);
                        if inner.contains(' ') && !inner.starts_with('{') {
                            format!("({inner})[]")
                        } else {
                            format!("{inner}[]")
                        }
                    }
                    None => "any[]".into(),
                },
                "integer" => "number".into(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn nested(schema: &Value, depth: usize) -> String {
    match properties(schema) {
        Some(props) if depth > 0 => object_shape(schema, props, depth - 1),
        _ => "{…}".into(),
    }
}

/// One line per parameter, nested ones indented; `"No parameters."` when there are none.
pub fn parameters(schema: &Value) -> String {
    let mut lines = Vec::new();
    if let Some(props) = properties(schema) {
        list_properties(schema, props, 0, &mut lines);
    }
    if lines.is_empty() {
        "No parameters.".into()
    } else {
        lines.join("\n")
    }
}

fn list_properties(
    schema: &Value,
    props: &Map<String, Value>,
    depth: usize,
    lines: &mut Vec<String>,
) {
    let required = required(schema);
    for (name, prop) in props {
        let mut line = format!("{}- {name} ({}", "  ".repeat(depth), type_label(prop));
        if required.contains(&name.as_str()) {
            line.push_str(", required");
        }
        line.push(')');
        if let Some(text) = prop
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            line.push_str(": ");
            line.push_str(&clean::one_line(text));
        }
        if let Some(values) = prop.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values.iter().map(short_json).collect();
            line.push_str(&format!(" [one of: {}]", values.join(", ")));
        }
        if let Some(default) = prop.get("default") {
            line.push_str(&format!(" [default: {}]", short_json(default)));
        }
        lines.push(clean::line(&line).into_owned());
        let child = match prop.get("items") {
            Some(items) if type_names(prop).contains(&"array") => items,
            _ => prop,
        };
        if let (Some(child_props), true) = (properties(child), depth + 1 < MAX_DEPTH) {
            list_properties(child, child_props, depth + 1, lines);
        }
    }
}

/// `string`, `number`, `array of string`, `object`, `string or null`…
fn type_label(schema: &Value) -> String {
    if schema.get("enum").is_some() {
        return "enum".into();
    }
    if let Some(variants) = variants(schema) {
        let mut labels: Vec<String> = variants.iter().map(type_label).collect();
        labels.dedup();
        return labels.join(" or ");
    }
    let names = type_names(schema);
    if names.is_empty() {
        return if properties(schema).is_some() {
            "object".into()
        } else {
            "any".into()
        };
    }
    names
        .iter()
        .map(|t| match (*t, schema.get("items")) {
            ("array", Some(items)) => format!("array of {}", type_label(items)),
            ("integer", _) => "integer".into(),
            (other, _) => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn variants(schema: &Value) -> Option<&Vec<Value>> {
    ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
        .filter(|v| !v.is_empty())
}

fn type_names(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// A property name as TypeScript would need it written.
fn key(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if plain {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// Compact JSON, cut to 40 characters.
fn short_json(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        text
    } else {
        format!("{}…", text.chars().take(39).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search  text\n(words)"},
                "limit": {"type": "integer", "default": 10},
                "mode": {"type": "string", "enum": ["fast", "exact"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object", "properties": {"since": {"type": ["string", "null"]}}, "required": ["since"]},
                "any-thing": {"anyOf": [{"type": "string"}, {"type": "number"}]}
            },
            "required": ["query"]
        })
    }

    #[test]
    fn shapes() {
        assert_eq!(
            shape(&schema()).unwrap(),
            r#"{ query: string; limit?: number = 10; mode?: "fast" | "exact"; tags?: string[]; filter?: { since: string | null }; "any-thing"?: string | number }"#
        );
        assert_eq!(shape(&json!({"type": "object"})), None);
        assert_eq!(
            shape(&json!({"type": "object", "properties": {}})).unwrap(),
            "{}"
        );
    }

    #[test]
    fn long_shapes_collapse_nested_objects_then_name_the_optional_parameters() {
        let nested = |n: usize, required: &[&str]| {
            let props: Map<String, Value> = (0..n)
                .map(|i| {
                    let inner =
                        json!({"type": "object", "properties": {"inner": {"type": "string"}}});
                    (format!("field_{i}"), inner)
                })
                .collect();
            shape(&json!({"type": "object", "properties": props, "required": required})).unwrap()
        };
        assert!(nested(2, &[]).contains("field_0?: { inner?: string }"));
        let collapsed = nested(7, &["field_1"]);
        assert!(
            collapsed.starts_with("{ field_0?: {…}; field_1: {…}; field_2?: {…};"),
            "{collapsed}"
        );
        let many = nested(12, &["field_1"]);
        assert!(
            many.starts_with("{ field_1: {…}; optional field_0, field_2, field_3,"),
            "{many}"
        );
    }

    #[test]
    fn parameter_lists() {
        assert_eq!(
            parameters(&schema()),
            "- query (string, required): Search text (words)\n\
             - limit (integer) [default: 10]\n\
             - mode (enum) [one of: \"fast\", \"exact\"]\n\
             - tags (array of string)\n\
             - filter (object)\n  \
               - since (string or null, required)\n\
             - any-thing (string or number)"
        );
        assert_eq!(parameters(&json!({})), "No parameters.");
    }
}
