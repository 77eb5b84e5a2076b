//! Configuration: the files pi-mcp-adapter users already have, merged field by field (later
//! files win), checked with diagnostics that name file, server and field. Nothing here fails:
//! a bad file or server is reported and the rest is used.

mod interpolate;
mod jsonc;
mod server;

pub use interpolate::interpolate;
pub use server::value_kind;

use crate::catalog::ToolPrefix;
use crate::output_guard::{Limits, DEFAULT_LIMITS};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variables by name.
pub type Env = HashMap<String, String>;

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The session's working directory: project files are looked up here.
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// Replaces `<agentDir>/mcp.json` (Pi's `--mcp-config`).
    pub config_path: Option<PathBuf>,
    pub env: Env,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Servers in the order they were first defined.
    pub servers: Vec<ServerConfig>,
    pub settings: Settings,
    pub diagnostics: Vec<Diagnostic>,
    /// The files that were read, in precedence order (lowest first).
    pub files: Vec<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub tool_prefix: ToolPrefix,
    pub request_timeout_ms: Option<u64>,
    /// Minutes a lazy server may sit unused before it is stopped (`0`: never).
    pub idle_timeout_min: Option<f64>,
    /// Default of each server's `directTools`.
    pub direct_tools: bool,
    /// Limits of the output guard; `None`: `outputGuard: false`.
    pub output_guard: Option<Limits>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tool_prefix: ToolPrefix::default(),
            request_timeout_ms: None,
            idle_timeout_min: None,
            direct_tools: false,
            output_guard: Some(DEFAULT_LIMITS),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    /// The last file that set a field of this server.
    pub source: PathBuf,
    /// The merged entry as written (before interpolation): the input of the cache hash.
    pub entry: Value,
    pub transport: Transport,
    pub lifecycle: Lifecycle,
    pub request_timeout_ms: Option<u64>,
    /// Overrides `settings.idleTimeout` (minutes; `0`: never).
    pub idle_timeout_min: Option<f64>,
    pub disabled: bool,
    /// Echo the server's stderr.
    pub debug: bool,
    /// Start from Pi's whole environment (true) or a minimal one.
    pub inherit_env: bool,
    /// Offer the server's resources as `get_<name>` tools.
    pub expose_resources: bool,
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
    /// Overrides `settings.toolPrefix` for this server.
    pub tool_prefix: Option<ToolPrefix>,
    /// Tools registered as Pi tools of their own; `None`: `settings.directTools` decides.
    pub direct_tools: Option<DirectTools>,
}

/// Which of a server's tools Pi gets as first-class tools (besides the `mcp` gateway).
#[derive(Clone, Debug, PartialEq)]
pub enum DirectTools {
    None,
    All,
    /// MCP tool names (or resource tool names such as `get_readme`).
    Only(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the inherited environment (interpolated).
        env: Vec<(String, String)>,
        /// `None`: the session's cwd.
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lifecycle {
    /// Connect on first use.
    #[default]
    Lazy,
    /// Connect when the session starts.
    Eager,
    /// Connect when the session starts and stay connected.
    KeepAlive,
    /// Connect on first use, then stay connected.
    LazyKeepAlive,
}

impl Lifecycle {
    pub fn connects_at_start(self) -> bool {
        matches!(self, Lifecycle::Eager | Lifecycle::KeepAlive)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// A problem found in the configuration, with where it is and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub level: Level,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    pub server: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl Diagnostic {
    /// A problem with a whole file, or with one of its top-level fields.
    fn in_file(level: Level, file: &Path, field: Option<&str>, message: String) -> Diagnostic {
        Diagnostic {
            level,
            file: Some(file.to_path_buf()),
            line: None,
            server: None,
            field: field.map(str::to_string),
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.level {
            Level::Error => "error: ",
            Level::Warning => "warning: ",
        })?;
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        match (&self.server, &self.field) {
            (Some(s), Some(field)) => write!(f, "server \"{s}\", field `{field}`: ")?,
            (Some(s), None) => write!(f, "server \"{s}\": ")?,
            (None, Some(field)) => write!(f, "`{field}`: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

/// Pi's agent directory: `PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir(env: &Env) -> PathBuf {
    match env.get("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => interpolate::expand_path(dir, env),
        None => home(env).join(".pi").join("agent"),
    }
}

fn home(env: &Env) -> PathBuf {
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The config files in precedence order, lowest first, and whether each must exist.
pub fn sources(opts: &LoadOptions) -> Vec<(PathBuf, bool)> {
    let pi_global = match &opts.config_path {
        Some(path) => (opts.cwd.join(path), true),
        None => (opts.agent_dir.join("mcp.json"), false),
    };
    if opts.env.get("PI_MCP_CONFIG_MODE").map(String::as_str) == Some("exclusive") {
        return vec![pi_global];
    }
    let home = home(&opts.env);
    vec![
        (home.join(".config/mcp/mcp.json"), false),
        (home.join(".agents/mcp.json"), false),
        (home.join(".agents/mcp/mcp.json"), false),
        pi_global,
        (opts.cwd.join(".mcp.json"), false),
        (opts.cwd.join(".pi/mcp.json"), false),
    ]
}

/// Reads and merges every config file. Never fails; problems end up in `diagnostics`.
pub fn load(opts: &LoadOptions) -> Config {
    let mut config = Config::default();
    let mut merged = Merged::default();
    for (path, required) in sources(opts) {
        if config.files.contains(&path) {
            continue; // e.g. the project is the home directory
        }
        if let Some(root) = read_file(&path, required, &mut config.diagnostics) {
            merged.add(&path, &root, &mut config.diagnostics);
            config.files.push(path);
        }
    }
    config.settings = settings(&merged.settings, &mut config.diagnostics);
    for (name, entry, source) in &merged.servers {
        if let Some(server) = server::parse(name, entry, source, &opts.env, &mut config.diagnostics)
        {
            config.servers.push(server);
        }
    }
    config
}

/// The root object of a config file; `None` when it is absent, blank or unusable.
fn read_file(
    path: &Path,
    required: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Map<String, Value>> {
    let mut problem = |line: Option<usize>, message: String| {
        diagnostics.push(Diagnostic {
            line,
            ..Diagnostic::in_file(Level::Error, path, None, message)
        });
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return None,
        Err(e) => {
            problem(
                None,
                format!("cannot read the config file ({e}); its servers are not loaded"),
            );
            return None;
        }
    };
    if jsonc::is_blank(&text) {
        return None;
    }
    match serde_json::from_str::<Value>(&jsonc::strip(&text)) {
        Ok(Value::Object(root)) => Some(root),
        Ok(other) => {
            problem(
                None,
                format!("must hold a JSON object like {{\"mcpServers\": {{...}}}}, got {}; its servers are not loaded", server::describe(&other)),
            );
            None
        }
        Err(e) => {
            problem(
                Some(e.line()),
                format!(
                    "invalid JSON at column {}: {e}; its servers are not loaded until it is fixed",
                    e.column()
                ),
            );
            None
        }
    }
}

/// The layers merged so far: settings key by key, servers field by field.
#[derive(Default)]
struct Merged {
    settings: Map<String, Value>,
    servers: Vec<(String, Value, PathBuf)>,
}

/// Fields that belong to one transport; setting the other transport drops them.
const STDIO_FIELDS: [&str; 4] = ["command", "args", "env", "cwd"];
const HTTP_FIELDS: [&str; 6] = [
    "url",
    "headers",
    "auth",
    "bearerToken",
    "bearerTokenEnv",
    "oauth",
];
/// Credentials bound to a URL: a layer that changes the URL drops the inherited ones.
const URL_CREDENTIALS: [&str; 5] = ["headers", "auth", "bearerToken", "bearerTokenEnv", "oauth"];

impl Merged {
    fn add(&mut self, path: &Path, root: &Map<String, Value>, diagnostics: &mut Vec<Diagnostic>) {
        let wrong = |field: &str, expected: &str, got: &Value| {
            let message = format!("must be {expected}, got {}", server::describe(got));
            Diagnostic::in_file(Level::Error, path, Some(field), message)
        };
        match root.get("settings") {
            None | Some(Value::Null) => {}
            Some(Value::Object(settings)) => self.settings.extend(settings.clone()),
            Some(other) => diagnostics.push(wrong("settings", "an object", other)),
        }
        if root.get("imports").is_some_and(|v| !v.is_null()) {
            let message = "importing other tools' configs is not supported yet; copy those servers into `mcpServers`";
            diagnostics.push(Diagnostic::in_file(
                Level::Warning,
                path,
                Some("imports"),
                message.into(),
            ));
        }
        let key = if root.contains_key("mcpServers") {
            "mcpServers"
        } else {
            "mcp-servers"
        };
        match root.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(servers)) => {
                for (name, entry) in servers {
                    self.add_server(name, entry, path);
                }
            }
            Some(other) => diagnostics.push(wrong(key, "an object of servers by name", other)),
        }
    }

    fn add_server(&mut self, name: &str, entry: &Value, path: &Path) {
        let Some((_, base, source)) = self.servers.iter_mut().find(|(n, ..)| n == name) else {
            self.servers
                .push((name.to_string(), entry.clone(), path.to_path_buf()));
            return;
        };
        *source = path.to_path_buf();
        let (Value::Object(base), Some(layer)) = (&mut *base, entry.as_object()) else {
            *base = entry.clone(); // not objects: parsing reports it
            return;
        };
        if layer.contains_key("command") {
            HTTP_FIELDS.iter().for_each(|f| drop(base.remove(*f)));
        }
        if layer.contains_key("url") {
            STDIO_FIELDS.iter().for_each(|f| drop(base.remove(*f)));
            if base.get("url") != layer.get("url") {
                URL_CREDENTIALS.iter().for_each(|f| drop(base.remove(*f)));
            }
        }
        base.extend(layer.clone());
    }
}

fn settings(raw: &Map<String, Value>, diagnostics: &mut Vec<Diagnostic>) -> Settings {
    let mut warn = |field: &str, message: String| {
        diagnostics.push(Diagnostic {
            level: Level::Warning,
            file: None,
            line: None,
            server: None,
            field: Some(format!("settings.{field}")),
            message,
        });
    };
    let tool_prefix = match raw.get("toolPrefix") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => server::tool_prefix(p, &mut |m| warn("toolPrefix", m)),
        Some(other) => {
            warn(
                "toolPrefix",
                format!(
                    "must be a string, got {}; using \"server\"",
                    server::describe(other)
                ),
            );
            None
        }
    };
    let request_timeout_ms = match raw.get("requestTimeoutMs") {
        Some(Value::Number(n)) => n.as_f64().filter(|ms| *ms >= 1.0).map(|ms| ms as u64),
        None | Some(Value::Null) => None,
        Some(other) => {
            warn(
                "requestTimeoutMs",
                format!(
                    "must be a number of milliseconds, got {}; using 60000",
                    server::describe(other)
                ),
            );
            None
        }
    };
    let idle_timeout_min = match raw.get("idleTimeout") {
        None | Some(Value::Null) => None,
        Some(value) => server::minutes(value)
            .map_err(|message| warn("idleTimeout", message))
            .ok(),
    };
    let direct_tools = match raw.get("directTools") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            warn(
                "directTools",
                format!(
                    "must be true or false here (lists belong in a server entry), got {}; using false",
                    server::describe(other)
                ),
            );
            false
        }
    };
    let output_guard = match raw.get("outputGuard") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Some(DEFAULT_LIMITS),
        Some(Value::Bool(false)) => None,
        Some(Value::Object(limits)) => {
            let mut limit = |key: &str, default: usize| match limits.get(key) {
                None | Some(Value::Null) => default,
                Some(v) => match v.as_u64().filter(|n| *n > 0) {
                    Some(n) => n as usize,
                    None => {
                        let got = server::describe(v);
                        warn(
                            &format!("outputGuard.{key}"),
                            format!("must be a positive whole number, got {got}; using {default}"),
                        );
                        default
                    }
                },
            };
            Some(Limits {
                max_bytes: limit("maxBytes", DEFAULT_LIMITS.max_bytes),
                max_lines: limit("maxLines", DEFAULT_LIMITS.max_lines),
            })
        }
        Some(other) => {
            let got = server::describe(other);
            warn(
                "outputGuard",
                format!("must be true, false or {{ maxBytes, maxLines }}, got {got}; using true"),
            );
            Some(DEFAULT_LIMITS)
        }
    };
    Settings {
        tool_prefix: tool_prefix.unwrap_or_default(),
        request_timeout_ms,
        idle_timeout_min,
        direct_tools,
        output_guard,
    }
}

/// Values a server's `inheritEnv: false` still passes on.
pub const MINIMAL_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The whole environment a stdio server starts with.
pub fn server_env(
    base: &Env,
    inherit: bool,
    overlay: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = base
        .iter()
        .filter(|(k, _)| inherit || MINIMAL_ENV.contains(&k.as_str()))
        .filter(|(k, _)| !overlay.iter().any(|(o, _)| o == *k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.extend(overlay.iter().cloned());
    env
}

#[cfg(test)]
mod tests;
