//! Elicitation forms: the `requestedSchema` of an `elicitation/create` checked and turned into
//! fields someone can be asked (a flat object of strings, numbers, integers, booleans, single-
//! and multi-select enums; anything else is refused with an error naming the property), and the
//! answer checked against it, with omitted fields filled from the schema's defaults (SEP-1034).

mod answer;
pub mod present;
mod schema;

pub use answer::{AnswerError, Content};
pub use schema::SchemaError;

use serde_json::Value;

/// A form as the server asked for it, fields in the server's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: Kind,
    /// Checked against `kind` when the form is read.
    pub default: Option<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<TextFormat>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of the options.
    Choice {
        options: Vec<Choice>,
    },
    /// Any number of the options, each at most once.
    Choices {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }
}

/// An enum value and what to show for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub value: String,
    pub title: Option<String>,
}

impl Choice {
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.value)
    }
}

impl Field {
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

impl Form {
    /// Reads a `requestedSchema`.
    pub fn from_schema(schema: &Value) -> Result<Form, SchemaError> {
        schema::parse(schema)
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The answer when nobody is asked: every default, if every required field has one.
    pub fn defaults_only(&self) -> Option<Content> {
        self.complete(Content::new()).ok()
    }
}

#[cfg(test)]
mod tests;
