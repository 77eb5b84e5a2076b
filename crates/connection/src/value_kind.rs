//! What a JSON value is, without its content: for messages about values that may hold secrets
//! (`env`, `headers`, `args`, a whole server entry, a token file) or that a server sent. A leaf:
//! `config`, `elicitation`, `oauth` and `adapter` all name kinds this way. Also a scalar's text,
//! where a string is wanted of one (a config value, an HTTP header), and a value with what it
//! holds, for the messages about values that hold no secret.

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

/// A value as a message shows it: its kind and a scalar's value, a string cut to 40 characters
/// (`string "abc"`, `number 5`, `boolean true`, `null`, `an array`, `an object`). Never for a
/// value that may hold a secret: [`value_kind`] is for those.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let mut shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                shown.push('…');
            }
            format!("string {shown:?}")
        }
        other => value_kind(other).to_string(),
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
