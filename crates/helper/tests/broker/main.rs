//! The shared-server broker: in this process on a socket of a temporary directory (sharing,
//! routing), and as the helper executable sessions start (faults). Needs no Node:
//! `cargo test --workspace --all-targets` (which builds the test server too).

#![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

mod family;
#[cfg(unix)]
mod faults;
mod route;
mod share;
mod support;
