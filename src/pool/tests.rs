//! The pool against the real server-everything (installed by `npm install`).

use super::*;
use serde_json::json;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

fn everything() -> ConnectSpec {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    ConnectSpec {
        server: "everything".into(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: "node".into(),
            args: vec![everything_script(), "stdio".into()],
            env: std::env::vars().collect(),
            cwd: root,
        }),
        protocol: Protocol::Initialize,
        timeout: Duration::from_secs(30),
        debug: false,
        client: ClientFeatures::none(),
    }
}

pub(super) fn everything_script() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "run `npm install` first: {} is missing",
        script.display()
    );
    script.display().to_string()
}

fn stdio(spec: &mut ConnectSpec) -> &mut StdioSpec {
    match &mut spec.transport {
        TransportSpec::Stdio(stdio) => stdio,
        TransportSpec::Remote(_) => unreachable!("a stdio spec"),
    }
}

/// Listing bounds that keep everything a test server lists.
pub(super) fn bounds(timeout: Duration) -> ListBounds {
    ListBounds {
        timeout,
        items: usize::MAX,
        bytes: usize::MAX,
    }
}

pub(super) fn opts(timeout: Duration) -> RequestOptions {
    RequestOptions {
        timeout,
        cancel: CancellationToken::new(),
        on_progress: None,
        caller: None,
    }
}

fn alive(pid: u32) -> bool {
    super::process::alive(pid as i32)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_calls_and_closes() {
    let (pool, _notices) = Pool::new();
    let (a, b) = tokio::join!(pool.connect(everything()), pool.connect(everything()));
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
            json!({"name": "echo", "arguments": {"message": "hi"}}),
            opts(Duration::from_secs(10)),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "Echo: hi");

    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let mut with_progress = opts(Duration::from_secs(10));
    with_progress.on_progress = Some(Arc::new(move |p: Progress| seen.lock().push(p.progress)));
    a.request(
        "tools/call",
        json!({"name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 4}}),
        with_progress,
    )
    .await
    .unwrap();
    assert!(
        !progress.lock().is_empty(),
        "progress notifications must reach the sink"
    );

    let pid = a.pid().unwrap();
    pool.close("everything").await;
    assert!(!alive(pid), "server process survived close");
    assert!(pool.get("everything").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_timeout_and_crash() {
    let (pool, mut notices) = Pool::new();
    let conn = pool.connect(everything()).await.unwrap();
    let long = json!({"name": "trigger-long-running-operation", "arguments": {"duration": 30, "steps": 1}});

    let cancel = CancellationToken::new();
    let mut o = opts(Duration::from_secs(30));
    o.cancel = cancel.clone();
    let started = std::time::Instant::now();
    let (result, _) = tokio::join!(conn.request("tools/call", long.clone(), o), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    assert_eq!(result, Err(RequestError::Aborted));
    assert!(started.elapsed() < Duration::from_secs(2));

    let result = conn
        .request("tools/call", long.clone(), opts(Duration::from_millis(300)))
        .await;
    assert!(
        matches!(result, Err(RequestError::Timeout(_))),
        "{result:?}"
    );

    let pid = conn.pid().unwrap();
    let started = std::time::Instant::now();
    let (result, _) = tokio::join!(
        conn.request("tools/call", long, opts(Duration::from_secs(30))),
        async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            process::signal_group(pid, process::Signal::Kill);
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
    assert!(pool.get("everything").is_none());
}

#[tokio::test]
async fn startup_failures_are_explained() {
    let (pool, _) = Pool::new();
    let mut missing = everything();
    stdio(&mut missing).command = "no-such-mcp-server-binary".into();
    let err = pool.connect(missing).await.err().unwrap().to_string();
    assert!(err.contains("command not found"), "{err}");

    let mut exits = everything();
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

    let mut silent = everything();
    stdio(&mut silent).command = "sleep".into();
    stdio(&mut silent).args = vec!["30".into()];
    silent.timeout = Duration::from_millis(300);
    let err = pool.connect(silent).await.err().unwrap().to_string();
    assert!(err.contains("did not answer `initialize`"), "{err}");
}
