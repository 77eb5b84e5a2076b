//! A use to approve as its dialog shows it and its grants hash it. A session makes it from its
//! own config; a member of a family without a UI sends it to the session that asks for it, which
//! shows it and hashes its grants from the same fields, so a grant covers only what the dialog
//! named. The arguments travel as the dialog shows them (clipped, cleaned, secrets hidden),
//! never as the call has them.

use super::{launch, present, Grant, Subject};
use crate::clean;
use crate::config::ServerConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Lines of a request's arguments shown, at most (as `present::arguments` makes them, with its
/// first and last).
const SHOWN_LINES: usize = 14;
/// Characters of one line of a request's text shown, at most.
const LINE_CHARS: usize = 240;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// The server's name in the asking session's config.
    pub server: String,
    /// Its launch as written (hashed into grants, never shown).
    pub launch: Value,
    pub used: Used,
    /// `Arguments: …` as the dialog shows them; `None` for a read.
    pub arguments: Option<String>,
    /// What asked for approval: `` `approveTools` in ~/.pi/agent/mcp.json ``.
    pub because: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Used {
    /// A tool call: the tool's MCP name, and what its grant hashes besides.
    #[serde(rename_all = "camelCase")]
    Tool {
        name: String,
        input_schema: Option<Value>,
        annotations: Option<Value>,
    },
    Read {
        uri: String,
    },
    Prompt {
        name: String,
    },
}

impl Request {
    /// `subject` of `server` with `args`, as this session's config has it (`home` shortens paths).
    pub fn new(subject: &Subject, server: &ServerConfig, args: &Value, home: &str) -> Request {
        let used = match subject {
            Subject::Tool(tool) => {
                let definition = tool.definition.as_deref();
                let field = |key: &str| definition.and_then(|d| d.get(key)).cloned();
                Used::Tool {
                    name: tool.original.clone(),
                    input_schema: field("inputSchema"),
                    annotations: field("annotations"),
                }
            }
            Subject::Read { uri, .. } => Used::Read {
                uri: uri.to_string(),
            },
            Subject::Prompt { name, .. } => Used::Prompt {
                name: name.to_string(),
            },
        };
        let schema = match subject {
            Subject::Tool(tool) => tool.input_schema(),
            _ => None,
        };
        let arguments = match subject {
            Subject::Read { .. } => None,
            _ => Some(present::arguments(args, schema)),
        };
        Request {
            server: server.name.clone(),
            launch: launch(server),
            used,
            arguments,
            because: present::set_by(server, home),
        }
    }

    /// The grants its dialog offers: every use of the server, and for a tool the tool.
    pub fn grants(&self) -> (Grant, Option<Grant>) {
        let whole = Grant::whole(&self.server, &self.launch);
        let tool = match &self.used {
            Used::Tool {
                name,
                input_schema,
                annotations,
            } => Some(Grant::one_tool(
                &self.server,
                &self.launch,
                name,
                input_schema.as_ref(),
                annotations.as_ref(),
            )),
            _ => None,
        };
        (whole, tool)
    }

    /// The request with its shown text made safe to show, whoever sent it: each line cleaned
    /// and clipped, and no more lines of arguments than a dialog shows.
    pub fn cleaned(mut self) -> Request {
        self.because = shown_line(&self.because);
        self.arguments = self.arguments.map(|text| {
            let mut lines: Vec<String> = text.lines().take(SHOWN_LINES).map(shown_line).collect();
            if text.lines().nth(SHOWN_LINES).is_some() {
                lines.push("  …".into());
            }
            lines.join("\n")
        });
        self
    }
}

/// One line of a request's text, cleaned and clipped.
fn shown_line(text: &str) -> String {
    clean::clip(&clean::line(text), LINE_CHARS)
}
