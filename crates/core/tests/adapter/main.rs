//! The adapter (the gateway's centre) against the cargo-built MCP test server: reaching servers
//! (connect, early call, backoff, restart, reconnect), the modes, MCP Apps, the lifecycle (fill, idle,
//! keep-alive, shutdown) and the bounds. Needs no Node and no `npm install`:
//! `cargo test --workspace --all-targets` (which builds the test server too).

#![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

mod apps;
mod bounds;
mod family;
mod lifecycle;
mod modes;
mod reaching;
mod support;
mod switching;
