//! Reaching a server: lazy connects, shared attempts, the early call, failures and their backoff,
//! restarts after a crash or a stall, explicit reconnects.

use crate::support::*;
use parking_lot::Mutex;
use pi_mcp_connection::unix_time::now_ms;
use pi_mcp_core::adapter::{CallOptions, ErrorCode, ServerStateName, StartOptions};
use pi_mcp_core::events::Event;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn opts(call_id: &str) -> CallOptions {
    CallOptions {
        call_id: Some(call_id.into()),
        ..CallOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_starts_nothing() {
    let home = Home::new(json!({ "a": server(&[]), "b": server(&[]) }));
    let session = home.open();
    let status = session.adapter.status();
    assert!(
        text(&status).starts_with("MCP: 0/2 servers connected"),
        "{}",
        text(&status)
    );
    assert_eq!(
        part!(status, Status).servers[0].state,
        ServerStateName::NotConnected
    );
    assert!(home.processes().is_empty());
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_connects_only_the_server_its_prefix_names() {
    let home = Home::new(json!({ "first": server(&[]), "second": server(&[]) }));
    let session = home.open();
    let called = session.call("first_echo", json!({ "text": "hi" })).await;
    assert_eq!(text(&called), "echo: hi");
    assert_eq!(
        home.processes().len(),
        1,
        "the other server was not started"
    );
    let connected = session
        .event("connected", |e| matches!(e, Event::Connected { .. }))
        .await;
    assert_eq!(
        connected,
        Event::Connected {
            server: "first".into(),
            tools: 8
        }
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_process() {
    let home = Home::new(json!({ "s": counted(&[]) }));
    let session = home.open();
    let calls = (0..8).map(|i| {
        let adapter = session.adapter.clone();
        async move {
            let text = format!("call {i}");
            let answer = adapter
                .call(
                    "s_echo",
                    args(json!({ "text": text })),
                    CallOptions::default(),
                )
                .await;
            assert_eq!(answer.joined_text(), format!("echo: call {i}"));
        }
    });
    futures::future::join_all(calls).await;
    assert_eq!(home.starts(), 1);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_tool_is_called_before_the_listing_which_follows_when_idle() {
    let home = Home::new(json!({ "s": server(&["announce-at-start"]) }));
    let first = home.open();
    let seen = first.call("s_seen", json!({})).await;
    assert_eq!(
        text(&seen),
        "methods: initialize, notifications/initialized, tools/list, tools/call"
    );
    wait_for("the cache", || {
        home.cache()["servers"]["s"].is_object().then_some(())
    })
    .await;
    finish(first, &home).await;

    let second = home.open();
    let cold = second.call("s_seen", json!({})).await;
    assert_eq!(
        text(&cold),
        "methods: initialize, notifications/initialized, tools/call"
    );
    second
        .event("the listing", |e| matches!(e, Event::Connected { .. }))
        .await;
    let after = second.call("s_seen", json!({})).await;
    assert_eq!(
        text(&after),
        "methods: initialize, notifications/initialized, tools/call, tools/list, tools/call"
    );
    finish(second, &home).await;
}

/// A connection is told as it starts and as it opens, not only once listed: a call of a cached
/// tool goes before the listing, which waits until the server is idle (Pi's footer, read at
/// each event, said 0/1 all along while calls kept the server busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_is_told_as_it_opens_before_its_listing() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let first = home.open();
    first.call("s_echo", json!({ "text": "warm" })).await;
    wait_for("the cache", || {
        home.cache()["servers"]["s"].is_object().then_some(())
    })
    .await;
    finish(first, &home).await;

    let second = home.open();
    // Each event with the footer as read when it arrives, as the Pi extension reads it.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (sink, adapter) = (seen.clone(), Arc::downgrade(&second.adapter));
    second.adapter.on_event(Arc::new(move |e| {
        let footer = adapter.upgrade().and_then(|a| a.footer());
        sink.lock().push((e, footer));
    }));
    second.adapter.start(StartOptions::default()); // as Pi does before its first request
    let called = second.call("s_echo", json!({ "text": "hi" })).await;
    assert_eq!(text(&called), "echo: hi");
    let opened = wait_for("the opened event", || {
        let seen = seen.lock();
        seen.iter()
            .position(|(e, _)| matches!(e, Event::Opened { .. }))
            .map(|at| (at, seen[at].clone()))
    })
    .await;
    assert_eq!(
        opened.1,
        (
            Event::Opened { server: "s".into() },
            Some("MCP 1/1 connected".to_string())
        )
    );
    let before: Vec<Event> = seen.lock()[..opened.0]
        .iter()
        .map(|(e, _)| e.clone())
        .collect();
    assert_eq!(before, [Event::Connecting { server: "s".into() }]);
    finish(second, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_tool_the_server_no_longer_has_is_unknown_after_the_listing() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let cache = json!({ "version": 1, "servers": { "s": {
        "configHash": config_hash(&home, "s"),
        "tools": [{ "name": "vanished", "inputSchema": { "type": "object" } }],
        "resources": [], "cachedAt": now_ms() } } });
    std::fs::write(home.agent.join("mcp-cache.json"), cache.to_string()).unwrap();
    let session = home.open();
    let gone = session.call("s_vanished", json!({})).await;
    assert_eq!(code(&gone), "tool_not_found", "{}", text(&gone));
    assert!(
        text(&gone).contains("s_echo"),
        "suggestions name what it has now: {}",
        text(&gone)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_server_is_left_alone_for_the_backoff_and_connect_overrides_it() {
    let home = Home::new(json!({ "flaky": counted(&["exit-at-start"]) }));
    let session = home.open();
    let first = session.call("flaky_anything", json!({})).await;
    assert_eq!(code(&first), "server_unavailable");
    assert!(
        text(&first).contains("exited with code 2 before answering `initialize`"),
        "{}",
        text(&first)
    );
    assert!(
        text(&first).contains("missing API key TEST_TOKEN"),
        "stderr tail: {}",
        text(&first)
    );
    let second = session.call("flaky_anything", json!({})).await;
    assert!(
        text(&second).contains("not available (failed 0 s ago"),
        "{}",
        text(&second)
    );
    assert_eq!(home.starts(), 1, "no attempt during the backoff");
    let connect = session.adapter.connect("flaky").await;
    assert_eq!(code(&connect), "connect_failed");
    assert_eq!(home.starts(), 2, "connect ignores the backoff");
    tokio::time::sleep(Duration::from_millis(900)).await;
    session.call("flaky_anything", json!({})).await;
    assert_eq!(home.starts(), 3, "tried again after the backoff");
    let failed = session.count(|e| {
        matches!(
            e,
            Event::Failed {
                needs_auth: false,
                ..
            }
        )
    });
    assert_eq!(failed, 3);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_failures_name_the_cause() {
    let home = Home::new(json!({
        "missing": { "command": "no-such-mcp-test-binary" },
        "nowhere": { "command": test_server(), "cwd": "/no/such/dir" },
        "silent": { "command": test_server(), "args": ["hang-on-init"], "requestTimeoutMs": 300 },
    }));
    let session = home.open();
    let expect = [
        (
            "missing",
            "cannot start `no-such-mcp-test-binary`: command not found",
        ),
        ("nowhere", "working directory /no/such/dir does not exist"),
        ("silent", "did not answer `initialize` within 0.3 s"),
    ];
    for (name, why) in expect {
        let failed = session
            .adapter
            .call(&format!("{name}_x"), Map::new(), CallOptions::default())
            .await;
        assert_eq!(code(&failed), "server_unavailable", "{name}");
        assert!(text(&failed).contains(why), "{name}: {}", text(&failed));
    }
    let status = text(&session.adapter.status());
    assert!(
        status.contains("✗ missing: failed 0 s ago: cannot start"),
        "{status}"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_the_call_at_once_and_the_next_call_restarts_the_server() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    session.call("s_echo", json!({})).await;
    let started = Instant::now();
    let crashed = session.call("s_crash", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(code(&crashed), "connection_lost");
    assert!(
        text(&crashed).contains("exited with code 3"),
        "{}",
        text(&crashed)
    );
    assert!(
        text(&crashed).contains("segfault in handler (simulated)"),
        "{}",
        text(&crashed)
    );
    session
        .event("disconnected", |e| matches!(e, Event::Disconnected { .. }))
        .await;
    let again = session.call("s_echo", json!({ "text": "back" })).await;
    assert_eq!(text(&again), "echo: back");
    session
        .event("reconnected", |e| matches!(e, Event::Reconnected { .. }))
        .await;
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_keeps_a_server_that_still_answers_pings() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    session.call("s_echo", json!({})).await;
    let pid = home.processes();
    let opts = CallOptions {
        timeout_ms: Some(200),
        ..CallOptions::default()
    };
    let hung = session.adapter.call("s_hang", Map::new(), opts).await;
    assert_eq!(code(&hung), "timeout");
    assert!(
        text(&hung).contains("no answer within 0.2 s"),
        "{}",
        text(&hung)
    );
    let after = session.call("s_echo", json!({ "text": "still" })).await;
    assert_eq!(text(&after), "echo: still");
    assert_eq!(home.processes(), pid, "kept");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_is_restarted_on_next_use() {
    let home = Home::new(json!({ "s": { "command": test_server(), "requestTimeoutMs": 300 } }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    session.call("s_echo", json!({})).await;
    let before = home.processes();
    let frozen = session.call("s_freeze", json!({})).await;
    assert_eq!(code(&frozen), "timeout");
    let after = session.call("s_echo", json!({ "text": "back" })).await;
    assert_eq!(text(&after), "echo: back");
    let reason = session
        .event("disconnected", |e| matches!(e, Event::Disconnected { .. }))
        .await;
    assert!(
        format!("{reason:?}").contains("did not answer a ping within 0.3 s"),
        "{reason:?}"
    );
    session
        .event("reconnected", |e| matches!(e, Event::Reconnected { .. }))
        .await;
    let now = wait_for("the old process to go", || {
        (home.processes().len() == 1).then(|| home.processes())
    })
    .await;
    assert_ne!(now, before);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_aborts_a_running_call() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    session.call("s_echo", json!({})).await;
    let adapter = session.adapter.clone();
    let running =
        tokio::spawn(async move { adapter.call("s_hang", Map::new(), opts("c-1")).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancelled = Instant::now();
    session.adapter.cancel("c-1");
    let aborted = running.await.unwrap();
    assert!(cancelled.elapsed() < Duration::from_secs(1));
    assert_eq!(code(&aborted), "aborted");
    assert!(text(&aborted).contains("aborted; the server was told to stop"));
    let seen = session.call("s_seen", json!({})).await;
    assert!(
        text(&seen).contains("notifications/cancelled"),
        "{}",
        text(&seen)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_events_with_the_call_id_and_extends_the_timeout() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    let opts = CallOptions {
        timeout_ms: Some(400),
        ..opts("slow-1")
    };
    let done = session
        .adapter
        .call("s_slow", args(json!({ "steps": 5, "delayMs": 150 })), opts)
        .await;
    assert_eq!(text(&done), "slow done after 5 steps");
    let progress: Vec<String> = session
        .events
        .lock()
        .iter()
        .filter_map(|e| match e {
            Event::Progress { call_id, text, .. } if call_id == "slow-1" => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 5, "{progress:?}");
    assert_eq!(progress[0], "s_slow: 1/5 (step 1)");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_reconnects_share_one_new_process_and_stop_the_old() {
    let home = Home::new(json!({ "s": counted(&[]) }));
    let session = home.open();
    session.call("s_echo", json!({})).await;
    let old = home.processes();
    let connects = (0..5).map(|_| session.adapter.connect("s"));
    for outcome in futures::future::join_all(connects).await {
        assert!(!outcome.is_error, "{}", text(&outcome));
        assert_eq!(outcome.details.mode.as_str(), "connect");
    }
    assert_eq!(home.starts(), 2, "one process for the five reconnects");
    let now = home.processes();
    assert_eq!(now.len(), 1);
    assert_ne!(now, old, "the old process was replaced");
    assert_eq!(session.count(|e| matches!(e, Event::Failed { .. })), 0);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnected_server_is_announced_as_such() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    assert!(!session.adapter.connect("s").await.is_error);
    assert!(!session.adapter.connect("s").await.is_error);
    let kinds: Vec<&str> = session
        .events
        .lock()
        .iter()
        .filter_map(|e| match e {
            Event::Connected { .. } => Some("connected"),
            Event::Reconnected { .. } => Some("reconnected"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["connected", "reconnected"]);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_without_its_token_needs_auth() {
    let home = Home::new(json!({
        "api": { "url": "http://127.0.0.1:9/mcp", "auth": "bearer", "bearerTokenEnv": "NO_SUCH_TOKEN_VAR" }
    }));
    let session = home.open();
    let listed = session.adapter.list("api", Default::default()).await;
    assert_eq!(code(&listed), ErrorCode::AuthRequired.as_str());
    assert!(
        text(&listed).contains(
            "needs authentication: `bearerTokenEnv` names NO_SUCH_TOKEN_VAR, which is not set"
        ),
        "{}",
        text(&listed)
    );
    let connect = session.adapter.connect("api").await;
    assert_eq!(code(&connect), ErrorCode::AuthRequired.as_str());
    let failed = session
        .event("failed", |e| matches!(e, Event::Failed { .. }))
        .await;
    assert!(
        matches!(
            failed,
            Event::Failed {
                needs_auth: true,
                ..
            }
        ),
        "{failed:?}"
    );
    assert!(text(&session.adapter.status()).contains("🔒 api: needs authentication"));
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_configured_and_disabled_servers_are_named() {
    let home = Home::new(
        json!({ "on": server(&[]), "off": { "command": test_server(), "disabled": true } }),
    );
    let session = home.open();
    let missing = session.adapter.list("nope", Default::default()).await;
    assert_eq!(code(&missing), "server_not_found");
    assert!(
        text(&missing).contains("Server \"nope\" not found. Configured servers: on."),
        "{}",
        text(&missing)
    );
    let off = session.adapter.connect("off").await;
    assert_eq!(code(&off), "server_disabled");
    assert!(text(&off).contains("is disabled in"), "{}", text(&off));
    assert!(home.processes().is_empty());
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_starts_after_shutdown() {
    let home = Home::new(json!({ "s": counted(&[]) }));
    let session = home.open();
    session.adapter.shutdown().await;
    let started = Instant::now();
    let late = session.call("s_echo", json!({})).await;
    assert!(started.elapsed() < Duration::from_millis(200));
    assert_eq!(code(&late), "shut_down");
    let connect = session.adapter.connect("s").await;
    assert_eq!(code(&connect), "shut_down");
    session.adapter.start(Default::default());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(home.starts(), 0);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_racing_shutdown_leaves_no_server() {
    let home = Home::new(json!({ "s": server(&["slow-init=200"]) }));
    let session = home.open();
    let adapter = session.adapter.clone();
    let racing = tokio::spawn(async move {
        adapter
            .call("s_echo", Map::new(), CallOptions::default())
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    session.adapter.shutdown().await;
    let outcome = racing.await.unwrap();
    assert!(outcome.is_error, "{}", text(&outcome));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(home.processes().is_empty());
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_adapter_stops_its_servers() {
    let home = Home::new(json!({ "s": { "command": test_server(), "lifecycle": "keep-alive" } }));
    let session = home.open();
    session.adapter.start(Default::default());
    session
        .event("connected", |e| matches!(e, Event::Connected { .. }))
        .await;
    assert_eq!(home.processes().len(), 1);
    drop(session);
    wait_for("the server to stop once the adapter is gone", || {
        home.processes().is_empty().then_some(())
    })
    .await;
}

/// The `configHash` the cache holds for server `name` of `home`.
fn config_hash(home: &Home, name: &str) -> String {
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(home.agent.join("mcp.json")).unwrap())
            .unwrap();
    let env = [("HOME".to_string(), home.root.display().to_string())]
        .into_iter()
        .collect();
    pi_mcp_core::cache::config_hash(&config["mcpServers"][name], &env)
}
