//! The tools the model can address: MCP tools and resources of every server, under the names
//! the model sees (`toolPrefix`), with lookup from a name the model typed back to the server and
//! the original MCP name.

use crate::apps::Visibility;
use crate::resources::{is_app, required_variables, template_variables};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// `settings.toolPrefix`: how a server's name is put in front of its tools' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ToolPrefix {
    #[default]
    Server,
    Short,
    None,
    /// `mcp__<server>_<tool>` (pi-mcp-adapter's `"mcp"`).
    Mcp,
    /// Pi's own names, `mcp__<server>__<tool>` (see [`pi_tool_names`]).
    Pi,
}

/// One callable entry of the catalog: an MCP tool, or a resource (or resource template) exposed as
/// a `get_<name>` tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    pub server: String,
    /// The name the model sees and calls.
    pub name: String,
    /// The MCP tool name sent to the server (for a resource tool: its `get_<name>` base name).
    pub original: String,
    pub description: String,
    /// The MCP tool as the server listed it, shared with the server's metadata (`None` for
    /// resource tools).
    pub definition: Option<Arc<Value>>,
    /// Set for resource tools: calling them reads this URI.
    pub resource_uri: Option<String>,
    /// Set for resource template tools: calling them reads this template with the call's
    /// arguments as its variables.
    pub resource_template: Option<String>,
}

impl ToolInfo {
    /// The tool's `inputSchema`, when it is an object.
    pub fn input_schema(&self) -> Option<&Value> {
        self.definition
            .as_deref()?
            .get("inputSchema")
            .filter(|s| s.is_object())
    }

    pub fn is_resource(&self) -> bool {
        self.resource_uri.is_some()
    }

    /// Whether the model may see and call the tool (`_meta.ui.visibility` says so, or says
    /// nothing).
    pub fn for_model(&self) -> bool {
        self.definition
            .as_deref()
            .is_none_or(|definition| Visibility::of(definition).model)
    }
}

/// The prefix a server's tools get, or `None` for `toolPrefix: "none"`.
pub fn server_prefix(server: &str, prefix: ToolPrefix) -> Option<String> {
    let base = match prefix {
        ToolPrefix::None => return None,
        ToolPrefix::Mcp => return Some(format!("mcp__{}", sanitize_prefix(server))),
        ToolPrefix::Pi => return Some(format!("mcp__{}_", pi_word(server))),
        ToolPrefix::Server => server,
        ToolPrefix::Short => {
            let trimmed = server
                .strip_suffix("-mcp")
                .or_else(|| server.strip_suffix("_mcp"))
                .or_else(|| server.strip_suffix("mcp"))
                .unwrap_or(server);
            if trimmed.is_empty() {
                "mcp"
            } else {
                trimmed
            }
        }
    };
    Some(sanitize_prefix(base))
}

/// Keeps `[A-Za-z0-9_-]`; any other character becomes `_<hex code point>_` so that distinct
/// server names never collapse into one prefix.
fn sanitize_prefix(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            push_code_point(&mut out, c);
        }
    }
    out
}

/// `_<hex code point>_`: a character a name cannot hold as it is.
fn push_code_point(out: &mut String, c: char) {
    out.push_str(&format!("_{:x}_", c as u32));
}

/// Pi's tools are named like OpenAI's functions: at most this many characters.
const PI_NAME_MAX: usize = 64;

/// Every character other than ASCII letters, digits and `_` replaced by `_` (one per UTF-16
/// unit, as Pi's JavaScript does it).
fn pi_word(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

/// Pi's name for `tool` of `server`: `mcp__<server>__<tool>`, every character other than
/// letters, digits and `_` replaced by `_`. When that is too long, or `clash` (another tool of
/// the server comes out the same), it is cut to make room for `_` and the first 8 hex digits of
/// the SHA-256 of `<server>\0<tool>`, as Pi's built-in MCP names them.
pub fn pi_tool_name(server: &str, tool: &str, clash: bool) -> String {
    let name = pi_word(&format!("mcp__{server}__{tool}"));
    if name.len() <= PI_NAME_MAX && !clash {
        return name;
    }
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}_{hash}",
        &name[..name.len().min(PI_NAME_MAX - hash.len() - 1)]
    )
}

/// Pi's names for the tools of one server (`tools`: their MCP names, in order): all the tools
/// whose names come out the same get the hash suffix, so which one would keep the plain name
/// does not depend on the order of the list.
pub fn pi_tool_names(server: &str, tools: &[&str]) -> Vec<String> {
    let mut distinct: Vec<&str> = tools.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let plain: Vec<String> = distinct
        .iter()
        .map(|t| pi_word(&format!("mcp__{server}__{t}")))
        .collect();
    tools
        .iter()
        .map(|tool| {
            let mine = pi_word(&format!("mcp__{server}__{tool}"));
            pi_tool_name(
                server,
                tool,
                plain.iter().filter(|p| **p == mine).count() > 1,
            )
        })
        .collect()
}

/// The name the model sees for `tool` of `server`. Dots become `_`, and so does a character that
/// would not be shown as it is (`clean::is_plain`: a control, escape, invisible or bidi
/// character), as `_<hex code point>_`, so that the name shown is the name to call; a tool whose
/// name already starts with the prefix is not prefixed twice. (Pi's names of a whole server's
/// tools, which depend on each other, come from [`pi_tool_names`].)
pub fn format_tool_name(tool: &str, server: &str, prefix: ToolPrefix) -> String {
    if prefix == ToolPrefix::Pi {
        return pi_tool_name(server, tool, false);
    }
    let mut plain = String::with_capacity(tool.len());
    for c in tool.chars() {
        match c {
            '.' => plain.push('_'),
            c if pi_mcp_connection::clean::is_plain(c) => plain.push(c),
            c => push_code_point(&mut plain, c),
        }
    }
    let tool = plain;
    match server_prefix(server, prefix) {
        None => tool,
        Some(p) => {
            if tool.starts_with(&format!("{p}_")) {
                tool
            } else {
                format!("{p}_{tool}")
            }
        }
    }
}

/// `get_<name>` for a resource called `name`: non-alphanumerics become `_` (collapsed and
/// trimmed), lowercase, and a `resource_` stem when nothing usable is left or it starts with a digit.
pub fn resource_tool_name(resource_name: &str) -> String {
    let mut stem = String::with_capacity(resource_name.len());
    for c in resource_name.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.ends_with('_') {
            stem.push('_');
        }
    }
    let stem = stem.trim_matches('_');
    if stem.is_empty() {
        "get_resource".to_string()
    } else if stem.starts_with(|c: char| c.is_ascii_digit()) {
        format!("get_resource_{stem}")
    } else {
        format!("get_{stem}")
    }
}

/// The catalog entries of one server from its raw MCP `tools`, `resources` and resource
/// `templates` lists (as listed or cached). Entries without a usable name (or resources without a
/// URI) are skipped, never fatal; so are MCP Apps' user interfaces (`ui://`), which the model
/// cannot use.
pub fn build_server_tools(
    server: &str,
    prefix: ToolPrefix,
    tools: &[Arc<Value>],
    resources: &[Value],
    templates: &[Value],
    expose_resources: bool,
) -> Vec<ToolInfo> {
    let mut out = Vec::with_capacity(tools.len() + resources.len() + templates.len());
    for tool in tools {
        let Some(name) = tool
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        out.push(ToolInfo {
            server: server.to_string(),
            name: format_tool_name(name, server, prefix),
            original: name.to_string(),
            description: text_field(tool, "description"),
            definition: Some(tool.clone()),
            resource_uri: None,
            resource_template: None,
        });
    }
    if expose_resources {
        for resource in resources.iter().filter(|r| !is_app(r)) {
            let uri = resource
                .get("uri")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty());
            let name = resource
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty());
            let (Some(uri), Some(name)) = (uri, name) else {
                continue;
            };
            let base = resource_tool_name(name);
            let description = match text_field(resource, "description") {
                d if d.is_empty() => format!("Read resource: {uri}"),
                d => d,
            };
            out.push(ToolInfo {
                server: server.to_string(),
                name: format_tool_name(&base, server, prefix),
                original: base,
                description,
                definition: None,
                resource_uri: Some(uri.to_string()),
                resource_template: None,
            });
        }
        for template in templates.iter().filter(|t| !is_app(t)) {
            if let Some(tool) = template_tool(server, prefix, template) {
                if !out.iter().any(|t| t.name == tool.name) {
                    out.push(tool);
                }
            }
        }
    }
    if prefix == ToolPrefix::Pi {
        let originals: Vec<&str> = out.iter().map(|t| t.original.as_str()).collect();
        let names = pi_tool_names(server, &originals);
        for (tool, name) in out.iter_mut().zip(names) {
            tool.name = name;
        }
    }
    out
}

/// A resource template as a tool whose parameters are the template's variables.
fn template_tool(server: &str, prefix: ToolPrefix, template: &Value) -> Option<ToolInfo> {
    let uri_template = template
        .get("uriTemplate")?
        .as_str()
        .filter(|u| !u.is_empty())?;
    let name = template.get("name")?.as_str().filter(|n| !n.is_empty())?;
    let base = resource_tool_name(name);
    let description = match text_field(template, "description") {
        d if d.is_empty() => format!("Read resource template: {uri_template}"),
        d => format!("{d} (resource template {uri_template})"),
    };
    let properties: serde_json::Map<String, Value> = template_variables(uri_template)
        .into_iter()
        .map(|v| (v, json!({ "type": "string" })))
        .collect();
    let required = required_variables(uri_template);
    let definition = json!({
        "name": base,
        "description": description,
        "inputSchema": { "type": "object", "properties": properties, "required": required },
    });
    Some(ToolInfo {
        server: server.to_string(),
        name: format_tool_name(&base, server, prefix),
        original: base,
        description,
        definition: Some(Arc::new(definition)),
        resource_uri: None,
        resource_template: Some(uri_template.to_string()),
    })
}

fn text_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// What a name typed by the model resolves to.
#[derive(Debug)]
pub enum Lookup<'a> {
    Found(&'a ToolInfo),
    /// The name fits tools of several servers; the model must say which (`server`).
    Ambiguous(Vec<&'a ToolInfo>),
    NotFound,
}

type Matcher = fn(&ToolInfo, &str) -> bool;

/// Resolves `name` among `tools`: the displayed name, then the original MCP name, then the same
/// with `-` and `_` treated alike and case ignored, then `read_<r>` as an alias of `get_<r>`.
/// `server` restricts the search to one server.
pub fn lookup<'a>(tools: &'a [ToolInfo], name: &str, server: Option<&str>) -> Lookup<'a> {
    let scoped: Vec<&ToolInfo> = tools
        .iter()
        .filter(|t| server.is_none_or(|s| t.server == s))
        .collect();
    let passes: [Matcher; 3] = [
        |t, n| t.name == n,
        |t, n| t.original == n,
        |t, n| loose(&t.name) == loose(n) || loose(&t.original) == loose(n),
    ];
    let aliases = read_alias(name);
    for pass in passes {
        for candidate in std::iter::once(name).chain(aliases.as_deref()) {
            let hits: Vec<&ToolInfo> = scoped
                .iter()
                .copied()
                .filter(|t| pass(t, candidate))
                .collect();
            match hits.len() {
                0 => continue,
                1 => return Lookup::Found(hits[0]),
                _ => return Lookup::Ambiguous(hits),
            }
        }
    }
    Lookup::NotFound
}

/// `read_x` (the TypeScript adapter's later resource-tool name) stands for `get_x`, also after a prefix.
fn read_alias(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix("read_") {
        return Some(format!("get_{rest}"));
    }
    name.find("_read_")
        .map(|i| format!("{}_get_{}", &name[..i], &name[i + "_read_".len()..]))
}

fn loose(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefixes() {
        assert_eq!(
            format_tool_name("echo", "everything", ToolPrefix::Server),
            "everything_echo"
        );
        assert_eq!(
            format_tool_name("echo", "chrome-mcp", ToolPrefix::Short),
            "chrome_echo"
        );
        assert_eq!(
            format_tool_name("echo", "mcp", ToolPrefix::Short),
            "mcp_echo"
        );
        assert_eq!(format_tool_name("echo", "x", ToolPrefix::None), "echo");
        assert_eq!(
            format_tool_name("echo", "x", ToolPrefix::Mcp),
            "mcp__x_echo"
        );
        assert_eq!(format_tool_name("a.b", "s", ToolPrefix::Server), "s_a_b");
        // Hidden characters are spelled out: the name shown is the name to call.
        assert_eq!(
            format_tool_name("run\x1b]0;x\x07\n\u{202e}é", "s", ToolPrefix::Server),
            "s_run_1b_]0;x_7__a__202e_é"
        );
        assert_eq!(
            format_tool_name("github_search", "github", ToolPrefix::Server),
            "github_search"
        );
        assert_eq!(
            format_tool_name("t", "my server", ToolPrefix::Server),
            "my_20_server_t"
        );
    }

    #[test]
    fn resource_names() {
        assert_eq!(
            resource_tool_name("Architecture Doc.md"),
            "get_architecture_doc_md"
        );
        assert_eq!(resource_tool_name("--"), "get_resource");
        assert_eq!(
            resource_tool_name("2024 report"),
            "get_resource_2024_report"
        );
    }

    #[test]
    fn pi_names_as_pis_built_in_makes_them() {
        // Expected values computed with Pi 1.5.2's createMcpToolName.
        assert_eq!(
            pi_tool_name("git-hub", "get.issue", false),
            "mcp__git_hub__get_issue"
        );
        assert_eq!(pi_tool_name("srv", "tool😀", false), "mcp__srv__tool__");
        assert_eq!(
            pi_tool_name("s", &"x".repeat(70), false),
            format!("mcp__s__{}_7790a31a", "x".repeat(47))
        );
        assert_eq!(
            pi_tool_names("everything", &["a-b", "echo", "a.b"]),
            [
                "mcp__everything__a_b_c79ad592",
                "mcp__everything__echo",
                "mcp__everything__a_b_67aa159a"
            ]
        );
        let tools: Vec<Arc<Value>> = ["echo", "get-sum"]
            .iter()
            .map(|n| Arc::new(serde_json::json!({ "name": n })))
            .collect();
        let built = build_server_tools("my-srv", ToolPrefix::Pi, &tools, &[], &[], true);
        let names: Vec<&str> = built.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["mcp__my_srv__echo", "mcp__my_srv__get_sum"]);
    }

    #[test]
    fn builds_and_skips_malformed() {
        let tools = [
            json!({"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}}),
            json!({"description": "no name"}),
        ]
        .map(Arc::new);
        let resources = [
            json!({"uri": "demo://a", "name": "A doc"}),
            json!({"name": "no uri"}),
        ];
        let built = build_server_tools("ev", ToolPrefix::Server, &tools, &resources, &[], true);
        let names: Vec<_> = built.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ev_echo", "ev_get_a_doc"]);
        assert_eq!(built[1].description, "Read resource: demo://a");
        assert!(
            build_server_tools("ev", ToolPrefix::Server, &tools, &resources, &[], false)
                .iter()
                .all(|t| !t.is_resource())
        );
    }

    #[test]
    fn templates_are_tools_of_their_variables_and_apps_are_left_out() {
        let resources = [
            json!({"uri": "ui://widget", "name": "Widget"}),
            json!({"uri": "https://x/app.html", "name": "App", "mimeType": "text/html;profile=mcp-app"}),
        ];
        let templates = [
            json!({"uriTemplate": "demo://text/{id}{?lang}", "name": "Text", "description": "A text"}),
            json!({"uriTemplate": "ui://views/{id}", "name": "View"}),
        ];
        let built = build_server_tools("ev", ToolPrefix::Server, &[], &resources, &templates, true);
        let names: Vec<_> = built.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ev_get_text"]);
        assert_eq!(
            built[0].resource_template.as_deref(),
            Some("demo://text/{id}{?lang}")
        );
        assert_eq!(
            built[0].description,
            "A text (resource template demo://text/{id}{?lang})"
        );
        assert_eq!(
            built[0].input_schema().unwrap(),
            &json!({ "type": "object", "properties": { "id": { "type": "string" }, "lang": { "type": "string" } }, "required": ["id"] })
        );
    }

    #[test]
    fn lookups() {
        let mut tools = build_server_tools(
            "ev",
            ToolPrefix::Server,
            &[json!({"name": "get-sum"}), json!({"name": "echo"})].map(Arc::new),
            &[json!({"uri": "u://d", "name": "doc"})],
            &[],
            true,
        );
        tools.extend(build_server_tools(
            "mem",
            ToolPrefix::Server,
            &[json!({"name": "echo"})].map(Arc::new),
            &[],
            &[],
            true,
        ));
        assert!(
            matches!(lookup(&tools, "ev_get-sum", None), Lookup::Found(t) if t.original == "get-sum")
        );
        assert!(
            matches!(lookup(&tools, "ev_get_sum", None), Lookup::Found(t) if t.original == "get-sum")
        );
        assert!(matches!(lookup(&tools, "get-sum", None), Lookup::Found(_)));
        assert!(matches!(lookup(&tools, "echo", None), Lookup::Ambiguous(v) if v.len() == 2));
        assert!(
            matches!(lookup(&tools, "echo", Some("mem")), Lookup::Found(t) if t.server == "mem")
        );
        assert!(
            matches!(lookup(&tools, "ev_read_doc", None), Lookup::Found(t) if t.resource_uri.as_deref() == Some("u://d"))
        );
        assert!(matches!(lookup(&tools, "nope", None), Lookup::NotFound));
    }
}
