//! The app sessions: one per (server, tool) of a Pi session, reused by later calls of the tool;
//! each with its unguessable id and tokens, its document, what waits to be pushed to its page,
//! and the user's consent.

use super::host::{AppRef, Ask, Grant};
use super::policy::{Csp, Frame, Pace};
use crate::loopback::{random_token, same_secret};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::SystemTime;
use tokio::sync::{oneshot, Notify};
use tokio_util::sync::CancellationToken;

/// The most pushes waiting for a page (tool input and results); past it the oldest go.
pub const MAX_PUSHES: usize = 64;

/// The app's HTML as its server gave it, the policy it is served with, its frame, and the
/// tool's definition (for the app's host context).
pub struct Document {
    pub html: String,
    pub csp: Csp,
    pub frame: Frame,
    pub tool: Value,
}

/// How a call of the tool ended, for its app.
#[derive(Clone, Debug, PartialEq)]
pub enum CallEnd {
    /// The MCP result (an error result too): `ui/notifications/tool-result`.
    Result(Value),
    /// No result (aborted, timed out, failed): `ui/notifications/tool-cancelled` with why.
    Cancelled(String),
}

impl CallEnd {
    fn push(self) -> Value {
        match self {
            CallEnd::Result(result) => {
                json!({ "method": "ui/notifications/tool-result", "params": result })
            }
            CallEnd::Cancelled(reason) => {
                json!({ "method": "ui/notifications/tool-cancelled", "params": { "reason": reason } })
            }
        }
    }
}

pub struct AppSession {
    pub app: AppRef,
    /// Opens the host page and goes with each of its requests.
    pub token: String,
    /// Opens the app's document on its own origin, and nothing else.
    pub doc_token: String,
    /// Opens the host page once: what the opener is given, so that the token is never on a
    /// command line (the machine's other users can read those).
    launch: Mutex<Option<String>>,
    pub opened: SystemTime,
    document: Mutex<Arc<Document>>,
    pushes: Mutex<VecDeque<Value>>,
    pushed: Notify,
    /// The last call's input and result, given again to a page that comes back (a reload).
    latest: Mutex<Vec<Value>>,
    pub pace: Mutex<Pace>,
    /// The user's answers for this app session, by what they cover ([`super::Ask::grant_key`]).
    pub consents: Mutex<HashMap<&'static str, Grant>>,
    /// What the app asks that waits for the user, with where its answer goes.
    pub waiting: Mutex<Vec<(Ask, oneshot::Sender<bool>)>>,
    /// Held by the request whose dialog asks for everything waiting: the others wait for their
    /// answer instead of opening dialogs of their own.
    pub asking: tokio::sync::Mutex<()>,
    /// Pages listening for pushes now.
    watching: AtomicUsize,
    /// Whether a page ever listened.
    watched: AtomicUsize,
    pub ended: CancellationToken,
}

impl AppSession {
    pub fn document(&self) -> Arc<Document> {
        self.document.lock().clone()
    }

    /// The one-time code that opens the page, until it is used.
    pub fn launch_code(&self) -> Option<String> {
        self.launch.lock().clone()
    }

    /// Whether `given` is the one-time code; it is then used up.
    pub fn launch_with(&self, given: &str) -> bool {
        let mut launch = self.launch.lock();
        let matches = launch
            .as_deref()
            .is_some_and(|code| same_secret(given, code));
        if matches {
            *launch = None;
        }
        matches
    }

    /// A call of the tool began: its input goes to the page now, and is kept for a page that
    /// comes back.
    pub fn push_input(&self, input: Value) {
        let push = input_push(input);
        *self.latest.lock() = vec![push.clone()];
        self.push(push);
    }

    /// A call of the tool ended: its input, unless it went when the call began, then its end.
    pub fn push_call(&self, input: Value, end: CallEnd) {
        let input = input_push(input);
        if *self.latest.lock() != [input.clone()] {
            *self.latest.lock() = vec![input.clone()];
            self.push(input);
        }
        let end = end.push();
        self.latest.lock().push(end.clone());
        self.push(end);
    }

    /// The model is still writing a call of the tool: its arguments so far. Only the newest
    /// waits for the page: one not yet sent gives way to the next.
    pub fn push_partial(&self, input: Value) {
        let method = "ui/notifications/tool-input-partial";
        let mut pushes = self.pushes.lock();
        if pushes.back().is_some_and(|last| last["method"] == method) {
            pushes.pop_back();
        }
        drop(pushes);
        self.push(json!({ "method": method, "params": { "arguments": input } }));
    }

    /// The host context changed (only what changed): `ui/notifications/host-context-changed`.
    pub fn push_context(&self, changed: Value) {
        self.push(json!({ "method": "ui/notifications/host-context-changed", "params": changed }));
    }

    /// A page starts listening: the guard counts it until dropped. A page that comes back after
    /// one went (a reload) gets the last call again first.
    pub fn watch(self: &Arc<Self>) -> Watching {
        let again = self.watched.fetch_add(1, Ordering::SeqCst) > 0;
        self.watching.fetch_add(1, Ordering::SeqCst);
        if again {
            let mut pushes = self.pushes.lock();
            for push in self.latest.lock().iter().rev() {
                if !pushes.contains(push) {
                    pushes.push_front(push.clone());
                }
            }
        }
        Watching(self.clone())
    }

    /// Queues `message` for the page (the oldest goes past [`MAX_PUSHES`]).
    fn push(&self, message: Value) {
        let mut pushes = self.pushes.lock();
        if pushes.len() == MAX_PUSHES {
            pushes.pop_front();
        }
        pushes.push_back(message);
        drop(pushes);
        self.pushed.notify_waiters();
    }

    /// The next push, when there is one; `None` once the session ended.
    pub async fn next_push(&self) -> Option<Value> {
        loop {
            let notified = self.pushed.notified();
            if let Some(message) = self.pushes.lock().pop_front() {
                return Some(message);
            }
            tokio::select! {
                _ = notified => {}
                _ = self.ended.cancelled() => return None,
            }
        }
    }

    /// Whether a page listened once and none does now (its tab was closed).
    pub fn abandoned(&self) -> bool {
        self.watched.load(Ordering::SeqCst) > 0 && self.watching.load(Ordering::SeqCst) == 0
    }
}

fn input_push(input: Value) -> Value {
    json!({ "method": "ui/notifications/tool-input", "params": { "arguments": input } })
}

pub struct Watching(Arc<AppSession>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.watching.fetch_sub(1, Ordering::SeqCst);
    }
}

fn open_of<'s>(
    sessions: &'s HashMap<String, Arc<AppSession>>,
    server: &str,
    tool: &str,
) -> Option<&'s Arc<AppSession>> {
    sessions
        .values()
        .find(|s| s.app.server == server && s.app.tool == tool && !s.ended.is_cancelled())
}

#[derive(Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, Arc<AppSession>>>,
}

impl Registry {
    /// The app session of `server`'s `tool` with `document`: the one open (its document
    /// replaced), or a new one. `true` when it was open.
    pub fn open(&self, server: &str, tool: &str, document: Document) -> (Arc<AppSession>, bool) {
        let mut sessions = self.sessions.lock();
        if let Some(session) = open_of(&sessions, server, tool).cloned() {
            *session.document.lock() = Arc::new(document);
            return (session, true);
        }
        let id = random_token();
        let session = Arc::new(AppSession {
            app: AppRef {
                id: id.clone(),
                server: server.to_string(),
                tool: tool.to_string(),
            },
            token: random_token(),
            doc_token: random_token(),
            launch: Mutex::new(Some(random_token())),
            opened: SystemTime::now(),
            document: Mutex::new(Arc::new(document)),
            pushes: Mutex::default(),
            pushed: Notify::new(),
            latest: Mutex::default(),
            pace: Mutex::default(),
            consents: Mutex::default(),
            waiting: Mutex::default(),
            asking: tokio::sync::Mutex::new(()),
            watching: AtomicUsize::new(0),
            watched: AtomicUsize::new(0),
            ended: CancellationToken::new(),
        });
        sessions.insert(id, session.clone());
        (session, false)
    }

    /// The open app session of `server`'s `tool`.
    pub fn find(&self, server: &str, tool: &str) -> Option<Arc<AppSession>> {
        open_of(&self.sessions.lock(), server, tool).cloned()
    }

    pub fn get(&self, id: &str) -> Option<Arc<AppSession>> {
        self.sessions
            .lock()
            .get(id)
            .filter(|s| !s.ended.is_cancelled())
            .cloned()
    }

    /// Ends the session `id`; the ended one, if it was open.
    pub fn end(&self, id: &str) -> Option<Arc<AppSession>> {
        let session = self.sessions.lock().remove(id)?;
        session.ended.cancel();
        Some(session)
    }

    /// The open sessions, oldest first.
    pub fn open_sessions(&self) -> Vec<Arc<AppSession>> {
        let mut open: Vec<_> = self.sessions.lock().values().cloned().collect();
        open.sort_by_key(|s| s.opened);
        open
    }

    /// Ends every session; those that were open.
    pub fn end_all(&self) -> Vec<Arc<AppSession>> {
        let ended: Vec<_> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for session in &ended {
            session.ended.cancel();
        }
        ended
    }
}
