//! Codex (`~/.codex/config.toml`, `[mcp_servers.<name>]`): our fields under Codex's names.
//! `bearer_token_env_var`, `http_headers` and `env_http_headers` map as pi-mcp-adapter maps
//! them, so both compute the same cache hash.

use super::{rename, Mapped};
use crate::config::diagnostic::Level;
use crate::config::server::describe;
use serde_json::{json, Map, Value};

/// Codex keys with nothing to map to: the environment is inherited anyway (`env_vars`), and
/// connecting has no timeout of its own here.
const IGNORED: [&str; 3] = ["env_vars", "startup_timeout_sec", "startup_timeout_ms"];
/// Keys mapped below.
const MAPPED: [&str; 8] = [
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "bearer_token",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "tool_timeout_sec",
];

pub fn map(
    server: &Map<String, Value>,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> Mapped {
    let mut entry: Map<String, Value> = server
        .iter()
        .filter(|(k, _)| !IGNORED.contains(&k.as_str()) && !MAPPED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut renamed = vec![];
    for (ours, theirs) in [
        ("includeTools", "enabled_tools"),
        ("excludeTools", "disabled_tools"),
        ("bearerToken", "bearer_token"),
        ("bearerTokenEnv", "bearer_token_env_var"),
    ] {
        if rename(server, theirs, &mut entry, ours) {
            renamed.push((ours, theirs));
        }
    }
    if entry.contains_key("bearerTokenEnv") && !entry.contains_key("auth") {
        entry.insert("auth".into(), json!("bearer"));
        renamed.push(("auth", "bearer_token_env_var"));
    }
    match server.get("enabled") {
        Some(Value::Bool(false)) => {
            entry.insert("disabled".into(), json!(true));
            renamed.push(("disabled", "enabled"));
        }
        Some(Value::Bool(true)) | None => {}
        Some(other) => {
            entry.insert("enabled".into(), other.clone()); // reported as an unknown value
        }
    }
    match server.get("tool_timeout_sec") {
        Some(Value::Number(secs)) => {
            let ms = (secs.as_f64().unwrap_or_default() * 1000.0).round();
            entry.insert("requestTimeoutMs".into(), json!(ms as u64));
            renamed.push(("requestTimeoutMs", "tool_timeout_sec"));
        }
        Some(other) => report(
            Level::Warning,
            Some("tool_timeout_sec"),
            format!(
                "must be a number of seconds, got {}; using the default",
                describe(other)
            ),
        ),
        None => {}
    }
    if let Some(headers) = headers(server, &entry) {
        entry.insert("headers".into(), headers);
        renamed.push(("headers", "http_headers"));
    }
    (entry, renamed)
}

/// `headers`, then `http_headers`, then `env_http_headers` (a header from a variable) for the
/// headers not set yet.
fn headers(server: &Map<String, Value>, entry: &Map<String, Value>) -> Option<Value> {
    let (literal, from_env) = (server.get("http_headers"), server.get("env_http_headers"));
    if literal.is_none() && from_env.is_none() {
        return None;
    }
    let mut headers = match entry.get("headers") {
        Some(Value::Object(h)) => h.clone(),
        _ => Map::new(),
    };
    match literal {
        Some(Value::Object(h)) => headers.extend(h.clone()),
        Some(other) => return Some(other.clone()), // not a table: reported by the field checks
        None => {}
    }
    if let Some(Value::Object(h)) = from_env {
        for (name, var) in h {
            if let (Some(var), false) = (var.as_str(), headers.contains_key(name)) {
                headers.insert(name.clone(), json!(format!("$env:{var}")));
            }
        }
    }
    Some(Value::Object(headers))
}
