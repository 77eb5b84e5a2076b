//! One connection from a session: JSON-RPC lines over the socket, in both directions. Its first
//! request is `initialize`, naming the server the session wants (or asking for the broker's
//! controls). Requests are forwarded to the shared server for this session — its progress comes
//! back with the session's token, its cancellation goes on — and the server's questions that
//! belong here are asked as requests of our own. A connection that passes one of its bounds
//! (`wire::MAX_MESSAGE`, `MAX_IN_FLIGHT`, `MAX_UNREAD`) is dropped: whatever sends it, it never
//! holds more of the broker's memory than they allow. A family's hub is stricter with a process
//! that connects to it: a line that is not a JSON object, or no `initialize` within
//! [`HELLO_LIMIT`], and it is dropped.

use super::outbox::{self, Outbox};
use super::{Broker, Notes};
use crate::family_approval::{Ask, Verdict};
use crate::pool::shared::wire::{self, Farewell, FarewellReason, Hello, SessionInfo};
use crate::pool::{
    Connection, Progress, RequestError, RequestOptions, TOO_DEEP_FIELD, TOO_LARGE_FIELD,
};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// A forwarded request's own timeout is the session's and this much more: the session's comes
/// first and cancels it.
const FORWARD_SLACK: Duration = Duration::from_secs(2);
/// How long a stuck server gets to answer a ping the session forwards.
const PING_LIMIT: Duration = Duration::from_secs(2);
/// A read buffer bigger than this is let go once its message is read.
const KEPT_BUFFER: usize = 1024 * 1024;
/// Subscribing to a resource, and unsubscribing: counted per server (see `subscribe`).
const SUBSCRIPTIONS: [&str; 2] = ["resources/subscribe", "resources/unsubscribe"];
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC's "internal error".
const INTERNAL_ERROR: i32 = -32603;
/// How long a process connected to a family's hub may take to say who it is (`initialize`).
pub const HELLO_LIMIT: Duration = Duration::from_secs(2);
/// The connections a family's hub holds at most.
pub const MAX_HOPS: usize = 1024;
/// The lists a family's hub answers from memory (see `Broker::listed`).
const LISTS: [&str; 4] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// Who is at the other end of a connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Peer {
    /// Another process, as its socket says (its pid, where the platform tells).
    Process(Option<u32>),
    /// A session of the hub's own process, over a duplex (a family's hub).
    InProcess,
}

/// A session's use of one shared server.
pub struct Attached {
    pub identity: String,
    /// The server's name in the session's config.
    pub name: String,
    pub session: SessionInfo,
    pub upstream: Arc<Connection>,
    /// The session's request timeout.
    pub timeout: Duration,
}

/// An error answer: code, message, data.
type Failure = (i32, String, Option<Value>);

pub struct Hop {
    pub id: u64,
    peer: Peer,
    /// Where a note on dropping it goes.
    notes: Notes,
    /// A family's hub serves it: its callers are marked as the family's, and a process that
    /// sends a line that is not a JSON object is dropped.
    family: bool,
    /// It said who it is (to attach, join or use the controls).
    greeted: AtomicBool,
    /// A process of the family joined with it (it stays open while the process lives).
    joined: AtomicBool,
    out: Outbox,
    /// Ends the connection (what is queued is still written).
    pub closed: CancellationToken,
    /// The session's requests being answered (all of them, forwarded or not).
    running: AtomicUsize,
    attached: OnceLock<Attached>,
    /// Requests being forwarded, by the session's id (as JSON text): their cancellation.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    /// Our own requests to the session, waiting for its answer.
    asks: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next_ask: AtomicU64,
    last_call: Mutex<Option<Instant>>,
}

impl Hop {
    fn new(peer: Peer, notes: Notes, family: bool) -> (Arc<Hop>, outbox::Queued) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let (out, lines) = Outbox::new();
        let hop = Arc::new(Hop {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            peer,
            notes,
            family,
            greeted: AtomicBool::new(false),
            joined: AtomicBool::new(false),
            out,
            closed: CancellationToken::new(),
            running: AtomicUsize::new(0),
            attached: OnceLock::new(),
            in_flight: Mutex::default(),
            asks: Mutex::default(),
            next_ask: AtomicU64::new(1),
            last_call: Mutex::default(),
        });
        (hop, lines)
    }

    pub fn attached(&self) -> Option<&Attached> {
        self.attached.get()
    }

    /// A process of the family joined with it.
    pub fn join(&self) {
        self.joined.store(true, Ordering::SeqCst);
    }

    pub fn joined(&self) -> bool {
        self.joined.load(Ordering::SeqCst)
    }

    /// The peer's pid as its socket says, for notes.
    pub fn peer_pid(&self) -> String {
        match self.peer {
            Peer::Process(Some(pid)) => pid.to_string(),
            Peer::Process(None) => "unknown".into(),
            Peer::InProcess => std::process::id().to_string(),
        }
    }

    /// Whether the session is in the hub's own process (then it needs no token).
    pub fn in_process(&self) -> bool {
        self.peer == Peer::InProcess
    }

    pub fn attach(&self, attached: Attached) {
        let _ = self.attached.set(attached);
    }

    pub fn last_call(&self) -> Option<Instant> {
        *self.last_call.lock()
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Says why, then ends the connection.
    pub fn farewell(&self, farewell: &Farewell) {
        if let Ok(params) = serde_json::to_value(farewell) {
            let message = json!({ "jsonrpc": "2.0", "method": wire::FAREWELL, "params": params });
            self.out.push_last(message.to_string());
        }
        self.closed.cancel();
    }

    fn send(&self, message: Value) {
        if self.out.push(message.to_string()).is_err() {
            let bound = wire::MAX_UNREAD / (1024 * 1024);
            self.drop_offender(&format!("it left more than {bound} MiB of answers unread"));
        }
    }

    /// Ends a connection that passed one of its bounds, noting who and `why` (what it sent is
    /// not shown: it may hold secrets).
    fn drop_offender(&self, why: &str) {
        if self.closed.is_cancelled() {
            return;
        }
        let who = match self.attached() {
            Some(a) => format!("session {}, server {}", a.session.id, a.name),
            None => "not attached".into(),
        };
        let pid = self.peer_pid();
        self.notes
            .write(&format!("dropped a connection of pid {pid} ({who}): {why}"));
        self.farewell(&Farewell {
            reason: FarewellReason::Dropped,
            message: format!("the shared-server broker dropped this connection: {why}"),
        });
    }

    /// Asks the session (a request of ours); `None` when `void` came first or the session left.
    pub async fn ask(
        &self,
        method: &str,
        params: Value,
        void: CancellationToken,
    ) -> Option<Result<Value, String>> {
        let id = self.next_ask.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.asks.lock().insert(id, tx);
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let answer = tokio::select! {
            answer = rx => answer.ok(),
            _ = void.cancelled() => {
                self.notify("notifications/cancelled", json!({ "requestId": id, "reason": "no longer needed" }));
                None
            }
            _ = self.closed.cancelled() => None,
        };
        self.asks.lock().remove(&id);
        answer
    }

    /// Cancels what the session had running: it left.
    fn abandon(&self) {
        for (_, cancel) in self.in_flight.lock().drain() {
            cancel.cancel();
        }
        self.asks.lock().clear();
    }

    /// One message from the session.
    fn take(self: &Arc<Self>, broker: &Arc<Broker>, message: Value) {
        let Value::Object(mut message) = message else {
            return;
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (method, message.remove("id")) {
            (Some(method), Some(id)) => {
                // Only this reader adds to `running`.
                if self.running.load(Ordering::SeqCst) >= wire::MAX_IN_FLIGHT {
                    let bound = wire::MAX_IN_FLIGHT;
                    self.drop_offender(&format!("it had more than {bound} requests in flight"));
                    return;
                }
                self.running.fetch_add(1, Ordering::SeqCst);
                let params = message.remove("params").unwrap_or(Value::Null);
                let (hop, broker) = (self.clone(), broker.clone());
                tokio::spawn(async move {
                    hop.clone().request(&broker, id, method, params).await;
                    hop.running.fetch_sub(1, Ordering::SeqCst);
                });
            }
            (Some(method), None) if method == "notifications/cancelled" => {
                let id = message.get("params").and_then(|p| p.get("requestId"));
                if let Some(cancel) =
                    id.and_then(|id| self.in_flight.lock().remove(&id.to_string()))
                {
                    cancel.cancel();
                }
            }
            (None, Some(id)) => {
                let waiting = id.as_u64().and_then(|id| self.asks.lock().remove(&id));
                if let Some(tx) = waiting {
                    let answer = match message.remove("result") {
                        Some(result) => Ok(result),
                        None => Err(message
                            .get("error")
                            .and_then(|e| e.get("message"))
                            .and_then(Value::as_str)
                            .unwrap_or("the session answered with an error")
                            .to_string()),
                    };
                    let _ = tx.send(answer);
                }
            }
            _ => {} // initialized, roots changed and the like: nothing to do here
        }
    }

    async fn request(
        self: Arc<Self>,
        broker: &Arc<Broker>,
        id: Value,
        method: String,
        params: Value,
    ) {
        let answer = match method.as_str() {
            "initialize" => self.hello(broker, params).await,
            "ping" => self.ping(broker).await,
            "logging/setLevel" => Ok(json!({})),
            wire::STATUS if self.attached().is_none() && !self.family => Ok(json!(broker.status())),
            wire::STOP if self.attached().is_none() && !self.family => {
                self.reply(&id, Ok(json!({})));
                broker.stop();
                return;
            }
            wire::APPROVE if self.joined() => self.approve(&id, params).await,
            wire::APPROVE => Err(Some((
                wire::REFUSED,
                "only a process that joined the family asks its UI".into(),
                None,
            ))),
            _ => match self.attached() {
                Some(attached) if LISTS.contains(&method.as_str()) => {
                    match broker.listed(attached, &method, &params).await {
                        Some(page) => Ok(page),
                        None => self.forward(broker, attached, &id, &method, params).await,
                    }
                }
                Some(attached) if SUBSCRIPTIONS.contains(&method.as_str()) => {
                    self.subscription(broker, attached, &id, &method, params)
                        .await
                }
                Some(attached) => self.forward(broker, attached, &id, &method, params).await,
                None => Err(Some((
                    INVALID_REQUEST,
                    "`initialize` naming a shared server comes first".into(),
                    None,
                ))),
            },
        };
        match answer {
            Ok(result) => self.reply(&id, Ok(result)),
            Err(Some(failure)) => self.reply(&id, Err(failure)),
            Err(None) => {}
        }
        if method == "initialize" {
            if let Some(attached) = self.attached() {
                broker.announce(&attached.identity);
            }
        }
    }

    fn reply(&self, id: &Value, answer: Result<Value, Failure>) {
        let message = match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message, data)) => {
                let mut error = json!({ "code": code, "message": message });
                if let Some(data) = data {
                    error["data"] = data;
                }
                json!({ "jsonrpc": "2.0", "id": id, "error": error })
            }
        };
        self.send(message);
    }

    /// `initialize`: attaches the session to the server it names (starting it if it is not
    /// running), or opens the controls.
    async fn hello(self: &Arc<Self>, broker: &Arc<Broker>, params: Value) -> Answer {
        let version = params
            .get("protocolVersion")
            .cloned()
            .unwrap_or_else(|| json!("2025-11-25"));
        let hello = params
            .get("capabilities")
            .and_then(|c| c.get("experimental"))
            .and_then(|e| e.get(wire::CAPABILITY))
            .and_then(|h| Hello::deserialize(h).ok());
        // It said who it is: an attach may now wait for its server's start, however long.
        self.greeted.store(hello.is_some(), Ordering::SeqCst);
        let mut result = match hello {
            Some(Hello::Attach(attach)) => broker
                .attach(self, *attach)
                .await
                .map_err(|(code, why)| Some((code, why, None)))?,
            Some(Hello::Control {}) if !self.family => json!({
                "capabilities": {},
                "serverInfo": { "name": "pi-mcp-native-broker", "version": env!("CARGO_PKG_VERSION") },
            }),
            Some(Hello::Join { token, session }) if self.family => {
                broker
                    .join_family(self, &token, &session)
                    .map_err(|why| Some((wire::REFUSED, why, None)))?
            }
            Some(Hello::Control {} | Hello::Join { .. }) | None => {
                return Err(Some((
                    wire::REFUSED,
                    "this is pi-mcp-native's shared-server broker; it serves pi-mcp-native sessions only".into(),
                    None,
                )))
            }
        };
        result["protocolVersion"] = version;
        Ok(result)
    }

    /// A session's ping checks the server itself: one that does not answer is restarted for
    /// every session.
    async fn ping(&self, broker: &Arc<Broker>) -> Answer {
        let Some(attached) = self.attached() else {
            return Ok(json!({}));
        };
        let limit = attached.timeout.min(PING_LIMIT);
        match attached
            .upstream
            .request("ping", json!({}), RequestOptions::new(limit))
            .await
        {
            Err(RequestError::Timeout(_) | RequestError::Closed(_)) => {
                let why = format!(
                    "the shared server did not answer a ping within {} s; it is restarted",
                    limit.as_secs_f32()
                );
                broker
                    .restart(&attached.identity, &attached.upstream, why)
                    .await;
                Err(None)
            }
            _ => Ok(json!({})),
        }
    }

    /// A session's (un)subscription to a resource: the server hears the first subscription
    /// and the last unsubscription; the others are answered here.
    async fn subscription(
        self: &Arc<Self>,
        broker: &Arc<Broker>,
        attached: &Attached,
        id: &Value,
        method: &str,
        params: Value,
    ) -> Answer {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let subscribe = method == SUBSCRIPTIONS[0];
        if !broker.subscription(&attached.identity, uri, self.id, subscribe) {
            return Ok(json!({}));
        }
        let uri = uri.to_string();
        let answer = self.forward(broker, attached, id, method, params).await;
        if subscribe && answer.is_err() {
            broker.subscription(&attached.identity, &uri, self.id, false);
        }
        answer
    }

    /// A joined member's approval question, answered by the family's UI (a session of the hub's
    /// process that has one) until the member withdraws it or leaves.
    async fn approve(&self, id: &Value, params: Value) -> Answer {
        let ask: Ask = serde_json::from_value(params).map_err(|e| {
            let why = format!("not an approval question: {e}");
            Some((INVALID_PARAMS, why, None))
        })?;
        let Some(ui) = super::family::family().ui_session() else {
            let why = format!(
                "and neither has its family's session (pi, pid {})",
                std::process::id()
            );
            return Ok(json!(Verdict::Nobody { why }));
        };
        let key = id.to_string();
        let cancel = CancellationToken::new();
        self.in_flight.lock().insert(key.clone(), cancel.clone());
        if self.closed.is_cancelled() {
            cancel.cancel();
        }
        let pid = match self.peer {
            Peer::Process(pid) => pid,
            Peer::InProcess => Some(std::process::id()),
        };
        let verdict = tokio::select! {
            verdict = ui.answerer.answer(ask, pid) => Some(verdict),
            _ = cancel.cancelled() => None,
        };
        self.in_flight.lock().remove(&key);
        verdict.map(|v| json!(v)).ok_or(None)
    }

    /// Who the session's requests are for, as the server's questions name it.
    fn caller(&self, attached: &Attached) -> crate::pool::Caller {
        match self.family {
            true => format!("{}{}", wire::FAMILY_CALLER, attached.session.id).into(),
            false => attached.session.id.as_str().into(),
        }
    }

    /// Sends the session's request on to the server, for this session.
    async fn forward(
        self: &Arc<Self>,
        broker: &Arc<Broker>,
        attached: &Attached,
        id: &Value,
        method: &str,
        mut params: Value,
    ) -> Answer {
        let key = id.to_string();
        let cancel = CancellationToken::new();
        self.in_flight.lock().insert(key.clone(), cancel.clone());
        // A session that left before this was in the table was not abandoned with it.
        if self.closed.is_cancelled() {
            cancel.cancel();
        }
        *self.last_call.lock() = Some(Instant::now());
        let on_progress = progress_token(&mut params).map(|token| {
            let hop = self.clone();
            Arc::new(move |p: Progress| hop.notify("notifications/progress", progress(&token, &p)))
                as crate::pool::ProgressSink
        });
        let opts = RequestOptions {
            timeout: attached.timeout + FORWARD_SLACK,
            cancel,
            on_progress,
            caller: Some(self.caller(attached)),
            // The session bounds its whole call (callTimeoutMs) itself.
            total: None,
            // Shared servers are stdio ones: no HTTP headers to make.
            tool: None,
        };
        let result = attached.upstream.request(method, params, opts).await;
        self.in_flight.lock().remove(&key);
        match result {
            Ok(result) => {
                broker.note_task(&attached.identity, &attached.session.id, &result);
                Ok(result)
            }
            Err(RequestError::Aborted) => Err(None),
            Err(RequestError::Closed(why)) => {
                broker.lost(&attached.identity, &why);
                Err(None)
            }
            Err(e) => Err(Some(failure(&e))),
        }
    }
}

/// A request's answer; `Err(None)` when none is due (the session cancelled it, or the
/// connection is ending).
type Answer = Result<Value, Option<Failure>>;

/// Takes the session's progress token out of `params` (the server gets one of ours).
fn progress_token(params: &mut Value) -> Option<Value> {
    let meta = params.get_mut("_meta")?.as_object_mut()?;
    let token = meta.remove("progressToken");
    if meta.is_empty() {
        if let Some(params) = params.as_object_mut() {
            params.remove("_meta");
        }
    }
    token
}

fn progress(token: &Value, progress: &Progress) -> Value {
    let mut params = Map::new();
    params.insert("progressToken".into(), token.clone());
    params.insert("progress".into(), json!(progress.progress));
    if let Some(total) = progress.total {
        params.insert("total".into(), json!(total));
    }
    if let Some(message) = &progress.message {
        params.insert("message".into(), json!(message));
    }
    Value::Object(params)
}

/// A failed request as the session's connection reads it: dropped answers keep the marks that
/// say why (see `oversize` and `nesting`).
fn failure(error: &RequestError) -> Failure {
    let text = error.to_string();
    match error {
        RequestError::Mcp { code, message } => (*code, message.clone(), None),
        RequestError::TooLarge(bytes) => (
            INTERNAL_ERROR,
            text,
            Some(json!({ TOO_LARGE_FIELD: bytes })),
        ),
        RequestError::TooDeep(depth) => (
            INTERNAL_ERROR,
            text,
            Some(json!({ TOO_DEEP_FIELD: depth.unwrap_or(0) })),
        ),
        _ => (INTERNAL_ERROR, text, None),
    }
}

/// Serves one session connection (from `peer`) until either side ends it.
pub async fn serve<S>(broker: Arc<Broker>, stream: S, peer: Peer)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let family = broker.family().is_some();
    let (hop, lines) = Hop::new(peer, broker.notes.clone(), family);
    broker.join(&hop);
    let writer = tokio::spawn(outbox::write_lines(write, lines, hop.closed.clone()));
    // A family's hub holds no connection of another process that does not say who it is.
    let strict = family && peer != Peer::InProcess;
    if strict {
        let hop = hop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(HELLO_LIMIT).await;
            if !hop.greeted.load(Ordering::SeqCst) {
                let limit = HELLO_LIMIT.as_secs();
                hop.drop_offender(&format!("it did not say who it is within {limit} s"));
            }
        });
    }
    let mut reader = tokio::io::BufReader::new(read);
    let mut buf = Vec::new();
    loop {
        tokio::select! {
            read = read_message(&mut reader, &mut buf, strict) => match read {
                Ok(Read::Message(message)) => hop.take(&broker, message),
                Ok(Read::TooLong) => {
                    let bound = wire::MAX_MESSAGE / (1024 * 1024);
                    hop.drop_offender(&format!("it sent a message over {bound} MiB, the most the broker takes"));
                    break;
                }
                Ok(Read::Garbage) => {
                    hop.drop_offender("it sent a line that is not a JSON-RPC message");
                    break;
                }
                Ok(Read::End) | Err(_) => break,
            },
            _ = hop.closed.cancelled() => break,
        }
    }
    drop((reader, buf)); // before the wait for the writer: a flood's buffer goes now
    hop.closed.cancel();
    hop.abandon();
    broker.leave(&hop);
    let _ = writer.await;
    super::memory::release();
}

/// Answers a peer the broker does not serve with `why`, and ends the connection.
pub async fn refuse<S>(stream: S, why: String)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = tokio::io::BufReader::new(read);
    let mut buf = Vec::new();
    let first = tokio::time::timeout(
        outbox::LAST_WORDS,
        read_message(&mut reader, &mut buf, false),
    )
    .await;
    let id = match first {
        Ok(Ok(Read::Message(message))) => message.get("id").cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let answer =
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": wire::REFUSED, "message": why } });
    let _ = tokio::time::timeout(outbox::LAST_WORDS, async {
        write.write_all(format!("{answer}\n").as_bytes()).await?;
        write.shutdown().await
    })
    .await;
}

/// What came from the session.
enum Read {
    Message(Value),
    /// A message longer than [`wire::MAX_MESSAGE`] (what came of it was not kept).
    TooLong,
    /// A line that is not a JSON object, read `strict`ly.
    Garbage,
    End,
}

/// Reads the next JSON message (one line; lines that are not JSON are skipped, or with `strict`
/// a line that is not blank nor a JSON object is [`Read::Garbage`]) into `buf`, which never
/// holds more than [`wire::MAX_MESSAGE`] and a newline.
async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    strict: bool,
) -> std::io::Result<Read> {
    loop {
        if buf.capacity() > KEPT_BUFFER {
            *buf = Vec::new();
        }
        buf.clear();
        let ended = loop {
            let available = reader.fill_buf().await?;
            if available.is_empty() {
                break true;
            }
            let (take, done) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if buf.len() + take > wire::MAX_MESSAGE + 1 {
                buf.clear();
                return Ok(Read::TooLong);
            }
            // Grown by doubling, but never past the bound.
            let wanted = (buf.len() + take)
                .max(2 * buf.capacity())
                .min(wire::MAX_MESSAGE + 1);
            buf.reserve_exact(wanted - buf.len());
            buf.extend_from_slice(&available[..take]);
            reader.consume(take);
            if done {
                break false;
            }
        };
        let line = buf.trim_ascii();
        match serde_json::from_slice::<Value>(line) {
            Ok(message) if !strict || message.is_object() => return Ok(Read::Message(message)),
            _ if strict && !line.is_empty() => return Ok(Read::Garbage),
            _ => {}
        }
        if ended {
            return Ok(Read::End);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_progress_token_is_taken_out() {
        let mut params = json!({ "name": "t", "_meta": { "progressToken": 7 } });
        assert_eq!(progress_token(&mut params), Some(json!(7)));
        assert_eq!(params, json!({ "name": "t" }));
        let mut kept = json!({ "_meta": { "progressToken": "a", "other": 1 } });
        assert_eq!(progress_token(&mut kept), Some(json!("a")));
        assert_eq!(kept, json!({ "_meta": { "other": 1 } }));
        assert_eq!(progress_token(&mut json!({})), None);
    }

    #[tokio::test]
    async fn a_message_past_the_bound_is_not_kept() {
        let mut input = b"not json\n{\"id\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', wire::MAX_MESSAGE + 1));
        input.extend_from_slice(b"\n{\"id\":2}\n");
        let (mut reader, mut buf) = (&input[..], Vec::new());
        let read = read_message(&mut reader, &mut buf, false).await.unwrap();
        assert!(
            matches!(read, Read::Message(m) if m["id"] == 1),
            "a line not JSON skipped"
        );
        let read = read_message(&mut reader, &mut buf, false).await.unwrap();
        assert!(matches!(read, Read::TooLong));
        assert!(
            buf.capacity() <= wire::MAX_MESSAGE + 1,
            "{}",
            buf.capacity()
        );
        let mut fitting = format!("{{\"pad\":\"{}\"}}", "y".repeat(wire::MAX_MESSAGE - 20));
        fitting.push('\n');
        let (mut reader, mut buf) = (fitting.as_bytes(), Vec::new());
        let read = read_message(&mut reader, &mut buf, false).await.unwrap();
        assert!(
            matches!(read, Read::Message(_)),
            "a message of the bound itself is taken"
        );
        assert!(matches!(
            read_message(&mut reader, &mut buf, false).await.unwrap(),
            Read::End
        ));
        assert!(buf.capacity() <= KEPT_BUFFER, "a big buffer let go");
    }

    #[tokio::test]
    async fn read_strictly_a_line_that_is_no_json_object_is_garbage() {
        let input = b"\n{\"id\":1}\n[1]\n";
        let (mut reader, mut buf) = (&input[..], Vec::new());
        let read = read_message(&mut reader, &mut buf, true).await.unwrap();
        assert!(
            matches!(read, Read::Message(m) if m["id"] == 1),
            "blank lines pass"
        );
        let read = read_message(&mut reader, &mut buf, true).await.unwrap();
        assert!(matches!(read, Read::Garbage));
        let (mut reader, mut buf) = (&b"not json\n"[..], Vec::new());
        let read = read_message(&mut reader, &mut buf, true).await.unwrap();
        assert!(matches!(read, Read::Garbage));
    }

    #[test]
    fn dropped_answers_keep_their_marks() {
        let (_, _, data) = failure(&RequestError::TooLarge(99));
        assert_eq!(data.unwrap()[TOO_LARGE_FIELD], 99);
        let (_, _, data) = failure(&RequestError::TooDeep(None));
        assert_eq!(data.unwrap()[TOO_DEEP_FIELD], 0);
        let (code, message, _) = failure(&RequestError::Mcp {
            code: -32602,
            message: "bad".into(),
        });
        assert_eq!((code, message.as_str()), (-32602, "bad"));
    }
}
