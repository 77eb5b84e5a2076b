//! MCP Apps: the `io.modelcontextprotocol/ui` extension declared from the config (never from
//! the session's mode), and the tools only an app may call kept from the model.

use crate::support::*;
use serde_json::{json, Value};

/// What the server `name` was told we offer.
async fn offered(session: &Session, name: &str) -> Value {
    let said = session
        .call(&format!("{name}_capabilities"), json!({}))
        .await;
    serde_json::from_str(&text(&said)).unwrap()
}

fn declares_apps(capabilities: &Value) -> bool {
    capabilities["extensions"]["io.modelcontextprotocol/ui"]
        == json!({ "mimeTypes": ["text/html;profile=mcp-app"] })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_extension_is_declared_from_the_config() {
    let app = |ui: Value| {
        let mut entry = server(&["asks", "apps"]);
        if !ui.is_null() {
            entry["ui"] = ui;
        }
        entry
    };
    let servers = json!({ "a": app(Value::Null), "b": app(json!(false)), "c": app(json!("none")) });
    let home = Home::new(servers.clone());
    let session = home.open();
    assert!(declares_apps(&offered(&session, "a").await));
    assert!(!declares_apps(&offered(&session, "b").await));
    assert!(
        declares_apps(&offered(&session, "c").await),
        "ui: \"none\" still serves the app"
    );
    finish(session, &home).await;

    // Off for every server but the one that asks for it.
    let servers = json!({ "a": app(Value::Null), "b": app(json!("browser")) });
    let home = Home::with(servers, json!({ "ui": false }));
    let session = home.open();
    assert!(!declares_apps(&offered(&session, "a").await));
    assert!(declares_apps(&offered(&session, "b").await));
    finish(session, &home).await;

    let home = Home::with(json!({ "a": app(json!("window")) }), json!({ "ui": 3 }));
    let session = home.open();
    let said = session.adapter.diagnostics().join("\n");
    assert!(
        said.contains("settings.ui") && said.contains("got 3"),
        "{said}"
    );
    assert!(
        said.contains("server \"a\", field `ui`") && said.contains("\"window\""),
        "{said}"
    );
    assert!(
        declares_apps(&offered(&session, "a").await),
        "a bad value means the default"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_for_the_app_alone_are_kept_from_the_model() {
    let home = Home::new(json!({ "s": server(&["asks", "apps"]) }));
    let session = home.open();
    let listed = text(&session.execute(json!({ "server": "s" })).await);
    assert!(
        listed.contains("s_clock") && listed.contains("s_clock_reset"),
        "{listed}"
    );
    assert!(!listed.contains("s_clock_tick"), "{listed}");
    let found = text(&session.execute(json!({ "search": "clock tick" })).await);
    assert!(!found.contains("s_clock_tick"), "{found}");

    for params in [
        json!({ "describe": "s_clock_tick" }),
        json!({ "tool": "s_clock_tick" }),
        json!({ "tool": "clock_tick", "server": "s" }),
    ] {
        let refused = session.execute(params.clone()).await;
        assert_eq!(code(&refused), "tool_for_app", "{params}");
        let said = text(&refused);
        assert!(said.contains("for the server's app alone"), "{said}");
    }
    let seen = text(&session.call("s_seen", json!({})).await);
    assert!(
        !seen.contains("tools/call, tools/call"),
        "only `seen` was called: {seen}"
    );
    assert_eq!(
        text(&session.call("s_clock", json!({})).await),
        "clock called; ticks 0"
    );
    finish(session, &home).await;

    let home = Home::new(
        json!({ "s": { "command": TEST_SERVER, "args": ["apps"], "directTools": true } }),
    );
    let session = home.open();
    session.execute(json!({ "server": "s" })).await;
    let direct: Vec<String> = session
        .adapter
        .direct_tools()
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(direct.contains(&"s_clock".to_string()), "{direct:?}");
    assert!(!direct.contains(&"s_clock_tick".to_string()), "{direct:?}");
    finish(session, &home).await;
}
