//! Questions a server asks as tasks (2025-11-25 task-augmented `sampling/createMessage` and
//! `elicitation/create`): the client answers at once with a `CreateTaskResult`, asks the user or
//! the model in the background exactly as for a plain request, and answers the server's
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` from this table, its one owner.
//!
//! Bounded: at most [`Limits::max_tasks`] per connection (finished ones make room first), each
//! lives for its TTL (the server's, within [`Limits::max_ttl`]) and is then dropped with its
//! result, a result is dropped once fetched, and closing the connection ends them all. A task
//! never reports `input_required`: that status asks the server (the requestor) for input, and
//! what these tasks wait for is the user or the model.

pub mod wire;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The `_meta` key that ties a message to its task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How the table is bounded.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Tasks kept per connection, finished ones included.
    pub max_tasks: usize,
    /// A task's lifetime when the server asks for none.
    pub default_ttl: Duration,
    /// The longest lifetime granted, whatever the server asks for.
    pub max_ttl: Duration,
    /// The polling pace suggested to the server.
    pub poll_interval: Duration,
    /// Tasks per `tasks/list` page.
    pub page: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tasks: 32,
            default_ttl: Duration::from_secs(10 * 60),
            max_ttl: Duration::from_secs(60 * 60),
            poll_interval: Duration::from_secs(1),
            page: 50,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn terminal(self) -> bool {
        self != Status::Working
    }
}

/// Why the table could not do what the server asked.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskError {
    /// No such task: never created here, or dropped after its TTL.
    NotFound(String),
    /// `tasks/cancel` of a task that has already ended.
    Ended { id: String, status: Status },
    /// Its result was fetched already (and dropped then).
    Fetched(String),
    /// It was cancelled, so there is no result.
    NoResult(String),
    /// Every place in the table holds a running task.
    Full(usize),
    /// A `tasks/list` cursor this table did not give out.
    BadCursor(String),
    /// The connection is closing.
    Closed,
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskError::NotFound(id) => write!(
                f,
                "no task {id}: the client never created it, or dropped it when its ttl ran out"
            ),
            TaskError::Ended { id, status } => write!(
                f,
                "cannot cancel task {id}: it has already ended ({})",
                status.as_str()
            ),
            TaskError::Fetched(id) => write!(
                f,
                "the result of task {id} was fetched already; the client keeps it no longer"
            ),
            TaskError::NoResult(id) => write!(f, "task {id} was cancelled: it has no result"),
            TaskError::Full(max) => write!(
                f,
                "the client runs {max} tasks for this server already; it takes no more until one ends"
            ),
            TaskError::BadCursor(cursor) => write!(f, "unknown tasks/list cursor \"{cursor}\""),
            TaskError::Closed => write!(f, "the connection is closing"),
        }
    }
}

impl From<TaskError> for ErrorData {
    fn from(error: TaskError) -> ErrorData {
        let code = match error {
            TaskError::Full(_) | TaskError::Closed => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        };
        ErrorData::new(code, error.to_string(), None)
    }
}

/// Sends `notifications/tasks/status` with the task's state.
pub type StatusSink = Arc<dyn Fn(Value) + Send + Sync>;

/// The work of one task: given the token that stops it, the answer of the plain request (it
/// must end soon once that token is cancelled).
pub type Job =
    Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, Result<Value, ErrorData>> + Send>;

struct Entry {
    /// Creation order (for `tasks/list`).
    seq: u64,
    status: Status,
    message: Option<String>,
    created: SystemTime,
    updated: SystemTime,
    ttl: Duration,
    /// The answer until it is fetched.
    outcome: Option<Result<Value, ErrorData>>,
    fetched: bool,
    /// Cancels the running job.
    stop: CancellationToken,
    /// Cancelled when the entry leaves the table (made room for another).
    gone: CancellationToken,
    /// Tells `tasks/result` waiters that the task has ended.
    ended: watch::Sender<bool>,
    notify: StatusSink,
}

impl Entry {
    fn json(&self, id: &str, poll: Duration) -> Value {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(id));
        task.insert("status".into(), json!(self.status.as_str()));
        if let Some(message) = &self.message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert(
            "createdAt".into(),
            json!(crate::server_log::iso_time(self.created)),
        );
        task.insert(
            "lastUpdatedAt".into(),
            json!(crate::server_log::iso_time(self.updated)),
        );
        task.insert("ttl".into(), json!(self.ttl.as_millis() as u64));
        if !self.status.terminal() {
            task.insert("pollInterval".into(), json!(poll.as_millis() as u64));
        }
        Value::Object(task)
    }
}

#[derive(Default)]
struct Table {
    tasks: HashMap<String, Entry>,
    next_seq: u64,
}

/// One connection's tasks.
pub struct ClientTasks {
    table: Mutex<Table>,
    limits: Limits,
    /// Cancelled when the connection ends: every task stops and is dropped.
    closed: CancellationToken,
}

impl ClientTasks {
    pub fn new(limits: Limits, closed: CancellationToken) -> Arc<ClientTasks> {
        Arc::new(ClientTasks {
            table: Mutex::default(),
            limits,
            closed,
        })
    }

    /// Creates a task running `job` (its status message `doing` while it runs) and returns the
    /// `CreateTaskResult`. `ttl_ms`: the lifetime the server asked for.
    pub fn start(
        self: &Arc<Self>,
        ttl_ms: Option<u64>,
        doing: &str,
        job: Job,
        notify: StatusSink,
    ) -> Result<Value, TaskError> {
        if self.closed.is_cancelled() {
            return Err(TaskError::Closed);
        }
        let ttl = ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(self.limits.default_ttl)
            .min(self.limits.max_ttl);
        let id = new_id();
        let stop = self.closed.child_token();
        let gone = CancellationToken::new();
        let (ended, _) = watch::channel(false);
        let created = {
            let mut table = self.table.lock();
            self.make_room(&mut table)?;
            let now = SystemTime::now();
            let entry = Entry {
                seq: table.next_seq,
                status: Status::Working,
                message: Some(doing.to_string()),
                created: now,
                updated: now,
                ttl,
                outcome: None,
                fetched: false,
                stop: stop.clone(),
                gone: gone.clone(),
                ended,
                notify,
            };
            table.next_seq += 1;
            let created = entry.json(&id, self.limits.poll_interval);
            table.tasks.insert(id.clone(), entry);
            created
        };
        let this = self.clone();
        tokio::spawn(async move {
            let expiry = tokio::time::sleep(ttl);
            tokio::pin!(expiry);
            // The job ends soon after `stop` (a question it asks is withdrawn, the dialog
            // closed): it is never dropped half-way, leaving a dialog open.
            let work = job(stop.clone());
            tokio::pin!(work);
            let outcome = tokio::select! {
                outcome = &mut work => outcome,
                _ = &mut expiry => {
                    stop.cancel();
                    work.await
                }
            };
            // Ignored if the task was cancelled meanwhile.
            this.finish(&id, outcome);
            tokio::select! {
                _ = &mut expiry => {}
                _ = this.closed.cancelled() => {}
                _ = gone.cancelled() => return,
            }
            this.drop_task(&id);
        });
        Ok(json!({ "task": created }))
    }

    /// Drops finished tasks (those whose result was fetched first, then the oldest) until
    /// there is room for one more.
    fn make_room(&self, table: &mut Table) -> Result<(), TaskError> {
        while table.tasks.len() >= self.limits.max_tasks {
            let victim = table
                .tasks
                .iter()
                .filter(|(_, e)| e.status.terminal())
                .min_by_key(|(_, e)| (!e.fetched, e.seq))
                .map(|(id, _)| id.clone());
            match victim {
                Some(id) => {
                    if let Some(entry) = table.tasks.remove(&id) {
                        entry.gone.cancel();
                    }
                }
                None => return Err(TaskError::Full(self.limits.max_tasks)),
            }
        }
        Ok(())
    }

    fn finish(&self, id: &str, outcome: Result<Value, ErrorData>) {
        let mut table = self.table.lock();
        let Some(entry) = table.tasks.get_mut(id) else {
            return;
        };
        if entry.status.terminal() {
            return;
        }
        (entry.status, entry.message) = match &outcome {
            Ok(_) => (Status::Completed, None),
            Err(e) => (Status::Failed, Some(e.message.to_string())),
        };
        entry.outcome = Some(outcome);
        self.changed(id, entry);
    }

    /// After a status change: the time, the waiters, the server.
    fn changed(&self, id: &str, entry: &mut Entry) {
        entry.updated = SystemTime::now();
        entry.ended.send_replace(entry.status.terminal());
        (entry.notify)(entry.json(id, self.limits.poll_interval));
    }

    fn drop_task(&self, id: &str) {
        if let Some(entry) = self.table.lock().tasks.remove(id) {
            entry.stop.cancel();
        }
    }

    /// `tasks/get`.
    pub fn get(&self, id: &str) -> Result<Value, TaskError> {
        let table = self.table.lock();
        let entry = table
            .tasks
            .get(id)
            .ok_or_else(|| TaskError::NotFound(id.into()))?;
        Ok(entry.json(id, self.limits.poll_interval))
    }

    /// `tasks/result`: waits for the task to end, then hands over its result (or its error),
    /// which the table drops.
    pub async fn result(&self, id: &str) -> Result<Result<Value, ErrorData>, TaskError> {
        let mut ended = {
            let table = self.table.lock();
            let entry = table
                .tasks
                .get(id)
                .ok_or_else(|| TaskError::NotFound(id.into()))?;
            entry.ended.subscribe()
        };
        tokio::select! {
            // The sender goes with the task (dropped after its TTL): then it is not found.
            _ = ended.wait_for(|ended| *ended) => {}
            _ = self.closed.cancelled() => {}
        }
        if self.closed.is_cancelled() {
            return Err(TaskError::Closed);
        }
        let mut table = self.table.lock();
        let entry = table
            .tasks
            .get_mut(id)
            .ok_or_else(|| TaskError::NotFound(id.into()))?;
        if entry.status == Status::Cancelled {
            return Err(TaskError::NoResult(id.into()));
        }
        let outcome = entry
            .outcome
            .take()
            .ok_or_else(|| TaskError::Fetched(id.into()))?;
        entry.fetched = true;
        Ok(outcome.map(|result| with_related_task(result, id)))
    }

    /// `tasks/list`, oldest first; `cursor` is where the previous page ended.
    pub fn list(&self, cursor: Option<&str>) -> Result<Value, TaskError> {
        let from = match cursor {
            None => 0,
            Some(c) => c
                .parse::<u64>()
                .map_err(|_| TaskError::BadCursor(c.into()))?,
        };
        let table = self.table.lock();
        if from > table.next_seq {
            return Err(TaskError::BadCursor(from.to_string()));
        }
        let mut entries: Vec<(&String, &Entry)> =
            table.tasks.iter().filter(|(_, e)| e.seq >= from).collect();
        entries.sort_by_key(|(_, e)| e.seq);
        let page = self.limits.page;
        let tasks: Vec<Value> = entries
            .iter()
            .take(page)
            .map(|(id, e)| e.json(id, self.limits.poll_interval))
            .collect();
        let mut result = json!({ "tasks": tasks });
        if let Some((_, next)) = entries.get(page) {
            result["nextCursor"] = json!(next.seq.to_string());
        }
        Ok(result)
    }

    /// `tasks/cancel`: stops the task (a question it asks is withdrawn) and marks it cancelled.
    pub fn cancel(&self, id: &str) -> Result<Value, TaskError> {
        let mut table = self.table.lock();
        let entry = table
            .tasks
            .get_mut(id)
            .ok_or_else(|| TaskError::NotFound(id.into()))?;
        if entry.status.terminal() {
            return Err(TaskError::Ended {
                id: id.into(),
                status: entry.status,
            });
        }
        entry.stop.cancel();
        entry.status = Status::Cancelled;
        entry.message = Some("The task was cancelled by request.".into());
        self.changed(id, entry);
        Ok(entry.json(id, self.limits.poll_interval))
    }

    /// How many tasks the table holds (finished ones included).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table.lock().tasks.len()
    }
}

/// `result` with `_meta` naming its task, as `tasks/result` must.
fn with_related_task(mut result: Value, id: &str) -> Value {
    if let Value::Object(fields) = &mut result {
        let meta = fields
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
        }
    }
    result
}

/// A task id nobody can guess (another server's tasks are not this one's business).
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::getrandom(&mut bytes).is_err() {
        // Unique still: a process-wide counter with the time.
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes[..8].copy_from_slice(&nanos.to_le_bytes());
        bytes[8..].copy_from_slice(&NEXT.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
