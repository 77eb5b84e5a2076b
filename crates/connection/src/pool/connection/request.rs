//! One request to the server: sent with a fresh id, bounded by its timeout from the last sign of
//! life and by a total, cancelled on the caller's word, its progress routed to the caller, the
//! `input_required` rounds of 2026-07-28 (MRTR) answered, and a task the server runs for it
//! followed (`task`).

use super::{task, Connection};
use crate::pool::client_side::{Origin, PendingRequest};
use crate::pool::handler::{Progress, ProgressRoutes, ProgressSink};
use crate::pool::host::Caller;
use crate::pool::link::Link;
#[cfg(feature = "remote")]
use crate::pool::remote::param_headers::CalledTool;
use crate::pool::{BrowserStep, RequestError};
use futures::future::BoxFuture;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, MetaObject,
    RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::Peer;
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Guards against servers that never stop asking for input (MRTR).
const MAX_INPUT_ROUNDS: usize = 16;
/// What an internal request (a listing, a ping) may take in all: this many times its timeout.
const MAX_TOTAL_FACTOR: u32 = 10;
/// The `_meta` key of a 2026-07-28 request that asks for the server's log messages at or above
/// a level (SEP-2575; without it such a server sends none).
const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";
/// How long a task asked for without a bound on the call may live.
const UNBOUNDED_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

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

    pub(super) fn plain(&self, timeout: Duration) -> RequestOptions {
        RequestOptions {
            total: Some(timeout.saturating_mul(MAX_TOTAL_FACTOR)),
            ..RequestOptions::new(timeout)
        }
    }

    /// Sends one request and returns its raw result, answering any `input_required` rounds
    /// (MRTR) on the way and following a task the server runs for it. Counts as use of the
    /// server (in-flight while it runs). Cancelling `opts.cancel` sends `notifications/cancelled`
    /// (`tasks/cancel` for a task).
    ///
    /// Boxed, so that its state machine (with `send`, `answer_all` and `failure` behind it) is
    /// compiled once, here: rustc copies an `async fn`'s state machine into every crate that
    /// awaits it, and the core and the addon each held a copy of these (45 KB each).
    pub fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        opts: RequestOptions,
    ) -> BoxFuture<'a, Result<Value, RequestError>> {
        Box::pin(self.request_rounds(method, params, opts))
    }

    async fn request_rounds(
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
    pub(super) async fn answer_all(
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
    pub(super) async fn send(
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
        #[cfg_attr(
            not(feature = "remote"),
            expect(unused_mut, reason = "only a remote call adds to it")
        )]
        let mut custom = CustomRequest::new(method, Some(params));
        // A remote transport sends the tool's `x-mcp-header` parameters as headers (SEP-2243).
        #[cfg(feature = "remote")]
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
}

fn result_json(result: ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(custom) => custom.0,
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
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
pub(super) struct Sent {
    pub(super) result: Value,
    pub(super) progress: ProgressRoute,
}

pub(super) struct ProgressRoute {
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

#[cfg(test)]
mod tests;
