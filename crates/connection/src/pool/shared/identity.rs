//! When two sessions share a server: when they would launch the same thing and talk to it the
//! same way. Through the per-user broker ([`Launch::identity`]) the identity covers the resolved
//! command, args and cwd; the variables the entry declares (after interpolation and `envFile`)
//! and those it references (`${VAR}`); the inherited variables of [`INHERITED`] and the entry's
//! `sharedEnv`; the protocol and the client features. Every other inherited variable (terminal
//! ids, `PWD`, `SHLVL`, `TERM`, …) is left out, so two terminals share. Inside a family
//! ([`family`]) it is strict: the whole environment counts but for [`TERMINAL`].

use super::wire::FAMILY_VAR;
use crate::pool::{ClientFeatures, Protocol, StdioSpec};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Inherited variables that change what a program does; `LC_*` stands for every locale variable.
pub const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_EXTRA_CA_CERTS",
    "NODE_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "DISPLAY",
    "WAYLAND_DISPLAY",
];

/// Inherited variables that do not tell family members apart: what shells and terminals set
/// for each of their processes, Node's IPC channel, the Pi session a command of Pi's bash tool
/// runs in (Pi ≥ 1.5 sets `PI_SESSION_ID`, `PI_MODEL`, … for it), and the family's own token.
pub const TERMINAL: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "COLUMNS",
    "LINES",
    "TERM_SESSION_ID",
    "ITERM_SESSION_ID",
    "WINDOWID",
    "TMUX_PANE",
    "STY",
    "WT_SESSION",
    "KITTY_WINDOW_ID",
    "WEZTERM_PANE",
    "ALACRITTY_WINDOW_ID",
    "NODE_CHANNEL_FD",
    "NODE_CHANNEL_SERIALIZATION_MODE",
    "NODE_UNIQUE_ID",
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
    FAMILY_VAR,
];

/// The identity of a stdio server inside a family: 32 hex digits of SHA-256 over its name in the
/// config (two entries of one config stay two processes, as two browsers do), the whole launch
/// (command, args, cwd, and every variable the server gets but those of [`TERMINAL`], with `PATH`
/// counted without `<agentDir>/bin`, which Pi's `bash` tool puts first), the protocol, the client
/// features, the agent dir and, when roots are offered (`roots`), the session's directory they
/// name. Another token, profile, directory or secret: another server.
pub fn family(
    name: &str,
    stdio: &StdioSpec,
    protocol: Protocol,
    client: &ClientFeatures,
    agent_dir: &Path,
    roots: Option<&Path>,
) -> String {
    let pi_bin = agent_dir.join("bin");
    let env: BTreeMap<&str, String> = stdio
        .env
        .iter()
        .filter(|(name, _)| !TERMINAL.contains(&name.as_str()))
        .map(|(name, value)| match name.as_str() {
            "PATH" => (name.as_str(), without_dir(value, &pi_bin)),
            _ => (name.as_str(), value.clone()),
        })
        .collect();
    let canonical = json!({
        "name": name,
        "command": stdio.command,
        "args": stdio.args,
        "cwd": stdio.cwd,
        "env": env,
        "protocol": protocol,
        "client": client,
        "agentDir": agent_dir,
        "roots": roots,
    });
    hex(&Sha256::digest(canonical.to_string().as_bytes())[..16])
}

/// `path` (a `PATH` value) without the entries that are `dir`.
fn without_dir(path: &str, dir: &Path) -> String {
    let kept: Vec<_> = std::env::split_paths(path)
        .filter(|entry| entry != dir)
        .collect();
    std::env::join_paths(kept).map_or_else(
        |_| path.to_string(),
        |joined| joined.to_string_lossy().into_owned(),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a session would launch, as far as sharing is concerned.
pub struct Launch<'a> {
    /// The whole launch: command, args, cwd and environment as the server would get them.
    pub stdio: &'a StdioSpec,
    /// Variables the entry sets (`env`, `envFile`).
    pub declared: &'a [String],
    /// Variables the entry references and those of its `sharedEnv`.
    pub matched: &'a [String],
    /// The session's environment (for referenced variables the server does not inherit).
    pub session_env: &'a HashMap<String, String>,
    pub protocol: Protocol,
    pub client: &'a ClientFeatures,
}

impl Launch<'_> {
    /// 16 hex digits of SHA-256 over everything that counts, written canonically.
    pub fn identity(&self) -> String {
        let counts = |name: &str| {
            self.declared.iter().any(|d| d == name)
                || self.matched.iter().any(|m| m == name)
                || inherited(name)
        };
        let mut env: BTreeMap<&str, Option<&str>> = self
            .stdio
            .env
            .iter()
            .filter(|(name, _)| counts(name))
            .map(|(name, value)| (name.as_str(), Some(value.as_str())))
            .collect();
        for name in self.matched {
            env.entry(name)
                .or_insert_with(|| self.session_env.get(name).map(String::as_str));
        }
        let canonical = json!({
            "command": self.stdio.command,
            "args": self.stdio.args,
            "cwd": self.stdio.cwd,
            "env": env,
            "protocol": self.protocol,
            "client": self.client,
        });
        hex(&Sha256::digest(canonical.to_string().as_bytes())[..8])
    }
}

fn inherited(name: &str) -> bool {
    INHERITED
        .iter()
        .any(|&listed| match listed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => listed == name,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn stdio(env: &[(&str, &str)]) -> StdioSpec {
        StdioSpec {
            command: "node".into(),
            args: vec!["server.js".into()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: PathBuf::from("/work"),
        }
    }

    fn identity(stdio: &StdioSpec, declared: &[&str], matched: &[&str]) -> String {
        let declared: Vec<String> = declared.iter().map(|s| s.to_string()).collect();
        let matched: Vec<String> = matched.iter().map(|s| s.to_string()).collect();
        let session_env = HashMap::from([("REF".to_string(), "session".to_string())]);
        Launch {
            stdio,
            declared: &declared,
            matched: &matched,
            session_env: &session_env,
            protocol: Protocol::Initialize,
            client: &ClientFeatures::none(),
        }
        .identity()
    }

    #[test]
    fn terminal_variables_do_not_count_declared_and_listed_ones_do() {
        let base = identity(
            &stdio(&[("PATH", "/bin"), ("TERM_SESSION_ID", "a"), ("SHLVL", "1")]),
            &[],
            &[],
        );
        let other_terminal = identity(
            &stdio(&[("PATH", "/bin"), ("TERM_SESSION_ID", "b"), ("SHLVL", "3")]),
            &[],
            &[],
        );
        assert_eq!(base, other_terminal);
        assert_eq!(base.len(), 16);
        let other_path = identity(&stdio(&[("PATH", "/usr/bin")]), &[], &[]);
        assert_ne!(base, other_path, "PATH changes what runs");
        let locale = identity(&stdio(&[("PATH", "/bin"), ("LC_ALL", "de_DE")]), &[], &[]);
        assert_ne!(base, locale, "LC_* counts");
        let a = stdio(&[("PATH", "/bin"), ("TOKEN", "a")]);
        let b = stdio(&[("PATH", "/bin"), ("TOKEN", "b")]);
        assert_eq!(identity(&a, &[], &[]), identity(&b, &[], &[]));
        assert_ne!(
            identity(&a, &["TOKEN"], &[]),
            identity(&b, &["TOKEN"], &[]),
            "a declared variable counts"
        );
        assert_ne!(
            identity(&a, &[], &["TOKEN"]),
            identity(&b, &[], &["TOKEN"]),
            "sharedEnv and references count"
        );
    }

    #[test]
    fn a_referenced_variable_the_server_does_not_inherit_counts_from_the_session() {
        let spec = stdio(&[("PATH", "/bin")]);
        assert_ne!(
            identity(&spec, &[], &["REF"]),
            identity(&spec, &[], &["UNSET"]),
            "set in the session vs unset"
        );
    }

    fn family_of(stdio: &StdioSpec) -> String {
        let agent = Path::new("/home/u/.pi/agent");
        family(
            "s",
            stdio,
            Protocol::Initialize,
            &ClientFeatures::none(),
            agent,
            None,
        )
    }

    #[test]
    fn in_a_family_every_variable_counts_but_the_terminals() {
        let base = stdio(&[
            ("PATH", "/bin"),
            ("TOKEN", "a"),
            ("PWD", "/x"),
            ("SHLVL", "1"),
        ]);
        let id = family_of(&base);
        assert_eq!(id.len(), 32);
        let terminal = stdio(&[
            ("PATH", "/bin"),
            ("TOKEN", "a"),
            ("PWD", "/y"),
            ("SHLVL", "3"),
            (FAMILY_VAR, "v1.x"),
        ]);
        assert_eq!(family_of(&terminal), id, "terminal variables and the token");
        let bash = stdio(&[
            ("PATH", "/bin"),
            ("TOKEN", "a"),
            ("PI_SESSION_ID", "0192"),
            ("PI_MODEL", "m"),
            ("PI_PROVIDER", "p"),
            ("PI_REASONING_LEVEL", "off"),
            ("PI_SESSION_FILE", "/s.jsonl"),
        ]);
        assert_eq!(family_of(&bash), id, "the session Pi's bash tool runs in");
        let secret = stdio(&[("PATH", "/bin"), ("TOKEN", "b")]);
        assert_ne!(family_of(&secret), id, "a changed secret");
        let pi_bin = stdio(&[("PATH", "/home/u/.pi/agent/bin:/bin"), ("TOKEN", "a")]);
        assert_eq!(
            family_of(&pi_bin),
            id,
            "Pi's bash puts <agentDir>/bin first"
        );
        let other_path = stdio(&[("PATH", "/usr/bin:/bin"), ("TOKEN", "a")]);
        assert_ne!(family_of(&other_path), id);
        let none = ClientFeatures::none();
        let agent = Path::new("/home/u/.pi/agent");
        let roots = |dir: &str| {
            let client = ClientFeatures {
                roots: true,
                ..ClientFeatures::none()
            };
            family(
                "s",
                &base,
                Protocol::Initialize,
                &client,
                agent,
                Some(Path::new(dir)),
            )
        };
        assert_ne!(
            roots("/a"),
            roots("/b"),
            "roots name the session's directory"
        );
        let other_agent = family(
            "s",
            &base,
            Protocol::Initialize,
            &none,
            Path::new("/p2"),
            None,
        );
        assert_ne!(other_agent, id, "another agent dir");
        let other_name = family("t", &base, Protocol::Initialize, &none, agent, None);
        assert_ne!(other_name, id, "another entry of the config");
    }

    #[test]
    fn launch_protocol_and_client_features_count() {
        let spec = stdio(&[]);
        let mut args = spec.clone();
        args.args.push("--flag".into());
        assert_ne!(identity(&spec, &[], &[]), identity(&args, &[], &[]));
        let mut cwd = spec.clone();
        cwd.cwd = PathBuf::from("/elsewhere");
        assert_ne!(identity(&spec, &[], &[]), identity(&cwd, &[], &[]));
        let session_env = HashMap::new();
        let launch = |protocol, client: &ClientFeatures| {
            Launch {
                stdio: &spec,
                declared: &[],
                matched: &[],
                session_env: &session_env,
                protocol,
                client,
            }
            .identity()
        };
        let none = ClientFeatures::none();
        let sampling = ClientFeatures {
            sampling: true,
            ..ClientFeatures::none()
        };
        assert_ne!(
            launch(Protocol::Initialize, &none),
            launch(Protocol::Auto, &none)
        );
        assert_ne!(
            launch(Protocol::Initialize, &none),
            launch(Protocol::Initialize, &sampling)
        );
    }
}
