//! The connection pool against the cargo-built MCP test server: stdio connections (shared
//! attempts, listing, calls, progress, cancel, timeout, crash, start failures), remote ones
//! (Streamable HTTP, legacy SSE, TLS, restarts, protocol choice) and the client side of a
//! connection (capabilities, roots, elicitation, sampling, logging). Needs no Node:
//! `cargo test -p pi-mcp-connection --test pool`.

#![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

mod client;
mod local;
#[cfg(feature = "remote")]
mod remote;
mod support;
