//! Direct tools: MCP tools Pi registers as tools of their own (`directTools` in a server entry,
//! or `MCP_DIRECT_TOOLS=server,server/tool` from a parent agent), built from the known catalog
//! so no server has to start. They are called through the same path as `mcp({ tool })`.

mod exposed;

use super::pi_resources::Resources;
use super::Kernel;
use crate::catalog::ToolInfo;
use crate::config::{DirectTools as Selection, Exposure};
use crate::render::SectionServer;
use pi_mcp_connection::clean;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Names a direct tool may not take: Pi's built-in tools and our gateway.
const RESERVED_NAMES: [&str; 8] = ["read", "bash", "edit", "write", "grep", "find", "ls", "mcp"];

/// The tools to register, and why any selected tool was left out.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Debug, Default, PartialEq)]
pub struct DirectTools {
    pub tools: Vec<DirectToolDefinition>,
    pub warnings: Vec<String>,
    pub reach: Reach,
    pub auto_enable_codemode: bool,
    pub unlisted: Vec<String>,
    pub resource_tools: Vec<DirectToolDefinition>,
    pub proxy: bool,
}

/// Declared tools past which a warning says each one weighs on every request
/// (`settings.warnOnLargeDirectTools`), as pi-mcp-adapter warns.
const MANY_DECLARED: usize = 75;

/// Which of Pi's tool-reaching tools the config's exposures call for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reach {
    pub codemode: bool,
    pub tool_search: bool,
}

/// A Pi tool definition for one MCP tool, and the server and MCP name it calls.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectToolDefinition {
    pub name: String,
    pub label: String,
    pub description: String,
    pub prompt_snippet: String,
    pub parameters: Value,
    pub server: String,
    pub tool: String,
    pub annotations: Option<ToolAnnotations>,
    pub exposure: Option<Exposure>,
    pub namespace: Option<ToolNamespace>,
    pub output_schema: Option<Value>,
}

/// MCP's tool annotations (hints), as Pi's `ToolDefinition.annotations` takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolAnnotations {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// Pi's `ToolDefinition.namespace`: the server as a group of tools.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolNamespace {
    pub name: String,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

/// The tools Pi registers of their own (direct, exposure-registered, Pi's resource tools).
pub struct Direct<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Direct);

impl Direct<'_> {
    pub fn direct_tools(&self) -> DirectTools {
        let selection = self.kernel.direct_selection();
        let catalog = self.kernel.servers.view();
        let mut set = DirectTools::default();
        let mut chosen: Vec<&ToolInfo> = Vec::new();
        for (server, wanted) in &selection {
            let tools = catalog.server_tools(server);
            if let Selection::Only(names) = wanted {
                if !tools.is_empty() {
                    for name in names
                        .iter()
                        .filter(|n| !tools.iter().any(|t| *n == &t.original || *n == &t.name))
                    {
                        set.warnings.push(format!(
                            "MCP: direct tool \"{name}\" is not a tool of server \"{server}\"; check `directTools`."
                        ));
                    }
                }
            }
            chosen.extend(
                tools
                    .into_iter()
                    .filter(|t| wanted.selects(&t.original, &t.name)),
            );
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for tool in &chosen {
            *seen.entry(tool.name.as_str()).or_default() += 1;
        }
        for tool in chosen {
            if RESERVED_NAMES.contains(&tool.name.as_str()) {
                set.warnings.push(format!(
                    "MCP: direct tool \"{}\" of server \"{}\" is skipped: it collides with Pi's built-in tool; call it with mcp({{ tool: \"{}\", server: \"{}\" }}).",
                    tool.name, tool.server, tool.name, tool.server
                ));
            } else if seen[tool.name.as_str()] > 1 {
                set.warnings.push(format!(
                    "MCP: direct tool \"{}\" of server \"{}\" is skipped: another server has a tool of that name; set a toolPrefix.",
                    tool.name, tool.server
                ));
            } else {
                set.tools.push(DirectToolDefinition::from(tool));
            }
        }
        self.exposed_tools(&mut set);
        set.resource_tools = Resources::from(self.kernel).pi_resource_tools();
        self.weigh_declared(&mut set);
        set
    }

    /// The `mcp` tool, and a warning when many tools are declared to the model.
    fn weigh_declared(&self, set: &mut DirectTools) {
        let settings = &self.kernel.config.settings;
        let declared = set
            .tools
            .iter()
            .filter(|t| t.exposure.is_none_or(|e| e == Exposure::Direct))
            .count();
        if settings.warn_on_large_direct_tools && declared >= MANY_DECLARED {
            set.warnings.push(format!(
                "MCP: {declared} MCP tools are declared to the model as tools of their own, and each adds its definition to every request; pick the ones you use (`directTools`, `toolExposure`; 5 to 20 is usual), or set `settings.warnOnLargeDirectTools: false`."
            ));
        }
        let unlisted = self.kernel.declared_unlisted();
        set.proxy = !settings.disable_proxy_tool || declared == 0 || !unlisted.is_empty();
        if settings.disable_proxy_tool && set.proxy {
            set.warnings.push(match unlisted.is_empty() {
                true => "MCP: `settings.disableProxyTool` is set, but no tool is declared to the model as a tool of its own (`directTools`, `exposure: \"direct\"`), so the mcp tool stays.".to_string(),
                false => format!(
                    "MCP: `settings.disableProxyTool` is set, but the tools of {} are not known yet: the mcp tool stays until they are listed.",
                    unlisted.join(", ")
                ),
            });
        }
    }
}

/// The system prompt's section on the servers the model reaches only through the `mcp` tool (or
/// Pi's codemode and tool_search): every enabled server but those whose tools the config declares
/// to the model one and all (`directTools`, `MCP_DIRECT_TOOLS`, `exposure` `direct`) or hides.
impl Direct<'_> {
    /// The text of the system prompt's `mcp_servers` section, or None when no server is reached
    /// that way. From the config and the metadata cache only: byte-stable for a given pair.
    pub fn servers_section(&self) -> Option<String> {
        let declared = self.kernel.direct_selection();
        let listed: Vec<_> = self
            .kernel
            .servers
            .configs()
            .filter(|s| !s.disabled)
            .filter(|s| {
                !declared
                    .iter()
                    .any(|(name, wanted)| *name == s.name && *wanted == Selection::All)
            })
            .filter(|s| {
                !s.exposure
                    .always_among(&[Exposure::Direct, Exposure::Hidden])
            })
            .map(|s| (s, self.kernel.servers.meta(&s.name)))
            .collect();
        crate::render::servers_section(
            listed
                .iter()
                .map(|(server, meta)| SectionServer {
                    name: &server.name,
                    description: server.description.as_deref(),
                    instructions: meta.as_ref().and_then(|m| m.instructions.as_deref()),
                })
                .collect(),
        )
    }
}

/// Pi's definition of a tool; Pi shows its label, description and snippet, so the server's text
/// in them is cleaned (`clean`).
impl From<&ToolInfo> for DirectToolDefinition {
    fn from(tool: &ToolInfo) -> DirectToolDefinition {
        let description = match (&tool.resource_uri, tool.description.trim()) {
            (Some(uri), "") => format!("Reads the MCP resource {uri}."),
            (Some(uri), text) => format!("{text}\n\nReads the MCP resource {uri}."),
            (None, "") => "(no description)".to_string(),
            (None, text) => text.to_string(),
        };
        let snippet = match tool.description.split_whitespace().collect::<Vec<_>>() {
            words if words.is_empty() => format!("MCP tool from {}", tool.server),
            words => pi_mcp_connection::clean::clip(&words.join(" "), 100),
        };
        DirectToolDefinition {
            name: tool.name.clone(),
            label: format!("MCP: {}", clean::line(&tool.original)),
            description: clean::text(&description).into_owned(),
            prompt_snippet: clean::line(&snippet).into_owned(),
            parameters: parameters(tool),
            server: tool.server.clone(),
            tool: tool.original.clone(),
            annotations: annotations(tool),
            exposure: None,
            namespace: None,
            output_schema: None,
        }
    }
}

/// The boolean hints of the tool's MCP `annotations`, if it has any.
fn annotations(tool: &ToolInfo) -> Option<ToolAnnotations> {
    let hints = tool.definition.as_deref()?.get("annotations")?;
    let hint = |key: &str| hints.get(key).and_then(Value::as_bool);
    let found = ToolAnnotations {
        read_only_hint: hint("readOnlyHint"),
        destructive_hint: hint("destructiveHint"),
        idempotent_hint: hint("idempotentHint"),
        open_world_hint: hint("openWorldHint"),
    };
    (found != ToolAnnotations::default()).then_some(found)
}

/// The input schema as Pi expects it: an object schema, without `$schema` and the top-level
/// `additionalProperties` some providers reject.
fn parameters(tool: &ToolInfo) -> Value {
    let mut schema = match tool.input_schema() {
        Some(Value::Object(map)) if tool.resource_uri.is_none() => map.clone(),
        _ => serde_json::Map::new(),
    };
    schema.remove("$schema");
    schema.remove("additionalProperties");
    schema.insert("type".into(), json!("object"));
    schema.entry("properties").or_insert_with(|| json!({}));
    Value::Object(schema)
}
