//! The keys a config may hold, in one table: where each may appear, what its value must be, what
//! applies when it is absent or wrong, the transport it belongs to, and a line on what it does.
//! Parsing (through [`Reader`](super::reader::Reader)), the unknown-key and did-you-mean checks,
//! merging, the cache hash's identity fields and the README's tables (checked by a test) read it.
//! A key a table does not hold is tolerated: a note (shown by `pi-mcp doctor`), or a warning when
//! it looks like a misspelt key.

use super::client::DEFAULT_CALL_TIMEOUT;
use super::headers_command::DEFAULT_TIMEOUT as HEADERS_TIMEOUT;
use super::{
    Level, APPROVAL_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, FAMILY_BY_DEFAULT, STARTUP_WAIT,
    TRACE_DEFAULTS,
};
use crate::output_guard::DEFAULT_LIMITS;
use crate::search::similarity;
use std::fmt;
use std::time::Duration;

/// Where a key may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Beside `mcpServers` in a file.
    Root,
    Settings,
    Server,
    /// A setting, and a server's own value that wins over it.
    Both,
    /// In a server's `oauth` object.
    OAuth,
    /// In `settings.trace`.
    Trace,
    /// In `settings.outputGuard`.
    OutputGuard,
    /// In a server's `requestHeadersCommand`.
    HeadersCommand,
}

impl Place {
    fn holds(self, place: Place) -> bool {
        self == place || (self == Place::Both && matches!(place, Place::Settings | Place::Server))
    }
}

/// The transport whose fields a key is: a layer that switches a server to the other transport
/// drops them, and a layer with a new `url` drops the `Http` ones (credentials bound to a URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Any,
    Stdio,
    Http,
}

/// What a value must be: the "must be …" of a message about a value of another kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Flag,
    Text,
    /// A list of strings.
    Texts,
    /// An object of strings.
    TextMap,
    Millis,
    /// A number of milliseconds of at least 1 (`0` is refused).
    MillisAbove0,
    /// Milliseconds, `0` for no bound.
    MillisOrOff,
    Minutes,
    Seconds,
    Count,
    Port,
    /// One of these words (the ones a message offers; aliases may be read too).
    Word(&'static [&'static str]),
    /// One of these names, written plainly in a message.
    OneOf(&'static [&'static str]),
    /// A value with a shape of its own, described here.
    Shaped(&'static str),
    /// A pi-mcp-adapter key this version does not read; what to use instead.
    Unused(&'static str),
}

impl Kind {
    pub fn expected(self) -> String {
        let words = |words: &[&str]| {
            let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
            match quoted.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            }
        };
        match self {
            Kind::Flag => "true or false".into(),
            Kind::Text => "a string".into(),
            Kind::Texts => "an array of strings".into(),
            Kind::TextMap => "an object of strings".into(),
            Kind::Millis => "a number of milliseconds".into(),
            Kind::MillisAbove0 => "a number of milliseconds above 0".into(),
            Kind::MillisOrOff => "a number of milliseconds (0: no limit)".into(),
            Kind::Minutes => "a number of minutes (0 = never)".into(),
            Kind::Seconds => "a positive number of seconds".into(),
            Kind::Count => "a positive whole number".into(),
            Kind::Port => "a port number (1-65535)".into(),
            Kind::Word(list) => words(list),
            Kind::OneOf(list) => format!("one of {}", list.join(", ")),
            Kind::Shaped(shape) => shape.into(),
            Kind::Unused(_) => String::new(),
        }
    }
}

/// What applies instead of a value that is absent or wrong: the end of a message about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Using {
    Flag(bool),
    Millis(Duration),
    Count(u64),
    Word(&'static str),
    /// The setting's value, else the built-in default.
    TheDefault,
    /// Nothing: the key is left out.
    Ignored,
    /// A key whose problem is an error without a fallback to name.
    Nothing,
    /// Said in these words.
    Says(&'static str),
}

impl fmt::Display for Using {
    fn fmt(&self, out: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Using::Flag(on) => write!(out, "using {on}"),
            Using::Millis(d) => {
                let (ms, minutes) = (d.as_millis(), d.as_secs() / 60);
                match minutes > 1 && d.as_secs() % 60 == 0 {
                    true => write!(out, "using {ms} ({minutes} minutes)"),
                    false => write!(out, "using {ms}"),
                }
            }
            Using::Count(n) => write!(out, "using {n}"),
            Using::Word(word) => write!(out, "using \"{word}\""),
            Using::TheDefault => write!(out, "using the default"),
            Using::Ignored => write!(out, "ignored"),
            Using::Nothing => Ok(()),
            Using::Says(text) => write!(out, "{text}"),
        }
    }
}

/// One key of the config.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub place: Place,
    pub transport: Transport,
    /// What applies when the value is wrong (in a settings object, for [`Place::Both`]).
    pub default: Using,
    /// What applies when a server's own value of a [`Place::Both`] key is wrong.
    pub server_default: Using,
    /// How a wrong value is reported.
    pub severity: Level,
    /// Part of the cache hash (`configHash`, pi-mcp-adapter's list).
    pub hashed: bool,
    /// Says how to reach a server: an entry with none of these only adjusts one.
    pub reaches: bool,
    /// Makes an entry a server of its own (rather than an override of one defined elsewhere).
    pub defines: bool,
    pub doc: &'static str,
}

const fn key(name: &'static str, place: Place, kind: Kind, doc: &'static str) -> Field {
    Field {
        name,
        kind,
        place,
        transport: Transport::Any,
        default: Using::Nothing,
        server_default: Using::Nothing,
        severity: Level::Warning,
        hashed: false,
        reaches: false,
        defines: false,
        doc,
    }
}

const fn server(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    key(name, Place::Server, kind, doc)
}

const fn setting(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    key(name, Place::Settings, kind, doc)
}

const fn both(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    key(name, Place::Both, kind, doc)
}

impl Field {
    const fn or(self, default: Using) -> Field {
        Field {
            default,
            server_default: default,
            ..self
        }
    }
    /// A [`Place::Both`] key whose server value falls back to the setting.
    const fn inherited(self) -> Field {
        Field {
            server_default: Using::TheDefault,
            ..self
        }
    }
    const fn error(self) -> Field {
        Field {
            severity: Level::Error,
            ..self
        }
    }
    const fn of(self, transport: Transport) -> Field {
        Field { transport, ..self }
    }
    const fn hashed(self) -> Field {
        Field {
            hashed: true,
            ..self
        }
    }
    const fn reaches(self) -> Field {
        Field {
            reaches: true,
            ..self
        }
    }
    const fn defines(self) -> Field {
        Field {
            defines: true,
            reaches: true,
            ..self
        }
    }

    /// What applies when the value is wrong, read in a server entry or elsewhere.
    pub fn using(&self, in_server: bool) -> Using {
        match in_server {
            true => self.server_default,
            false => self.default,
        }
    }
}

const LIFECYCLES: &[&str] = &["lazy", "eager", "keep-alive", "lazy-keep-alive"];
const PREFIXES: &[&str] = &["server", "short", "none", "mcp", "pi"];
/// `LogLevel::ALL`'s names (a test checks).
pub(super) const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
/// What to use instead of pi-mcp-adapter's Agent Plugins.
const NO_PLUGINS: &str =
    "Agent Plugins are not loaded here; copy the servers they declare into `mcpServers`";
const COSMETIC: &str = "tool results are shown as Pi shows any tool's; ignored";

pub use table::*;

/// One key a line.
#[rustfmt::skip]
mod table {
use super::*;

// Each key, as a constant for the code that reads it.
pub const MCP_SERVERS: Field = key("mcpServers", Place::Root, Kind::Shaped("an object of servers by name, like {\"github\": {\"command\": \"npx\", ...}}"), "the servers, by name").error();
pub const MCP_SERVERS_ALIAS: Field = Field { name: "mcp-servers", doc: "another name of `mcpServers`", ..MCP_SERVERS };
pub const IMPORTS: Field = key("imports", Place::Root, Kind::Shaped("an array of tool names like [\"cursor\", \"claude-code\"]"), "other tools' configs whose servers are read too").error().or(Using::Says("nothing is imported from this file"));
pub const SETTINGS: Field = key("settings", Place::Root, Kind::Shaped("an object"), "settings for every server").error().or(Using::Says("its settings are not used"));
pub const AUTO_ENABLE_CODEMODE: Field = key("autoEnableCodemode", Place::Root, Kind::Flag, "Pi's: activate the tools `codemode` scripts reach").or(Using::Ignored);
pub const SCHEMA: Field = key("$schema", Place::Root, Kind::Text, "the file's JSON schema, for editors");

pub const COMMAND: Field = server("command", Kind::Text, "the program of a local (stdio) server").error().of(Transport::Stdio).hashed().defines();
pub const ARGS: Field = server("args", Kind::Texts, "the program's arguments").error().of(Transport::Stdio).hashed().reaches();
pub const ENV: Field = server("env", Kind::TextMap, "added to the program's environment").error().of(Transport::Stdio).hashed().reaches();
pub const ENV_FILE: Field = server("envFile", Kind::Text, "a dotenv file added to `env`").error().of(Transport::Stdio).reaches();
pub const CWD: Field = server("cwd", Kind::Text, "the program's working directory").error().of(Transport::Stdio).hashed().reaches();
pub const INHERIT_ENV: Field = server("inheritEnv", Kind::Flag, "whether the program gets Pi's environment").or(Using::Flag(true));
pub const TYPE: Field = server("type", Kind::Word(&["stdio", "http", "sse"]), "the transport, as other clients write it").error().or(Using::Says("the server's `command` or `url` decides")).defines();
pub const URL: Field = server("url", Kind::Text, "a remote server's address").error().of(Transport::Http).hashed().defines();
pub const SOCKET: Field = server("socket", Kind::Text, "a Unix socket a server listens on").error().hashed().defines();
pub const HEADERS: Field = server("headers", Kind::TextMap, "sent on every request").error().of(Transport::Http).hashed().reaches();
pub const REQUEST_HEADERS_COMMAND: Field = server("requestHeadersCommand", Kind::Shaped("an object like {\"command\": \"sign-request\", \"args\": [\"--profile\", \"dev\"]}"), "a program whose output adds headers to each request").error().or(Using::Says("requests go without its headers")).hashed().reaches();
pub const AUTH: Field = server("auth", Kind::Shaped("\"bearer\", \"oauth\", {\"provider\": \"<id>\"} or false"), "how a remote server is authenticated").or(Using::Says("sending no credentials")).of(Transport::Http).hashed().reaches();
pub const BEARER_TOKEN: Field = server("bearerToken", Kind::Text, "the token of `auth: \"bearer\"`").error().of(Transport::Http).hashed().reaches();
pub const BEARER_TOKEN_ENV: Field = server("bearerTokenEnv", Kind::Text, "the variable that holds the bearer token").error().of(Transport::Http).hashed().reaches();
pub const OAUTH: Field = server("oauth", Kind::Shaped("an object of OAuth settings or false"), "OAuth settings, or false for none").error().or(Using::Says("using the defaults")).of(Transport::Http).reaches();
pub const CA_FILE: Field = server("caFile", Kind::Text, "PEM certificates trusted besides the system's").error().of(Transport::Http);
pub const LIFECYCLE: Field = server("lifecycle", Kind::Word(LIFECYCLES), "when the server starts and stops").or(Using::Word("lazy"));
pub const PROTOCOL_VERSION: Field = server("protocolVersion", Kind::Word(&["2026-07-28", "auto"]), "the handshake").error().or(Using::Says("using the `initialize` handshake")).hashed();
pub const DISABLED: Field = server("disabled", Kind::Flag, "`true` keeps the server off").error().or(Using::Says("the server stays off until it is fixed"));
pub const ENABLED: Field = server("enabled", Kind::Flag, "Pi's: `false` keeps the server off").error().or(DISABLED.default);
pub const TIMEOUT: Field = server("timeout", Kind::Seconds, "Pi's per-request timeout, in seconds").or(Using::TheDefault);
pub const TOOL_EXPOSURE: Field = server("toolExposure", Kind::Shaped("an object of tool names or patterns and exposures"), "how the model reaches each tool");
pub const DEBUG: Field = server("debug", Kind::Flag, "copy the server's stderr into mcp.log").or(Using::Flag(false));
pub const EXPOSE_RESOURCES: Field = server("exposeResources", Kind::Flag, "resources become tools").or(Using::Flag(true)).hashed();
pub const INCLUDE_TOOLS: Field = server("includeTools", Kind::Texts, "only these tools").error().hashed();
pub const EXCLUDE_TOOLS: Field = server("excludeTools", Kind::Texts, "not these tools").error().hashed();
pub const DESCRIPTION: Field = server("description", Kind::Text, "what the server offers, in a sentence").error();
pub const SHARED: Field = server("shared", Kind::Flag, "who shares a stdio server's process").or(Using::TheDefault);
pub const SHARED_ENV: Field = server("sharedEnv", Kind::Texts, "variables whose values must match to share").error();
pub const SEARCH_KEYWORDS: Field = server("searchKeywords", Kind::Shaped("an object of lists of words, like {\"create_*\": [\"new\"]}"), "more words a search finds its tools by").or(Using::Ignored);

pub const TOOL_PREFIX: Field = both("toolPrefix", Kind::Word(PREFIXES), "how tool names are prefixed").or(Using::Word("server")).inherited();
pub const REQUEST_TIMEOUT_MS: Field = both("requestTimeoutMs", Kind::Millis, "how long a request may take").or(Using::Millis(DEFAULT_REQUEST_TIMEOUT)).inherited();
pub const IDLE_TIMEOUT: Field = both("idleTimeout", Kind::Minutes, "minutes unused before a server is stopped").or(Using::TheDefault);
pub const DIRECT_TOOLS: Field = both("directTools", Kind::Shaped("true, false or a list of tool names"), "tools that are Pi tools of their own").or(Using::Flag(false));
pub const EXPOSURE: Field = both("exposure", Kind::Shaped("\"direct\", \"codemode\", \"deferred\" or \"hidden\""), "how the model reaches the tools");
pub const APPROVE_TOOLS: Field = both("approveTools", Kind::Shaped("true, false, \"destructive\" or a list of tool names (`*` matches any characters, `?` one)"), "which tools ask before they run");
pub const TRACE: Field = both("trace", Kind::Flag, "trace the protocol's messages").or(Using::Flag(false));

pub const ELICITATION: Field = both("elicitation", Kind::Shaped("\"ask\", \"defaults\", \"decline\", true or false"), "what a server may ask the user").or(Using::Word("ask"));
pub const SAMPLING: Field = both("sampling", Kind::Flag, "a server may ask Pi's model").or(Using::Flag(true));
pub const SAMPLING_AUTO_APPROVE: Field = both("samplingAutoApprove", Kind::Flag, "sampling without asking").or(Using::Flag(false));
pub const ROOTS: Field = both("roots", Kind::Flag, "offer the session's directory as the root").or(Using::Flag(true));
pub const LOG_LEVEL: Field = both("logLevel", Kind::OneOf(LOG_LEVELS), "the least severe log message kept").or(Using::Word("info"));
pub const TASKS: Field = both("tasks", Kind::Flag, "calls may run as tasks").or(Using::Flag(true));
pub const CALL_TIMEOUT_MS: Field = both("callTimeoutMs", Kind::MillisOrOff, "how long a whole call may take").or(Using::Millis(DEFAULT_CALL_TIMEOUT));
pub const UI: Field = both("ui", Kind::Shaped("\"browser\", \"none\" or false"), "how MCP Apps are shown").or(Using::Word("browser"));

pub const OUTPUT_GUARD: Field = setting("outputGuard", Kind::Shaped("true, false or { maxBytes, maxLines }"), "bounds on a tool result's text").or(Using::Flag(true));
pub const AUTO_AUTH: Field = setting("autoAuth", Kind::Flag, "sign in when a server asks during a call").or(Using::Flag(false));
pub const SHARED_SERVERS: Field = setting("sharedServers", Kind::Flag, "share every stdio server through the broker").or(Using::Flag(false));
pub const SHARE_WITH_SUBAGENTS: Field = setting("shareWithSubagents", Kind::Flag, "a session's family shares its servers").or(Using::Flag(FAMILY_BY_DEFAULT));
pub const STARTUP_WAIT_MS: Field = setting("startupWaitMs", Kind::Millis, "how long Pi's first request waits for servers").or(Using::Millis(STARTUP_WAIT));
pub const APPROVAL_TIMEOUT_MS: Field = setting("approvalTimeoutMs", Kind::MillisAbove0, "how long an approval dialog waits").or(Using::Millis(APPROVAL_TIMEOUT));
pub const ALLOW_YES_INSIDE_PI: Field = setting("allowYesInsidePi", Kind::Flag, "`--yes` also inside Pi").or(Using::Flag(false));
pub const DISABLE_PROXY_TOOL: Field = setting("disableProxyTool", Kind::Flag, "no `mcp` tool when every tool is direct").or(Using::Flag(false));
pub const WARN_ON_LARGE_DIRECT_TOOLS: Field = setting("warnOnLargeDirectTools", Kind::Flag, "warn when many tools are direct").or(Using::Flag(true));

pub const MAX_BYTES: Field = key("maxBytes", Place::OutputGuard, Kind::Count, "at most this many bytes").or(Using::Count(DEFAULT_LIMITS.max_bytes as u64));
pub const MAX_LINES: Field = key("maxLines", Place::OutputGuard, Kind::Count, "at most this many lines").or(Using::Count(DEFAULT_LIMITS.max_lines as u64));
pub const DETAILS_MAX_BYTES: Field = key("detailsMaxBytes", Place::OutputGuard, Kind::Count, "pi-mcp-adapter's: accepted, nothing to bound");

pub const TRACE_ENABLED: Field = key("enabled", Place::Trace, Kind::Flag, "trace every server that does not say `trace: false`").or(Using::Flag(TRACE_DEFAULTS.enabled));
pub const TRACE_FILE: Field = key("file", Place::Trace, Kind::Text, "where, relative to the session's directory").or(Using::Ignored);
pub const TRACE_MAX_BYTES: Field = key("maxBytes", Place::Trace, Kind::Count, "the trace's most bytes").or(Using::Count(TRACE_DEFAULTS.max_bytes));
pub const TRACE_MAX_EVENTS: Field = key("maxEvents", Place::Trace, Kind::Count, "the trace's most messages").or(Using::Count(TRACE_DEFAULTS.max_events));

pub const HEADERS_COMMAND: Field = key("command", Place::HeadersCommand, Kind::Text, "the program that prints the headers").or(Using::Ignored);
pub const HEADERS_ARGS: Field = key("args", Place::HeadersCommand, Kind::Texts, "its arguments").or(Using::Ignored);
pub const HEADERS_ENV: Field = key("env", Place::HeadersCommand, Kind::TextMap, "added to its environment").or(Using::Ignored);
pub const HEADERS_TIMEOUT_MS: Field = key("timeoutMs", Place::HeadersCommand, Kind::Count, "how long it may run").or(Using::Count(HEADERS_TIMEOUT.as_millis() as u64));

const fn oauth(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    key(name, Place::OAuth, kind, doc).error().or(Using::Ignored)
}
pub const GRANT_TYPE: Field = oauth("grantType", Kind::Word(&["authorization_code", "client_credentials"]), "`client_credentials` for a machine client").or(Using::Word("authorization_code"));
pub const CLIENT_ID: Field = oauth("clientId", Kind::Text, "a registered client's id");
pub const CLIENT_SECRET: Field = oauth("clientSecret", Kind::Text, "a registered client's secret");
pub const CLIENT_METADATA_URL: Field = oauth("clientMetadataUrl", Kind::Text, "your Client ID Metadata Document");
pub const CLIENT_REGISTRATION: Field = oauth("clientRegistration", Kind::Word(&["auto", "dcr", "cimd"]), "how a client without `clientId` identifies itself").or(Using::Word("auto"));
pub const CLIENT_NAME: Field = oauth("clientName", Kind::Text, "sent when registering");
pub const CLIENT_URI: Field = oauth("clientUri", Kind::Text, "sent when registering");
pub const LOGO_URI: Field = oauth("logoUri", Kind::Text, "sent when registering");
pub const SCOPE: Field = oauth("scope", Kind::Text, "added to the scopes the server asks for");
pub const AUTHORIZATION_PARAMS: Field = oauth("authorizationParams", Kind::TextMap, "extra authorization request parameters");
pub const CALLBACK_PORT: Field = oauth("callbackPort", Kind::Port, "Pi's: the callback listener's port");
pub const CALLBACK_URL: Field = oauth("callbackUrl", Kind::Text, "Pi's: the exact loopback callback URL");
pub const REDIRECT_URI: Field = oauth("redirectUri", Kind::Text, "pi-mcp-adapter's redirect URI (`{port}`: the listener's)");
pub const AUTH_SERVER_METADATA_URL: Field = oauth("authServerMetadataUrl", Kind::Text, "authorization server metadata instead of discovery");
pub const SKIP_ISSUER_METADATA_VALIDATION: Field = Field { severity: Level::Warning, ..oauth("skipIssuerMetadataValidation", Kind::Flag, "accept metadata whose `issuer` differs").or(Using::Flag(false)) };

const fn unused(name: &'static str, place: Place, instead: &'static str) -> Field {
    key(name, place, Kind::Unused(instead), instead)
}

/// Every key, in the order the config's documentation gives them.
pub const ALL: &[Field] = &[
    MCP_SERVERS, MCP_SERVERS_ALIAS, IMPORTS, SETTINGS, AUTO_ENABLE_CODEMODE, SCHEMA,
    unused("claudePlugins", Place::Root, "Claude plugin bundles are not loaded here; copy the servers of the plugin's `.mcp.json` into `mcpServers` (its skills are not loaded)"),
    COMMAND, ARGS, ENV, ENV_FILE, CWD, INHERIT_ENV, TYPE, URL, SOCKET, HEADERS,
    REQUEST_HEADERS_COMMAND, AUTH, BEARER_TOKEN, BEARER_TOKEN_ENV, OAUTH, CA_FILE, LIFECYCLE,
    IDLE_TIMEOUT, REQUEST_TIMEOUT_MS, PROTOCOL_VERSION, DISABLED, ENABLED, TIMEOUT, EXPOSURE,
    TOOL_EXPOSURE, DEBUG, EXPOSE_RESOURCES, DIRECT_TOOLS, INCLUDE_TOOLS, EXCLUDE_TOOLS,
    TOOL_PREFIX, DESCRIPTION, SHARED, SHARED_ENV, APPROVE_TOOLS, SEARCH_KEYWORDS, TRACE,
    unused("bearerTokenStore", Place::Server, "the OS keyring's tokens are not read here; use `bearerTokenEnv`, or a `bearerToken` of `!<command that prints the token>`"),
    unused("httpTransport", Place::Server, "not needed: a `url` server's transport is found by itself (Streamable HTTP, then the legacy SSE transport) and remembered"),
    unused("pluginDataDir", Place::Server, NO_PLUGINS),
    unused("literalEnv", Place::Server, "`env` values are read as everywhere else (`${VAR}` expanded, `!command` run); write `!!` for a value that starts with `!`"),
    OUTPUT_GUARD, AUTO_AUTH, SHARED_SERVERS, SHARE_WITH_SUBAGENTS, STARTUP_WAIT_MS,
    APPROVAL_TIMEOUT_MS, ALLOW_YES_INSIDE_PI, DISABLE_PROXY_TOOL, WARN_ON_LARGE_DIRECT_TOOLS,
    ELICITATION, SAMPLING, SAMPLING_AUTO_APPROVE, ROOTS, LOG_LEVEL, TASKS, CALL_TIMEOUT_MS, UI,
    unused("showStatusIcon", Place::Settings, "the footer (`MCP 2/3 connected`) has no icon; ignored"),
    unused("mcpFooterStatus", Place::Settings, "the footer is `MCP 2/3 connected`, and absent without servers; ignored"),
    unused("notifyOnStartupConnect", Place::Settings, "no notice is posted when servers connect (the footer says it), as with `false`; ignored"),
    unused("hostConfigDiscovery", Place::Settings, "other tools' configs are read when listed: add `\"imports\": [\"cursor\", …]`, or run `/mcp setup`"),
    unused("ancestorConfigRoots", Place::Settings, "only the session directory's `.mcp.json` and `.pi/mcp.json` are read; start Pi in the project's root, or pass `--mcp-config <file>`"),
    unused("agentPluginPaths", Place::Settings, NO_PLUGINS),
    unused("namespaceProxyTools", Place::Settings, "there are no per-server proxy tools; the `mcp` tool takes `server`, and `exposure: \"direct\"` gives a server's tools Pi tools of their own"),
    unused("strictDirectToolArguments", Place::Settings, "not needed: arguments are always checked against the tool's schema, and converted where that is safe"),
    unused("directToolResultDetails", Place::Settings, "results carry no raw MCP result in `details`; the native API gives `structuredContent` as `structured`"),
    unused("freezeDirectTools", Place::Settings, "not needed: a Pi tool of ours is registered again only when its definition changes"),
    unused("scriptMode", Place::Settings, "there is no `mcpScript` tool; on Pi ≥ 0.99 `exposure: \"codemode\"` gives Pi's `codemode` scripts a server's tools"),
    unused("jev", Place::Settings, "semantic search (Jev) is not offered; the search finds related words offline"),
    unused("toolResultRendering", Place::Settings, COSMETIC),
    unused("collapsedResultLines", Place::Settings, COSMETIC),
    unused("authRequiredMessage", Place::Settings, "the message when a server needs a sign-in is ours (it names `/mcp login <server>`); ignored"),
    unused("oauthCredentialStore", Place::Settings, "sign-ins are kept in Pi's `mcp-auth.json` (0600, shared with Pi), not the OS keyring: sign in once per server with `/mcp login <server>`"),
    unused("oauthDir", Place::Settings, "pi-mcp-adapter's token files are read from `<agentDir>/mcp-oauth/` only; sign in again with `/mcp login <server>`"),
    unused("exposeResources", Place::Settings, "set `exposeResources` on each server"),
    unused("projectServers", Place::Settings, "not read here; ignored"),
    MAX_BYTES, MAX_LINES, DETAILS_MAX_BYTES,
    TRACE_ENABLED, TRACE_FILE, TRACE_MAX_BYTES, TRACE_MAX_EVENTS,
    HEADERS_COMMAND, HEADERS_ARGS, HEADERS_ENV, HEADERS_TIMEOUT_MS,
    GRANT_TYPE, CLIENT_ID, CLIENT_SECRET, CLIENT_METADATA_URL, CLIENT_REGISTRATION, CLIENT_NAME,
    CLIENT_URI, LOGO_URI, SCOPE, AUTHORIZATION_PARAMS, CALLBACK_PORT, CALLBACK_URL, REDIRECT_URI,
    AUTH_SERVER_METADATA_URL, SKIP_ISSUER_METADATA_VALIDATION,
];
}

/// The keys read at `place`, in the table's order.
pub fn at(place: Place) -> impl Iterator<Item = &'static Field> {
    ALL.iter().filter(move |f| f.place.holds(place))
}

/// The names of the keys at `place` that `pick` selects.
pub fn names(place: Place, pick: impl Fn(&Field) -> bool) -> Vec<&'static str> {
    at(place).filter(|f| pick(f)).map(|f| f.name).collect()
}

/// The names of a server's fields the cache hash covers (`configHash`), in the table's order.
pub fn hashed() -> Vec<&'static str> {
    names(Place::Server, |f| f.hashed)
}

/// What to report about `key` at `place`; `None` for a key this version reads.
pub fn check(place: Place, key: &str) -> Option<(Level, String)> {
    let field = at(place).find(|f| f.name == key);
    match field.map(|f| f.kind) {
        Some(Kind::Unused(instead)) => {
            return Some((
                Level::Note,
                format!("a pi-mcp-adapter option that pi-mcp-native does not use: {instead}"),
            ))
        }
        Some(_) => return None,
        None => {}
    }
    if let Some(home) = home_of(key) {
        return Some((Level::Note, home));
    }
    let known = names(place, |f| !matches!(f.kind, Kind::Unused(_)));
    match closest(key, &known) {
        Some(known) => Some((
            Level::Warning,
            format!("unknown key; did you mean `{known}`? It is ignored as written"),
        )),
        None => Some((Level::Note, "unknown key; ignored".into())),
    }
}

/// Where `key`, not read where it is written, belongs.
fn home_of(key: &str) -> Option<String> {
    let homes = [Place::Root, Place::Settings, Place::Server, Place::OAuth];
    let field = ALL.iter().find(|f| {
        f.name == key
            && !matches!(f.kind, Kind::Unused(_))
            && homes.iter().any(|h| f.place.holds(*h))
    })?;
    let home = match field.place {
        Place::Root => "a key of the file, beside `mcpServers`",
        Place::Settings => "a setting: it belongs in `settings`",
        Place::OAuth => "an OAuth setting: it belongs in a server's `oauth`",
        _ => "a server's key: it belongs in a server entry",
    };
    Some(format!("not read here; {home} ({}); ignored", field.doc))
}

/// The candidate `word` is most likely a misspelling of, if any is close enough.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(|c| (similarity(&word, &c.to_lowercase()), *c))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
