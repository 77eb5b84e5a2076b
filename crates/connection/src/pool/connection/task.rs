//! A request the server runs as a task: polled with `tasks/get` at the server's pace until it
//! ends, its status messages reported as progress, questions it raises answered (2025-11-25:
//! through `tasks/result`, where the server sends them; 2026-07-28 tasks extension: as
//! `inputRequests` answered with `tasks/update`), cancelled with `tasks/cancel` when the caller
//! gives up or the call's time is over. No per-request timeout ends a task that keeps working.

use super::{Connection, RequestOptions};
use crate::pool::client_side::PendingRequest;
use crate::pool::handler::Progress;
use crate::pool::RequestError;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Polls no faster than this, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(100);
/// Polls at least this often.
const MAX_POLL: Duration = Duration::from_secs(30);
/// Without a suggestion from the server.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// A task the server keeps in `input_required` without new questions is asked again this often.
const MAX_ROUNDS_WITHOUT_PROGRESS: usize = 100;

/// A task the server created for a request.
pub(super) struct Task {
    id: String,
    poll: Duration,
    /// The 2026-07-28 extension (results and questions come with `tasks/get`).
    modern: bool,
    status_message: Option<String>,
}

impl Task {
    /// The task a result announces: `{ task: { taskId, … } }` (2025-11-25) or `{ resultType:
    /// "task", taskId, … }` (2026-07-28).
    pub(super) fn created(result: &Value) -> Option<Task> {
        let (fields, modern) = announced(result)?;
        Some(Task {
            id: announced_id(fields)?.to_string(),
            poll: poll_interval(fields).unwrap_or(DEFAULT_POLL),
            modern,
            status_message: fields
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// The fields of the task a result announces, and whether they are in the 2026-07-28 form.
fn announced(result: &Value) -> Option<(&Value, bool)> {
    match result.get("resultType").and_then(Value::as_str) {
        Some("task") => Some((result, true)),
        _ => Some((result.get("task").filter(|t| t.is_object())?, false)),
    }
}

fn announced_id(fields: &Value) -> Option<&str> {
    fields.get("taskId")?.as_str()
}

/// The id of the task a result announces, in either revision's form (see [`Task::created`]).
pub fn created_task_id(result: &Value) -> Option<&str> {
    announced_id(announced(result)?.0)
}

/// Whether a `tools/call` result is the refusal of a tool that must run as a task (2025-11-25:
/// `-32601`, which some servers return as an error result).
pub(super) fn needs_task(result: &Value) -> bool {
    let text: String = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    result.get("isError").and_then(Value::as_bool) == Some(true)
        && text.contains("-32601")
        && text.contains("task augmentation")
}

/// The params with the task augmentation of 2025-11-25.
pub(super) fn as_task(params: Value, ttl: Duration) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    params.insert("task".into(), json!({ "ttl": ttl.as_millis() as u64 }));
    Value::Object(params)
}

fn poll_interval(fields: &Value) -> Option<Duration> {
    let ms = fields
        .get("pollIntervalMs")
        .or_else(|| fields.get("pollInterval"))
        .and_then(Value::as_u64)?;
    Some(Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL))
}

impl Connection {
    /// Follows `task` to its end and returns what the original request would have returned;
    /// a task given up on (aborted, out of time, stuck) is cancelled at the server.
    pub(super) async fn follow_task(
        &self,
        mut task: Task,
        opts: &RequestOptions,
        pending: &Arc<PendingRequest>,
        deadline: Option<Instant>,
    ) -> Result<Value, RequestError> {
        let outcome = self.poll_task(&mut task, opts, pending, deadline).await;
        if let Err(
            RequestError::Aborted | RequestError::CallTimeout(_) | RequestError::Protocol(_),
        ) = &outcome
        {
            self.cancel_task(&task).await;
        }
        outcome
    }

    async fn poll_task(
        &self,
        task: &mut Task,
        opts: &RequestOptions,
        pending: &Arc<PendingRequest>,
        deadline: Option<Instant>,
    ) -> Result<Value, RequestError> {
        let mut quiet_rounds = 0;
        if let Some(first) = task.status_message.clone() {
            Self::report_status(first, opts);
        }
        loop {
            let wake = Instant::now() + task.poll;
            tokio::select! {
                _ = tokio::time::sleep_until(deadline.map_or(wake, |d| d.min(wake))) => {}
                _ = opts.cancel.cancelled() => return Err(RequestError::Aborted),
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RequestError::CallTimeout(opts.total.unwrap_or_default()));
            }
            let state = self
                .send(
                    "tasks/get",
                    json!({ "taskId": task.id }),
                    opts,
                    pending,
                    deadline,
                )
                .await?
                .result;
            if let Some(poll) = poll_interval(&state) {
                task.poll = poll;
            }
            self.report(task, &state, opts);
            match state
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("working")
            {
                "working" => {}
                "input_required" if task.modern => {
                    let asked = state.get("inputRequests").and_then(Value::as_object);
                    match asked.filter(|a| !a.is_empty()) {
                        Some(asked) => {
                            quiet_rounds = 0;
                            let answers = self
                                .answer_all(asked.clone(), opts, pending, deadline)
                                .await?;
                            let update = json!({ "taskId": task.id, "inputResponses": answers });
                            self.send("tasks/update", update, opts, pending, deadline)
                                .await?;
                        }
                        None if quiet_rounds >= MAX_ROUNDS_WITHOUT_PROGRESS => {
                            return Err(RequestError::Protocol(
                                "the task kept asking for input without saying what".into(),
                            ));
                        }
                        None => quiet_rounds += 1,
                    }
                }
                // The server sends its questions while `tasks/result` is open, and answers it
                // when the task ends. If that takes longer than a request may wait, polling
                // goes on.
                "input_required" => {
                    let asked = json!({ "taskId": task.id });
                    match self
                        .send("tasks/result", asked, opts, pending, deadline)
                        .await
                    {
                        Ok(sent) => return Ok(sent.result),
                        Err(RequestError::Timeout(_)) => {}
                        Err(other) => return Err(other),
                    }
                }
                "completed" if task.modern && state.get("result").is_some() => {
                    return Ok(state["result"].clone());
                }
                "failed" if task.modern && state.get("error").is_some() => {
                    let error = &state["error"];
                    return Err(RequestError::Mcp {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0) as i32,
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("the task failed")
                            .to_string(),
                    });
                }
                "completed" | "failed" => {
                    let asked = json!({ "taskId": task.id });
                    return Ok(self
                        .send("tasks/result", asked, opts, pending, deadline)
                        .await?
                        .result);
                }
                "cancelled" => {
                    return Err(RequestError::Protocol(format!(
                        "the server cancelled the task{}",
                        task.status_message
                            .as_deref()
                            .map_or(String::new(), |m| format!(" ({m})"))
                    )))
                }
                other => {
                    return Err(RequestError::Protocol(format!(
                        "the task has the unknown status \"{other}\""
                    )))
                }
            }
        }
    }

    /// A new status message is progress for whoever waits on the call.
    fn report(&self, task: &mut Task, state: &Value, opts: &RequestOptions) {
        let message = state
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(message) = message.filter(|m| task.status_message.as_ref() != Some(m)) {
            task.status_message = Some(message.clone());
            Self::report_status(message, opts);
        }
    }

    fn report_status(message: String, opts: &RequestOptions) {
        if let Some(sink) = &opts.on_progress {
            sink(Progress {
                progress: 0.0,
                total: None,
                message: Some(message),
            });
        }
    }

    /// Tells the server the task's result is no longer wanted (briefly: it may be gone).
    async fn cancel_task(&self, task: &Task) {
        // Boxed: a request may follow a task, which may cancel one with a request.
        let cancelled = Box::pin(self.request(
            "tasks/cancel",
            json!({ "taskId": task.id }),
            self.plain(Duration::from_secs(2)),
        ));
        let _ = tokio::time::timeout(Duration::from_secs(2), cancelled).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_of_both_revisions_are_recognized() {
        let legacy =
            json!({ "task": { "taskId": "t1", "status": "working", "pollInterval": 1500 } });
        let task = Task::created(&legacy).unwrap();
        assert_eq!(
            (task.id.as_str(), task.poll, task.modern),
            ("t1", Duration::from_millis(1500), false)
        );
        let modern = json!({ "resultType": "task", "taskId": "t2", "status": "working", "pollIntervalMs": 5 });
        let task = Task::created(&modern).unwrap();
        assert_eq!(
            (task.id.as_str(), task.poll, task.modern),
            ("t2", MIN_POLL, true)
        );
        assert!(Task::created(&json!({ "content": [] })).is_none());
        assert!(Task::created(&json!({ "task": "no" })).is_none());
    }

    #[test]
    fn a_refusal_for_want_of_a_task_is_recognized() {
        let refused = json!({ "isError": true, "content": [{ "type": "text", "text": "MCP error -32601: Tool x requires task augmentation (taskSupport: 'required')" }] });
        assert!(needs_task(&refused));
        assert!(!needs_task(
            &json!({ "isError": true, "content": [{ "type": "text", "text": "MCP error -32601: nope" }] })
        ));
        assert_eq!(
            as_task(json!({ "name": "x" }), Duration::from_secs(60)),
            json!({ "name": "x", "task": { "ttl": 60000 } })
        );
    }
}
