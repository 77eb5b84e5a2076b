//! A question as a front end shows it: every text written here, so Pi's dialogs and a terminal
//! say the same, and the front end only walks through the fields (`input` for text and numbers,
//! `select` over `options` for the rest, repeated until "Done" for a multi-select). What the
//! server wrote is cleaned (`clean`); a field's name and an option's value, which the front end
//! only hands back, stay as they are.

use super::{Field, Form, Kind};
use crate::clean::{self, Link};
use serde_json::{json, Value};

/// The words of the dialogs.
fn labels() -> Value {
    json!({
        "answer": "Answer",
        "decline": "Decline",
        "done": "Done",
        "skip": "(leave empty)",
        "chosen": "✓ ",
        "open": "Open in the browser",
    })
}

/// ` for subagent "worker" (pid 4242)`: whom a question is asked for, when it is another
/// session's of the family (`on_behalf`).
pub fn for_whom(on_behalf: Option<&str>) -> String {
    on_behalf.map_or_else(String::new, |who| format!(" for {}", clean::line(who)))
}

/// A form to fill in, for question `id` of `server` (asked `on_behalf` of another session).
pub fn form(id: u64, server: &str, on_behalf: Option<&str>, message: &str, form: &Form) -> Value {
    json!({
        "id": id,
        "server": server,
        "mode": "form",
        "title": format!("MCP server \"{}\" asks{}:\n\n{}", clean::line(server), for_whom(on_behalf), clean::text(message)),
        "fields": form.fields.iter().map(field).collect::<Vec<_>>(),
        "labels": labels(),
    })
}

/// A URL to visit, for question `id` of `server`: the page first, with a look-alike host's ASCII
/// form beside it, then the server's words indented under a heading of ours, so that no line the
/// server wrote can pass for the page or for our question; `url` is what the front end hands back
/// to open.
pub fn url(id: u64, server: &str, on_behalf: Option<&str>, message: &str, url: &Link) -> Value {
    let said: Vec<String> = clean::text(message)
        .lines()
        .map(|line| format!("  {line}"))
        .collect();
    json!({
        "id": id,
        "server": server,
        "mode": "url",
        "title": format!("MCP server \"{}\" asks you to open a page{}", clean::line(server), for_whom(on_behalf)),
        "message": format!(
            "Page: {}\n\nThe server's message:\n{}\n\nOpen it in your browser?",
            url.shown(),
            said.join("\n")
        ),
        "url": url.as_str(),
        "labels": labels(),
    })
}

fn field(field: &Field) -> Value {
    let mut shown = json!({
        "name": field.name,
        "kind": kind_name(&field.kind),
        "required": field.required,
        // May be left empty: optional, or has a default.
        "skippable": !field.required || field.default.is_some(),
        "prompt": prompt(field),
        "placeholder": clean::line(&field.default.as_ref().map(text_of).unwrap_or_default()),
    });
    let options: Option<Vec<Value>> = match &field.kind {
        Kind::Boolean => Some(vec![
            json!({ "value": true, "label": "Yes" }),
            json!({ "value": false, "label": "No" }),
        ]),
        Kind::Choice { options } | Kind::Choices { options, .. } => Some(
            options
                .iter()
                .map(|o| json!({ "value": o.value, "label": clean::line(o.label()) }))
                .collect(),
        ),
        _ => None,
    };
    if let Some(options) = options {
        shown["options"] = Value::Array(options);
    }
    if let Kind::Choices {
        min_items,
        max_items,
        ..
    } = &field.kind
    {
        shown["minItems"] = json!(min_items.unwrap_or(0));
        shown["maxItems"] = json!(max_items);
    }
    shown
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Text { .. } => "text",
        Kind::Number { .. } => "number",
        Kind::Boolean => "boolean",
        Kind::Choice { .. } => "choice",
        Kind::Choices { .. } => "choices",
    }
}

/// `Label (what it takes; default)` and the description on the next line.
fn prompt(field: &Field) -> String {
    let mut notes = vec![what_it_takes(&field.kind)];
    match (&field.default, field.required) {
        (Some(default), _) => notes.push(format!(
            "default {}",
            clean::line(&shown_value(&field.kind, default))
        )),
        (None, true) => notes.push("required".into()),
        (None, false) => notes.push("optional".into()),
    }
    let notes: Vec<String> = notes.into_iter().filter(|n| !n.is_empty()).collect();
    let mut text = format!("{} ({})", clean::line(field.label()), notes.join("; "));
    if let Some(description) = field.description.as_deref().filter(|d| !d.is_empty()) {
        text.push('\n');
        text.push_str(&clean::text(description));
    }
    text
}

fn what_it_takes(kind: &Kind) -> String {
    match kind {
        Kind::Text {
            min_length,
            max_length,
            format,
        } => {
            let mut parts = vec![format.map_or("text".to_string(), |f| f.name().to_string())];
            match (min_length, max_length) {
                (Some(min), Some(max)) => parts.push(format!("{min} to {max} characters")),
                (Some(min), None) => parts.push(format!("at least {min} characters")),
                (None, Some(max)) => parts.push(format!("at most {max} characters")),
                (None, None) => {}
            }
            parts.join(", ")
        }
        Kind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let what = if *integer { "whole number" } else { "number" };
            match (minimum, maximum) {
                (Some(min), Some(max)) => format!("{what} from {min} to {max}"),
                (Some(min), None) => format!("{what}, at least {min}"),
                (None, Some(max)) => format!("{what}, at most {max}"),
                (None, None) => what.to_string(),
            }
        }
        Kind::Boolean => "yes or no".into(),
        Kind::Choice { .. } => "one of the options".into(),
        Kind::Choices {
            min_items,
            max_items,
            ..
        } => match (min_items, max_items) {
            (Some(min), Some(max)) => format!("choose {min} to {max}"),
            (Some(min), None) => format!("choose at least {min}"),
            (None, Some(max)) => format!("choose up to {max}"),
            (None, None) => "choose any".into(),
        },
    }
}

/// A value as the dialogs show it: options by their label.
fn shown_value(kind: &Kind, value: &Value) -> String {
    let label = |v: &Value| match kind {
        Kind::Choice { options } | Kind::Choices { options, .. } => options
            .iter()
            .find(|o| v.as_str() == Some(o.value.as_str()))
            .map(|o| o.label().to_string()),
        Kind::Boolean => v
            .as_bool()
            .map(|b| if b { "Yes" } else { "No" }.to_string()),
        _ => None,
    };
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| label(v).unwrap_or_else(|| text_of(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => label(other).unwrap_or_else(|| text_of(other)),
    }
}

/// A value as someone would type it.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}
