//! Calling a tool (or reading a resource tool).

use super::Tool;
use crate::adapter::details::*;
use crate::adapter::reach::Need;
use crate::adapter::sign_in::SignIns;
use crate::adapter::Mode;
use crate::adapter::{caller, ErrorCode, Outcome, DEFAULT_REQUEST_TIMEOUT};
use crate::approval::Subject;
use crate::catalog::{pi_tool_name, ToolInfo};
use crate::config::{tool_pattern_matches, DEFAULT_CALL_TIMEOUT};
use crate::events::Event;
use crate::render;
use crate::resources;
use crate::validate::{check_arguments, coerce_arguments, without_null_optionals};
use pi_mcp_connection::pool::{Connection, ProgressSink, RequestError, RequestOptions};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What follows a call that went before the server's listing.
enum AfterEarly {
    /// Its outcome stands.
    Stands,
    /// The answer is this instead.
    Instead(Outcome),
    /// Call the tool again as the server lists it now.
    Again(ToolInfo),
}

#[derive(Clone, Default)]
pub struct CallOptions {
    pub server: Option<String>,
    /// Lets `cancel(call_id)` abort the call.
    pub call_id: Option<String>,
    pub timeout_ms: Option<u64>,
    pub on_progress: Option<ProgressSink>,
}

/// How long a server that answered a call before it was listed must be idle before it is.
const LIST_WHEN_IDLE: Duration = Duration::from_millis(200);

impl Tool<'_> {
    /// Calls a tool (or reads a resource tool). Its arguments are checked against the known
    /// schema before any server starts; a server started just now gets the call at once when
    /// the tool is known from the cache, and is listed once it is idle. A server that wants a
    /// sign-in gets one first under `autoAuth`. Its details say how long it took (`elapsedMs`).
    pub async fn call(&self, name: &str, args: Map<String, Value>, opts: CallOptions) -> Outcome {
        // Only a sign-in by itself calls again: without one, the arguments need no copy. A call
        // made again after a sign-in is not asked about again.
        let approved = AtomicBool::new(false);
        let started = Instant::now();
        let outcome = if self.kernel.sign_in.may_retry() {
            SignIns::from(self.kernel)
                .with_sign_in(|| self.call_once(name, args.clone(), &opts, &approved))
                .await
        } else {
            self.call_once(name, args, &opts, &approved).await
        };
        let mut outcome = outcome;
        outcome.details.elapsed_ms =
            Some((started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0);
        outcome
    }

    async fn call_once(
        &self,
        name: &str,
        args: Map<String, Value>,
        opts: &CallOptions,
        approved: &AtomicBool,
    ) -> Outcome {
        let tool = match self.resolve(Mode::Call, name, opts.server.as_deref()).await {
            Ok(tool) => tool,
            Err(outcome) => return outcome,
        };
        if let Some(why) = self.not_in_this_run(&tool) {
            let text = render::not_in_this_run(&tool.name, &why);
            return Outcome::error(Mode::Call, ErrorCode::ToolExcluded, text)
                .with_tool(tool.name.clone());
        }
        // Checked against the known schema before any server starts: a wrong call costs nothing.
        let args = match checked_arguments(&tool, args) {
            Ok(args) => args,
            Err(outcome) => return outcome,
        };
        if !approved.load(Ordering::Relaxed) {
            if let Err(outcome) = self
                .kernel
                .approved(Mode::Call, Subject::Tool(&tool), &args, None)
                .await
            {
                return outcome;
            }
            approved.store(true, Ordering::Relaxed);
        }
        let cancel = self.kernel.closing.child_token();
        let _cancellable = opts
            .call_id
            .as_deref()
            .and_then(|id| self.kernel.servers.call_started(&tool.server, id, &cancel));
        let (conn, tool) = match self.reach_for_call(tool).await {
            Ok(reached) => reached,
            Err(outcome) => return outcome,
        };
        // A call before the server's listing may be sent again once it is listed.
        let again = (!conn.is_listed()).then(|| args.as_object().cloned().unwrap_or_default());
        let app_ended = self.kernel.app_call_began(&tool, &args);
        let result = self.send(&conn, &tool, args, opts, cancel.clone()).await;
        if let Some(ended) = &app_ended {
            ended(&tool, &result);
        }
        if let (Err(RequestError::NeedsAuth(need)), Some(server)) =
            (&result, self.kernel.server(&tool.server))
        {
            // The credentials were refused mid-session: the fix names the sign-in to run.
            let why = self.kernel.refused(server, need.clone());
            return why
                .outcome(Mode::Call, &tool.server)
                .with_tool(tool.name.as_str());
        }
        let Some(args) = again else {
            return self.call_outcome(&tool, result);
        };
        match self.after_early_call(&conn, &tool, &result).await {
            AfterEarly::Stands => self.call_outcome(&tool, result),
            AfterEarly::Instead(outcome) => outcome,
            AfterEarly::Again(fresh) => {
                let args = match checked_arguments(&fresh, args) {
                    Ok(args) => args,
                    Err(outcome) => return outcome,
                };
                let result = self.send(&conn, &fresh, args, opts, cancel).await;
                // The app saw the first answer: it gets this one too.
                if let Some(ended) = &app_ended {
                    ended(&fresh, &result);
                }
                self.call_outcome(&fresh, result)
            }
        }
    }

    /// Why Pi's command line leaves `tool` out of this run (`--tools`, `--exclude-tools`), if it
    /// does; matched against Pi's name of the tool, as Pi matches its own MCP tools.
    fn not_in_this_run(&self, tool: &ToolInfo) -> Option<String> {
        if self.kernel.run_tools.allow.is_none() && self.kernel.run_tools.deny.is_empty() {
            return None;
        }
        let name = pi_tool_name(&tool.server, &tool.original, false);
        let matched = |patterns: &[String]| patterns.iter().any(|p| tool_pattern_matches(p, &name));
        if let Some(allow) = self
            .kernel
            .run_tools
            .allow
            .as_deref()
            .filter(|a| !matched(a))
        {
            return Some(format!(
                "`--tools {}` does not name {name}",
                allow.join(",")
            ));
        }
        matched(&self.kernel.run_tools.deny).then(|| {
            format!(
                "`--exclude-tools {}` excludes {name}",
                self.kernel.run_tools.deny.join(",")
            )
        })
    }

    /// The connection for a call of `tool`, and the tool as the server lists it by then.
    async fn reach_for_call(&self, tool: ToolInfo) -> Result<(Arc<Connection>, ToolInfo), Outcome> {
        let reached = self
            .kernel
            .ready(&tool.server, Need::Handshake)
            .await
            .map_err(|why| why.outcome(Mode::Call, &tool.server))?;
        self.kernel.servers.mark_used(&tool.server);
        // A new listing may have changed the catalog: call what the server lists now.
        let tool = match reached.refreshed {
            true => {
                self.resolve(Mode::Call, &tool.name, Some(&tool.server))
                    .await?
            }
            false => tool,
        };
        Ok((reached.conn, tool))
    }

    /// Sends the call (`tools/call`, or `resources/read` for a resource tool).
    pub(crate) async fn send(
        &self,
        conn: &Connection,
        tool: &ToolInfo,
        args: Value,
        opts: &CallOptions,
        cancel: CancellationToken,
    ) -> Result<Value, RequestError> {
        let timeout = match opts.timeout_ms {
            Some(ms) => Duration::from_millis(ms),
            None => self
                .kernel
                .server(&tool.server)
                .map_or(DEFAULT_REQUEST_TIMEOUT, |s| self.kernel.request_timeout(s)),
        };
        let (method, params) = match (&tool.resource_uri, &tool.resource_template) {
            (Some(uri), _) => ("resources/read", json!({ "uri": uri })),
            (None, Some(template)) => {
                let vars = args.as_object().cloned().unwrap_or_default();
                let uri = resources::expand(template, &vars).map_err(RequestError::Protocol)?;
                ("resources/read", json!({ "uri": uri }))
            }
            (None, None) => (
                "tools/call",
                json!({ "name": tool.original, "arguments": args }),
            ),
        };
        let on_progress = opts.on_progress.clone().or_else(|| {
            let call_id = opts.call_id.clone()?;
            Some(self.progress_events(call_id, &tool.server, &tool.name))
        });
        let request = RequestOptions {
            timeout,
            cancel,
            on_progress,
            caller: Some(caller(opts.call_id.as_deref())),
            total: self
                .kernel
                .server(&tool.server)
                .map_or(Some(DEFAULT_CALL_TIMEOUT), |s| {
                    self.kernel.config.client_settings(s).call_timeout()
                }),
            tool: tool.definition.clone(),
        };
        conn.request(method, params, request).await
    }

    /// After a call that went before the server's listing: the listing follows once the server
    /// is idle, at once when the server refused the call (the cache may know a tool the server
    /// no longer has; then that is the answer). A call whose headers came from a definition the
    /// server no longer has (see [`RequestError::stale_headers`]) goes again as it lists the tool
    /// now.
    async fn after_early_call(
        &self,
        conn: &Arc<Connection>,
        tool: &ToolInfo,
        result: &Result<Value, RequestError>,
    ) -> AfterEarly {
        let stale = matches!(result, Err(e) if e.stale_headers());
        let refused = match result {
            Ok(raw) => raw.get("isError").and_then(Value::as_bool) == Some(true),
            Err(e) => matches!(e, RequestError::Mcp { .. }) || stale,
        };
        if !refused {
            self.list_when_idle(conn);
            return AfterEarly::Stands;
        }
        if self.kernel.listed_on(conn.clone()).await.is_none() {
            return AfterEarly::Stands;
        }
        match (
            self.resolve(Mode::Call, &tool.name, Some(&tool.server))
                .await,
            stale,
        ) {
            (Ok(fresh), true) if fresh.definition != tool.definition => AfterEarly::Again(fresh),
            // Gone: said so, unless the refusal of its headers says more.
            (Err(outcome), false) => AfterEarly::Instead(outcome),
            _ => AfterEarly::Stands,
        }
    }

    /// The call's answer: the result rendered and guarded, or why it failed.
    fn call_outcome(&self, tool: &ToolInfo, result: Result<Value, RequestError>) -> Outcome {
        let outcome = match result {
            Ok(raw) => {
                let rendered = match tool.resource_uri.is_some() || tool.resource_template.is_some()
                {
                    true => render::Rendered {
                        content: resources::read_result(&raw),
                        is_error: false,
                    },
                    false => render::call_result_of(Some(&tool.server), &raw),
                };
                let mut outcome = Outcome::text(Mode::Call, "");
                outcome.content = rendered.content;
                if rendered.is_error {
                    outcome.fail(ErrorCode::ToolError);
                }
                self.kernel.within_guard(outcome, &tool.name)
            }
            Err(RequestError::Aborted) => Outcome::error(
                Mode::Call,
                ErrorCode::Aborted,
                format!(
                    "Call to {} was aborted; the server was told to stop.",
                    tool.name
                ),
            ),
            Err(e) => {
                let mut text = format!("Failed to call {}: {e}", tool.name);
                if let Some(schema) = tool.input_schema() {
                    text.push_str(&format!(
                        "\n\nExpected parameters:\n{}",
                        render::parameters(schema)
                    ));
                }
                Outcome::error(Mode::Call, ErrorCode::from(&e), text)
            }
        };
        outcome
            .with_server(tool.server.clone())
            .with_tool(tool.name.clone())
    }

    /// Takes the listing of `conn` in the background once it has been idle for a moment, so that
    /// it holds up no call (a call of a cached tool went before it).
    fn list_when_idle(&self, conn: &Arc<Connection>) {
        let (this, conn) = (Arc::downgrade(self.kernel), conn.clone());
        let closing = self.kernel.closing.clone();
        self.kernel.tasks.spawn(async move {
            tokio::select! {
                _ = conn.until_idle(LIST_WHEN_IDLE) => {}
                _ = closing.cancelled() => return,
            }
            if let Some(this) = this.upgrade().filter(|_| conn.is_alive()) {
                let _ = this.listed_on(conn).await;
            }
        });
    }
}

impl Tool<'_> {
    /// Progress of call `call_id` reported as `progress` events.
    fn progress_events(&self, call_id: String, server: &str, tool: &str) -> ProgressSink {
        let (this, server, tool) = (
            Arc::downgrade(self.kernel),
            server.to_string(),
            tool.to_string(),
        );
        Arc::new(move |p| {
            if let Some(this) = this.upgrade() {
                let text = render::progress(&tool, p.progress, p.total, p.message.as_deref());
                this.events.emit(Event::Progress {
                    call_id: call_id.clone(),
                    server: server.clone(),
                    tool: tool.clone(),
                    progress: p.progress,
                    total: p.total,
                    message: p.message.as_deref().map(pi_mcp_connection::clean::one_line),
                    text,
                });
            }
        })
    }
}

/// `args` as they go to the server: without the optional ones given as `null`, values of the
/// wrong type that convert safely to the type the schema demands (`"2"` for a number)
/// converted; or the refusal to send them when they still do not fit the tool's input schema.
fn checked_arguments(tool: &ToolInfo, args: Map<String, Value>) -> Result<Value, Outcome> {
    let Some(schema) = tool.input_schema() else {
        return Ok(Value::Object(args));
    };
    let mut args = without_null_optionals(schema, args);
    if tool.is_resource() {
        return Ok(Value::Object(args));
    }
    coerce_arguments(schema, &mut args);
    let args = Value::Object(args);
    // They quote the schema's names and values, and what the model sent.
    let problems: Vec<String> = check_arguments(schema, &args)
        .iter()
        .map(|problem| pi_mcp_connection::clean::line(&problem.to_string()).into_owned())
        .collect();
    if problems.is_empty() {
        return Ok(args);
    }
    let text = render::invalid_arguments(&tool.name, &problems, schema);
    Err(Outcome::error(Mode::Call, ErrorCode::InvalidArgs, text)
        .with_server(tool.server.clone())
        .with_tool(tool.name.clone())
        .with_part(CallDetails { problems }))
}
