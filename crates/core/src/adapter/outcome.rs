//! What every mode returns: content blocks for Pi, details for programs, and the error flag.

use super::ErrorCode;
use crate::render::content::{text_block, Block};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub content: Vec<Block>,
    /// Always has `mode`; failures add `error` (a stable code) and usually `server`.
    pub details: Value,
    pub is_error: bool,
    /// The result as JSON, for tools that declare an output schema (boxed: most have none).
    pub structured: Option<Box<Value>>,
}

impl Outcome {
    /// A text answer; what a server wrote in it is cleaned here at the latest (`clean::text`).
    pub fn text(mode: &str, text: impl Into<String>) -> Self {
        Outcome {
            content: vec![text_block(text.into())],
            details: json!({ "mode": mode }),
            is_error: false,
            structured: None,
        }
    }

    /// A failure the model can act on: `code` goes to `details.error`.
    pub fn error(mode: &str, code: ErrorCode, text: impl Into<String>) -> Self {
        let mut outcome = Outcome::text(mode, text);
        outcome.fail(code);
        outcome
    }

    /// Marks the outcome failed with `code`.
    pub fn fail(&mut self, code: ErrorCode) {
        self.is_error = true;
        self.set("error", code.as_str());
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value);
        self
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        if let Value::Object(map) = &mut self.details {
            map.insert(key.to_string(), value.into());
        }
    }

    /// All text blocks joined; what a person or a test reads.
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(Block::text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
