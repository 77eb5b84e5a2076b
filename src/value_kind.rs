//! What a JSON value is, without its content: for messages about values that may hold secrets
//! (`env`, `headers`, `args`, a whole server entry, a token file) or that a server sent. A leaf:
//! `config`, `elicitation`, `oauth` and `adapter` all name kinds this way. Also a scalar's text,
//! where a string is wanted of one (a config value, an HTTP header).

use serde_json::Value;

pub fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string, number or boolean as text (a number as JSON writes it); `None` for the others.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
