//! The per-user broker (README "Shared servers"): one process per user and agent dir, started on
//! demand by the first session that needs it (`pi-mcp-native-helper broker`, detached from Pi),
//! that runs the shared stdio servers for every session. Sessions talk MCP to it over a Unix
//! socket (a named pipe on Windows), one connection per session and server; servers whose launch
//! is the same for two sessions run once ([`crate::pool::shared::identity`]).
//!
//! It owns the servers' processes as a session would (process groups, the watchdog: killed even
//! by SIGKILL, its servers stop), counts the sessions using each server, stops a server once no
//! session has used it for its idle time, and exits when it has had no session and no server for
//! a while. Layout: `daemon` (detaching, the lock, readiness) · `own_log` (its log) · `listen`
//! (accepting, refusing other users) · `hop` (one session's connection, within its bounds) ·
//! `outbox` (what a connection has yet to read) · `route` (whose question it is) · `memory`
//! (given back after a flood) · `family` (the broker in family mode: a session's hub, inside its
//! process); this file holds the table of shared servers.

mod daemon;
pub mod family;
mod hop;
mod listen;
mod memory;
mod outbox;
#[cfg(unix)]
mod own_log;
mod route;
mod subscribe;

pub use daemon::main;
pub use listen::Listener;

use crate::pool::shared::place::Place;
use crate::pool::shared::wire::{
    self, Attach, BrokerStatus, Farewell, FarewellReason, SharedServer,
};
use crate::pool::{
    created_task_id, Asker, ConnectSpec, Connection, ListBounds, Notice, Pool, RequestOptions,
    TransportSpec,
};
use crate::server_log::LogLevel;
use crate::server_log::{iso_time, LogMessage, ServerLog};
use hop::{Attached, Hop};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// How often unused servers and an idle broker are looked for.
const TICK: Duration = Duration::from_millis(250);
/// How long a server no session uses lives on when every session using it would have kept it
/// forever (keep-alive).
const UNUSED_LIMIT: Duration = Duration::from_secs(10 * 60);
/// A failed start is told to sessions that ask for the server within this time, rather than
/// tried again for each of them.
const FAILURE_SHARED: Duration = Duration::from_secs(5);
/// How long stopping may take (servers to exit).
const STOP_LIMIT: Duration = Duration::from_secs(8);
/// Task ids remembered per server (for routing questions about a task).
const MAX_TASKS: usize = 10_000;
/// How long a family's server the hub runs itself lives on after its last guest left.
pub const FAMILY_GRACE: Duration = Duration::from_secs(3);

/// What tests (and people) may change; environment variables of the broker.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long the broker stays without sessions and servers (`PI_MCP_BROKER_LINGER_MS`).
    pub linger: Duration,
    /// The user whose sessions are served (`PI_MCP_BROKER_UID`, a test knob: CI runs as root
    /// and sets another uid to see itself refused); the broker's own by default.
    pub accept_uid: u32,
}

impl Options {
    pub fn from_env() -> Options {
        let number = |name: &str| std::env::var(name).ok()?.parse::<u64>().ok();
        Options {
            linger: Duration::from_millis(number("PI_MCP_BROKER_LINGER_MS").unwrap_or(60_000)),
            accept_uid: number("PI_MCP_BROKER_UID")
                .map_or_else(crate::pool::shared::place::current_uid, |uid| uid as u32),
        }
    }
}

pub struct Broker {
    mode: Mode,
    pool: Arc<Pool>,
    shares: Mutex<Shares>,
    started: Instant,
    stopping: CancellationToken,
    /// Cancelled once its upkeep no longer runs (it stopped, or its runtime is gone).
    running: CancellationToken,
    notes: Notes,
}

/// Whom a broker serves.
enum Mode {
    /// Every session of the user and agent dir, at `place`; the servers' log messages go to
    /// `<agentDir>/mcp.log` (`log`).
    User {
        place: Place,
        options: Options,
        log: ServerLog,
    },
    /// A session's family, as its hub inside the session's process (see [`family`]).
    Family(family::FamilyMode),
}

/// Where the broker's own notes go: its log (stderr, which the daemon writes to its log file),
/// or, for a hub inside a Pi process, that process's `mcp.log`.
#[derive(Clone)]
pub(crate) enum Notes {
    Stderr,
    Log(ServerLog),
}

impl Notes {
    fn write(&self, text: &str) {
        match self {
            Notes::Stderr => note(text),
            Notes::Log(log) => log.append(
                "family",
                &LogMessage {
                    level: LogLevel::Notice,
                    logger: None,
                    data: Value::String(text.to_string()),
                },
            ),
        }
    }
}

#[derive(Default)]
struct Shares {
    /// By identity.
    servers: HashMap<String, Share>,
    /// Every open connection (attached or not).
    hops: HashMap<u64, Arc<Hop>>,
    /// Since when there has been no connection and no server.
    quiet_since: Option<Instant>,
}

/// One shared server.
struct Share {
    /// Its name in the config of the session that first asked for it.
    name: String,
    spec: ConnectSpec,
    /// Sessions' connections to it.
    hops: Vec<Arc<Hop>>,
    /// Attaches under way (they keep it even without connections).
    attaching: usize,
    /// How long it may sit unused once no session uses it: the longest of its sessions' (a
    /// session that would keep it forever counts as [`UNUSED_LIMIT`]).
    idle: Duration,
    failure: Option<(Instant, String)>,
    /// Which session each task it runs belongs to.
    tasks: HashMap<String, String>,
    subscriptions: subscribe::Subscriptions,
    /// Where its log messages go.
    log: ServerLog,
    /// Its roots: the directory the sessions of a family share (see `identity::family`), else
    /// the one it was launched in.
    roots: Option<PathBuf>,
    /// Its listing may be served from memory: no list change was heard since it was taken.
    listed_fresh: bool,
    /// A family's server the hub took over when the session that ran it ended.
    held: Option<Arc<Connection>>,
    /// The connection (by id) whose end the hub watches: one a session of its process runs.
    watched: Option<u64>,
}

impl Share {
    /// No session uses it, nor is one attaching.
    fn unused(&self) -> bool {
        self.hops.is_empty() && self.attaching == 0
    }

    fn new(attach: &Attach, log: ServerLog) -> Share {
        Share {
            name: attach.name.clone(),
            spec: ConnectSpec {
                server: attach.identity.clone(),
                transport: TransportSpec::Stdio(attach.launch.clone()),
                protocol: attach.protocol,
                timeout: Duration::from_millis(attach.timeout_ms),
                debug: attach.debug,
                // Tasks offered as the sessions ask (the features are part of the identity);
                // each session follows its own (see `BrokerHost::follows_tasks`).
                client: attach.client.clone(),
                keeper: None,
            },
            hops: vec![],
            attaching: 0,
            idle: Duration::ZERO,
            failure: None,
            tasks: HashMap::new(),
            subscriptions: Default::default(),
            log,
            roots: attach.family.as_ref().and_then(|f| f.roots_cwd.clone()),
            listed_fresh: true,
            held: None,
            watched: None,
        }
    }

    fn sessions(&self) -> usize {
        self.hops
            .iter()
            .filter_map(|hop| hop.attached())
            .map(|a| a.session.id.as_str())
            .collect::<HashSet<_>>()
            .len()
    }

    fn launch(&self) -> Option<&crate::pool::StdioSpec> {
        match &self.spec.transport {
            TransportSpec::Stdio(stdio) => Some(stdio),
            _ => None,
        }
    }
}

impl Broker {
    /// A broker at `place` for `agent_dir`; it serves once [`Broker::serve`] runs.
    pub fn new(place: Place, agent_dir: PathBuf, options: Options) -> Arc<Broker> {
        let log = ServerLog::new(agent_dir.join("mcp.log"));
        Broker::with_mode(
            Mode::User {
                place,
                options,
                log,
            },
            Notes::Stderr,
        )
    }

    fn with_mode(mode: Mode, notes: Notes) -> Arc<Broker> {
        let host = Arc::new(route::BrokerHost::default());
        let (pool, notices) = Pool::with_host(host.clone());
        let broker = Arc::new(Broker {
            mode,
            pool,
            shares: Mutex::default(),
            started: Instant::now(),
            stopping: CancellationToken::new(),
            running: CancellationToken::new(),
            notes,
        });
        host.serve(Arc::downgrade(&broker));
        tokio::spawn(Broker::watch(Arc::downgrade(&broker), notices));
        let (this, running) = (Arc::downgrade(&broker), broker.running.clone());
        tokio::spawn(async move {
            let _running = running.drop_guard();
            Broker::upkeep(this).await;
        });
        broker
    }

    /// Accepts sessions on `listener` until the broker stops (told to, or idle), then stops
    /// every server.
    pub async fn serve(self: &Arc<Self>, listener: Listener) {
        crate::pool::watchdog::start_in_background();
        self.note(&format!(
            "listening on {} (pid {})",
            self.endpoint(),
            std::process::id()
        ));
        listen::accept(self, listener).await;
        let hops: Vec<Arc<Hop>> = self.shares.lock().hops.values().cloned().collect();
        let farewell = Farewell {
            reason: FarewellReason::BrokerStopping,
            message: "the shared-server broker was stopped".into(),
        };
        for hop in hops {
            hop.farewell(&farewell);
        }
        let _ = tokio::time::timeout(STOP_LIMIT, self.pool.close_all()).await;
        if let Mode::User { log, .. } = &self.mode {
            log.flushed().await;
        }
        self.note("stopped");
    }

    fn endpoint(&self) -> String {
        match &self.mode {
            Mode::User { place, .. } => place.endpoint(),
            Mode::Family(family) => family.endpoint(),
        }
    }

    /// The user whose sessions are served.
    #[cfg(unix)]
    fn accept_uid(&self) -> u32 {
        match &self.mode {
            Mode::User { options, .. } => options.accept_uid,
            Mode::Family(_) => crate::pool::shared::place::current_uid(),
        }
    }

    #[cfg(unix)]
    fn place(&self) -> Option<&Place> {
        match &self.mode {
            Mode::User { place, .. } => Some(place),
            Mode::Family(_) => None,
        }
    }

    /// Whether a family's hub holds as many connections as it may.
    fn full(&self) -> bool {
        self.family().is_some() && self.shares.lock().hops.len() >= hop::MAX_HOPS
    }

    fn family(&self) -> Option<&family::FamilyMode> {
        match &self.mode {
            Mode::Family(family) => Some(family),
            Mode::User { .. } => None,
        }
    }

    /// Makes [`Broker::serve`] return.
    pub fn stop(&self) {
        self.stopping.cancel();
    }

    fn note(&self, text: &str) {
        self.notes.write(text);
    }

    fn join(&self, hop: &Arc<Hop>) {
        let mut shares = self.shares.lock();
        shares.hops.insert(hop.id, hop.clone());
        shares.quiet_since = None;
    }

    /// A connection ended: its session no longer uses its server, nor the resources only it was
    /// subscribed to.
    fn leave(&self, hop: &Hop) {
        let unwanted = {
            let mut shares = self.shares.lock();
            shares.hops.remove(&hop.id);
            let identity = hop.attached().map(|a| a.identity.clone());
            match identity.as_ref().and_then(|i| shares.servers.get_mut(i)) {
                Some(share) => {
                    share.hops.retain(|h| h.id != hop.id);
                    share.subscriptions.leave(hop.id)
                }
                None => vec![],
            }
        };
        let Some(attached) = hop.attached() else {
            return;
        };
        for uri in unwanted {
            let (upstream, timeout) = (attached.upstream.clone(), attached.timeout);
            tokio::spawn(async move {
                let params = json!({ "uri": uri });
                let _ = upstream
                    .request(
                        "resources/unsubscribe",
                        params,
                        RequestOptions::new(timeout),
                    )
                    .await;
            });
        }
        self.announce(&attached.identity);
    }

    /// Records a session's (un)subscription to `uri`; true when the server is to hear of it.
    fn subscription(&self, identity: &str, uri: &str, hop: u64, subscribe: bool) -> bool {
        let mut shares = self.shares.lock();
        let Some(share) = shares.servers.get_mut(identity) else {
            return false;
        };
        match subscribe {
            true => share.subscriptions.add(uri, hop),
            false => share.subscriptions.remove(uri, hop),
        }
    }

    /// Starts the server `attach` names, or finds it running, for the session; returns the
    /// `initialize` result (the server's own, but for the protocol version), or the error's code
    /// and message.
    async fn attach(
        self: &Arc<Self>,
        hop: &Arc<Hop>,
        attach: Attach,
    ) -> Result<Value, (i32, String)> {
        if let Some(family) = self.family() {
            family
                .admits(hop.in_process(), &attach)
                .map_err(|why| (wire::REFUSED, why))?;
        }
        let identity = attach.identity.clone();
        let spec = {
            let mut shares = self.shares.lock();
            let log = self.log_for(&attach);
            let share = shares
                .servers
                .entry(identity.clone())
                .or_insert_with(|| Share::new(&attach, log));
            if let Some((at, why)) = &share.failure {
                if at.elapsed() < FAILURE_SHARED {
                    return Err((wire::START_FAILED, why.clone()));
                }
            }
            share.attaching += 1;
            share.spec.clone()
        };
        let connected = match self.family() {
            Some(_) => self.reach(&identity, spec).await,
            None => self.pool.connect(spec).await,
        };
        let mut shares = self.shares.lock();
        let log = self.log_for(&attach);
        let share = shares
            .servers
            .entry(identity.clone())
            .or_insert_with(|| Share::new(&attach, log));
        share.attaching -= 1;
        let upstream = match connected {
            Ok(upstream) => upstream,
            Err(e) => {
                let why = e.to_string();
                self.note(&format!(
                    "{} ({identity}) did not start: {why}",
                    attach.name
                ));
                share.failure = Some((Instant::now(), why.clone()));
                return Err((wire::START_FAILED, why));
            }
        };
        share.failure = None;
        let idle = match self.mode {
            Mode::Family(_) => FAMILY_GRACE,
            Mode::User { .. } => attach.idle_ms.map_or(UNUSED_LIMIT, Duration::from_millis),
        };
        share.idle = share.idle.max(idle);
        share.hops.push(hop.clone());
        let info = upstream.server_info().unwrap_or_else(|| json!({}));
        hop.attach(Attached {
            identity,
            name: attach.name,
            session: attach.session,
            upstream,
            timeout: Duration::from_millis(attach.timeout_ms),
        });
        Ok(info)
    }

    /// Where the log messages of the server `attach` names go: the user's broker writes its
    /// agent dir's `mcp.log`, a family's hub the one of the member's agent dir.
    fn log_for(&self, attach: &Attach) -> ServerLog {
        match (&self.mode, &attach.family) {
            (Mode::User { log, .. }, _) => log.clone(),
            (Mode::Family(family), Some(member)) => family.log(&member.agent_dir),
            (Mode::Family(family), None) => family.log(&PathBuf::new()),
        }
    }

    /// The first page of a list (`tools/list` and the like, without a cursor) from the server's
    /// first listing, when a family's hub serves it: taken once (with the widest bounds; each
    /// session applies its own) and shared with whoever else uses the connection, so a session
    /// gets the listing without the server listing it again. `None`: forward the request.
    async fn listed(&self, attached: &Attached, method: &str, params: &Value) -> Option<Value> {
        self.family()?;
        if params.get("cursor").is_some_and(|c| !c.is_null()) {
            return None;
        }
        let fresh = self
            .shares
            .lock()
            .servers
            .get(&attached.identity)
            .is_some_and(|share| share.listed_fresh);
        if !fresh {
            return None;
        }
        let bounds = ListBounds::widest(attached.timeout);
        let listing = attached.upstream.listed(&bounds).await.ok()?;
        if listing.cut.is_some() {
            return None;
        }
        let mut page = match method {
            "tools/list" => json!({ "tools": listing.tools }),
            "resources/list" => json!({ "resources": listing.resources }),
            "resources/templates/list" => json!({ "resourceTemplates": listing.templates }),
            "prompts/list" => json!({ "prompts": listing.prompts }),
            _ => return None,
        };
        if method == "tools/list" && !listing.left_out.is_empty() {
            page["_meta"] = json!({ crate::pool::LEFT_OUT_FIELD: listing.left_out });
        }
        Some(page)
    }

    /// Tells every session of a server how many sessions use it (in a family, the session
    /// whose own connection runs it too).
    fn announce(&self, identity: &str) {
        let shares = self.shares.lock();
        if let Some(share) = shares.servers.get(identity) {
            let sessions = share.sessions() + usize::from(self.owned_elsewhere(identity, share));
            for hop in &share.hops {
                hop.notify(wire::SESSIONS, json!({ "sessions": sessions }));
            }
        }
    }

    /// The server's connection ended (it exited, crashed): each session using it is told why
    /// and disconnected; the next use starts it again, once for all of them.
    fn lost(&self, identity: &str, why: &str) {
        let gone: Vec<Arc<Hop>> = {
            let mut shares = self.shares.lock();
            let Some(share) = shares.servers.get_mut(identity) else {
                return;
            };
            share.tasks.clear();
            share.subscriptions.clear();
            if share.held.as_ref().is_some_and(|conn| !conn.is_alive()) {
                share.held = None;
            }
            share
                .hops
                .iter()
                .filter(|hop| hop.attached().is_some_and(|a| !a.upstream.is_alive()))
                .cloned()
                .collect()
        };
        if gone.is_empty() {
            return;
        }
        self.note(&format!("{identity} lost: {why}"));
        let farewell = Farewell {
            reason: FarewellReason::ServerLost,
            message: why.to_string(),
        };
        for hop in gone {
            hop.farewell(&farewell);
        }
    }

    /// Stops a server that no longer answers; its sessions are told why.
    async fn restart(&self, identity: &str, upstream: &Arc<Connection>, why: String) {
        let hops: Vec<Arc<Hop>> = {
            let shares = self.shares.lock();
            shares.servers.get(identity).map_or_else(Vec::new, |share| {
                share
                    .hops
                    .iter()
                    .filter(|hop| {
                        hop.attached()
                            .is_some_and(|a| Arc::ptr_eq(&a.upstream, upstream))
                    })
                    .cloned()
                    .collect()
            })
        };
        self.note(&format!("{identity}: {why}"));
        let farewell = Farewell {
            reason: FarewellReason::ServerLost,
            message: why,
        };
        for hop in hops {
            hop.farewell(&farewell);
        }
        self.pool.close_stale(upstream).await;
    }

    /// Remembers which session a task belongs to, from the result that created it (2025-11-25:
    /// `{ task: { taskId } }`; the 2026-07-28 extension: `{ resultType: "task", taskId }`).
    fn note_task(&self, identity: &str, session: &str, result: &Value) {
        let Some(task) = created_task_id(result) else {
            return;
        };
        let mut shares = self.shares.lock();
        if let Some(share) = shares.servers.get_mut(identity) {
            if share.tasks.len() >= MAX_TASKS {
                share.tasks.clear();
                share.subscriptions.clear();
            }
            share.tasks.insert(task.to_string(), session.to_string());
        }
    }

    /// Who answers a question of the shared server `identity` (see [`route`]): in the user's
    /// broker a session connected to it; in a family's hub also `owner`, the session of this
    /// process whose own connection got the question, or the family's UI.
    pub(crate) fn answerer(
        &self,
        identity: &str,
        asker: &Asker,
        owner: Option<&family::LocalSession>,
    ) -> route::Answerer {
        use route::Answerer;
        let shares = self.shares.lock();
        let Some(share) = shares.servers.get(identity) else {
            return match owner {
                Some(_) => Answerer::Local,
                None => Answerer::Refused(format!("{} is no longer shared", asker.server)),
            };
        };
        let family = self.family().is_some();
        let hop_of = |caller: &str| {
            let session = match family {
                true => caller.strip_prefix(wire::FAMILY_CALLER)?,
                false => caller,
            };
            share
                .hops
                .iter()
                .find(|hop| hop.attached().is_some_and(|a| a.session.id == session))
        };
        let task_owner = asker.task.as_ref().and_then(|task| share.tasks.get(task));
        let linked = task_owner.and_then(|session| {
            share
                .hops
                .iter()
                .find(|hop| hop.attached().is_some_and(|a| &a.session.id == session))
        });
        if !family {
            if let Some(hop) = linked {
                return Answerer::Hop(hop.clone());
            }
        }
        // The sessions with calls in flight: hops, and `None` for the owner.
        let mut seen = HashSet::new();
        let mut callers: Vec<Option<&Arc<Hop>>> = vec![];
        let mut owner_calls = false;
        for caller in asker.callers.iter().filter(|c| seen.insert(c.to_string())) {
            match (hop_of(caller), owner) {
                (Some(hop), _) => callers.push(Some(hop)),
                (None, Some(_)) if family && !owner_calls => {
                    owner_calls = true;
                    callers.push(None);
                }
                _ => {}
            }
        }
        let session_of = |caller: &Option<&Arc<Hop>>| match caller {
            Some(hop) => hop.attached().map(|a| a.session.clone()),
            None => owner.map(|o| o.info.session()),
        };
        let candidates: Vec<route::Candidate> = callers
            .iter()
            .map(|caller| route::Candidate {
                ui: session_of(caller).is_some_and(|s| s.ui),
                last_call: caller.and_then(|hop| hop.last_call()),
            })
            .collect();
        let as_answerer = |i: usize| match callers[i] {
            Some(hop) => Answerer::Hop(hop.clone()),
            None => Answerer::Local,
        };
        if !family {
            return match route::choose(&share.name, &candidates) {
                Ok(i) => as_answerer(i),
                Err(why) => Answerer::Refused(why),
            };
        }
        let linked = linked.and_then(|linked| {
            callers
                .iter()
                .position(|c| c.is_some_and(|hop| Arc::ptr_eq(hop, linked)))
        });
        let ui = family::family().ui_session();
        match route::target(&share.name, &candidates, linked, ui.is_some()) {
            route::Target::Caller(i) => as_answerer(i),
            route::Target::Ui { on_behalf } => match ui {
                Some(ui) => Answerer::Ui {
                    host: ui.host.clone(),
                    server: share.name.clone(),
                    on_behalf: crate::english::listed(
                        on_behalf
                            .iter()
                            .filter_map(|&i| session_of(&callers[i]))
                            .map(|s| family::who(&s)),
                    ),
                },
                None => as_answerer(on_behalf[0]),
            },
            route::Target::Refuse(why) => Answerer::Refused(why),
        }
    }

    /// The directory a shared server's roots name: its family's, else the one it was launched
    /// in.
    fn roots_dir(&self, identity: &str) -> Option<PathBuf> {
        let shares = self.shares.lock();
        let share = shares.servers.get(identity)?;
        share
            .roots
            .clone()
            .or_else(|| Some(share.launch()?.cwd.clone()))
    }

    fn log_message(&self, identity: &str, message: &LogMessage) {
        let shares = self.shares.lock();
        if let Some(share) = shares.servers.get(identity) {
            share.log.append(&share.name, message);
        }
    }

    pub fn status(&self) -> BrokerStatus {
        let shares = self.shares.lock();
        let sessions: HashSet<&str> = shares
            .hops
            .values()
            .filter_map(|hop| hop.attached())
            .map(|a| a.session.id.as_str())
            .collect();
        let mut servers: Vec<SharedServer> = shares
            .servers
            .iter()
            .map(|(identity, share)| {
                let live = self.pool.peek(identity);
                SharedServer {
                    name: share.name.clone(),
                    identity: identity.clone(),
                    command: share
                        .launch()
                        .map_or_else(String::new, |l| l.command.clone()),
                    pid: live.as_ref().and_then(|c| c.pid()),
                    sessions: share.sessions(),
                    idle_ms: live.map_or(0, |c| c.idle_for().as_millis() as u64),
                    failure: share.failure.as_ref().map(|(_, why)| why.clone()),
                }
            })
            .collect();
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        BrokerStatus {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            endpoint: self.endpoint(),
            uptime_ms: self.started.elapsed().as_millis() as u64,
            sessions: sessions.len(),
            servers,
        }
    }

    /// Passes on what the servers report: changed lists to every session using the server, a
    /// lost connection as [`Broker::lost`].
    async fn watch(this: Weak<Broker>, mut notices: UnboundedReceiver<Notice>) {
        while let Some(notice) = notices.recv().await {
            let Some(broker) = this.upgrade() else {
                return;
            };
            match &notice {
                Notice::ListChanged { server, .. }
                | Notice::Lost { server, .. }
                | Notice::ResourceUpdated { server, .. } => broker.heard(server, &notice),
                Notice::Connecting { .. } | Notice::Opened { .. } => {}
            }
        }
    }

    /// What a server (by identity) reported: changed lists to every session using it, an
    /// updated resource to those subscribed to it, a lost connection as [`Broker::lost`].
    fn heard(&self, identity: &str, notice: &Notice) {
        match notice {
            Notice::ListChanged { .. } => self.list_changed(identity),
            Notice::Lost { why, .. } => self.lost(identity, why),
            Notice::ResourceUpdated { uri, .. } => {
                let shares = self.shares.lock();
                let Some(share) = shares.servers.get(identity) else {
                    return;
                };
                let subscribed = share.subscriptions.of(uri);
                for hop in share.hops.iter().filter(|h| subscribed.contains(&h.id)) {
                    hop.notify("notifications/resources/updated", json!({ "uri": uri }));
                }
            }
            Notice::Connecting { .. } | Notice::Opened { .. } => {}
        }
    }

    /// A server's lists changed: its sessions are told, and its listing is no longer served
    /// from memory.
    fn list_changed(&self, identity: &str) {
        let mut shares = self.shares.lock();
        if let Some(share) = shares.servers.get_mut(identity) {
            share.listed_fresh = false;
            for hop in &share.hops {
                hop.notify("notifications/tools/list_changed", json!({}));
            }
        }
    }

    /// Stops servers no session has used for their idle time, and the broker once it has had no
    /// session and no server for [`Options::linger`] (a family's hub lives as long as its
    /// process).
    async fn upkeep(this: Weak<Broker>) {
        let mut ticks = tokio::time::interval(TICK);
        loop {
            ticks.tick().await;
            let Some(broker) = this.upgrade() else {
                return;
            };
            if broker.stopping.is_cancelled() {
                return;
            }
            broker.stop_unused().await;
            let Mode::User { options, .. } = &broker.mode else {
                continue;
            };
            let mut shares = broker.shares.lock();
            if shares.hops.is_empty() && shares.servers.is_empty() {
                let since = *shares.quiet_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= options.linger {
                    broker.note("no session and no server: exiting");
                    broker.stop();
                }
            } else {
                shares.quiet_since = None;
            }
        }
    }

    async fn stop_unused(&self) {
        let unused: Vec<String> = {
            let shares = self.shares.lock();
            shares
                .servers
                .iter()
                .filter(|(_, s)| s.unused())
                .map(|(identity, _)| identity.clone())
                .collect()
        };
        for identity in unused {
            // Decided and stopped under the lock: a session attaching meanwhile waits for it,
            // then finds the server gone and starts it again, never a connection being closed.
            let stopped = {
                let mut shares = self.shares.lock();
                let Some(share) = shares.servers.get(&identity).filter(|s| s.unused()) else {
                    continue;
                };
                let stopped = match &share.held {
                    Some(conn) if conn.in_flight() == 0 && conn.idle_for() >= share.idle => {
                        conn.abort();
                        Some(conn.clone())
                    }
                    Some(_) => continue,
                    None => self
                        .pool
                        .stop_if_idle(&identity, share.idle)
                        .filter(|conn| conn.was_stopped()),
                };
                let gone = stopped.is_some()
                    || !self.pool.is_live(&identity) && !self.pool.is_connecting(&identity);
                if !gone {
                    continue;
                }
                if stopped.is_some() {
                    self.note(&format!(
                        "stopped {} ({identity}): no session used it for {} s",
                        share.name,
                        share.idle.as_secs()
                    ));
                }
                shares.servers.remove(&identity);
                stopped
            };
            if let Some(conn) = stopped {
                conn.close().await;
            }
        }
    }
}

/// A line of the broker's log.
fn note(text: &str) {
    eprintln!("{} {text}", iso_time(SystemTime::now()));
}
