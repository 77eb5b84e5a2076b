//! A small MCP server for the Rust and Node tests (cargo builds it with this crate's tests): newline-
//! delimited JSON-RPC on stdio, or (`--http PORT`) Streamable HTTP and legacy HTTP+SSE. It
//! misbehaves on purpose as its arguments ask:
//!
//! - `hang-on-init` never answers `initialize`; `slow-init=MS` answers it after MS ms;
//!   `exit-at-start` writes a reason to stderr and exits with code 2.
//! - `many-tools=N` lists N tools, 100 per page; `resources=N` offers N resources;
//!   `announce-at-start` sends `tools/list_changed` once initialized; `big-result=MB` sizes `big`;
//!   `tool-size=KB` pads every tool's description to about KB kilobytes.
//! - `asks` adds the tools `ask` (sends the request `method` with `params` to the client and
//!   returns its answer or error as text; with `task`, answers as a call that became that task),
//!   `ask_inline` (asks the same inside an `input_required` result, as 2026-07-28 does), `log`
//!   (sends `notifications/message` with `params`; `count` times, `data` numbered) and
//!   `capabilities` (the client's capabilities from `initialize`).
//! - `apps` adds MCP Apps' tools: `clock` (its interface is the resource `ui://clock/app.html`,
//!   `clock.html`, a test app without a CSP of its own that asks for `clipboardWrite`, a border
//!   and a `domain`; says how often `clock_tick` was called, after `delayMs`),
//!   `clock_tick` (for the app alone) and `clock_reset` (for the model alone).
//! - `subscribe` offers resource subscriptions (`resources/subscribe` and `unsubscribe` answered,
//!   seen by `seen`) and adds the tool `touch` (sends `notifications/resources/updated` for
//!   `uri`).
//!
//! Tools: `echo` (`text`, after `delayMs`), `crash` (exits with code 3, a line on stderr), `hang`
//! (never answers), `freeze` (ignores everything from then on, pings too), `big`, `grow` (adds a
//! tool, sends `tools/list_changed`), `slow` (`steps` of `delayMs` with progress), `seen` (the
//! methods received so far). Every server exits after 120 s, so a test never leaves one behind.
//! With `TEST_STARTS` set, a stdio server appends its pid to that file when it starts.

mod http;
mod server;

use serde_json::Value;
use server::{Scenarios, Server};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_secs(120)).await;
        std::process::exit(0);
    });
    if let Some(at) = args.iter().position(|a| a == "--http") {
        let port = args.get(at + 1).and_then(|p| p.parse().ok()).unwrap_or(0);
        args.drain(at..(at + 2).min(args.len()));
        if let Err(e) = http::serve(port, args).await {
            eprintln!("mcp-test-server: cannot serve on port {port}: {e}");
            std::process::exit(1);
        }
        return;
    }
    if let Ok(file) = std::env::var("TEST_STARTS") {
        use std::io::Write;
        let mut starts = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file);
        let _ = starts
            .as_mut()
            .map(|f| writeln!(f, "{}", std::process::id()));
    }
    let server = Server::new(Scenarios::parse(&args));
    if server.scenarios().has("exit-at-start") {
        eprintln!("mcp-test-server: missing API key TEST_TOKEN");
        std::process::exit(2);
    }
    stdio(server).await;
}

/// Serves one client on stdin/stdout until stdin ends.
async fn stdio(server: std::sync::Arc<Server>) {
    let (out, mut messages) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(message) = messages.recv().await {
            let line = format!("{message}\n");
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(message) = serde_json::from_str::<Value>(&line) {
            server.handle(message, &out);
        }
    }
    drop(out);
    let _ = tokio::time::timeout(Duration::from_millis(200), writer).await;
}
