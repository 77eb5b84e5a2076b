//! Servers of installed Pi packages, read through `load` from a home laid out as Pi installs
//! packages.

use super::test_tree::{messages, names, Tree};
use super::{load, LoadOptions, Role, SourceState};
use serde_json::json;

/// A package installed at `dir` (relative to the home) whose manifest declares `mcp`.
fn package(
    tree: &Tree,
    dir: &str,
    name: &str,
    mcp: serde_json::Value,
    files: &[(&str, serde_json::Value)],
) {
    tree.write(
        &format!("{dir}/package.json"),
        &json!({"name": name, "keywords": ["pi-package"], "pi": {"mcp": mcp}}).to_string(),
    );
    for (file, value) in files {
        tree.write(&format!("{dir}/{file}"), &value.to_string());
    }
}

#[test]
fn packages_servers_named_and_ranked_below_the_files() {
    let tree = Tree::new();
    tree.write(
        ".pi/agent/settings.json",
        &json!({"packages": ["npm:@acme/pi-tools@1.2.0", {"source": "./local-pkg"}, "npm:not-installed", "npm:no-mcp"]})
            .to_string(),
    );
    package(
        &tree,
        ".pi/agent/npm/node_modules/@acme/pi-tools",
        "@acme/pi-tools",
        json!("./mcp.json"),
        &[(
            "mcp.json",
            json!({"mcpServers": {"docs": {"command": "node", "args": ["server.js"], "cwd": "."}, "web.search": {"url": "https://x/mcp"}, "shadowed": {"command": "a"}}}),
        )],
    );
    package(
        &tree,
        ".pi/agent/local-pkg",
        "local-pkg",
        json!(["cfg/a.json", "../escape.json"]),
        &[(
            "cfg/a.json",
            json!({"mcpServers": {"one": {"command": "b", "cwd": "../.."}}}),
        )],
    );
    tree.write(
        ".pi/agent/escape.json",
        &json!({"mcpServers": {"out": {"command": "c"}}}).to_string(),
    );
    tree.write(
        ".pi/agent/npm/node_modules/no-mcp/package.json",
        &json!({"name": "no-mcp"}).to_string(),
    );
    tree.pi_config(json!({"mcpServers": {
        "acme_pi-tools__shadowed": {"command": "mine"},
        "acme_pi-tools__docs": {"enabled": false},
    }}));
    let config = tree.load();
    assert_eq!(
        names(&config),
        [
            "acme_pi-tools__shadowed",
            "acme_pi-tools__docs",
            "acme_pi-tools__web_search"
        ]
    );
    let docs = config
        .servers
        .iter()
        .find(|s| s.name == "acme_pi-tools__docs")
        .unwrap();
    let root = tree.home.join(".pi/agent/npm/node_modules/@acme/pi-tools");
    let package = docs.package.as_ref().unwrap();
    assert_eq!(
        (package.name.as_str(), &package.root, package.project),
        ("@acme/pi-tools", &root, false)
    );
    assert!(
        docs.disabled,
        "an override entry in the user's file adjusts a package's server"
    );
    assert_eq!(
        docs.entry["cwd"],
        json!(root.display().to_string()),
        "a relative cwd is the package's"
    );
    let mine = config
        .servers
        .iter()
        .find(|s| s.name == "acme_pi-tools__shadowed")
        .unwrap();
    assert_eq!(mine.entry["command"], "mine");
    assert!(mine.package.is_none());
    let file = root.join("mcp.json");
    let source = config.sources.iter().find(|s| s.path == file).unwrap();
    assert!(
        matches!(&source.role, Role::Package { name, project: false, .. } if name == "@acme/pi-tools")
    );
    assert_eq!(
        source.state,
        SourceState::Loaded {
            servers: vec![
                "acme_pi-tools__docs".into(),
                "acme_pi-tools__web_search".into(),
                "acme_pi-tools__shadowed".into()
            ],
            shadowed: vec!["acme_pi-tools__shadowed".into()],
        }
    );
    let said = messages(&config, &tree);
    assert!(
        said.iter()
            .any(|m| m.contains("~/.pi/agent/local-pkg/package.json")
                && m.contains("names ../escape.json, which is not a file inside the package")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|m| m.contains("`cwd` ../.. leaves the package")),
        "{said:?}"
    );
    assert!(
        !names(&config).contains(&"local-pkg__one") && !names(&config).contains(&"local-pkg__out")
    );
}

#[test]
fn a_projects_packages_follow_its_trust_and_replace_the_users() {
    let tree = Tree::new();
    tree.write(
        ".pi/agent/settings.json",
        &json!({"packages": ["npm:tools"]}).to_string(),
    );
    tree.write(
        "project/.pi/settings.json",
        &json!({"packages": ["npm:tools@2"]}).to_string(),
    );
    let declares = json!({"mcpServers": {"s": {"command": "x"}}});
    package(
        &tree,
        ".pi/agent/npm/node_modules/tools",
        "tools",
        json!("mcp.json"),
        &[("mcp.json", declares.clone())],
    );
    package(
        &tree,
        "project/.pi/npm/node_modules/tools",
        "tools",
        json!("mcp.json"),
        &[("mcp.json", json!({"mcpServers": {"p": {"command": "y"}}}))],
    );
    let trusted = load(&LoadOptions {
        project_trusted: Some(true),
        ..tree.opts()
    });
    assert_eq!(names(&trusted), ["tools__p"]);
    assert!(trusted.servers[0].package.as_ref().unwrap().project);
    let untrusted = load(&LoadOptions {
        project_trusted: Some(false),
        ..tree.opts()
    });
    assert_eq!(names(&untrusted), ["tools__s"]);
    // One config given alone reads no package.
    let exclusive = load(&LoadOptions {
        env: tree
            .env
            .clone()
            .into_iter()
            .chain([("PI_MCP_CONFIG_MODE".to_string(), "exclusive".to_string())])
            .collect(),
        ..tree.opts()
    });
    assert!(exclusive.servers.is_empty());
}
