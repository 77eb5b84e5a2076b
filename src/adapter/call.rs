//! Calling a tool (or reading a resource tool), and `execute`: the `mcp` tool's parameters
//! mapped onto the modes.

use super::{Adapter, ErrorCode, Outcome};
use crate::catalog::ToolInfo;
use crate::config::value_kind;
use crate::output_guard::{guard, spill, Limits};
use crate::pool::{ProgressSink, RequestError, RequestOptions};
use crate::render;
use crate::search::SearchOptions;
use crate::validate::{check_arguments, coerce_arguments, without_null_optionals};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Fields of the `mcp` tool that pick a mode; finding one inside `args` means the model nested them.
const GATEWAY_FIELDS: [&str; 6] = [
    "tool",
    "connect",
    "describe",
    "instructions",
    "search",
    "server",
];
/// Search results per page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 12;

#[derive(Clone, Default)]
pub struct CallOptions {
    pub server: Option<String>,
    /// Lets `cancel(call_id)` abort the call.
    pub call_id: Option<String>,
    pub timeout_ms: Option<u64>,
    pub on_progress: Option<ProgressSink>,
}

impl Adapter {
    pub async fn call(
        self: &Arc<Self>,
        name: &str,
        args: Map<String, Value>,
        opts: CallOptions,
    ) -> Outcome {
        let tool = match self.resolve("call", name, opts.server.as_deref()).await {
            Ok(tool) => tool,
            Err(outcome) => return outcome,
        };
        let mut args = match tool.input_schema() {
            Some(schema) => without_null_optionals(schema, args),
            None => args,
        };
        // Checked against the known schema before any server starts: a wrong call costs nothing.
        if let Some(outcome) = argument_problems(&tool, &mut args) {
            return outcome;
        }
        let (conn, event) = match self.handshaken(&tool.server).await {
            Ok(reached) => reached,
            Err(why) => return why.outcome("call", &tool.server),
        };
        self.servers.mark_used(&tool.server);
        // A server that was just started is not listed yet, but the catalog knows the tool (from
        // the cache): the call goes at once, and the server is listed once it is idle.
        let early = !conn.is_listed();
        let tool = match early {
            true => tool,
            false => {
                if let Err(why) = self.take_listing(&conn, event).await {
                    return why.outcome("call", &tool.server);
                }
                // Connecting may have refreshed the catalog: call what the server lists now.
                match self.resolve("call", &tool.name, Some(&tool.server)).await {
                    Ok(tool) => tool,
                    Err(outcome) => return outcome,
                }
            }
        };
        let server = self
            .server(&tool.server)
            .expect("resolved tools belong to configured servers");
        let timeout = opts
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| self.request_timeout(server));
        let (method, params) = match &tool.resource_uri {
            Some(uri) => ("resources/read", json!({ "uri": uri })),
            None => (
                "tools/call",
                json!({ "name": tool.original, "arguments": args }),
            ),
        };
        let cancel = self.closing.child_token();
        let _registered = self
            .servers
            .call_started(&tool.server, opts.call_id.as_deref(), &cancel);
        let on_progress = opts
            .on_progress
            .or_else(|| self.progress_events(opts.call_id.clone()?, &tool.server, &tool.name));
        let request = RequestOptions {
            timeout,
            cancel,
            on_progress,
            caller: opts.call_id.as_deref().map(Into::into),
        };
        let details = |outcome: Outcome| {
            outcome
                .with("server", tool.server.clone())
                .with("tool", tool.name.clone())
        };
        let result = conn.request(method, params, request).await;
        if early {
            self.take_listing_when_idle(&conn, event);
        }
        let refused = match &result {
            Ok(raw) => raw.get("isError").and_then(Value::as_bool) == Some(true),
            Err(e) => matches!(e, RequestError::Mcp { .. }),
        };
        if early && refused {
            // The server may no longer have the tool the cache knew: say so as for any other.
            if self.take_listing(&conn, event).await.is_ok() {
                if let Err(outcome) = self.resolve("call", &tool.name, Some(&tool.server)).await {
                    return outcome;
                }
            }
        }
        match result {
            Ok(raw) => {
                let rendered = match tool.resource_uri {
                    Some(_) => render::resource_result(&raw),
                    None => render::call_result(&raw),
                };
                let mut outcome = Outcome::text("call", "");
                let mut spilled = None;
                outcome.content = match self.output_limits() {
                    Some(limits) => guard(rendered.content, limits, |full| {
                        let path = spill(&tool.name, full)?;
                        spilled = Some(path.display().to_string());
                        Ok(path)
                    }),
                    None => rendered.content,
                };
                if let Some(path) = spilled {
                    outcome.set("fullOutputPath", path);
                }
                if rendered.is_error {
                    outcome.fail(ErrorCode::ToolError);
                }
                details(outcome)
            }
            Err(RequestError::Aborted) => details(Outcome::error(
                "call",
                ErrorCode::Aborted,
                format!(
                    "Call to {} was aborted; the server was told to stop.",
                    tool.name
                ),
            )),
            Err(e) => {
                let code = ErrorCode::from(&e);
                let mut text = format!("Failed to call {}: {e}", tool.name);
                if let Some(schema) = tool.input_schema() {
                    text.push_str(&format!(
                        "\n\nExpected parameters:\n{}",
                        render::parameters(schema)
                    ));
                }
                details(Outcome::error("call", code, text))
            }
        }
    }

    /// Runs the `mcp` tool: picks the mode from `params` (tool > connect > describe >
    /// instructions > search > server > status).
    pub async fn execute(self: &Arc<Self>, params: &Value, call_id: Option<String>) -> Outcome {
        let text = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let flag = |key: &str| params.get(key).and_then(Value::as_bool);
        let count = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_f64)
                .filter(|n| *n >= 0.0)
                .map(|n| n as usize)
        };
        let server = text("server");
        let args = match parse_args(params.get("args")) {
            Ok(args) => args,
            Err(outcome) => return outcome,
        };
        if let Some(tool) = text("tool") {
            let opts = CallOptions {
                server: server.map(str::to_string),
                call_id,
                ..CallOptions::default()
            };
            return self.call(tool, args, opts).await;
        }
        if GATEWAY_FIELDS.iter().any(|f| args.contains_key(*f)) {
            return Outcome::error(
                "call",
                ErrorCode::NestedParams,
                "Gateway fields were nested inside `args`; pass them at the top level, e.g. mcp({ search: \"...\" }) or mcp({ tool: \"name\", args: {...} }).",
            );
        }
        if let Some(name) = text("connect") {
            self.connect(name).await
        } else if let Some(name) = text("describe") {
            self.describe(name, server).await
        } else if let Some(name) = text("instructions") {
            self.instructions(name).await
        } else if let Some(query) = params.get("search").and_then(Value::as_str) {
            let opts = SearchOptions {
                regex: flag("regex").unwrap_or(false),
                server: server.map(str::to_string),
                limit: count("limit").filter(|n| *n > 0).unwrap_or(DEFAULT_LIMIT),
                offset: count("offset").unwrap_or(0),
            };
            self.search(query.trim(), opts, flag("includeSchemas").unwrap_or(true))
                .await
        } else if let Some(name) = server {
            self.list(name).await
        } else {
            self.status()
        }
    }
}

impl Adapter {
    /// The output guard's limits: `settings.outputGuard`, unless `MCP_OUTPUT_GUARD=0` turns it off.
    fn output_limits(&self) -> Option<Limits> {
        let off = self
            .env
            .get("MCP_OUTPUT_GUARD")
            .is_some_and(|v| matches!(v.trim(), "0" | "false" | "off"));
        self.config.settings.output_guard.filter(|_| !off)
    }

    /// Progress of call `call_id` reported as `progress` events.
    fn progress_events(
        self: &Arc<Self>,
        call_id: String,
        server: &str,
        tool: &str,
    ) -> Option<ProgressSink> {
        let (this, server, tool) = (Arc::downgrade(self), server.to_string(), tool.to_string());
        Some(Arc::new(move |p| {
            if let Some(this) = this.upgrade() {
                let text = render::progress(&tool, p.progress, p.total, p.message.as_deref());
                let fields = json!({ "callId": call_id, "server": server, "tool": tool, "progress": p.progress, "total": p.total, "message": p.message, "text": text });
                this.events.emit("progress", fields);
            }
        }))
    }
}

/// The refusal to send `args` that do not fit the tool's input schema, once values of the wrong
/// type that convert safely to the type it demands (`"2"` for a number) are converted.
fn argument_problems(tool: &ToolInfo, args: &mut Map<String, Value>) -> Option<Outcome> {
    let schema = tool.input_schema().filter(|_| !tool.is_resource())?;
    coerce_arguments(schema, args);
    let problems: Vec<String> = check_arguments(schema, args)
        .iter()
        .map(ToString::to_string)
        .collect();
    if problems.is_empty() {
        return None;
    }
    let text = render::invalid_arguments(&tool.name, &problems, schema);
    Some(
        Outcome::error("call", ErrorCode::InvalidArgs, text)
            .with("server", tool.server.clone())
            .with("tool", tool.name.clone())
            .with("problems", problems),
    )
}

/// `args` as an object: given as one, or as a JSON string encoding one.
fn parse_args(args: Option<&Value>) -> Result<Map<String, Value>, Outcome> {
    let invalid = |why: String| Outcome::error("call", ErrorCode::InvalidArgs, why);
    match args {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Map::new()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(invalid(format!(
                "`args` must be a JSON object, got {}.",
                value_kind(&other)
            ))),
            Err(e) => Err(invalid(format!("`args` is not valid JSON: {e}."))),
        },
        Some(other) => Err(invalid(format!(
            "`args` must be an object, got {}.",
            value_kind(other)
        ))),
    }
}
