//! A use to approve as its dialog shows it and its grants hash it. A session makes it from its
//! own config; a member of a family without a UI sends it to the session that asks for it, which
//! shows it and hashes its grants from the same fields, so a grant covers only what the dialog
//! named. The arguments travel as the dialog shows them (clipped, cleaned, secrets hidden),
//! never as the call has them.

use super::{launch, present, Grant, Subject};
use crate::config::ServerConfig;
use pi_mcp_connection::family_approval::{Request, Used};
use serde_json::Value;

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

/// The grants `request`'s dialog offers: every use of the server, and for a tool the tool.
pub fn grants(request: &Request) -> (Grant, Option<Grant>) {
    let whole = Grant::whole(&request.server, &request.launch);
    let tool = match &request.used {
        Used::Tool {
            name,
            input_schema,
            annotations,
        } => Some(Grant::one_tool(
            &request.server,
            &request.launch,
            name,
            input_schema.as_ref(),
            annotations.as_ref(),
        )),
        _ => None,
    };
    (whole, tool)
}
