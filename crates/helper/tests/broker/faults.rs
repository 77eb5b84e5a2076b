//! Faults, with the broker as sessions start it (the helper executable, detached): killed, a
//! session gone mid-call, two sessions starting it at once, a stale socket, a crashing server,
//! a peer of another user. Each test ends with no process left.

use crate::support::*;
use pi_mcp_connection::pool::shared::place::current_uid;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_broker_takes_its_servers_and_sessions_start_their_own() {
    let dir = Dir::new("killed");
    let session = dir.session(Some(HELPER));
    let spec = shared(&session, "k", &[]);
    let conn = open(&spec).await;
    assert_eq!(echo(&conn, "via the broker").await, "echo: via the broker");
    let status = status_of(&dir).await.unwrap();
    let server = status.servers[0].pid.unwrap();

    let in_flight = tokio::spawn({
        let conn = conn.clone();
        async move { call(&conn, "hang", json!({}), plain()).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    kill(status.pid, libc::SIGKILL);
    let failed = in_flight.await.unwrap().unwrap_err();
    assert!(failed.contains("broker stopped unexpectedly"), "{failed}");
    until("the shared server stopped with its broker", || {
        !alive(server)
    })
    .await;

    let local = open(&spec).await;
    assert!(local.pid().is_some(), "started by the session itself");
    assert_eq!(echo(&local, "here").await, "echo: here");
    assert!(session.off().unwrap().contains("stopped unexpectedly"));
    let pid = local.pid().unwrap();
    local.close().await;
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_gone_mid_call_has_its_call_cancelled_and_its_share_released() {
    let dir = Dir::new("gone");
    let session = dir.session(Some(HELPER));
    let spec = shared(&session, "g", &[]);
    let stays = open(&spec).await;
    // A second session, as raw as a killed process leaves it: a call in flight, then nothing.
    let mut attach = pi_mcp_connection::pool::shared::wire::Attach {
        name: "test".into(),
        identity: "g".into(),
        launch: match &spec.transport {
            pi_mcp_connection::pool::TransportSpec::Shared(s) => s.stdio.clone(),
            _ => unreachable!(),
        },
        protocol: spec.protocol,
        client: spec.client.clone(),
        timeout_ms: 30_000,
        idle_ms: None,
        debug: false,
        session: session.session(),
        family: None,
    };
    attach.session.id = "killed".into();
    let stream = tokio::net::UnixStream::connect(dir.place().socket())
        .await
        .unwrap();
    let (read, mut write) = stream.into_split();
    let hello = serde_json::to_value(pi_mcp_connection::pool::shared::wire::Hello::Attach(
        Box::new(attach),
    ))
    .unwrap();
    let lines = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": { "experimental": { "pi-mcp-native/broker": hello } }, "clientInfo": { "name": "t", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "slow", "arguments": { "steps": 500, "delayMs": 20 } } }),
    ];
    let mut answers = BufReader::new(read).lines();
    for line in lines {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        if line["method"] == "initialize" {
            let answer = answers.next_line().await.unwrap().unwrap();
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert!(answer.get("result").is_some(), "attached: {answer}");
        }
    }
    until_async("two sessions on the server", || async {
        status_of(&dir).await.unwrap().servers[0].sessions == 2
    })
    .await;
    drop((write, answers));
    until_async("the gone session's share released", || async {
        status_of(&dir).await.unwrap().servers[0].sessions == 1
    })
    .await;
    until_async("its call cancelled at the server", || async {
        let seen = call(&stays, "seen", json!({}), plain()).await.unwrap();
        seen.contains("notifications/cancelled")
    })
    .await;

    stays.close().await;
    let server = status_of(&dir).await.unwrap().servers[0].pid.unwrap();
    stop_broker(&dir).await;
    assert!(!alive(server));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_starting_at_once_start_one_broker_and_a_stale_socket_is_replaced() {
    let dir = Dir::new("race");
    let place = dir.place();
    place.prepare().unwrap();
    // What a SIGKILLed broker leaves: a socket file nobody listens on.
    drop(std::os::unix::net::UnixListener::bind(place.socket()).unwrap());
    assert!(place.socket().exists());

    let sessions: Vec<_> = (0..4).map(|_| dir.session(Some(HELPER))).collect();
    let opened = futures::future::join_all(sessions.iter().map(|s| async {
        let conn = open(&shared(s, "race", &[])).await;
        assert_eq!(echo(&conn, "hi").await, "echo: hi");
        conn
    }))
    .await;
    assert!(
        opened.iter().all(|c| c.pid().is_none()),
        "all through a broker"
    );
    let status = status_of(&dir).await.unwrap();
    assert_eq!(status.sessions, 4, "one broker took them all: {status:?}");
    assert_eq!(status.servers.len(), 1);
    assert_eq!(brokers_of(&dir), vec![status.pid], "one broker process");
    for conn in opened {
        conn.close().await;
    }
    let server = status.servers[0].pid.unwrap();
    stop_broker(&dir).await;
    assert!(!alive(server));
    assert!(brokers_of(&dir).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_reported_to_its_sessions_and_restarted_once_for_all() {
    let dir = Dir::new("crash");
    let (a, b) = (dir.session(Some(HELPER)), dir.session(Some(HELPER)));
    let first = open(&shared(&a, "c", &[])).await;
    let second = open(&shared(&b, "c", &[])).await;
    let before = status_of(&dir).await.unwrap().servers[0].pid.unwrap();
    let crashed = call(&first, "crash", json!({}), plain()).await.unwrap_err();
    assert!(crashed.contains("exit"), "{crashed}");
    until("the other session told", || !second.is_alive()).await;
    let (spec_a, spec_b) = (shared(&a, "c", &[]), shared(&b, "c", &[]));
    let (first, second) = tokio::join!(open(&spec_a), open(&spec_b));
    let status = status_of(&dir).await.unwrap();
    assert_eq!(status.servers.len(), 1);
    let after = status.servers[0].pid.unwrap();
    assert_ne!(after, before, "started again");
    assert_eq!(status.servers[0].sessions, 2, "once for both: {status:?}");
    assert!(!alive(before));
    assert_eq!(echo(&second, "again").await, "echo: again");
    first.close().await;
    second.close().await;
    stop_broker(&dir).await;
    assert!(!alive(after));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_session_is_refused() {
    let dir = Dir::new("refused");
    let place = dir.place();
    place.prepare().unwrap();
    // The test knob: the broker serves another uid, so this (root in CI) is a stranger.
    let other = (current_uid() + 1).to_string();
    let mut broker = foreground(&dir, &[("PI_MCP_BROKER_UID", &other)]);
    let session = dir.session(Some(HELPER));
    let conn = open(&shared(&session, "r", &[])).await;
    assert!(conn.pid().is_some(), "refused by the broker: started here");
    let why = session.off().unwrap();
    assert!(
        why.contains(&format!("serves uid {}", current_uid() + 1)),
        "{why}"
    );
    conn.close().await;
    broker.kill().unwrap();
    broker.wait().unwrap();
}

/// Issue 26, item 14: the broker's log planted as a link to a file outside. The broker does not
/// start (it would have appended to the link's target); the session says why and starts the
/// server itself; the file outside is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_log_planted_as_a_link_is_refused() {
    let dir = Dir::new("planted");
    let place = dir.place();
    place.prepare().unwrap();
    let outside = dir.root.join("outside.txt");
    std::fs::write(&outside, "kept as it was\n").unwrap();
    std::os::unix::fs::symlink(&outside, place.log()).unwrap();
    let session = dir.session(Some(HELPER));
    let conn = open(&shared(&session, "p", &[])).await;
    assert!(conn.pid().is_some(), "no broker: started here");
    let why = session.off().unwrap();
    let link = format!("{} is a symbolic link", place.log().display());
    assert!(why.contains(&link), "{why}");
    assert!(brokers_of(&dir).is_empty());
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "kept as it was\n"
    );
    conn.close().await;
}

/// A broker of `dir` run in the foreground with `env`, once it listens.
fn foreground(dir: &Dir, env: &[(&str, &str)]) -> std::process::Child {
    let mut broker = std::process::Command::new(HELPER)
        .args(["broker", "--foreground", "--agent-dir"])
        .arg(&dir.agent)
        .args(dir.place().args())
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(broker.stdout.as_mut().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready");
    broker
}

fn kill(pid: u32, signal: i32) {
    // SAFETY: kill(2) with a pid this test started.
    unsafe { libc::kill(pid as i32, signal) };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_server_stops_and_then_the_idle_broker_exits() {
    let dir = Dir::new("idle");
    let place = dir.place();
    place.prepare().unwrap();
    let mut broker = foreground(&dir, &[("PI_MCP_BROKER_LINGER_MS", "200")]);
    let session = dir.session(Some(HELPER));
    let mut spec = shared(&session, "i", &[]);
    if let pi_mcp_connection::pool::TransportSpec::Shared(shared) = &mut spec.transport {
        shared.idle = Some(Duration::from_millis(100));
    }
    let conn = open(&spec).await;
    assert!(conn.pid().is_none(), "through the broker");
    let server = status_of(&dir).await.unwrap().servers[0].pid.unwrap();
    conn.close().await;
    until("the unused server stopped", || !alive(server)).await;
    let exited = tokio::task::spawn_blocking(move || broker.wait().unwrap());
    let code = tokio::time::timeout(Duration::from_secs(10), exited).await;
    assert!(code.unwrap().unwrap().success(), "exited by itself");
    assert!(!place.socket().exists(), "its socket removed");
}
