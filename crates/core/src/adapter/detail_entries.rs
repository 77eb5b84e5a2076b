//! The entries inside some modes' details: status's and doctor's servers, doctor's trust,
//! sources and diagnostics, and what setup found and offers. The binding mirrors each, and the
//! names their fields take (as string unions): those declared here, and the config's and the
//! connection crate's where those decide them.

use crate::config::{Exposure, ImportKind, Level, Lifecycle};
use crate::named_enum::named_enum;
use pi_mcp_connection::pool::RemoteKind;
use serde_json::{Map, Value};

/// `status`: a server's state and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusServer {
    pub name: String,
    pub state: ServerStateName,
    pub tools: usize,
    /// Tools the server listed that are left out (too large, duplicate names, …).
    pub left_out: usize,
    /// The config file that defines it.
    pub source: Option<String>,
    /// A remote server's transport (`streamable-http`, `sse`) once connected.
    pub transport: Option<RemoteKind>,
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

/// The Pi package that declares a server.
#[derive(Clone, Debug, PartialEq)]
pub struct PackageEntry {
    pub name: String,
    pub root: String,
    /// The Pi settings file whose `packages` lists it.
    pub settings: String,
    /// Listed in the project's settings.
    pub project: bool,
}

impl From<&crate::config::PackageOrigin> for PackageEntry {
    fn from(package: &crate::config::PackageOrigin) -> Self {
        PackageEntry {
            name: package.name.clone(),
            root: package.root.display().to_string(),
            settings: package.settings.display().to_string(),
            project: package.project,
        }
    }
}

/// How a server is shared: with the user's sessions (`scope` `user`, through the broker) or
/// with the session's family (`family`).
#[derive(Clone, Debug, PartialEq)]
pub struct SharingEntry {
    pub scope: SharingScope,
    /// Sessions using it now, when known.
    pub sessions: Option<usize>,
    /// Where it runs, when not in this process (a family's).
    pub runs_in: Option<String>,
    /// Why this session runs its own instead.
    pub runs_here: Option<String>,
    /// All of it in a line, as status shows it.
    pub text: String,
}

/// `doctor`: whether the project's config is trusted, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct TrustEntry {
    pub trusted: bool,
    pub basis: TrustBasisName,
    /// Where a saved decision is kept, and the folder it is about.
    pub file: Option<String>,
    pub folder: Option<String>,
}

/// `doctor`: a config file read, and what came of it.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceEntry {
    pub path: String,
    pub role: SourceRoleName,
    /// An import's tool, and the config whose `imports` asked for it.
    pub import: Option<ImportKind>,
    pub imported_by: Option<String>,
    pub state: SourceStateName,
    /// The servers it defines (loaded or untrusted).
    pub servers: Option<Vec<String>>,
    /// Its imported servers a config (or an earlier import) defines instead.
    pub shadowed: Option<Vec<String>>,
}

/// `doctor`: a merged server, where it came from, and its connect check.
#[derive(Clone, Debug, PartialEq)]
pub struct DoctorServer {
    pub name: String,
    pub source: String,
    /// Every file that set a field of it.
    pub files: Vec<String>,
    pub lifecycle: Lifecycle,
    pub disabled: bool,
    pub exposure: Option<Exposure>,
    pub package: Option<PackageEntry>,
    /// `stdio` (with `command` and `args`), `http` (with `url`, without user info and query:
    /// either may hold a key) or `socket` (with `socket`).
    pub transport: TransportName,
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

/// Where an imported server came from: the other tool, and the config that imports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedEntry {
    pub kind: ImportKind,
    pub by: String,
}

/// A connect check: its time, and the tools listed or the error.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectEntry {
    pub ok: bool,
    pub ms: f64,
    pub tools: Option<usize>,
    pub error: Option<String>,
    /// The server's last logged warnings and errors.
    pub log: Option<Vec<String>>,
}

/// `doctor`: a problem of the config (notes included).
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticEntry {
    pub level: Level,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub server: Option<String>,
    pub field: Option<String>,
    pub message: String,
    /// All of it in a line, as doctor shows it.
    pub text: String,
}

/// `setup`: another tool's config found, and what importing it would add.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundEntry {
    pub tool: ImportKind,
    pub files: Vec<String>,
    pub servers: Vec<String>,
    /// Those no config defines yet.
    pub new: Vec<String>,
    /// A config's `imports` lists the tool already.
    pub imported: bool,
}

/// `setup`: a well-known server on offer.
#[derive(Clone, Debug, PartialEq)]
pub struct WellKnownEntry {
    pub id: String,
    pub title: String,
    pub about: String,
    /// The config entry it would add, as written to the file (JSON of the config's shape).
    pub entry: Map<String, Value>,
    /// The config defines a server of that name already.
    pub configured: bool,
}

named_enum! {
    /// A server's state, as status names it.
    ServerStateName {
        Connected = "connected",
        Connecting = "connecting",
        /// Not running; its tools are known from the cache.
        Cached = "cached",
        NotConnected = "not-connected",
        Failed = "failed",
        NeedsAuth = "needs-auth",
        Disabled = "disabled",
    }
}

named_enum! {
    /// Whom a server is shared with: the user's sessions (through the broker) or the session's
    /// family.
    SharingScope {
        User = "user",
        Family = "family",
    }
}

named_enum! {
    /// Why the project's config is trusted or not.
    TrustBasisName {
        /// By a flag or the environment.
        Given = "given",
        Default = "default",
        /// A decision kept in a file.
        Saved = "saved",
    }
}

named_enum! {
    /// What a config file is to the config.
    SourceRoleName {
        Shared = "shared",
        PiGlobal = "pi-global",
        Explicit = "explicit",
        Project = "project",
        Import = "import",
        Package = "package",
    }
}

named_enum! {
    /// What came of reading a config file.
    SourceStateName {
        Missing = "missing",
        Blank = "blank",
        Invalid = "invalid",
        Loaded = "loaded",
        Untrusted = "untrusted",
    }
}

named_enum! {
    /// How a configured server is reached.
    TransportName {
        Stdio = "stdio",
        Http = "http",
        Socket = "socket",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::named_enum::names_in_case;
    use pi_mcp_connection::broker::family::RoleName;

    /// The binding mirrors each as a string union in kebab case: the names JavaScript reads.
    #[test]
    fn every_name_in_the_entries_is_its_variant_in_kebab_case() {
        names_in_case(ServerStateName::ALL, |s| s.as_str(), '-');
        names_in_case(SharingScope::ALL, |s| s.as_str(), '-');
        names_in_case(TrustBasisName::ALL, |b| b.as_str(), '-');
        names_in_case(SourceRoleName::ALL, |r| r.as_str(), '-');
        names_in_case(SourceStateName::ALL, |s| s.as_str(), '-');
        names_in_case(TransportName::ALL, |t| t.as_str(), '-');
        names_in_case(Level::ALL, |l| l.as_str(), '-');
        names_in_case(&Exposure::ALL, |e| e.name(), '-');
        names_in_case(&ImportKind::ALL, |k| k.name(), '-');
        names_in_case(&Lifecycle::ALL, |l| l.name(), '-');
        names_in_case(&RemoteKind::ALL, |k| k.name(), '-');
        names_in_case(&RoleName::ALL, |r| r.name(), '-');
    }
}
