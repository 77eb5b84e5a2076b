//! How to open a connection to one server: what carries it and what the session offers.

use super::handshake::Protocol;
use super::host::ClientFeatures;
use super::process::StdioSpec;
#[cfg(feature = "remote")]
use super::remote::RemoteSpec;
use super::shared::SharedSpec;
use super::{Connection, Host, Notice};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

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
    /// Set for a server shared with the session's family that its pool runs.
    pub keeper: Option<Keeping>,
}

/// A connection's [`Keeper`], compared by identity.
#[derive(Clone)]
pub struct Keeping(pub Arc<dyn Keeper>);

impl fmt::Debug for Keeping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Keeping")
    }
}

impl PartialEq for Keeping {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Ties a connection to the family that shares its server (see `crate::broker::family`): its
/// questions and notices go to the family too, it is told when it opens, and asked before the
/// session closes it.
pub trait Keeper: Send + Sync {
    /// Where the connection's questions and notices go, given the pool's.
    fn wrap(
        &self,
        host: Arc<dyn Host>,
        notices: UnboundedSender<Notice>,
    ) -> (Arc<dyn Host>, UnboundedSender<Notice>);
    /// The connection opened: others may use it from now on.
    fn opened(&self, conn: &Arc<Connection>);
    /// Its session shuts down or stops it as unused: true when the family keeps `conn` running
    /// for the others that use it (then the session leaves it alone).
    fn keep(&self, conn: &Arc<Connection>) -> bool;
}

/// A process to start, a remote endpoint, a Unix socket, or a shared server.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    Stdio(StdioSpec),
    #[cfg(feature = "remote")]
    Remote(RemoteSpec),
    /// A server listening on this Unix socket (`socket`).
    Socket(PathBuf),
    /// A stdio server reached through the broker (started here when there is none).
    Shared(SharedSpec),
}

impl TransportSpec {
    /// What carries the connection, as the protocol trace names it.
    pub fn label(&self) -> &'static str {
        match self {
            TransportSpec::Stdio(_) => "stdio",
            #[cfg(feature = "remote")]
            TransportSpec::Remote(_) => "http",
            TransportSpec::Socket(_) => "unix-socket",
            TransportSpec::Shared(_) => "shared",
        }
    }
}
