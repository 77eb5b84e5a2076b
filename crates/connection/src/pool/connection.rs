//! One live MCP server: how we reach it (a process we own, or a remote endpoint), its rmcp peer,
//! and the requests we send it.

use super::client_side::{ClientSide, LogTail, Origin, Pending, PendingRequest};
use super::client_tasks::{ClientTasks, Limits};
use super::handler::Progress;
use super::handler::{Handler, Notice, ProgressRoutes, ProgressSink};
use super::host::{Caller, Host};
use super::link::{open_process, open_remote, open_shared, open_socket, with_stderr, Link};
use super::nesting::{LEFT_OUT_FIELD, TOO_DEEP_FIELD};
use super::oversize::TOO_LARGE_FIELD;
use super::process;
use super::question_bounds::QuestionSlots;
use super::remote::param_headers::{CalledTool, INVALID_ANNOTATION_FIELD};
use super::remote::{AuthNeed, RemoteKind};
use super::spec::{ConnectSpec, Keeper, TransportSpec};
use super::{BrowserStep, ConnectError, RequestError};
use parking_lot::Mutex;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, MetaObject,
    RequestId, RequestMetaObject, RootsListChangedNotification, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{Peer, ServiceError};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

/// How long a server gets to exit by itself once its stdin is closed (and again after SIGTERM).
const STOP_GRACE: Duration = Duration::from_millis(1500);
/// Guards against servers that never stop paginating.
const MAX_PAGES: usize = 1000;
/// Guards against servers that never stop asking for input (MRTR).
const MAX_INPUT_ROUNDS: usize = 16;
/// What an internal request (a listing, a ping) may take in all: this many times its timeout.
const MAX_TOTAL_FACTOR: u32 = 10;
/// The `_meta` key of a 2026-07-28 request that asks for the server's log messages at or above
/// a level (SEP-2575; without it such a server sends none).
const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";
/// How long a task asked for without a bound on the call may live.
const UNBOUNDED_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

mod subscriptions;
mod task;

pub use task::created_task_id;

/// The tools, resources and prompts a server listed. Malformed entries are dropped, and counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    /// `resources/templates/list`.
    pub templates: Vec<Value>,
    pub prompts: Vec<Value>,
    pub dropped: usize,
    /// Set when the server listed more than the bounds keep (what is kept is the start).
    pub cut: Option<Cut>,
    /// Entries left out because they could not be read, one line each saying which and why.
    pub left_out: Vec<String>,
}

/// How much of a server's listing is kept, and how long each page may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListBounds {
    pub timeout: Duration,
    /// Tools (and resources, and prompts) at most.
    pub items: usize,
    /// Bytes of tools, resources and prompts together (as JSON) at most.
    pub bytes: usize,
}

impl ListBounds {
    /// The most tools (and resources, and prompts) of one server ever kept.
    pub const MOST_ITEMS: usize = 5_000;
    /// The most bytes of one server's tools, resources and prompts ever kept.
    pub const MOST_BYTES: usize = 16 * 1024 * 1024;

    /// The widest bounds, each page within `timeout`.
    pub fn widest(timeout: Duration) -> ListBounds {
        ListBounds {
            timeout,
            items: ListBounds::MOST_ITEMS,
            bytes: ListBounds::MOST_BYTES,
        }
    }
}

/// The bound a listing ran into; no more pages were asked for after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    Items(usize),
    Bytes(usize),
}

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

/// Per-request options.
pub struct RequestOptions {
    /// Without progress, an answer to a question of the server, or a reply.
    pub timeout: Duration,
    pub cancel: CancellationToken,
    pub on_progress: Option<ProgressSink>,
    /// Who the request is for: questions the server asks meanwhile name it.
    pub caller: Option<Caller>,
    /// Bounds the whole request, a task the server runs for it included; `None`: no bound.
    pub total: Option<Duration>,
    /// For `tools/call`: the tool as the caller knows it (from a listing or the cache), whose
    /// `x-mcp-header` parameters go as `Mcp-Param-*` headers over Streamable HTTP.
    pub tool: Option<Arc<Value>>,
}

impl RequestOptions {
    /// A request bounded by `timeout` alone: its own cancel token, no progress, no caller.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            cancel: CancellationToken::new(),
            on_progress: None,
            caller: None,
            total: None,
            tool: None,
        }
    }
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
        // The session's own host says what it traces, before a family takes its questions.
        let trace = host
            .trace(&spec.server)
            .map(|t| (t, spec.transport.label()));
        let keeper = spec.keeper.as_ref().map(|k| k.0.clone());
        let (host, notices) = match &keeper {
            Some(keeper) => keeper.wrap(host, notices),
            None => (host, notices),
        };
        let progress = ProgressRoutes::default();
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
        let handler = Handler {
            client: client.clone(),
            progress: progress.clone(),
            notices: notices.clone(),
            broker: None,
        };
        let (service, link) = match &spec.transport {
            TransportSpec::Stdio(stdio) => open_process(spec, stdio, handler, &stop)
                .await
                .map_err(ConnectError::Failed)?,
            TransportSpec::Remote(remote) => open_remote(spec, remote, handler, &stop).await?,
            TransportSpec::Socket(path) => open_socket(spec, path, handler, &stop)
                .await
                .map_err(ConnectError::Failed)?,
            TransportSpec::Shared(shared) => open_shared(spec, shared, handler, &stop).await?,
        };
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
            stop,
            asked: AtomicBool::new(false),
            ended: CancellationToken::new(),
            link,
            progress,
            client,
            client_notices: notices.clone(),
            subscribed: Mutex::default(),
            listener: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            listing: Mutex::default(),
            first_listing: OnceCell::new(),
            first_listing_asked: Mutex::default(),
            suspect: AtomicBool::new(false),
            keeper,
        });
        let supervised = conn.clone();
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
        Ok(conn)
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

    /// What a request carries beyond rmcp's own `_meta`: on a 2026-07-28 connection the log
    /// level, which there replaces `logging/setLevel` and is asked for request by request.
    /// Sent whatever the server declares: servers that log without declaring `logging` (the
    /// Python SDK's `MCPServer`) are heard too, and the key is reserved, so others ignore it.
    fn request_meta(&self) -> PeerRequestOptions {
        let options = PeerRequestOptions::no_options();
        if !self.is_modern() {
            return options;
        }
        let level = json!(self.client.features.log_level.name());
        let meta = Map::from_iter([(LOG_LEVEL_META.to_string(), level)]);
        options.with_meta(RequestMetaObject(MetaObject(meta)))
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

    pub fn listing(&self) -> Arc<Listing> {
        self.listing.lock().clone()
    }

    /// The connection's first listing: taken by the first caller, awaited by the others (a
    /// failed one is tried again by the next caller).
    pub async fn listed(&self, bounds: &ListBounds) -> Result<Arc<Listing>, RequestError> {
        self.first_listing
            .get_or_try_init(|| {
                self.first_listing_asked
                    .lock()
                    .get_or_insert_with(Instant::now);
                // Boxed: the futures that wait for the listing do not carry its size.
                Box::pin(self.relist(bounds))
            })
            .await
            .cloned()
    }

    pub fn is_listed(&self) -> bool {
        self.first_listing.initialized()
    }

    /// The first listing, once it has been taken.
    pub fn first_listing(&self) -> Option<Arc<Listing>> {
        self.first_listing.get().cloned()
    }

    /// Whether the first listing shows a change announced at `at`: it was asked for after
    /// that, or has not been asked for yet (whoever takes it will).
    pub fn first_listing_covers(&self, at: Instant) -> bool {
        self.first_listing_asked
            .lock()
            .is_none_or(|asked| asked >= at)
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

    /// Lists the server again and keeps the result as [`Connection::listing`].
    pub async fn relist(&self, bounds: &ListBounds) -> Result<Arc<Listing>, RequestError> {
        let listing = Arc::new(self.list(bounds).await?);
        *self.listing.lock() = listing.clone();
        Ok(listing)
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

    /// Lists tools, and resources and prompts when the server has them, all at once, within
    /// `bounds` (one budget of bytes for the three). Only a failed tool listing fails: the other
    /// lists are then just empty.
    async fn list(&self, bounds: &ListBounds) -> Result<Listing, RequestError> {
        let budget = Budget::new(bounds);
        let optional = |wanted: bool, method: &'static str, key: &'static str, valid| {
            let budget = &budget;
            async move {
                match wanted {
                    true => self
                        .list_all(method, key, bounds.timeout, valid, budget)
                        .await
                        .unwrap_or_default(),
                    false => Paged::default(),
                }
            }
        };
        let (tools, resources, templates, prompts) = tokio::join!(
            self.list_all("tools/list", "tools", bounds.timeout, valid_tool, &budget),
            optional(
                self.has_resources,
                "resources/list",
                "resources",
                valid_resource
            ),
            optional(
                self.has_resources,
                "resources/templates/list",
                "resourceTemplates",
                valid_template
            ),
            optional(self.has_prompts, "prompts/list", "prompts", valid_prompt),
        );
        let tools = tools?;
        let left_out = [&tools, &resources, &templates, &prompts]
            .into_iter()
            .flat_map(|paged| paged.left_out.iter().cloned())
            .collect();
        Ok(Listing {
            cut: tools
                .cut
                .or(resources.cut)
                .or(templates.cut)
                .or(prompts.cut),
            dropped: tools.dropped + resources.dropped + templates.dropped + prompts.dropped,
            left_out,
            tools: tools.items,
            resources: resources.items,
            templates: templates.items,
            prompts: prompts.items,
        })
    }

    async fn list_all(
        &self,
        method: &str,
        key: &str,
        timeout: Duration,
        valid: fn(&Value) -> Option<&str>,
        budget: &Budget,
    ) -> Result<Paged, RequestError> {
        let mut paged = Paged::default();
        let (mut names, mut seen_cursors) = (HashSet::new(), HashSet::new());
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .as_ref()
                .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let mut page = self.request(method, params, self.plain(timeout)).await?;
            let left_out = page
                .get("_meta")
                .and_then(|meta| meta.get(LEFT_OUT_FIELD))
                .and_then(Value::as_array);
            paged.left_out.extend(
                left_out
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            let items = match page.get_mut(key).map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => vec![],
            };
            for item in items {
                match valid(&item) {
                    Some(name) if names.insert(name.to_string()) => {
                        if let Err(cut) = budget.charge(paged.items.len(), &item) {
                            paged.cut = Some(cut);
                            return Ok(paged);
                        }
                        paged.items.push(item);
                    }
                    _ => paged.dropped += 1,
                }
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_string);
            match &cursor {
                Some(c) if seen_cursors.insert(c.clone()) => continue,
                _ => break,
            }
        }
        Ok(paged)
    }

    fn plain(&self, timeout: Duration) -> RequestOptions {
        RequestOptions {
            total: Some(timeout.saturating_mul(MAX_TOTAL_FACTOR)),
            ..RequestOptions::new(timeout)
        }
    }

    /// Sends one request and returns its raw result, answering any `input_required` rounds
    /// (MRTR) on the way and following a task the server runs for it. Counts as use of the
    /// server (in-flight while it runs). Cancelling `opts.cancel` sends `notifications/cancelled`
    /// (`tasks/cancel` for a task).
    pub async fn request(
        &self,
        method: &str,
        mut params: Value,
        opts: RequestOptions,
    ) -> Result<Value, RequestError> {
        let busy = InFlight::start(self, opts.caller.clone());
        let deadline = opts.total.map(|total| tokio::time::Instant::now() + total);
        let mut state_only_rounds = 0;
        for _ in 0..MAX_INPUT_ROUNDS {
            let sent = match self
                .send(method, params.clone(), &opts, &busy.1, deadline)
                .await
            {
                Err(RequestError::BrowserSteps(steps)) => {
                    return Err(self.browser_steps(steps, &opts).await)
                }
                other => other?,
            };
            // A task result is passed on as it is without `tasks`, or where the callers follow
            // their tasks themselves.
            let follows = self.client.features.tasks && self.client.host.follows_tasks();
            let created = task::Task::created(&sent.result).filter(|_| follows);
            if let Some(created) = created {
                // Progress of the task comes with the token of the request that created it.
                let _progress = sent.progress;
                return self.follow_task(created, &opts, &busy.1, deadline).await;
            }
            let result = sent.result;
            let legacy_task = method == "tools/call"
                && follows
                && !self.is_modern()
                && params.get("task").is_none()
                && task::needs_task(&result);
            if legacy_task {
                let ttl = opts.total.unwrap_or(UNBOUNDED_TASK_TTL);
                params = task::as_task(params, ttl);
                continue;
            }
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let asked = result.get("inputRequests").and_then(Value::as_object);
            if asked.is_none_or(|a| a.is_empty()) {
                // Only state to hand back: the server is not done yet, so do not hurry it.
                let wait = 50u64 << state_only_rounds.min(2);
                tokio::time::sleep(Duration::from_millis(wait)).await;
                state_only_rounds += 1;
            }
            params = self
                .with_input(params, &result, &opts, &busy.1, deadline)
                .await?;
        }
        Err(RequestError::Protocol(format!(
            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// Shows each page a `-32042` error names to the user (as a URL elicitation) and says
    /// which were opened.
    async fn browser_steps(&self, steps: Vec<BrowserStep>, opts: &RequestOptions) -> RequestError {
        let mut shown = Vec::with_capacity(steps.len());
        for step in steps {
            let question = json!({ "mode": "url", "url": step.url, "message": step.message });
            let answer = self
                .client
                .answer(
                    "elicitation/create",
                    question,
                    Origin::request_of_the_server(opts.cancel.clone()),
                )
                .await;
            let opened = matches!(&answer, Ok(a) if a["action"] == "accept");
            shown.push(BrowserStep { opened, ..step });
        }
        RequestError::BrowserSteps(shown)
    }

    /// The params of the retry of an `input_required` result: the original ones with the
    /// answers to its `inputRequests` and its `requestState`, exactly as given (absent if
    /// absent).
    async fn with_input(
        &self,
        params: Value,
        result: &Value,
        opts: &RequestOptions,
        pending: &Arc<PendingRequest>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Value, RequestError> {
        let state = result.get("requestState").cloned();
        let asked = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if asked.is_empty() && state.is_none() {
            return Err(RequestError::Protocol(
                "an input_required result with neither inputRequests nor requestState".into(),
            ));
        }
        let answers = self.answer_all(asked, opts, pending, deadline).await?;
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        params.remove("inputResponses");
        params.remove("requestState");
        if !answers.is_empty() {
            params.insert("inputResponses".into(), Value::Object(answers));
        }
        if let Some(state) = state {
            params.insert("requestState".into(), state);
        }
        Ok(Value::Object(params))
    }

    /// The answers to a server's `inputRequests` (by their keys), all asked at once. Past
    /// `deadline` the questions still open are dropped (their dialogs close) and the call is
    /// stopped, as an abort stops it.
    async fn answer_all(
        &self,
        asked: Map<String, Value>,
        opts: &RequestOptions,
        pending: &Arc<PendingRequest>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Map<String, Value>, RequestError> {
        let answers = asked.into_iter().map(|(key, request)| {
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let inner = request.get("params").cloned().unwrap_or(Value::Null);
            let origin = Origin {
                withdrawn: opts.cancel.clone(),
                request: Some(pending.clone()),
            };
            let answer = self.client.answer(&method, inner, origin);
            async move {
                answer
                    .await
                    .map(|a| (key.clone(), a))
                    .map_err(|e| RequestError::Mcp {
                        code: e.code.0,
                        message: format!(
                            "could not answer the server's request `{key}` ({method}): {}",
                            e.message
                        ),
                    })
            }
        });
        let answered = futures::future::try_join_all(answers);
        let answers = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, answered)
                .await
                .map_err(|_| RequestError::CallTimeout(opts.total.unwrap_or_default()))?,
            None => answered.await,
        };
        Ok(answers?.into_iter().collect())
    }

    /// One JSON-RPC request (a fresh id each time). Its timeout counts from the last sign of
    /// life (sent, progress, a question of the server answered) and waits while a question is
    /// open; `deadline` bounds it as a whole.
    async fn send(
        &self,
        method: &str,
        params: Value,
        opts: &RequestOptions,
        pending: &Arc<PendingRequest>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Sent, RequestError> {
        let _slot = match &self.link {
            Link::Broker(link) => Some(link.admit(&params, &opts.cancel).await?),
            _ => None,
        };
        let mut custom = CustomRequest::new(method, Some(params));
        if let Some(tool) = opts.tool.clone().filter(|_| method == "tools/call") {
            custom.extensions.insert(CalledTool(tool));
        }
        let request = ClientRequest::CustomRequest(custom);
        let handle = match self
            .peer
            .send_request_with_option(request, self.request_meta())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return Err(self.failure(e).await),
        };
        pending.touch();
        let sink = {
            let (pending, forward) = (pending.clone(), opts.on_progress.clone());
            Arc::new(move |progress: Progress| {
                pending.touch();
                if let Some(forward) = &forward {
                    forward(progress);
                }
            })
        };
        let progress = ProgressRoute::add(&self.progress, handle.progress_token.clone(), sink);
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let response = handle.await_response();
        tokio::pin!(response);
        loop {
            let due = pending.due(opts.timeout);
            tokio::select! {
                result = &mut response => return match result {
                    Ok(result) => {
                        self.suspect.store(false, Ordering::SeqCst);
                        Ok(Sent { result: result_json(result), progress })
                    }
                    Err(e) => Err(self.failure(e).await),
                },
                _ = opts.cancel.cancelled() => {
                    cancel(&peer, id, "cancelled by the user").await;
                    return Err(RequestError::Aborted);
                }
                _ = tokio::time::sleep_until(deadline.map_or(due, |d| d.min(due))) => {
                    if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                        cancel(&peer, id, "the call took too long").await;
                        return Err(RequestError::CallTimeout(opts.total.unwrap_or_default()));
                    }
                    if pending.timed_out(opts.timeout) {
                        self.suspect.store(true, Ordering::SeqCst);
                        cancel(&peer, id, "request timeout").await;
                        return Err(RequestError::Timeout(opts.timeout));
                    }
                }
            }
        }
    }

    /// Whether the server still answers at all: true unless a request timed out since its last
    /// answer and a ping now gets no answer within `limit` either.
    pub async fn responsive(&self, limit: Duration) -> bool {
        if !self.suspect.load(Ordering::SeqCst) {
            return true;
        }
        let pinged = Box::pin(self.request("ping", json!({}), self.plain(limit))).await;
        !matches!(
            pinged,
            Err(RequestError::Timeout(_) | RequestError::Closed(_))
        )
    }

    async fn failure(&self, error: ServiceError) -> RequestError {
        match error {
            ServiceError::Timeout { timeout } => {
                self.suspect.store(true, Ordering::SeqCst);
                RequestError::Timeout(timeout)
            }
            ServiceError::McpError(e) => {
                match (stand_in(&e, TOO_LARGE_FIELD), stand_in(&e, TOO_DEEP_FIELD)) {
                    (Some(bytes), _) => RequestError::TooLarge(bytes),
                    (_, Some(depth)) => {
                        RequestError::TooDeep(Some(depth as usize).filter(|d| *d > 0))
                    }
                    _ if e.code.0 == URL_ELICITATION_REQUIRED => {
                        RequestError::BrowserSteps(browser_steps(&e))
                    }
                    _ if e
                        .data
                        .as_ref()
                        .and_then(|d| d.get(INVALID_ANNOTATION_FIELD))
                        .is_some() =>
                    {
                        RequestError::InvalidHeaderAnnotation(e.message.to_string())
                    }
                    _ => RequestError::Mcp {
                        code: e.code.0,
                        message: e.message.to_string(),
                    },
                }
            }
            ServiceError::TransportSend(e) if self.remote_kind().is_some() => {
                let refused = e
                    .error
                    .downcast_ref::<StreamableHttpError<reqwest::Error>>()
                    .and_then(AuthNeed::from_streamable);
                if let Some(need) = refused {
                    return RequestError::NeedsAuth(need);
                }
                self.stop.cancel();
                RequestError::Closed(self.scrub(&e.error.to_string()))
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                RequestError::Closed(self.death_note().await)
            }
            other => RequestError::Protocol(other.to_string()),
        }
    }

    fn scrub(&self, text: &str) -> String {
        match &self.link {
            Link::Remote { scrubber, .. } => scrubber.scrub(text),
            Link::Process { .. } | Link::Broker(_) | Link::Socket => text.to_string(),
        }
    }

    /// Why the connection is gone, for the model: exit status and the end of stderr.
    async fn death_note(&self) -> String {
        let note = self.exit_note().await;
        match self.recent_log() {
            Some(lines) => format!("{note}\nIts last logged warnings and errors:\n{lines}"),
            None => note,
        }
    }

    async fn exit_note(&self) -> String {
        let (mut exit, tail) = match &self.link {
            Link::Process { exit, stderr, .. } => (exit.clone(), stderr),
            Link::Remote { .. } | Link::Socket if self.asked.load(Ordering::SeqCst) => {
                return "the connection was closed".to_string()
            }
            Link::Remote { .. } | Link::Socket => {
                return "the server ended the connection".to_string()
            }
            Link::Broker(_) if self.asked.load(Ordering::SeqCst) => {
                return "the connection was closed".to_string()
            }
            Link::Broker(link) => return link.end_note(&self.server).await,
        };
        exit.wait(Duration::from_millis(500)).await;
        let what = match exit.get() {
            Some(status) => format!("the server {status}"),
            None if self.asked.load(Ordering::SeqCst) => "the connection was closed".to_string(),
            None => "the server closed its output".to_string(),
        };
        with_stderr(what, tail).await
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.abort();
    }
}

/// The code of an error that names pages the user must visit first.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The pages a `-32042` error names (`data.elicitations`), not yet shown.
fn browser_steps(error: &rmcp::ErrorData) -> Vec<BrowserStep> {
    let listed = error.data.as_ref().and_then(|d| d.get("elicitations"));
    listed
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some(BrowserStep {
                url: e.get("url")?.as_str()?.to_string(),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                opened: false,
            })
        })
        .collect()
}

/// The figure of our stand-in for a dropped answer (`field` says which: see `oversize` and
/// `nesting`), if `error` is one.
fn stand_in(error: &rmcp::ErrorData, field: &str) -> Option<u64> {
    error.data.as_ref()?.get(field)?.as_u64()
}

fn result_json(result: ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(custom) => custom.0,
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// One list's items as far as the bounds allowed.
#[derive(Default)]
struct Paged {
    items: Vec<Value>,
    dropped: usize,
    cut: Option<Cut>,
    /// Entries that could not be read (see `nesting`), one line each.
    left_out: Vec<String>,
}

/// The bounds of one listing: items per list, and bytes for all its lists together.
struct Budget {
    items: usize,
    bytes: usize,
    spent: AtomicUsize,
}

impl Budget {
    fn new(bounds: &ListBounds) -> Budget {
        Budget {
            items: bounds.items,
            bytes: bounds.bytes,
            spent: AtomicUsize::new(0),
        }
    }

    /// Counts `item`, the next after `kept` of its list, unless it passes a bound.
    fn charge(&self, kept: usize, item: &Value) -> Result<(), Cut> {
        if kept >= self.items {
            return Err(Cut::Items(self.items));
        }
        let size = json_size(item);
        let spent = self.spent.fetch_add(size, Ordering::SeqCst) + size;
        if spent > self.bytes {
            return Err(Cut::Bytes(self.bytes));
        }
        Ok(())
    }
}

/// The length of `value` as compact JSON, without building the text.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn valid_tool(tool: &Value) -> Option<&str> {
    let name = tool.get("name")?.as_str().filter(|n| !n.is_empty())?;
    tool.get("inputSchema")
        .is_none_or(Value::is_object)
        .then_some(name)
}

fn valid_prompt(prompt: &Value) -> Option<&str> {
    prompt.get("name")?.as_str().filter(|n| !n.is_empty())
}

fn valid_template(template: &Value) -> Option<&str> {
    template.get("name")?.as_str()?;
    template
        .get("uriTemplate")?
        .as_str()
        .filter(|u| !u.is_empty())
}

fn valid_resource(resource: &Value) -> Option<&str> {
    resource.get("name")?.as_str()?;
    resource.get("uri")?.as_str().filter(|u| !u.is_empty())
}

/// Tells the server we no longer wait for request `id`.
async fn cancel(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notice = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.into()),
    ));
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        peer.send_notification(notice.into()),
    )
    .await;
}

struct InFlight<'a>(&'a Connection, Arc<PendingRequest>);

impl<'a> InFlight<'a> {
    fn start(conn: &'a Connection, caller: Option<Caller>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::SeqCst);
        *conn.last_used.lock() = Instant::now();
        InFlight(conn, conn.client.pending.start(caller))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.client.pending.end(&self.1);
        *self.0.last_used.lock() = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request's answer, and the route of its progress (a task reports through it later).
struct Sent {
    result: Value,
    progress: ProgressRoute,
}

struct ProgressRoute {
    routes: ProgressRoutes,
    token: rmcp::model::ProgressToken,
}

impl ProgressRoute {
    fn add(routes: &ProgressRoutes, token: rmcp::model::ProgressToken, sink: ProgressSink) -> Self {
        routes.lock().insert(token.clone(), sink);
        ProgressRoute {
            routes: routes.clone(),
            token,
        }
    }
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}
