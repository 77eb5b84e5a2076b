//! The entries inside some modes' details as JavaScript gets them: status's and doctor's
//! servers, doctor's trust, sources and diagnostics, what setup found and offers, the family and
//! the broker. Where the core's value had every key with `null` for what is not set, the mirror
//! is `use_nullable` (its fields `T | null`); elsewhere a field not set is left out.

use super::json::JsonObject;
use super::mirror::Js;
use napi_derive::napi;
use pi_mcp_connection::broker::family;
use pi_mcp_connection::pool::{self, shared::wire};
use pi_mcp_core::{adapter, config};

/// status: a server's state and where it came from.
#[napi(object, use_nullable = true)]
pub struct StatusServer {
    pub name: String,
    pub state: ServerState,
    pub tools: u32,
    /// Tools the server listed that are left out (too large, duplicate names, …).
    pub left_out: u32,
    /// The config file that defines it.
    pub source: Option<String>,
    /// A remote server's transport (`streamable-http`, `sse`) once connected.
    pub transport: Option<RemoteTransport>,
    pub description: Option<String>,
    /// The server's `exposure`, when its config sets one.
    pub exposure: Option<Exposure>,
    /// The other tool whose config it is imported from.
    pub imported: Option<ImportKind>,
    /// The Pi extension that registered it.
    pub registered_by: Option<String>,
    pub package: Option<PackageEntry>,
    /// Why it failed or waits for a sign-in.
    pub problem: Option<String>,
    /// How to sign in, while it waits for that.
    pub sign_in: Option<String>,
    /// How it is shared with other sessions now, when it is.
    pub shared: Option<SharingEntry>,
}
mirror!(StatusServer <- adapter::StatusServer {
    name, state, tools, left_out, source, transport, description, exposure, imported,
    registered_by, package, problem, sign_in, shared,
});

/// The Pi package that declares a server.
#[napi(object)]
pub struct PackageEntry {
    pub name: String,
    pub root: String,
    /// The Pi settings file whose `packages` lists it.
    pub settings: String,
    /// Listed in the project's settings.
    pub project: bool,
}
mirror!(PackageEntry <- adapter::PackageEntry { name, root, settings, project });

/// How a server is shared: with the user's sessions (`scope` `user`, through the broker) or
/// with the session's family (`family`).
#[napi(object, use_nullable = true)]
pub struct SharingEntry {
    pub scope: SharingScope,
    /// Sessions using it now, when known.
    pub sessions: Option<u32>,
    /// Where it runs, when not in this process (a family's).
    pub runs_in: Option<String>,
    /// Why this session runs its own instead.
    pub runs_here: Option<String>,
    /// All of it in a line, as status shows it.
    pub text: String,
}
mirror!(SharingEntry <- adapter::SharingEntry { scope, sessions, runs_in, runs_here, text });

/// status: what this process is in its family of Pi sessions sharing servers.
#[napi(object, use_nullable = true)]
pub struct FamilyRole {
    pub role: FamilyRoleName,
    /// Processes of the family connected to its hub (a host's).
    pub members: Option<u32>,
    /// Where the hub listens (the start of its name).
    pub endpoint: Option<String>,
    /// The hub's process (a member's).
    pub hub_pid: Option<u32>,
    /// Why it runs its own servers, or cannot host.
    pub why: Option<String>,
}
mirror!(FamilyRole <- family::Role { role, members, endpoint, hub_pid, why });

/// doctor: whether the project's config is trusted, and why.
#[napi(object)]
pub struct TrustEntry {
    pub trusted: bool,
    pub basis: TrustBasis,
    /// Where a saved decision is kept.
    pub file: Option<String>,
    /// The folder a saved decision is about.
    pub folder: Option<String>,
}
mirror!(TrustEntry <- adapter::TrustEntry { trusted, basis, file, folder });

/// doctor: a config file read, and what came of it.
#[napi(object)]
pub struct SourceEntry {
    pub path: String,
    pub role: SourceRole,
    /// An import's tool.
    pub import: Option<ImportKind>,
    /// An import's config, whose `imports` asked for it.
    pub imported_by: Option<String>,
    pub state: SourceState,
    /// The servers it defines (loaded or untrusted).
    pub servers: Option<Vec<String>>,
    /// Its imported servers a config (or an earlier import) defines instead.
    pub shadowed: Option<Vec<String>>,
}
mirror!(SourceEntry <- adapter::SourceEntry {
    path, role, import, imported_by, state, servers, shadowed,
});

/// doctor: a merged server, where it came from, and its connect check.
#[napi(object)]
pub struct DoctorServer {
    pub name: String,
    pub source: String,
    /// Every file that set a field of it.
    pub files: Vec<String>,
    pub lifecycle: Lifecycle,
    pub disabled: bool,
    pub exposure: Option<Exposure>,
    pub package: Option<PackageEntry>,
    /// With `command` and `args` (`stdio`), `url` (`http`, without user info and query) or
    /// `socket`.
    pub transport: ServerTransport,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub url: Option<String>,
    pub socket: Option<String>,
    pub imported: Option<ImportedEntry>,
    /// The connect check, when doctor connected.
    pub connect: Option<ConnectEntry>,
    /// How to sign in, while it waits for that.
    pub sign_in: Option<String>,
}
mirror!(DoctorServer <- adapter::DoctorServer {
    name, source, files, lifecycle, disabled, exposure, package, transport, command, args, url,
    socket, imported, connect, sign_in,
});

/// Where an imported server came from: the other tool, and the config that imports it.
#[napi(object)]
pub struct ImportedEntry {
    pub kind: ImportKind,
    pub by: String,
}
mirror!(ImportedEntry <- adapter::ImportedEntry { kind, by });

/// A connect check: its time, and the tools listed or the error.
#[napi(object)]
pub struct ConnectEntry {
    pub ok: bool,
    pub ms: f64,
    pub tools: Option<u32>,
    pub error: Option<String>,
    /// The server's last logged warnings and errors.
    pub log: Option<Vec<String>>,
}
mirror!(ConnectEntry <- adapter::ConnectEntry { ok, ms, tools, error, log });

/// doctor: a problem of the config (notes included).
#[napi(object, use_nullable = true)]
pub struct DiagnosticEntry {
    pub level: DiagnosticLevel,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub server: Option<String>,
    pub field: Option<String>,
    pub message: String,
    /// All of it in a line, as doctor shows it.
    pub text: String,
}
mirror!(DiagnosticEntry <- adapter::DiagnosticEntry {
    level, file, line, server, field, message, text,
});

/// setup: another tool's config found, and what importing it would add.
#[napi(object)]
pub struct FoundEntry {
    pub tool: ImportKind,
    pub files: Vec<String>,
    pub servers: Vec<String>,
    /// Those no config defines yet.
    pub new: Vec<String>,
    /// A config's `imports` lists the tool already.
    pub imported: bool,
}
mirror!(FoundEntry <- adapter::FoundEntry { tool, files, servers, new, imported });

/// setup: a well-known server on offer.
#[napi(object)]
pub struct WellKnownEntry {
    pub id: String,
    pub title: String,
    pub about: String,
    /// The config entry it would add, as written to the file.
    pub entry: JsonObject,
    /// The config defines a server of that name already.
    pub configured: bool,
}

impl Js for adapter::WellKnownEntry {
    type Js = WellKnownEntry;
    fn js(self) -> WellKnownEntry {
        let adapter::WellKnownEntry {
            id,
            title,
            about,
            entry,
            configured,
        } = self;
        WellKnownEntry {
            id,
            title,
            about,
            entry: entry.into(),
            configured,
        }
    }
}

/// broker status, broker stop: the broker serving this agent dir.
#[napi(object)]
pub struct BrokerStatus {
    pub pid: u32,
    pub version: String,
    pub endpoint: String,
    pub uptime_ms: f64,
    /// Sessions connected now.
    pub sessions: u32,
    pub servers: Vec<BrokerServer>,
}
mirror!(BrokerStatus <- wire::BrokerStatus { pid, version, endpoint, uptime_ms, sessions, servers });

/// A server the broker runs.
#[napi(object, use_nullable = true)]
pub struct BrokerServer {
    pub name: String,
    pub identity: String,
    pub command: String,
    /// The process group leader, while it runs.
    pub pid: Option<u32>,
    /// Sessions using it now.
    pub sessions: u32,
    /// Since its last request.
    pub idle_ms: f64,
    /// Why its last start failed, if it did.
    pub failure: Option<String>,
}
mirror!(BrokerServer <- wire::SharedServer {
    name, identity, command, pid, sessions, idle_ms, failure,
});

/// A server's state, as status names it.
#[napi(string_enum = "kebab-case")]
pub enum ServerState {
    Connected,
    Connecting,
    Cached,
    NotConnected,
    Failed,
    NeedsAuth,
    Disabled,
}
mirror!(ServerState <- adapter::ServerStateName {
    Connected | Connecting | Cached | NotConnected | Failed | NeedsAuth | Disabled
});

/// A remote server's transport: the one that worked.
#[napi(string_enum = "kebab-case")]
pub enum RemoteTransport {
    StreamableHttp,
    Sse,
}
mirror!(RemoteTransport <- pool::RemoteKind { StreamableHttp | Sse });

/// How the model reaches a server's tools, as its config's `exposure` says.
#[napi(string_enum = "kebab-case")]
pub enum Exposure {
    Codemode,
    Deferred,
    Direct,
    Hidden,
}
mirror!(Exposure <- config::Exposure { Codemode | Deferred | Direct | Hidden });

/// Another tool whose config servers are imported from, as `imports` names it.
#[napi(string_enum = "kebab-case")]
pub enum ImportKind {
    Cursor,
    ClaudeCode,
    ClaudeDesktop,
    Vscode,
    Windsurf,
    Codex,
    Opencode,
}
mirror!(ImportKind <- config::ImportKind {
    Cursor | ClaudeCode | ClaudeDesktop | Vscode | Windsurf | Codex | Opencode
});

/// Whom a server is shared with: the user's sessions (through the broker) or the session's
/// family.
#[napi(string_enum = "kebab-case")]
pub enum SharingScope {
    User,
    Family,
}
mirror!(SharingScope <- adapter::SharingScope { User | Family });

/// What a process is in its family: `host` (its hub listens for the processes it starts),
/// `member` (it inherited a token), `off` (it did, but runs its own servers) or `alone`.
#[napi(string_enum = "kebab-case")]
pub enum FamilyRoleName {
    Host,
    Member,
    Off,
    Alone,
}
mirror!(FamilyRoleName <- family::RoleName { Host | Member | Off | Alone });

/// Why the project's config is trusted or not: `given` (by a flag or the environment),
/// `default` or `saved`.
#[napi(string_enum = "kebab-case")]
pub enum TrustBasis {
    Given,
    Default,
    Saved,
}
mirror!(TrustBasis <- adapter::TrustBasisName { Given | Default | Saved });

/// What a config file is to the config.
#[napi(string_enum = "kebab-case")]
pub enum SourceRole {
    Shared,
    PiGlobal,
    Explicit,
    Project,
    Import,
    Package,
}
mirror!(SourceRole <- adapter::SourceRoleName {
    Shared | PiGlobal | Explicit | Project | Import | Package
});

/// What came of reading a config file.
#[napi(string_enum = "kebab-case")]
pub enum SourceState {
    Missing,
    Blank,
    Invalid,
    Loaded,
    Untrusted,
}
mirror!(SourceState <- adapter::SourceStateName { Missing | Blank | Invalid | Loaded | Untrusted });

/// When a server connects, and whether it stays connected, as its config's `lifecycle` says.
#[napi(string_enum = "kebab-case")]
pub enum Lifecycle {
    Lazy,
    Eager,
    KeepAlive,
    LazyKeepAlive,
}
mirror!(Lifecycle <- config::Lifecycle { Lazy | Eager | KeepAlive | LazyKeepAlive });

/// How a configured server is reached.
#[napi(string_enum = "kebab-case")]
pub enum ServerTransport {
    Stdio,
    Http,
    Socket,
}
mirror!(ServerTransport <- adapter::TransportName { Stdio | Http | Socket });

/// How bad a problem of the config is (a `note` is harmless: an unknown key).
#[napi(string_enum = "kebab-case")]
pub enum DiagnosticLevel {
    Error,
    Warning,
    Note,
}
mirror!(DiagnosticLevel <- config::Level { Error | Warning | Note });
