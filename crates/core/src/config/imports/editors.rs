//! Cursor, VS Code and Windsurf: our format, plus the editor variables they resolve
//! (`${workspaceFolder}`, `${userHome}`, …) and Windsurf's own names (`serverUrl`,
//! `disabledTools`).

use super::{Context, ImportKind, Mapped};
use crate::config::diagnostic::Level;
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

static VARIABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{(workspaceFolder|workspaceFolderBasename|userHome|pathSeparator|/|(?:input|command|config):[^}]*)\}")
        .expect("valid pattern")
});

pub fn map(
    kind: ImportKind,
    server: &Map<String, Value>,
    ctx: &Context,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> Mapped {
    let mut entry = Map::new();
    let mut renamed = vec![];
    for (key, value) in server {
        entry.insert(key.clone(), resolve(value, key, ctx, report));
    }
    if kind == ImportKind::Windsurf {
        for (ours, theirs) in [("url", "serverUrl"), ("excludeTools", "disabledTools")] {
            if entry.contains_key(ours) {
                continue;
            }
            if let Some(value) = entry.remove(theirs) {
                entry.insert(ours.to_string(), value);
                renamed.push((ours, theirs));
            }
        }
    }
    (entry, renamed)
}

/// `value` with the editor's variables replaced in every string; `field` names where it is.
fn resolve(
    value: &Value,
    field: &str,
    ctx: &Context,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, field, ctx, report)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| resolve(v, field, ctx, report))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), resolve(v, &format!("{field}.{k}"), ctx, report)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn substitute(
    text: &str,
    field: &str,
    ctx: &Context,
    report: &mut dyn FnMut(Level, Option<&str>, String),
) -> String {
    VARIABLE
        .replace_all(text, |caps: &regex::Captures| match &caps[1] {
            "workspaceFolder" => ctx.cwd.display().to_string(),
            "workspaceFolderBasename" => ctx
                .cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            "userHome" => ctx.home.display().to_string(),
            "pathSeparator" | "/" => "/".into(),
            prompt => {
                report(
                    Level::Error,
                    Some(field),
                    format!(
                        "`${{{prompt}}}` is resolved by the editor itself (it asks you, or runs a command); pi-mcp-native cannot, so the value is left empty. Use an environment variable instead, e.g. `${{env:NAME}}`"
                    ),
                );
                String::new()
            }
        })
        .into_owned()
}
