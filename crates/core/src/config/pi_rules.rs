//! Where Pi 1.5's own MCP support would read the same files differently, for `doctor`. Pi reads
//! `<agentDir>/mcp.json` and the project's `.pi/mcp.json`; a project entry replaces the user's
//! entry of the same name, and one without `command`, `url` or `type` overrides only `enabled`,
//! `exposure` and `toolExposure` (any other key makes Pi reject it). pi-mcp-native merges entries
//! field by field, as pi-mcp-adapter does (our drop-in contract): the two differ when the project
//! entry leaves out a field the user's sets, or sets one an override may not.
//! Also: whether Pi's built-in MCP support is still on, so that Pi warns at every start.

use super::fields as key;
use super::jsonc;
use pi_mcp_connection::bounded_read;
use serde_json::{Map, Value};
use std::path::Path;

/// The keys a Pi project override may set.
const OVERRIDE_KEYS: [&str; 3] = [
    key::ENABLED.name,
    key::EXPOSURE.name,
    key::TOOL_EXPOSURE.name,
];
/// The keys that make a Pi project entry a server of its own (Pi has no `socket`).
const PI_TRANSPORT_KEYS: [&str; 3] = [key::COMMAND.name, key::URL.name, key::TYPE.name];

/// A server the two rules read differently.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeDifference {
    pub server: String,
    /// The fields whose values differ, or the keys Pi rejects in an override.
    pub fields: Vec<String>,
    /// Pi rejects the project entry (an override with other keys).
    pub rejected: bool,
}

/// The servers both files define that the two rules read differently.
pub fn merge_differences(
    user: &Map<String, Value>,
    project: &Map<String, Value>,
) -> Vec<MergeDifference> {
    let servers = |root: &Map<String, Value>| {
        root.get("mcpServers")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (user, project) = (servers(user), servers(project));
    let mut out = vec![];
    for (name, theirs) in &project {
        let (Some(Value::Object(base)), Value::Object(over)) = (user.get(name), theirs) else {
            continue;
        };
        let mut ours = base.clone();
        ours.extend(over.clone());
        let is_override = !PI_TRANSPORT_KEYS.iter().any(|k| over.contains_key(*k));
        if is_override {
            let extra: Vec<String> = over
                .keys()
                .filter(|k| !OVERRIDE_KEYS.contains(&k.as_str()))
                .cloned()
                .collect();
            if !extra.is_empty() {
                out.push(MergeDifference {
                    server: name.clone(),
                    fields: extra,
                    rejected: true,
                });
            }
            continue; // otherwise both rules give the same entry
        }
        let mut fields: Vec<String> = ours
            .keys()
            .chain(over.keys())
            .filter(|k| ours.get(*k) != over.get(*k))
            .cloned()
            .collect();
        fields.dedup();
        if !fields.is_empty() {
            out.push(MergeDifference {
                server: name.clone(),
                fields,
                rejected: false,
            });
        }
    }
    out
}

/// Whether Pi's built-in MCP support is on for this project: not turned off with
/// `"-builtin:mcp"` in `extensions` of `<agentDir>/settings.json` (a project's
/// `.pi/settings.json` entry overrides it).
pub fn builtin_mcp_on(agent_dir: &Path, cwd: &Path, max_bytes: u64) -> bool {
    let setting = |file: &Path| -> Option<bool> {
        let bytes = bounded_read::found(file, max_bytes).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let value: Value = serde_json::from_str(&jsonc::strip(&text)).ok()?;
        value
            .get("extensions")?
            .as_array()?
            .iter()
            .rev()
            .find_map(|e| match e.as_str()? {
                "-builtin:mcp" | "!builtin:mcp" => Some(false),
                "+builtin:mcp" | "builtin:mcp" => Some(true),
                _ => None,
            })
    };
    setting(&cwd.join(".pi").join("settings.json"))
        .or_else(|| setting(&agent_dir.join("settings.json")))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(servers: Value) -> Map<String, Value> {
        json!({ "mcpServers": servers })
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn where_pi_replaces_and_we_merge() {
        let user = root(json!({
            "gh": {"url": "https://gh/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "fs": {"command": "npx", "args": ["fs"], "env": {"A": "1"}},
            "off": {"command": "x"},
            "same": {"command": "y"},
        }));
        let project = root(json!({
            "gh": {"url": "https://gh/mcp"},
            "fs": {"command": "npx", "args": ["fs", "."]},
            "off": {"enabled": false, "timeout": 5},
            "same": {"enabled": false},
            "new": {"command": "z"},
        }));
        let found = merge_differences(&user, &project);
        assert_eq!(
            found,
            [
                MergeDifference {
                    server: "gh".into(),
                    fields: vec!["headers".into()],
                    rejected: false
                },
                MergeDifference {
                    server: "fs".into(),
                    fields: vec!["env".into()],
                    rejected: false
                },
                MergeDifference {
                    server: "off".into(),
                    fields: vec!["timeout".into()],
                    rejected: true
                },
            ]
        );
    }

    #[test]
    fn the_builtin_is_on_unless_settings_turn_it_off() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-builtin-{}", std::process::id()));
        let (agent, project) = (dir.join("agent"), dir.join("project"));
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        assert!(builtin_mcp_on(&agent, &project, 1 << 20));
        std::fs::write(
            agent.join("settings.json"),
            r#"{"extensions": ["-builtin:mcp"]} // off"#,
        )
        .unwrap();
        assert!(!builtin_mcp_on(&agent, &project, 1 << 20));
        std::fs::write(
            project.join(".pi/settings.json"),
            r#"{"extensions": ["+builtin:mcp"]}"#,
        )
        .unwrap();
        assert!(builtin_mcp_on(&agent, &project, 1 << 20));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
