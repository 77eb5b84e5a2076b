//! What every mode returns: content blocks for Pi, details for programs, and the error flag.

use super::details::{Details, Listing, Part};
use super::ErrorCode;
use crate::named_enum::named_enum;
use crate::render::content::{text_block, Block};
use serde_json::Value;

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
    /// What the answer is about, for programs; failures set `error` and usually `server` (boxed:
    /// outcomes travel in `Result`s).
    pub details: Box<Details>,
    pub is_error: bool,
    /// The result as JSON, for tools that declare an output schema (boxed: most have none).
    pub structured: Option<Box<Value>>,
}

impl Outcome {
    /// A text answer; what a server wrote in it is cleaned here at the latest (`clean::text`).
    pub fn text(mode: Mode, text: impl Into<String>) -> Self {
        Outcome {
            content: vec![text_block(text.into())],
            details: Box::new(Details::of(mode)),
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

    /// The fields only this mode sets.
    pub fn with_part(mut self, part: impl Into<Part>) -> Self {
        self.details.part = Some(part.into());
        self
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
