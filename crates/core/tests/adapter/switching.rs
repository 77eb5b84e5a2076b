//! Turning servers on and off (`/mcp enable|disable`) and the server names the front end lists.

use crate::support::{server, Home};
use pi_mcp_core::adapter::SwitchError;
use serde_json::{json, Value};

fn off() -> Value {
    let mut entry = server(&[]);
    entry["disabled"] = json!(true);
    entry
}

#[test]
fn the_names_leave_out_disabled_servers_unless_asked() {
    let home = Home::new(json!({ "on": server(&[]), "off": off(), "last": server(&[]) }));
    let adapter = home.open().adapter;
    assert_eq!(adapter.server_names(false), ["on", "last"]);
    assert_eq!(adapter.server_names(true), ["on", "off", "last"]);
}

#[test]
fn a_server_is_switched_in_its_own_file_or_in_the_project() {
    let home = Home::new(json!({ "on": server(&[]), "off": off() }));
    let adapter = home.open().adapter;
    let saved = adapter.set_enabled("off", true, false).unwrap();
    assert_eq!(
        saved.file,
        home.agent.join("mcp.json").display().to_string()
    );
    assert!(saved.changed);
    let saved = adapter.set_enabled("on", false, true).unwrap();
    let project = home.cwd.join(".pi").join("mcp.json");
    assert_eq!(saved.file, project.display().to_string());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(project).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["on"]["enabled"], json!(false));
}

#[test]
fn switching_an_unknown_server_says_which_name() {
    let home = Home::new(json!({ "on": server(&[]) }));
    let error = home
        .open()
        .adapter
        .set_enabled("nope", false, false)
        .unwrap_err();
    assert!(matches!(&error, SwitchError::NotConfigured(name) if name == "nope"));
    assert_eq!(error.to_string(), "no MCP server named \"nope\"");
}
