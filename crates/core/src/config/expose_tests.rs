//! Exposure saved from `/mcp`: each case plans a change, makes it, loads the files again and
//! checks that every tool is reached as planned, and what the file says.

use super::expose::{self, Choice, Defaults, Keys, Tool, Wanted};
use super::switch::Targets;
use super::test_tree::Tree;
use super::{Config, Exposure, ServerConfig};
use serde_json::json;
use std::path::Path;

const TOOLS: [&str; 3] = ["read_file", "write_file", "delete_file"];

fn tools() -> Vec<Tool<'static>> {
    TOOLS
        .iter()
        .map(|t| Tool {
            original: t,
            name: t,
        })
        .collect()
}

fn server<'a>(config: &'a Config, name: &str) -> &'a ServerConfig {
    config.servers.iter().find(|s| s.name == name).unwrap()
}

fn defaults(config: &Config) -> Defaults {
    Defaults {
        direct_tools: config.settings.direct_tools,
        exposure: config.settings.exposure,
    }
}

/// Each tool's state: `-` behind mcp, else the exposure's name.
fn states(server: &ServerConfig, defaults: Defaults) -> Vec<String> {
    tools()
        .into_iter()
        .map(|t| {
            let reached = server.reached(defaults.direct_tools, t);
            let name = reached.exposure.map_or("-", Exposure::name);
            match reached.locked {
                Some(_) => format!("{name} (locked)"),
                None => name.to_string(),
            }
        })
        .collect()
}

/// Plans and saves `wanted` for `name`; returns the file's text, the states planned, and the
/// states after loading the files again (which must be the same).
fn save(tree: &Tree, name: &str, wanted: Wanted, pi_reads: bool) -> (Keys, String, Vec<String>) {
    let config = tree.load();
    let user = tree.home.join(".pi/agent/mcp.json");
    let project = tree.project.join(".pi/mcp.json");
    let targets = Targets {
        user: &user,
        project: Some(&project),
    };
    let s = server(&config, name);
    let plan = expose::plan(s, defaults(&config), &tools(), &wanted, pi_reads, &targets);
    expose::apply(name, &plan).unwrap();
    let planned = states(&plan.after, defaults(&config));
    let again = tree.load();
    assert_eq!(
        states(server(&again, name), defaults(&again)),
        planned,
        "the states planned are the states loaded"
    );
    let text = std::fs::read_to_string(&plan.file).unwrap();
    (plan.keys, text, planned)
}

fn tool(name: &str, choice: Choice) -> Wanted {
    Wanted {
        server: None,
        tools: vec![(name.into(), choice)],
    }
}

fn all(choice: Choice) -> Wanted {
    Wanted {
        server: Some(choice),
        tools: vec![],
    }
}

fn user_file(tree: &Tree, text: &str) {
    tree.write(".pi/agent/mcp.json", text);
}

const FS: &str = r#"{
  // my servers
  "mcpServers": {
    "fs": {
      "command": "npx", // the filesystem server
      "args": ["-y", "fs"]
    }
  }
}
"#;

#[test]
fn on_pi_087_directtools_and_excludetools_as_pi_mcp_adapter_writes_them() {
    let tree = Tree::new();
    user_file(&tree, FS);
    let (keys, text, states) = save(&tree, "fs", tool("read_file", Choice::Direct), false);
    assert_eq!(keys, Keys::Adapter);
    assert_eq!(states, ["direct", "-", "-"]);
    assert!(text.contains("// my servers") && text.contains("// the filesystem server"));
    assert!(text.contains(r#""directTools": ["read_file"]"#), "{text}");
    let (_, text, states) = save(&tree, "fs", tool("delete_file", Choice::Hidden), false);
    assert_eq!(states, ["direct", "-", "hidden"]);
    assert!(
        text.contains(r#""excludeTools": ["delete_file"]"#),
        "{text}"
    );
    // Every tool not hidden is direct: `true`, as pi-mcp-adapter writes it.
    let (_, text, states) = save(&tree, "fs", tool("write_file", Choice::Direct), false);
    assert_eq!(states, ["direct", "direct", "hidden"]);
    assert!(text.contains(r#""directTools": true"#), "{text}");
    // Back behind mcp: the keys go (the file is the server's only one).
    let (_, text, states) = save(&tree, "fs", all(Choice::Mcp), false);
    assert_eq!(states, ["-", "-", "-"]);
    assert!(
        !text.contains("directTools") && !text.contains("excludeTools"),
        "{text}"
    );
    assert!(text.contains("// the filesystem server"));
}

#[test]
fn pi_keys_where_pi_reads_them_directtools_carried_over() {
    let tree = Tree::new();
    user_file(
        &tree,
        &FS.replace(
            r#""args": ["-y", "fs"]"#,
            r#""args": ["-y", "fs"], "directTools": ["read_file"]"#,
        ),
    );
    let (keys, text, states) = save(&tree, "fs", tool("write_file", Choice::Direct), true);
    assert_eq!(keys, Keys::Pi);
    assert_eq!(states, ["direct", "direct", "-"]);
    assert!(!text.contains("directTools"), "{text}");
    assert!(text.contains("\"toolExposure\": {\n        \"read_file\": \"direct\",\n        \"write_file\": \"direct\"\n      }"), "{text}");
    // A server-wide choice: `exposure`, and the tools' own entries go.
    let (_, text, states) = save(&tree, "fs", all(Choice::Hidden), true);
    assert_eq!(states, ["hidden", "hidden", "hidden"]);
    assert!(
        text.contains(r#""exposure": "hidden""#) && !text.contains("toolExposure"),
        "{text}"
    );
    // Behind mcp where the server's `exposure` says otherwise: Pi's default, codemode.
    let (_, text, states) = save(&tree, "fs", tool("read_file", Choice::Mcp), true);
    assert_eq!(states, ["codemode", "hidden", "hidden"]);
    assert!(text.contains(r#""read_file": "codemode""#), "{text}");
    let (_, text, states) = save(&tree, "fs", all(Choice::Mcp), true);
    assert_eq!(states, ["-", "-", "-"]);
    assert!(
        !text.contains("exposure") && !text.contains("Exposure"),
        "{text}"
    );
    // Pi's keys on Pi 0.87 too, once the server has them.
    user_file(
        &tree,
        &FS.replace(
            r#""args": ["-y", "fs"]"#,
            r#""args": ["-y", "fs"], "exposure": "deferred""#,
        ),
    );
    let (keys, _, states) = save(&tree, "fs", tool("read_file", Choice::Direct), false);
    assert_eq!(keys, Keys::Pi);
    assert_eq!(states, ["direct", "deferred", "deferred"]);
}

#[test]
fn tool_exposure_edited_key_by_key_keeping_its_comments_and_patterns() {
    let tree = Tree::new();
    user_file(
        &tree,
        r#"{"mcpServers": {"fs": {
  "command": "x",
  "toolExposure": {
    "*_file": "direct", // most are direct
    "read_file": "hidden"
  }
}}}"#,
    );
    let (_, text, states) = save(&tree, "fs", tool("read_file", Choice::Direct), true);
    assert_eq!(states, ["direct", "direct", "direct"]);
    assert!(
        text.contains("\"*_file\": \"direct\" // most are direct\n  }"),
        "{text}"
    );
    let (_, text, states) = save(&tree, "fs", tool("delete_file", Choice::Hidden), true);
    assert_eq!(states, ["direct", "direct", "hidden"]);
    assert!(
        text.contains("// most are direct") && text.contains(r#""delete_file": "hidden""#),
        "{text}"
    );
    // A server-wide choice overrides the pattern for the tools known, and keeps it.
    let (_, text, states) = save(&tree, "fs", all(Choice::Mcp), true);
    assert_eq!(states, ["codemode", "codemode", "codemode"]);
    assert!(text.contains("\"*_file\": \"direct\""), "{text}");
}

#[test]
fn an_imported_server_gets_an_override_entry_in_the_users_file() {
    let tree = Tree::new();
    user_file(&tree, r#"{"imports": ["cursor"], "mcpServers": {}}"#);
    tree.write(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur": {"command": "z"}}}).to_string(),
    );
    let (keys, text, states) = save(&tree, "cur", tool("write_file", Choice::Hidden), false);
    assert_eq!(
        (keys, states),
        (Keys::Adapter, vec!["-".into(), "hidden".into(), "-".into()])
    );
    assert!(
        text.contains("\"cur\": {\n    \"excludeTools\": [\"write_file\"]\n  }"),
        "{text}"
    );
    let cursor = std::fs::read_to_string(tree.home.join(".cursor/mcp.json")).unwrap();
    assert!(!cursor.contains("excludeTools"));
    // The override is not the server's only file: a value that means "none" is written out.
    let (_, text, states) = save(&tree, "cur", tool("write_file", Choice::Mcp), false);
    assert_eq!(states, ["-", "-", "-"]);
    assert!(text.contains(r#""excludeTools": []"#), "{text}");
}

#[test]
fn locked_tools_and_settings_defaults() {
    let tree = Tree::new();
    user_file(
        &tree,
        &json!({
            "settings": {"exposure": "direct"},
            "mcpServers": {"fs": {"command": "x", "excludeTools": ["delete_*", "write_file"]}}
        })
        .to_string(),
    );
    let config = tree.load();
    assert_eq!(
        states(server(&config, "fs"), defaults(&config)),
        ["direct", "hidden", "hidden (locked)"]
    );
    // The pattern's tool keeps its state; an exact entry is taken out of the list.
    let wanted = Wanted {
        server: None,
        tools: vec![
            ("delete_file".into(), Choice::Direct),
            ("write_file".into(), Choice::Mcp),
        ],
    };
    let (_, text, states) = save(&tree, "fs", wanted, true);
    assert_eq!(states, ["direct", "codemode", "hidden (locked)"]);
    // The settings' exposure stops applying once the server has keys: it is written out.
    assert!(
        text.contains(r#""exposure":"direct""#) || text.contains(r#""exposure": "direct""#),
        "{text}"
    );
    assert!(
        text.contains(r#""excludeTools":["delete_*"]"#)
            || text.contains(r#""excludeTools": ["delete_*"]"#),
        "{text}"
    );
}

#[test]
fn a_server_set_in_two_files_is_changed_in_the_last() {
    let tree = Tree::new();
    user_file(
        &tree,
        &json!({"mcpServers": {"fs": {"command": "x", "exposure": "direct"}}}).to_string(),
    );
    tree.write(
        "project/.pi/mcp.json",
        &json!({"mcpServers": {"fs": {"args": ["2"]}}}).to_string(),
    );
    let (_, text, states) = save(&tree, "fs", all(Choice::Mcp), true);
    assert_eq!(states, ["codemode", "codemode", "codemode"]);
    assert!(
        text.contains("\"args\"") && text.contains(r#""exposure": "codemode""#),
        "{text}"
    );
    let user = std::fs::read_to_string(tree.home.join(".pi/agent/mcp.json")).unwrap();
    assert!(user.contains(r#""exposure":"direct""#));
    assert!(Path::new(&tree.project.join(".pi/mcp.json")).exists());
}

#[test]
fn nothing_to_change_writes_nothing() {
    let tree = Tree::new();
    user_file(&tree, FS);
    let config = tree.load();
    let user = tree.home.join(".pi/agent/mcp.json");
    let targets = Targets {
        user: &user,
        project: None,
    };
    let s = server(&config, "fs");
    for pi_reads in [false, true] {
        let plan = expose::plan(
            s,
            defaults(&config),
            &tools(),
            &tool("read_file", Choice::Mcp),
            pi_reads,
            &targets,
        );
        assert_eq!(plan.edits, vec![]);
        assert_eq!(expose::apply("fs", &plan), Ok(false));
    }
    // Nothing asked: nothing to write, even where Pi's keys would replace `directTools`.
    user_file(
        &tree,
        &FS.replace(
            r#""args": ["-y", "fs"]"#,
            r#""args": ["-y", "fs"], "directTools": true"#,
        ),
    );
    let config = tree.load();
    let s = server(&config, "fs");
    let plan = expose::plan(
        s,
        defaults(&config),
        &tools(),
        &Wanted::default(),
        true,
        &targets,
    );
    assert_eq!(plan.edits, vec![]);
    // No tools known yet: the server-wide choice alone.
    let plan = expose::plan(
        s,
        defaults(&config),
        &[],
        &all(Choice::Direct),
        false,
        &targets,
    );
    assert_eq!(plan.after.direct_tools, Some(super::DirectTools::All));
    let plan = expose::plan(
        s,
        defaults(&config),
        &[],
        &all(Choice::Hidden),
        true,
        &targets,
    );
    assert_eq!(plan.after.exposure.server, Some(Exposure::Hidden));
}
