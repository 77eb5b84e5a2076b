//! The merged `settings` object: known values checked, unknown ones reported; a bad value is a
//! warning and the default applies.

use super::fields::{self as key, Place};
use super::reader::{Reader, Report};
use super::{
    fields, server, ClientSettings, Diagnostic, Exposure, Level, Settings, TraceSettings,
    APPROVAL_TIMEOUT, STARTUP_WAIT, TRACE_DEFAULTS,
};
use crate::output_guard::{Limits, DEFAULT_LIMITS};
use pi_mcp_connection::value_kind::describe;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

pub fn parse(
    raw: &Map<String, Value>,
    files: &HashMap<String, PathBuf>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Settings {
    let report = |level: Level, key: &str, message: String| {
        diagnostics.push(Diagnostic {
            level,
            file: files.get(key).cloned(),
            line: None,
            server: None,
            field: Some(format!("settings.{key}")),
            message,
        });
    };
    let mut read = Reader::new(raw, report);
    read.check_keys(|k| fields::check(Place::Settings, k));
    Settings {
        tool_prefix: server::tool_prefix(&mut read).unwrap_or_default(),
        request_timeout_ms: read
            .millis(&key::REQUEST_TIMEOUT_MS)
            .flatten()
            .map(|d| d.as_millis() as u64),
        idle_timeout_min: read.minutes(&key::IDLE_TIMEOUT),
        direct_tools: direct_tools(&mut read),
        output_guard: output_guard(&mut read),
        startup_wait: startup_wait(&mut read),
        auto_auth: read.flag(&key::AUTO_AUTH),
        shared_servers: read.flag(&key::SHARED_SERVERS),
        share_with_subagents: read.flag(&key::SHARE_WITH_SUBAGENTS),
        approval_timeout: read
            .millis(&key::APPROVAL_TIMEOUT_MS)
            .flatten()
            .unwrap_or(APPROVAL_TIMEOUT),
        disable_proxy_tool: read.flag(&key::DISABLE_PROXY_TOOL),
        warn_on_large_direct_tools: read.flag(&key::WARN_ON_LARGE_DIRECT_TOOLS),
        trace: trace(&mut read),
        client: ClientSettings::parse(&mut read),
        exposure: exposure(&mut read),
        // Read from the user's files only (see `approval`).
        yes_inside_pi: false,
    }
}

/// `directTools`: here only `true` or `false` (a list names one server's tools).
fn direct_tools<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> bool {
    match read.get(&key::DIRECT_TOOLS) {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            let (got, using) = (describe(other), read.using(&key::DIRECT_TOOLS));
            let message = format!(
                "must be true or false here (lists belong in a server entry), got {got}; {using}"
            );
            read.report(Level::Warning, key::DIRECT_TOOLS.name, message);
            false
        }
    }
}

/// `outputGuard`: `true` (the default limits), `false`, or `{ maxBytes, maxLines }`.
fn output_guard<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<Limits> {
    let field = &key::OUTPUT_GUARD;
    match read.get(field) {
        None | Some(Value::Bool(true)) => Some(DEFAULT_LIMITS),
        Some(Value::Bool(false)) => None,
        Some(Value::Object(limits)) => {
            let mut guard = within(read, field.name, limits);
            if guard.get(&key::DETAILS_MAX_BYTES).is_some() {
                let message = "accepted, and not needed: pi-mcp-native keeps no raw result in a tool result's details, so there is nothing to bound".into();
                guard.report(Level::Note, key::DETAILS_MAX_BYTES.name, message);
            }
            Some(Limits {
                max_bytes: guard.count(&key::MAX_BYTES) as usize,
                max_lines: guard.count(&key::MAX_LINES) as usize,
            })
        }
        Some(other) => {
            read.wrong(field, &describe(other));
            Some(DEFAULT_LIMITS)
        }
    }
}

/// A reader of the object under `name`, reporting its keys as `name.key`.
fn within<'o, 'r, R: FnMut(Level, &str, String)>(
    read: &'r mut Reader<R>,
    name: &'r str,
    object: &'o Map<String, Value>,
) -> Reader<'o, Report<'r>> {
    let report =
        move |level, key: &str, message| read.report(level, &format!("{name}.{key}"), message);
    Reader::new(object, Box::new(report))
}

/// `trace`: `{ enabled, file, maxBytes, maxEvents }`, or `true`/`false` for `enabled` alone.
fn trace<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> TraceSettings {
    match read.get(&key::TRACE) {
        None => TRACE_DEFAULTS,
        Some(Value::Bool(enabled)) => TraceSettings {
            enabled: *enabled,
            ..TRACE_DEFAULTS
        },
        Some(Value::Object(object)) => {
            let mut trace = within(read, key::TRACE.name, object);
            trace.check_keys(|k| {
                let known = fields::at(Place::Trace).any(|f| f.name == k);
                (!known).then(|| (Level::Warning, "unknown key; ignored".into()))
            });
            TraceSettings {
                enabled: trace.flag(&key::TRACE_ENABLED),
                file: trace.string(&key::TRACE_FILE).map(PathBuf::from),
                max_bytes: trace.count(&key::TRACE_MAX_BYTES),
                max_events: trace.count(&key::TRACE_MAX_EVENTS),
            }
        }
        Some(other) => {
            let got = describe(other);
            let message = format!("must be true, false or {{ enabled, file, maxBytes, maxEvents }}, got {got}; nothing is traced");
            read.report(Level::Warning, key::TRACE.name, message);
            TRACE_DEFAULTS
        }
    }
}

/// `exposure`: the default of servers that say nothing.
fn exposure<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Option<Exposure> {
    let value = read.get(&key::EXPOSURE)?;
    Exposure::parse(value)
        .map_err(|why| {
            read.report(
                Level::Warning,
                key::EXPOSURE.name,
                format!("{why}; ignored"),
            )
        })
        .ok()
}

/// `startupWaitMs`: milliseconds, `0` for no wait, at most [`STARTUP_WAIT`] (Pi's rule).
fn startup_wait<R: FnMut(Level, &str, String)>(read: &mut Reader<R>) -> Duration {
    let (field, most) = (&key::STARTUP_WAIT_MS, STARTUP_WAIT.as_millis());
    let Some(value) = read.get(field) else {
        return STARTUP_WAIT;
    };
    let message = match value.as_f64().filter(|ms| value.is_number() && *ms >= 0.0) {
        Some(ms) if ms <= most as f64 => return Duration::from_millis(ms as u64),
        Some(ms) => {
            format!("the first request waits at most {most} ms (Pi's rule), not {ms}; using {most}")
        }
        None => format!(
            "must be a number of milliseconds from 0 to {most}, got {}; using {most}",
            describe(value)
        ),
    };
    read.report(Level::Warning, field.name, message);
    STARTUP_WAIT
}
