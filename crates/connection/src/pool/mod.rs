//! The connection table: at most one live connection per server, concurrent connects to one
//! server share a single attempt.

mod auth_need;
mod client_side;
mod client_tasks;
mod connection;
mod handler;
mod handshake;
pub mod host;
pub mod launch;
mod link;
mod logged;
mod nesting;
mod oversize;
pub mod process;
mod program;
pub mod question_bounds;
#[cfg(feature = "remote")]
mod remote;
pub mod run;
pub mod shared;
mod spec;
mod stderr;
pub mod watchdog;

pub use auth_need::AuthNeed;
pub use client_side::LogTail;
pub use connection::{created_task_id, Connection, Cut, ListBounds, Listing, RequestOptions};
pub use handler::{Notice, Progress, ProgressSink};
pub use handshake::Protocol;
pub use host::{
    Asker, Caller, ClientFeatures, ElicitationPolicy, Host, NoHost, Question, Reply, Root,
};
pub use link::RemoteKind;
pub(crate) use nesting::{LEFT_OUT_FIELD, TOO_DEEP_FIELD};
pub(crate) use oversize::TOO_LARGE_FIELD;
pub use process::StdioSpec;
#[cfg(feature = "remote")]
pub use remote::client::builder as http_client_builder;
#[cfg(feature = "remote")]
pub use remote::describe_reqwest;
#[cfg(feature = "remote")]
pub use remote::{display_url, Credentials, HeadersProgram, RemoteSpec, SharedCredentials};
pub use shared::{Broker, SharedSpec};
pub use spec::{ConnectSpec, Keeper, Keeping, TransportSpec};

use crate::clean;
use futures::future::{BoxFuture, FutureExt, Shared};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// Why a request to a connected server failed. What the server said is cleaned (`clean`) when
/// it is shown.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestError {
    /// No answer (nor progress) within the request's timeout.
    Timeout(Duration),
    /// The whole call (a task included) took longer than it may (`callTimeoutMs`).
    CallTimeout(Duration),
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
    /// The server refused the credentials (HTTP 401, or 403 for too little scope); the
    /// connection itself is fine.
    NeedsAuth(AuthNeed),
    /// The answer nested this many levels of JSON (`None`: not known how many), deeper than can
    /// be read, and was dropped.
    TooDeep(Option<usize>),
    /// The server wants steps done in a browser first (`-32042`); each was shown to the user.
    BrowserSteps(Vec<BrowserStep>),
    /// Not sent: the tool's `x-mcp-header` annotations are invalid (SEP-2243); which and why.
    InvalidHeaderAnnotation(String),
}

impl RequestError {
    /// Whether the call went with headers made from a definition of the tool the server no longer
    /// has: the server refused them (`-32020`, SEP-2243's header mismatch, before running
    /// anything), or we did not send the call as the definition's annotations are invalid.
    pub fn stale_headers(&self) -> bool {
        match self {
            RequestError::Mcp { code, .. } => *code == rmcp::model::ErrorCode::HEADER_MISMATCH.0,
            RequestError::InvalidHeaderAnnotation(_) => true,
            _ => false,
        }
    }
}

/// `90 s`, `30 min`, `2 h`: a limit as people say it.
fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        _ => format!("{} s", d.as_secs_f32()),
    }
}

/// A page the server needs the user to visit before the request can run.
#[derive(Clone, Debug, PartialEq)]
pub struct BrowserStep {
    pub url: String,
    pub message: String,
    /// The user agreed and it was opened (else declined, or nobody could be asked).
    pub opened: bool,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Timeout(d) => write!(
                f,
                "no answer within {} s (request timed out)",
                d.as_secs_f32()
            ),
            RequestError::CallTimeout(d) => write!(
                f,
                "the call ran longer than its limit of {} (callTimeoutMs) and was stopped",
                human_duration(*d)
            ),
            RequestError::Aborted => f.write_str("aborted"),
            RequestError::Closed(why) => write!(f, "connection lost: {}", clean::text(why)),
            RequestError::Mcp { code, message } => {
                write!(f, "MCP error {code}: {}", clean::text(message))
            }
            RequestError::Protocol(why) => write!(f, "protocol error: {}", clean::text(why)),
            RequestError::NeedsAuth(need) => write!(f, "{need}"),
            RequestError::InvalidHeaderAnnotation(why) => f.write_str(why),
            RequestError::BrowserSteps(steps) => {
                f.write_str("the server needs a step in a browser before this can run:")?;
                for step in steps {
                    let state = match step.opened {
                        true => "opened for the user; retry the call once it is done",
                        false => "not opened (declined, or nobody could be asked)",
                    };
                    let (message, url) = (clean::line(&step.message), clean::url(&step.url));
                    write!(f, "\n- {message} {url} ({state})")?;
                }
                Ok(())
            }
            RequestError::TooLarge(bytes) => write!(
                f,
                "result too large: the answer was {:.1} MiB, over the {} MiB limit of one message (it was dropped). Ask for less: narrower arguments, a smaller range or page.",
                *bytes as f64 / (1024.0 * 1024.0),
                oversize::MAX_LINE / (1024 * 1024)
            ),
            RequestError::TooDeep(depth) => write!(
                f,
                "result nested too deeply: the answer nests {} levels of JSON, deeper than the {} that can be read (it was dropped). The server or tool sent a malformed answer; other calls are unaffected.",
                depth.map_or_else(|| "more".to_string(), |d| d.to_string()),
                nesting::MAX_DEPTH
            ),
        }
    }
}

/// Why a connection could not be opened.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectError {
    /// The server refused our credentials or wants some (HTTP 401/403).
    NeedsAuth(AuthNeed),
    Failed(String),
    /// The pool was closed (or the attempt was given up by `close`) before the connection opened.
    Closed,
}

impl ConnectError {
    pub fn map(self, f: impl FnOnce(String) -> String) -> ConnectError {
        match self {
            ConnectError::NeedsAuth(need) => ConnectError::NeedsAuth(AuthNeed {
                message: f(need.message),
                ..need
            }),
            ConnectError::Failed(m) => ConnectError::Failed(f(m)),
            ConnectError::Closed => ConnectError::Closed,
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::NeedsAuth(need) => f.write_str(&clean::text(&need.message)),
            ConnectError::Failed(m) => f.write_str(&clean::text(m)),
            ConnectError::Closed => f.write_str("the connection pool is closed"),
        }
    }
}

type Attempt = Shared<BoxFuture<'static, Result<Arc<Connection>, ConnectError>>>;

enum Slot {
    /// An attempt to connect, which only it may replace by its result (`id` tells it apart from
    /// a later attempt that took its place).
    Connecting {
        id: u64,
        attempt: Attempt,
    },
    Ready(Arc<Connection>),
}

#[derive(Default)]
struct Table {
    slots: HashMap<String, Slot>,
    /// Set by `close_all`: nothing connects any more.
    closed: bool,
}

pub struct Pool {
    table: Mutex<Table>,
    notices: UnboundedSender<Notice>,
    /// Answers what servers ask of the client.
    host: Arc<dyn Host>,
    /// Each server's last logged warnings and errors, kept across its connections.
    log_tails: Mutex<HashMap<String, Arc<LogTail>>>,
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
                table: Mutex::default(),
                notices,
                host,
                log_tails: Mutex::default(),
            }),
            rx,
        )
    }

    /// The last warnings and errors `server` logged (`notifications/message`) in this
    /// process, one a line, oldest first; over its connections, the live one's last.
    pub fn recent_log(&self, server: &str) -> Option<String> {
        self.log_tails.lock().get(server)?.lines()
    }

    fn log_tail(&self, server: &str) -> Arc<LogTail> {
        let mut tails = self.log_tails.lock();
        tails.entry(server.to_string()).or_default().clone()
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
        match self.table.lock().slots.get(server) {
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
        let Some(conn) = self.stop_if_idle(server, limit) else {
            return false;
        };
        if conn.was_stopped() {
            conn.close().await;
        }
        true
    }

    /// Takes the connection to `server` out of the pool when it has been idle for `limit`, and
    /// stops it (without waiting for its end) unless its family keeps it for the other sessions
    /// that use it. At once, so that a caller that decides under a lock of its own stops it
    /// before anyone can reach it again.
    pub fn stop_if_idle(&self, server: &str, limit: Duration) -> Option<Arc<Connection>> {
        let conn = {
            let mut table = self.table.lock();
            let idle = match table.slots.get(server) {
                Some(Slot::Ready(conn)) => {
                    conn.is_alive() && conn.in_flight() == 0 && conn.idle_for() >= limit
                }
                _ => false,
            };
            match idle.then(|| table.slots.remove(server)).flatten() {
                Some(Slot::Ready(conn)) => conn,
                _ => return None,
            }
        };
        if !kept(&conn) {
            conn.abort();
        }
        Some(conn)
    }

    /// Closes `conn` if it is still the live connection to its server (a racing caller may
    /// have replaced it already).
    pub async fn close_stale(&self, conn: &Arc<Connection>) {
        let removed = {
            let mut table = self.table.lock();
            match table.slots.get(&conn.server) {
                Some(Slot::Ready(live)) if Arc::ptr_eq(live, conn) => {
                    table.slots.remove(&conn.server)
                }
                _ => None,
            }
        };
        if removed.is_some() {
            conn.close().await;
        }
    }

    pub fn is_connecting(&self, server: &str) -> bool {
        matches!(
            self.table.lock().slots.get(server),
            Some(Slot::Connecting { .. })
        )
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
            let mut table = self.table.lock();
            if table.closed {
                return Err(ConnectError::Closed);
            }
            match table.slots.get(server) {
                Some(Slot::Ready(conn)) if conn.is_alive() => return Ok(conn.clone()),
                Some(Slot::Connecting { attempt, .. }) => attempt.clone(),
                _ => self.start_attempt(&mut table, server, spec.boxed(), None),
            }
        };
        attempt.await
    }

    /// A new connection to `server`, replacing the live one (which is closed first). Callers
    /// that replace a server while an attempt to connect it runs share that attempt instead.
    pub async fn replace_with(
        self: &Arc<Self>,
        server: &str,
        spec: impl Future<Output = Result<ConnectSpec, ConnectError>> + Send + 'static,
    ) -> Result<Arc<Connection>, ConnectError> {
        let attempt = {
            let mut table = self.table.lock();
            if table.closed {
                return Err(ConnectError::Closed);
            }
            match table.slots.remove(server) {
                Some(Slot::Connecting { id, attempt }) => {
                    let shared = attempt.clone();
                    table
                        .slots
                        .insert(server.to_string(), Slot::Connecting { id, attempt });
                    shared
                }
                Some(Slot::Ready(old)) => {
                    self.start_attempt(&mut table, server, spec.boxed(), Some(old))
                }
                None => self.start_attempt(&mut table, server, spec.boxed(), None),
            }
        };
        attempt.await
    }

    /// Starts an attempt (after closing `old`) and puts it in the table.
    fn start_attempt(
        self: &Arc<Self>,
        table: &mut Table,
        server: &str,
        spec: BoxFuture<'static, Result<ConnectSpec, ConnectError>>,
        old: Option<Arc<Connection>>,
    ) -> Attempt {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let attempt = self.clone().attempt(server.to_string(), spec, id, old);
        table.slots.insert(
            server.to_string(),
            Slot::Connecting {
                id,
                attempt: attempt.clone(),
            },
        );
        let _ = self.notices.send(Notice::Connecting {
            server: server.to_string(),
        });
        attempt
    }

    fn attempt(
        self: Arc<Self>,
        server: String,
        spec: BoxFuture<'static, Result<ConnectSpec, ConnectError>>,
        id: u64,
        old: Option<Arc<Connection>>,
    ) -> Attempt {
        async move {
            if let Some(old) = old {
                old.close().await;
            }
            let opened = match spec.await {
                Ok(spec) => {
                    let tail = self.log_tail(&server);
                    Connection::open(&spec, self.notices.clone(), self.host.clone(), tail).await
                }
                Err(e) => Err(e),
            };
            let keeper = opened.as_ref().ok().and_then(|conn| conn.keeper());
            let orphan = {
                let mut table = self.table.lock();
                let current = !table.closed
                    && matches!(
                        table.slots.get(&server),
                        Some(Slot::Connecting { id: current, .. }) if *current == id
                    );
                match (&opened, current) {
                    (Ok(conn), true) => {
                        table
                            .slots
                            .insert(server.clone(), Slot::Ready(conn.clone()));
                        if let Some(keeper) = keeper {
                            keeper.opened(conn);
                        }
                        let _ = self.notices.send(Notice::Opened { server });
                        None
                    }
                    (Err(_), true) => {
                        table.slots.remove(&server);
                        None
                    }
                    // Given up while it ran (`close`, `close_all`): what it opened is stopped.
                    (Ok(conn), false) => Some(conn.clone()),
                    (Err(_), false) => None,
                }
            };
            match orphan {
                Some(conn) => {
                    conn.close().await;
                    Err(ConnectError::Closed)
                }
                None => opened,
            }
        }
        .boxed()
        .shared()
    }

    /// Closes the connection to `server` (waiting until its processes are gone).
    pub async fn close(&self, server: &str) {
        let slot = self.table.lock().slots.remove(server);
        match slot {
            Some(Slot::Ready(conn)) => conn.close().await,
            Some(Slot::Connecting { attempt, .. }) => {
                let _ = attempt.await;
            }
            None => {}
        }
    }

    pub fn servers(&self) -> Vec<String> {
        self.table.lock().slots.keys().cloned().collect()
    }

    /// Tells every live server to stop, without waiting (for `Drop`); nothing connects after.
    /// One the session's family keeps is left to it.
    pub fn abort_all(&self) {
        let mut table = self.table.lock();
        table.closed = true;
        for slot in table.slots.values() {
            if let Slot::Ready(conn) = slot {
                if !kept(conn) {
                    conn.abort();
                }
            }
        }
    }

    /// Closes every connection at once; nothing connects after. One the session's family keeps
    /// is left to it.
    pub async fn close_all(&self) {
        let slots: Vec<Slot> = {
            let mut table = self.table.lock();
            table.closed = true;
            table.slots.drain().map(|(_, slot)| slot).collect()
        };
        futures::future::join_all(slots.into_iter().map(|slot| async move {
            match slot {
                Slot::Ready(conn) if kept(&conn) => {}
                Slot::Ready(conn) => conn.close().await,
                Slot::Connecting { attempt, .. } => {
                    let _ = attempt.await;
                }
            }
        }))
        .await;
    }
}

/// Whether the family that shares `conn`'s server keeps it running once its session leaves.
fn kept(conn: &Arc<Connection>) -> bool {
    conn.keeper().is_some_and(|keeper| keeper.keep(conn))
}
