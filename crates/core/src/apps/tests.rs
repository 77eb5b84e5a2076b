//! The listeners and the bridge over real sockets, with a gateway of our own behind them.

use super::*;
use bridge::MAX_ASKS;
use futures::future::{BoxFuture, FutureExt};
use parking_lot::Mutex;
use pi_mcp_connection::clean::Link;
use policy::{Csp, Frame, MAX_BODY, MAX_MESSAGE};
use serde_json::Map;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The clock server's tools, and what the app did.
#[derive(Default)]
struct Gateway {
    calls: Mutex<Vec<String>>,
    asked: Mutex<Vec<Vec<Ask>>>,
    answer: Mutex<Option<Grant>>,
    /// How long the person takes to answer.
    slow: Mutex<Duration>,
    /// The approval gate asks before each call (its dialog stands for the app's).
    approval: Mutex<bool>,
    said: Mutex<Vec<(ToConversation, String)>>,
    ended: Mutex<Vec<String>>,
}

impl AppHost for Gateway {
    fn tool(&self, server: &str, name: &str) -> Option<Arc<Value>> {
        let visibility = match name {
            "clock" => json!(["model", "app"]),
            "clock_tick" => json!(["app"]),
            "clock_reset" => json!(["model"]),
            _ => return None,
        };
        (server == "clock").then(|| {
            Arc::new(json!({ "name": name, "_meta": { "ui": { "visibility": visibility } } }))
        })
    }

    fn call_tool(
        &self,
        app: &AppRef,
        name: &str,
        _: Map<String, Value>,
        allowed: bool,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let allowed = if allowed {
            " (allowed in the app's dialog)"
        } else {
            ""
        };
        self.calls
            .lock()
            .push(format!("{}/{name}{allowed}", app.server));
        let text = format!("{name} called");
        async move { Ok(json!({ "content": [{ "type": "text", "text": text }] })) }.boxed()
    }

    fn resources(
        &self,
        _: &AppRef,
        method: &'static str,
        _: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        async move { Ok(json!({ "method": method })) }.boxed()
    }

    fn ask(&self, _: &AppRef, asks: Vec<Ask>) -> BoxFuture<'static, Grant> {
        self.asked.lock().push(asks);
        let answer = self.answer.lock().unwrap_or(Grant::Deny);
        let slow = *self.slow.lock();
        async move {
            tokio::time::sleep(slow).await;
            answer
        }
        .boxed()
    }

    fn granted_always(&self, _: &str, _: &Ask) -> bool {
        false
    }

    fn approval_asks(&self, _: &AppRef, _: &str) -> bool {
        *self.approval.lock()
    }

    fn to_conversation(&self, _: &AppRef, kind: ToConversation, text: String) {
        self.said.lock().push((kind, text));
    }

    fn log(&self, _: &AppRef, _: &Value) {}

    fn open_link(&self, _: &Link) -> Result<(), String> {
        Ok(())
    }

    fn ended(&self, app: &AppRef) {
        self.ended.lock().push(app.tool.clone());
    }
}

fn document(csp: Value) -> Document {
    Document {
        html: "<!doctype html><p>the clock</p>".into(),
        csp: Csp::of(Some(&json!({ "csp": csp }))),
        frame: Frame::of(Some(
            &json!({ "permissions": { "camera": {} }, "prefersBorder": true }),
        )),
        tool: json!({ "name": "clock" }),
    }
}

async fn shown(gateway: &Arc<Gateway>) -> (Apps, Shown) {
    let apps = Apps::new(
        gateway.clone(),
        b"/* host */".to_vec(),
        json!({ "theme": "dark" }),
    );
    let shown = apps
        .show(
            "clock",
            "clock",
            document(json!({})),
            json!({ "a": 1 }),
            json!({ "content": [] }),
        )
        .await
        .unwrap();
    (apps, shown)
}

/// A raw request to `port`: its status line's code, head and body.
async fn send(port: u16, request: String) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_string(), body.to_string())
}

fn get(port: u16, target: &str, host: &str) -> String {
    format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n")
}

fn post(port: u16, target: &str, token: &str, body: &str) -> String {
    format!(
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pi-Mcp-Token: {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The page's path and token, from its URL.
fn parts(url: &str) -> (String, String) {
    let url = url::Url::parse(url).unwrap();
    let token = url.query().unwrap().strip_prefix("t=").unwrap().to_string();
    (url.path().to_string(), token)
}

#[tokio::test]
async fn every_request_needs_the_host_s_name_and_the_session_s_token() {
    let started = std::time::Instant::now();
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, app) = apps.ports().unwrap();
    assert_ne!(host, app, "two origins");
    let (path, token) = parts(&shown.url);

    // The opener's address: no token in it, good for one load (a GET) of the page alone.
    let launch = url::Url::parse(shown.launch.as_deref().unwrap()).unwrap();
    assert!(!launch.as_str().contains(&token), "{launch}");
    let once = format!("{}?{}", launch.path(), launch.query().unwrap());
    let code_only = once.replace(&path, &format!("{path}host.js"));
    assert_eq!(send(host, get(host, &code_only, "127.0.0.1")).await.0, 404);
    let head_request = get(host, &once, "127.0.0.1").replacen("GET", "HEAD", 1);
    assert_eq!(
        send(host, head_request).await.0,
        404,
        "a HEAD uses nothing up"
    );
    let (code, _, page) = send(host, get(host, &once, "127.0.0.1")).await;
    assert_eq!(code, 200);
    assert!(
        page.contains(&format!(r#""address":"{path}?t={token}""#)),
        "{page}"
    );
    assert_eq!(
        send(host, get(host, &once, "127.0.0.1")).await.0,
        404,
        "used up"
    );

    let (code, head, page) = send(host, get(host, &format!("{path}?t={token}"), "127.0.0.1")).await;
    assert_eq!(code, 200, "{head}");
    assert!(
        head.contains(&format!("frame-src http://127.0.0.1:{app};")),
        "{head}"
    );
    assert!(head.contains("frame-ancestors 'none'"), "{head}");
    assert!(page.contains("allow-scripts allow-forms") && !page.contains("allow-same-origin"));
    let settings: Value = {
        let start = page.find("application/json\">").unwrap() + "application/json\">".len();
        let end = page[start..].find("</script>").unwrap() + start;
        serde_json::from_str(&page[start..end]).unwrap()
    };
    assert_eq!(settings["hostContext"]["theme"], "dark");
    assert_eq!(settings["hostContext"]["toolInfo"]["tool"]["name"], "clock");
    let doc = settings["document"].as_str().unwrap().to_string();
    assert!(
        doc.starts_with(&format!("http://127.0.0.1:{app}/doc/")),
        "{doc}"
    );

    let refused = [
        (host, get(host, &path, "127.0.0.1")),
        (
            host,
            get(
                host,
                &format!("{path}?t={}", crate::loopback::random_token()),
                "127.0.0.1",
            ),
        ),
        (
            host,
            get(host, &format!("{path}?t={}", &token[..42]), "127.0.0.1"),
        ),
        (
            host,
            get(host, &format!("/app/nobody/?t={token}"), "127.0.0.1"),
        ),
        (app, get(app, &format!("{path}?t={token}"), "127.0.0.1")),
    ];
    for (port, request) in refused {
        let (code, _, body) = send(port, request.clone()).await;
        assert_eq!(code, 404, "{request}");
        assert!(!body.contains(&token), "nothing of the session: {body}");
    }
    for name in ["localhost", "attacker.example", "127.0.0.1.nip.io"] {
        let (code, _, _) = send(host, get(host, &format!("{path}?t={token}"), name)).await;
        assert_eq!(code, 421, "{name}");
    }

    // The document: on the app origin only, with its own token and the resource's policy.
    let doc = url::Url::parse(&doc).unwrap();
    let target = format!("{}?{}", doc.path(), doc.query().unwrap());
    let (code, head, html) = send(app, get(app, &target, "127.0.0.1")).await;
    assert_eq!(code, 200, "{head}");
    assert_eq!(html, "<!doctype html><p>the clock</p>");
    assert!(
        head.contains("Content-Security-Policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("connect-src 'none'"), "{head}");
    assert!(
        head.contains("Permissions-Policy: microphone=(), geolocation=(), clipboard-write=()")
            && !head.contains("camera="),
        "only the camera it asked for: {head}"
    );
    let with_page_token = format!("{}?t={token}", doc.path());
    assert_eq!(
        send(app, get(app, &with_page_token, "127.0.0.1")).await.0,
        404
    );
    assert_eq!(send(host, get(host, &target, "127.0.0.1")).await.0, 404);

    // The bridge takes the token in its header, never in the query.
    let rpc = format!("{path}rpc");
    let ping = r#"{"method":"ping"}"#;
    let in_query = post(host, &format!("{rpc}?t={token}"), "", ping);
    assert_eq!(send(host, in_query).await.0, 404);
    let (code, _, body) = send(host, post(host, &rpc, &token, ping)).await;
    assert_eq!((code, body.as_str()), (200, r#"{"result":{}}"#));
    apps.close().await;
    assert!(
        TcpStream::connect(("127.0.0.1", host)).await.is_err(),
        "closed"
    );
    assert_eq!(*gateway.ended.lock(), ["clock"]);
    pi_mcp_test_support::report::record(
        "A2",
        "requests to an app's listeners without its token or under another name",
        started,
        "404 without the token, with a wrong or cut one, on the other origin, in the bridge's query, with a used-up launch code; 421 for 3 other Host names; the opener's address holds no token",
    );
}

#[tokio::test]
async fn the_app_calls_its_own_server_s_tools_that_it_may() {
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let call = |name: &str| {
        let body = json!({ "method": "tools/call", "params": { "name": name, "arguments": {} } });
        post(host, &rpc, &token, &body.to_string())
    };
    let answer = |body: String| serde_json::from_str::<Value>(&body).unwrap();

    // The first call asks the user (once for the app session), unless the approval gate will.
    *gateway.answer.lock() = Some(Grant::Session);
    let ticked = answer(send(host, call("clock_tick")).await.2);
    assert_eq!(ticked["result"]["content"][0]["text"], "clock_tick called");
    assert_eq!(
        answer(send(host, call("clock")).await.2)["result"]["content"][0]["text"],
        "clock called"
    );
    assert_eq!(
        *gateway.asked.lock(),
        [vec![Ask::Tools {
            name: "clock_tick".into(),
            args: json!({})
        }]]
    );
    let reset = answer(send(host, call("clock_reset")).await.2);
    assert!(reset["error"]["message"]
        .as_str()
        .unwrap()
        .contains("for the model alone"));
    let other = answer(send(host, call("everything_echo")).await.2);
    let said = other["error"]["message"].as_str().unwrap();
    assert!(said.contains("its own server's tools only"), "{said}");
    assert_eq!(*gateway.calls.lock(), ["clock/clock_tick", "clock/clock"]);

    // Another app session, whose calls the approval gate asks about: no second dialog.
    *gateway.approval.lock() = true;
    let other = apps
        .show(
            "clock",
            "clock_reset",
            document(json!({})),
            json!({}),
            json!({}),
        )
        .await
        .unwrap();
    let (other_path, other_token) = parts(&other.url);
    let body =
        json!({ "method": "tools/call", "params": { "name": "clock_tick", "arguments": {} } });
    let said = answer(
        send(
            host,
            post(
                host,
                &format!("{other_path}rpc"),
                &other_token,
                &body.to_string(),
            ),
        )
        .await
        .2,
    );
    assert_eq!(said["result"]["content"][0]["text"], "clock_tick called");
    assert_eq!(
        gateway.asked.lock().last().unwrap(),
        &[Ask::Gated {
            name: "clock_tick".into(),
            args: json!({})
        }],
        "asked as the approval gate's question, not as the app's tools"
    );
    assert_eq!(
        gateway.calls.lock().last().unwrap(),
        "clock/clock_tick (allowed in the app's dialog)",
        "not asked again"
    );

    let read = json!({ "method": "resources/read", "params": { "uri": "ui://clock/app.html" } });
    let read = answer(
        send(host, post(host, &rpc, &token, &read.to_string()))
            .await
            .2,
    );
    assert_eq!(read["result"]["method"], "resources/read");
    for refused in [
        "ui/download-file",
        "sampling/createMessage",
        "whatever/else",
    ] {
        let body = json!({ "method": refused, "params": {} }).to_string();
        let said = answer(send(host, post(host, &rpc, &token, &body)).await.2);
        assert_eq!(said["error"]["code"], -32601, "{refused}");
    }

    // A body just under the bound is read; one far past it is refused unread.
    let padding = "x".repeat(MAX_BODY - 200);
    let near = json!({ "method": "ping", "params": { "pad": padding } }).to_string();
    assert_eq!(send(host, post(host, &rpc, &token, &near)).await.0, 200);
    let far = format!(
        "POST {rpc} HTTP/1.1\r\nHost: 127.0.0.1:{host}\r\nX-Pi-Mcp-Token: {token}\r\nContent-Length: {}\r\n\r\n",
        MAX_BODY * 40
    );
    assert_eq!(send(host, far).await.0, 413);
    apps.close().await;
}

#[tokio::test]
async fn the_conversation_hears_the_app_once_the_user_agrees_one_message_a_second() {
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let message = |text: &str| {
        let body = json!({ "method": "ui/message", "params": { "role": "user", "content": [{ "type": "text", "text": text }] } });
        post(host, &rpc, &token, &body.to_string())
    };
    let error = |body: String| {
        let value: Value = serde_json::from_str(&body).unwrap();
        value["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    *gateway.answer.lock() = Some(Grant::Session);
    assert_eq!(error(send(host, message("red\u{7}")).await.2), "");
    assert!(error(send(host, message("again")).await.2).contains("one message a second"));
    tokio::time::sleep(Duration::from_millis(1050)).await;
    let context = json!({ "method": "ui/update-model-context", "params": { "structuredContent": { "n": 2 } } });
    let context = post(host, &rpc, &token, &context.to_string());
    assert_eq!(error(send(host, context).await.2), "");
    assert_eq!(
        gateway.asked.lock().len(),
        1,
        "asked once for the app session"
    );
    let said = gateway.said.lock().clone();
    assert_eq!(
        said,
        [
            (ToConversation::Message, "red\\x07".to_string()),
            (ToConversation::Context, r#"{"n":2}"#.to_string())
        ]
    );
    let huge = "y".repeat(MAX_MESSAGE * 2);
    assert!(error(send(host, message(&huge)).await.2).contains("at most 65536"));

    // Another app session whose user says no: asked once, refused every time.
    *gateway.answer.lock() = Some(Grant::Deny);
    let shown = apps
        .show(
            "clock",
            "clock_tick",
            document(json!({})),
            json!({}),
            json!({}),
        )
        .await
        .unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    for _ in 0..3 {
        let body = json!({ "method": "ui/message", "params": { "content": [{ "type": "text", "text": "hi" }] } });
        let said = error(
            send(host, post(host, &rpc, &token, &body.to_string()))
                .await
                .2,
        );
        assert!(said.contains("did not let this app"), "{said}");
    }
    assert_eq!(gateway.asked.lock().len(), 2);
    apps.close().await;
}

#[tokio::test]
async fn the_tab_gets_each_call_and_its_closing_ends_the_session() {
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let (mut stream, mut seen) = events_of(&apps, &shown).await;
    assert!(seen.contains(r#""arguments":{"a":1}"#), "{seen}");

    // The same tool again: the same tab, the new call pushed to it.
    let again = apps
        .show(
            "clock",
            "clock",
            document(json!({})),
            json!({ "a": 2 }),
            json!({}),
        )
        .await
        .unwrap();
    assert_eq!(
        again,
        Shown {
            url: shown.url.clone(),
            launch: None,
            reused: true
        }
    );
    read_until(&mut stream, &mut seen, r#""arguments":{"a":2}"#).await;
    assert_eq!(apps.open_apps().len(), 1);

    // A reload: the page comes back within the grace and gets the last call again.
    drop(stream);
    let (stream, again) = events_of(&apps, &shown).await;
    assert!(again.contains(r#""arguments":{"a":2}"#), "{again}");
    assert!(!again.contains(r#""arguments":{"a":1}"#), "{again}");
    tokio::time::sleep(http::RELOAD_GRACE + Duration::from_millis(500)).await;
    assert!(
        gateway.ended.lock().is_empty(),
        "the reloaded tab keeps its session"
    );

    drop(stream);
    tokio::time::sleep(http::RELOAD_GRACE + Duration::from_millis(500)).await;
    assert_eq!(*gateway.ended.lock(), ["clock"], "the tab closed");
    assert!(apps.open_apps().is_empty());
    let (code, _, _) = send(host, get(host, &format!("{path}?t={token}"), "127.0.0.1")).await;
    assert_eq!(code, 404, "an ended session is gone");
    apps.close().await;
}

#[tokio::test]
async fn an_open_app_gets_a_call_s_input_at_its_start_its_cancelling_and_pi_s_theme() {
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let (mut stream, mut seen) = events_of(&apps, &shown).await;

    // The next call: its input at once, then why it has no result; the input once.
    apps.call_began("clock", "clock", json!({ "a": 3 }));
    read_until(&mut stream, &mut seen, r#""arguments":{"a":3}"#).await;
    apps.call_began("clock", "another", json!({ "a": 4 }));
    let stopped = CallEnd::Cancelled("the user stopped the call".into());
    apps.call_ended("clock", "clock", json!({ "a": 3 }), stopped);
    let cancelled = r#"{"method":"ui/notifications/tool-cancelled","params":{"reason":"the user stopped the call"}}"#;
    read_until(&mut stream, &mut seen, cancelled).await;
    assert_eq!(seen.matches(r#""arguments":{"a":3}"#).count(), 1, "{seen}");
    assert!(!seen.contains(r#""a":4"#), "another tool's call: {seen}");
    // An error result of a call whose input went before: the result alone.
    let failed = json!({ "content": [], "isError": true });
    apps.call_began("clock", "clock", json!({ "a": 5 }));
    apps.call_ended("clock", "clock", json!({ "a": 5 }), CallEnd::Result(failed));
    read_until(&mut stream, &mut seen, r#""isError":true"#).await;
    assert_eq!(seen.matches(r#""arguments":{"a":5}"#).count(), 1, "{seen}");

    // Pi's theme: the same changes nothing; another goes to the tab, and to pages to come.
    apps.set_context(Map::from_iter([("theme".into(), json!("dark"))]));
    apps.set_context(Map::from_iter([("theme".into(), json!("light"))]));
    let changed =
        r#"{"method":"ui/notifications/host-context-changed","params":{"theme":"light"}}"#;
    read_until(&mut stream, &mut seen, changed).await;
    assert_eq!(seen.matches("host-context-changed").count(), 1, "{seen}");
    let (code, _, page) = send(host, get(host, &format!("{path}?t={token}"), "127.0.0.1")).await;
    assert_eq!(code, 200);
    assert!(page.contains(r#""theme":"light""#), "{page}");
    // The frame as the resource asked: camera allowed, a border.
    assert!(page.contains(r#""allow":"camera""#), "{page}");
    assert!(page.contains(r#""border":true"#), "{page}");
    assert!(page.contains(r#""permissions":{"camera":{}}"#), "{page}");
    apps.close().await;
}

#[tokio::test]
async fn only_the_newest_arguments_the_model_is_writing_wait_for_the_page() {
    let registry = registry::Registry::default();
    let (session, _) = registry.open("clock", "clock", document(json!({})));
    session.push_partial(json!({ "t": "wr" }));
    session.push_partial(json!({ "t": "writ" }));
    session.push_input(json!({ "t": "written" }));
    session.push_partial(json!({ "t": "n" }));
    let mut waiting = vec![];
    while let Ok(Some(push)) =
        tokio::time::timeout(Duration::from_millis(50), session.next_push()).await
    {
        waiting.push(
            push["params"]["arguments"]["t"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(waiting, ["writ", "written", "n"]);
}

/// A tab's event stream of `shown`'s app session, read up to the first call's result: the
/// stream and what it said.
async fn events_of(apps: &Apps, shown: &Shown) -> (TcpStream, String) {
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let request = format!(
        "GET {path}events HTTP/1.1\r\nHost: 127.0.0.1:{host}\r\nX-Pi-Mcp-Token: {token}\r\n\r\n"
    );
    let mut stream = TcpStream::connect(("127.0.0.1", host)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = String::new();
    read_until(
        &mut stream,
        &mut seen,
        r#""method":"ui/notifications/tool-result""#,
    )
    .await;
    (stream, seen)
}

/// Reads the stream into `seen` until it holds `wanted` (5 s at most a read).
async fn read_until(stream: &mut TcpStream, seen: &mut String, wanted: &str) {
    let mut buffer = [0u8; 4096];
    while !seen.contains(wanted) {
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer));
        let n = read.await.unwrap().unwrap();
        assert!(n > 0, "the stream ended before {wanted}: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
}

#[tokio::test]
async fn messages_sent_while_the_user_is_asked_wait_for_that_one_answer() {
    let gateway = Arc::new(Gateway::default());
    *gateway.answer.lock() = Some(Grant::Session);
    *gateway.slow.lock() = Duration::from_millis(400);
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let sends = (0..5).map(|n| {
        let body = json!({ "method": "ui/message", "params": { "content": [{ "type": "text", "text": format!("n{n}") }] } });
        send(host, post(host, &rpc, &token, &body.to_string()))
    });
    let answers = futures::future::join_all(sends).await;
    assert!(answers.iter().all(|(code, _, _)| *code == 200));
    assert_eq!(gateway.asked.lock().len(), 1, "one dialog for the five");
    assert_eq!(gateway.said.lock().len(), 1, "then one message a second");
    apps.close().await;
}

#[tokio::test]
async fn a_link_is_asked_each_time_until_the_user_says_no() {
    let gateway = Arc::new(Gateway::default());
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let link = |answer: Grant| {
        *gateway.answer.lock() = Some(answer);
        let body =
            json!({ "method": "ui/open-link", "params": { "url": "https://example.com/a" } });
        send(host, post(host, &rpc, &token, &body.to_string()))
    };
    let said = |(_, _, body): (u16, String, String)| serde_json::from_str::<Value>(&body).unwrap();
    assert_eq!(said(link(Grant::Once).await), json!({ "result": {} }));
    assert_eq!(said(link(Grant::Once).await), json!({ "result": {} }));
    assert!(said(link(Grant::Deny).await)["error"].is_object());
    assert!(
        said(link(Grant::Once).await)["error"].is_object(),
        "no more asking"
    );
    assert_eq!(gateway.asked.lock().len(), 3);
    let bad = json!({ "method": "ui/open-link", "params": { "url": "javascript:alert(1)" } });
    let refused = said(send(host, post(host, &rpc, &token, &bad.to_string())).await);
    assert_eq!(
        refused["error"]["code"], -32602,
        "not a link to open: never asked"
    );
    assert_eq!(gateway.asked.lock().len(), 3);
    apps.close().await;
}

#[tokio::test]
async fn asks_sent_together_are_one_dialog_of_at_most_max_asks_with_one_answer() {
    let gateway = Arc::new(Gateway::default());
    *gateway.answer.lock() = Some(Grant::Once);
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let request = |method: &str, params: Value| {
        let body = json!({ "method": method, "params": params }).to_string();
        send(host, post(host, &rpc, &token, &body))
    };
    let tick = |n: usize| json!({ "name": "clock_tick", "arguments": { "n": n } });
    let ok = |(_, _, body): &(u16, String, String)| body.contains("\"result\"");

    // A message and a call at once: one dialog lists both; "once" lets both through.
    let hi = json!({ "content": [{ "type": "text", "text": "hi" }] });
    let (said, ticked) = tokio::join!(request("ui/message", hi), request("tools/call", tick(0)));
    assert!(ok(&said) && ok(&ticked), "{said:?} {ticked:?}");
    let asked = gateway.asked.lock().clone();
    assert_eq!(asked.len(), 1, "one dialog: {asked:?}");
    assert!(asked[0].contains(&Ask::Conversation("hi".into())));
    assert!(asked[0].contains(&Ask::Tools {
        name: "clock_tick".into(),
        args: json!({ "n": 0 })
    }));

    // "For this app session" answers the ones past the bound too; a "no" refuses all listed.
    gateway.asked.lock().clear();
    *gateway.answer.lock() = Some(Grant::Session);
    let calls = (0..MAX_ASKS + 2).map(|n| request("tools/call", tick(n)));
    assert!(futures::future::join_all(calls).await.iter().all(ok));
    assert_eq!(gateway.asked.lock().len(), 1, "the rest were decided");
    *gateway.answer.lock() = Some(Grant::Deny);
    let link = json!({ "url": "https://example.com/a" });
    let bye = json!({ "content": [{ "type": "text", "text": "bye" }] });
    let (linked, said, ticked) = tokio::join!(
        request("ui/open-link", link),
        request("ui/message", bye),
        request("tools/call", tick(0))
    );
    assert!(!ok(&linked) && !ok(&said), "{linked:?} {said:?}");
    assert!(ok(&ticked), "granted for the app session before");
    let asked = gateway.asked.lock().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[1].len(), 2, "the link and the message: {asked:?}");
    apps.close().await;
}

#[tokio::test]
async fn an_app_flooding_the_user_with_asks_gets_dialogs_of_max_asks_until_a_no() {
    let started = std::time::Instant::now();
    let gateway = Arc::new(Gateway::default());
    *gateway.answer.lock() = Some(Grant::Once);
    let (apps, shown) = shown(&gateway).await;
    let (host, _) = apps.ports().unwrap();
    let (path, token) = parts(&shown.url);
    let rpc = format!("{path}rpc");
    let flood = |n: usize| {
        let calls = (0..n).map(|n| {
            let body = json!({ "method": "tools/call", "params": { "name": "clock_tick", "arguments": { "n": n } } });
            send(host, post(host, &rpc, &token, &body.to_string()))
        });
        futures::future::join_all(calls)
    };
    let allowed = |answers: &[(u16, String, String)]| {
        answers
            .iter()
            .filter(|(_, _, body)| body.contains("\"result\""))
            .count()
    };
    // "Once" decides none of the rest: dialogs of at most MAX_ASKS, each call answered.
    let answers = flood(2 * MAX_ASKS + 4).await;
    assert_eq!(allowed(&answers), 2 * MAX_ASKS + 4);
    let sizes: Vec<usize> = gateway.asked.lock().iter().map(Vec::len).collect();
    assert_eq!(sizes, [MAX_ASKS, MAX_ASKS, 4]);

    // Calls the approval gate asks about: a "no" to the first dialog refuses the rest unasked.
    gateway.asked.lock().clear();
    *gateway.approval.lock() = true;
    *gateway.answer.lock() = Some(Grant::Deny);
    let answers = flood(2 * MAX_ASKS + 4).await;
    assert_eq!(allowed(&answers), 0);
    let sizes: Vec<usize> = gateway.asked.lock().iter().map(Vec::len).collect();
    assert_eq!(sizes, [MAX_ASKS], "no more dialogs after the no");
    assert_eq!(allowed(&flood(3).await), 0);
    assert_eq!(gateway.asked.lock().len(), 1);
    apps.close().await;
    pi_mcp_test_support::report::record(
        "A3",
        "an app asking for 20 calls at once, then 20 the approval gate asks about",
        started,
        "dialogs of 8, 8 and 4 asks, each call answered; after a no to the first dialog of 8, the other 12 and 3 later refused unasked",
    );
}
