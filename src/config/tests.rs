use super::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A private directory tree: `home/` (with `.pi/agent`) and `home/project`.
struct Tree {
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "pi-mcp-config-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(root.join("home/.pi/agent")).unwrap();
        std::fs::create_dir_all(root.join("home/project/.pi")).unwrap();
        Tree { root }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn opts(&self) -> LoadOptions {
        let home = self.root.join("home");
        let env: Env = [
            ("HOME", home.display().to_string()),
            ("TOKEN", "t0k".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        LoadOptions {
            cwd: home.join("project"),
            agent_dir: agent_dir(&env),
            config_path: None,
            env,
            project_trusted: None,
        }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn names(config: &Config) -> Vec<&str> {
    config.servers.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn project_overrides_global_field_by_field() {
    let tree = Tree::new();
    tree.write(
        "home/.pi/agent/mcp.json",
        &json!({
            "mcpServers": {
                "a": {"command": "node", "args": ["a.js"], "env": {"K": "${TOKEN}"}},
                "b": {"command": "b-server"}
            },
            "settings": {"toolPrefix": "short", "requestTimeoutMs": 1000, "idleTimeout": 2}
        })
        .to_string(),
    );
    tree.write(
        "home/project/.pi/mcp.json",
        r#"{ // project file, JSONC
            "mcpServers": {
                "a": {"args": ["a2.js"],},
                "b": {"disabled": true},
            },
            "settings": {"requestTimeoutMs": 2000},
        }"#,
    );
    tree.write(
        "home/.config/mcp/mcp.json",
        &json!({"mcpServers": {"c": {"command": "c"}}}).to_string(),
    );
    let config = load(&tree.opts());
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    assert_eq!(names(&config), ["c", "a", "b"]);
    let a = &config.servers[1];
    assert_eq!(
        a.transport,
        Transport::Stdio {
            command: "node".into(),
            args: vec!["a2.js".into()],
            env: vec![("K".into(), "t0k".into())],
            cwd: None
        }
    );
    assert!(a.source.ends_with("project/.pi/mcp.json"));
    assert_eq!(
        a.entry["env"]["K"], "${TOKEN}",
        "the raw entry keeps references"
    );
    assert!(config.servers[2].disabled);
    assert_eq!(
        config.settings,
        Settings {
            tool_prefix: ToolPrefix::Short,
            request_timeout_ms: Some(2000),
            idle_timeout_min: Some(2.0),
            direct_tools: false,
            output_guard: Some(crate::output_guard::DEFAULT_LIMITS),
        }
    );
    assert_eq!(config.files().len(), 3);
}

#[test]
fn a_broken_file_is_reported_and_the_others_load() {
    let tree = Tree::new();
    tree.write(
        "home/.pi/agent/mcp.json",
        &json!({"mcpServers": {"good": {"command": "x"}, "bad": {"args": []}}}).to_string(),
    );
    let broken = tree.write(
        "home/project/.pi/mcp.json",
        "{\n  \"mcpServers\": {\n    \"p\": {\"command\": \"y\",, }\n  }\n}",
    );
    let config = load(&tree.opts());
    assert_eq!(names(&config), ["good"]);
    let messages: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with(&format!("error: {}:3: invalid JSON", broken.display())),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("server \"bad\", field `command`: is missing"),
        "{messages:?}"
    );
}

#[test]
fn switching_transport_drops_the_other_transports_fields() {
    let tree = Tree::new();
    tree.write(
        "home/.pi/agent/mcp.json",
        &json!({"mcpServers": {"s": {"url": "https://a/mcp", "headers": {"X": "1"}, "lifecycle": "eager"}}})
            .to_string(),
    );
    tree.write(
        "home/project/.mcp.json",
        &json!({"mcpServers": {"s": {"command": "local-s"}}}).to_string(),
    );
    let config = load(&tree.opts());
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    let s = &config.servers[0];
    assert!(matches!(&s.transport, Transport::Stdio { command, .. } if command == "local-s"));
    assert_eq!(s.lifecycle, Lifecycle::Eager);
    assert!(s.entry.get("headers").is_none() && s.entry.get("url").is_none());
}

#[test]
fn exclusive_mode_and_explicit_config_path() {
    let tree = Tree::new();
    tree.write(
        "home/.config/mcp/mcp.json",
        &json!({"mcpServers": {"shared": {"command": "x"}}}).to_string(),
    );
    tree.write(
        "home/.pi/agent/mcp.json",
        &json!({"mcpServers": {"pi": {"command": "x"}}}).to_string(),
    );
    let custom = tree.write(
        "custom.json",
        &json!({"mcpServers": {"custom": {"command": "x"}}}).to_string(),
    );
    let mut opts = tree.opts();
    opts.env
        .insert("PI_MCP_CONFIG_MODE".into(), "exclusive".into());
    assert_eq!(names(&load(&opts)), ["pi"]);
    opts.config_path = Some(custom);
    assert_eq!(names(&load(&opts)), ["custom"]);
    opts.config_path = Some(tree.root.join("missing.json"));
    let config = load(&opts);
    assert!(config.servers.is_empty());
    assert!(config.diagnostics[0]
        .to_string()
        .contains("cannot read the config file"));
}

#[test]
fn blank_and_wrongly_shaped_files() {
    let tree = Tree::new();
    tree.write("home/.pi/agent/mcp.json", "// nothing yet\n");
    tree.write(
        "home/project/.pi/mcp.json",
        &json!({"mcpServers": ["x"], "settings": {"toolPrefix": "weird"}}).to_string(),
    );
    let config = load(&tree.opts());
    let messages: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("`mcpServers`: must be an object of servers by name, got an array")
    );
    assert!(messages[1].starts_with("warning: `settings.toolPrefix`: unknown value \"weird\""));
    assert_eq!(config.settings.tool_prefix, ToolPrefix::Server);
}

#[test]
fn agent_dir_and_server_env() {
    let env: Env = [("HOME", "/h"), ("PATH", "/bin"), ("SECRET", "s")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(agent_dir(&env), PathBuf::from("/h/.pi/agent"));
    let mut custom = env.clone();
    custom.insert("PI_CODING_AGENT_DIR".into(), "~/agent".into());
    assert_eq!(agent_dir(&custom), PathBuf::from("/h/agent"));

    let overlay = vec![("PATH".to_string(), "/opt/bin".to_string())];
    let mut full = server_env(&env, true, &overlay);
    full.sort();
    assert_eq!(
        full,
        [("HOME", "/h"), ("PATH", "/opt/bin"), ("SECRET", "s")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    let mut minimal = server_env(&env, false, &[]);
    minimal.sort();
    assert_eq!(
        minimal,
        [("HOME", "/h"), ("PATH", "/bin")].map(|(k, v)| (k.to_string(), v.to_string()))
    );
}

#[test]
fn output_guard_and_direct_tools_settings() {
    let settings = |json: &str| {
        let tree = Tree::new();
        tree.write("home/.pi/agent/mcp.json", json);
        let config = load(&tree.opts());
        let lines: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
        (config.settings, lines)
    };
    let (s, lines) = settings(r#"{"settings": {"outputGuard": false, "directTools": true}}"#);
    assert_eq!(
        (s.output_guard, s.direct_tools, lines.len()),
        (None, true, 0)
    );
    let (s, _) = settings(r#"{"settings": {"outputGuard": {"maxLines": 10}}}"#);
    let limits = s.output_guard.unwrap();
    assert_eq!((limits.max_bytes, limits.max_lines), (51200, 10));
    let (s, lines) =
        settings(r#"{"settings": {"outputGuard": {"maxBytes": -1}, "directTools": "yes"}}"#);
    assert_eq!(s.output_guard.unwrap().max_bytes, 51200);
    assert!(
        lines[0].contains("`settings.directTools`: must be true or false"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains(
            "`settings.outputGuard.maxBytes`: must be a positive whole number, got -1; using 51200"
        ),
        "{lines:?}"
    );
}
