//! One live MCP server: how we reach it (a process we own, or a remote endpoint), its rmcp peer,
//! and whether it is still there. Listing it is in `listing`, requests to it in `request`, what a
//! failed one means in `failure`, tasks in `task`, resource subscriptions in `subscriptions`.

use super::client_side::{ClientSide, LogTail, Pending};
use super::client_tasks::{ClientTasks, Limits};
use super::handler::{Handler, Notice, ProgressRoutes};
use super::handshake::Service;
use super::host::Host;
#[cfg(feature = "remote")]
use super::link::open_remote;
use super::link::{open_process, open_shared, open_socket, Link, RemoteKind};
use super::process;
use super::question_bounds::QuestionSlots;
use super::spec::{ConnectSpec, Keeper, TransportSpec};
use super::{ConnectError, RequestError};
use parking_lot::Mutex;
use rmcp::model::RootsListChangedNotification;
use rmcp::service::RoleClient;
use rmcp::Peer;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

/// How long a server gets to exit by itself once its stdin is closed (and again after SIGTERM).
const STOP_GRACE: Duration = Duration::from_millis(1500);

mod failure;
#[cfg(test)]
mod in_memory;
mod listing;
mod request;
mod subscriptions;
mod task;

pub use listing::{Cut, ListBounds, Listing};
pub use request::RequestOptions;
pub use task::created_task_id;

pub struct Connection {
    pub server: String,
    /// Unique among the connections of this process.
    pub id: u64,
    pub instructions: Option<String>,
    /// The latest listing of the server's tools and resources (the first, then `relist`'s).
    listing: Mutex<Arc<Listing>>,
    /// The first listing, taken once for everyone who waits for it, and when it was asked for.
    first_listing: OnceCell<Arc<Listing>>,
    first_listing_asked: Mutex<Option<Instant>>,
    peer: Peer<RoleClient>,
    has_resources: bool,
    has_prompts: bool,
    stop: CancellationToken,
    /// Set when we end the session ourselves (rmcp also cancels `stop` when a session ends).
    asked: AtomicBool,
    /// Cancelled once the session has ended (and a process group has been told to stop).
    ended: CancellationToken,
    link: Link,
    progress: ProgressRoutes,
    /// Answers what the server asks (also inside `input_required` results).
    client: ClientSide,
    /// Where this connection reports to the pool's owner.
    client_notices: UnboundedSender<Notice>,
    /// Resources whose updates were asked for.
    subscribed: Mutex<HashSet<String>>,
    /// The 2026-07-28 listen stream of those, when open.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    in_flight: AtomicUsize,
    last_used: Mutex<Instant>,
    /// A request timed out since the server last answered: it may be stuck as a whole.
    suspect: AtomicBool,
    /// Set when the server is shared with the session's family.
    keeper: Option<Arc<dyn Keeper>>,
}

impl Connection {
    /// Starts or reaches the server and runs the opening handshake, all within `spec.timeout`.
    /// The server is not listed yet: see [`Connection::listed`].
    pub async fn open(
        spec: &ConnectSpec,
        notices: UnboundedSender<Notice>,
        host: Arc<dyn Host>,
        log_tail: Arc<LogTail>,
    ) -> Result<Arc<Self>, ConnectError> {
        let sides = Sides::new(spec, notices, host, log_tail);
        let (handler, stop) = (sides.handler(), &sides.stop);
        let (service, link) = match &spec.transport {
            TransportSpec::Stdio(stdio) => open_process(spec, stdio, handler, stop)
                .await
                .map_err(ConnectError::Failed)?,
            #[cfg(feature = "remote")]
            TransportSpec::Remote(remote) => open_remote(spec, remote, handler, stop).await?,
            TransportSpec::Socket(path) => open_socket(spec, path, handler, stop)
                .await
                .map_err(ConnectError::Failed)?,
            TransportSpec::Shared(shared) => open_shared(spec, shared, handler, stop).await?,
        };
        Ok(sides.connect(spec, service, link).await)
    }

    /// What ties it to the family that shares its server, if one does.
    pub fn keeper(&self) -> Option<Arc<dyn Keeper>> {
        self.keeper.clone()
    }

    /// Resolves once the session has ended (and a process group has been told to stop); it
    /// does not keep the connection.
    pub fn ended(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.ended.clone().cancelled_owned()
    }

    /// Whether the connection speaks the stateless 2026-07-28 revision.
    pub fn is_modern(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize())
    }

    /// `logging/setLevel` to the configured level, where the server logs and the revision has
    /// the method (2026-07-28 removed it: there every request carries the level, `request_meta`).
    async fn ask_log_level(&self) {
        let logs = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.logging.is_some());
        if logs && !self.is_modern() {
            let level = json!({ "level": self.client.features.log_level.name() });
            let _ = self
                .request(
                    "logging/setLevel",
                    level,
                    self.plain(Duration::from_secs(5)),
                )
                .await;
        }
    }

    /// Tells the server its roots changed (the session's directory moved), where it was
    /// offered roots and the revision has the notification.
    pub async fn roots_changed(&self) {
        if self.client.features.roots && !self.is_modern() {
            let notice = RootsListChangedNotification::default();
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                self.peer.send_notification(notice.into()),
            )
            .await;
        }
    }

    /// The last warnings and errors the server logged, one per line.
    pub fn recent_log(&self) -> Option<String> {
        self.client.log_tail.lines()
    }

    /// The process group leader, for a server we started.
    pub fn pid(&self) -> Option<u32> {
        match &self.link {
            Link::Process { pid, .. } => Some(*pid),
            Link::Remote { .. } | Link::Broker(_) | Link::Socket => None,
        }
    }

    /// The transport of a remote server.
    pub fn remote_kind(&self) -> Option<RemoteKind> {
        match &self.link {
            Link::Remote { kind, .. } => Some(*kind),
            Link::Process { .. } | Link::Broker(_) | Link::Socket => None,
        }
    }

    /// For a server reached through the broker: how many sessions use it now, this one
    /// included.
    pub fn shared_with(&self) -> Option<usize> {
        match &self.link {
            Link::Broker(link) => Some(link.sessions()),
            Link::Process { .. } | Link::Remote { .. } | Link::Socket => None,
        }
    }

    /// For a family's server reached through the family's hub: where it runs.
    pub fn runs_in(&self) -> Option<String> {
        match &self.link {
            Link::Broker(link) => link.runs_in(),
            Link::Process { .. } | Link::Remote { .. } | Link::Socket => None,
        }
    }

    /// What the server said of itself in the opening handshake (an `InitializeResult`).
    pub fn server_info(&self) -> Option<Value> {
        serde_json::to_value(self.peer.peer_info()?).ok()
    }

    /// Whether the server completes argument values (`completion/complete`).
    pub fn completes(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.completions.is_some())
    }

    pub fn has_prompts(&self) -> bool {
        self.has_prompts
    }

    /// Returns once no request has been in flight for `quiet`, or when the session has ended.
    pub async fn until_idle(&self, quiet: Duration) {
        loop {
            let wait = match (self.in_flight(), self.idle_for()) {
                (0, idle) if idle >= quiet => return,
                (0, idle) => quiet - idle,
                _ => quiet,
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.ended.cancelled() => return,
            }
        }
    }

    /// Stops the server without waiting (for teardown paths that cannot await).
    pub fn abort(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.stop.cancel();
    }

    /// Whether we ended the session ourselves (closed, replaced, stopped as idle).
    pub fn was_stopped(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }

    pub fn is_alive(&self) -> bool {
        !self.stop.is_cancelled() && !self.peer.is_transport_closed()
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Counts as use of the server now.
    pub fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used.lock().elapsed()
    }

    /// Ends the session (closing the server's stdin) and waits until its process group is gone.
    pub async fn close(&self) {
        self.abort();
        self.ended.cancelled().await;
    }

    /// Whether the server still answers at all: true unless a request timed out since its last
    /// answer and a ping now gets no answer within `limit` either.
    pub async fn responsive(&self, limit: Duration) -> bool {
        if !self.suspect.load(Ordering::SeqCst) {
            return true;
        }
        let pinged = self.request("ping", json!({}), self.plain(limit)).await;
        !matches!(
            pinged,
            Err(RequestError::Timeout(_) | RequestError::Closed(_))
        )
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.abort();
    }
}

/// Our side of a session before it opens: what answers the server, the routes of its progress,
/// and the token that ends it.
struct Sides {
    client: ClientSide,
    progress: ProgressRoutes,
    notices: UnboundedSender<Notice>,
    keeper: Option<Arc<dyn Keeper>>,
    stop: CancellationToken,
}

impl Sides {
    fn new(
        spec: &ConnectSpec,
        notices: UnboundedSender<Notice>,
        host: Arc<dyn Host>,
        log_tail: Arc<LogTail>,
    ) -> Sides {
        // The session's own host says what it traces, before a family takes its questions.
        let trace = host
            .trace(&spec.server)
            .map(|t| (t, spec.transport.label()));
        let keeper = spec.keeper.as_ref().map(|k| k.0.clone());
        let (host, notices) = match &keeper {
            Some(keeper) => keeper.wrap(host, notices),
            None => (host, notices),
        };
        let stop = CancellationToken::new();
        let client = ClientSide {
            server: spec.server.clone(),
            features: spec.client.clone(),
            host,
            pending: Arc::new(Pending::default()),
            log_tail,
            tasks: ClientTasks::new(Limits::default(), stop.child_token()),
            slots: QuestionSlots::default(),
            trace,
        };
        Sides {
            client,
            progress: ProgressRoutes::default(),
            notices,
            keeper,
            stop,
        }
    }

    fn handler(&self) -> Handler {
        Handler {
            client: self.client.clone(),
            progress: self.progress.clone(),
            notices: self.notices.clone(),
            broker: None,
        }
    }

    /// The connection over an opened session, watched until the session ends.
    async fn connect(self, spec: &ConnectSpec, service: Service, link: Link) -> Arc<Connection> {
        let info = service.peer().peer_info();
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let conn = Arc::new(Connection {
            server: spec.server.clone(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            instructions: info
                .as_ref()
                .and_then(|i| i.instructions.clone())
                .filter(|s| !s.trim().is_empty()),
            has_resources: info
                .as_ref()
                .is_some_and(|i| i.capabilities.resources.is_some()),
            has_prompts: info
                .as_ref()
                .is_some_and(|i| i.capabilities.prompts.is_some()),
            peer: service.peer().clone(),
            stop: self.stop,
            asked: AtomicBool::new(false),
            ended: CancellationToken::new(),
            link,
            progress: self.progress,
            client: self.client,
            client_notices: self.notices.clone(),
            subscribed: Mutex::default(),
            listener: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            listing: Mutex::default(),
            first_listing: OnceCell::new(),
            first_listing_asked: Mutex::default(),
            suspect: AtomicBool::new(false),
            keeper: self.keeper,
        });
        let (supervised, notices) = (conn.clone(), self.notices);
        tokio::spawn(async move {
            let _ = service.waiting().await;
            let asked = supervised.asked.load(Ordering::SeqCst);
            if let Link::Process { pid, exit, .. } = &supervised.link {
                process::stop_group(*pid, exit.clone(), STOP_GRACE).await;
            }
            if !asked {
                let why = supervised.death_note().await;
                let _ = notices.send(Notice::Lost {
                    server: supervised.server.clone(),
                    why,
                });
            }
            supervised.ended.cancel();
        });
        conn.ask_log_level().await;
        conn
    }
}
