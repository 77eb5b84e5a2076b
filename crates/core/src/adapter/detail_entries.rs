//! The entries inside some modes' details: status's and doctor's servers, doctor's trust,
//! sources and diagnostics, and what setup found and offers. The binding mirrors each.

use serde_json::{Map, Value};

/// `status`: a server's state and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusServer {
    pub name: String,
    /// `connected`, `connecting`, `cached`, `not-connected`, `failed`, `needs-auth` or
    /// `disabled`.
    pub state: &'static str,
    pub tools: usize,
    /// Tools the server listed that are left out (too large, duplicate names, …).
    pub left_out: usize,
    /// The config file that defines it.
    pub source: Option<String>,
    /// A remote server's transport (`streamable-http`, `sse`) once connected.
    pub transport: Option<&'static str>,
    pub description: Option<String>,
    /// The server's `exposure`, when its config sets one.
    pub exposure: Option<&'static str>,
    /// The other tool whose config it is imported from.
    pub imported: Option<&'static str>,
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
    pub scope: &'static str,
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
    /// `given` (by a flag or the environment), `default` or `saved`.
    pub basis: &'static str,
    /// Where a saved decision is kept, and the folder it is about.
    pub file: Option<String>,
    pub folder: Option<String>,
}

/// `doctor`: a config file read, and what came of it.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceEntry {
    pub path: String,
    /// `shared`, `pi-global`, `explicit`, `project`, `import` or `package`.
    pub role: &'static str,
    /// An import's tool, and the config whose `imports` asked for it.
    pub import: Option<&'static str>,
    pub imported_by: Option<String>,
    /// `missing`, `blank`, `invalid`, `loaded` or `untrusted`.
    pub state: &'static str,
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
    pub lifecycle: &'static str,
    pub disabled: bool,
    pub exposure: Option<&'static str>,
    pub package: Option<PackageEntry>,
    /// `stdio` (with `command` and `args`), `http` (with `url`, without user info and query:
    /// either may hold a key) or `socket` (with `socket`).
    pub transport: &'static str,
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
    pub kind: &'static str,
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
    /// `error`, `warning` or `note`.
    pub level: &'static str,
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
    pub tool: &'static str,
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
