//! The connection table: at most one live connection per server, concurrent connects to one
//! server share a single attempt.

mod client_side;
mod connection;
mod handler;
mod handshake;
pub mod host;
pub mod launch;
mod link;
mod oversize;
pub mod process;
mod program;
mod remote;
mod stderr;
pub mod watchdog;

pub use connection::{ConnectSpec, Connection, Listing, RequestOptions, TransportSpec};
pub use handler::{Notice, Progress, ProgressSink};
pub use handshake::Protocol;
pub use host::{
    Asker, Caller, ClientFeatures, ElicitationPolicy, Host, NoHost, Question, Reply, Root,
};
pub use process::StdioSpec;
pub use remote::{display_url, RemoteKind, RemoteSpec};

use futures::future::{BoxFuture, FutureExt, Shared};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// Why a request to a connected server failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestError {
    Timeout(Duration),
    Aborted,
    /// The connection is gone; the text says why (exit status, end of stderr).
    Closed(String),
    /// The server answered with a JSON-RPC error.
    Mcp {
        code: i32,
        message: String,
    },
    /// The answer did not make sense.
    Protocol(String),
    /// The answer (of this many bytes) was over the limit of one message and was dropped.
    TooLarge(u64),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Timeout(d) => write!(
                f,
                "no answer within {} s (request timed out)",
                d.as_secs_f32()
            ),
            RequestError::Aborted => f.write_str("aborted"),
            RequestError::Closed(why) => write!(f, "connection lost: {why}"),
            RequestError::Mcp { code, message } => write!(f, "MCP error {code}: {message}"),
            RequestError::Protocol(why) => write!(f, "protocol error: {why}"),
            RequestError::TooLarge(bytes) => write!(
                f,
                "result too large: the answer was {:.1} MiB, over the {} MiB limit of one message (it was dropped). Ask for less: narrower arguments, a smaller range or page.",
                *bytes as f64 / (1024.0 * 1024.0),
                oversize::MAX_LINE / (1024 * 1024)
            ),
        }
    }
}

/// Why a connection could not be opened.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectError {
    /// The server refused our credentials or wants some (HTTP 401/403).
    NeedsAuth(String),
    Failed(String),
}

impl ConnectError {
    pub fn message(&self) -> &str {
        match self {
            ConnectError::NeedsAuth(m) | ConnectError::Failed(m) => m,
        }
    }

    pub fn map(self, f: impl FnOnce(String) -> String) -> ConnectError {
        match self {
            ConnectError::NeedsAuth(m) => ConnectError::NeedsAuth(f(m)),
            ConnectError::Failed(m) => ConnectError::Failed(f(m)),
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

type Attempt = Shared<BoxFuture<'static, Result<Arc<Connection>, ConnectError>>>;

enum Slot {
    Connecting(Attempt),
    Ready(Arc<Connection>),
}

pub struct Pool {
    slots: Mutex<HashMap<String, Slot>>,
    notices: UnboundedSender<Notice>,
    /// Answers what servers ask of the client.
    host: Arc<dyn Host>,
}

impl Pool {
    /// The pool and the receiving end of what its connections report; nobody answers the
    /// servers' questions.
    pub fn new() -> (Arc<Pool>, UnboundedReceiver<Notice>) {
        Pool::with_host(Arc::new(NoHost))
    }

    /// A pool whose servers' questions go to `host`.
    pub fn with_host(host: Arc<dyn Host>) -> (Arc<Pool>, UnboundedReceiver<Notice>) {
        let (notices, rx) = mpsc::unbounded_channel();
        (
            Arc::new(Pool {
                slots: Mutex::new(HashMap::new()),
                notices,
                host,
            }),
            rx,
        )
    }

    /// The live connection to `server`, if there is one, marked as used now (so that it is not
    /// stopped as idle while the caller starts a request).
    pub fn get(&self, server: &str) -> Option<Arc<Connection>> {
        let conn = self.peek(server)?;
        conn.touch();
        Some(conn)
    }

    /// The live connection to `server`, without counting as use.
    pub fn peek(&self, server: &str) -> Option<Arc<Connection>> {
        match self.slots.lock().get(server) {
            Some(Slot::Ready(conn)) if conn.is_alive() => Some(conn.clone()),
            _ => None,
        }
    }

    pub fn is_live(&self, server: &str) -> bool {
        self.peek(server).is_some()
    }

    /// Closes the connection to `server` if nothing is in flight and it was last used at least
    /// `limit` ago; returns whether it did. Checked and removed under the table's lock, so a
    /// request cannot slip in between.
    pub async fn close_if_idle(&self, server: &str, limit: Duration) -> bool {
        let idle = {
            let mut slots = self.slots.lock();
            match slots.get(server) {
                Some(Slot::Ready(conn))
                    if conn.is_alive() && conn.in_flight() == 0 && conn.idle_for() >= limit =>
                {
                    slots.remove(server)
                }
                _ => None,
            }
        };
        match idle {
            Some(Slot::Ready(conn)) => {
                conn.close().await;
                true
            }
            _ => false,
        }
    }

    /// Closes `conn` if it is still the live connection to its server (a racing caller may
    /// have replaced it already).
    pub async fn close_stale(&self, conn: &Arc<Connection>) {
        let removed = {
            let mut slots = self.slots.lock();
            match slots.get(&conn.server) {
                Some(Slot::Ready(live)) if Arc::ptr_eq(live, conn) => slots.remove(&conn.server),
                _ => None,
            }
        };
        if removed.is_some() {
            conn.close().await;
        }
    }

    pub fn is_connecting(&self, server: &str) -> bool {
        matches!(self.slots.lock().get(server), Some(Slot::Connecting(_)))
    }

    /// Returns the live connection, or connects; callers racing for the same server share one
    /// attempt (one process).
    pub async fn connect(
        self: &Arc<Self>,
        spec: ConnectSpec,
    ) -> Result<Arc<Connection>, ConnectError> {
        let server = spec.server.clone();
        self.connect_with(&server, async move { Ok(spec) }).await
    }

    /// Like [`Pool::connect`], with the spec awaited only when a new attempt starts: callers
    /// that find a live connection or join an attempt do not make one.
    pub async fn connect_with(
        self: &Arc<Self>,
        server: &str,
        spec: impl Future<Output = Result<ConnectSpec, ConnectError>> + Send + 'static,
    ) -> Result<Arc<Connection>, ConnectError> {
        let attempt = {
            let mut slots = self.slots.lock();
            match slots.get(server) {
                Some(Slot::Ready(conn)) if conn.is_alive() => return Ok(conn.clone()),
                Some(Slot::Connecting(attempt)) => attempt.clone(),
                _ => {
                    let attempt = self.clone().attempt(server.to_string(), spec);
                    slots.insert(server.to_string(), Slot::Connecting(attempt.clone()));
                    attempt
                }
            }
        };
        attempt.await
    }

    fn attempt(
        self: Arc<Self>,
        server: String,
        spec: impl Future<Output = Result<ConnectSpec, ConnectError>> + Send + 'static,
    ) -> Attempt {
        async move {
            let opened = match spec.await {
                Ok(spec) => Connection::open(&spec, self.notices.clone(), self.host.clone()).await,
                Err(e) => Err(e),
            };
            let mut slots = self.slots.lock();
            match &opened {
                Ok(conn) => slots.insert(server, Slot::Ready(conn.clone())),
                Err(_) => slots.remove(&server),
            };
            opened
        }
        .boxed()
        .shared()
    }

    /// Closes the connection to `server` (waiting until its processes are gone).
    pub async fn close(&self, server: &str) {
        let slot = self.slots.lock().remove(server);
        match slot {
            Some(Slot::Ready(conn)) => conn.close().await,
            Some(Slot::Connecting(attempt)) => {
                if let Ok(conn) = attempt.await {
                    conn.close().await;
                }
            }
            None => {}
        }
    }

    pub fn servers(&self) -> Vec<String> {
        self.slots.lock().keys().cloned().collect()
    }

    /// Tells every live server to stop, without waiting (for `Drop`).
    pub fn abort_all(&self) {
        for slot in self.slots.lock().values() {
            if let Slot::Ready(conn) = slot {
                conn.abort();
            }
        }
    }

    /// Closes every connection at once.
    pub async fn close_all(&self) {
        let servers = self.servers();
        futures::future::join_all(servers.iter().map(|s| self.close(s))).await;
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod remote_tests;

#[cfg(test)]
mod client_tests;
