//! How to open a connection to one server: what carries it and what the session offers.

use super::handshake::Protocol;
use super::host::ClientFeatures;
use super::process::StdioSpec;
use super::remote::RemoteSpec;
use super::shared::SharedSpec;
use std::time::Duration;

/// Everything needed to open a connection to a server.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectSpec {
    pub server: String,
    pub transport: TransportSpec,
    pub protocol: Protocol,
    /// Bounds spawn (or the HTTP exchange) + the opening handshake.
    pub timeout: Duration,
    /// Echo the server's stderr to ours.
    pub debug: bool,
    /// What the server may ask of us.
    pub client: ClientFeatures,
}

/// A process to start, a remote endpoint, or a shared server.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    Stdio(StdioSpec),
    Remote(RemoteSpec),
    /// A stdio server reached through the broker (started here when there is none).
    Shared(SharedSpec),
}
