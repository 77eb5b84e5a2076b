//! The client-side settings: what servers may ask of us (elicitation, sampling, roots), which of
//! their log messages we keep, whether calls may run as tasks, how long a call may take, and
//! whether MCP Apps' interfaces are shown (`ui`). Each
//! is a global `settings.X` and a per-server `X`; the server's value wins. pi-mcp-adapter's values
//! (`elicitation: true`, `sampling: false`, …) mean what they meant there.

use super::fields;
use super::reader::Reader;
use super::Level;
use pi_mcp_connection::pool::{ClientFeatures, ElicitationPolicy};
use pi_mcp_connection::server_log::LogLevel;
use pi_mcp_connection::value_kind::describe;
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
    /// Reads the keys from an object; a bad value is reported with the key and the default
    /// applies.
    pub fn parse<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> ClientSettings {
        ClientSettings {
            elicitation: elicitation(read),
            sampling: read.flag_set(&fields::SAMPLING),
            sampling_auto_approve: read.flag_set(&fields::SAMPLING_AUTO_APPROVE),
            roots: read.flag_set(&fields::ROOTS),
            log_level: log_level(read),
            tasks: read.flag_set(&fields::TASKS),
            call_timeout: read.millis(&fields::CALL_TIMEOUT_MS),
            ui: ui(read),
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

/// `elicitation`: `"ask"`, `"defaults"`, `"decline"`, or pi-mcp-adapter's `true`/`false`.
fn elicitation<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<ElicitationPolicy> {
    let value = read.get(&fields::ELICITATION)?;
    let policy = match value {
        Value::Bool(true) => Some(ElicitationPolicy::Ask),
        Value::Bool(false) => Some(ElicitationPolicy::Off),
        Value::String(s) if s == "ask" => Some(ElicitationPolicy::Ask),
        Value::String(s) if s == "defaults" => Some(ElicitationPolicy::Defaults),
        Value::String(s) if s == "decline" => Some(ElicitationPolicy::Decline),
        _ => None,
    };
    if policy.is_none() {
        read.wrong(&fields::ELICITATION, &describe(value));
    }
    policy
}

fn log_level<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<LogLevel> {
    let value = read.get(&fields::LOG_LEVEL)?;
    let level = value.as_str().and_then(LogLevel::parse);
    if level.is_none() {
        read.wrong(&fields::LOG_LEVEL, &describe(value));
    }
    level
}

/// `ui`: `"browser"` (or `true`), `"none"`, or `false`.
fn ui<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<UiMode> {
    let value = read.get(&fields::UI)?;
    let mode = match value {
        Value::Bool(true) => Some(UiMode::Browser),
        Value::Bool(false) => Some(UiMode::Off),
        Value::String(s) if s == "browser" => Some(UiMode::Browser),
        Value::String(s) if s == "none" => Some(UiMode::NoOpen),
        _ => None,
    };
    if mode.is_none() {
        read.wrong(&fields::UI, &describe(value));
    }
    mode
}
