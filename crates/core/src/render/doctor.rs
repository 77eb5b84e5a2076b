//! The `doctor` report a person reads: sources, merged servers with provenance, connections,
//! problems, and a one-line summary.

use super::{clip, first_line, plural};
use crate::config::{
    Config, Level, Role, ServerConfig, Source, SourceState, Transport, Trust, TrustBasis,
};
use std::path::Path;

/// One server's fresh connection: how long it took and its tool count, or why it failed.
#[derive(Clone, Debug)]
pub struct ConnectCheck {
    pub server: String,
    pub ms: f64,
    pub result: Result<usize, String>,
    /// An OAuth server's sign-in (`signed in, expires in 58 min`), when there is one to show.
    pub sign_in: Option<String>,
    /// The server's last logged warnings and errors, one a line.
    pub log: Option<String>,
    /// Its tools by their hints and icons (`2 read-only, 1 with icons`).
    pub hints: Option<String>,
}

/// `warnings`: files of the session's that it cannot use (the cache, `mcp.log`); `home`
/// shortens paths to `~/…`; `builtin_mcp_on`: Pi's own MCP support is not turned off in its
/// settings (so Pi ≥ 0.99 warns at every start).
pub fn doctor(
    config: &Config,
    checks: &[ConnectCheck],
    warnings: &[&str],
    home: &str,
    builtin_mcp_on: bool,
) -> String {
    let show = |path: &Path| tilde(path, home);
    let mut out = String::from("Config sources (lowest precedence first):");
    for source in &config.sources {
        out.push_str("\n  ");
        out.push_str(&source_line(source, &show));
    }
    out.push_str(&format!(
        "\nProject configs: {}",
        trust_line(&config.trust, &show)
    ));

    out.push_str("\n\nServers:");
    if config.servers.is_empty() {
        out.push_str("\n  none configured; add them under \"mcpServers\" in ~/.pi/agent/mcp.json or .pi/mcp.json");
    }
    for server in &config.servers {
        out.push_str("\n  ");
        out.push_str(&server_line(server, &show));
    }

    if !checks.is_empty() {
        out.push_str("\n\nConnections:");
        for check in checks {
            out.push_str(&match &check.result {
                Ok(tools) => format!(
                    "\n  ✓ {}: {:.0} ms, {}{}",
                    check.server,
                    check.ms,
                    plural(*tools, "tool"),
                    check
                        .sign_in
                        .as_ref()
                        .map(|s| format!(" [{s}]"))
                        .unwrap_or_default()
                ),
                Err(why) => format!(
                    "\n  ✗ {}: failed after {:.0} ms: {}",
                    check.server,
                    check.ms,
                    first_line(why)
                ),
            });
            if let Some(hints) = &check.hints {
                out.push_str(&format!("\n      tools: {hints}"));
            }
            if let Some(log) = &check.log {
                out.push_str("\n      last logged warnings and errors:");
                for line in log.lines() {
                    out.push_str(&format!("\n        {line}"));
                }
            }
        }
    }

    let count = |level: Level| {
        config
            .diagnostics
            .iter()
            .filter(|d| d.level == level)
            .count()
    };
    if !config.diagnostics.is_empty() || !warnings.is_empty() {
        out.push_str("\n\nProblems:");
        for d in &config.diagnostics {
            out.push_str(&format!("\n  {}", tilde_text(&d.to_string(), home)));
        }
        for warning in warnings {
            out.push_str(&format!("\n  warning: {}", tilde_text(warning, home)));
        }
    }

    out.push_str(&pi_notes(config, builtin_mcp_on));

    let enabled = config.servers.iter().filter(|s| !s.disabled).count();
    let mut summary = vec![format!(
        "{} ({enabled} enabled)",
        plural(config.servers.len(), "server")
    )];
    if !checks.is_empty() {
        let failed = checks.iter().filter(|c| c.result.is_err()).count();
        summary.push(format!("{} connected", checks.len() - failed));
        summary.push(format!("{failed} failed"));
    }
    summary.push(plural(count(Level::Error), "error"));
    summary.push(plural(count(Level::Warning), "warning"));
    summary.push(plural(count(Level::Note), "note"));
    out.push_str(&format!("\n\nSummary: {}", summary.join(", ")));
    out
}

/// What a user of Pi ≥ 0.99 should know: where Pi's own rule reads the same two files
/// differently, and how to silence its warning about the replaced built-in.
fn pi_notes(config: &Config, builtin_mcp_on: bool) -> String {
    let mut out = String::new();
    if !config.merge_differences.is_empty() {
        out.push_str("\n\nPi's own MCP support (Pi ≥ 0.99, and its `pi mcp` commands) reads .pi/mcp.json differently:");
        for d in &config.merge_differences {
            let fields = d
                .fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str(&format!("\n  {}: ", d.server));
            out.push_str(&match d.rejected {
                true => format!("Pi rejects the project's entry: without `command`/`url` it may set only `enabled`, `exposure`, `toolExposure`, not {fields}"),
                false => format!("Pi uses the project's entry alone; here it is merged field by field with ~/.pi/agent/mcp.json's, which differs in {fields}"),
            });
        }
    }
    if builtin_mcp_on {
        out.push_str("\n\nPi ≥ 0.99 warns at every start that pi-mcp-native replaces its built-in MCP support. To silence it, add \"-builtin:mcp\" to \"extensions\" in ~/.pi/agent/settings.json: { \"extensions\": [\"-builtin:mcp\"] }");
    }
    out
}

fn source_line(source: &Source, show: &dyn Fn(&Path) -> String) -> String {
    let mut label = show(&source.path);
    let role = match &source.role {
        Role::Shared => "shared".to_string(),
        Role::PiGlobal => "Pi".to_string(),
        Role::Explicit => "--config".to_string(),
        Role::Project => "project".to_string(),
        Role::Import { kind, by, .. } => format!("import \"{}\" from {}", kind.name(), show(by)),
        Role::Package { name, settings, .. } => {
            format!("Pi package {name}, listed in {}", show(settings))
        }
    };
    label.push_str(&format!(" [{role}]"));
    let names = |servers: &[String]| {
        if servers.is_empty() {
            "no servers".to_string()
        } else {
            servers.join(", ")
        }
    };
    match &source.state {
        SourceState::Missing => format!("· {label}: not found"),
        SourceState::Blank => format!("· {label}: empty"),
        SourceState::Invalid => format!("✗ {label}: not used (see problems)"),
        SourceState::Loaded { servers, shadowed } => {
            let mut line = format!("✓ {label}: {}", names(servers));
            if !shadowed.is_empty() {
                line.push_str(&format!(
                    "; not imported, as defined with precedence elsewhere: {}",
                    shadowed.join(", ")
                ));
            }
            line
        }
        SourceState::Untrusted { servers } => format!(
            "⊘ {label}: not used, the project is not trusted ({})",
            names(servers)
        ),
    }
}

fn trust_line(trust: &Trust, show: &dyn Fn(&Path) -> String) -> String {
    let used = if trust.trusted {
        "used"
    } else {
        "not used (project not trusted)"
    };
    let why = match &trust.basis {
        TrustBasis::Given => "as told by the caller".to_string(),
        TrustBasis::Saved { file, folder } => {
            format!("decision saved for {} in {}", show(folder), show(file))
        }
        TrustBasis::Default => "no trust decision saved for this project".to_string(),
    };
    format!("{used}, {why}")
}

fn server_line(server: &ServerConfig, show: &dyn Fn(&Path) -> String) -> String {
    let what = match &server.transport {
        Transport::Stdio { command, args, .. } => {
            let mut line = command.clone();
            for arg in args {
                line.push(' ');
                line.push_str(arg);
            }
            format!("stdio `{}`", clip(&line, 80))
        }
        Transport::Http { url, .. } => format!(
            "http {}",
            pi_mcp_connection::pool::display_url(url.expose())
        ),
        Transport::Socket { path } => format!("socket {}", show(path)),
    };
    let mut line = format!("{}: {what}, {}", server.name, server.lifecycle.name());
    if server.disabled {
        line.push_str(", disabled");
    }
    let files: Vec<String> = server.files.iter().map(|f| show(f)).collect();
    if let Some(package) = &server.package {
        line.push_str(&format!(
            "\n      from the Pi package {} ({}), listed in `packages` of {}",
            package.name,
            show(&package.root),
            show(&package.settings)
        ));
        if files.len() > 1 {
            line.push_str(&format!(
                ", fields overridden by {}",
                files[1..].join(", then ")
            ));
        }
        return line;
    }
    match &server.imported {
        Some(imported) => line.push_str(&format!(
            "\n      imported from {} ({}), listed in `imports` of {}",
            files.join(", "),
            imported.kind.name(),
            show(&imported.by)
        )),
        None if files.len() > 1 => line.push_str(&format!(
            "\n      defined in {}, fields overridden by {}",
            files[0],
            files[1..].join(", then ")
        )),
        None => line.push_str(&format!("\n      from {}", files.join(", "))),
    }
    line
}

/// `text` with every path under `home` written `~/…`.
fn tilde_text(text: &str, home: &str) -> String {
    if home.is_empty() || home == "/" {
        return text.to_string();
    }
    text.replace(&format!("{home}/"), "~/")
}

/// `path` as `~/…` when it is under `home`.
pub fn tilde(path: &Path, home: &str) -> String {
    let text = path.display().to_string();
    match text.strip_prefix(home) {
        Some(rest) if !home.is_empty() && home != "/" && rest.starts_with('/') => {
            format!("~{rest}")
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_tree::Tree;
    use serde_json::json;

    #[test]
    fn sources_provenance_connections_problems_and_summary() {
        let tree = Tree::new();
        tree.pi_config(json!({
            "mcpServers": {
                "a": {"command": "node", "args": ["a.js"], "colour": "blue"},
                "b": {"url": "https://example.com/mcp", "disabled": true}
            }
        }));
        tree.write(
            "project/.mcp.json",
            r#"{"mcpServers": {"a": {"lifecycle": "eager"}}}"#,
        );
        let config = tree.load();
        let checks = [ConnectCheck {
            server: "a".into(),
            ms: 12.4,
            result: Err("exited with code 1\nmore".into()),
            sign_in: None,
            log: Some("error db: no connection\ncritical: giving up".into()),
            hints: None,
        }];
        let home = tree.home.display().to_string();
        let text = doctor(&config, &checks, &["cache unreadable"], &home, false);
        let expected = "\
Config sources (lowest precedence first):
  · ~/.config/mcp/mcp.json [shared]: not found
  · ~/.agents/mcp.json [shared]: not found
  · ~/.agents/mcp/mcp.json [shared]: not found
  ✓ ~/.pi/agent/mcp.json [Pi]: a, b
  ✓ ~/project/.mcp.json [project]: a
  · ~/project/.pi/mcp.json [project]: not found
Project configs: used, no trust decision saved for this project

Servers:
  a: stdio `node a.js`, eager
      defined in ~/.pi/agent/mcp.json, fields overridden by ~/project/.mcp.json
  b: http https://example.com/mcp, lazy, disabled
      from ~/.pi/agent/mcp.json

Connections:
  ✗ a: failed after 12 ms: exited with code 1
      last logged warnings and errors:
        error db: no connection
        critical: giving up

Problems:
  note: ~/.pi/agent/mcp.json:1: server \"a\", field `colour`: unknown key; ignored
  warning: cache unreadable

Summary: 2 servers (1 enabled), 0 connected, 1 failed, 0 errors, 0 warnings, 1 note";
        assert_eq!(text, expected);
    }

    #[test]
    fn untrusted_project_and_imports() {
        let tree = Tree::fixture("cursor");
        tree.pi_config(
            json!({"imports": ["cursor"], "mcpServers": {"github": {"command": "gh-mcp"}}}),
        );
        let config = crate::config::load(&crate::config::LoadOptions {
            project_trusted: Some(false),
            ..tree.opts()
        });
        let text = doctor(&config, &[], &[], &tree.home.display().to_string(), false);
        assert!(
            text.contains("Project configs: not used (project not trusted), as told by the caller"),
            "{text}"
        );
        assert!(
            text.contains("✓ ~/.cursor/mcp.json [import \"cursor\" from ~/.pi/agent/mcp.json]: github, linear, notes; not imported, as defined with precedence elsewhere: github"),
            "{text}"
        );
        assert!(
            text.contains("⊘ ~/project/.cursor/mcp.json [import \"cursor\" from ~/.pi/agent/mcp.json]: not used, the project is not trusted (github, project-db)"),
            "{text}"
        );
        assert!(
            text.contains("  linear: http https://mcp.linear.app/mcp, lazy\n      imported from ~/.cursor/mcp.json (cursor), listed in `imports` of ~/.pi/agent/mcp.json"),
            "{text}"
        );
        assert!(!text.contains("Connections:"), "{text}");
    }
}
