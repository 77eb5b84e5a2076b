//! Every text the model, a person or a test reads: the `mcp` tool's definition, and the output of
//! each mode. Compact, and always with the next step spelled out. What servers wrote is cleaned
//! (`clean`): one-line fields here, the rest when it becomes an answer's text block.

mod auth;
mod broker;
pub(crate) mod content;
mod doctor;
pub mod hints;
mod listing;
mod o200k;
mod schema;
mod servers_section;
mod setup;

pub use auth::{
    auth_help, auth_usage, needs_auth, paste_prompt, sign_in_cancelled, sign_in_state, sign_in_url,
    signed_in, signed_out, signed_out_reason, AuthKind,
};
pub use broker::{broker_status, broker_stopped, family};
pub use content::{call_result, call_result_of, resource_updated, Block, Rendered};
pub use doctor::{doctor, tilde, ConnectCheck};
pub use listing::{
    declared_still_listing, lookup_still_listing, search_still_listing, status_still_listing,
    still_listing, NAMES_SHOWN,
};
pub use schema::{parameters, shape};
pub use servers_section::{servers_section, SectionServer, SECTION_SERVERS, SUMMARY_TOKENS};
pub use setup::{
    add_failed, add_usage, added, name_taken, nothing_to_copy, project_untrusted, setup_done,
    setup_plan, unknown_tool, unknown_well_known,
};

use crate::catalog::ToolInfo;
use crate::search::{Hit, Page};
use pi_mcp_connection::clean::{self, clip};
pub use pi_mcp_connection::english::listed;
use pi_mcp_connection::pool::Cut;
use serde_json::{json, Value};
use std::borrow::Cow;

/// Search hits that get their parameter shape, and those that get their description (the
/// rest are named: `describe` tells more).
const SHAPED_HITS: usize = 3;
const DESCRIBED_HITS: usize = 5;
/// Descriptions in lists are cut near this many characters.
const LIST_DESCRIPTION: usize = 90;
/// Instructions quoted in a list before pointing at `instructions`.
const INSTRUCTIONS_PREVIEW: usize = 240;

/// A search's answer quotes its request up to near this many characters: a request may carry
/// anything (a whole encoded file), the answer stays small.
const QUOTED_REQUEST: usize = 100;
/// A fitting server's description after a weak search is cut near this many characters.
const FITTING_SERVER_DESCRIPTION: usize = 80;
/// A server's `description` in the `mcp` tool's description is cut near this many characters.
const TOOL_SERVER_DESCRIPTION: usize = 45;

/// The `mcp` tool's description: the modes and the configured servers (name, and `description`
/// when the config gives one); byte-stable for a config.
pub fn tool_description(servers: &[(&str, Option<&str>)]) -> String {
    let servers = if servers.is_empty() {
        "none configured".to_string()
    } else {
        let server = |(name, description): &(&str, Option<&str>)| match description {
            Some(d) => format!("{name}: {}", clip(&first_line(d), TOOL_SERVER_DESCRIPTION)),
            None => name.to_string(),
        };
        // Descriptions may hold commas.
        let described = servers.iter().any(|(_, d)| d.is_some());
        let separator = if described { "; " } else { ", " };
        servers
            .iter()
            .map(server)
            .collect::<Vec<_>>()
            .join(separator)
    };
    format!(
        "Tools of MCP servers ({servers}). Pass one of: tool+args to call one; read a resource URI; \
         search (words OR'd) to find tools; describe a tool's parameters; server to list its tools; \
         instructions of a server; connect a server; nothing for status."
    )
}

/// The `mcp` tool's parameters (JSON Schema); every field optional. A parameter the tool's
/// description already explains (describe, instructions, connect, offset) has no description of
/// its own: each costs tokens in every request the model gets.
pub fn tool_parameters() -> Value {
    let text = |description: &str| json!({ "type": "string", "description": description });
    let string = json!({ "type": "string" });
    json!({
        "type": "object",
        "properties": {
            "tool": text("Tool to call"),
            "read": text("Resource URI to read (a template's variables in args)"),
            "args": { "description": "Its arguments", "anyOf": [{ "type": "object" }, { "type": "string" }] },
            "search": text("Words to find tools by"),
            "regex": { "type": "boolean", "description": "search is a regex" },
            "includeSchemas": { "type": "boolean", "description": "Show parameters (default true)" },
            "describe": string,
            "server": text("List its tools, or scope tool/search/describe"),
            "instructions": string,
            "connect": string,
            "limit": { "type": "number", "description": "Max results" },
            "offset": { "type": "number" }
        }
    })
}

/// What we know of a server's connection.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerState {
    Connected,
    Connecting,
    /// Not running; its tools are known from the cache.
    Cached,
    NotConnected,
    Failed {
        ago_secs: u64,
        reason: String,
    },
    /// The server refused us for want of (valid) credentials.
    NeedsAuth {
        reason: String,
    },
    Disabled,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    pub tool_count: usize,
    /// The config's `description`.
    pub description: Option<String>,
    /// An OAuth server's sign-in (`signed in, expires in 58 min`), when there is one to show.
    pub sign_in: Option<String>,
    /// Entries of its listing left out because they could not be read.
    pub left_out: usize,
    /// How it is shared with other sessions (`shared with 2 other sessions`), when it is.
    pub sharing: Option<String>,
}

pub fn status(servers: &[ServerStatus], notes: &[String]) -> String {
    let enabled = servers
        .iter()
        .filter(|s| s.state != ServerState::Disabled)
        .count();
    let connected = servers
        .iter()
        .filter(|s| s.state == ServerState::Connected)
        .count();
    let tools: usize = servers
        .iter()
        .filter(|s| s.state != ServerState::Disabled)
        .map(|s| s.tool_count)
        .sum();
    let mut out = format!("MCP: {connected}/{enabled} servers connected, {tools} tools");
    if servers.is_empty() {
        out.push_str("\nNo MCP servers are configured. Add them under \"mcpServers\" in ~/.pi/agent/mcp.json or .pi/mcp.json; the user's /mcp setup (in a terminal: pi-mcp setup) takes the servers of their other tools' configs and offers well-known ones, /mcp add <name> --url <url> adds one.");
    }
    for s in servers {
        out.push('\n');
        out.push_str(&status_line(s));
        if let (Some(sign_in), false) =
            (&s.sign_in, matches!(s.state, ServerState::NeedsAuth { .. }))
        {
            out.push_str(&format!(" [{sign_in}]"));
        }
        if let Some(sharing) = &s.sharing {
            out.push_str(&format!(" [{sharing}]"));
        }
    }
    if !servers.is_empty() {
        out.push_str("\n\nmcp({ server: \"name\" }) lists a server's tools; mcp({ search: \"words\" }) finds tools.");
    }
    if !notes.is_empty() {
        out.push_str("\n\nConfiguration problems:");
        for note in notes {
            out.push_str("\n- ");
            out.push_str(note);
        }
    }
    out
}

fn status_line(s: &ServerStatus) -> String {
    let mut line = state_line(s);
    if s.left_out > 0 {
        line.push_str(&format!(
            "; {} left out, unreadable (mcp({{ server: \"{}\" }}) says which)",
            s.left_out, s.name
        ));
    }
    match &s.description {
        Some(description) => format!("{line} — {}", first_line(description)),
        None => line,
    }
}

fn state_line(s: &ServerStatus) -> String {
    let tools = plural(s.tool_count, "tool");
    match &s.state {
        ServerState::Connected => format!("✓ {}: connected, {tools}", s.name),
        ServerState::Connecting => format!("… {}: connecting", s.name),
        ServerState::Cached => format!("○ {}: {tools} (cached; starts on first use)", s.name),
        ServerState::NotConnected => {
            format!("○ {}: not connected yet; starts on first use", s.name)
        }
        ServerState::Failed { ago_secs, reason } => {
            format!(
                "✗ {}: failed {ago_secs} s ago: {}",
                s.name,
                first_line(reason)
            )
        }
        // The reason starts with "needs authentication".
        ServerState::NeedsAuth { reason } => format!("🔒 {}: {}", s.name, first_line(reason)),
        ServerState::Disabled => format!("⊘ {}: disabled", s.name),
    }
}

/// Which config file defined which servers (`files`: path as shown, project-level, servers).
/// Project files are flagged: a repository's config can make Pi launch commands.
pub fn config_sources(files: &[(String, bool, Vec<&str>)]) -> String {
    let mut out = String::from("Servers are defined in:");
    for (path, project, servers) in files {
        let note = if *project {
            " (project file: it can launch commands)"
        } else {
            ""
        };
        out.push_str(&format!("\n- {path}{note}: {}", servers.join(", ")));
    }
    out
}

/// One-line footer for Pi's status bar.
pub fn footer(servers: &[ServerStatus]) -> Option<String> {
    let enabled: Vec<&ServerStatus> = servers
        .iter()
        .filter(|s| s.state != ServerState::Disabled)
        .collect();
    if enabled.is_empty() {
        return None;
    }
    let connected = enabled
        .iter()
        .filter(|s| s.state == ServerState::Connected)
        .count();
    let failed = enabled
        .iter()
        .filter(|s| matches!(s.state, ServerState::Failed { .. }))
        .count();
    let needs_auth = enabled
        .iter()
        .filter(|s| matches!(s.state, ServerState::NeedsAuth { .. }))
        .count();
    let connecting = enabled
        .iter()
        .filter(|s| s.state == ServerState::Connecting)
        .count();
    let mut out = format!("MCP {connected}/{} connected", enabled.len());
    if connecting > 0 {
        out.push_str(&format!(", {connecting} connecting"));
    }
    if failed > 0 {
        out.push_str(&format!(", {failed} failed"));
    }
    match needs_auth {
        0 => {}
        1 => out.push_str(", 1 needs auth"),
        n => out.push_str(&format!(", {n} need auth")),
    }
    Some(out)
}

/// What `list` shows: a page of a server's tools.
pub struct Listed<'a> {
    pub server: &'a str,
    pub state: &'a ServerState,
    /// All of the server's tools; `offset` and `limit` pick the page.
    pub tools: &'a [&'a ToolInfo],
    pub offset: usize,
    pub limit: usize,
    pub instructions: Option<&'a str>,
    /// The bound its listing ran into, if any.
    pub cut: Option<Cut>,
    /// Entries of its listing that could not be read, one line each.
    pub left_out: &'a [String],
}

pub fn list(listed: &Listed) -> String {
    let Listed { server, tools, .. } = *listed;
    let how = match listed.state {
        ServerState::Connected => "connected",
        _ => "from cache, not running",
    };
    if tools.is_empty() {
        return format!("Server \"{server}\" has no tools ({how}).") + &left_out(listed.left_out);
    }
    let mut out = format!("{server}: {} ({how})", plural(tools.len(), "tool"));
    let shown: Vec<&&ToolInfo> = tools
        .iter()
        .skip(listed.offset)
        .take(listed.limit)
        .collect();
    if shown.is_empty() {
        out.push_str(&format!("\nNone after offset {}.", listed.offset));
    }
    for tool in &shown {
        out.push_str(&format!("\n- {}", tool.name));
        let description = summary(tool);
        if !description.is_empty() {
            out.push_str(": ");
            out.push_str(&clip(&description, LIST_DESCRIPTION));
        }
    }
    let shown_to = listed.offset + shown.len();
    if !shown.is_empty() && (listed.offset > 0 || shown_to < tools.len()) {
        out.push_str(&format!(
            "\n\n{}–{shown_to} of {}",
            listed.offset + 1,
            tools.len()
        ));
        if shown_to < tools.len() {
            out.push_str(&format!(
                " — mcp({{ server: \"{server}\", offset: {shown_to} }}) for more."
            ));
        }
    }
    if let Some(cut) = listed.cut {
        out.push_str(&format!("\n\n{}", cut_note(cut, tools.len())));
    }
    out.push_str(&left_out(listed.left_out));
    if let Some(text) = listed.instructions.map(str::trim).filter(|t| !t.is_empty()) {
        out.push_str(&format!(
            "\n\nInstructions: {}",
            clip(&clean::one_line(text), INSTRUCTIONS_PREVIEW)
        ));
        if text.chars().count() > INSTRUCTIONS_PREVIEW {
            out.push_str(&format!(
                " (all of it: mcp({{ instructions: \"{server}\" }}))"
            ));
        }
    }
    out
}

/// The entries of a listing that could not be read, as a paragraph (none: nothing).
fn left_out(lines: &[String]) -> String {
    let mut out = String::new();
    if !lines.is_empty() {
        out.push_str("\n\nLeft out of the server's listing, because they could not be read:");
        for line in lines {
            out.push_str(&format!("\n- {}", clean::line(line)));
        }
    }
    out
}

/// `bytes` in KiB or MiB, whole.
fn binary_size(bytes: usize) -> String {
    match bytes {
        b if b >= 1024 * 1024 => format!("{} MiB", b / (1024 * 1024)),
        b => format!("{} KiB", b.div_ceil(1024)),
    }
}

/// What a listing that ran into a bound left out.
fn cut_note(cut: Cut, kept: usize) -> String {
    match cut {
        Cut::Items(max) => format!(
            "The server lists more than {max} tools; only the first {max} are kept (the bound per server)."
        ),
        Cut::Bytes(max) => format!(
            "The server's metadata passes {}; only the first {kept} tools, within that bound, are kept.",
            binary_size(max)
        ),
    }
}

/// `/mcp tools`: every server's tools.
pub fn tools_overview(groups: &[(String, Vec<&ToolInfo>)]) -> String {
    let total: usize = groups.iter().map(|(_, tools)| tools.len()).sum();
    let mut out = format!("MCP tools: {total}");
    for (server, tools) in groups {
        out.push_str(&format!("\n\n{server} ({})", plural(tools.len(), "tool")));
        if tools.is_empty() {
            out.push_str(": none known yet (connect it with /mcp reconnect ");
            out.push_str(server);
            out.push(')');
        }
        for tool in tools {
            out.push_str(&format!("\n- {}", tool.name));
            if let Some(hints) = hints::for_people(tool) {
                out.push_str(&format!(" ({hints})"));
            }
        }
    }
    out
}

pub fn search(query: &str, server: Option<&str>, page: &Page, include_schemas: bool) -> String {
    let query = clip(&clean::line(query), QUOTED_REQUEST);
    let scope = server
        .map(|s| format!(" on server \"{s}\""))
        .unwrap_or_default();
    if page.total == 0 {
        let mut out = format!("No tools match \"{query}\"{scope}. Try other or fewer words, or mcp({{}}) to see the servers.");
        push_fitting_servers(&mut out, page);
        return out;
    }
    if page.hits.is_empty() {
        return format!(
            "{} match \"{query}\"{scope}, none after offset {}.",
            plural(page.total, "tool"),
            page.offset
        );
    }
    let mut out = if query.is_empty() {
        format!("{}{scope}:", plural(page.total, "tool"))
    } else if page.weak.is_some() {
        let share = if page.total == 1 { "shares" } else { "share" };
        format!(
            "No strong match for \"{query}\"{scope}: {} {share} some of its words, closest first:",
            plural(page.total, "tool")
        )
    } else {
        format!(
            "{} match \"{query}\"{scope}, best first:",
            plural(page.total, "tool")
        )
    };
    for (i, Hit { tool, also }) in page.hits.iter().enumerate() {
        out.push_str(&format!("\n{}", tool.name));
        if !also.is_empty() {
            let twins: Vec<String> = also
                .iter()
                .map(|t| format!("on {}: {}", t.server, t.name))
                .collect();
            out.push_str(&format!(" (also {})", twins.join("; ")));
        }
        let description = summary(tool);
        if !description.is_empty() && i < DESCRIBED_HITS {
            out.push_str(&format!(": {}", clip(&description, 160)));
        }
        if include_schemas && i < SHAPED_HITS {
            match (&tool.resource_uri, tool.input_schema().and_then(shape)) {
                (Some(uri), _) => out.push_str(&format!(
                    "\n  reads resource {}; no parameters",
                    clean::line(uri)
                )),
                (None, Some(shape)) => out.push_str(&format!("\n  {shape}")),
                (None, None) => out.push_str("\n  no parameters"),
            }
        }
    }
    let shown_to = page.offset + page.hits.len();
    if shown_to < page.total {
        out.push_str(&format!(
            "\n\n{} of {} — offset {shown_to} for more.",
            shown_to - page.offset,
            page.total
        ));
    }
    if include_schemas && page.hits.len() > SHAPED_HITS {
        out.push_str("\nmcp({ describe: \"name\" }) shows any tool's parameters.");
    }
    push_fitting_servers(&mut out, page);
    out
}

/// With a weak match: the servers whose description fits the request.
fn push_fitting_servers(out: &mut String, page: &Page) {
    let Some(servers) = page.weak.as_ref().filter(|s| !s.is_empty()) else {
        return;
    };
    out.push_str("\nServers whose description fits: ");
    let fitting: Vec<String> = servers
        .iter()
        .map(|(name, about)| match clean::one_line(about) {
            about if about.is_empty() => name.clone(),
            about => format!("{name} ({})", clip(&about, FITTING_SERVER_DESCRIPTION)),
        })
        .collect();
    out.push_str(&fitting.join("; "));
    out.push_str(". mcp({ server: \"name\" }) lists a server's tools.");
}

/// Who reads a description: the model gets a tool's hints as one word, a person all of them and
/// its icon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    Model,
    Person,
}

pub fn describe(tool: &ToolInfo, audience: Audience) -> String {
    let mut out = format!("{} (server \"{}\"", tool.name, tool.server);
    if tool.original != tool.name {
        out.push_str(&format!(", MCP name \"{}\"", clean::line(&tool.original)));
    }
    out.push(')');
    if let (Audience::Model, Some(word)) = (audience, hints::for_model(tool)) {
        out.push_str(&format!(" [{word}]"));
    }
    if !tool.description.trim().is_empty() {
        out.push('\n');
        out.push_str(&clean::text(tool.description.trim()));
    }
    if audience == Audience::Person {
        let words = hints::words(tool);
        if !words.is_empty() {
            out.push_str(&format!("\nHints: {}.", words.join(", ")));
        }
        if let Some(icon) = hints::icon(tool) {
            out.push_str(&format!("\nIcon: {icon}"));
        }
    }
    out.push_str("\n\n");
    match (&tool.resource_uri, tool.input_schema()) {
        (Some(uri), _) => out.push_str(&format!(
            "Reads the resource {}; takes no parameters.",
            clean::line(uri)
        )),
        (None, Some(schema)) => {
            let params = parameters(schema);
            if params.starts_with("- ") {
                out.push_str("Parameters:\n");
            }
            out.push_str(&params);
        }
        (None, None) => out.push_str("No parameters."),
    }
    out
}

pub fn instructions(server: &str, text: Option<&str>) -> String {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => format!("Instructions of \"{server}\":\n\n{}", clean::text(text)),
        None => format!("Server \"{server}\" gives no instructions."),
    }
}

/// A tool the config hides.
pub fn hidden(name: &str, server: &str, source: &std::path::Path) -> String {
    format!(
        "Tool \"{name}\" of server \"{server}\" is hidden by its config (`exposure`/`toolExposure` \"hidden\" in {}): it cannot be listed, searched, described or called.",
        source.display()
    )
}

/// A tool only its server's MCP App may call.
pub fn for_app(name: &str, server: &str) -> String {
    format!(
        "Tool \"{name}\" of server \"{server}\" is for the server's app alone (its `_meta.ui.visibility` is [\"app\"]): the app's interface calls it, the model cannot."
    )
}

/// A tool Pi's command line leaves out of this run; `why` names the option.
pub fn not_in_this_run(name: &str, why: &str) -> String {
    format!("Tool \"{name}\" is not available in this run: {why}.")
}

pub fn not_found(name: &str, server: Option<&str>, suggestions: &[String]) -> String {
    let name = clean::line(name);
    let mut out = match server {
        Some(s) => format!("Tool \"{name}\" not found on server \"{s}\"."),
        None => format!("Tool \"{name}\" not found."),
    };
    if suggestions.is_empty() {
        out.push_str(" Find tools with mcp({ search: \"words\" }).");
    } else {
        out.push_str(&format!(" Did you mean: {}?", suggestions.join(", ")));
    }
    out
}

/// Arguments that do not fit the tool's schema: each problem, then what the tool takes.
pub fn invalid_arguments(tool: &str, problems: &[String], schema: &Value) -> String {
    let mut out = format!("Arguments for {tool} do not fit its schema; nothing was sent:\n");
    for problem in problems {
        out.push_str(&format!("- {problem}\n"));
    }
    out.push_str(&format!("\nExpected parameters:\n{}", parameters(schema)));
    out
}

pub fn ambiguous(name: &str, candidates: &[&ToolInfo]) -> String {
    let name = clean::line(name);
    let options: Vec<String> = candidates
        .iter()
        .map(|t| format!("{} (server \"{}\")", t.name, t.server))
        .collect();
    format!(
        "Tool \"{name}\" exists on several servers: {}. Use the full name, or add server.",
        options.join(", ")
    )
}

/// A running call's progress, as a partial result: `server_tool: 2/5 (copying)`.
pub fn progress(tool: &str, progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let message = message.map(clean::one_line).filter(|m| !m.is_empty());
    // A task's status message: no count to show.
    if let (None, 0.0, Some(message)) = (total, progress, &message) {
        return format!("{tool}: {message}");
    }
    let mut out = match total {
        Some(total) => format!("{tool}: {progress}/{total}"),
        None => format!("{tool}: {progress}"),
    };
    if let Some(message) = message {
        out.push_str(&format!(" ({message})"));
    }
    out
}

/// The first sentence or line of a tool's description.
fn summary(tool: &ToolInfo) -> String {
    clean::one_line(tool.description.trim().lines().next().unwrap_or_default())
}

/// A rough duration: seconds, minutes or hours.
fn duration(secs: u64) -> String {
    match secs {
        0..=89 => format!("{secs} s"),
        90..=5399 => format!("{} min", (secs + 30) / 60),
        _ => format!("{} h", (secs + 1800) / 3600),
    }
}

/// The first line of `text`, cleaned (`clean::line`).
fn first_line(text: &str) -> Cow<'_, str> {
    clean::line(text.lines().next().unwrap_or_default())
}

pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests;
