//! The floor for the benchmark: a bare rmcp client (no gateway) against one stdio MCP server.
//! Prints one JSON object of raw samples in milliseconds; `bench/` turns them into medians.
//!
//! raw_rmcp [--cold N] [--warm N] [--burst N --inflight K] -- <command> [args…]
//!   cold:  N fresh sessions, each spawn → initialize → first tools/call (then closed); with
//!          --list 1, a full tools/list between initialize and the call (as a gateway does)
//!   warm:  N sequential calls on one session
//!   burst: N calls with K in flight on one session (per-call latency and total time)
use futures::stream::{self, StreamExt};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use std::time::Instant;

type Session = RunningService<RoleClient, ()>;

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

async fn start(command: &[String]) -> Session {
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..]);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the server");
    ().serve(transport).await.expect("initialize")
}

async fn echo(session: &Session, text: String) {
    let mut args = Map::new();
    args.insert("message".into(), Value::String(text));
    let params = CallToolRequestParams::new("echo").with_arguments(args);
    let result = session.call_tool(params).await.expect("tools/call");
    assert_ne!(result.is_error, Some(true), "echo failed: {result:?}");
}

fn count(args: &[String], flag: &str) -> usize {
    args.iter()
        .position(|a| a == flag)
        .map_or(0, |i| args[i + 1].parse().expect("a number"))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let split = args.iter().position(|a| a == "--").expect("-- <command>");
    let (flags, command) = (&args[..split], &args[split + 1..]);
    let (cold, warm, burst) = (
        count(flags, "--cold"),
        count(flags, "--warm"),
        count(flags, "--burst"),
    );
    let inflight = count(flags, "--inflight").max(1);
    let list = count(flags, "--list") > 0;

    let mut colds = Vec::new();
    for i in 0..cold {
        let t = Instant::now();
        let session = start(command).await;
        let initialized = ms(t);
        let t_list = Instant::now();
        if list {
            session.list_all_tools().await.expect("tools/list");
        }
        let listed = ms(t_list);
        let t_call = Instant::now();
        echo(&session, format!("cold {i}")).await;
        colds.push(json!({ "initializeMs": initialized, "listMs": listed, "callMs": ms(t_call), "totalMs": ms(t) }));
        let _ = session.cancel().await;
    }

    let (mut warms, mut latencies, mut burst_ms) = (Vec::new(), Vec::new(), 0.0);
    if warm + burst > 0 {
        let session = start(command).await;
        echo(&session, "warm-up".into()).await;
        for i in 0..warm {
            let t = Instant::now();
            echo(&session, format!("warm {i}")).await;
            warms.push(ms(t));
        }
        let t_burst = Instant::now();
        let session = &session;
        latencies = stream::iter(0..burst)
            .map(|i| async move {
                let t = Instant::now();
                echo(session, format!("burst {i}")).await;
                ms(t)
            })
            .buffer_unordered(inflight)
            .collect()
            .await;
        burst_ms = ms(t_burst);
    }
    let report = json!({ "cold": colds, "warm": warms, "burst": { "latencies": latencies, "totalMs": burst_ms, "inflight": inflight } });
    println!("{report}");
}
