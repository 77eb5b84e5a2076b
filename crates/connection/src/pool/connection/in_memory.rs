//! For the connection's unit tests: a session with an rmcp server running in the test's own
//! process over `tokio::io::duplex`, so that what a request does is tested against a real peer
//! without starting a process. `Scripted` is the server: its tools do what the tests need.

use super::{Connection, Sides};
use crate::elicitation::Content;
use crate::pool::client_side::LogTail;
use crate::pool::handler::Notice;
use crate::pool::handshake::{self, Protocol};
use crate::pool::host::{Asker, ClientFeatures, ElicitationPolicy, Host, Question, Reply, Root};
use crate::pool::link::Link;
use crate::pool::spec::{ConnectSpec, TransportSpec};
use crate::server_log::LogMessage;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    InputRequest, InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The server's side of a test: what it saw, and the token that ends its session.
pub(super) struct Served {
    pub seen: Arc<Seen>,
    pub end: CancellationToken,
}

/// What the server was sent.
#[derive(Default)]
pub(super) struct Seen {
    /// Each `tools/call` (its arguments, with `inputResponses` and `requestState` when given).
    pub calls: Mutex<Vec<Value>>,
    /// Calls whose request the client cancelled (`notifications/cancelled`), by tool name.
    pub cancelled: Mutex<Vec<String>>,
}

/// An rmcp server whose tools are:
/// - `echo`: its `text` back;
/// - `hang`: no answer until the client cancels the request;
/// - `stuck`: no answer at all;
/// - `progress`: `steps` progress notifications `delayMs` apart, then `done`;
/// - `ask`: an `input_required` result with a form for `name` (and `requestState` `"s1"`) until
///   the retry brings its answer, then `hello <name>`;
/// - `ask_forever`: always `input_required`;
/// - `visit`: the `-32042` error naming a page to visit first;
/// - `refuse`: the error `-32602` `"no such thing"`.
///
/// It lists `tools` tools (`tool-0`, …), `page` to a page.
#[derive(Clone, Default)]
pub(super) struct Scripted {
    pub seen: Arc<Seen>,
    pub tools: usize,
    pub page: usize,
}

impl ServerHandler for Scripted {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("in memory")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = (start + self.page.max(1)).min(self.tools);
        let tools = (start..end)
            .map(|i| Tool::new(format!("tool-{i}"), "a tool", Arc::new(Map::new())))
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = (end < self.tools).then(|| end.to_string());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        self.seen.calls.lock().push(json!({
            "name": request.name,
            "arguments": args,
            "inputResponses": request.input_responses,
            "requestState": request.request_state,
        }));
        let text = |t: String| Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into());
        match &*request.name {
            "echo" => text(args["text"].as_str().unwrap_or_default().to_string()),
            "hang" => {
                context.ct.cancelled().await;
                self.seen.cancelled.lock().push("hang".into());
                Err(ErrorData::internal_error("cancelled", None))
            }
            "stuck" => std::future::pending().await,
            "progress" => {
                let token = context.meta.get_progress_token();
                for step in 0..args["steps"].as_u64().unwrap_or(1) {
                    let delay = args["delayMs"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    if let Some(token) = token.clone() {
                        let param = ProgressNotificationParam::new(token, (step + 1) as f64);
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                text("done".into())
            }
            "ask" => match request.input_responses.as_ref().and_then(|r| r.get("name")) {
                Some(answer) => text(format!("hello {}", answer["content"]["name"])),
                None => Ok(asking("s1").into()),
            },
            "ask_forever" => Ok(asking("again").into()),
            "visit" => Err(ErrorData::new(
                ErrorCode(-32042),
                "visit a page first",
                Some(json!({ "elicitations": [
                    { "mode": "url", "url": "https://example.com/consent", "message": "Consent" },
                ]})),
            )),
            "refuse" => Err(ErrorData::invalid_params("no such thing", None)),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// An `input_required` result asking for a form with one field, `name`.
fn asking(state: &str) -> InputRequiredResult {
    let form = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            },
        },
    });
    let request: InputRequest = serde_json::from_value(form).unwrap();
    let asked = InputRequests::from([("name".to_string(), request)]);
    InputRequiredResult::new(Some(asked), Some(state.to_string()))
}

/// A person who answers every form with `{ name: "Ada" }` and opens every page, counted.
#[derive(Default)]
pub(super) struct Ada {
    pub asked: Mutex<Vec<String>>,
}

impl Host for Ada {
    fn elicit(&self, _: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        let reply = match question {
            Question::Form { message, .. } => {
                self.asked.lock().push(message);
                let content = Content::from_iter([("name".to_string(), json!("Ada"))]);
                Reply::Accept(content)
            }
            Question::Url { url, .. } => {
                self.asked.lock().push(url.as_str().to_string());
                Reply::Accept(Content::new())
            }
        };
        Box::pin(async move { Some(reply) })
    }

    fn sample(&self, _: Asker, _: Value) -> BoxFuture<'static, Result<Value, String>> {
        Box::pin(async { Err("no model here".to_string()) })
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        vec![]
    }

    fn log(&self, _: &str, _: &LogMessage) {}
}

/// A connection to `server` over an in-memory pipe, with `host` answering its questions; the
/// 2026-07-28 revision when `modern` (MRTR needs it).
pub(super) async fn open(
    server: Scripted,
    host: Arc<dyn Host>,
    modern: bool,
) -> (Arc<Connection>, Served, mpsc::UnboundedReceiver<Notice>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (seen, end) = (server.seen.clone(), CancellationToken::new());
    // Spawned: a 2026-07-28 server's opening lasts until the first request after
    // `server/discover`.
    let serving = server.serve_with_ct(tokio::io::split(theirs), end.clone());
    tokio::spawn(async move { serving.await.unwrap().waiting().await });
    let protocol = match modern {
        true => Protocol::Modern,
        false => Protocol::Initialize,
    };
    let spec = ConnectSpec {
        server: "mem".into(),
        transport: TransportSpec::Socket("in-memory".into()),
        protocol,
        timeout: Duration::from_secs(5),
        debug: false,
        client: ClientFeatures {
            elicitation: ElicitationPolicy::Ask,
            ..ClientFeatures::none()
        },
        keeper: None,
    };
    let (notices, heard) = mpsc::unbounded_channel();
    let sides = Sides::new(&spec, notices, host, Arc::new(LogTail::default()));
    let (read, write) = tokio::io::split(ours);
    let transport = AsyncRwTransport::new_client(read, write);
    let service = handshake::start(sides.handler(), transport, protocol, sides.stop.clone())
        .await
        .unwrap();
    let conn = sides.connect(&spec, service, Link::Socket).await;
    (conn, Served { seen, end }, heard)
}

/// Waits (at most 5 s) until `done` holds.
pub(super) async fn eventually(done: impl Fn() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}
