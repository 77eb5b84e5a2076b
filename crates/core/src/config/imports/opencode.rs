//! OpenCode (`opencode.json`, key `mcp`): `type: "local"` servers run a `command` array with an
//! `environment`; `type: "remote"` ones have a `url`, `headers` and `oauth`. The global file
//! and the project's nearest `opencode.json` (up to the git root) are merged, the project's
//! fields winning.

use super::{rename, Mapped, Renamed};
use crate::config::diagnostic::Level;
use crate::config::fields as key;
use crate::config::server::describe;
use pi_mcp_connection::value_kind::value_kind;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// Keys of a local server that a switch to remote (or another command) drops, and back.
const TRANSPORT: [&str; 6] = ["command", "environment", "cwd", "url", "headers", "oauth"];
/// OpenCode's `timeout` bounds listing tools at start-up; nothing maps to it here.
const IGNORED: [&str; 2] = ["type", "timeout"];

pub fn map(
    server: &Map<String, Value>,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> Option<Mapped> {
    let mut entry: Map<String, Value> = server
        .iter()
        .filter(|(k, _)| !IGNORED.contains(&k.as_str()) && !TRANSPORT.contains(&k.as_str()))
        .filter(|(k, _)| k.as_str() != "enabled")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut renamed = vec![];
    if server.get("enabled") == Some(&Value::Bool(false)) {
        entry.insert("disabled".into(), json!(true));
        renamed.push(("disabled", "enabled"));
    }
    let kind = match server.get("type") {
        Some(Value::String(t)) => t.as_str(),
        None if server.contains_key("url") => "remote",
        None => "local",
        Some(other) => {
            let got = describe(other);
            report(
                Level::Error,
                Some("type"),
                format!("must be \"local\" or \"remote\", got {got}"),
            );
            return None;
        }
    };
    match kind {
        "local" => local(server, &mut entry, &mut renamed, report)?,
        "remote" => remote(server, &mut entry, &mut renamed),
        other => {
            report(
                Level::Error,
                Some("type"),
                format!("unknown server type \"{other}\" (expected \"local\" or \"remote\")"),
            );
            return None;
        }
    }
    if server.values().any(mentions_file) {
        report(
            Level::Warning,
            None,
            "OpenCode's `{file:…}` substitution is not supported here; the text stays as written. Use `{env:NAME}` instead".into(),
        );
    }
    Some((entry, renamed))
}

/// A `type: "local"` server's `command` array, `environment` and `cwd`.
fn local(
    server: &Map<String, Value>,
    entry: &mut Map<String, Value>,
    renamed: &mut Renamed,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> Option<()> {
    let words = server.get("command").and_then(Value::as_array);
    let words: Option<Vec<&str>> = words.and_then(|w| w.iter().map(Value::as_str).collect());
    let Some((command, args)) = words.as_deref().and_then(<[&str]>::split_first) else {
        // The words may hold a token: say what it is, never what it says.
        let got = server.get("command").map_or("nothing", value_kind);
        report(
            Level::Error,
            Some("command"),
            format!("must be the program and its arguments as an array of strings, like [\"npx\", \"-y\", \"some-server\"], got {got}"),
        );
        return None;
    };
    entry.insert(key::COMMAND.name.into(), json!(command));
    entry.insert(key::ARGS.name.into(), json!(args));
    renamed.push((key::ARGS.name, "command"));
    if rename(server, "environment", entry, key::ENV.name) {
        renamed.push((key::ENV.name, "environment"));
    }
    rename(server, "cwd", entry, key::CWD.name);
    Some(())
}

/// A `type: "remote"` server's `url`, `headers` and `oauth`.
fn remote(server: &Map<String, Value>, entry: &mut Map<String, Value>, renamed: &mut Renamed) {
    rename(server, "url", entry, key::URL.name);
    rename(server, "headers", entry, key::HEADERS.name);
    match server.get("oauth") {
        Some(Value::Bool(false)) => {
            entry.insert(key::OAUTH.name.into(), json!(false));
        }
        Some(Value::Object(oauth)) => {
            entry.insert(key::AUTH.name.into(), json!("oauth"));
            entry.insert(key::OAUTH.name.into(), Value::Object(oauth_fields(oauth)));
            renamed.push((key::AUTH.name, "oauth"));
        }
        _ => {}
    }
}

fn oauth_fields(oauth: &Map<String, Value>) -> Map<String, Value> {
    oauth
        .iter()
        .map(|(k, v)| {
            let key = match k.as_str() {
                "client_id" => "clientId",
                "client_secret" => "clientSecret",
                "auth_server_metadata_url" => "authServerMetadataUrl",
                other => other,
            };
            (key.to_string(), v.clone())
        })
        .collect()
}

fn mentions_file(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("{file:"),
        Value::Array(items) => items.iter().any(mentions_file),
        Value::Object(map) => map.values().any(mentions_file),
        _ => false,
    }
}

/// `next` (the project's entry) over `base` (the global one), field by field; switching type or
/// command drops the other transport's fields.
pub fn merge(base: &mut Value, next: &Value) {
    let (Some(base_map), Some(next_map)) = (base.as_object_mut(), next.as_object()) else {
        *base = next.clone();
        return;
    };
    let switched = |key: &str| {
        next_map
            .get(key)
            .is_some_and(|v| base_map.get(key) != Some(v))
    };
    if switched("type") || switched("command") || switched("url") {
        for key in TRANSPORT {
            base_map.remove(key);
        }
    }
    base_map.extend(next_map.clone());
}

/// The project file candidates: `opencode.json(c)` in the cwd and each parent up to the git
/// root (the cwd only outside a git repository), nearest first.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    let git_root = cwd.ancestors().find(|dir| dir.join(".git").exists());
    let dirs: Vec<&Path> = match git_root {
        Some(root) => cwd
            .ancestors()
            .take_while(|dir| dir.starts_with(root))
            .collect(),
        None => vec![cwd],
    };
    dirs.into_iter()
        .flat_map(|dir| [dir.join("opencode.json"), dir.join("opencode.jsonc")])
        .collect()
}
