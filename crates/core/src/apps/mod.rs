//! MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool's interface opened in the
//! user's browser with a host behind it. `docs/design/mcp-apps.md` has the whole design: what
//! opens when, the two origins, the message flow, the threat model.
//!
//! [`Apps`] owns the app sessions ([`registry`]) and the two loopback listeners ([`http`]),
//! started at the first app and closed with it; [`bridge`] answers the app's requests under the
//! [`policy`]; what it needs of the gateway comes through [`AppHost`].

pub mod bridge;
pub mod grants;
mod host;
mod http;
pub mod meta;
mod page;
pub mod policy;
mod registry;

pub use host::{AppHost, AppRef, Ask, Grant, ToConversation};
pub use meta::{resource_uri, Visibility};
pub use registry::{CallEnd, Document};

use parking_lot::Mutex;
use registry::{AppSession, Registry};
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// An app shown: its tab's address, the address that opens it once (for the opener: no token
/// in it), and whether its app session was open already (the tab is there; the new input and
/// result went to it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub url: String,
    pub launch: Option<String>,
    pub reused: bool,
}

/// An open app, for `/mcp apps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenApp {
    pub server: String,
    pub tool: String,
    pub url: String,
    pub since: SystemTime,
}

pub struct Apps {
    inner: Arc<Inner>,
    /// Held while the listeners start, so that two first apps start one pair.
    starting: tokio::sync::Mutex<()>,
}

struct Inner {
    registry: Registry,
    host: Arc<dyn AppHost>,
    /// The host page's script (the bundled `AppBridge` and its glue).
    script: Arc<[u8]>,
    /// The host context but for the app's own part (theme, locale, time zone, platform);
    /// Pi's theme may change.
    context: Mutex<Value>,
    /// The host origin's port, then the app origin's.
    ports: OnceLock<(u16, u16)>,
    closing: CancellationToken,
    tasks: TaskTracker,
}

impl Inner {
    fn ports(&self) -> (u16, u16) {
        self.ports.get().copied().unwrap_or_default()
    }

    /// What `ui/initialize` answers with: the fixed part, the tool, the one display mode.
    fn context(&self, session: &AppSession) -> Value {
        let mut context = self.context.lock().clone();
        context["toolInfo"] = json!({ "tool": session.document().tool });
        context["displayMode"] = json!("inline");
        context["availableDisplayModes"] = json!(["inline"]);
        context
    }

    fn end(&self, id: &str) {
        if let Some(session) = self.registry.end(id) {
            self.host.ended(&session.app);
        }
    }

    fn url(&self, session: &AppSession) -> String {
        format!(
            "http://127.0.0.1:{}/app/{}/?t={}",
            self.ports().0,
            session.app.id,
            session.token
        )
    }
}

impl Apps {
    pub fn new(host: Arc<dyn AppHost>, script: Vec<u8>, context: Value) -> Apps {
        Apps {
            inner: Arc::new(Inner {
                registry: Registry::default(),
                host,
                script: script.into(),
                context: Mutex::new(match context {
                    Value::Object(_) => context,
                    _ => json!({}),
                }),
                ports: OnceLock::new(),
                closing: CancellationToken::new(),
                tasks: TaskTracker::new(),
            }),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    /// Shows `document` as the interface of `server`'s tool, with the call's `input` and
    /// `result`: in the tab of its app session when one is open, else in a new one.
    pub async fn show(
        &self,
        server: &str,
        tool: &str,
        document: Document,
        input: Value,
        result: Value,
    ) -> std::io::Result<Shown> {
        self.listen().await?;
        let (session, reused) = self.inner.registry.open(server, tool, document);
        session.push_call(input, CallEnd::Result(result));
        let launch = session.launch_code().filter(|_| !reused).map(|code| {
            let (port, id) = (self.inner.ports().0, &session.app.id);
            format!("http://127.0.0.1:{port}/app/{id}/?o={code}")
        });
        Ok(Shown {
            url: self.inner.url(&session),
            launch,
            reused,
        })
    }

    /// A call of `server`'s `tool` began: when its app is open, the input goes to it now.
    pub fn call_began(&self, server: &str, tool: &str, input: Value) {
        if let Some(session) = self.inner.registry.find(server, tool) {
            session.push_input(input);
        }
    }

    /// The model is still writing a call of `server`'s `tool`: when its app is open, it gets
    /// the arguments so far (`ui/notifications/tool-input-partial`).
    pub fn call_partial(&self, server: &str, tool: &str, input: Value) {
        if let Some(session) = self.inner.registry.find(server, tool) {
            session.push_partial(input);
        }
    }

    /// A call of `server`'s `tool` ended without a result to show (an error result, or none):
    /// when its app is open, it is told. Nothing opens for it.
    pub fn call_ended(&self, server: &str, tool: &str, input: Value, end: CallEnd) {
        if let Some(session) = self.inner.registry.find(server, tool) {
            session.push_call(input, end);
        }
    }

    /// Pi's side of the host context changed (its theme): what differs is kept for pages to
    /// come and sent to the open apps (`ui/notifications/host-context-changed`).
    pub fn set_context(&self, update: Map<String, Value>) {
        let changed: Map<String, Value> = {
            let mut context = self.inner.context.lock();
            let changed: Map<String, Value> = update
                .into_iter()
                .filter(|(key, value)| context.get(key) != Some(value))
                .collect();
            for (key, value) in &changed {
                context[key] = value.clone();
            }
            changed
        };
        if changed.is_empty() {
            return;
        }
        let changed = Value::Object(changed);
        for session in self.inner.registry.open_sessions() {
            session.push_context(changed.clone());
        }
    }

    /// The open apps, oldest first.
    pub fn open_apps(&self) -> Vec<OpenApp> {
        let inner = &self.inner;
        inner
            .registry
            .open_sessions()
            .iter()
            .map(|s| OpenApp {
                server: s.app.server.clone(),
                tool: s.app.tool.clone(),
                url: inner.url(s),
                since: s.opened,
            })
            .collect()
    }

    /// Ends every app session (their pages tear the apps down) and closes the listeners.
    pub async fn close(&self) {
        for session in self.inner.registry.end_all() {
            self.inner.host.ended(&session.app);
        }
        self.inner.closing.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
    }

    /// The ports, once listening.
    pub fn ports(&self) -> Option<(u16, u16)> {
        self.inner.ports.get().copied()
    }

    async fn listen(&self) -> std::io::Result<()> {
        let _starting = self.starting.lock().await;
        if self.inner.ports.get().is_some() {
            return Ok(());
        }
        if self.inner.closing.is_cancelled() {
            return Err(std::io::Error::other("the session has ended"));
        }
        let host = TcpListener::bind(("127.0.0.1", 0)).await?;
        let app = TcpListener::bind(("127.0.0.1", 0)).await?;
        let ports = (host.local_addr()?.port(), app.local_addr()?.port());
        let _ = self.inner.ports.set(ports);
        let tasks = &self.inner.tasks;
        tasks.spawn(http::serve(host, http::Origin::Host, self.inner.clone()));
        tasks.spawn(http::serve(app, http::Origin::App, self.inner.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
