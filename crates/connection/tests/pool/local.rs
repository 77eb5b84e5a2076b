//! Stdio servers: one process for concurrent connects, one shared first listing, calls with
//! progress, cancel, timeout, a crash reported at once, start failures explained.

use crate::support::*;
use parking_lot::Mutex;
use pi_mcp_connection::pool::process::{self, Signal};
use pi_mcp_connection::pool::{ClientFeatures, Notice, Pool, Progress, RequestError};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn server() -> pi_mcp_connection::pool::ConnectSpec {
    stdio_server("test", &["resources=7"], ClientFeatures::none())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_calls_and_closes() {
    let (pool, _notices) = Pool::new();
    let (a, b) = tokio::join!(pool.connect(server()), pool.connect(server()));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        a.pid(),
        b.pid(),
        "concurrent connects must share one process"
    );
    assert!(a.instructions.is_some());

    assert!(!a.is_listed(), "connecting only runs the handshake");
    let limit = &bounds(Duration::from_secs(10));
    let (first, same) = tokio::join!(a.listed(limit), b.listed(limit));
    let (first, same) = (first.unwrap(), same.unwrap());
    assert!(Arc::ptr_eq(&first, &same), "one first listing, shared");
    assert!(a.is_listed());
    let listing = a.relist(limit).await.unwrap();
    assert_eq!(listing, a.listing());
    assert_eq!(listing, first);
    assert!(
        listing.tools.iter().any(|t| t["name"] == "echo"),
        "{listing:?}"
    );
    assert_eq!(listing.resources.len(), 7);

    let result = a
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            opts(Duration::from_secs(10)),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "echo: hi");

    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let mut with_progress = opts(Duration::from_secs(10));
    with_progress.on_progress = Some(Arc::new(move |p: Progress| seen.lock().push(p.progress)));
    a.request(
        "tools/call",
        json!({"name": "slow", "arguments": {"steps": 4, "delayMs": 50}}),
        with_progress,
    )
    .await
    .unwrap();
    assert!(
        !progress.lock().is_empty(),
        "progress notifications must reach the sink"
    );

    let pid = a.pid().unwrap();
    pool.close("test").await;
    assert!(!process::alive(pid as i32), "server process survived close");
    assert!(pool.get("test").is_none());
}

/// rmcp hands each notification to the handler in a task of its own: without an order kept, a
/// burst of progress reached the caller shuffled (`[2, 1, 3]`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_caller_in_the_order_the_server_sent_it() {
    let (pool, _notices) = Pool::new();
    let conn = pool.connect(server()).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut with_progress = opts(Duration::from_secs(10));
    with_progress.on_progress = Some(Arc::new({
        let seen = seen.clone();
        move |p: Progress| seen.lock().push(p.progress as u32)
    }));
    let call = json!({"name": "slow", "arguments": {"steps": 100, "delayMs": 0}});
    conn.request("tools/call", call, with_progress)
        .await
        .unwrap();
    let seen = seen.lock().clone();
    assert!(!seen.is_empty());
    let shuffled = seen.windows(2).filter(|w| w[0] >= w[1]).count();
    assert_eq!(shuffled, 0, "in the order sent: {seen:?}");
    pool.close("test").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_timeout_and_crash() {
    let (pool, mut notices) = Pool::new();
    let conn = pool.connect(server()).await.unwrap();
    let hang = json!({"name": "hang", "arguments": {}});

    let cancel = CancellationToken::new();
    let mut o = opts(Duration::from_secs(30));
    o.cancel = cancel.clone();
    let started = Instant::now();
    let (result, _) = tokio::join!(conn.request("tools/call", hang.clone(), o), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    assert_eq!(result, Err(RequestError::Aborted));
    assert!(started.elapsed() < Duration::from_secs(2));

    let result = conn
        .request("tools/call", hang.clone(), opts(Duration::from_millis(300)))
        .await;
    assert!(
        matches!(result, Err(RequestError::Timeout(_))),
        "{result:?}"
    );

    let pid = conn.pid().unwrap();
    let started = Instant::now();
    let (result, _) = tokio::join!(
        conn.request("tools/call", hang, opts(Duration::from_secs(30))),
        async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            process::signal_group(pid, Signal::Kill);
        }
    );
    match result {
        Err(RequestError::Closed(why)) => assert!(why.contains("signal 9"), "{why}"),
        other => panic!("expected a lost connection, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a crash must fail the call at once"
    );
    let lost = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(Notice::Lost { why, .. }) = notices.recv().await {
                return why;
            }
        }
    })
    .await
    .expect("a crash is reported at once");
    assert!(lost.contains("was killed by signal 9"), "{lost}");
    assert!(pool.get("test").is_none());
}

#[tokio::test]
async fn startup_failures_are_explained() {
    let (pool, _) = Pool::new();
    let mut missing = server();
    stdio(&mut missing).command = "no-such-mcp-server-binary".into();
    let err = pool.connect(missing).await.err().unwrap().to_string();
    assert!(err.contains("command not found"), "{err}");

    let mut exits = server();
    stdio(&mut exits).command = "sh".into();
    stdio(&mut exits).args = vec![
        "-c".into(),
        "echo 'fatal: config missing' >&2; exit 3".into(),
    ];
    let err = pool.connect(exits).await.err().unwrap().to_string();
    assert!(
        err.contains("exited with code 3") && err.contains("fatal: config missing"),
        "{err}"
    );

    let mut silent = server();
    stdio(&mut silent).command = "sleep".into();
    stdio(&mut silent).args = vec!["30".into()];
    silent.timeout = Duration::from_millis(300);
    let err = pool.connect(silent).await.err().unwrap().to_string();
    assert!(err.contains("did not answer `initialize`"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_given_up_while_it_runs_stops_what_it_opened() {
    let (pool, _) = Pool::new();
    let slow = stdio_server("slow", &["slow-init=300"], ClientFeatures::none());
    let connecting = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.connect(slow).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    pool.close_all().await;
    let given_up = connecting.await.unwrap();
    assert!(given_up.is_err(), "the attempt was given up");
    assert!(pool.servers().is_empty());
    let refused = pool.connect(server()).await.err().unwrap();
    assert_eq!(refused.to_string(), "the connection pool is closed");
}
