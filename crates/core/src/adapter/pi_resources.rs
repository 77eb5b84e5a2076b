//! Pi's three resource tools (Pi ≥ 0.99 has them, under Codex's names and shapes):
//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`, each taking a
//! `server`. They are registered with Pi's exposure rule: the widest server-level exposure
//! (`direct` over `codemode` over `deferred`) of the enabled servers known to have resources,
//! `hidden` ones left out and a server without `exposure` counting as Pi's default, `codemode`.
//! So Pi users' scripts and `tool_search` keep them, and the model sees them only where a
//! server is `direct`. Listings are JSON (`structuredContent` for scripts) in pages (see
//! [`page`]) that a cursor continues; MCP Apps (`ui://`) and icons are left out. Reading goes the
//! way of `mcp({ read })`.

mod page;
mod read;

use super::details::Listing;
use super::direct::{DirectToolDefinition, ToolAnnotations};
use super::reach::Purpose;
use super::trimmed;
use super::Kernel;
use super::Mode;
use super::{ErrorCode, Outcome, ServerMeta};
use crate::config::{Exposure, ServerConfig};
use crate::resources::is_app;
use page::Cursor;
use pi_mcp_connection::clean::clip;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Servers' resources: `mcp({ read })` (read.rs) and Pi's three resource tools.
pub struct Resources<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Resources);

/// Room in a page's text for what is not its entries (server, cursor, note).
const PAGE_ENVELOPE: usize = 2 * 1024;

pub const LIST_RESOURCES: &str = Mode::ListMcpResources.as_str();
pub const LIST_TEMPLATES: &str = Mode::ListMcpResourceTemplates.as_str();
pub const READ_RESOURCE: &str = Mode::ReadMcpResource.as_str();

/// Which of a server's lists a listing tool gives, and under which key.
#[derive(Clone, Copy)]
enum Kind {
    Resources,
    Templates,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
        }
    }

    fn items(self, meta: &ServerMeta) -> &[Value] {
        match self {
            Kind::Resources => &meta.resources,
            Kind::Templates => &meta.templates,
        }
    }

    /// What its entries are called, capitalized.
    fn noun(self) -> &'static str {
        match self {
            Kind::Resources => "Resources",
            Kind::Templates => "Resource templates",
        }
    }
}

/// Whether the tools reach the server: enabled and not `hidden` as a whole.
fn reached(server: &ServerConfig) -> bool {
    !server.disabled && server.exposure.server != Some(Exposure::Hidden)
}

fn has_resources(meta: &ServerMeta) -> bool {
    meta.resources
        .iter()
        .chain(&meta.templates)
        .any(|r| !is_app(r))
}

impl Resources<'_> {
    /// The three tools with the exposure Pi's rule gives them; none while no reachable enabled
    /// server is known to have resources.
    pub fn pi_resource_tools(&self) -> Vec<DirectToolDefinition> {
        let exposures: Vec<Exposure> = self
            .kernel
            .servers
            .configs()
            .filter(|s| {
                reached(s)
                    && self
                        .kernel
                        .servers
                        .meta(&s.name)
                        .is_some_and(|m| has_resources(&m))
            })
            .map(|s| s.exposure.server.unwrap_or(Exposure::Codemode))
            .collect();
        let Some(widest) = [Exposure::Direct, Exposure::Codemode, Exposure::Deferred]
            .into_iter()
            .find(|e| exposures.contains(e))
        else {
            return vec![];
        };
        let server = json!({ "type": "string", "description": "The MCP server, as configured; omit it to list every server." });
        let cursor = json!({ "type": "string", "description": "The nextCursor of the previous page, to continue the listing (with the same server); omit it for the first page." });
        let list_parameters = json!({
            "type": "object",
            "properties": { "server": server, "cursor": cursor },
            "additionalProperties": false,
        });
        let read_parameters = json!({
            "type": "object",
            "properties": {
                "server": { "type": "string", "description": "The MCP server, as list_mcp_resources names it." },
                "uri": { "type": "string", "description": "The resource's URI, as list_mcp_resources gives it." },
            },
            "required": ["server", "uri"],
            "additionalProperties": false,
        });
        let tool = |name: &str, description: &str, parameters: &Value, output: Option<Value>| {
            DirectToolDefinition {
                name: name.to_string(),
                label: name.to_string(),
                description: description.to_string(),
                prompt_snippet: description.to_string(),
                parameters: parameters.clone(),
                server: String::new(),
                tool: name.to_string(),
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(true),
                    ..ToolAnnotations::default()
                }),
                exposure: Some(widest),
                namespace: None,
                output_schema: output,
            }
        };
        vec![
            tool(
                LIST_RESOURCES,
                "Lists the resources (files, documents, data) MCP servers offer, as JSON: server, uri, name, description, mimeType; 100 a page, nextCursor continues.",
                &list_parameters,
                Some(listing_schema(Kind::Resources, "uri")),
            ),
            tool(
                LIST_TEMPLATES,
                "Lists the resource templates (RFC 6570 URIs with variables) MCP servers offer, as JSON: server, uriTemplate, name, description; 100 a page, nextCursor continues.",
                &list_parameters,
                Some(listing_schema(Kind::Templates, "uriTemplate")),
            ),
            tool(
                READ_RESOURCE,
                "Reads one resource of an MCP server by its URI: text as text, images as images, other data saved to a file whose path is given.",
                &read_parameters,
                None,
            ),
        ]
    }

    /// Runs one of the three tools.
    pub async fn pi_resource_tool(
        &self,
        name: &str,
        params: &Value,
        call_id: Option<String>,
    ) -> Outcome {
        let text = |key: &str| trimmed(params, key);
        let mode = Mode::ReadMcpResource;
        match name {
            LIST_RESOURCES => self.list_for_pi(Kind::Resources, Mode::ListMcpResources, text("server"), text("cursor")).await,
            LIST_TEMPLATES => self.list_for_pi(Kind::Templates, Mode::ListMcpResourceTemplates, text("server"), text("cursor")).await,
            READ_RESOURCE => match (text("server"), text("uri")) {
                (Some(server), Some(_)) if self.kernel.servers.configs().any(|s| s.name == server && !reached(s)) => {
                    Outcome::error(mode, ErrorCode::ToolHidden, format!("MCP server \"{server}\" is disabled or hidden by its config (`exposure: \"hidden\"`); its resources are not read.")).with_server(server)
                }
                (Some(server), Some(uri)) => {
                    self.read(uri, Some(server), Map::new(), call_id).await
                }
                _ => Outcome::error(
                    mode,
                    ErrorCode::InvalidArgs,
                    "read_mcp_resource needs `server` and `uri`; list_mcp_resources gives both.",
                ),
            },
            // Not a tool of Pi's; the call of one, then.
            other => Outcome::error(
                Mode::Call,
                ErrorCode::ToolNotFound,
                format!("{other} is not one of the MCP resource tools ({LIST_RESOURCES}, {LIST_TEMPLATES}, {READ_RESOURCE})."),
            ),
        }
    }

    async fn list_for_pi(
        &self,
        kind: Kind,
        mode: Mode,
        server: Option<&str>,
        cursor: Option<&str>,
    ) -> Outcome {
        let (server, from) = match cursor.map(|c| continued(mode, server, c)) {
            None => (server.map(str::to_string), None),
            Some(Ok(cursor)) => (cursor.server, Some(cursor.at)),
            Some(Err(why)) => return Outcome::error(mode, ErrorCode::InvalidArgs, why),
        };
        let server = server.as_deref();
        if let Some(name) = server {
            if let Err(outcome) = self
                .kernel
                .servers
                .enabled(name)
                .map_err(|why| why.outcome(mode, name))
            {
                return outcome;
            }
        }
        let fetched = self.kernel.list_unknown(server, None, Purpose::Look).await;
        let unavailable = fetched.failed;
        let mut metas = Vec::new();
        let mut with_resources = Vec::new();
        let mut names: Vec<String> = self
            .kernel
            .servers
            .configs()
            .filter(|s| reached(s))
            .map(|s| s.name.clone())
            .collect();
        names.sort();
        for name in &names {
            let Some(meta) = self.kernel.servers.meta(name) else {
                continue;
            };
            if has_resources(&meta) {
                with_resources.push(name.clone());
            }
            if server.is_none_or(|s| s == name) {
                metas.push((name.clone(), meta));
            }
        }
        let errors: Vec<Value> = unavailable
            .iter()
            .map(|(name, why)| json!({ "server": name, "error": why.reason(name).lines().next().unwrap_or_default() }))
            .collect();
        if let Some(name) = server {
            if let Some(error) = errors.first() {
                let why = error["error"].as_str().unwrap_or_default().to_string();
                return Outcome::error(mode, ErrorCode::ServerUnavailable, why).with_server(name);
            }
            if !with_resources.contains(&name.to_string()) {
                let known = match with_resources.is_empty() {
                    true => String::new(),
                    false => format!(" Servers with resources: {}.", with_resources.join(", ")),
                };
                return Outcome::error(
                    mode,
                    ErrorCode::InvalidArgs,
                    format!("MCP server \"{name}\" has no resources.{known}"),
                )
                .with_server(name);
            }
        }
        let errors_size = Value::Array(errors.clone()).to_string().len();
        let budget = self
            .kernel
            .metadata_limits()
            .max_bytes
            .saturating_sub(PAGE_ENVELOPE + errors_size);
        let listing: Vec<(String, Vec<&Value>)> = metas
            .iter()
            .map(|(name, meta)| {
                let visible = kind.items(meta).iter().filter(|i| !is_app(i)).collect();
                (name.clone(), visible)
            })
            .collect();
        let page = page::page(&listing, from.as_ref(), budget);
        let mut payload = Map::new();
        if let Some(name) = server {
            payload.insert("server".into(), json!(name));
        }
        let shown = page.entries.len();
        payload.insert(kind.key().into(), Value::Array(page.entries));
        if let Some(next) = page.next {
            let cursor = Cursor {
                tool: mode.to_string(),
                server: server.map(str::to_string),
                at: next,
            };
            payload.insert("nextCursor".into(), json!(cursor.encode()));
            let same = match server {
                Some(_) => " (and the same \"server\")",
                None => "",
            };
            let note = format!(
                "{} {} to {} of {}. For the next page, call {mode} with \"cursor\": the nextCursor above{same}.",
                kind.noun(),
                page.first + 1,
                page.first + shown + page.omitted,
                page.total
            );
            payload.insert("note".into(), json!(note));
        }
        if page.omitted > 0 {
            payload.insert("omitted".into(), json!(page.omitted));
        }
        if !errors.is_empty() {
            payload.insert("errors".into(), Value::Array(errors));
        }
        if !fetched.pending.is_empty() {
            payload.insert("listing".into(), json!(Listing::of(&fetched.pending)));
        }
        let payload = Value::Object(payload);
        let mut outcome = Outcome::text(mode, pi_mcp_connection::clean::json(&payload));
        if let Some(name) = server {
            outcome.details.server = Some(name.to_string());
        }
        outcome.structured = Some(Box::new(payload));
        self.kernel.bounded(outcome)
    }
}

/// The cursor `text` given to `mode` (with `server`, if given), or why it does not continue
/// this listing.
fn continued(mode: Mode, server: Option<&str>, text: &str) -> Result<Cursor, String> {
    let cursor = Cursor::decode(text).ok_or_else(|| {
        format!(
            "{mode}: the cursor \"{}\" is not one this tool gave; call it without `cursor` for the first page.",
            clip(text, 80)
        )
    })?;
    let whose = match &cursor.server {
        Some(s) => format!("server \"{s}\""),
        None => "every server".to_string(),
    };
    if cursor.tool != mode.as_str() {
        return Err(format!(
            "{mode}: this cursor continues {} of {whose}; call that tool with it, or this one without `cursor`.",
            cursor.tool
        ));
    }
    match server {
        Some(s) if cursor.server.as_deref() != Some(s) => Err(format!(
            "{mode}: this cursor continues the listing of {whose}, not of server \"{s}\"; give the same `server` with it, or none."
        )),
        _ => Ok(cursor),
    }
}

/// A listed resource or template without `_meta` and icons, its server first.
fn listed(server: &str, item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("server".into(), json!(server));
    if let Value::Object(fields) = item {
        for (key, value) in fields
            .iter()
            .filter(|(k, _)| *k != "_meta" && *k != "icons")
        {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

/// The JSON a listing tool returns, for Pi's codemode scripts (which get it as an object).
fn listing_schema(kind: Kind, id: &str) -> Value {
    let string = json!({ "type": "string" });
    json!({
        "type": "object",
        "properties": {
            "server": string,
            kind.key(): {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "server": string, id: string, "name": string, "title": string, "description": string, "mimeType": string },
                    "required": ["server", id, "name"],
                },
            },
            "errors": {
                "type": "array",
                "description": "Servers that could not be listed",
                "items": { "type": "object", "properties": { "server": string, "error": string }, "required": ["server", "error"] },
            },
            "listing": {
                "type": "object",
                "description": "Servers still being listed (their count, the first few): call again in a moment for theirs",
                "properties": { "pending": { "type": "integer" }, "servers": { "type": "array", "items": string } },
            },
        },
        "required": [kind.key()],
    })
}
