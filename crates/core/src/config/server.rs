//! One merged server entry checked and turned into a [`ServerConfig`]. Every problem becomes a
//! diagnostic naming the server and the field; only a server that cannot run at all is dropped.

use super::fields::{self as key, Field, Place};
use super::headers_command;
use super::interpolate::{expand, expand_home, expand_path, expand_reporting, references};
use super::merge::MergedServer;
use super::oauth::{self, OAuthConfig};
use super::reader::{Reader, Report};
use super::{
    envfile, exposure, fields, ClientSettings, CommandPolicy, ConfigValue, Diagnostic, DirectTools,
    Env, Exposure, HttpAuth, Level, Lifecycle, ServerConfig, Sharing, ToolExposure, Transport,
};
use crate::catalog::ToolPrefix;
use pi_mcp_connection::bounded_read::{self, FileLimits};
use pi_mcp_connection::pool::Protocol;
use pi_mcp_connection::secret::Secret;
pub use pi_mcp_connection::value_kind::describe;
use pi_mcp_connection::value_kind::value_kind;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What parsing a server needs besides its entry.
pub struct Context<'a> {
    /// Our config files that belong to the project (`.mcp.json`, `.pi/mcp.json`).
    pub project_files: &'a [PathBuf],
    /// `settings.exposure`.
    pub default_exposure: Option<Exposure>,
    /// `settings.sharedServers`.
    pub shared_by_default: bool,
    /// `settings.shareWithSubagents`.
    pub family_by_default: bool,
    pub env: &'a Env,
    /// Caps on the files a config names (`envFile`).
    pub limits: &'a FileLimits,
    /// The session's directory: a relative `cwd` is relative to it.
    pub cwd: &'a Path,
    pub commands: &'a CommandPolicy,
    /// `approveTools` of every file.
    pub approvals: &'a super::approval::Votes,
}

/// Checks the fields of one entry, collecting diagnostics as it goes.
pub(super) struct Fields<'a> {
    server: &'a MergedServer,
    entry: &'a Map<String, Value>,
    ctx: &'a Context<'a>,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Fields<'a> {
    pub fn report(&mut self, level: Level, field: &str, message: String) {
        self.diagnostics.push(Diagnostic {
            level,
            file: Some(self.server.file_of(field).to_path_buf()),
            line: None,
            server: Some(self.server.name.clone()),
            field: Some(field.to_string()),
            message,
        });
    }

    pub fn get(&self, field: &Field) -> Option<&'a Value> {
        self.entry.get(field.name).filter(|v| !v.is_null())
    }

    /// The file that set `field`.
    pub fn file_of(&self, field: &str) -> &'a Path {
        self.server.file_of(field)
    }

    /// Read from another tool's config (`imports`).
    pub fn is_imported(&self) -> bool {
        self.server.imported.is_some()
    }

    /// Whether programs a config names may run from `file` (see `CommandPolicy`).
    pub fn commands_run_from(&self, file: &Path) -> bool {
        self.ctx.commands.runs_from(file)
    }

    /// The typed reader over this entry, reporting as this server's.
    pub fn read(&mut self) -> Reader<'a, Report<'_>> {
        let entry = self.entry;
        Reader::in_server(
            entry,
            Box::new(move |level, key: &str, message| self.report(level, key, message)),
        )
    }

    fn string(&mut self, field: &Field) -> Option<String> {
        self.read().string(field)
    }

    fn flag(&mut self, field: &Field) -> bool {
        self.read().flag(field)
    }

    fn strings(&mut self, field: &Field) -> Option<Vec<String>> {
        self.read().strings(field)
    }

    /// `env` or `headers`: text with variables expanded, or (in our own config files) a
    /// `!command` run when connecting.
    fn values(&mut self, field: &Field) -> Vec<(String, ConfigValue)> {
        let values = self.read().text_map(field, "; the variable is not set");
        values
            .into_iter()
            .map(|(key, raw)| {
                let value = self.value(field.name, &raw);
                (key, value)
            })
            .collect()
    }

    /// `raw`, set in `field`: text with variables expanded, or (in our own config files) a
    /// `!command` run when the value is needed.
    pub fn value(&self, field: &str, raw: &str) -> ConfigValue {
        let env = self.ctx.env;
        match self.server.imported.is_some() {
            true => ConfigValue::text(expand(raw, env)),
            false => self
                .ctx
                .commands
                .value(raw, self.server.file_of(field), |text| expand(text, env)),
        }
    }

    pub fn env(&self) -> &'a Env {
        self.ctx.env
    }

    /// `disabled` or `enabled`: `None` when absent. Any other value than a boolean is an error,
    /// and counts as off (`off`), as Pi skips such an entry: a server the user meant to turn off
    /// must not start.
    fn switch(&mut self, field: &Field, off: bool, problems: &mut Vec<Diagnostic>) -> Option<bool> {
        self.get(field)?;
        let on = self.read().flag_set(field);
        if on.is_none() {
            problems.append(&mut self.diagnostics);
        }
        Some(on.unwrap_or(off))
    }
}

/// Whether the server is turned off: by pi-mcp-adapter's `disabled: true` or Pi's
/// `enabled: false`. When the two keys disagree it stays off, and one warning names both.
/// Reported into `problems`, which a disabled server's other diagnostics do not reach.
fn switched_off(f: &mut Fields, problems: &mut Vec<Diagnostic>) -> bool {
    let disabled = f.switch(&key::DISABLED, true, problems);
    let enabled = f.switch(&key::ENABLED, false, problems);
    let off = disabled == Some(true) || enabled == Some(false);
    if let (Some(disabled), Some(enabled)) = (disabled, enabled) {
        if disabled == enabled {
            let message = format!(
                "says {enabled} while `disabled` says {disabled}; either key can turn the server off, so it stays off"
            );
            f.report(Level::Warning, key::ENABLED.name, message);
            problems.append(&mut f.diagnostics);
        }
    }
    off
}

/// How long a request may take: Pi's `timeout` (seconds) or pi-mcp-adapter's
/// `requestTimeoutMs`; when both are set and differ, the shorter, with a warning naming both.
fn request_timeout(f: &mut Fields) -> Option<u64> {
    let pi = f.read().seconds(&key::TIMEOUT);
    let adapter = f.read().millis(&key::REQUEST_TIMEOUT_MS).flatten();
    match (pi, adapter.map(|d| d.as_millis() as u64)) {
        (Some(pi), Some(adapter)) if pi != adapter => {
            let shorter = pi.min(adapter);
            let message = format!(
                "({} s) and `requestTimeoutMs` ({adapter} ms) both set how long a request may take; the shorter, {shorter} ms, applies",
                pi as f64 / 1000.0
            );
            f.report(Level::Warning, key::TIMEOUT.name, message);
            Some(shorter)
        }
        (pi, adapter) => pi.or(adapter),
    }
}

/// `exposure` and `toolExposure`; with `directTools` beside a server-wide `exposure`, the
/// exposure decides and a warning says so.
fn tool_exposure(f: &mut Fields) -> ToolExposure {
    let mut problems = vec![];
    let parsed = exposure::parse(
        f.get(&key::EXPOSURE),
        f.get(&key::TOOL_EXPOSURE),
        f.ctx.default_exposure,
        &mut problems,
    );
    for (field, message) in problems {
        f.report(Level::Warning, &field, message);
    }
    if f.get(&key::EXPOSURE).is_some() && f.get(&key::DIRECT_TOOLS).is_some() {
        let message = "is set beside `directTools`; `exposure` decides how each tool is reached, `directTools` is ignored".into();
        f.report(Level::Warning, key::EXPOSURE.name, message);
    }
    parsed
}

/// Parses a server (already merged across files). `None` when it cannot be used.
pub fn parse(
    server: &MergedServer,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ServerConfig> {
    let value = &server.entry;
    let Some(entry) = value.as_object() else {
        diagnostics.push(Diagnostic {
            level: Level::Error,
            file: Some(server.source().to_path_buf()),
            line: None,
            server: Some(server.name.clone()),
            field: None,
            message: format!(
                "must be an object like {{\"command\": \"npx\", \"args\": [...]}}, got {}",
                value_kind(value)
            ),
        });
        return None;
    };
    let mut f = Fields {
        server,
        entry,
        ctx,
        diagnostics: Vec::new(),
    };
    if server.is_override()
        && !fields::at(Place::Server).any(|k| k.reaches && entry.contains_key(k.name))
    {
        diagnostics.push(Diagnostic {
            level: Level::Note,
            file: Some(server.source().to_path_buf()),
            line: None,
            server: Some(server.name.clone()),
            field: None,
            message: "adjusts a server defined elsewhere (another tool's config through `imports`, or a Pi extension), but there is none of that name; ignored".into(),
        });
        return None;
    }
    let disabled = switched_off(&mut f, diagnostics);
    f.read().check_keys(|k| fields::check(Place::Server, k));
    let transport = transport(&mut f);
    let sharing = transport.as_ref().map_or(Sharing::Own, |t| {
        sharing(&mut f, matches!(t, Transport::Stdio { .. }))
    });
    let search_keywords = f.read().lists(&key::SEARCH_KEYWORDS);
    let trace = f.get(&key::TRACE).map(|_| f.flag(&key::TRACE));
    let config = transport.map(|transport| ServerConfig {
        disabled,
        sharing,
        search_keywords,
        trace,
        ..settings(&mut f, transport)
    });
    // A disabled server is never started: its problems do not matter until it is enabled.
    if !disabled {
        diagnostics.append(&mut f.diagnostics);
    }
    config
}

/// The server with `transport` and the entry's other fields, read in the order they are
/// reported; its switch, sharing, keywords and trace are the caller's.
fn settings(f: &mut Fields, transport: Transport) -> ServerConfig {
    let server = f.server;
    let lifecycle = lifecycle(f);
    let protocol = protocol(f);
    let request_timeout_ms = request_timeout(f);
    let idle_timeout_min = f.read().minutes(&key::IDLE_TIMEOUT);
    let debug = f.flag(&key::DEBUG);
    let inherit_env = f.flag(&key::INHERIT_ENV);
    let expose_resources = f.flag(&key::EXPOSE_RESOURCES);
    let include_tools = f.strings(&key::INCLUDE_TOOLS);
    let exclude_tools = f.strings(&key::EXCLUDE_TOOLS);
    let tool_prefix = tool_prefix(&mut f.read());
    let direct_tools = direct_tools(f);
    let description = f.string(&key::DESCRIPTION).filter(|d| !d.trim().is_empty());
    let exposure = tool_exposure(f);
    ServerConfig {
        name: server.name.clone(),
        source: server.source().to_path_buf(),
        files: server.files.clone(),
        field_files: server.field_files.clone(),
        imported: server.imported.clone(),
        registered: server.registered.clone(),
        package: server.package.clone(),
        entry: server.entry.clone(),
        transport,
        lifecycle,
        protocol,
        request_timeout_ms,
        idle_timeout_min,
        disabled: false,
        debug,
        inherit_env,
        expose_resources,
        include_tools,
        exclude_tools,
        tool_prefix,
        direct_tools,
        description,
        exposure,
        sharing: Sharing::Own,
        approval: f.ctx.approvals.of(&server.name),
        search_keywords: vec![],
        trace: None,
        client: ClientSettings::parse(&mut f.read()),
    }
}

/// `shared` and `sharedEnv`, for a stdio server: unset, the settings say (`sharedServers`, then
/// `shareWithSubagents`); `false`, its own; `true`, the per-user broker.
fn sharing(f: &mut Fields, stdio: bool) -> Sharing {
    let user = f.ctx.shared_by_default;
    let chosen = f
        .get(&key::SHARED)
        .map(|_| f.read().flag_set(&key::SHARED).unwrap_or(user));
    let mut env = f.strings(&key::SHARED_ENV).unwrap_or_default();
    if !stdio {
        if chosen == Some(true) {
            let message = "applies to local (stdio) servers; a remote server is shared by its host already, so it is ignored".into();
            f.report(Level::Note, key::SHARED.name, message);
        }
        return Sharing::Own;
    }
    if !chosen.unwrap_or(user) {
        if chosen.is_some() || !f.ctx.family_by_default {
            return Sharing::Own;
        }
        if !env.is_empty() {
            let message = "applies to servers shared by every session (`shared: true`); inside a session's family every variable counts already".into();
            f.report(Level::Note, key::SHARED_ENV.name, message);
        }
        return Sharing::Family;
    }
    for field in fields::at(Place::Server).filter(|k| k.transport == fields::Transport::Stdio) {
        if let Some(value) = f.get(field) {
            env.extend(references_in(value));
        }
    }
    env.sort();
    env.dedup();
    Sharing::User { env }
}

/// The variables the strings in `value` refer to.
fn references_in(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => references(text),
        Value::Array(items) => items.iter().flat_map(references_in).collect(),
        Value::Object(map) => map.values().flat_map(references_in).collect(),
        _ => vec![],
    }
}

/// The transport `type` names (Claude Code, VS Code and Cursor write one); `None`: not given.
fn declared_type(f: &mut Fields) -> Option<&'static str> {
    match f.string(&key::TYPE)?.as_str() {
        "stdio" | "local" => Some("stdio"),
        "http" | "streamable-http" | "streamableHttp" | "sse" | "remote" => Some("http"),
        other => {
            let (expected, using) = (key::TYPE.kind.expected(), key::TYPE.default);
            let message = format!("unknown transport \"{other}\" (expected {expected}); {using}");
            f.report(Level::Warning, key::TYPE.name, message);
            None
        }
    }
}

fn transport(f: &mut Fields) -> Option<Transport> {
    let declared = declared_type(f);
    let (command, url) = (f.string(&key::COMMAND), f.string(&key::URL));
    if let Some(socket) = f.string(&key::SOCKET) {
        return socket_transport(f, &socket, command.is_some() || url.is_some());
    }
    match (declared, &command, &url) {
        (Some("stdio"), None, Some(_)) => f.report(
            Level::Warning,
            key::TYPE.name,
            "says \"stdio\" but the server has a `url` and no `command`; it is used as a remote server".into(),
        ),
        (Some("http"), Some(_), None) => f.report(
            Level::Warning,
            key::TYPE.name,
            "says the server is remote but it has a `command` and no `url`; it is started as a local program".into(),
        ),
        _ => {}
    }
    let problem = match (command, url) {
        (Some(command), None) => return stdio_transport(f, &command),
        (None, Some(url)) => return http_transport(f, &url),
        (Some(_), Some(_)) => "has both `command` and `url`; keep `command` for a local (stdio) server or `url` for a remote one",
        (None, None) if f.get(&key::COMMAND).or(f.get(&key::URL)).or(f.get(&key::SOCKET)).is_some() => return None,
        (None, None) => "is missing: set `command` (and `args`) for a local server, or `url` for a remote one",
    };
    f.report(Level::Error, key::COMMAND.name, problem.into());
    None
}

fn stdio_transport(f: &mut Fields, command: &str) -> Option<Transport> {
    if command.trim().is_empty() {
        let message = "is empty; set the program to run, e.g. \"npx\"".into();
        f.report(Level::Error, key::COMMAND.name, message);
        return None;
    }
    // `~/` is expanded here, after the cache hash (which takes args as written).
    let args = f
        .strings(&key::ARGS)
        .unwrap_or_default()
        .iter()
        .map(|a| expand_home(a, f.ctx.env))
        .collect();
    let mut env = env_file(f);
    for (key, value) in f.values(&key::ENV) {
        env.retain(|(k, _)| *k != key);
        env.push((key, value));
    }
    let cwd = f
        .string(&key::CWD)
        .map(|c| f.ctx.cwd.join(expand_path(&c, f.ctx.env)));
    Some(Transport::Stdio {
        command: expand_home(command, f.ctx.env),
        args,
        env,
        cwd,
    })
}

fn http_transport(f: &mut Fields, url: &str) -> Option<Transport> {
    let (url, missing) = expand_reporting(url, f.ctx.env);
    if !missing.is_empty() {
        let message = format!(
            "uses unset environment variable(s) {}; set them, or give a default as in ${{NAME:-value}}",
            missing.join(", ")
        );
        f.report(Level::Error, key::URL.name, message);
        return None;
    }
    let headers = f.values(&key::HEADERS);
    let has_authorization = headers
        .iter()
        .any(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"));
    let auth = http_auth(f, has_authorization);
    let ca_file = f.string(&key::CA_FILE).map(|p| expand_path(&p, f.ctx.env));
    Some(Transport::Http {
        url: Secret::new(url),
        headers,
        auth,
        ca_file,
        request_headers: headers_command::parse(f),
    })
}

/// `socket`: a server already listening on a Unix socket (an rmcp-mux endpoint, say), reached
/// with newline-delimited JSON-RPC as over stdio; `~` and variables expanded.
fn socket_transport(f: &mut Fields, socket: &str, other: bool) -> Option<Transport> {
    if other {
        let message =
            "is set beside `command` or `url`; keep exactly one of `command`, `url` and `socket`"
                .into();
        f.report(Level::Error, key::SOCKET.name, message);
        return None;
    }
    if socket.trim().is_empty() {
        let message = "is empty; set the path of the Unix socket the server listens on".into();
        f.report(Level::Error, key::SOCKET.name, message);
        return None;
    }
    let path = expand_path(socket, f.ctx.env);
    Some(Transport::Socket {
        path: f.ctx.cwd.join(path),
    })
}

/// The variables of `envFile` (a dotenv file; relative to the config file that names it).
fn env_file(f: &mut Fields) -> Vec<(String, ConfigValue)> {
    let Some(path) = f.string(&key::ENV_FILE) else {
        return vec![];
    };
    let path = expand_path(&path, f.ctx.env);
    let path = match f.server.file_of(key::ENV_FILE.name).parent() {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path,
    };
    let text = match bounded_read::found(&path, f.ctx.limits.env_file_bytes) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            let message = format!("{} {e}; its variables are not set", path.display());
            f.report(Level::Error, key::ENV_FILE.name, message);
            return vec![];
        }
    };
    match envfile::parse(&text) {
        Ok(vars) => vars
            .into_iter()
            .map(|(k, v)| (k, ConfigValue::text(expand(&v, f.ctx.env))))
            .collect(),
        Err(why) => {
            let message = format!(
                "cannot use {}: {why}; its variables are not set",
                path.display()
            );
            f.report(Level::Error, key::ENV_FILE.name, message);
            vec![]
        }
    }
}

/// `auth` with `bearerToken`/`bearerTokenEnv`, and `oauth`. A token without `auth` means
/// bearer; without credentials (a token, an `Authorization` header) or an opt-out (`auth:
/// false`, `oauth: false`) a server may ask for OAuth.
fn http_auth(f: &mut Fields, has_authorization: bool) -> HttpAuth {
    let token = f
        .string(&key::BEARER_TOKEN)
        .map(|t| f.value(key::BEARER_TOKEN.name, &t));
    let env_var = f
        .string(&key::BEARER_TOKEN_ENV)
        .filter(|v| !v.trim().is_empty());
    let bearer = HttpAuth::Bearer {
        token: token.clone(),
        env_var: env_var.clone(),
    };
    let opted_out = matches!(f.get(&key::OAUTH), Some(Value::Bool(false)));
    match f.get(&key::AUTH) {
        None if token.is_some() || env_var.is_some() => bearer,
        None if opted_out || has_authorization => HttpAuth::None,
        None => oauth(f, false),
        Some(Value::Bool(false)) if token.is_some() || env_var.is_some() => bearer,
        Some(Value::Bool(false)) => HttpAuth::None,
        Some(Value::String(s)) if s == "bearer" => {
            if token.is_none() && env_var.is_none() {
                f.report(
                    Level::Error,
                    key::AUTH.name,
                    "is \"bearer\" but neither `bearerToken` nor `bearerTokenEnv` is set; add one (e.g. \"bearerTokenEnv\": \"MY_TOKEN\")".into(),
                );
            }
            bearer
        }
        Some(Value::String(s)) if s == "oauth" => {
            if opted_out {
                f.report(
                    Level::Warning,
                    key::OAUTH.name,
                    "is false but `auth` is \"oauth\"; OAuth is used".into(),
                );
            }
            oauth(f, true)
        }
        Some(Value::Object(auth)) if auth.contains_key("provider") => provider_auth(f, auth),
        Some(other) => {
            let got = describe(other);
            f.report(
                Level::Warning,
                key::AUTH.name,
                format!(
                    "must be \"bearer\", \"oauth\", {{\"provider\": \"<id>\"}} or false, got {got}; sending no credentials"
                ),
            );
            HttpAuth::None
        }
    }
}

/// OAuth, with `oauth`'s settings when it is an object.
fn oauth(f: &mut Fields, explicit: bool) -> HttpAuth {
    let config = match f.get(&key::OAUTH) {
        Some(Value::Object(object)) => oauth::parse(f, object, explicit),
        None | Some(Value::Bool(true)) => OAuthConfig::default(),
        Some(other) => {
            f.read().wrong(&key::OAUTH, &describe(other));
            OAuthConfig::default()
        }
    };
    HttpAuth::OAuth(Box::new(OAuthConfig { explicit, ..config }))
}

/// Pi's `auth: {"provider": "<id>"}`. As in Pi, only the user's own files may send a provider's
/// credential (a repository must not pick where it goes), and only over https or to loopback.
fn provider_auth(f: &mut Fields, auth: &Map<String, Value>) -> HttpAuth {
    let Some(provider) = auth
        .get("provider")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    else {
        let message = "`provider` must name one of Pi's providers, e.g. {\"provider\": \"github\"}; sending no credentials".into();
        f.report(Level::Error, "auth.provider", message);
        return HttpAuth::None;
    };
    let file = f.server.file_of(key::AUTH.name).to_path_buf();
    if f.ctx.project_files.contains(&file) || f.server.imported.is_some() {
        let message = "a project's config cannot send a provider's credential (it would choose where your credential goes); set it in ~/.pi/agent/mcp.json. Sending no credentials".into();
        f.report(Level::Error, key::AUTH.name, message);
        return HttpAuth::None;
    }
    let url = f.string(&key::URL).unwrap_or_default();
    let loopback = ["http://localhost", "http://127.0.0.1", "http://[::1]"];
    let safe = url.starts_with("https://")
        || loopback
            .iter()
            .any(|l| url.starts_with(l) && url[l.len()..].starts_with([':', '/']));
    if !safe {
        let message = "sends a provider's credential only over https (or to localhost, 127.0.0.1, [::1]); sending no credentials".into();
        f.report(Level::Error, key::AUTH.name, message);
        return HttpAuth::None;
    }
    HttpAuth::Provider(provider.to_string())
}

fn protocol(f: &mut Fields) -> Protocol {
    let protocol = f.read().word(&key::PROTOCOL_VERSION, |word| match word {
        // pi-mcp-adapter's name for its default.
        "2025-11-25" | "legacy" => Some(Protocol::Initialize),
        "2026-07-28" => Some(Protocol::Modern),
        "auto" => Some(Protocol::Auto),
        _ => None,
    });
    protocol.unwrap_or(Protocol::Initialize)
}

fn lifecycle(f: &mut Fields) -> Lifecycle {
    let lifecycle = f.read().word(&key::LIFECYCLE, |word| match word {
        "lazy" => Some(Lifecycle::Lazy),
        "eager" => Some(Lifecycle::Eager),
        "keep-alive" => Some(Lifecycle::KeepAlive),
        "lazy-keep-alive" => Some(Lifecycle::LazyKeepAlive),
        _ => None,
    });
    lifecycle.unwrap_or_default()
}

/// `directTools`: `true`, `false` or a list of tool names. pi-mcp-adapter's `"search"` mode is
/// not offered: those tools stay behind the `mcp` tool.
fn direct_tools(f: &mut Fields) -> Option<DirectTools> {
    let warn = |f: &mut Fields, got: String| {
        let message =
            format!("must be true, false or a list of tool names, got {got}; using false");
        f.report(Level::Warning, key::DIRECT_TOOLS.name, message);
        Some(DirectTools::None)
    };
    match f.get(&key::DIRECT_TOOLS)? {
        Value::Bool(true) => Some(DirectTools::All),
        Value::Bool(false) => Some(DirectTools::None),
        Value::Array(items) => match items.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
            Some(names) => Some(DirectTools::Only(
                names.into_iter().map(String::from).collect(),
            )),
            None => warn(f, "a list with a non-string item".into()),
        },
        Value::String(s) if s == "search" => {
            let message = "\"search\" (tools activated by search) is not supported; the tools stay behind the mcp tool".into();
            f.report(Level::Warning, key::DIRECT_TOOLS.name, message);
            Some(DirectTools::None)
        }
        other => warn(f, describe(other)),
    }
}

/// `toolPrefix`, in `settings` or a server entry; an unknown value is reported and ignored.
pub fn tool_prefix<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<ToolPrefix> {
    read.word(&key::TOOL_PREFIX, |word| match word {
        "server" => Some(ToolPrefix::Server),
        "short" => Some(ToolPrefix::Short),
        "none" => Some(ToolPrefix::None),
        "mcp" => Some(ToolPrefix::Mcp),
        "pi" => Some(ToolPrefix::Pi),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Parses `merged` as the tests' session in /session, whose project file is `project`.
    fn parse_in(
        merged: &MergedServer,
        project: &Path,
        env: &Env,
    ) -> (Option<ServerConfig>, Vec<Diagnostic>) {
        let limits = FileLimits::default();
        let commands = CommandPolicy::default();
        let approvals = Default::default();
        let ctx = Context {
            project_files: &[project.to_path_buf()],
            default_exposure: None,
            shared_by_default: false,
            family_by_default: false,
            env,
            limits: &limits,
            cwd: Path::new("/session"),
            commands: &commands,
            approvals: &approvals,
        };
        let mut diagnostics = vec![];
        let server = parse(merged, &ctx, &mut diagnostics);
        (server, diagnostics)
    }

    fn parse_one(value: Value) -> (Option<ServerConfig>, Vec<String>) {
        let env: Env = [("HOME", "/h"), ("KEY", "k")]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let merged = MergedServer::new("s", value, std::path::Path::new("/cfg/mcp.json"));
        let (server, diagnostics) = parse_in(&merged, Path::new("/project/.mcp.json"), &env);
        (server, diagnostics.iter().map(|d| d.to_string()).collect())
    }

    #[test]
    fn shared_servers_name_the_variables_that_tell_sessions_apart() {
        let (server, diags) = parse_one(json!({
            "command": "${TOOLS}/srv",
            "args": ["--key", "${env:KEY}"],
            "env": {"A": "{env:HOME}"},
            "shared": true,
            "sharedEnv": ["DISPLAY"]
        }));
        assert!(diags.is_empty(), "{diags:?}");
        let env = match server.unwrap().sharing {
            Sharing::User { env } => env,
            other => panic!("{other:?}"),
        };
        assert_eq!(env, ["DISPLAY", "HOME", "KEY", "TOOLS"]);
        let (server, _) = parse_one(json!({"command": "srv"}));
        assert_eq!(server.unwrap().sharing, Sharing::Own, "off unless asked");
        let (server, diags) = parse_one(json!({"url": "https://h/mcp", "shared": true}));
        assert_eq!(server.unwrap().sharing, Sharing::Own);
        assert!(diags[0].contains("shared by its host"), "{diags:?}");
        let (_, diags) = parse_one(json!({"command": "srv", "shared": "yes"}));
        assert!(diags[0].contains("must be true or false"), "{diags:?}");
    }

    #[test]
    fn mistyped_secret_fields_are_not_quoted() {
        let entries = [
            json!({"command": "x", "env": "TOKEN=sk-secret"}),
            json!({"url": "https://h/mcp", "headers": "Bearer sk-secret"}),
            json!({"command": "x", "args": "--token sk-secret"}),
            json!({"command": "x", "env": {"TOKEN": ["sk-secret"]}}),
            json!("npx server --token sk-secret"),
        ];
        for entry in entries {
            let (_, diags) = parse_one(entry.clone());
            assert!(!diags.is_empty(), "{entry}");
            assert!(!diags.join("\n").contains("sk-secret"), "{diags:?}");
        }
    }

    #[test]
    fn stdio_entry() {
        let (server, diags) = parse_one(json!({
            "command": "npx", "args": ["-y", "pkg", "--key=${KEY}"], "env": {"A": "${KEY}", "N": 1},
            "cwd": "~/work", "lifecycle": "eager", "requestTimeoutMs": 5000, "includeTools": ["a*"],
            "idleTimeout": 0.5
        }));
        assert!(diags.is_empty(), "{diags:?}");
        let server = server.unwrap();
        assert_eq!(
            server.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "pkg".into(), "--key=k".into()],
                env: vec![("A".into(), "k".into()), ("N".into(), "1".into())],
                cwd: Some("/h/work".into()),
            }
        );
        assert_eq!(server.lifecycle, Lifecycle::Eager);
        assert_eq!(server.request_timeout_ms, Some(5000));
        assert_eq!(server.idle_timeout_min, Some(0.5));
        assert_eq!(server.include_tools, Some(vec!["a*".to_string()]));
        assert!(server.inherit_env && server.expose_resources && !server.disabled);
    }

    #[test]
    fn http_entry() {
        let (server, diags) = parse_one(json!({
            "url": "https://h/mcp?k=${KEY}", "headers": {"X-Key": "${KEY}"}, "auth": "bearer",
            "bearerTokenEnv": "TOKEN", "protocolVersion": "auto", "caFile": "~/ca.pem"
        }));
        assert!(diags.is_empty(), "{diags:?}");
        let server = server.unwrap();
        assert_eq!(server.protocol, Protocol::Auto);
        assert_eq!(
            server.transport,
            Transport::Http {
                url: Secret::new("https://h/mcp?k=k"),
                headers: vec![("X-Key".into(), "k".into())],
                auth: HttpAuth::Bearer {
                    token: None,
                    env_var: Some("TOKEN".into())
                },
                ca_file: Some("/h/ca.pem".into()),
                request_headers: None,
            }
        );
        // A token alone means bearer.
        let (server, _) = parse_one(json!({"url": "http://h", "bearerToken": "${KEY}"}));
        assert!(matches!(
            server.unwrap().transport,
            Transport::Http { auth: HttpAuth::Bearer { token: Some(t), .. }, .. } if t == ConfigValue::text("k")
        ));
        let auth = |entry: Value| match parse_one(entry).0.unwrap().transport {
            Transport::Http { auth, .. } => auth,
            _ => unreachable!(),
        };
        let oauth = |explicit| {
            HttpAuth::OAuth(Box::new(OAuthConfig {
                explicit,
                ..OAuthConfig::default()
            }))
        };
        assert_eq!(
            auth(json!({"url": "http://h", "auth": "oauth"})),
            oauth(true)
        );
        // Without credentials a server may ask for OAuth; credentials or an opt-out mean none.
        assert_eq!(auth(json!({"url": "http://h"})), oauth(false));
        assert_eq!(
            auth(json!({"url": "http://h", "oauth": false})),
            HttpAuth::None
        );
        assert_eq!(
            auth(json!({"url": "http://h", "auth": false})),
            HttpAuth::None
        );
        let header = json!({"url": "http://h", "headers": {"authorization": "Basic x"}});
        assert_eq!(auth(header), HttpAuth::None);
        let (server, diags) = parse_one(json!({"url": "http://h", "oauth": {
            "clientId": "c", "clientSecret": "${KEY}", "scope": "a b", "callbackPort": 8765,
            "grantType": "client_credentials", "clientRegistration": "dcr",
            "authorizationParams": {"audience": "api"}, "bogus": 1
        }}));
        let Transport::Http {
            auth: HttpAuth::OAuth(config),
            ..
        } = server.unwrap().transport
        else {
            panic!("not oauth")
        };
        assert_eq!(config.client_secret, Some(ConfigValue::text("k")));
        assert_eq!(config.callback_port, Some(8765));
        assert_eq!(config.grant, crate::config::Grant::ClientCredentials);
        assert_eq!(
            config.authorization_params,
            [("audience".to_string(), "api".to_string())]
        );
        assert!(diags.iter().any(|d| d.contains("oauth.bogus")), "{diags:?}");
        let (_, diags) = parse_one(json!({"url": "http://h", "auth": "bearer"}));
        assert!(
            diags[0].contains("neither `bearerToken` nor `bearerTokenEnv`"),
            "{diags:?}"
        );
        let (server, diags) = parse_one(json!({"url": "http://h", "protocolVersion": "1999"}));
        assert_eq!(server.unwrap().protocol, Protocol::Initialize);
        assert!(diags[0].contains("protocolVersion"), "{diags:?}");
    }

    #[test]
    fn errors_name_the_field() {
        let (server, diags) = parse_one(json!({"args": ["x"]}));
        assert!(server.is_none());
        assert_eq!(
            diags,
            ["error: /cfg/mcp.json: server \"s\", field `command`: is missing: set `command` (and `args`) for a local server, or `url` for a remote one"]
        );
        let (server, diags) = parse_one(json!({"command": 5}));
        assert!(server.is_none());
        assert!(
            diags[0].contains("field `command`: must be a string, got number 5"),
            "{diags:?}"
        );
        let (_, diags) = parse_one(json!(["npx"]));
        assert!(diags[0].contains("must be an object"), "{diags:?}");
        let (server, diags) = parse_one(json!({"url": "https://x/${NOPE}"}));
        assert!(server.is_none());
        assert!(
            diags[0].contains("unset environment variable(s) NOPE"),
            "{diags:?}"
        );
    }

    #[test]
    fn unknown_values_warn_and_default() {
        let (server, diags) = parse_one(
            json!({"command": "x", "lifecycle": "sometimes", "debug": "yes", "idleTimeout": -1}),
        );
        let server = server.unwrap();
        assert_eq!(server.lifecycle, Lifecycle::Lazy);
        assert!(!server.debug);
        assert_eq!(server.idle_timeout_min, None);
        assert_eq!(diags.len(), 3);
        assert!(diags.iter().all(|d| d.starts_with("warning:")), "{diags:?}");
    }

    #[test]
    fn disabled_servers_are_quiet() {
        let (server, diags) =
            parse_one(json!({"command": "x", "disabled": true, "lifecycle": "?"}));
        assert!(server.unwrap().disabled);
        assert!(diags.is_empty());
    }

    #[test]
    fn pi_enabled_and_adapter_disabled_either_turns_it_off() {
        let off = |entry: Value| {
            let (server, diags) = parse_one(entry);
            (server.unwrap().disabled, diags)
        };
        assert_eq!(
            off(json!({"command": "x", "enabled": false})),
            (true, vec![])
        );
        assert_eq!(
            off(json!({"command": "x", "enabled": true})),
            (false, vec![])
        );
        assert_eq!(
            off(json!({"command": "x", "enabled": true, "disabled": false})),
            (false, vec![])
        );
        // They disagree: off, and one warning naming both keys (although the server is off).
        for (enabled, disabled) in [(true, true), (false, false)] {
            let (is_off, diags) =
                off(json!({"command": "x", "enabled": enabled, "disabled": disabled}));
            assert!(is_off);
            assert_eq!(diags.len(), 1, "{diags:?}");
            assert!(diags[0].starts_with("warning: /cfg/mcp.json: server \"s\", field `enabled`:"));
            assert!(diags[0].contains("`disabled` says"), "{diags:?}");
        }
        // Not a boolean: an error, and the server stays off (Pi skips such an entry).
        let (is_off, diags) = off(json!({"command": "x", "enabled": "false"}));
        assert!(is_off);
        assert!(
            diags[0].starts_with("error:") && diags[0].contains("stays off"),
            "{diags:?}"
        );
        assert!(off(json!({"command": "x", "disabled": "yes"})).0);
    }

    #[test]
    fn pi_auth_provider_only_from_the_users_files_and_over_https() {
        let auth = |entry: Value| {
            let (server, diags) = parse_one(entry);
            match server.unwrap().transport {
                Transport::Http { auth, .. } => (auth, diags),
                _ => panic!("http expected"),
            }
        };
        let provider = |url: &str| json!({"url": url, "auth": {"provider": "github"}});
        assert_eq!(
            auth(provider("https://h/mcp")),
            (HttpAuth::Provider("github".into()), vec![])
        );
        assert_eq!(
            auth(provider("http://127.0.0.1:8/mcp")).0,
            HttpAuth::Provider("github".into())
        );
        let (none, diags) = auth(provider("http://example.com/mcp"));
        assert_eq!(none, HttpAuth::None);
        assert!(diags[0].contains("only over https"), "{diags:?}");
        let (none, diags) = auth(json!({"url": "https://h", "auth": {"provider": ""}}));
        assert_eq!(none, HttpAuth::None);
        assert!(diags[0].contains("`auth.provider`"), "{diags:?}");
        // A project's file may not choose where the credential goes.
        let env: Env = Env::new();
        let project = std::path::PathBuf::from("/project/.mcp.json");
        let merged = MergedServer::new("s", provider("https://h/mcp"), &project);
        let (server, diagnostics) = parse_in(&merged, &project, &env);
        let server = server.unwrap();
        assert!(matches!(
            server.transport,
            Transport::Http {
                auth: HttpAuth::None,
                ..
            }
        ));
        assert!(diagnostics[0]
            .message
            .contains("a project's config cannot send a provider's credential"));
    }

    #[test]
    fn pi_timeout_in_seconds_and_the_shorter_of_both() {
        let timeout = |entry: Value| {
            let (server, diags) = parse_one(entry);
            (server.unwrap().request_timeout_ms, diags)
        };
        assert_eq!(
            timeout(json!({"command": "x", "timeout": 2})),
            (Some(2000), vec![])
        );
        assert_eq!(
            timeout(json!({"command": "x", "timeout": 0.25})).0,
            Some(250)
        );
        assert_eq!(
            timeout(json!({"command": "x", "timeout": 3, "requestTimeoutMs": 3000})),
            (Some(3000), vec![])
        );
        let (ms, diags) = timeout(json!({"command": "x", "timeout": 30, "requestTimeoutMs": 5000}));
        assert_eq!(ms, Some(5000));
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].contains("`timeout`: (30 s) and `requestTimeoutMs` (5000 ms)"),
            "{diags:?}"
        );
        let (ms, diags) = timeout(json!({"command": "x", "timeout": "2"}));
        assert_eq!(ms, None);
        assert!(diags[0].contains("positive number of seconds"), "{diags:?}");
        assert_eq!(timeout(json!({"command": "x", "timeout": -1})).0, None);
    }

    #[test]
    fn home_and_relative_paths_the_way_pi_reads_them() {
        let (server, diags) = parse_one(json!({
            "command": "~/bin/server", "args": ["~/data", "--x=~/y", "~"], "cwd": "sub/dir",
            "description": "  ", "type": "stdio"
        }));
        assert!(diags.is_empty(), "{diags:?}");
        let server = server.unwrap();
        assert_eq!(server.description, None);
        let Transport::Stdio {
            command, args, cwd, ..
        } = server.transport
        else {
            panic!("stdio expected");
        };
        assert_eq!(command, "/h/bin/server");
        assert_eq!(args, ["/h/data", "--x=~/y", "/h"]);
        assert_eq!(cwd, Some("/session/sub/dir".into()));
        let (server, _) =
            parse_one(json!({"command": "x", "cwd": "~/w", "description": "Docs search"}));
        let server = server.unwrap();
        assert_eq!(server.description.as_deref(), Some("Docs search"));
        assert!(
            matches!(server.transport, Transport::Stdio { cwd: Some(c), .. } if c == std::path::Path::new("/h/w"))
        );
    }

    #[test]
    fn direct_tools_values() {
        let direct = |value: Value| {
            let (server, diags) = parse_one(json!({"command": "x", "directTools": value}));
            (server.unwrap().direct_tools, diags)
        };
        assert_eq!(direct(json!(true)), (Some(DirectTools::All), vec![]));
        assert_eq!(direct(Value::Null), (None, vec![]));
        assert_eq!(
            direct(json!(["a", "b"])),
            (
                Some(DirectTools::Only(vec!["a".into(), "b".into()])),
                vec![]
            )
        );
        let (none, diags) = direct(json!("search"));
        assert_eq!(none, Some(DirectTools::None));
        assert!(
            diags[0].contains("field `directTools`: \"search\""),
            "{diags:?}"
        );
        let (none, diags) = direct(json!([1]));
        assert_eq!(none, Some(DirectTools::None));
        assert!(diags[0].contains("must be true, false or a list of tool names, got a list with a non-string item; using false"), "{diags:?}");
    }
}
