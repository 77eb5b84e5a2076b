//! The session's answers to what servers ask: roots are the session's directory, log messages go
//! to `<agentDir>/mcp.log`, and questions for a person or a model go to the front end (Pi's
//! dialogs and model, a terminal) when one is attached; without one nobody can be asked. What
//! the front end gets is written here (`elicitation::present`, `approval::present`, `sampling`),
//! so it only shows dialogs and runs the model. One dialog is open at a time (a form, a URL, a sampling
//! approval); the questions after it wait their turn, in order, and one withdrawn while waiting
//! is never shown. The credentials of Pi's providers (`auth.provider`) come from the session too,
//! when Pi gives them.

use crate::approval::present::{ApprovalAnswer, Question as ApprovalQuestion};
use crate::approval::Answer;
use crate::sampling;
use futures::future::BoxFuture;
use parking_lot::{Mutex, RwLock};
use pi_mcp_connection::clean;
use pi_mcp_connection::elicitation::{present, Form};
use pi_mcp_connection::pool::{Asker, Host, Question, Reply, Root};
use pi_mcp_connection::secret::Secret;
use pi_mcp_connection::server_log::{LogMessage, ServerLog};
use pi_mcp_connection::trace::Trace;
use pi_mcp_connection::tracing_log;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Dialogs open at once in a session: a person answers one question at a time.
pub const MAX_OPEN_DIALOGS: usize = 1;

/// Where a person or a model answers: implemented by the Pi extension and the command line.
pub trait FrontEnd: Send + Sync + 'static {
    /// Shows a question; resolves with the answer, or `None` when nobody can answer here.
    fn elicit(&self, question: present::Question) -> BoxFuture<'static, Option<Reply>>;
    /// Runs a sampling request; resolves with Pi's assistant message or why the model did not
    /// run, or `None` when it cannot run models.
    fn sample(&self, request: sampling::Request) -> BoxFuture<'static, Option<sampling::Answer>>;
    /// Question or request `id` no longer needs an answer: close its dialog.
    fn withdraw(&self, id: u64);
    /// Asks whether a tool may run; resolves with the option picked, or `None` when nobody can
    /// answer here (the default).
    fn approve(&self, _question: ApprovalQuestion) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        Box::pin(async { None })
    }
}

/// How much longer than the front end's own timer an approval question may stay open before it
/// is withdrawn (a front end that never answers).
const APPROVAL_SLACK: Duration = Duration::from_secs(2);

/// Asks Pi for the credential of one of its providers; `None` when it has none.
pub type CredentialSource = Arc<dyn Fn(String) -> BoxFuture<'static, Option<Secret>> + Send + Sync>;

pub struct SessionHost {
    cwd: RwLock<PathBuf>,
    log: ServerLog,
    front_end: RwLock<Option<Arc<dyn FrontEnd>>>,
    credentials: RwLock<Option<CredentialSource>>,
    /// Servers whose sampling requests run without asking the user (`samplingAutoApprove`).
    auto_approve: HashSet<String>,
    /// The forms being filled in, by question id.
    open: Mutex<HashMap<u64, Form>>,
    next_id: AtomicU64,
    /// Turns at the dialogs, taken in order.
    dialogs: Arc<Semaphore>,
    /// The protocol trace, and the servers it traces (`trace`).
    trace: OnceLock<(Arc<Trace>, HashSet<String>)>,
}

impl SessionHost {
    /// The session's host, and the same host as the pool holds it (what servers ask); the
    /// gateway's own events go to its `mcp.log` from now on.
    pub fn open(
        cwd: &Path,
        agent_dir: &Path,
        auto_approve: HashSet<String>,
    ) -> (Arc<SessionHost>, Arc<dyn Host>) {
        let host = Arc::new(SessionHost::new(cwd, agent_dir, auto_approve));
        (host.clone(), Arc::new(PoolHost(host)))
    }

    fn new(cwd: &Path, agent_dir: &Path, auto_approve: HashSet<String>) -> SessionHost {
        let log = ServerLog::new(agent_dir.join("mcp.log"));
        tracing_log::write_to(&log);
        SessionHost {
            cwd: RwLock::new(cwd.to_path_buf()),
            log,
            front_end: RwLock::new(None),
            credentials: RwLock::new(None),
            auto_approve,
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            dialogs: Arc::new(Semaphore::new(MAX_OPEN_DIALOGS)),
            trace: OnceLock::new(),
        }
    }

    /// Traces the messages of `servers` to `trace` from now on.
    pub fn set_trace(&self, trace: Trace, servers: HashSet<String>) {
        let _ = self.trace.set((Arc::new(trace), servers));
    }

    /// Whether `cwd` is a new directory (then it is the roots' from now on).
    pub fn set_cwd(&self, cwd: &Path) -> bool {
        let mut current = self.cwd.write();
        let changed = *current != cwd;
        *current = cwd.to_path_buf();
        changed
    }

    pub fn attach(&self, front_end: Arc<dyn FrontEnd>) {
        *self.front_end.write() = Some(front_end);
    }

    fn front_end(&self) -> Option<Arc<dyn FrontEnd>> {
        self.front_end.read().clone()
    }

    /// Where the servers' log messages go.
    pub fn server_log(&self) -> &ServerLog {
        &self.log
    }

    pub fn set_credentials(&self, source: CredentialSource) {
        *self.credentials.write() = Some(source);
    }

    /// Asks Pi for its credential for `provider` now (never kept); `None` when Pi gave no way
    /// to ask (outside Pi).
    pub fn provider_credential(
        &self,
        provider: &str,
    ) -> Option<BoxFuture<'static, Option<Secret>>> {
        let source = self.credentials.read().clone()?;
        Some(source(provider.to_string()))
    }

    /// Asks the front end the approval question `question(id)` once it is this question's turn at
    /// the dialogs; `None` when nobody can be asked. A dialog still open `wait` after it was shown
    /// (and the front end's own timer did not close it) is closed.
    pub fn approve(
        self: &Arc<Self>,
        question: impl FnOnce(u64) -> ApprovalQuestion,
        wait: Duration,
    ) -> BoxFuture<'static, Option<Answer>> {
        let Some(front_end) = self.front_end() else {
            return Box::pin(async { None });
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let shown = question(id);
        let asking = Asking::new(self, &front_end, id);
        Box::pin(async move {
            // The wait counts from when the question is shown, after its turn came.
            let shown_at = Arc::new(OnceLock::new());
            let at = shown_at.clone();
            let answer = asking
                .answer(true, None, || {
                    let _ = at.set(Instant::now());
                    // Asked once it is this question's turn: a front end may show it at once.
                    let asked = front_end.approve(shown);
                    Box::pin(async move {
                        match tokio::time::timeout(wait + APPROVAL_SLACK, asked).await {
                            Ok(answer) => answer,
                            Err(_) => {
                                front_end.withdraw(id);
                                Some(ApprovalAnswer { choice: None })
                            }
                        }
                    })
                })
                .await;
            let choice = answer?.choice;
            let open_for = shown_at.get().map_or(Duration::ZERO, Instant::elapsed);
            Some(match choice {
                Some(choice) => Answer::Picked(choice),
                // The front end's timer closes its dialog at `wait`, or a little before.
                None if open_for + APPROVAL_SLACK >= wait => Answer::Unanswered,
                None => Answer::Closed,
            })
        })
    }

    /// The value of field `name` of open question `id`, from what the front end got for it.
    pub fn take_field(&self, id: u64, name: &str, answer: &Value) -> Result<Option<Value>, String> {
        let open = self.open.lock();
        let form = open.get(&id).ok_or(
            "this question is no longer open (the server withdrew it, or it was answered)",
        )?;
        let field = form
            .field(name)
            .ok_or_else(|| format!("the form has no field `{name}`"))?;
        field
            .take(answer)
            .map_err(|e| clean::line(&format!("{}: {e}", field.label())).into_owned())
    }
}

/// A question (or sampling request) for the front end. Dropped once shown and before it is
/// answered (the server withdrew it, or the call it belongs to ended), it tells the front end to
/// close it.
struct Asking {
    host: Arc<SessionHost>,
    front_end: Arc<dyn FrontEnd>,
    id: u64,
    shown: bool,
    answered: bool,
}

impl Asking {
    fn new(host: &Arc<SessionHost>, front_end: &Arc<dyn FrontEnd>, id: u64) -> Asking {
        Asking {
            host: host.clone(),
            front_end: front_end.clone(),
            id,
            shown: false,
            answered: false,
        }
    }

    /// Shows `shown` with `show` once it is this question's turn at the dialogs (at once when
    /// it needs none), and waits for the answer.
    async fn answer<T>(
        mut self,
        dialog: bool,
        form: Option<Form>,
        show: impl FnOnce() -> BoxFuture<'static, T>,
    ) -> T {
        let _turn = match dialog {
            true => self.host.dialogs.clone().acquire_owned().await.ok(),
            false => None,
        };
        if let Some(form) = form {
            self.host.open.lock().insert(self.id, form);
        }
        self.shown = true;
        let answer = show().await;
        self.answered = true;
        answer
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.host.open.lock().remove(&self.id);
        if self.shown && !self.answered {
            self.front_end.withdraw(self.id);
        }
    }
}

/// The session's host as the pool holds it (a trait of the connection layer is implemented here
/// only for a type of this crate).
struct PoolHost(Arc<SessionHost>);

impl std::ops::Deref for PoolHost {
    type Target = Arc<SessionHost>;
    fn deref(&self) -> &Arc<SessionHost> {
        &self.0
    }
}

impl Host for PoolHost {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        let Some(front_end) = self.front_end() else {
            return Box::pin(async { None });
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let on_behalf = asker.on_behalf.as_deref();
        let (shown, form) = match &question {
            Question::Form { message, form, .. } => (
                present::form(id, &asker.server, on_behalf, message, form),
                Some(form.clone()),
            ),
            Question::Url { message, url, .. } => (
                present::url(id, &asker.server, on_behalf, message, url),
                None,
            ),
        };
        let asking = Asking::new(self, &front_end, id);
        Box::pin(async move { asking.answer(true, form, || front_end.elicit(shown)).await })
    }

    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let server = asker.server.clone();
        let Some(front_end) = self.front_end() else {
            let why =
                format!("{server} asked the model (sampling), but no model is available here");
            return Box::pin(async move { Err(why) });
        };
        let request = match sampling::to_pi(&params) {
            Ok(request) => request,
            Err(why) => {
                let why = format!("{server}'s sampling request cannot be run: {why}");
                return Box::pin(async move { Err(why) });
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let approve = !self.auto_approve.contains(&server);
        let shown = sampling::Request {
            id,
            title: format!(
                "Allow MCP server \"{server}\" to use the model{}?",
                present::for_whom(asker.on_behalf.as_deref())
            ),
            preview: sampling::preview(&server, &params),
            server: server.clone(),
            approve,
            context: request.context,
            options: request.options,
            hints: request.hints,
        };
        let stops: Vec<String> = params
            .get("stopSequences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
        let asking = Asking::new(self, &front_end, id);
        Box::pin(async move {
            let answer = asking
                .answer(approve, None, || front_end.sample(shown))
                .await;
            let Some(answer) = answer else {
                return Err(format!(
                    "{server} asked the model (sampling), but no model is available here"
                ));
            };
            match answer.refused.as_deref() {
                Some("declined") => Err(format!("the user declined {server}'s sampling request")),
                Some("no-ui") => Err(format!(
                    "{server}'s sampling request needs the user's approval, but nobody can be asked \
                     here; `samplingAutoApprove: true` on the server allows it without asking"
                )),
                Some("no-model") => Err("no model is selected in Pi to answer it".into()),
                Some(other) => Err(format!("refused ({other})")),
                None => sampling::from_pi(&answer, &stops),
            }
        })
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        Root::directory(&self.cwd.read()).into_iter().collect()
    }

    fn log(&self, server: &str, message: &LogMessage) {
        self.log.append(server, message);
    }

    fn trace(&self, server: &str) -> Option<Arc<Trace>> {
        let (trace, servers) = self.trace.get()?;
        servers.contains(server).then(|| trace.clone())
    }
}

#[cfg(test)]
mod tests;
