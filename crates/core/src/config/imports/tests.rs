//! Each tool's documented file format, from a fixture home, through `imports`.

use crate::config::test_tree::{messages, names, Tree};
use crate::config::{
    Config, HttpAuth, ImportKind, Role, ServerConfig, Source, SourceState, Transport,
};
use pi_mcp_connection::secret::Secret;
use serde_json::json;
use std::path::PathBuf;

fn server<'a>(config: &'a Config, name: &str) -> &'a ServerConfig {
    config
        .servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name}: {:?}", names(config)))
}

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> Transport {
    Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect(),
        cwd: None,
    }
}

/// A URL server without credentials: OAuth if it asks for it, unless it sends `Authorization`.
fn http(url: &str, headers: &[(&str, &str)]) -> Transport {
    let authorized = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    Transport::Http {
        url: Secret::new(url),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect(),
        auth: match authorized {
            true => HttpAuth::None,
            false => HttpAuth::OAuth(Box::default()),
        },
        request_headers: None,
        ca_file: None,
    }
}

/// Loads the fixture home of `tool` with a Pi config that imports it.
fn imported(tool: &str, env: &[(&str, &str)]) -> (Tree, Config) {
    let mut tree = Tree::fixture(tool);
    for (k, v) in env {
        tree.env.insert(k.to_string(), v.to_string());
    }
    tree.pi_config(json!({ "imports": [tool] }));
    let config = tree.load();
    (tree, config)
}

fn import_sources(config: &Config) -> Vec<&Source> {
    config
        .sources
        .iter()
        .filter(|s| matches!(s.role, Role::Import { .. }))
        .collect()
}

fn loaded(servers: &[&str], shadowed: &[&str]) -> SourceState {
    SourceState::Loaded {
        servers: servers.iter().map(|s| s.to_string()).collect(),
        shadowed: shadowed.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn cursor_global_and_project_files_with_editor_variables_and_env_file() {
    let (tree, config) = imported(
        "cursor",
        &[("GITHUB_TOKEN", "ghp"), ("LINEAR_API_KEY", "lin")],
    );
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(names(&config), ["github", "linear", "notes", "project-db"]);
    let home = tree.home.display().to_string();
    let project = tree.project.display().to_string();
    // The project's `.cursor/mcp.json` replaces the global definition of `github`.
    assert_eq!(
        server(&config, "github").transport,
        stdio(
            "docker",
            &[
                "run",
                "-i",
                "--rm",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN",
                "ghcr.io/github/github-mcp-server"
            ],
            &[("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp")]
        )
    );
    assert_eq!(
        server(&config, "linear").transport,
        http(
            "https://mcp.linear.app/mcp",
            &[("Authorization", "Bearer lin")]
        )
    );
    assert_eq!(
        server(&config, "notes").transport,
        stdio(
            &format!("{home}/bin/notes-mcp"),
            &["--root", &project],
            &[("NOTES_FORMAT", "markdown"), ("NOTES_TOKEN", "s3cret")]
        )
    );
    assert_eq!(
        server(&config, "project-db").transport,
        stdio(
            "uvx",
            &[
                "mcp-server-sqlite",
                "--db-path",
                &format!("{project}/data/app.db")
            ],
            &[]
        )
    );
    let github = server(&config, "github");
    assert_eq!(github.source, tree.project.join(".cursor/mcp.json"));
    let imported = github.imported.as_ref().unwrap();
    assert_eq!(imported.kind, ImportKind::Cursor);
    assert_eq!(imported.by, tree.home.join(".pi/agent/mcp.json"));
    let sources = import_sources(&config);
    assert_eq!(sources.len(), 2);
    assert_eq!(
        sources[0].state,
        loaded(&["github", "linear", "notes"], &["github"])
    );
    assert_eq!(sources[1].state, loaded(&["github", "project-db"], &[]));
    assert!(matches!(
        sources[1].role,
        Role::Import { project: true, .. }
    ));
}

#[test]
fn claude_code_user_servers_and_this_projects_local_ones() {
    let (tree, config) = imported("claude-code", &[("STRIPE_KEY", "sk")]);
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(
        names(&config),
        ["sentry", "airtable", "stripe", "playwright"]
    );
    assert_eq!(
        server(&config, "sentry").transport,
        http("https://mcp.sentry.dev/mcp", &[])
    );
    assert_eq!(
        server(&config, "stripe").transport,
        http(
            "https://mcp.stripe.com/sse",
            &[("Authorization", "Bearer sk")]
        )
    );
    // The project's ("local" scope) definition wins over the user one.
    assert_eq!(
        server(&config, "airtable").transport,
        stdio(
            "npx",
            &["-y", "airtable-mcp-server", "--base", "app123"],
            &[]
        )
    );
    assert_eq!(
        server(&config, "playwright").transport,
        stdio("npx", &["@playwright/mcp@latest"], &[])
    );
    let sources = import_sources(&config);
    assert_eq!(sources[0].path, tree.home.join(".claude/mcp.json"));
    assert_eq!(sources[0].state, SourceState::Missing);
    assert_eq!(sources[1].path, tree.home.join(".claude.json"));
    assert_eq!(
        sources[1].state,
        loaded(&["sentry", "airtable", "stripe", "playwright"], &[])
    );
    assert_eq!(sources.len(), 2, "the first file found is the one used");
}

#[test]
fn claude_code_default_values_in_references() {
    let (tree, _) = imported("claude-code", &[("STRIPE_KEY", "sk")]);
    std::fs::write(
        tree.home.join(".claude.json"),
        json!({"mcpServers": {"airtable": {"command": "npx", "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY:-missing-key}", "B": "${STRIPE_KEY:-unused}"}}}}).to_string(),
    )
    .unwrap();
    let config = tree.load();
    assert_eq!(
        server(&config, "airtable").transport,
        stdio(
            "npx",
            &[],
            &[("AIRTABLE_API_KEY", "missing-key"), ("B", "sk")]
        )
    );
}

#[test]
fn claude_desktop_on_macos_and_linux() {
    let (tree, config) = imported("claude-desktop", &[]);
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    let home = tree.home.display().to_string();
    assert_eq!(names(&config), ["filesystem", "weather"]);
    assert_eq!(
        server(&config, "filesystem").transport,
        stdio(
            "npx",
            &[
                "-y",
                "@modelcontextprotocol/server-filesystem",
                &format!("{home}/Desktop"),
                &format!("{home}/Downloads")
            ],
            &[]
        )
    );
    // Linux builds keep the same file under ~/.config/Claude.
    std::fs::remove_dir_all(tree.home.join("Library")).unwrap();
    tree.write(
        ".config/Claude/claude_desktop_config.json",
        &json!({"mcpServers": {"linux-only": {"command": "x"}}}).to_string(),
    );
    assert_eq!(names(&tree.load()), ["linux-only"]);
}

#[test]
fn vscode_servers_key_inputs_and_workspace_over_user() {
    let (tree, config) = imported("vscode", &[]);
    let project = tree.project.display().to_string();
    assert_eq!(names(&config), ["fetch", "time", "perplexity", "github"]);
    assert_eq!(
        server(&config, "fetch").transport,
        stdio(
            "uvx",
            &["mcp-server-fetch", "--cache", &format!("{project}/.cache")],
            &[]
        )
    );
    assert_eq!(
        server(&config, "github").transport,
        http("https://api.githubcopilot.com/mcp/", &[])
    );
    assert_eq!(
        server(&config, "perplexity").transport,
        stdio(
            "npx",
            &["-y", "server-perplexity-ask"],
            &[("PERPLEXITY_API_KEY", "")]
        )
    );
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/project/.vscode/mcp.json:17: server \"perplexity\", field `env.PERPLEXITY_API_KEY`: `${input:perplexity-key}` is resolved by the editor itself (it asks you, or runs a command); pi-mcp-native cannot, so the value is left empty. Use an environment variable instead, e.g. `${env:NAME}`",
            "note: ~/.config/Code/User/mcp.json:11: server \"time\", field `dev`: unknown key; ignored",
        ]
    );
}

#[test]
fn windsurf_server_url_and_disabled_tools() {
    let (tree, config) = imported("windsurf", &[("BRAVE_API_KEY", "b"), ("FIGMA_KEY", "f")]);
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(names(&config), ["brave-search", "figma", "retired"]);
    let brave = server(&config, "brave-search");
    assert_eq!(
        brave.exclude_tools,
        Some(vec!["brave_local_search".to_string()])
    );
    assert_eq!(
        server(&config, "figma").transport,
        http("https://figma.example.com/mcp", &[("X-Api-Key", "f")])
    );
    assert!(server(&config, "retired").disabled);
    // The path pi-mcp-adapter reads is used when Windsurf's own is absent.
    std::fs::remove_dir_all(tree.home.join(".codeium")).unwrap();
    tree.write(
        ".windsurf/mcp.json",
        &json!({"mcpServers": {"w": {"command": "w"}}}).to_string(),
    );
    assert_eq!(names(&tree.load()), ["w"]);
}

#[test]
fn codex_toml_tables() {
    let (tree, config) = imported("codex", &[("FIGMA_ORG_ID", "org-1")]);
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(names(&config), ["context7", "figma", "legacy"]);
    let context7 = server(&config, "context7");
    assert_eq!(
        context7.transport,
        stdio(
            "npx",
            &["-y", "@upstash/context7-mcp"],
            &[("LOG_LEVEL", "info")]
        )
    );
    assert_eq!(context7.request_timeout_ms, Some(90_000));
    let figma = server(&config, "figma");
    let mut expected = http(
        "https://mcp.figma.com/mcp",
        &[("X-Figma-Region", "us-east-1"), ("X-Org-Id", "org-1")],
    );
    if let Transport::Http { auth, .. } = &mut expected {
        // bearer_token_env_var
        *auth = HttpAuth::Bearer {
            token: None,
            env_var: Some("FIGMA_OAUTH_TOKEN".into()),
        };
    }
    assert_eq!(figma.transport, expected);
    // The entry pi-mcp-adapter would build, for the same cache hash.
    assert_eq!(
        figma.entry,
        json!({
            "url": "https://mcp.figma.com/mcp",
            "bearerTokenEnv": "FIGMA_OAUTH_TOKEN",
            "auth": "bearer",
            "headers": {"X-Figma-Region": "us-east-1", "X-Org-Id": "$env:FIGMA_ORG_ID"}
        })
    );
    let legacy = server(&config, "legacy");
    assert!(legacy.disabled);
    assert_eq!(
        legacy.include_tools,
        Some(vec!["search".to_string(), "fetch".to_string()])
    );
    assert_eq!(
        legacy.exclude_tools,
        Some(vec!["delete_everything".to_string()])
    );
}

#[test]
fn codex_home_and_toml_errors() {
    let mut tree = Tree::new();
    let codex_home = tree.root.join("codex-home");
    tree.env
        .insert("CODEX_HOME".into(), codex_home.display().to_string());
    tree.pi_config(json!({ "imports": ["codex"] }));
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "[mcp_servers.a]\ncommand = \"a\"\ntool_timeout_sec = \"soon\"\n\n[mcp_servers.b]\nargs = [1\n",
    )
    .unwrap();
    let config = tree.load();
    let root = tree.root.display().to_string();
    let messages: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with(&format!(
            "error: {root}/codex-home/config.toml:6: invalid TOML: "
        )),
        "{messages:?}"
    );
    std::fs::write(
        codex_home.join("config.toml"),
        "[mcp_servers.a]\ncommand = \"a\"\ntool_timeout_sec = \"soon\"\nenabled_tools = \"all\"\n",
    )
    .unwrap();
    let config = tree.load();
    let messages: Vec<String> = config.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        messages,
        [
            format!("warning: {root}/codex-home/config.toml:3: server \"a\", field `tool_timeout_sec`: must be a number of seconds, got string \"soon\"; using the default"),
            format!("error: {root}/codex-home/config.toml:4: server \"a\", field `enabled_tools`: must be an array of strings, got a string"),
        ]
    );
}

#[test]
fn opencode_local_and_remote_with_the_project_file_merged_over_the_global_one() {
    let tree = Tree::fixture("opencode");
    std::fs::create_dir_all(tree.project.join(".git")).unwrap();
    let app = tree.project.join("app");
    std::fs::create_dir_all(&app).unwrap();
    tree.pi_config(json!({ "imports": ["opencode"] }));
    let mut opts = tree.opts();
    opts.cwd = app; // the project's opencode.json is found up to the git root
    let config = crate::config::load(&opts);
    assert_eq!(messages(&config, &tree), Vec::<String>::new());
    assert_eq!(names(&config), ["jira", "everything", "sentry", "local-db"]);
    assert!(server(&config, "jira").disabled, "the project disables it");
    assert_eq!(
        server(&config, "jira").transport,
        http(
            "https://jira.example.com/mcp",
            &[("Authorization", "Bearer ")]
        )
    );
    let everything = server(&config, "everything");
    assert_eq!(
        everything.transport,
        stdio(
            "npx",
            &["-y", "@modelcontextprotocol/server-everything"],
            &[("DEBUG", "1")]
        )
    );
    let sentry = server(&config, "sentry");
    assert_eq!(
        sentry.entry,
        json!({"url": "https://mcp.sentry.dev/mcp", "auth": "oauth", "oauth": {"clientId": "abc", "scope": "read"}})
    );
    assert_eq!(
        server(&config, "local-db").transport,
        stdio("uvx", &["db-mcp", "--path", "./db"], &[])
    );
    let sources = import_sources(&config);
    let paths: Vec<PathBuf> = sources.iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        paths,
        [
            tree.home.join(".config/opencode/opencode.json"),
            tree.project.join("app/opencode.json"),
            tree.project.join("app/opencode.jsonc"),
            tree.project.join("opencode.json"),
        ]
    );
}

#[test]
fn opencode_errors_name_opencode_fields() {
    let tree = Tree::new();
    tree.pi_config(json!({ "imports": ["opencode"] }));
    tree.write(
        ".config/opencode/opencode.json",
        r#"{
  "mcp": {
    "a": { "type": "local", "command": "npx -y server" },
    "b": { "type": "websocket", "url": "ws://x" },
    "c": { "type": "local", "command": ["c"], "environment": { "N": [1] } },
    "d": { "type": "local", "command": ["d", "{file:~/.secret}"] }
  }
}"#,
    );
    let config = tree.load();
    assert_eq!(names(&config), ["c", "d"]);
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/.config/opencode/opencode.json:3: server \"a\", field `command`: must be the program and its arguments as an array of strings, like [\"npx\", \"-y\", \"some-server\"], got a string",
            "error: ~/.config/opencode/opencode.json:4: server \"b\", field `type`: unknown server type \"websocket\" (expected \"local\" or \"remote\")",
            "warning: ~/.config/opencode/opencode.json:6: server \"d\": OpenCode's `{file:…}` substitution is not supported here; the text stays as written. Use `{env:NAME}` instead",
            "error: ~/.config/opencode/opencode.json:5: server \"c\", field `environment.N`: must be a string, got an array; the variable is not set",
        ]
    );
}

#[test]
fn imports_never_override_defined_servers_and_the_first_import_wins() {
    let tree = Tree::fixture("cursor");
    tree.write(
        ".claude.json",
        &json!({"mcpServers": {"linear": {"command": "claude-linear"}, "github": {"command": "claude-github"}, "only-claude": {"command": "c"}}}).to_string(),
    );
    tree.write(
        ".config/mcp/mcp.json",
        &json!({"mcpServers": {"github": {"command": "mine"}}}).to_string(),
    );
    tree.pi_config(json!({ "imports": ["cursor", "claude-code"] }));
    let config = tree.load();
    assert_eq!(
        names(&config),
        ["github", "linear", "notes", "project-db", "only-claude"]
    );
    assert_eq!(server(&config, "github").transport, stdio("mine", &[], &[]));
    assert!(server(&config, "github").imported.is_none());
    assert_eq!(
        server(&config, "linear").imported.as_ref().unwrap().kind,
        ImportKind::Cursor
    );
    let claude = config
        .sources
        .iter()
        .find(|s| s.path == tree.home.join(".claude.json"))
        .unwrap();
    assert_eq!(
        claude.state,
        loaded(&["linear", "github", "only-claude"], &["linear", "github"])
    );
}

#[test]
fn unknown_and_misspelt_imports() {
    let tree = Tree::new();
    let pi = tree.pi_config(json!({ "imports": ["cursr", "zed", 3, "cursor"], "mcpServers": {} }));
    let config = tree.load();
    let pi = pi.display().to_string();
    assert_eq!(
        config.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        [
            format!("warning: {pi}:1: `imports`: unknown tool \"cursr\"; did you mean \"cursor\"? expected one of \"cursor\", \"claude-code\", \"claude-desktop\", \"vscode\", \"windsurf\", \"codex\", \"opencode\"; it is skipped"),
            format!("warning: {pi}:1: `imports`: unknown tool \"zed\"; expected one of \"cursor\", \"claude-code\", \"claude-desktop\", \"vscode\", \"windsurf\", \"codex\", \"opencode\"; it is skipped"),
            format!("warning: {pi}:1: `imports`: unknown tool number 3; expected one of \"cursor\", \"claude-code\", \"claude-desktop\", \"vscode\", \"windsurf\", \"codex\", \"opencode\"; it is skipped"),
        ]
    );
    let tree = Tree::new();
    tree.pi_config(json!({ "imports": "cursor" }));
    assert!(tree.load().diagnostics[0]
        .to_string()
        .contains("`imports`: must be an array of tool names like [\"cursor\", \"claude-code\"], got string \"cursor\"; nothing is imported from this file"));
}

#[test]
fn an_import_with_no_file_is_only_listed() {
    let tree = Tree::new();
    tree.pi_config(json!({ "imports": ["windsurf"] }));
    let config = tree.load();
    assert!(config.diagnostics.is_empty(), "{:?}", config.diagnostics);
    let states: Vec<&SourceState> = import_sources(&config).iter().map(|s| &s.state).collect();
    assert_eq!(states, [&SourceState::Missing, &SourceState::Missing]);
}

#[test]
fn an_imported_file_of_the_wrong_shape_is_reported_and_the_rest_load() {
    let tree = Tree::new();
    tree.pi_config(
        json!({ "imports": ["cursor", "windsurf"], "settings": {"idleTimeout": "soon"} }),
    );
    tree.write(".cursor/mcp.json", r#"{ "mcpServers": ["github"] }"#);
    tree.write(
        ".codeium/windsurf/mcp_config.json",
        &json!({"mcpServers": {"w": {"command": "w"}, "s": "npx s --token sk-secret"}}).to_string(),
    );
    let config = tree.load();
    assert_eq!(names(&config), ["w"]);
    assert_eq!(
        messages(&config, &tree),
        [
            "error: ~/.cursor/mcp.json:1: `mcpServers`: must be an object of servers by name, got an array",
            "error: ~/.codeium/windsurf/mcp_config.json:1: server \"s\": must be an object, got a string",
            "warning: ~/.pi/agent/mcp.json:1: `settings.idleTimeout`: must be a number of minutes (0 = never), got string \"soon\"; using the default",
        ]
    );
}
