//! The MCP side of the test server: what it answers to each message, whatever carries them.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Where the messages a message leads to go (its response, progress, questions to the client).
pub type Out = mpsc::UnboundedSender<Value>;

/// The scenarios on the command line: `name` or `name=number`.
pub struct Scenarios(HashMap<String, Option<f64>>);

impl Scenarios {
    pub fn parse(args: &[String]) -> Scenarios {
        let pairs = args.iter().map(|arg| match arg.split_once('=') {
            Some((name, value)) => (name.to_string(), value.parse().ok()),
            None => (arg.clone(), None),
        });
        Scenarios(pairs.collect())
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub fn number(&self, name: &str) -> Option<f64> {
        self.0.get(name).copied().flatten()
    }
}

#[derive(Default)]
struct State {
    /// Methods received so far, notifications included (the `seen` tool).
    seen: Vec<String>,
    /// Tools added by `grow`.
    grown: usize,
    /// Set by `freeze`: nothing is answered any more.
    frozen: bool,
    client_capabilities: Value,
    /// Questions sent to the client (`ask`), by their id.
    asked: HashMap<String, oneshot::Sender<Value>>,
    next_ask: u64,
    /// Calls of `clock_tick` (`clock` says how many).
    ticks: u64,
}

pub struct Server {
    scenarios: Scenarios,
    state: Mutex<State>,
}

const TOOLS: [&str; 8] = [
    "echo", "crash", "hang", "freeze", "big", "grow", "slow", "seen",
];
const ASK_TOOLS: [&str; 5] = ["ask", "ask_inline", "log", "capabilities", "forever"];
const SUBSCRIBE_TOOLS: [&str; 1] = ["touch"];
/// `apps`: a tool with an MCP App (`clock`), one only the app may call (`clock_tick`), and one
/// for the model alone (`clock_reset`).
const APP_TOOLS: [(&str, &str); 3] = [
    ("clock", r#"{ "resourceUri": "ui://clock/app.html" }"#),
    ("clock_tick", r#"{ "visibility": ["app"] }"#),
    ("clock_reset", r#"{ "visibility": ["model"] }"#),
];
/// The clock's interface.
const APP_URI: &str = "ui://clock/app.html";

impl Server {
    pub fn new(scenarios: Scenarios) -> Arc<Server> {
        Arc::new(Server {
            scenarios,
            state: Mutex::default(),
        })
    }

    pub fn scenarios(&self) -> &Scenarios {
        &self.scenarios
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handles one message from the client; what it leads to goes to `out`.
    pub fn handle(self: &Arc<Self>, message: Value, out: &Out) {
        let id = message.get("id").cloned();
        let method = message.get("method").and_then(Value::as_str);
        if self.state().frozen {
            return;
        }
        let Some(method) = method else {
            // An answer to one of our questions.
            let key = id.as_ref().map(|v| v.to_string()).unwrap_or_default();
            if let Some(waiting) = self.state().asked.remove(&key) {
                let _ = waiting.send(message);
            }
            return;
        };
        self.state().seen.push(method.to_string());
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        if method == "notifications/cancelled" {
            eprintln!("mcp-test-server: cancelled {}", params["requestId"]);
            return;
        }
        if method == "notifications/initialized" && self.scenarios.has("announce-at-start") {
            send(
                out,
                json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
            );
        }
        let Some(id) = id else {
            return; // other notifications
        };
        match method {
            "initialize" => self.initialize(id, &params, out),
            "ping" => reply(out, id, json!({})),
            "tools/list" => reply(out, id, self.list_tools(params["cursor"].as_str())),
            "resources/list" => reply(out, id, self.list_resources()),
            "resources/read" => reply(
                out,
                id,
                self.read_resource(params["uri"].as_str().unwrap_or("")),
            ),
            "resources/subscribe" | "resources/unsubscribe" if self.scenarios.has("subscribe") => {
                reply(out, id, json!({}))
            }
            // The task `forever` starts: it works until it is cancelled.
            "tasks/get" if params["taskId"] == "forever-1" => {
                reply(out, id, forever_task("working", "still working"))
            }
            // A task `ask` answered as started is done as soon as it is asked about.
            "tasks/get" => reply(out, id, task(&params["taskId"], "completed")),
            "tasks/result" => {
                let done = format!("task {} done", params["taskId"]);
                reply(
                    out,
                    id,
                    json!({ "content": [{ "type": "text", "text": done }] }),
                )
            }
            "tasks/cancel" => {
                eprintln!("mcp-test-server: tasks/cancel {}", params["taskId"]);
                reply(out, id, forever_task("cancelled", "cancelled"));
            }
            "tools/call" if params["name"] == "forever" && params.get("task").is_some() => {
                reply(
                    out,
                    id,
                    json!({ "task": forever_task("working", "started") }),
                );
            }
            "tools/call" => {
                let (this, out) = (self.clone(), out.clone());
                tokio::spawn(async move { this.call(id, params, out).await });
            }
            _ => fail(out, id, -32601, &format!("method not found: {method}")),
        }
    }

    fn initialize(&self, id: Value, params: &Value, out: &Out) {
        if self.scenarios.has("hang-on-init") {
            return;
        }
        self.state().client_capabilities = params["capabilities"].clone();
        let mut capabilities = json!({ "tools": { "listChanged": true } });
        if self.scenarios.has("asks") {
            capabilities["logging"] = json!({});
        }
        if self.scenarios.has("resources") {
            capabilities["resources"] = json!({});
        }
        if self.scenarios.has("subscribe") {
            capabilities["resources"] = json!({ "subscribe": true });
        }
        if self.scenarios.has("apps") {
            capabilities["resources"] = json!({});
        }
        let result = json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-11-25"),
            "capabilities": capabilities,
            "serverInfo": { "name": "mcp-test-server", "version": "1.0.0" },
            "instructions": "A server for tests that misbehaves on purpose.",
        });
        let Some(delay) = self.scenarios.number("slow-init") else {
            return reply(out, id, result);
        };
        let out = out.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay as u64)).await;
            reply(&out, id, result);
        });
    }

    fn tool(&self, name: &str) -> Value {
        let padding = self.scenarios.number("tool-size").unwrap_or(0.0) * 1024.0;
        let mut tool = json!({
            "name": name,
            "description": format!("The {name} tool.{}", " pad".repeat(padding as usize / 4)),
            "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } },
        });
        if let Some((_, ui)) = APP_TOOLS.iter().find(|(n, _)| *n == name) {
            tool["_meta"] = json!({ "ui": serde_json::from_str::<Value>(ui).unwrap_or_default() });
        }
        tool
    }

    fn tool_names(&self) -> Vec<String> {
        let asks = self.scenarios.has("asks").then_some(&ASK_TOOLS[..]);
        let touch = self
            .scenarios
            .has("subscribe")
            .then_some(&SUBSCRIBE_TOOLS[..]);
        let grown = (1..=self.state().grown).map(|i| format!("grown_{i}"));
        let apps = self.scenarios.has("apps").then_some(&APP_TOOLS[..]);
        TOOLS
            .iter()
            .chain(asks.into_iter().flatten())
            .chain(touch.into_iter().flatten())
            .chain(apps.into_iter().flatten().map(|(name, _)| name))
            .map(|s| s.to_string())
            .chain(grown)
            .collect()
    }

    fn list_tools(&self, cursor: Option<&str>) -> Value {
        let Some(total) = self.scenarios.number("many-tools") else {
            let tools: Vec<Value> = self.tool_names().iter().map(|n| self.tool(n)).collect();
            return json!({ "tools": tools });
        };
        let (total, start) = (
            total as usize,
            cursor.and_then(|c| c.parse().ok()).unwrap_or(0),
        );
        let end = total.min(start + 100);
        let tools: Vec<Value> = (start..end)
            .map(|i| self.tool(&format!("tool_{i}")))
            .collect();
        match end < total {
            true => json!({ "tools": tools, "nextCursor": end.to_string() }),
            false => json!({ "tools": tools }),
        }
    }

    fn list_resources(&self) -> Value {
        let count = self.scenarios.number("resources").unwrap_or(0.0) as usize;
        let mut resources: Vec<Value> = (1..=count)
            .map(|i| json!({ "uri": format!("test://resource/{i}"), "name": format!("resource {i}") }))
            .collect();
        if self.scenarios.has("apps") {
            resources.push(
                json!({ "uri": APP_URI, "name": "clock", "mimeType": "text/html;profile=mcp-app" }),
            );
        }
        json!({ "resources": resources })
    }

    fn read_resource(&self, uri: &str) -> Value {
        if uri == APP_URI && self.scenarios.has("apps") {
            let html = include_str!("clock.html");
            let ui = json!({ "permissions": { "clipboardWrite": {} }, "prefersBorder": true, "domain": "clock.example" });
            return json!({ "contents": [{ "uri": uri, "mimeType": "text/html;profile=mcp-app", "text": html, "_meta": { "ui": ui } }] });
        }
        json!({ "contents": [{ "uri": uri, "text": format!("the contents of {uri}") }] })
    }

    async fn call(self: Arc<Self>, id: Value, params: Value, out: Out) {
        let args = &params["arguments"];
        let name = params["name"].as_str().unwrap_or_default();
        let text = |t: String| json!({ "content": [{ "type": "text", "text": t }] });
        if !self.tool_names().iter().any(|n| n == name) {
            let unknown = json!({ "content": [{ "type": "text", "text": format!("unknown tool {name}") }], "isError": true });
            return reply(&out, id, unknown);
        }
        let result = match name {
            "echo" => {
                let delay = args["delayMs"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                let said = args["text"].as_str().or(args["message"].as_str());
                text(format!("echo: {}", said.unwrap_or("")))
            }
            "crash" => {
                eprintln!("mcp-test-server: segfault in handler (simulated)");
                std::process::exit(3);
            }
            "hang" => return,
            "freeze" => {
                self.state().frozen = true;
                return;
            }
            "big" => {
                let megabytes = self.scenarios.number("big-result").unwrap_or(1.0);
                text("y".repeat((megabytes * 1024.0 * 1024.0) as usize))
            }
            "seen" => text(format!("methods: {}", self.state().seen.join(", "))),
            "clock" => {
                let delay = args["delayMs"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                text(format!("clock called; ticks {}", self.state().ticks))
            }
            "clock_tick" => {
                self.state().ticks += 1;
                text("clock_tick called".into())
            }
            "clock_reset" => text("clock_reset called".into()),
            "grow" => {
                let now = {
                    let mut state = self.state();
                    state.grown += 1;
                    TOOLS.len() + state.grown
                };
                send(
                    &out,
                    json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
                );
                text(format!("now {now} tools"))
            }
            "slow" => text(
                self.slow(args, &params["_meta"]["progressToken"], &out)
                    .await,
            ),
            // With `task`: starts nothing, but answers as a call that became that task would.
            "ask" if args["task"].is_string() => {
                json!({ "task": { "taskId": args["task"], "status": "working" } })
            }
            "ask" => text(self.ask(args, &out).await),
            // 2026-07-28's way (MRTR): the question comes back as an `input_required` result,
            // and the call made again with its answer returns that answer.
            "ask_inline" => match params.get("inputResponses") {
                Some(answers) => text(format!("answers: {answers}")),
                None => json!({
                    "resultType": "input_required",
                    "inputRequests": { "q": { "method": args["method"], "params": args["params"] } },
                }),
            },
            "log" => {
                let count = args["count"].as_u64().unwrap_or(1);
                for n in 0..count {
                    let mut params = args["params"].clone();
                    if count > 1 {
                        params["data"] = json!(format!(
                            "{} {n}",
                            params["data"].as_str().unwrap_or_default()
                        ));
                    }
                    send(
                        &out,
                        json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": params }),
                    );
                }
                text("logged".into())
            }
            "capabilities" => text(self.state().client_capabilities.to_string()),
            "touch" => {
                let params = json!({ "uri": args["uri"] });
                send(
                    &out,
                    json!({ "jsonrpc": "2.0", "method": "notifications/resources/updated", "params": params }),
                );
                text("touched".into())
            }
            // Called without a task: refused, as the TypeScript SDK refuses a tool whose
            // `taskSupport` is "required".
            "forever" => {
                json!({ "content": [{ "type": "text", "text": "MCP error -32601: Tool forever requires task augmentation (taskSupport: 'required')" }], "isError": true })
            }
            _ => text(format!("{name} has no behaviour")),
        };
        reply(&out, id, result);
    }

    /// `steps` steps of `delayMs`, each reported as progress when the call asked for it.
    async fn slow(&self, args: &Value, token: &Value, out: &Out) -> String {
        let steps = args["steps"].as_u64().unwrap_or(5);
        let delay = Duration::from_millis(args["delayMs"].as_u64().unwrap_or(100));
        for step in 1..=steps {
            tokio::time::sleep(delay).await;
            if !token.is_null() {
                let params = json!({ "progressToken": token, "progress": step, "total": steps, "message": format!("step {step}") });
                send(
                    out,
                    json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params }),
                );
            }
        }
        format!("slow done after {steps} steps")
    }

    /// Sends the request `method` with `params` to the client; its answer (or error) as text.
    async fn ask(&self, args: &Value, out: &Out) -> String {
        let (answered, answer) = oneshot::channel();
        let id = {
            let mut state = self.state();
            state.next_ask += 1;
            let id = json!(format!("ask-{}", state.next_ask));
            state.asked.insert(id.to_string(), answered);
            id
        };
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": args["method"], "params": args["params"] });
        send(out, request);
        match answer.await {
            Ok(answer) if answer.get("error").is_some() => format!(
                "error {}: {}",
                answer["error"]["code"],
                answer["error"]["message"].as_str().unwrap_or("")
            ),
            Ok(answer) => format!("answer: {}", answer["result"]),
            Err(_) => "no answer".into(),
        }
    }
}

/// The one task of the server (2025-11-25's shape), polled every 100 ms.
fn forever_task(status: &str, message: &str) -> Value {
    let mut task = task(&json!("forever-1"), status);
    task["statusMessage"] = json!(message);
    task
}

/// A task's state in 2025-11-25's shape, to be polled every 100 ms.
fn task(id: &Value, status: &str) -> Value {
    json!({
        "taskId": id, "status": status,
        "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": null, "pollInterval": 100,
    })
}

fn send(out: &Out, message: Value) {
    let _ = out.send(message);
}

fn reply(out: &Out, id: Value, result: Value) {
    send(out, json!({ "jsonrpc": "2.0", "id": id, "result": result }));
}

fn fail(out: &Out, id: Value, code: i64, message: &str) {
    send(
        out,
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }),
    );
}
