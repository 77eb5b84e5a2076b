//! What a connection needs from whoever runs it, to answer a server's own questions: a person
//! (elicitation), a model (sampling), the project's roots, and a place for the server's log. The
//! Pi extension and the command line each implement [`Host`] as thin callbacks; a broker that
//! shares one server among sessions routes by [`Asker::callers`].

use crate::clean::Link;
use crate::elicitation::{Content, Form};
use crate::server_log::{LogLevel, LogMessage};
use crate::trace::Trace;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Who a request was sent for (a call id, a session): opaque to the pool.
pub type Caller = Arc<str>;

/// The client features a connection offers its server (per server, from the settings).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientFeatures {
    pub elicitation: ElicitationPolicy,
    pub sampling: bool,
    pub roots: bool,
    /// Calls may run as tasks (and the 2026-07-28 tasks extension is offered).
    pub tasks: bool,
    /// The least severe log level written (and asked for with `logging/setLevel`).
    pub log_level: LogLevel,
    /// MCP Apps' interfaces are shown (the `io.modelcontextprotocol/ui` extension is declared).
    #[serde(default)]
    pub apps: bool,
}

impl ClientFeatures {
    /// Nothing advertised: the server cannot ask anything.
    pub fn none() -> ClientFeatures {
        ClientFeatures {
            elicitation: ElicitationPolicy::Off,
            sampling: false,
            roots: false,
            tasks: false,
            log_level: LogLevel::Info,
            apps: false,
        }
    }
}

/// The `elicitation` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElicitationPolicy {
    /// `false`: not advertised; a server that asks anyway gets an error.
    Off,
    /// `"ask"` (or `true`): whoever can answer is asked; where nobody can, declined.
    Ask,
    /// `"defaults"`: asked where someone can answer; elsewhere accepted with the schema's
    /// defaults when every required field has one, declined otherwise.
    Defaults,
    /// `"decline"`: advertised, always declined.
    Decline,
}

/// The server asking, and what it may be asking for.
#[derive(Clone, Debug)]
pub struct Asker {
    pub server: String,
    /// The callers the question may belong to: the caller of the request it came in (a
    /// 2026-07-28 `input_required`), else every caller with a request in flight to this server
    /// when it asked (a server does not say which).
    pub callers: Vec<Caller>,
    /// The task the question is about (`io.modelcontextprotocol/related-task` in its `_meta`).
    pub task: Option<String>,
    /// Cancelled when the question no longer needs an answer: the server withdrew it, or every
    /// request it could belong to has ended (answered, aborted, timed out).
    pub void: CancellationToken,
    /// Set when the question is asked in one session's UI for another session of its family
    /// (`subagent "worker" (pid 4242)`).
    pub on_behalf: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Question {
    /// Fill in a form (already checked: a flat object of simple fields).
    Form {
        message: String,
        form: Form,
        /// The `requestedSchema` as the server sent it.
        schema: Value,
    },
    /// Visit a URL (for something the client must not see, such as a password or a payment).
    Url {
        message: String,
        /// Checked: an http(s) URL without hidden characters.
        url: Link,
        /// The server's id for it (absent on 2026-07-28 connections).
        id: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The form's content as given (checked and completed with defaults by the pool), or empty
    /// for a URL the user agreed to open.
    Accept(Content),
    /// An explicit no.
    Decline,
    /// Dismissed without a choice (Esc).
    Cancel,
    /// Nobody may be asked, for this reason (told to the server as an error).
    Refused(String),
}

/// A root the server may work in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    pub name: Option<String>,
}

impl Root {
    /// The directory `dir` as a root named after its last component; `None` for a path that
    /// is not absolute.
    pub fn directory(dir: &std::path::Path) -> Option<Root> {
        let uri = url::Url::from_file_path(dir).ok()?;
        Some(Root {
            uri: uri.into(),
            name: dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        })
    }
}

pub trait Host: Send + Sync + 'static {
    /// Asks whoever can answer here; `None` when nobody can (no UI, no terminal).
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>>;

    /// Runs a `sampling/createMessage` (its params, already checked for size) on a model and
    /// returns the `CreateMessageResult`; `Err` is a refusal, said to the server as it is.
    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>>;

    /// The roots to offer `server`, now.
    fn roots(&self, server: &str) -> Vec<Root>;

    /// A `notifications/message` at or above the connection's `log_level`.
    fn log(&self, server: &str, message: &LogMessage);

    /// Whether a call the server turns into a task is followed here (polled to its end,
    /// cancelled on abort); `false` where each caller follows its own tasks and the result
    /// that creates one is passed on as it is (the broker: each session, through its own
    /// connection). Either way the tasks are offered as the `tasks` setting says.
    fn follows_tasks(&self) -> bool {
        true
    }

    /// Where `server`'s messages are traced (`trace`), if they are.
    fn trace(&self, _server: &str) -> Option<Arc<Trace>> {
        None
    }
}

/// A host where nobody can be asked, no model runs, no roots exist and logs go nowhere.
pub struct NoHost;

impl Host for NoHost {
    fn elicit(&self, _: Asker, _: Question) -> BoxFuture<'static, Option<Reply>> {
        Box::pin(async { None })
    }

    fn sample(&self, asker: Asker, _: Value) -> BoxFuture<'static, Result<Value, String>> {
        let why = format!(
            "no model is available to answer {}'s sampling request",
            asker.server
        );
        Box::pin(async move { Err(why) })
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        vec![]
    }

    fn log(&self, _: &str, _: &LogMessage) {}
}
