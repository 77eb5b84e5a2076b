//! MCP Apps: the `io.modelcontextprotocol/ui` extension declared from the config (never from
//! the session's mode), the tools only an app may call kept from the model, and the "always"
//! a user gives a server's apps.

use crate::support::*;
use futures::future::BoxFuture;
use pi_mcp_connection::elicitation::present::Question as Shown;
use pi_mcp_connection::pool::Reply;
use pi_mcp_core::approval::present::{self, ApprovalAnswer};
use pi_mcp_core::events::Event;
use serde_json::{json, Value};
use std::sync::Arc;

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
        said.contains("settings.ui") && said.contains("got number 3"),
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
        json!({ "s": { "command": test_server(), "args": ["apps"], "directTools": true } }),
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

/// The choice of a person who never answers.
const NEVER: &str = "never";

/// A person who answers every question with `choice` where it is offered, else "once" (never:
/// [`NEVER`]; a name no option has, as it is), keeping the questions.
struct Consenting {
    choice: &'static str,
    asked: parking_lot::Mutex<Vec<present::Question>>,
}

impl pi_mcp_core::adapter::FrontEnd for Consenting {
    fn elicit(&self, _: Shown) -> BoxFuture<'static, Option<Reply>> {
        Box::pin(async { None })
    }

    fn sample(
        &self,
        _: pi_mcp_core::sampling::Request,
    ) -> BoxFuture<'static, Option<pi_mcp_core::sampling::Answer>> {
        Box::pin(async { None })
    }

    fn withdraw(&self, _: u64) {}

    fn approve(&self, question: present::Question) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let offered = question
            .options
            .iter()
            .any(|o| o.choice.as_str() == self.choice);
        let unknown = present::Choice::named(self.choice).is_none();
        let choice = if offered || unknown {
            self.choice
        } else {
            "once"
        };
        self.asked.lock().push(question);
        if self.choice == NEVER {
            return Box::pin(futures::future::pending());
        }
        Box::pin(async move { Some(ApprovalAnswer::named(Some(choice))) })
    }
}

/// Opens the clock's app in `session` (apps on, `person` answering): where its page's bridge is.
async fn open_clock(session: &Session, person: Arc<Consenting>) -> url::Url {
    session.adapter.attach_front_end(person);
    let (url, _) = clock_opened(session).await;
    url::Url::parse(&url).unwrap()
}

/// Turns apps on in `session` and calls the clock: the opened event's URL and text.
async fn clock_opened(session: &Session) -> (String, String) {
    session
        .adapter
        .enable_apps(b"/* host */".to_vec(), json!({}));
    session.call("s_clock", json!({})).await;
    let opened = session
        .event(
            "the app",
            |e| matches!(e, Event::App { kind, .. } if kind == "opened"),
        )
        .await;
    let Event::App { url, text, .. } = opened else {
        unreachable!()
    };
    (url, text)
}

/// Sends `method` with `params` to the bridge at `page` as the page would; its answer.
async fn ask_bridge(page: &url::Url, method: &str, params: Value) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let token = page.query().unwrap().trim_start_matches("t=");
    let port = page.port().unwrap();
    let body = json!({ "method": method, "params": params }).to_string();
    let request = format!(
        "POST {}rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pi-Mcp-Token: {token}\r\nContent-Length: {}\r\n\r\n{body}",
        page.path(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

async fn message_from_the_clock(session: &Session, person: Arc<Consenting>) -> Value {
    let page = open_clock(session, person).await;
    let hi = json!({ "content": [{ "type": "text", "text": "hi" }] });
    ask_bridge(&page, "ui/message", hi).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_s_calls_pass_the_approval_gate_saying_who_asks_and_its_logs_and_what_is_not_honoured_go_to_mcp_log(
) {
    let entry =
        json!({ "command": test_server(), "args": ["apps"], "approveTools": ["clock_tick"] });
    let home = Home::new(json!({ "s": entry }));
    let person = Arc::new(Consenting {
        choice: "once",
        asked: Default::default(),
    });
    let session = home.open();
    let page = open_clock(&session, person.clone()).await;
    let tick = json!({ "name": "clock_tick", "arguments": {} });
    let answer = ask_bridge(&page, "tools/call", tick).await;
    assert_eq!(answer["result"]["content"][0]["text"], "clock_tick called");
    let log = json!({ "level": "warning", "logger": "ui", "data": "the app logs\u{1b}[2J" });
    assert_eq!(
        ask_bridge(&page, "notifications/message", log).await,
        json!({ "result": {} })
    );
    let asked = person.asked.lock().clone();
    assert_eq!(asked.len(), 1);
    let title = &asked[0].title;
    assert!(
        title.starts_with("MCP server \"s\" wants to run clock_tick\nAsked by its app (clock in your browser), not by the model.\n"),
        "{title}"
    );
    finish(session, &home).await;
    let logged = std::fs::read_to_string(home.agent.join("mcp.log")).unwrap();
    assert!(
        logged.contains("[s] warning app of clock: ui: the app logs\n"),
        "{logged}"
    );
    // What the resource declared and this host does not honour is said once the app is read.
    assert!(
        logged.contains("[s] warning app ui://clock/app.html: declared but not honoured: domain \"clock.example\": a host on 127.0.0.1 has no dedicated origins to give"),
        "{logged}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_is_kept_for_the_server_s_apps_until_revoked() {
    let home = Home::new(json!({ "s": server(&["apps"]) }));
    let always = Arc::new(Consenting {
        choice: "always",
        asked: Default::default(),
    });
    let session = home.open();
    let answer = message_from_the_clock(&session, always.clone()).await;
    assert_eq!(answer, json!({ "result": {} }));
    let asked = always.asked.lock().clone();
    let labels: Vec<&str> = asked[0].options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Allow once",
            "Allow for this app session",
            "Always allow the apps of \"s\" (until /mcp apps revoke)",
            "Deny"
        ]
    );
    let kept = session.adapter.app_grants();
    assert_eq!(kept, [("s".to_string(), "conversation".to_string())]);
    let file = home.agent.join("mcp-apps-grants.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains(&test_server()),
        "names and a hash only"
    );
    finish(session, &home).await;

    // Another Pi session: not asked again, until revoked.
    let denying = Arc::new(Consenting {
        choice: "deny",
        asked: Default::default(),
    });
    let session = home.open();
    let answer = message_from_the_clock(&session, denying.clone()).await;
    assert_eq!(answer, json!({ "result": {} }));
    assert!(denying.asked.lock().is_empty());
    assert_eq!(session.adapter.revoke_app_grants(Some("s")), Ok(1));
    assert_eq!(session.adapter.revoke_app_grants(None), Ok(0));
    finish(session, &home).await;
    // Asked again once revoked: Deny, and an answer naming no option, deny alike.
    let unknown = Arc::new(Consenting {
        choice: "maybe",
        asked: Default::default(),
    });
    for person in [denying, unknown] {
        let session = home.open();
        let answer = message_from_the_clock(&session, person.clone()).await;
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("did not let"),
            "{answer}"
        );
        assert_eq!(person.asked.lock().len(), 1);
        finish(session, &home).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_app_asks_together_is_one_dialog_and_always_keeps_each_kind() {
    let home = Home::new(json!({ "s": server(&["apps"]) }));
    let always = Arc::new(Consenting {
        choice: "always",
        asked: Default::default(),
    });
    let session = home.open();
    let page = open_clock(&session, always.clone()).await;
    let hi = json!({ "content": [{ "type": "text", "text": "hi\u{1b}[2J there" }] });
    let tick = json!({ "name": "clock_tick", "arguments": { "apiKey": "sk-123", "note": "x".repeat(400) } });
    let (said, ticked) = tokio::join!(
        ask_bridge(&page, "ui/message", hi),
        ask_bridge(&page, "tools/call", tick)
    );
    assert_eq!(said, json!({ "result": {} }));
    assert_eq!(ticked["result"]["content"][0]["text"], "clock_tick called");
    let asked = always.asked.lock().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let title = &asked[0].title;
    assert!(
        title.starts_with("The app of clock (MCP server \"s\") asks:\n"),
        "{title}"
    );
    assert!(title.contains("- to write to this conversation (its messages reach the model, marked as the app's): \"hi there\""), "{title}");
    assert!(title.contains("- to call tools of its server (now clock_tick; only those the server lets apps call)\n  Arguments:\n    apiKey: (hidden)\n    note: \"xxx"), "{title}");
    assert!(
        !title.contains("sk-123") && !title.contains(&"x".repeat(400)),
        "{title}"
    );
    assert!(title.ends_with("\nOne answer for all 2."), "{title}");
    let mut kept = session.adapter.app_grants();
    kept.sort();
    assert_eq!(
        kept,
        [
            ("s".to_string(), "conversation".to_string()),
            ("s".to_string(), "tools".to_string())
        ]
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_approval_gate_asks_about_sent_with_a_message_is_in_the_one_dialog() {
    let entry =
        json!({ "command": test_server(), "args": ["apps"], "approveTools": ["clock_tick"] });
    let home = Home::new(json!({ "s": entry }));
    let person = Arc::new(Consenting {
        choice: "session",
        asked: Default::default(),
    });
    let session = home.open();
    let page = open_clock(&session, person.clone()).await;
    let hi = json!({ "content": [{ "type": "text", "text": "hi" }] });
    let tick = json!({ "name": "clock_tick", "arguments": { "token": "sk-123" } });
    let (said, ticked) = tokio::join!(
        ask_bridge(&page, "ui/message", hi.clone()),
        ask_bridge(&page, "tools/call", tick.clone())
    );
    assert_eq!(said, json!({ "result": {} }));
    assert_eq!(ticked["result"]["content"][0]["text"], "clock_tick called");
    let asked = person.asked.lock().clone();
    assert_eq!(asked.len(), 1, "the gate does not ask again: {asked:?}");
    let title = &asked[0].title;
    assert!(title.contains("\n- to run clock_tick (`approveTools` asks before each call: allowed this once)\n  Hints: none (a tool without hints may change or delete things)\n  Arguments:\n    token: (hidden)\n  Asked because of `approveTools` in "), "{title}");
    assert!(!title.contains("sk-123"), "{title}");
    // "For this app session" covers the conversation; the gate asks before the next call.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(
        ask_bridge(&page, "ui/message", hi).await,
        json!({ "result": {} })
    );
    assert_eq!(person.asked.lock().len(), 1);
    let ticked = ask_bridge(&page, "tools/call", tick).await;
    assert_eq!(ticked["result"]["content"][0]["text"], "clock_tick called");
    let asked = person.asked.lock().clone();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[1]
            .title
            .starts_with("MCP server \"s\" wants to run clock_tick"),
        "alone, the gate's own dialog: {}",
        asked[1].title
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_dialog_refuses_all_it_lists() {
    let home = Home::with(
        json!({ "s": server(&["apps"]) }),
        json!({ "approvalTimeoutMs": 100 }),
    );
    let nobody = Arc::new(Consenting {
        choice: NEVER,
        asked: Default::default(),
    });
    let session = home.open();
    let page = open_clock(&session, nobody.clone()).await;
    let hi = json!({ "content": [{ "type": "text", "text": "hi" }] });
    let tick = json!({ "name": "clock_tick", "arguments": {} });
    let (said, ticked) = tokio::join!(
        ask_bridge(&page, "ui/message", hi),
        ask_bridge(&page, "tools/call", tick)
    );
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not let"),
        "{said}"
    );
    assert!(
        ticked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not let"),
        "{ticked}"
    );
    assert_eq!(nobody.asked.lock().len(), 1);
    assert_eq!(
        nobody.asked.lock()[0].timeout,
        std::time::Duration::from_millis(100)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_none_serves_the_app_and_opens_nothing_and_false_serves_nothing() {
    let entry = |ui: Value| json!({ "command": test_server(), "args": ["apps"], "ui": ui });
    let home = Home::new(json!({ "s": entry(json!("none")), "off": entry(json!(false)) }));
    let session = home.open_in(
        fast(),
        Default::default(),
        &[("BROWSER", "/nonexistent/browser")],
    );
    let (url, text) = clock_opened(&session).await;
    assert!(
        text.ends_with(&format!("is at {url} (settings: ui \"none\")")),
        "{text}"
    );
    assert_eq!(session.adapter.open_apps().len(), 1);

    let called = session.call("off_clock", json!({})).await;
    assert_eq!(code(&called), "", "the model still gets the result");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let apps = session.count(|e| matches!(e, Event::App { .. }));
    assert_eq!(apps, 1, "nothing for a server with ui: false");
    finish(session, &home).await;
}
