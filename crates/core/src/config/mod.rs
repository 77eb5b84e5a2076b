//! Configuration: the files pi-mcp-adapter users already have, and the configs of other tools
//! they list in `imports`, merged field by field (later files win), checked with diagnostics that
//! name file, line, server and field. Nothing here fails: a bad file or server is reported and
//! the rest is used.

pub mod add;
mod approval;
mod client;
mod command;
mod diagnostic;
mod edit;
mod envfile;
pub mod expose;
mod exposure;
pub mod fields;
mod files;
mod glob;
mod headers_command;
mod imports;
mod interpolate;
mod jsonc;
mod load;
mod locate;
mod merge;
mod names;
mod oauth;
mod packages;
mod pi_rules;
mod reader;
mod server;
mod settings;
pub mod setup;
mod sources;
pub mod switch;
mod tool_filter;
mod trust;

pub use add::AddRequest;
pub use approval::{Approval, SetBy};
pub use client::{ClientSettings, UiMode, DEFAULT_CALL_TIMEOUT};
pub use command::{
    resolve_all, CommandPolicy, ConfigValue, RunContext, ValueError, ValueErrorKind,
};
pub use diagnostic::{Diagnostic, Level};
pub use edit::{
    add_server, defines, edit_server, read as read_text, write as write_text, Change, EditError,
};
pub use exposure::{Exposure, ToolExposure};
pub use glob::matches as tool_pattern_matches;
pub use headers_command::HeadersCommand;
pub use imports::ImportKind;
pub use interpolate::{expand, interpolate, Env};
pub use oauth::{Grant, OAuthConfig, Registration};
pub use packages::PackageOrigin;
pub use pi_rules::{builtin_mcp_on, MergeDifference};
pub use sources::{Role, Source, SourceState};
pub use trust::{Trust, TrustBasis};

use crate::catalog::ToolPrefix;
use crate::output_guard::{Limits, DEFAULT_LIMITS};
use load::report_untrusted;
use pi_mcp_connection::bounded_read::FileLimits;
use pi_mcp_connection::pool::shared::wire::FAMILY_VAR;
use pi_mcp_connection::pool::Protocol;
use pi_mcp_connection::secret::Secret;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variables by name.

#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The session's working directory: project files are looked up here.
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// Replaces `<agentDir>/mcp.json` (Pi's `--mcp-config`, the CLI's `--config`).
    pub config_path: Option<PathBuf>,
    pub env: Env,
    /// Whether project configs, which start programs, may be used (Pi's project trust). `None`:
    /// the decision Pi saved for the project, else trusted.
    pub project_trusted: Option<bool>,
    /// Caps on the config, env and trust files read.
    pub limits: FileLimits,
    /// Servers other Pi extensions registered (`pi.registerMcpServer`); a config file's entry of
    /// the same name wins over one, as in Pi.
    pub registered: Vec<Registered>,
}

/// A config held in memory and read instead of every file, as if it were `file` (messages name
/// that file, and its role decides what may run): `add` tries a server this way before saving it.
#[derive(Clone, Debug, PartialEq)]
pub struct Only {
    pub file: PathBuf,
    /// `{"mcpServers": {…}}`.
    pub root: Value,
}

/// A server a Pi extension registered: an entry of the `mcpServers` shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Registered {
    pub name: String,
    pub config: Value,
    /// The extension's path.
    pub extension: PathBuf,
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Servers in the order they were first defined; imported ones last.
    pub servers: Vec<ServerConfig>,
    pub settings: Settings,
    pub diagnostics: Vec<Diagnostic>,
    /// Every file looked at, lowest precedence first, with what came of it.
    pub sources: Vec<Source>,
    pub trust: Trust,
    /// Pi's `autoEnableCodemode` (beside `mcpServers`; a later file wins).
    pub auto_enable_codemode: Option<bool>,
    /// Servers Pi's own MCP support would read differently from the same two files.
    pub merge_differences: Vec<MergeDifference>,
}

impl Config {
    /// `server`'s client-side settings: its own values over the global ones.
    pub fn client_settings(&self, server: &ServerConfig) -> ClientSettings {
        server.client.over(&self.settings.client)
    }

    /// The files whose content was used, lowest precedence first.
    pub fn files(&self) -> Vec<&Path> {
        self.sources
            .iter()
            .filter(|s| matches!(s.state, SourceState::Loaded { .. }))
            .map(|s| s.path.as_path())
            .collect()
    }
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
    /// Defaults of each server's client-side settings.
    pub client: ClientSettings,
    /// Pi's `exposure` for servers that set neither `exposure` nor `toolExposure`.
    pub exposure: Option<Exposure>,
    /// Sign in by itself when a server asks for it (`autoAuth`), then retry.
    pub auto_auth: bool,
    /// Every stdio server is shared unless it says `shared: false` (`sharedServers`).
    pub shared_servers: bool,
    /// A stdio server without `shared` is shared with the session's family
    /// (`shareWithSubagents`, [`FAMILY_BY_DEFAULT`] when unset).
    pub share_with_subagents: bool,
    /// How long Pi's first request waits for servers whose tools it declares and that are not
    /// known yet (`startupWaitMs`, at most [`STARTUP_WAIT`]).
    pub startup_wait: Duration,
    /// How long an approval dialog waits for an answer before the call is denied
    /// (`approvalTimeoutMs`).
    pub approval_timeout: Duration,
    /// `pi-mcp call --yes` skips approval inside a Pi session too (`allowYesInsidePi`, read
    /// only from the user's own files).
    pub yes_inside_pi: bool,
    /// Leave the `mcp` tool out when Pi tools of ours reach every server (`disableProxyTool`).
    pub disable_proxy_tool: bool,
    /// Warn when the model is given many Pi tools of ours (`warnOnLargeDirectTools`).
    pub warn_on_large_direct_tools: bool,
    /// The protocol trace (`trace`).
    pub trace: TraceSettings,
}

/// `settings.trace`: a metadata-only record of MCP traffic (see `pi_mcp_connection::trace`).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSettings {
    /// Trace every server that does not say `trace: false`.
    pub enabled: bool,
    /// Where; relative to the session's directory. Default `.pi/mcp-traces/mcp-<time>-<pid>.jsonl`.
    pub file: Option<PathBuf>,
    pub max_bytes: u64,
    pub max_events: u64,
}

/// `settings.trace` when it says nothing.
pub const TRACE_DEFAULTS: TraceSettings = TraceSettings {
    enabled: false,
    file: None,
    max_bytes: 256 * 1024,
    max_events: 10_000,
};

impl Default for TraceSettings {
    fn default() -> Self {
        TRACE_DEFAULTS
    }
}

/// Whether a stdio server without `shared` is shared with the session's family when
/// `settings.shareWithSubagents` is unset.
pub const FAMILY_BY_DEFAULT: bool = true;

/// How long a request may take unless `requestTimeoutMs` (or Pi's `timeout`) says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an approval dialog waits for an answer, unless `approvalTimeoutMs` says otherwise.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long Pi's first request waits, at most, for servers whose tools it declares and that are
/// not known yet: Pi's built-in MCP support waits as long.
pub const STARTUP_WAIT: Duration = Duration::from_secs(10);

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tool_prefix: ToolPrefix::default(),
            request_timeout_ms: None,
            idle_timeout_min: None,
            direct_tools: false,
            output_guard: Some(DEFAULT_LIMITS),
            client: ClientSettings::default(),
            exposure: None,
            auto_auth: false,
            shared_servers: false,
            share_with_subagents: FAMILY_BY_DEFAULT,
            startup_wait: STARTUP_WAIT,
            approval_timeout: APPROVAL_TIMEOUT,
            yes_inside_pi: false,
            disable_proxy_tool: false,
            warn_on_large_direct_tools: true,
            trace: TraceSettings::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    /// The last file that set a field of this server.
    pub source: PathBuf,
    /// Every file that set a field of it, lowest precedence first.
    pub files: Vec<PathBuf>,
    /// The file that set each top-level field.
    pub field_files: HashMap<String, PathBuf>,
    /// Set for a server read from another tool's config through `imports`.
    pub imported: Option<Imported>,
    /// Set for a server a Pi extension registered (`pi.registerMcpServer`): the extension.
    pub registered: Option<PathBuf>,
    /// Set for a server an installed Pi package declares (`"pi": {"mcp": …}`).
    pub package: Option<PackageOrigin>,
    /// The merged entry as written (before interpolation): the input of the cache hash.
    pub entry: Value,
    pub transport: Transport,
    pub lifecycle: Lifecycle,
    /// `protocolVersion`: which MCP lifecycle to start with.
    pub protocol: Protocol,
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
    /// Pi's `description`: what the server offers, in a sentence.
    pub description: Option<String>,
    /// Overrides `settings`' client-side values for this server.
    pub client: ClientSettings,
    /// Pi's `exposure` and `toolExposure` (or `settings.exposure`).
    pub exposure: ToolExposure,
    /// Who else uses its process (`shared`, `settings.sharedServers`, `shareWithSubagents`).
    pub sharing: Sharing,
    /// Which of its tools ask the user before they run (`approveTools`).
    pub approval: Approval,
    /// More words its tools are found by in a search (`searchKeywords`).
    pub search_keywords: SearchKeywords,
    /// `trace`: traced (or not) whatever `settings.trace.enabled` says.
    pub trace: Option<bool>,
}

/// A tool name or `*` pattern, and more words such tools are found by in a search.
pub type SearchKeywords = Vec<(String, Vec<String>)>;

/// Who uses a server's process besides the session that needs it (README "Shared servers").
#[derive(Clone, Debug, PartialEq)]
pub enum Sharing {
    /// `shared: false`, a remote server, or sharing turned off: the session's own.
    Own,
    /// `shared` unset: the session's family (its subagents, `pi -p` runs it starts, other
    /// sessions of its process) when their launch is the same (`pool::shared::identity`).
    Family,
    /// `shared: true` (or `settings.sharedServers`): every session of the user, through the
    /// per-user broker.
    User {
        /// Variables whose values must match: the entry's `sharedEnv` and every variable it
        /// references (`${VAR}`), sorted.
        env: Vec<String>,
    },
}

/// Which of a server's tools Pi gets as first-class tools (besides the `mcp` gateway).
#[derive(Clone, Debug, PartialEq)]
pub enum DirectTools {
    None,
    All,
    /// MCP tool names (or resource tool names such as `get_readme`).
    Only(Vec<String>),
}

/// Where an imported server came from: `source` is the tool's file.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub kind: ImportKind,
    /// The config file whose `imports` asked for it.
    pub by: PathBuf,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Stdio {
        /// `~/` and variables expanded, as `args`.
        command: String,
        args: Vec<String>,
        /// Added to the inherited environment.
        env: Vec<(String, ConfigValue)>,
        /// Absolute; `None`: the session's cwd.
        cwd: Option<PathBuf>,
    },
    Http {
        /// Secret: a key may sit in its query string.
        url: Secret,
        headers: Vec<(String, ConfigValue)>,
        auth: HttpAuth,
        /// PEM certificates trusted besides the system's (`caFile`).
        ca_file: Option<PathBuf>,
        /// A program whose output adds headers to each request (`requestHeadersCommand`).
        request_headers: Option<HeadersCommand>,
    },
    /// A server listening on a Unix socket (`socket`): absolute.
    Socket { path: PathBuf },
}

/// How a remote server is authenticated (`auth`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum HttpAuth {
    /// Only what `headers` carry: `auth: false`, `oauth: false`, or an `Authorization` header.
    #[default]
    None,
    /// `Authorization: Bearer` with `bearerToken`, or the variable `bearerTokenEnv` names (read
    /// when connecting).
    Bearer {
        /// `bearerToken`: text, or a `!command` run when connecting.
        token: Option<ConfigValue>,
        env_var: Option<String>,
    },
    /// OAuth: `auth: "oauth"`, or any other remote server once it asks for credentials.
    OAuth(Box<OAuthConfig>),
    /// Pi's `auth: {"provider": "<id>"}`: `Authorization: Bearer` with the credential Pi holds
    /// for that provider (its `/login`), asked for at each connect.
    Provider(String),
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
    pub const ALL: [Lifecycle; 4] = [
        Lifecycle::Lazy,
        Lifecycle::Eager,
        Lifecycle::KeepAlive,
        Lifecycle::LazyKeepAlive,
    ];

    /// The value as written in a config.
    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::Lazy => "lazy",
            Lifecycle::Eager => "eager",
            Lifecycle::KeepAlive => "keep-alive",
            Lifecycle::LazyKeepAlive => "lazy-keep-alive",
        }
    }

    pub fn connects_at_start(self) -> bool {
        matches!(self, Lifecycle::Eager | Lifecycle::KeepAlive)
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

/// Reads and merges every config file and import. Never fails; problems end up in
/// `diagnostics`.
pub fn load(opts: &LoadOptions) -> Config {
    load::load(opts, None)
}

/// The config of `only` alone, read as if it were its file (see [`Only`]).
pub fn load_only(opts: &LoadOptions, only: &Only) -> Config {
    load::load(opts, Some(only))
}

/// Values a server's `inheritEnv: false` still passes on.
pub const MINIMAL_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The whole environment a stdio server starts with: `overlay` holds its resolved `env`. The
/// family's token is never passed on.
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
    env.retain(|(k, _)| k != FAMILY_VAR);
    env
}

#[cfg(test)]
mod expose_tests;
#[cfg(test)]
mod packages_tests;
#[cfg(test)]
mod parity_tests;
#[cfg(test)]
pub(crate) mod test_tree;
#[cfg(test)]
mod tests;
