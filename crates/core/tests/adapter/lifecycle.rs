//! Start-up, the first-run cache fill, idle stops, keep-alive servers and shutdown.

use crate::support::*;
use pi_mcp_core::adapter::{Bounds, CallOptions, Page, StartOptions};
use pi_mcp_core::events::Event;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

fn idle(seconds: f64) -> Value {
    json!(seconds / 60.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_fills_the_cache_and_stops_what_it_started() {
    let home = Home::new(json!({ "a": server(&[]), "b": server(&["exit-at-start"]) }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    wait_for("the cache entry", || {
        home.cache()["servers"]["a"]["tools"]
            .as_array()
            .map(|t| t.len())
    })
    .await;
    session
        .event(
            "failed",
            |e| matches!(e, Event::Failed { server, .. } if server == "b"),
        )
        .await;
    let stopped = session
        .event("idle-shutdown", |e| matches!(e, Event::IdleShutdown { .. }))
        .await;
    assert_eq!(
        stopped,
        Event::IdleShutdown {
            server: "a".into(),
            idle_minutes: 0.0
        }
    );
    wait_for("the filled server to stop", || {
        home.processes().is_empty().then_some(())
    })
    .await;
    assert!(text(&session.adapter.status()).contains("○ a: 8 tools (cached; starts on first use)"));
    finish(session, &home).await;
}

/// Six servers that answer `initialize` after 100 ms (their starts counted), listed two at a
/// time; the session has started.
fn six_slow_servers_two_at_a_time() -> (Home, Session) {
    let servers: Map<String, Value> = (0..6)
        .map(|i| (format!("s{i}"), counted(&["slow-init=100"])))
        .collect();
    let home = Home::new(Value::Object(servers));
    let bounds = Bounds {
        fill_concurrency: 2,
        ..Bounds::default()
    };
    let session = home.open_with(fast(), bounds);
    session.adapter.start(StartOptions::default());
    (home, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fill_starts_a_few_servers_at_a_time() {
    let (home, session) = six_slow_servers_two_at_a_time();
    let mut most = 0;
    while home.cache()["servers"].as_object().map_or(0, |s| s.len()) < 6 {
        most = most.max(home.processes().len());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(most <= 2, "{most} servers at once");
    assert!(most >= 1);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_during_the_fill_lists_each_server_once_under_the_bound() {
    let (home, session) = six_slow_servers_two_at_a_time();
    let sampling = async {
        let mut most = 0;
        while home.starts() < 6 || !home.processes().is_empty() {
            most = most.max(home.processes().len());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        most
    };
    let (searched, most) = tokio::join!(session.execute(json!({ "search": "echo" })), sampling);
    assert!(!searched.is_error, "{}", text(&searched));
    assert!(most <= 2, "{most} servers at once");
    assert_eq!(home.starts(), 6, "each server started once");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_model_called_is_not_stopped_by_the_fill() {
    let home = Home::new(json!({ "s": counted(&["slow-init=200"]) }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    let called = session.call("s_echo", json!({ "text": "kept" })).await;
    assert_eq!(text(&called), "echo: kept");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(home.processes().len(), 1, "kept for the model");
    assert_eq!(home.starts(), 1, "the call joined the fill's start");
    assert_eq!(
        session.count(|e| matches!(e, Event::IdleShutdown { .. })),
        0
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn looking_at_a_server_does_not_keep_it() {
    let home = Home::new(json!({ "s": counted(&[]), "t": counted(&[]) }));
    let session = home.open();
    let listed = session.adapter.list("s", Page::default()).await;
    assert!(text(&listed).starts_with("s: 8 tools"), "{}", text(&listed));
    let described = session.execute(json!({ "describe": "t_echo" })).await;
    assert!(!described.is_error, "{}", text(&described));
    wait_for("both servers to stop once listed", || {
        home.processes().is_empty().then_some(())
    })
    .await;
    assert_eq!(home.starts(), 2);
    let called = session.call("s_echo", json!({ "text": "again" })).await;
    assert_eq!(text(&called), "echo: again");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(home.processes().len(), 1, "a called server stays");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_pi_declares_are_listed_for_its_first_request() {
    let with = |entry: Value, extra: Value| {
        let mut entry = entry;
        entry
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        entry
    };
    let home = Home::with(
        json!({
            "exposed": with(counted(&[]), json!({ "exposure": "direct" })),
            "one": with(counted(&[]), json!({ "exposure": "codemode", "toolExposure": { "echo": "direct" } })),
            "picked": with(counted(&[]), json!({ "directTools": ["echo"] })),
            "parent": counted(&[]),
            "slow": with(counted(&["slow-init=1500"]), json!({ "exposure": "direct" })),
            "plain": counted(&[]),
        }),
        json!({ "startupWaitMs": 700 }),
    );
    // A parent agent's MCP_DIRECT_TOOLS replaces the config's directTools.
    let session = home.open_in(fast(), Bounds::default(), &[("MCP_DIRECT_TOOLS", "parent")]);
    let started = Instant::now();
    let declared = session.adapter.list_declared(true).await;
    let waited = started.elapsed();
    assert_eq!(declared.pending, ["slow"]);
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert_eq!(
        declared.notice.as_deref(),
        Some("1 MCP server is still being listed (slow): Pi's first request waited 0.7 s for it; its tools are declared once listed, in this session or the next run.")
    );
    let names: Vec<String> = session
        .adapter
        .direct_tools()
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in ["mcp__exposed__echo", "mcp__one__echo", "parent_echo"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("picked")), "{names:?}");
    wait_for("the slow server's listing", || {
        home.cache()["servers"]["slow"].as_object().map(|_| ())
    })
    .await;
    let cached = home.cache()["servers"].as_object().unwrap().clone();
    let mut listed: Vec<&str> = cached.keys().map(String::as_str).collect();
    listed.sort();
    assert_eq!(listed, ["exposed", "one", "parent", "slow"]);
    wait_for("each listed server to stop", || {
        home.processes().is_empty().then_some(())
    })
    .await;
    let again = session.adapter.list_declared(true).await;
    assert_eq!((again.pending.len(), again.notice), (0, None));
    assert_eq!(home.starts(), 4, "listed once each; nothing else started");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_fill_waits_for_the_first_execute() {
    let home = Home::new(json!({ "a": counted(&[]), "b": counted(&[]) }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(home.starts(), 0, "nothing before the model uses mcp");
    session.execute(json!({})).await;
    wait_for("both entries", || {
        (home.cache()["servers"].as_object().map_or(0, |s| s.len()) == 2).then_some(())
    })
    .await;
    assert_eq!(home.starts(), 2);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fill_under_way_at_shutdown_is_finished_and_written() {
    let home =
        Home::new(json!({ "a": server(&["slow-init=400"]), "b": server(&["slow-init=400"]) }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    tokio::time::sleep(Duration::from_millis(50)).await;
    session.adapter.shutdown().await;
    let cached = home.cache()["servers"].as_object().map_or(0, |s| s.len());
    assert_eq!(cached, 2, "{}", home.cache());
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_server_stops_when_idle_and_comes_back_on_use() {
    let home = Home::new(json!({ "s": { "command": test_server(), "idleTimeout": idle(0.3) } }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    session
        .event("the fill's stop", |e| {
            matches!(e, Event::IdleShutdown { .. })
        })
        .await;
    let called = session.call("s_echo", json!({})).await;
    assert_eq!(text(&called), "echo: ");
    assert_eq!(home.processes().len(), 1);
    wait_for("the idle stop", || {
        (session.count(|e| matches!(e, Event::IdleShutdown { .. })) == 2).then_some(())
    })
    .await;
    wait_for("the process to go", || {
        home.processes().is_empty().then_some(())
    })
    .await;
    let searched = session.execute(json!({ "search": "echo" })).await;
    assert!(
        text(&searched).contains("s_echo"),
        "searchable while stopped"
    );
    assert!(home.processes().is_empty());
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_holds_an_idle_server() {
    let home = Home::new(json!({ "s": { "command": test_server(), "idleTimeout": idle(0.2) } }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    let adapter = session.adapter.clone();
    let slow = tokio::spawn(async move {
        let args = json!({ "steps": 4, "delayMs": 150 })
            .as_object()
            .cloned()
            .unwrap();
        adapter.call("s_slow", args, CallOptions::default()).await
    });
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        session.count(|e| matches!(e, Event::IdleShutdown { .. })),
        0,
        "stopped during a call"
    );
    assert_eq!(text(&slow.await.unwrap()), "slow done after 4 steps");
    session
        .event("the idle stop after the call", |e| {
            matches!(e, Event::IdleShutdown { .. })
        })
        .await;
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eager_servers_start_with_the_session() {
    let home = Home::new(json!({ "e": { "command": test_server(), "lifecycle": "eager" } }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    session
        .event("connected", |e| matches!(e, Event::Connected { .. }))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(home.processes().len(), 1, "not stopped: it is eager");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_server_that_dies_is_brought_back() {
    let home = Home::new(json!({ "k": { "command": test_server(), "lifecycle": "keep-alive" } }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    session
        .event("connected", |e| matches!(e, Event::Connected { .. }))
        .await;
    let first = home.processes()[0];
    // SAFETY-free: a signal to a process this test started.
    std::process::Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .unwrap();
    session
        .event("disconnected", |e| matches!(e, Event::Disconnected { .. }))
        .await;
    let back = session
        .event("reconnected", |e| matches!(e, Event::Reconnected { .. }))
        .await;
    assert_eq!(
        back,
        Event::Reconnected {
            server: "k".into(),
            tools: 8
        }
    );
    let now = wait_for("one new process", || {
        (home.processes().len() == 1).then(|| home.processes()[0])
    })
    .await;
    assert_ne!(now, first);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_keep_alive_server_idles_until_used_then_stays() {
    let home = Home::new(
        json!({ "lk": { "command": test_server(), "lifecycle": "lazy-keep-alive", "idleTimeout": idle(0.2) } }),
    );
    let session = home.open();
    session.adapter.start(StartOptions::default());
    session
        .event("stopped before any use", |e| {
            matches!(e, Event::IdleShutdown { .. })
        })
        .await;
    session.call("lk_echo", json!({})).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        session.count(|e| matches!(e, Event::IdleShutdown { .. })),
        1,
        "kept once used"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_twice_starts_once() {
    let home = Home::new(json!({ "a": counted(&[]) }));
    let session = home.open();
    session.adapter.start(StartOptions::default());
    session.adapter.start(StartOptions::default());
    wait_for("the cache", || {
        home.cache()["servers"]["a"].is_object().then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(home.starts(), 1);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_is_shared_with_the_next_session() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let first = home.open();
    first.adapter.list("s", Page::default()).await;
    finish(first, &home).await;
    let entry = home.cache()["servers"]["s"].clone();
    assert_eq!(entry["tools"].as_array().unwrap().len(), 8);
    assert!(entry["configHash"].as_str().unwrap().len() == 64);
    let second = home.open();
    let status = text(&second.adapter.status());
    assert!(
        status.contains("○ s: 8 tools (cached; starts on first use)"),
        "{status}"
    );
    let found = second.execute(json!({ "search": "echo" })).await;
    assert!(text(&found).contains("s_echo"));
    assert!(home.processes().is_empty(), "answered from the cache");
    finish(second, &home).await;
}
