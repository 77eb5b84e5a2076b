//! A question as a front end shows it: every text written here, so Pi's dialogs and a terminal
//! say the same, and the front end only walks through the fields (`input` for text and numbers,
//! `select` over `options` for the rest, repeated until "Done" for a multi-select). What the
//! server wrote is cleaned (`clean`); a field's name and an option's value, which the front end
//! only hands back, stay as they are.

use super::{Field, Form, Kind};
use crate::clean::{self, Link};
use serde_json::Value;

/// A question as the front end shows it: for question `id` of `server`, its title, the words of
/// its buttons, and what it asks.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub id: u64,
    pub server: String,
    pub title: String,
    pub labels: Labels,
    pub asks: Asks,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Asks {
    /// Fields to fill in, in the server's order.
    Form { fields: Vec<ShownField> },
    /// A page to open: `message` shows it, `url` is what the front end hands back to open.
    Url { message: String, url: String },
}

/// The words of the dialogs.
#[derive(Clone, Debug, PartialEq)]
pub struct Labels {
    pub answer: &'static str,
    pub decline: &'static str,
    pub done: &'static str,
    pub skip: &'static str,
    pub chosen: &'static str,
    pub open: &'static str,
}

pub const LABELS: Labels = Labels {
    answer: "Answer",
    decline: "Decline",
    done: "Done",
    skip: "(leave empty)",
    chosen: "✓ ",
    open: "Open in the browser",
};

/// One field of a form as the front end asks it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownField {
    pub name: String,
    pub kind: KindName,
    pub required: bool,
    /// May be left empty: optional, or it has a default.
    pub skippable: bool,
    /// Label, what it takes, its default or whether it is optional, and the description.
    pub prompt: String,
    /// The default as text (empty without one).
    pub placeholder: String,
    /// For `Boolean`, `Choice` and `Choices`: what to offer.
    pub options: Option<Vec<ShownOption>>,
    /// For `Choices`: how many may be chosen (no most: any number).
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
}

/// What a field takes, as the front end asks it (`input` for text and numbers, `select` for the
/// rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindName {
    Text,
    Number,
    Boolean,
    Choice,
    Choices,
}

/// An option to pick: the value the front end hands back, and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownOption {
    pub value: Value,
    pub label: String,
}

/// ` for subagent "worker" (pid 4242)`: whom a question is asked for, when it is another
/// session's of the family (`on_behalf`).
pub fn for_whom(on_behalf: Option<&str>) -> String {
    on_behalf.map_or_else(String::new, |who| format!(" for {}", clean::line(who)))
}

/// A form to fill in, for question `id` of `server` (asked `on_behalf` of another session).
pub fn form(
    id: u64,
    server: &str,
    on_behalf: Option<&str>,
    message: &str,
    form: &Form,
) -> Question {
    Question {
        id,
        server: server.to_string(),
        title: format!(
            "MCP server \"{}\" asks{}:\n\n{}",
            clean::line(server),
            for_whom(on_behalf),
            clean::text(message)
        ),
        labels: LABELS,
        asks: Asks::Form {
            fields: form.fields.iter().map(field).collect(),
        },
    }
}

/// A URL to visit, for question `id` of `server`: the page first, with a look-alike host's ASCII
/// form beside it, then the server's words indented under a heading of ours, so that no line the
/// server wrote can pass for the page or for our question; `url` is what the front end hands back
/// to open.
pub fn url(id: u64, server: &str, on_behalf: Option<&str>, message: &str, url: &Link) -> Question {
    let said: Vec<String> = clean::text(message)
        .lines()
        .map(|line| format!("  {line}"))
        .collect();
    Question {
        id,
        server: server.to_string(),
        title: format!(
            "MCP server \"{}\" asks you to open a page{}",
            clean::line(server),
            for_whom(on_behalf)
        ),
        labels: LABELS,
        asks: Asks::Url {
            message: format!(
                "Page: {}\n\nThe server's message:\n{}\n\nOpen it in your browser?",
                url.shown(),
                said.join("\n")
            ),
            url: url.as_str().to_string(),
        },
    }
}

fn field(field: &Field) -> ShownField {
    let option = |value: Value, label: &str| ShownOption {
        value,
        label: clean::line(label).into_owned(),
    };
    let options = match &field.kind {
        Kind::Boolean => Some(vec![
            option(Value::Bool(true), "Yes"),
            option(Value::Bool(false), "No"),
        ]),
        Kind::Choice { options } | Kind::Choices { options, .. } => Some(
            options
                .iter()
                .map(|o| option(Value::String(o.value.clone()), o.label()))
                .collect(),
        ),
        _ => None,
    };
    let (min_items, max_items) = match &field.kind {
        Kind::Choices {
            min_items,
            max_items,
            ..
        } => (Some(min_items.unwrap_or(0)), *max_items),
        _ => (None, None),
    };
    ShownField {
        name: field.name.clone(),
        kind: kind_name(&field.kind),
        required: field.required,
        skippable: !field.required || field.default.is_some(),
        prompt: prompt(field),
        placeholder: clean::line(&field.default.as_ref().map(text_of).unwrap_or_default())
            .into_owned(),
        options,
        min_items,
        max_items,
    }
}

fn kind_name(kind: &Kind) -> KindName {
    match kind {
        Kind::Text { .. } => KindName::Text,
        Kind::Number { .. } => KindName::Number,
        Kind::Boolean => KindName::Boolean,
        Kind::Choice { .. } => KindName::Choice,
        Kind::Choices { .. } => KindName::Choices,
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
