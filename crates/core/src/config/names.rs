//! Pi's rules for server names, as warnings: Pi 1.5's built-in MCP (which reads the same
//! `mcp.json`) rejects a name with other characters than letters, digits, `_` and `-`, and counts
//! names that differ only in `-` and `_` as one server. Both work here; the warning tells the user
//! that Pi itself (or a switch back to it) would not accept the entry.

use super::merge::MergedServer;
use super::{Diagnostic, Level};

pub(super) fn pi_accepts(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Pi's namespace of a server: `-` and `_` are the same.
fn namespace(name: &str) -> String {
    name.replace('-', "_")
}

/// Warns about the servers of our own config files whose names Pi would reject.
pub fn check(servers: &[MergedServer], diagnostics: &mut Vec<Diagnostic>) {
    let native: Vec<&MergedServer> = servers.iter().filter(|s| s.imported.is_none()).collect();
    for (i, server) in native.iter().enumerate() {
        let message = if !pi_accepts(&server.name) {
            "has characters Pi's own MCP support rejects (it allows letters, digits, `_` and `-`); it works here, but Pi 1.5 without pi-mcp-native would skip this server".to_string()
        } else if let Some(other) = native[..i]
            .iter()
            .find(|o| namespace(&o.name) == namespace(&server.name))
        {
            format!(
                "differs from server \"{}\" only in `-` and `_`, which Pi counts as the same server; both work here, but Pi 1.5 without pi-mcp-native would skip this one",
                other.name
            )
        } else {
            continue;
        };
        diagnostics.push(Diagnostic {
            level: Level::Warning,
            file: Some(server.source().to_path_buf()),
            line: None,
            server: Some(server.name.clone()),
            field: None,
            message: format!("the name {message}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn pi_name_rules() {
        let servers: Vec<MergedServer> = ["git-hub", "ok_1", "my.server", "git_hub", "Ok-1"]
            .iter()
            .map(|n| MergedServer::new(n, json!({"command": "x"}), Path::new("/c/mcp.json")))
            .collect();
        let mut diagnostics = vec![];
        check(&servers, &mut diagnostics);
        let found: Vec<(&str, &str)> = diagnostics
            .iter()
            .map(|d| (d.server.as_deref().unwrap(), d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "my.server");
        assert!(found[0].1.contains("letters, digits, `_` and `-`"));
        assert_eq!(found[1].0, "git_hub");
        assert!(found[1]
            .1
            .contains("server \"git-hub\" only in `-` and `_`"));
    }
}
