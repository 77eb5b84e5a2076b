//! Answering what a server asks of us, whichever way it asks: a server→client request on a
//! 2025 connection (`elicitation/create`, `sampling/createMessage`, `roots/list`) or an
//! `input_required` result on a 2026-07-28 one (MRTR). The answers follow the connection's
//! [`ClientFeatures`]; the [`Host`] is asked only where a person or a model must decide. While a
//! question is open, the requests it may belong to do not time out.

use super::client_tasks::wire::{TaskCapability, AS_TASK};
use super::client_tasks::{ClientTasks, StatusSink, TaskError};
use super::host::{Asker, Caller, ClientFeatures, ElicitationPolicy, Host, Question, Reply};
use super::question_bounds::{self, QuestionSlots, Slot};
use crate::clean::Link;
use crate::elicitation::Form;
use crate::server_log::{LogLevel, LogMessage};
use crate::trace::Trace;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, ErrorCode, FormElicitationCapability,
    RootsCapabilities, SamplingCapability, UrlElicitationCapability,
};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The warnings and errors a server logged last, kept for its failure message.
const LOG_TAIL: usize = 5;

/// The MCP Apps extension's id in `capabilities.extensions`, and the one kind of interface we
/// show (an HTML document, ext-apps 2.x).
pub const APPS_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
pub const APPS_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The spec's code for "the user rejected the request".
const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// One request in flight to the server.
pub struct PendingRequest {
    pub caller: Option<Caller>,
    /// Cancelled when the request has ended.
    pub done: CancellationToken,
    /// Open questions that may belong to this request: its timeout waits for them.
    questions: AtomicUsize,
    activity: Mutex<Instant>,
}

impl PendingRequest {
    /// Whether its timeout is due: idle for `limit` (counted from the last progress or answer)
    /// with no question open.
    pub fn timed_out(&self, limit: Duration) -> bool {
        !self.asking() && self.activity.lock().elapsed() >= limit
    }

    /// When its timeout is next due (a full `limit` from now while a question is open).
    pub fn due(&self, limit: Duration) -> tokio::time::Instant {
        let from = match self.asking() {
            true => Instant::now(),
            false => *self.activity.lock(),
        };
        tokio::time::Instant::from_std(from + limit)
    }

    pub fn asking(&self) -> bool {
        self.questions.load(Ordering::SeqCst) > 0
    }

    /// Progress or an answered question: the timeout starts again.
    pub fn touch(&self) {
        *self.activity.lock() = Instant::now();
    }
}

/// The requests in flight to one server.
#[derive(Default)]
pub struct Pending(Mutex<Vec<Arc<PendingRequest>>>);

impl Pending {
    pub fn start(&self, caller: Option<Caller>) -> Arc<PendingRequest> {
        let request = Arc::new(PendingRequest {
            caller,
            done: CancellationToken::new(),
            questions: AtomicUsize::new(0),
            activity: Mutex::new(Instant::now()),
        });
        self.0.lock().push(request.clone());
        request
    }

    pub fn end(&self, request: &Arc<PendingRequest>) {
        request.done.cancel();
        self.0.lock().retain(|r| !Arc::ptr_eq(r, request));
    }

    /// The requests a question may belong to: those sent for a caller.
    fn with_callers(&self) -> Vec<Arc<PendingRequest>> {
        self.0
            .lock()
            .iter()
            .filter(|r| r.caller.is_some())
            .cloned()
            .collect()
    }
}

/// Holds the timeouts of the requests a question may belong to while it is open.
struct OpenQuestion(Vec<Arc<PendingRequest>>);

impl OpenQuestion {
    fn open(requests: Vec<Arc<PendingRequest>>) -> OpenQuestion {
        for r in &requests {
            r.questions.fetch_add(1, Ordering::SeqCst);
        }
        OpenQuestion(requests)
    }
}

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        for r in &self.0 {
            r.touch();
            r.questions.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The last warnings and errors a server logged.
#[derive(Default)]
pub struct LogTail(Mutex<VecDeque<String>>);

impl LogTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock();
        if lines.len() == LOG_TAIL {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// One line each, oldest first.
    pub fn lines(&self) -> Option<String> {
        let lines = self.0.lock();
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }
}

#[derive(Clone)]
pub struct ClientSide {
    pub server: String,
    pub features: ClientFeatures,
    pub host: Arc<dyn Host>,
    pub pending: Arc<Pending>,
    pub log_tail: Arc<LogTail>,
    /// The questions the server asked as tasks.
    pub tasks: Arc<ClientTasks>,
    /// Places for the questions open or waiting (elicitation, sampling; as tasks too).
    pub slots: QuestionSlots,
    /// Where the connection's messages are traced, and its transport as the trace names it.
    pub trace: Option<(Arc<Trace>, &'static str)>,
}

impl ClientSide {
    /// What we advertise.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.features.elicitation != ElicitationPolicy::Off {
            caps.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::new())
                    .with_url(UrlElicitationCapability::new()),
            );
        }
        if self.features.sampling {
            // Tool use inside sampling is carried to the model; the server's context is not
            // included (no `context`).
            let mut sampling = SamplingCapability::default();
            sampling.tools = Some(Default::default());
            caps.sampling = Some(sampling);
        }
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        if self.features.tasks {
            extensions.insert(rmcp::model::TASKS_EXTENSION_ID.into(), Default::default());
        }
        if self.features.apps {
            let mime_types = json!({ "mimeTypes": [APPS_MIME_TYPE] });
            let declared = mime_types.as_object().cloned().unwrap_or_default();
            extensions.insert(APPS_EXTENSION_ID.into(), declared);
        }
        if !extensions.is_empty() {
            caps.extensions = Some(extensions);
        }
        if self.features.roots {
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(true);
            caps.roots = Some(roots);
        }
        caps
    }

    /// The 2025-11-25 `tasks` capability: the server may ask what we answer (sampling,
    /// elicitation) as tasks, and list and cancel them. `None` without `tasks` or anything to
    /// ask.
    pub fn task_capability(&self) -> Option<Value> {
        if !self.features.tasks {
            return None;
        }
        let mut requests = Map::new();
        if self.features.sampling {
            requests.insert("sampling".into(), json!({ "createMessage": {} }));
        }
        if self.features.elicitation != ElicitationPolicy::Off {
            requests.insert("elicitation".into(), json!({ "create": {} }));
        }
        (!requests.is_empty()).then(|| json!({ "list": {}, "cancel": {}, "requests": requests }))
    }

    /// The `tasks` capability, as the transports declare it in `initialize`.
    pub fn task_declaration(&self) -> TaskCapability {
        TaskCapability::new(self.task_capability())
    }

    /// Answers a request of the server about tasks, or a question asked as a task (marked
    /// [`AS_TASK`] on the wire): at once with the task, the question asked in the background.
    /// `withdrawn`: cancelled when the server cancels the request (a question answered as a
    /// plain one is withdrawn then). `None`: not a request about tasks.
    pub fn answer_task(
        &self,
        method: &str,
        mut params: Value,
        notify: StatusSink,
        withdrawn: CancellationToken,
    ) -> Option<BoxFuture<'static, Result<Value, ErrorData>>> {
        let id = || {
            params
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let capability = self.task_capability();
        let ready = |answer: Result<Value, TaskError>| -> BoxFuture<'static, _> {
            Box::pin(std::future::ready(answer.map_err(ErrorData::from)))
        };
        if let Some(inner) = method.strip_prefix(AS_TASK) {
            let task = params.as_object_mut().and_then(|p| p.remove("task"));
            let inner = inner.to_string();
            // Without the capability for it the request is answered as a plain one.
            let offered = capability.is_some_and(|caps| {
                let (group, name) = inner.split_once('/').unwrap_or_default();
                caps["requests"][group].get(name).is_some()
            });
            if !offered {
                return Some(self.answer(&inner, params, Origin::request_of_the_server(withdrawn)));
            }
            let slot = match self.slot(&inner) {
                Ok(slot) => slot,
                Err(refused) => return Some(Box::pin(std::future::ready(Err(refused)))),
            };
            let ttl = task
                .as_ref()
                .and_then(|t| t.get("ttl"))
                .and_then(Value::as_u64);
            let doing = match inner.as_str() {
                "sampling/createMessage" => "asking the model",
                _ => "asking the user",
            };
            let this = self.clone();
            let job = Box::new(move |stop: CancellationToken| {
                this.answer_in(slot, &inner, params, Origin::request_of_the_server(stop))
            });
            return Some(ready(self.tasks.start(ttl, doing, job, notify)));
        }
        // Requests about tasks are ours only where we offer them.
        capability.as_ref()?;
        match method {
            "tasks/get" => Some(ready(self.tasks.get(&id()))),
            "tasks/list" => {
                let cursor = params.get("cursor").and_then(Value::as_str);
                Some(ready(self.tasks.list(cursor)))
            }
            "tasks/cancel" => Some(ready(self.tasks.cancel(&id()))),
            "tasks/result" => {
                let (tasks, id) = (self.tasks.clone(), id());
                Some(Box::pin(async move {
                    tasks.result(&id).await.map_err(ErrorData::from)?
                }))
            }
            _ => None,
        }
    }

    /// Answers one question of the server, by its method; refused at once when the server has
    /// as many open as it may.
    pub fn answer(
        &self,
        method: &str,
        params: Value,
        origin: Origin,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        match self.slot(method) {
            Ok(slot) => self.answer_in(slot, method, params, origin),
            Err(refused) => Box::pin(std::future::ready(Err(refused))),
        }
    }

    /// A place for a question of `method` (none needed for others), or the error that refuses it.
    fn slot(&self, method: &str) -> Result<Option<Slot>, ErrorData> {
        let what = match method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling request",
            _ => return Ok(None),
        };
        self.slots.take(what).map(Some)
    }

    /// [`ClientSide::answer`] in the place `slot` (held until the answer).
    fn answer_in(
        &self,
        slot: Option<Slot>,
        method: &str,
        params: Value,
        origin: Origin,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let this = self.clone();
        match method {
            "elicitation/create" => Box::pin(async move {
                let _slot = slot;
                this.elicit(params, origin).await
            }),
            "sampling/createMessage" => Box::pin(async move {
                let _slot = slot;
                this.sample(params, origin).await
            }),
            "roots/list" => Box::pin(std::future::ready(this.roots())),
            other => {
                let error = ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("the client does not answer `{other}`"),
                    None,
                );
                Box::pin(std::future::ready(Err(error)))
            }
        }
    }

    async fn elicit(&self, params: Value, origin: Origin) -> Result<Value, ErrorData> {
        let policy = self.features.elicitation;
        if policy == ElicitationPolicy::Off {
            return Err(self.turned_off("asked for user input (elicitation)", "elicitation"));
        }
        if let Some(why) = question_bounds::oversized_question(&params) {
            return Err(question_bounds::refused("elicitation", &why));
        }
        let question = question(&params).map_err(|why| {
            ErrorData::invalid_params(format!("elicitation refused: {why}"), None)
        })?;
        if policy == ElicitationPolicy::Decline {
            return Ok(json!({ "action": "decline" }));
        }
        let host = self.host.clone();
        let asked = self
            .asked(origin, &params, |asker| {
                host.elicit(asker, question.clone())
            })
            .await;
        let reply = match asked {
            None => Reply::Cancel,
            Some(Some(reply)) => reply,
            Some(None) => match (&question, policy) {
                (Question::Form { form, .. }, ElicitationPolicy::Defaults) => {
                    form.defaults_only().map_or(Reply::Decline, Reply::Accept)
                }
                _ => Reply::Decline,
            },
        };
        match (reply, &question) {
            (Reply::Accept(content), Question::Form { form, .. }) => {
                let content = form.complete(content).map_err(|e| {
                    ErrorData::internal_error(
                        format!("the answer does not fit the form: {e}"),
                        None,
                    )
                })?;
                Ok(json!({ "action": "accept", "content": content }))
            }
            (Reply::Accept(_), Question::Url { .. }) => Ok(json!({ "action": "accept" })),
            (Reply::Decline, _) => Ok(json!({ "action": "decline" })),
            (Reply::Cancel, _) => Ok(json!({ "action": "cancel" })),
            (Reply::Refused(why), _) => Err(ErrorData::new(USER_REJECTED, why, None)),
        }
    }

    async fn sample(&self, params: Value, origin: Origin) -> Result<Value, ErrorData> {
        if !self.features.sampling {
            return Err(self.turned_off("asked the model (sampling)", "sampling"));
        }
        if let Some(why) = question_bounds::oversized_sampling(&params) {
            return Err(question_bounds::refused("sampling request", &why));
        }
        check_sampling(&params).map_err(|why| {
            ErrorData::invalid_params(format!("sampling request refused: {why}"), None)
        })?;
        let host = self.host.clone();
        match self
            .asked(origin, &params.clone(), |asker| host.sample(asker, params))
            .await
        {
            Some(Ok(result)) => Ok(result),
            Some(Err(refusal)) => Err(ErrorData::new(USER_REJECTED, refusal, None)),
            None => Err(ErrorData::new(
                USER_REJECTED,
                "the sampling request was cancelled",
                None,
            )),
        }
    }

    fn roots(&self) -> Result<Value, ErrorData> {
        if !self.features.roots {
            return Err(self.turned_off("asked for its roots", "roots"));
        }
        let roots: Vec<Value> = self
            .host
            .roots(&self.server)
            .into_iter()
            .map(|root| {
                let mut entry = Map::new();
                entry.insert("uri".into(), Value::String(root.uri));
                if let Some(name) = root.name {
                    entry.insert("name".into(), Value::String(name));
                }
                Value::Object(entry)
            })
            .collect();
        Ok(json!({ "roots": roots }))
    }

    /// A `notifications/message`: to the host at or above the log level; warnings and worse
    /// also kept for the failure message.
    pub fn log(&self, params: &Value) {
        let message = LogMessage::from_params(params);
        if message.level >= LogLevel::Warning {
            let logger = message.logger().map_or(String::new(), |l| format!(" {l}:"));
            self.log_tail
                .push(format!("{}{logger} {}", message.level, message.text()));
        }
        if message.level >= self.features.log_level {
            self.host.log(&self.server, &message);
        }
    }

    fn turned_off(&self, what: &str, setting: &str) -> ErrorData {
        ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "{} {what}, but the client did not offer it: `{setting}` is false for this server",
                self.server
            ),
            None,
        )
    }

    /// Runs `ask` with the requests the question may belong to held open; `None` when the
    /// question became void first (withdrawn, or every such request ended). Dropped unanswered
    /// (its call stopped by its limit), the question is void too.
    async fn asked<T>(
        &self,
        origin: Origin,
        params: &Value,
        ask: impl FnOnce(Asker) -> BoxFuture<'static, T>,
    ) -> Option<T> {
        let withdrawn = origin.withdrawn;
        let requests = match origin.request {
            Some(request) => vec![request],
            None => self.pending.with_callers(),
        };
        let void = CancellationToken::new();
        let unanswered = void.clone().drop_guard();
        let asker = Asker {
            server: self.server.clone(),
            callers: requests.iter().filter_map(|r| r.caller.clone()).collect(),
            task: related_task(params),
            void: void.clone(),
            on_behalf: None,
        };
        let dones: Vec<CancellationToken> = requests.iter().map(|r| r.done.clone()).collect();
        let _open = OpenQuestion::open(requests);
        let all_ended = async move {
            if dones.is_empty() {
                std::future::pending::<()>().await;
            }
            futures::future::join_all(dones.iter().map(|d| d.cancelled())).await;
        };
        let answer = ask(asker);
        let answered = tokio::select! {
            answer = answer => Some(answer),
            _ = withdrawn.cancelled() => None,
            _ = all_ended => None,
        };
        if answered.is_some() {
            unanswered.disarm();
        }
        answered
    }
}

/// What a question of the server is known to belong to.
pub struct Origin {
    /// Cancelled when the server no longer needs the answer.
    pub withdrawn: CancellationToken,
    /// The request whose `input_required` result carried the question (2026-07-28); `None` for
    /// a server→client request, which may belong to any request in flight.
    pub request: Option<Arc<PendingRequest>>,
}

impl Origin {
    /// A server→client request, withdrawn with `withdrawn`.
    pub fn request_of_the_server(withdrawn: CancellationToken) -> Origin {
        Origin {
            withdrawn,
            request: None,
        }
    }
}

/// The task a question is about (`_meta["io.modelcontextprotocol/related-task"].taskId`).
fn related_task(params: &Value) -> Option<String> {
    let task = params
        .get("_meta")?
        .get("io.modelcontextprotocol/related-task")?;
    Some(task.get("taskId")?.as_str()?.to_string())
}

/// An `elicitation/create`'s params as a question; the error says what is wrong with them.
fn question(params: &Value) -> Result<Question, String> {
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
        "form" => {
            let schema = params
                .get("requestedSchema")
                .ok_or("it has no requestedSchema")?;
            let form = Form::from_schema(schema).map_err(|e| e.to_string())?;
            Ok(Question::Form {
                message,
                form,
                schema: schema.clone(),
            })
        }
        "url" => {
            let url = params
                .get("url")
                .and_then(Value::as_str)
                .ok_or("URL mode without a `url`")?;
            let url = Link::parse(url)
                .map_err(|why| format!("its `url` is not opened: {why}; nobody was asked"))?;
            Ok(Question::Url {
                message,
                url,
                id: params
                    .get("elicitationId")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map(str::to_string),
            })
        }
        other => Err(format!("unknown mode \"{other}\"")),
    }
}

/// The checks a sampling request passes before anyone sees it.
fn check_sampling(params: &Value) -> Result<(), String> {
    let messages = params
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("it has no `messages` array")?;
    if messages.is_empty() {
        return Err("its `messages` are empty".into());
    }
    match params.get("maxTokens") {
        Some(n) if n.as_u64().is_some_and(|n| n > 0) => Ok(()),
        _ => Err("it has no positive `maxTokens`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_question_is_refused_unless_its_url_is_plain() {
        let asked = |url: &str| question(&json!({ "mode": "url", "message": "Pay", "url": url }));
        for (url, why) in [
            (
                "https://example.com/\x1b]0;x\x07",
                "the control character \\x1b",
            ),
            (
                "https://example.com/\u{202e}",
                "the invisible character \\u{202e}",
            ),
            ("javascript:alert(1)", "only http and https ones are opened"),
        ] {
            let refused = asked(url).unwrap_err();
            assert!(
                refused.starts_with("its `url` is not opened: it") && refused.contains(why),
                "{refused}"
            );
        }
        match asked("https://\u{430}pple.com/pay").unwrap() {
            Question::Url { url, .. } => assert_eq!(url.as_str(), "https://xn--pple-43d.com/pay"),
            other => panic!("{other:?}"),
        }
    }
}
