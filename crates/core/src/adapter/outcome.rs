//! What every mode returns: content blocks for Pi, details for programs, and the error flag.

use super::errors::named_enum;
use super::ErrorCode;
use crate::render::content::{text_block, Block};
use serde::Serialize;
use serde_json::{Map, Value};

named_enum! {
    /// What an outcome answers, as `details.mode` names it: a mode of the `mcp` tool, of Pi's
    /// resource tools, or a command.
    Mode {
        Call = "call",
        Read = "read",
        Search = "search",
        List = "list",
        Describe = "describe",
        Status = "status",
        Connect = "connect",
        Instructions = "instructions",
        /// Every server's tools (`/mcp tools`).
        Tools = "tools",
        Prompts = "prompts",
        Prompt = "prompt",
        Login = "login",
        Logout = "logout",
        Auth = "auth",
        Doctor = "doctor",
        Broker = "broker",
        Setup = "setup",
        Add = "add",
        ListMcpResources = "list_mcp_resources",
        ListMcpResourceTemplates = "list_mcp_resource_templates",
        ReadMcpResource = "read_mcp_resource",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub content: Vec<Block>,
    /// What the answer is about, for programs; failures set `error` and usually `server`.
    pub details: Details,
    pub is_error: bool,
    /// The result as JSON, for tools that declare an output schema (boxed: most have none).
    pub structured: Option<Box<Value>>,
}

impl Outcome {
    /// A text answer; what a server wrote in it is cleaned here at the latest (`clean::text`).
    pub fn text(mode: Mode, text: impl Into<String>) -> Self {
        Outcome {
            content: vec![text_block(text.into())],
            details: Details::of(mode),
            is_error: false,
            structured: None,
        }
    }

    /// A failure the model can act on: `code` goes to `details.error`.
    pub fn error(mode: Mode, code: ErrorCode, text: impl Into<String>) -> Self {
        let mut outcome = Outcome::text(mode, text);
        outcome.fail(code);
        outcome
    }

    /// Marks the outcome failed with `code`.
    pub fn fail(&mut self, code: ErrorCode) {
        self.is_error = true;
        self.details.error = Some(code);
    }

    /// Says the outcome answers `mode` after all.
    pub fn set_mode(&mut self, mode: Mode) {
        self.details.mode = mode;
    }

    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.set_mode(mode);
        self
    }

    pub fn with_server(mut self, server: impl Into<String>) -> Self {
        self.details.server = Some(server.into());
        self
    }

    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.details.tool = Some(tool.into());
        self
    }

    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.details.uri = Some(uri.into());
        self
    }

    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.details.prompt = Some(prompt.into());
        self
    }

    pub fn with_listing(mut self, pending: &[String]) -> Self {
        self.details.listing = (!pending.is_empty()).then(|| Listing::of(pending));
        self
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value);
        self
    }

    /// A field only some modes set, by its name in `details`.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.details.extra.insert(key.to_string(), value.into());
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

/// `Outcome.details`: the fields every mode may set, typed, and what only some modes set.
/// Serialized, it is the flat object programs read (`details.mode`, `details.server`, …).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The resource an answer (or a refusal to read it) is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The prompt an answer (or a refusal to get it) is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Servers still being listed when the answer was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<Listing>,
    /// A tool call's time in the core, from the call to its answer (ms, one decimal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// Where the whole text went when the output guard cut it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The fields of one mode, by name.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Details {
    pub fn of(mode: Mode) -> Self {
        Details {
            mode,
            error: None,
            server: None,
            tool: None,
            uri: None,
            prompt: None,
            listing: None,
            elapsed_ms: None,
            full_output_path: None,
            extra: Map::new(),
        }
    }

    /// The flat JSON object programs read.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("details serialize")
    }
}

/// `details.listing`: how many servers were still being listed, and the first few.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listing {
    pub pending: usize,
    pub servers: Vec<String>,
}

impl Listing {
    pub fn of(pending: &[String]) -> Self {
        let shown = pending.len().min(crate::render::NAMES_SHOWN);
        Listing {
            pending: pending.len(),
            servers: pending[..shown].to_vec(),
        }
    }
}
