//! Sharing: sessions with one identity use one process; another identity gets its own; without a
//! broker a session starts the server itself and says why.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_share_one_process() {
    let running = Running::start("share").await;
    let (a, b) = (running.session(), running.session());
    let first = open(&shared(&a, "same", &[])).await;
    let second = open(&shared(&b, "same", &[])).await;
    assert_eq!(echo(&first, "a").await, "echo: a");
    assert_eq!(echo(&second, "b").await, "echo: b");
    assert!(first.pid().is_none(), "reached through the broker");
    until("both sessions told of each other", || {
        first.shared_with() == Some(2) && second.shared_with() == Some(2)
    })
    .await;
    let status = running.broker.status();
    assert_eq!(status.sessions, 2);
    assert_eq!(status.servers.len(), 1, "{status:?}");
    assert_eq!(status.servers[0].sessions, 2);
    let pid = status.servers[0].pid.unwrap();
    assert!(alive(pid));

    let other = open(&shared(&a, "another identity", &[])).await;
    assert_eq!(running.broker.status().servers.len(), 2);
    other.close().await;

    first.close().await;
    until("one session left", || second.shared_with() == Some(1)).await;
    second.close().await;
    running.stop().await;
    until("the shared server stopped with the broker", || !alive(pid)).await;
}

#[tokio::test]
async fn without_a_broker_the_session_starts_the_server_itself() {
    let dir = Dir::new("none");
    let session = dir.session(None);
    let conn = open(&shared(&session, "x", &[])).await;
    assert!(conn.pid().is_some(), "started here");
    assert!(conn.shared_with().is_none());
    let why = session.off().unwrap();
    assert!(why.contains("helper executable"), "{why}");
    conn.close().await;
}

/// A session keeps within the broker's bounds on one connection (issue 26, item 11): 300 calls
/// at once all run (at most 128 in flight, the rest wait), and a request too big for the broker
/// fails alone, with the connection kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_within_the_bounds_of_its_connection() {
    let running = Running::start("bounds").await;
    let session = running.session();
    let conn = open(&shared(&session, "bounds", &[])).await;
    let calls = (0..300).map(|n| {
        let args = serde_json::json!({ "text": n.to_string(), "delayMs": 200 });
        call(&conn, "echo", args, plain())
    });
    let answers = futures::future::join_all(calls).await;
    assert!(
        answers.iter().all(Result::is_ok),
        "{:?}",
        answers.iter().find(|a| a.is_err())
    );
    let big = "x".repeat(pi_mcp_connection::pool::shared::wire::MAX_MESSAGE);
    let refused = call(&conn, "echo", serde_json::json!({ "text": big }), plain()).await;
    let why = refused.unwrap_err();
    assert!(
        why.contains("over the 16 MiB the shared-server broker takes in one message"),
        "{why}"
    );
    assert_eq!(echo(&conn, "still here").await, "echo: still here");
    assert!(conn.pid().is_none(), "still through the broker");
    conn.close().await;
    running.stop().await;
}
