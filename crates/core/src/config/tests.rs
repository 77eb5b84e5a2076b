use super::test_tree::{messages, names, Tree};
use super::*;
use pi_mcp_connection::pool::ElicitationPolicy;
use pi_mcp_connection::secret::Secret;
use pi_mcp_connection::server_log::LogLevel;
use serde_json::json;
use std::time::Duration;

fn stdio(command: &str, args: &[&str]) -> Transport {
    Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: vec![],
        cwd: None,
    }
}

#[test]
fn every_file_in_precedence_order() {
    let tree = Tree::new();
    let files = [
        ".config/mcp/mcp.json",
        ".agents/mcp.json",
        ".agents/mcp/mcp.json",
        ".pi/agent/mcp.json",
        "project/.mcp.json",
        "project/.pi/mcp.json",
    ];
    for (i, file) in files.iter().enumerate() {
        let servers = json!({ "s": {"command": "x", "args": [i.to_string()]}, format!("only{i}"): {"command": "x"} });
        tree.write(file, &json!({ "mcpServers": servers }).to_string());
    }
    let config = tree.load();
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(
        names(&config),
        ["s", "only0", "only1", "only2", "only3", "only4", "only5"]
    );
    let s = &config.servers[0];
    assert_eq!(s.transport, stdio("x", &["5"]));
    let paths: Vec<PathBuf> = files.iter().map(|f| tree.home.join(f)).collect();
    assert_eq!(s.files, paths);
    assert_eq!(s.source, paths[5]);
    assert_eq!(
        config.files(),
        paths.iter().map(PathBuf::as_path).collect::<Vec<_>>()
    );
    let roles: Vec<&Role> = config.sources.iter().map(|s| &s.role).collect();
    assert_eq!(
        roles,
        [
            &Role::Shared,
            &Role::Shared,
            &Role::Shared,
            &Role::PiGlobal,
            &Role::Project,
            &Role::Project
        ]
    );
}

#[test]
fn project_overrides_global_field_by_field() {
    let tree = Tree::new();
    tree.pi_config(json!({
        "mcpServers": {
            "a": {"command": "node", "args": ["a.js"], "env": {"K": "${TOKEN}"}},
            "b": {"command": "b-server"}
        },
        "settings": {"toolPrefix": "short", "requestTimeoutMs": 1000, "idleTimeout": 2}
    }));
    tree.write(
        "project/.pi/mcp.json",
        r#"{ // project file, JSONC
            "mcpServers": {
                "a": {"args": ["a2.js"],},
                "b": {"disabled": true},
            },
            "settings": {"requestTimeoutMs": 2000},
        }"#,
    );
    tree.write(
        ".config/mcp/mcp.json",
        &json!({"mcpServers": {"c": {"command": "c"}}}).to_string(),
    );
    let config = tree.load();
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
            client: ClientSettings::default(),
            exposure: None,
            auto_auth: false,
            shared_servers: false,
            share_with_subagents: FAMILY_BY_DEFAULT,
            startup_wait: crate::config::STARTUP_WAIT,
            approval_timeout: crate::config::APPROVAL_TIMEOUT,
            yes_inside_pi: false,
            disable_proxy_tool: false,
            warn_on_large_direct_tools: true,
            trace: Default::default(),
        }
    );
}

#[test]
fn shared_has_three_states_and_the_settings_choose_the_unset_one() {
    let sharing_of = |settings: Value| {
        let tree = Tree::new();
        tree.pi_config(json!({
            "mcpServers": {
                "unset": {"command": "a"},
                "own": {"command": "b", "shared": false},
                "user": {"command": "c", "shared": true},
                "remote": {"url": "https://h/mcp"}
            },
            "settings": settings
        }));
        let config = tree.load();
        assert_eq!(messages(&config, &tree), Vec::<String>::new());
        let user = Sharing::User { env: vec![] };
        let sharing: Vec<Sharing> = config.servers.iter().map(|s| s.sharing.clone()).collect();
        assert_eq!(sharing[1..], [Sharing::Own, user, Sharing::Own]);
        sharing[0].clone()
    };
    assert_eq!(
        sharing_of(json!({"shareWithSubagents": true})),
        Sharing::Family
    );
    assert_eq!(
        sharing_of(json!({"shareWithSubagents": false})),
        Sharing::Own
    );
    assert_eq!(sharing_of(json!({})), Sharing::Family, "the default");
    assert_eq!(
        sharing_of(json!({"sharedServers": true, "shareWithSubagents": true})),
        Sharing::User { env: vec![] },
        "user-wide sharing wins"
    );
    let tree = Tree::new();
    tree.pi_config(json!({
        "mcpServers": { "a": {"command": "a", "sharedEnv": ["DISPLAY"]} },
        "settings": { "shareWithSubagents": true }
    }));
    let config = tree.load();
    assert_eq!(config.servers[0].sharing, Sharing::Family);
    let notes: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        notes[0].contains("every variable counts already"),
        "{notes:?}"
    );
}

#[test]
fn client_settings_are_global_with_per_server_overrides() {
    let tree = Tree::new();
    tree.write(
        ".pi/agent/mcp.json",
        r#"{
          "settings": { "elicitation": "defaults", "sampling": false, "logLevel": "warning", "callTimeoutMs": 0 },
          "mcpServers": {
            "a": { "command": "a", "elicitation": false, "roots": false, "tasks": false },
            "b": { "command": "b", "elicitation": true, "sampling": true, "samplingAutoApprove": true, "callTimeoutMs": 5000 },
            "c": { "command": "c", "elicitation": "maybe", "logLevel": "loud" }
          }
        }"#,
    );
    let config = tree.load();
    let resolved = |name: &str| {
        let server = config.servers.iter().find(|s| s.name == name).unwrap();
        server.client.over(&config.settings.client)
    };
    let a = resolved("a");
    assert_eq!(a.features().elicitation, ElicitationPolicy::Off);
    assert!(!a.features().sampling && !a.features().roots && !a.tasks());
    assert_eq!(a.features().log_level, LogLevel::Warning);
    assert_eq!(a.call_timeout(), None);
    let b = resolved("b");
    assert_eq!(b.features().elicitation, ElicitationPolicy::Ask);
    assert!(b.features().sampling && b.sampling_auto_approve() && b.features().roots);
    assert_eq!(b.call_timeout(), Some(Duration::from_millis(5000)));
    let c = resolved("c");
    assert_eq!(c.features().elicitation, ElicitationPolicy::Defaults);
    let messages: Vec<_> = config
        .diagnostics
        .iter()
        .filter(|d| d.server.as_deref() == Some("c"))
        .map(|d| format!("{}: {}", d.field.as_deref().unwrap_or(""), d.message))
        .collect();
    assert_eq!(
        messages,
        [
            r#"elicitation: must be "ask", "defaults", "decline", true or false, got string "maybe"; using "ask""#,
            r#"logLevel: must be one of debug, info, notice, warning, error, critical, alert, emergency, got string "loud"; using "info""#,
        ]
    );
    // The defaults, where nothing is set.
    let none = ClientSettings::default();
    assert_eq!(none.features().elicitation, ElicitationPolicy::Ask);
    assert_eq!(none.call_timeout(), Some(DEFAULT_CALL_TIMEOUT));
}

#[test]
fn a_problem_names_the_file_and_line_that_set_the_field() {
    let tree = Tree::new();
    tree.write(
        ".pi/agent/mcp.json",
        "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"node\",\n      \"env\": {\"K\": [1]}\n    }\n  }\n}",
    );
    tree.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\n\"a\": {\"args\": \"a.js\"}}}",
    );
    let config = tree.load();
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/project/.mcp.json:2: server \"a\", field `args`: must be an array of strings, got a string",
            "error: ~/.pi/agent/mcp.json:5: server \"a\", field `env.K`: must be a string, got an array; the variable is not set",
        ]
    );
}

#[test]
fn a_broken_file_is_reported_and_the_others_load() {
    let tree = Tree::new();
    tree.pi_config(json!({"mcpServers": {"good": {"command": "x"}, "bad": {"args": []}}}));
    tree.write(
        "project/.pi/mcp.json",
        "{\n  \"mcpServers\": {\n    \"p\": {\"command\": \"y\",, }\n  }\n}",
    );
    let config = tree.load();
    assert_eq!(names(&config), ["good"]);
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/project/.pi/mcp.json:3: invalid JSON at column 28: trailing comma; its servers are not loaded until it is fixed",
            "error: ~/.pi/agent/mcp.json:1: server \"bad\", field `command`: is missing: set `command` (and `args`) for a local server, or `url` for a remote one",
        ]
    );
    let states: Vec<&SourceState> = config.sources.iter().map(|s| &s.state).collect();
    assert_eq!(
        states[3],
        &SourceState::Loaded {
            servers: vec!["good".into(), "bad".into()],
            shadowed: vec![]
        }
    );
    assert_eq!(states[5], &SourceState::Invalid);
}

#[test]
fn switching_transport_drops_the_other_transports_fields() {
    let tree = Tree::new();
    tree.pi_config(json!({"mcpServers": {
        "s": {"url": "https://a/mcp", "headers": {"X": "1"}, "lifecycle": "eager"},
        "h": {"url": "https://a/mcp", "headers": {"Authorization": "Bearer secret"}, "bearerTokenEnv": "T"}
    }}));
    tree.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"s": {"command": "local-s"}, "h": {"url": "https://elsewhere/mcp"}}}).to_string(),
    );
    let config = tree.load();
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    let s = &config.servers[0];
    assert_eq!(s.transport, stdio("local-s", &[]));
    assert_eq!(s.lifecycle, Lifecycle::Eager);
    assert!(s.entry.get("headers").is_none() && s.entry.get("url").is_none());
    // A new URL never receives the credentials written for the old one.
    assert_eq!(
        config.servers[1].entry,
        json!({"url": "https://elsewhere/mcp"})
    );
}

#[test]
fn exclusive_mode_and_explicit_config_path() {
    let tree = Tree::new();
    tree.write(
        ".config/mcp/mcp.json",
        &json!({"mcpServers": {"shared": {"command": "x"}}}).to_string(),
    );
    tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cursor": {"command": "x"}}}).to_string(),
    );
    tree.pi_config(json!({"mcpServers": {"pi": {"command": "x"}}, "imports": ["cursor"]}));
    let custom = tree.write(
        "custom.json",
        &json!({"mcpServers": {"custom": {"command": "x"}}}).to_string(),
    );
    let mut opts = tree.opts();
    assert_eq!(names(&load(&opts)), ["shared", "pi", "cursor"]);
    opts.env
        .insert("PI_MCP_CONFIG_MODE".into(), "exclusive".into());
    assert_eq!(
        names(&load(&opts)),
        ["pi", "cursor"],
        "imports of the one file still apply"
    );
    opts.config_path = Some(custom.clone());
    assert_eq!(names(&load(&opts)), ["custom"]);
    assert_eq!(load(&opts).sources[0].role, Role::Explicit);
    opts.env.remove("PI_MCP_CONFIG_MODE");
    opts.config_path = Some(PathBuf::from("../custom.json")); // relative to the cwd
    assert_eq!(names(&load(&opts)), ["shared", "custom"]);
    opts.config_path = Some(tree.root.join("missing.json"));
    let config = load(&opts);
    assert_eq!(names(&config), ["shared"]);
    assert!(config.diagnostics[0]
        .to_string()
        .contains("missing.json: the config file does not exist; its servers are not loaded"));
}

#[test]
fn blank_and_wrongly_shaped_files() {
    let tree = Tree::new();
    tree.write(".pi/agent/mcp.json", "// nothing yet\n");
    tree.write(
        "project/.pi/mcp.json",
        &json!({"mcpServers": ["x"], "settings": {"toolPrefix": "weird"}}).to_string(),
    );
    tree.write("project/.mcp.json", "[\"not\", \"an object\"]");
    let config = tree.load();
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/project/.mcp.json: must hold a JSON object like {\"mcpServers\": {...}}, got an array; its servers are not loaded",
            "error: ~/project/.pi/mcp.json:1: `mcpServers`: must be an object of servers by name, like {\"github\": {\"command\": \"npx\", ...}}, got an array",
            "warning: ~/project/.pi/mcp.json:1: `settings.toolPrefix`: unknown value \"weird\" (expected \"server\", \"short\", \"none\", \"mcp\" or \"pi\"); using \"server\"",
        ]
    );
    assert_eq!(config.settings.tool_prefix, ToolPrefix::Server);
    assert_eq!(config.sources[3].state, SourceState::Blank);
}

#[test]
fn root_keys_and_settings_are_checked() {
    let tree = Tree::new();
    tree.write(
        ".pi/agent/mcp.json",
        r#"{
  "$schema": "https://example.com/mcp.schema.json",
  "mcpServer": {"x": {"command": "x"}},
  "claudePlugins": [],
  "settings": {
    "toolPrefix": 3,
    "requestTimeoutMs": "long",
    "jev": false,
    "toolPrefx": "short",
    "colour": "blue"
  }
}"#,
    );
    tree.write("project/.mcp.json", r#"{"settings": "none"}"#);
    let config = tree.load();
    assert_eq!(
        messages(&config, &tree),
        [
            "warning: ~/.pi/agent/mcp.json:3: `mcpServer`: unknown key; did you mean `mcpServers`? It is ignored as written",
            "note: ~/.pi/agent/mcp.json:4: `claudePlugins`: a pi-mcp-adapter option that pi-mcp-native does not use: Claude plugin bundles are not loaded here; copy the servers of the plugin's `.mcp.json` into `mcpServers` (its skills are not loaded)",
            "error: ~/project/.mcp.json:1: `settings`: must be an object, got string \"none\"; its settings are not used",
            "note: ~/.pi/agent/mcp.json:8: `settings.jev`: a pi-mcp-adapter option that pi-mcp-native does not use: semantic search (Jev) is not offered; the search finds related words offline",
            "warning: ~/.pi/agent/mcp.json:9: `settings.toolPrefx`: unknown key; did you mean `toolPrefix`? It is ignored as written",
            "note: ~/.pi/agent/mcp.json:10: `settings.colour`: unknown key; ignored",
            "warning: ~/.pi/agent/mcp.json:6: `settings.toolPrefix`: must be a string, got number 3; using \"server\"",
            "warning: ~/.pi/agent/mcp.json:7: `settings.requestTimeoutMs`: must be a number of milliseconds, got string \"long\"; using 60000",
        ]
    );
    assert!(config.servers.is_empty());
}

/// Every problem a server entry can have, with its exact message.
#[test]
fn server_error_messages() {
    let tree = Tree::new();
    let env_file = tree.write(".pi/agent/vars.env", "GOOD=1\nnot a line\n");
    let cases = [
        (json!(["npx"]), "server \"s\": must be an object like {\"command\": \"npx\", \"args\": [...]}, got an array"),
        (json!({"command": 5}), "server \"s\", field `command`: must be a string, got number 5"),
        (json!({"command": "  "}), "server \"s\", field `command`: is empty; set the program to run, e.g. \"npx\""),
        (json!({"args": ["x"]}), "server \"s\", field `command`: is missing: set `command` (and `args`) for a local server, or `url` for a remote one"),
        (json!({"command": "x", "url": "https://x"}), "server \"s\", field `command`: has both `command` and `url`; keep `command` for a local (stdio) server or `url` for a remote one"),
        (json!({"socket": "/tmp/mux.sock", "command": "x"}), "server \"s\", field `socket`: is set beside `command` or `url`; keep exactly one of `command`, `url` and `socket`"),
        (json!({"url": "https://x/${NOPE}/${NADA:-ok}"}), "server \"s\", field `url`: uses unset environment variable(s) NOPE; set them, or give a default as in ${NAME:-value}"),
        (json!({"command": "x", "args": "-y"}), "server \"s\", field `args`: must be an array of strings, got a string"),
        (json!({"command": "x", "env": ["A=1"]}), "server \"s\", field `env`: must be an object of strings, got an array"),
        (json!({"command": "x", "env": {"A": {"v": 1}}}), "server \"s\", field `env.A`: must be a string, got an object; the variable is not set"),
        (json!({"url": "https://x", "headers": {"H": null}}), "server \"s\", field `headers.H`: must be a string, got null; the variable is not set"),
        (json!({"command": "x", "lifecycle": "sometimes"}), "server \"s\", field `lifecycle`: unknown value \"sometimes\" (expected \"lazy\", \"eager\", \"keep-alive\" or \"lazy-keep-alive\"); using \"lazy\""),
        (json!({"command": "x", "toolPrefix": "tool"}), "server \"s\", field `toolPrefix`: unknown value \"tool\" (expected \"server\", \"short\", \"none\", \"mcp\" or \"pi\"); using the default"),
        (json!({"command": "x", "requestTimeoutMs": "60s"}), "server \"s\", field `requestTimeoutMs`: must be a number of milliseconds, got string \"60s\"; using the default"),
        (json!({"command": "x", "debug": "yes"}), "server \"s\", field `debug`: must be true or false, got string \"yes\"; using false"),
        (json!({"command": "x", "includeTools": "get_*"}), "server \"s\", field `includeTools`: must be an array of strings, got a string"),
        (json!({"command": "x", "comand": "y"}), "server \"s\", field `comand`: unknown key; did you mean `command`? It is ignored as written"),
        (json!({"command": "x", "x-note": "mine"}), "server \"s\", field `x-note`: unknown key; ignored"),
        (json!({"command": "x", "approveTools": 3}), "server \"s\", field `approveTools`: must be true, false, \"destructive\" or a list of tool names (`*` matches any characters, `?` one), got number 3; every tool of the server asks until it is fixed"),
        (json!({"command": "x", "type": "websocket"}), "server \"s\", field `type`: unknown transport \"websocket\" (expected \"stdio\", \"http\" or \"sse\"); the server's `command` or `url` decides"),
        (json!({"command": "x", "type": "http"}), "server \"s\", field `type`: says the server is remote but it has a `command` and no `url`; it is started as a local program"),
        (json!({"url": "https://x", "type": "stdio"}), "server \"s\", field `type`: says \"stdio\" but the server has a `url` and no `command`; it is used as a remote server"),
        (json!({"command": "x", "envFile": "vars.env"}), &*format!("server \"s\", field `envFile`: cannot use {}: line 2: expected KEY=value; its variables are not set", env_file.display())),
        (json!({"command": "x", "envFile": "/nonexistent/.env"}), "server \"s\", field `envFile`: /nonexistent/.env does not exist; its variables are not set"),
    ];
    for (entry, expected) in cases {
        let path = tree.pi_config(json!({"mcpServers": {"s": entry}}));
        let config = tree.load();
        let got: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
        let level = if got.first().is_some_and(|m| m.starts_with("error")) {
            "error"
        } else if got.first().is_some_and(|m| m.starts_with("warning")) {
            "warning"
        } else {
            "note"
        };
        assert_eq!(
            got,
            [format!("{level}: {}:1: {expected}", path.display())],
            "{entry}"
        );
    }
}

#[test]
fn interpolation_in_every_field() {
    let mut tree = Tree::new();
    tree.env.insert("PORT".into(), "8080".into());
    tree.pi_config(json!({"mcpServers": {
        "local": {
            "command": "${HOME}/bin/srv",
            "args": ["--token=$env:TOKEN", "{env:TOKEN}", "${env:TOKEN}", "${MISSING:-fallback}", "${MISSING}"],
            "env": {"A": "${TOKEN}", "B": "x${NOPE}y"},
            "cwd": "~/work/${TOKEN}"
        },
        "remote": {
            "url": "http://localhost:${PORT}/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"}
        }
    }}));
    let config = tree.load();
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    let home = tree.home.display().to_string();
    assert_eq!(
        config.servers[0].transport,
        Transport::Stdio {
            command: format!("{home}/bin/srv"),
            args: ["--token=t0k", "t0k", "t0k", "fallback", ""]
                .map(String::from)
                .to_vec(),
            env: vec![("A".into(), "t0k".into()), ("B".into(), "xy".into())],
            cwd: Some(tree.home.join("work/t0k")),
        }
    );
    assert_eq!(
        config.servers[1].transport,
        Transport::Http {
            url: Secret::new("http://localhost:8080/mcp"),
            headers: vec![("Authorization".into(), "Bearer t0k".into())],
            auth: HttpAuth::None,
            ca_file: None,
            request_headers: None,
        }
    );
}

#[test]
fn env_file_variables_under_env() {
    let tree = Tree::new();
    tree.write(".pi/agent/secrets.env", "A=from-file\nB=from-file\n");
    tree.pi_config(json!({"mcpServers": {"s": {"command": "x", "envFile": "secrets.env", "env": {"B": "from-env"}}}}));
    let config = tree.load();
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    let Transport::Stdio { env, .. } = &config.servers[0].transport else {
        panic!("stdio expected");
    };
    assert_eq!(
        env,
        &[
            ("A".to_string(), "from-file".into()),
            ("B".to_string(), "from-env".into())
        ]
    );
}

#[test]
fn untrusted_projects_keep_their_configs_out() {
    let tree = Tree::new();
    tree.pi_config(
        json!({"mcpServers": {"global": {"command": "g"}}, "imports": ["vscode", "cursor"]}),
    );
    tree.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"evil": {"command": "rm"}}}).to_string(),
    );
    tree.write(
        "project/.pi/mcp.json",
        &json!({"mcpServers": {"global": {"command": "evil-too"}}}).to_string(),
    );
    tree.write(
        "project/.vscode/mcp.json",
        &json!({"servers": {"vs": {"command": "x"}}}).to_string(),
    );
    tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"user-cursor": {"command": "x"}}}).to_string(),
    );
    tree.write(
        "project/.cursor/mcp.json",
        &json!({"mcpServers": {"project-cursor": {"command": "x"}}}).to_string(),
    );

    let trusted = tree.load();
    assert_eq!(
        names(&trusted),
        ["global", "evil", "vs", "user-cursor", "project-cursor"]
    );
    assert_eq!(
        trusted.trust,
        Trust {
            trusted: true,
            basis: TrustBasis::Default
        }
    );

    let mut opts = tree.opts();
    opts.project_trusted = Some(false);
    let config = load(&opts);
    assert_eq!(names(&config), ["global", "user-cursor"]);
    assert_eq!(config.servers[0].transport, stdio("g", &[]));
    let why = "not used, because Pi does not trust this project and project configs start programs";
    let fix = "Trust the project to use them: /trust in Pi, `pi --approve`, or `pi-mcp --approve`";
    assert_eq!(
        messages(&config, &tree),
        [
            format!("warning: ~/project/.mcp.json: {why} (servers \"evil\"). {fix}"),
            format!("warning: ~/project/.pi/mcp.json: {why} (servers \"global\"). {fix}"),
            format!("warning: ~/project/.vscode/mcp.json: {why} (servers \"vs\"). {fix}"),
            format!(
                "warning: ~/project/.cursor/mcp.json: {why} (servers \"project-cursor\"). {fix}"
            ),
        ]
    );
    let untrusted: Vec<&Path> = config
        .sources
        .iter()
        .filter(|s| matches!(s.state, SourceState::Untrusted { .. }))
        .map(|s| s.path.as_path())
        .collect();
    assert_eq!(untrusted.len(), 4);
}

#[test]
fn pi_saved_trust_decision_applies_unless_told_otherwise() {
    let tree = Tree::new();
    tree.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"p": {"command": "x"}}}).to_string(),
    );
    let canonical = std::fs::canonicalize(&tree.project).unwrap();
    tree.write(
        ".pi/agent/trust.json",
        &json!({ canonical.to_str().unwrap(): false }).to_string(),
    );
    let config = tree.load();
    assert!(names(&config).is_empty());
    assert!(!config.trust.trusted);
    assert!(matches!(config.trust.basis, TrustBasis::Saved { .. }));
    let mut opts = tree.opts();
    opts.project_trusted = Some(true);
    assert_eq!(names(&load(&opts)), ["p"]);
}

#[test]
fn agent_dir_and_server_env() {
    let env: Env = [
        ("HOME", "/h"),
        ("PATH", "/bin"),
        ("SECRET", "s"),
        (FAMILY_VAR, "v1.token"),
    ]
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
            .map(|(k, v)| (k.to_string(), v.to_string())),
        "the family's token is not given to servers"
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
        tree.write(".pi/agent/mcp.json", json);
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
            "`settings.outputGuard.maxBytes`: must be a positive whole number, got number -1; using 51200"
        ),
        "{lines:?}"
    );
}

#[test]
fn the_startup_wait_is_at_most_pis_ten_seconds() {
    let wait = |value: &str| {
        let tree = Tree::new();
        let json = format!(r#"{{"settings": {{"startupWaitMs": {value}}}}}"#);
        tree.write(".pi/agent/mcp.json", &json);
        let config = load(&tree.opts());
        let lines: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
        (config.settings.startup_wait.as_millis(), lines)
    };
    assert_eq!(wait("null"), (10_000, vec![]));
    assert_eq!(wait("0"), (0, vec![]));
    assert_eq!(wait("2500"), (2500, vec![]));
    let (ms, lines) = wait("60000");
    assert_eq!(ms, 10_000);
    assert!(
        lines[0].contains("`settings.startupWaitMs`: the first request waits at most 10000 ms (Pi's rule), not 60000; using 10000"),
        "{lines:?}"
    );
    let (ms, lines) = wait(r#""10s""#);
    assert_eq!(ms, 10_000);
    assert!(
        lines[0].contains("must be a number of milliseconds from 0 to 10000, got string \"10s\""),
        "{lines:?}"
    );
}

#[cfg(unix)]
fn fifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Found files that are not regular files, or too large, are reported and skipped at once; the
/// rest loads. (A FIFO blocked `load` forever; /dev/zero grew it without bound.)
#[cfg(unix)]
#[test]
fn files_that_are_not_regular_or_too_large_are_skipped() {
    let tree = Tree::new();
    std::os::unix::fs::symlink("/dev/zero", tree.project.join(".mcp.json")).unwrap();
    fifo(&tree.home.join(".pi/agent/mcp.json"));
    std::fs::create_dir_all(tree.project.join(".pi/mcp.json")).unwrap();
    tree.write(".agents/mcp.json", &" ".repeat(2000));
    fifo(&tree.home.join("fifo.env"));
    tree.write(
        ".config/mcp/mcp.json",
        &json!({"mcpServers": {"shared": {"command": "x", "envFile": "../../fifo.env"}}})
            .to_string(),
    );
    let opts = LoadOptions {
        limits: FileLimits {
            config_bytes: 1000,
            ..FileLimits::default()
        },
        ..tree.opts()
    };
    let started = std::time::Instant::now();
    let config = load(&opts);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(names(&config), ["shared"]);
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/.agents/mcp.json: the config file is 2000 bytes, over the 1000 bytes limit; its servers are not loaded",
            "error: ~/.pi/agent/mcp.json: the config file is a FIFO (named pipe), not a regular file; its servers are not loaded",
            "error: ~/project/.mcp.json: the config file is a character device, not a regular file; its servers are not loaded",
            "error: ~/project/.pi/mcp.json: the config file is a directory, not a regular file; its servers are not loaded",
            "error: ~/.config/mcp/mcp.json:1: server \"shared\", field `envFile`: ~/.config/mcp/../../fifo.env is a FIFO (named pipe), not a regular file; its variables are not set",
        ]
    );
}

/// `--config <(…)`: a pipe the user names is read to its end.
#[cfg(unix)]
#[test]
fn a_config_given_as_a_pipe_is_read() {
    use std::io::Write;
    let tree = Tree::new();
    let pipe = tree.root.join("given.json");
    fifo(&pipe);
    let writer = {
        let pipe = pipe.clone();
        std::thread::spawn(move || {
            let mut out = std::fs::OpenOptions::new().write(true).open(pipe).unwrap();
            out.write_all(br#"{"mcpServers": {"piped": {"command": "x"}}}"#)
                .unwrap();
        })
    };
    let config = load(&LoadOptions {
        config_path: Some(pipe.clone()),
        ..tree.opts()
    });
    writer.join().unwrap();
    assert_eq!(names(&config), ["piped"]);
    // Nobody writes: the time limit ends the wait.
    let config = load(&LoadOptions {
        config_path: Some(pipe),
        limits: FileLimits {
            pipe_timeout: std::time::Duration::from_millis(100),
            ..FileLimits::default()
        },
        ..tree.opts()
    });
    assert_eq!(names(&config), Vec::<&str>::new());
    assert!(messages(&config, &tree)[0].ends_with(
        "given.json: the config file did not reach its end within 0.1 s (a pipe nobody finishes writing?); its servers are not loaded"
    ));
}

/// The value `env` or `headers` field `key` of server `name` resolves to (commands run).
async fn resolved(config: &Config, name: &str, key: &str) -> Result<String, String> {
    let server = config.servers.iter().find(|s| s.name == name).unwrap();
    let values = match &server.transport {
        Transport::Stdio { env, .. } => env,
        Transport::Http { headers, .. } => headers,
        Transport::Socket { .. } => unreachable!(),
    };
    let (_, value) = values.iter().find(|(k, _)| k == key).unwrap();
    let env: Env = std::env::vars().collect();
    let ctx = RunContext {
        env: &env,
        cwd: &std::env::temp_dir(),
    };
    value
        .resolve(key, &ctx)
        .await
        .map(|s| s.expose().to_string())
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn commands_run_from_user_files_and_explicitly_trusted_projects_only() {
    let tree = Tree::new();
    tree.pi_config(json!({
        "mcpServers": {"user": {"url": "http://h", "headers": {"A": "!echo from-user"}}},
        "imports": ["cursor"]
    }));
    let project = tree.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"proj": {"command": "x", "env": {"T": "!echo from-project"}}}})
            .to_string(),
    );
    tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur": {"command": "x", "env": {"T": "!not a command in Cursor"}}}})
            .to_string(),
    );
    // No decision saved: the project's servers load, its commands do not run.
    let config = tree.load();
    assert_eq!(resolved(&config, "user", "A").await.unwrap(), "from-user");
    assert_eq!(
        resolved(&config, "cur", "T").await.unwrap(),
        "!not a command in Cursor"
    );
    let refused = resolved(&config, "proj", "T").await.unwrap_err();
    assert!(
        refused.contains(&project.display().to_string()),
        "{refused}"
    );
    assert!(refused.contains("--approve"), "{refused}");
    // Pi said it trusts the project (or --approve): they run.
    let mut opts = tree.opts();
    opts.project_trusted = Some(true);
    let trusted = load(&opts);
    assert_eq!(
        resolved(&trusted, "proj", "T").await.unwrap(),
        "from-project"
    );
    // So does a decision Pi saved.
    let canonical = std::fs::canonicalize(&tree.project).unwrap();
    tree.write(
        ".pi/agent/trust.json",
        &json!({ canonical.to_str().unwrap(): true }).to_string(),
    );
    assert_eq!(
        resolved(&tree.load(), "proj", "T").await.unwrap(),
        "from-project"
    );
}

#[test]
fn auto_enable_codemode_a_later_file_wins() {
    let tree = Tree::new();
    tree.pi_config(json!({"autoEnableCodemode": false, "mcpServers": {}}));
    assert_eq!(tree.load().auto_enable_codemode, Some(false));
    tree.write(
        "project/.pi/mcp.json",
        &json!({"autoEnableCodemode": true}).to_string(),
    );
    assert_eq!(tree.load().auto_enable_codemode, Some(true));
    tree.write(
        "project/.pi/mcp.json",
        &json!({"autoEnableCodemode": "no"}).to_string(),
    );
    let config = tree.load();
    assert_eq!(config.auto_enable_codemode, Some(false));
    assert!(messages(&config, &tree)[0]
        .contains("`autoEnableCodemode`: must be true or false, got string \"no\"; ignored"));
}

#[test]
fn an_entry_without_a_transport_adjusts_an_imported_server() {
    let tree = Tree::new();
    let pi = tree.pi_config(json!({
        "imports": ["cursor"],
        "mcpServers": {"cur": {"enabled": false, "toolExposure": {"x": "hidden"}}, "lone": {"enabled": false}}
    }));
    let cursor = tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur": {"command": "x", "args": ["1"]}}}).to_string(),
    );
    let config = tree.load();
    let cur = config.servers.iter().find(|s| s.name == "cur").unwrap();
    assert_eq!(cur.transport, stdio("x", &["1"]));
    assert!(cur.disabled);
    assert_eq!(cur.exposure.of("x"), Some(Exposure::Hidden));
    assert!(cur.imported.is_some());
    assert_eq!(cur.files, [cursor, pi]);
    // Nothing of that name to adjust: a disabled entry without a transport, said plainly.
    assert!(config.servers.iter().all(|s| s.name != "lone"));
    let lines = messages(&config, &tree);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("server \"lone\"")
                && l.contains("adjusts a server defined elsewhere")),
        "{lines:?}"
    );
}

#[test]
fn servers_pi_extensions_register_rank_below_config_files() {
    let tree = Tree::new();
    let pi = tree.pi_config(json!({"mcpServers": {
        "docs": {"command": "from-file"},
        "jira": {"enabled": false},
    }}));
    let registered = |name: &str, config: Value| Registered {
        name: name.into(),
        config,
        extension: PathBuf::from("/ext/jira.ts"),
    };
    let opts = LoadOptions {
        registered: vec![
            registered("docs", json!({"url": "https://registered/mcp"})),
            registered(
                "jira",
                json!({"url": "https://jira/mcp", "env": {"T": "!echo ok"}}),
            ),
            registered("wiki", json!({"command": "wiki"})),
        ],
        ..tree.opts()
    };
    let config = load(&opts);
    assert_eq!(names(&config), ["docs", "jira", "wiki"]);
    let server = |name: &str| config.servers.iter().find(|s| s.name == name).unwrap();
    assert_eq!(server("docs").transport, stdio("from-file", &[]));
    assert_eq!(server("docs").registered, None);
    // A file's entry without a transport adjusts the registration.
    let jira = server("jira");
    assert!(jira.disabled);
    assert_eq!(jira.registered.as_deref(), Some(Path::new("/ext/jira.ts")));
    assert_eq!(jira.files, [PathBuf::from("/ext/jira.ts"), pi.clone()]);
    assert!(matches!(server("wiki").transport, Transport::Stdio { .. }));
    let notes: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "server \"docs\": registered by /ext/jira.ts is not used: a config file defines it"
        )),
        "{notes:?}"
    );
    // Turned on or off, a registered server is adjusted in the user's Pi config, never in the
    // extension's file.
    let targets = switch::Targets {
        user: &pi,
        project: None,
    };
    let plan = |name: &str, enabled: bool| switch::plan(server(name), enabled, false, &targets);
    let off = vec![("enabled", Change::Set(json!(false)))];
    assert_eq!(plan("wiki", false).unwrap().file, pi);
    assert_eq!(plan("wiki", false).unwrap().edits, off);
    assert_eq!(plan("jira", true).unwrap().file, pi);
    assert_eq!(
        plan("jira", true).unwrap().edits,
        [("enabled", Change::Remove)]
    );
}

#[test]
fn turning_a_server_on_or_off_edits_the_file_it_takes_effect_in() {
    let tree = Tree::new();
    let user = tree.pi_config(json!({
        "imports": ["cursor"],
        "mcpServers": {
            "mine": {"command": "x"},
            "adjusted": {"command": "y", "disabled": true},
        }
    }));
    let project = tree.write(
        "project/.pi/mcp.json",
        &json!({"mcpServers": {"adjusted": {"args": ["2"]}}}).to_string(),
    );
    tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur": {"command": "z"}}}).to_string(),
    );
    let config = tree.load();
    let server = |name: &str| config.servers.iter().find(|s| s.name == name).unwrap();
    let targets = switch::Targets {
        user: &user,
        project: Some(&project),
    };
    let plan = |name: &str, enabled: bool, in_project: bool| {
        let plan = switch::plan(server(name), enabled, in_project, &targets).unwrap();
        (plan.file, plan.edits)
    };
    let off = || vec![("enabled", Change::Set(json!(false)))];
    assert_eq!(plan("mine", false, false), (user.clone(), off()));
    assert_eq!(plan("mine", true, false), (user.clone(), vec![]));
    // The project file sets a field of it last: the change goes there, and outweighs the user's.
    let on = vec![("disabled", Change::Set(json!(false)))];
    assert_eq!(plan("adjusted", true, false), (project.clone(), on));
    assert_eq!(plan("adjusted", false, false), (project.clone(), off()));
    // Another tool's file is never written: an override entry in the user's Pi config.
    assert_eq!(plan("cur", false, false), (user.clone(), off()));
    assert_eq!(plan("mine", false, true), (project.clone(), off()));
    let untrusted = switch::Targets {
        user: &user,
        project: None,
    };
    assert!(switch::plan(server("mine"), false, true, &untrusted).is_err());

    // Applied: the override entry is written, and the server comes back disabled.
    let (file, changed) = switch::apply(server("cur"), false, false, &targets).unwrap();
    assert_eq!((file, changed), (user.clone(), true));
    let again = tree.load();
    let cur = again.servers.iter().find(|s| s.name == "cur").unwrap();
    assert!(cur.disabled && cur.imported.is_some());
    let (_, changed) = switch::apply(cur, true, false, &targets).unwrap();
    assert!(changed);
    assert!(
        !tree
            .load()
            .servers
            .iter()
            .find(|s| s.name == "cur")
            .unwrap()
            .disabled
    );
}
