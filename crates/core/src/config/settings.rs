//! The merged `settings` object: known values checked, unknown ones reported; a bad value is a
//! warning and the default applies.

use super::fields::{self, Reader};
use super::{
    server, ClientSettings, Diagnostic, Exposure, Level, Settings, TraceSettings, APPROVAL_TIMEOUT,
    STARTUP_WAIT,
};
use crate::output_guard::{Limits, DEFAULT_LIMITS};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

pub fn parse(
    raw: &Map<String, Value>,
    files: &HashMap<String, PathBuf>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Settings {
    let mut report = |level: Level, key: &str, message: String| {
        diagnostics.push(Diagnostic {
            level,
            file: files.get(key).cloned(),
            line: None,
            server: None,
            field: Some(format!("settings.{key}")),
            message,
        });
    };
    for key in raw.keys() {
        if let Some((level, message)) = fields::SETTINGS.check(key) {
            report(level, key, message);
        }
    }
    let tool_prefix = match raw.get("toolPrefix") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => {
            server::tool_prefix(p, &mut |m| report(Level::Warning, "toolPrefix", m))
        }
        Some(other) => {
            let got = server::describe(other);
            report(
                Level::Warning,
                "toolPrefix",
                format!("must be a string, got {got}; using \"server\""),
            );
            None
        }
    };
    let request_timeout_ms = match raw.get("requestTimeoutMs") {
        Some(Value::Number(n)) => n.as_f64().filter(|ms| *ms >= 1.0).map(|ms| ms as u64),
        None | Some(Value::Null) => None,
        Some(other) => {
            let got = server::describe(other);
            report(
                Level::Warning,
                "requestTimeoutMs",
                format!("must be a number of milliseconds, got {got}; using 60000"),
            );
            None
        }
    };
    let idle_timeout_min = match raw.get("idleTimeout") {
        None | Some(Value::Null) => None,
        Some(value) => server::minutes(value)
            .map_err(|message| report(Level::Warning, "idleTimeout", message))
            .ok(),
    };
    let direct_tools = match raw.get("directTools") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            let got = server::describe(other);
            report(
                Level::Warning,
                "directTools",
                format!("must be true or false here (lists belong in a server entry), got {got}; using false"),
            );
            false
        }
    };
    let output_guard = match raw.get("outputGuard") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Some(DEFAULT_LIMITS),
        Some(Value::Bool(false)) => None,
        Some(Value::Object(limits)) => {
            if limits.contains_key("detailsMaxBytes") {
                let message = "accepted, and not needed: pi-mcp-native keeps no raw result in a tool result's details, so there is nothing to bound".into();
                report(Level::Note, "outputGuard.detailsMaxBytes", message);
            }
            let mut limit = |key: &str, default: usize| match limits.get(key) {
                None | Some(Value::Null) => default,
                Some(v) => match v.as_u64().filter(|n| *n > 0) {
                    Some(n) => n as usize,
                    None => {
                        let got = server::describe(v);
                        report(
                            Level::Warning,
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
            report(
                Level::Warning,
                "outputGuard",
                format!("must be true, false or {{ maxBytes, maxLines }}, got {got}; using true"),
            );
            Some(DEFAULT_LIMITS)
        }
    };
    let startup_wait = startup_wait(raw.get("startupWaitMs"), &mut report);
    let mut read = Reader::new(raw, &mut report);
    let auto_auth = read.flag("autoAuth", false);
    let shared_servers = read.flag("sharedServers", false);
    let share_with_subagents = read.flag("shareWithSubagents", super::FAMILY_BY_DEFAULT);
    let approval_timeout = read.millis("approvalTimeoutMs", APPROVAL_TIMEOUT);
    let disable_proxy_tool = read.flag("disableProxyTool", false);
    let warn_on_large_direct_tools = read.flag("warnOnLargeDirectTools", true);
    let trace = trace(&mut read);
    let client = ClientSettings::parse(|key| raw.get(key), &mut report);
    let exposure = raw
        .get("exposure")
        .filter(|v| !v.is_null())
        .and_then(|value| {
            Exposure::parse(value)
                .map_err(|why| report(Level::Warning, "exposure", format!("{why}; ignored")))
                .ok()
        });
    Settings {
        exposure,
        client,
        auto_auth,
        shared_servers,
        share_with_subagents,
        tool_prefix: tool_prefix.unwrap_or_default(),
        request_timeout_ms,
        idle_timeout_min,
        direct_tools,
        output_guard,
        startup_wait,
        approval_timeout,
        // Read from the user's files only (see `approval`).
        yes_inside_pi: false,
        disable_proxy_tool,
        warn_on_large_direct_tools,
        trace,
    }
}

/// `trace`: `{ enabled, file, maxBytes, maxEvents }`, or `true`/`false` for `enabled` alone.
fn trace<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> TraceSettings {
    let default = TraceSettings::default();
    match read.get("trace") {
        None => default,
        Some(Value::Bool(enabled)) => TraceSettings {
            enabled: *enabled,
            ..default
        },
        Some(Value::Object(object)) => {
            let mut report = |level: Level, key: &str, message: String| {
                read.report(level, &format!("trace.{key}"), message)
            };
            let mut trace = Reader::new(object, &mut report);
            for key in object.keys() {
                if !["enabled", "file", "maxBytes", "maxEvents"].contains(&key.as_str()) {
                    trace.report(Level::Warning, key, "unknown key; ignored".into());
                }
            }
            TraceSettings {
                enabled: trace.flag("enabled", false),
                file: trace.string("file").map(PathBuf::from),
                max_bytes: trace.count("maxBytes", default.max_bytes),
                max_events: trace.count("maxEvents", default.max_events),
            }
        }
        Some(other) => {
            let got = server::describe(other);
            let message = format!("must be true, false or {{ enabled, file, maxBytes, maxEvents }}, got {got}; nothing is traced");
            read.report(Level::Warning, "trace", message);
            default
        }
    }
}

/// `startupWaitMs`: milliseconds, `0` for no wait, at most [`STARTUP_WAIT`] (Pi's rule).
fn startup_wait(value: Option<&Value>, report: &mut impl FnMut(Level, &str, String)) -> Duration {
    let most = STARTUP_WAIT.as_millis();
    let ms = match value {
        None | Some(Value::Null) => return STARTUP_WAIT,
        Some(Value::Number(n)) => n.as_f64().filter(|ms| *ms >= 0.0),
        Some(_) => None,
    };
    match ms {
        Some(ms) if ms <= most as f64 => Duration::from_millis(ms as u64),
        Some(ms) => {
            report(
                Level::Warning,
                "startupWaitMs",
                format!(
                    "the first request waits at most {most} ms (Pi's rule), not {ms}; using {most}"
                ),
            );
            STARTUP_WAIT
        }
        None => {
            let got = value.map_or_else(String::new, server::describe);
            report(
                Level::Warning,
                "startupWaitMs",
                format!(
                    "must be a number of milliseconds from 0 to {most}, got {got}; using {most}"
                ),
            );
            STARTUP_WAIT
        }
    }
}
