//! The client-side settings: what servers may ask of us (elicitation, sampling, roots), which of
//! their log messages we keep, whether calls may run as tasks, how long a call may take, and
//! whether MCP Apps' interfaces are shown (`ui`). Each
//! is a global `settings.X` and a per-server `X`; the server's value wins. pi-mcp-adapter's values
//! (`elicitation: true`, `sampling: false`, …) mean what they meant there.

use super::server::describe;
use super::Level;
use pi_mcp_connection::pool::{ClientFeatures, ElicitationPolicy};
use pi_mcp_connection::server_log::LogLevel;
use serde_json::Value;
use std::time::Duration;

/// Bounds a whole call (tasks included) unless `callTimeoutMs` says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Each value as configured at one level (`None`: not set there).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientSettings {
    pub elicitation: Option<ElicitationPolicy>,
    pub sampling: Option<bool>,
    pub sampling_auto_approve: Option<bool>,
    pub roots: Option<bool>,
    pub log_level: Option<LogLevel>,
    pub tasks: Option<bool>,
    /// `Some(None)`: `0`, no bound.
    pub call_timeout: Option<Option<Duration>>,
    pub ui: Option<UiMode>,
}

/// `ui`: how a tool's MCP App is shown. Read from the config alone, never from the session's
/// mode, so that a session and its headless subagents declare the same to a server (and share
/// it); a headless session opens nothing whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiMode {
    /// `"browser"` (or `true`), the default: opened in the user's browser.
    Browser,
    /// `"none"`: served, never opened; a notice gives its address.
    NoOpen,
    /// `false`: the extension is not declared; the server offers no interface.
    Off,
}

impl ClientSettings {
    /// Reads the keys from an object (`get` looks one up); a bad value is reported with the key
    /// and the default applies.
    pub fn parse<'a>(
        get: impl Fn(&str) -> Option<&'a Value>,
        report: &mut dyn FnMut(Level, &str, String),
    ) -> ClientSettings {
        let mut flag = |key: &str, default: bool| match get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                let got = describe(other);
                report(
                    Level::Warning,
                    key,
                    format!("must be true or false, got {got}; using {default}"),
                );
                None
            }
        };
        let sampling = flag("sampling", true);
        let sampling_auto_approve = flag("samplingAutoApprove", false);
        let roots = flag("roots", true);
        let tasks = flag("tasks", true);
        let elicitation = match get("elicitation") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(true)) => Some(ElicitationPolicy::Ask),
            Some(Value::Bool(false)) => Some(ElicitationPolicy::Off),
            Some(Value::String(s)) if s == "ask" => Some(ElicitationPolicy::Ask),
            Some(Value::String(s)) if s == "defaults" => Some(ElicitationPolicy::Defaults),
            Some(Value::String(s)) if s == "decline" => Some(ElicitationPolicy::Decline),
            Some(other) => {
                let got = describe(other);
                report(
                    Level::Warning,
                    "elicitation",
                    format!("must be \"ask\", \"defaults\", \"decline\", true or false, got {got}; using \"ask\""),
                );
                None
            }
        };
        let log_level = match get("logLevel") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if LogLevel::parse(s).is_some() => LogLevel::parse(s),
            Some(other) => {
                let got = describe(other);
                let names: Vec<_> = LogLevel::ALL.iter().map(|l| l.name()).collect();
                report(
                    Level::Warning,
                    "logLevel",
                    format!(
                        "must be one of {}, got {got}; using \"info\"",
                        names.join(", ")
                    ),
                );
                None
            }
        };
        let call_timeout = match get("callTimeoutMs") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|ms| ms == 0.0) => Some(None),
            Some(Value::Number(n)) if n.as_f64().is_some_and(|ms| ms >= 1.0) => {
                n.as_f64().map(|ms| Some(Duration::from_millis(ms as u64)))
            }
            Some(other) => {
                let got = describe(other);
                report(
                    Level::Warning,
                    "callTimeoutMs",
                    format!("must be a number of milliseconds (0: no limit), got {got}; using 1800000 (30 minutes)"),
                );
                None
            }
        };
        let ui = match get("ui") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(true)) => Some(UiMode::Browser),
            Some(Value::Bool(false)) => Some(UiMode::Off),
            Some(Value::String(s)) if s == "browser" => Some(UiMode::Browser),
            Some(Value::String(s)) if s == "none" => Some(UiMode::NoOpen),
            Some(other) => {
                let got = describe(other);
                report(
                    Level::Warning,
                    "ui",
                    format!("must be \"browser\", \"none\" or false, got {got}; using \"browser\""),
                );
                None
            }
        };
        ClientSettings {
            elicitation,
            sampling,
            sampling_auto_approve,
            roots,
            log_level,
            tasks,
            call_timeout,
            ui,
        }
    }

    /// These values where set, `base`'s elsewhere.
    pub fn over(&self, base: &ClientSettings) -> ClientSettings {
        ClientSettings {
            elicitation: self.elicitation.or(base.elicitation),
            sampling: self.sampling.or(base.sampling),
            sampling_auto_approve: self.sampling_auto_approve.or(base.sampling_auto_approve),
            roots: self.roots.or(base.roots),
            log_level: self.log_level.or(base.log_level),
            tasks: self.tasks.or(base.tasks),
            call_timeout: self.call_timeout.or(base.call_timeout),
            ui: self.ui.or(base.ui),
        }
    }

    /// What the connection offers, defaults filled in.
    pub fn features(&self) -> ClientFeatures {
        ClientFeatures {
            elicitation: self.elicitation.unwrap_or(ElicitationPolicy::Ask),
            sampling: self.sampling.unwrap_or(true),
            roots: self.roots.unwrap_or(true),
            tasks: self.tasks(),
            log_level: self.log_level.unwrap_or(LogLevel::Info),
            apps: self.ui() != UiMode::Off,
        }
    }

    pub fn ui(&self) -> UiMode {
        self.ui.unwrap_or(UiMode::Browser)
    }

    pub fn sampling_auto_approve(&self) -> bool {
        self.sampling_auto_approve.unwrap_or(false)
    }

    pub fn tasks(&self) -> bool {
        self.tasks.unwrap_or(true)
    }

    /// The bound of a whole call; `None`: none.
    pub fn call_timeout(&self) -> Option<Duration> {
        self.call_timeout.unwrap_or(Some(DEFAULT_CALL_TIMEOUT))
    }
}
