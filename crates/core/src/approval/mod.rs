//! Tool approval: what a use of a server is (a tool call, a resource read, a prompt), the grants a
//! person gave for the rest of a session, and (in `present`) the dialog and the answers the model
//! gets. A grant holds names and a hash, never arguments or results: the hash is of the server's
//! launch as written in its config (command, args, cwd, or URL) and, for a tool, of its name,
//! input schema and annotations, so a changed tool or config drops it. A use is asked about as a
//! [`Request`] (made by `request`): what its dialog shows and its grants hash, which a member of a
//! session's family sends to the session that asks for it (`pi_mcp_connection::family_approval`).

pub mod present;
pub mod request;

pub use pi_mcp_connection::family_approval::{Request, Used};

use crate::cache::stable_hash;
use crate::catalog::{pi_tool_name, ToolInfo};
use crate::config::ServerConfig;
use parking_lot::Mutex;
use serde_json::{json, Value};

/// The `customType` of the session entries grants are kept in (Pi's `appendEntry`).
pub const ENTRY_TYPE: &str = "pi-mcp-native/approval";

/// A use of a server that may need approval.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    Tool(&'a ToolInfo),
    /// A resource read by URI (`read`, Pi's `read_mcp_resource`).
    Read {
        server: &'a str,
        uri: &'a str,
    },
    /// `prompts/get` (a prompt's command, `pi-mcp prompt`).
    Prompt {
        server: &'a str,
        name: &'a str,
    },
}

impl Subject<'_> {
    pub fn server(&self) -> &str {
        match self {
            Subject::Tool(tool) => &tool.server,
            Subject::Read { server, .. } | Subject::Prompt { server, .. } => server,
        }
    }

    /// Whether `server`'s `approveTools` asks before this use. A resource read or a prompt asks
    /// only where every use of the server does.
    pub fn asks(&self, server: &ServerConfig) -> bool {
        let approval = &server.approval;
        match self {
            Subject::Tool(tool) => {
                let pi_name = pi_tool_name(&tool.server, &tool.original, false);
                let names = [tool.original.as_str(), tool.name.as_str(), &pi_name];
                // A resource tool (`get_…`) reads.
                let read_only = json!({ "readOnlyHint": true });
                let annotations = match tool.definition.as_deref() {
                    _ if tool.is_resource() || tool.resource_template.is_some() => Some(&read_only),
                    definition => definition.and_then(|d| d.get("annotations")),
                };
                approval.asks(&names, annotations)
            }
            Subject::Read { .. } | Subject::Prompt { .. } => approval.whole_server(),
        }
    }
}

/// What became of an approval question that someone could be asked.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// An option's `value`.
    Picked(present::Choice),
    /// Closed without an answer (Esc), before the wait ran out.
    Closed,
    /// Nobody answered within the wait.
    Unanswered,
}

/// A session entry (Pi's `appendEntry(customType, data)`): a grant's, or any other extension's
/// when the session gives its entries back.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub custom_type: String,
    pub data: Value,
}

/// A session grant: every use of `server`, or of its `tool`, while `hash` still fits.
#[derive(Clone, Debug, PartialEq)]
pub struct Grant {
    pub server: String,
    pub tool: Option<String>,
    pub hash: String,
}

impl Grant {
    /// The grant of every use of `server`.
    pub fn server(server: &ServerConfig) -> Grant {
        Grant::whole(&server.name, &launch(server))
    }

    /// The grant of `tool` of `server`.
    pub fn tool(server: &ServerConfig, tool: &ToolInfo) -> Grant {
        let definition = tool.definition.as_deref();
        let field = |key: &str| definition.and_then(|d| d.get(key));
        Grant::one_tool(
            &server.name,
            &launch(server),
            &tool.original,
            field("inputSchema"),
            field("annotations"),
        )
    }

    /// The grant of every use of the server `name` launched as `launch` (as written).
    fn whole(name: &str, launch: &Value) -> Grant {
        Grant {
            server: name.to_string(),
            tool: None,
            hash: stable_hash(&json!({ "server": name, "launch": launch })),
        }
    }

    /// The grant of the tool `tool` (its MCP name, input schema and annotations) of the server
    /// `name` launched as `launch`.
    fn one_tool(
        name: &str,
        launch: &Value,
        tool: &str,
        input_schema: Option<&Value>,
        annotations: Option<&Value>,
    ) -> Grant {
        let hashed = json!({
            "server": name,
            "launch": launch,
            "tool": tool,
            "inputSchema": input_schema,
            "annotations": annotations,
        });
        Grant {
            server: name.to_string(),
            tool: Some(tool.to_string()),
            hash: stable_hash(&hashed),
        }
    }

    /// The session entry that keeps it.
    pub fn entry(&self) -> Entry {
        let mut data = json!({ "server": self.server, "hash": self.hash });
        if let Some(tool) = &self.tool {
            data["tool"] = json!(tool);
        }
        Entry {
            custom_type: ENTRY_TYPE.to_string(),
            data,
        }
    }

    fn from_entry(entry: &Entry) -> Option<Grant> {
        if entry.custom_type != ENTRY_TYPE {
            return None;
        }
        let data = &entry.data;
        let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_string);
        Some(Grant {
            server: text("server")?,
            tool: text("tool"),
            hash: text("hash")?,
        })
    }
}

/// How a server is started or reached, as its config writes it (references not resolved: no
/// secret a variable holds gets into a hash).
pub(crate) fn launch(server: &ServerConfig) -> Value {
    let field = |key: &str| server.entry.get(key).cloned().unwrap_or(Value::Null);
    json!({
        "command": field("command"),
        "args": field("args"),
        "cwd": field("cwd"),
        "url": field("url"),
        "socket": field("socket"),
    })
}

/// The grants of a session.
#[derive(Default)]
pub struct Grants {
    granted: Mutex<Vec<Grant>>,
}

impl Grants {
    /// The grants the session's entries hold (others' entries among them), in place of the ones
    /// held so far: the session resumed, reloaded or moved to another branch.
    pub fn restore(&self, entries: &[Entry]) {
        *self.granted.lock() = entries.iter().filter_map(Grant::from_entry).collect();
    }

    pub fn add(&self, grant: Grant) {
        let mut granted = self.granted.lock();
        if !granted.contains(&grant) {
            granted.push(grant);
        }
    }

    /// Whether a grant covers `subject` of `server` as it is configured and listed now.
    pub fn covers(&self, server: &ServerConfig, subject: &Subject) -> bool {
        let granted = self.granted.lock();
        let whole = Grant::server(server);
        if granted.contains(&whole) {
            return true;
        }
        match subject {
            Subject::Tool(tool) => granted.contains(&Grant::tool(server, tool)),
            _ => false,
        }
    }

    /// Whether a grant covers `request` (a family member's use, hashed from what it sent).
    pub fn cover(&self, request: &Request) -> bool {
        let granted = self.granted.lock();
        let (whole, tool) = request::grants(request);
        granted.contains(&whole) || tool.is_some_and(|tool| granted.contains(&tool))
    }
}

#[cfg(test)]
mod tests;
