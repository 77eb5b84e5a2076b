//! MCP Apps in the gateway. Once the embedder turns them on (the extension does in a session
//! with a UI; headless runs and `pi-mcp` never do), a call of a tool with an interface shows it:
//! the result goes to the model as always, and the app opens in the browser (or, under `ui:
//! "none"`, its address is given). The apps' requests come back through [`AppGate`]: the
//! server's tools through the approval gate, its resources, the user's consent, the
//! conversation (as events).

use super::reach::Need;
use super::tool::Tool;
use super::Mode;
use super::{CallOptions, Kernel};
use crate::approval::present::{self, Choice};
use crate::approval::Answer;
use crate::apps::grants::{self, Always};
use crate::apps::{
    policy::{Csp, Frame},
    resource_uri, AppHost, AppRef, Apps, Ask, CallEnd, Document, Grant, OpenApp, Shown,
    ToConversation,
};
use crate::catalog::{lookup, Lookup, ToolInfo};
use crate::config::UiMode;
use crate::events::Event;
use base64::Engine;
use futures::future::{BoxFuture, FutureExt};
use pi_mcp_connection::clean::{self, Link};
use pi_mcp_connection::pool::RequestError;
use pi_mcp_connection::server_log::{LogLevel, LogMessage};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::{Arc, Weak};

/// The kinds of [`Event::App`].
const OPENED: &str = "opened";
const SHOWN: &str = "shown";
const ENDED: &str = "ended";

/// MCP Apps as this session has them.
pub(super) struct AppsState {
    /// Once the embedder turned them on ([`McpApps::enable_apps`]).
    on: std::sync::OnceLock<Apps>,
    /// The "always" the user gave servers' apps.
    grants: grants::AlwaysGrants,
}

impl AppsState {
    /// Off until the embedder turns them on; the "always" kept in `agent_dir`.
    pub fn new(agent_dir: &Path) -> AppsState {
        AppsState {
            on: std::sync::OnceLock::new(),
            grants: grants::AlwaysGrants::in_dir(agent_dir),
        }
    }

    /// Closes the open apps (the session ends).
    pub async fn close(&self) {
        if let Some(apps) = self.on.get() {
            apps.close().await;
        }
    }
}

/// MCP Apps as the embedder sees them: turning them on, the open apps, the "always" given
/// them, Pi's theme and the arguments the model is still writing.
pub struct McpApps<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(McpApps);

impl McpApps<'_> {
    /// Turns MCP Apps on for this session: `script` is the host page's script
    /// (`extension/pi-mcp-native/app-host.js`), `context` the host context's fixed part (theme,
    /// locale, time zone, platform). Once; later calls change nothing.
    pub fn enable_apps(&self, script: Vec<u8>, context: Value) {
        let gate = Arc::new(AppGate(Arc::downgrade(self.kernel)));
        let _ = self.kernel.apps.on.set(Apps::new(gate, script, context));
    }

    /// The open apps, oldest first.
    pub fn open_apps(&self) -> Vec<OpenApp> {
        self.kernel
            .apps
            .on
            .get()
            .map(Apps::open_apps)
            .unwrap_or_default()
    }

    /// The "always" given to servers' apps (`/mcp apps`): each server and what it covers
    /// (`conversation`, `tools`).
    pub fn app_grants(&self) -> Vec<(String, String)> {
        let kept = self.kernel.apps.grants.list();
        kept.into_iter().map(|g| (g.server, g.what)).collect()
    }

    /// Takes back the "always" of `server`'s apps (every server's: `None`); how many.
    pub fn revoke_app_grants(&self, server: Option<&str>) -> Result<usize, String> {
        self.kernel.apps.grants.revoke(server).map_err(|e| {
            format!(
                "{}: {e}",
                self.kernel.agent_dir.join(grants::FILE).display()
            )
        })
    }

    /// Pi's side of the apps' host context changed (its theme): the open apps are told.
    pub fn set_apps_context(&self, update: Map<String, Value>) {
        if let Some(apps) = self.kernel.apps.on.get() {
            apps.set_context(update);
        }
    }

    /// The model is still writing a call of `name` (`server`'s, when it says): an open app of
    /// the tool gets the arguments so far. Nothing starts, nothing opens.
    pub fn app_input_partial(&self, name: &str, server: Option<&str>, args: Value) {
        let catalog = self.kernel.servers.view();
        let (Some(apps), Lookup::Found(tool)) = (
            self.kernel.apps.on.get(),
            lookup(catalog.tools(), name, server),
        ) else {
            return;
        };
        if let Some(input) = self.kernel.app_input(tool, &args) {
            apps.call_partial(&tool.server, &tool.original, input);
        }
    }
}

impl Kernel {
    /// What an "always" for `what` of `server`'s apps is kept as: its name, its launch's hash
    /// and `what`.
    fn app_grant(&self, server: &str, what: &str) -> Option<Always> {
        let hash = crate::approval::Grant::server(self.server(server)?).hash;
        Some(Always {
            server: server.to_string(),
            hash,
            what: what.to_string(),
        })
    }

    /// The arguments to give `tool`'s app, when its call will show one.
    fn app_input(&self, tool: &ToolInfo, args: &Value) -> Option<Value> {
        let shows = self.apps.on.get().is_some()
            && tool.definition.as_deref().and_then(resource_uri).is_some()
            && self
                .server(&tool.server)
                .is_some_and(|s| self.config.client_settings(s).ui() != UiMode::Off);
        shows.then(|| args.clone())
    }

    /// A call of `tool` with `args` is sent: when it will show an app, an open one gets the
    /// input now, and what ends it is handed back, to be told each result the call gets (of
    /// the tool it was sent to in the end; see [`Kernel::app_call_ended`]).
    pub(super) fn app_call_began(
        self: &Arc<Self>,
        tool: &ToolInfo,
        args: &Value,
    ) -> Option<impl Fn(&ToolInfo, &Result<Value, RequestError>)> {
        let input = self.app_input(tool, args)?;
        if let Some(apps) = self.apps.on.get() {
            apps.call_began(&tool.server, &tool.original, input.clone());
        }
        let this = self.clone();
        Some(
            move |tool: &ToolInfo, result: &Result<Value, RequestError>| {
                this.app_call_ended(tool, input.clone(), result)
            },
        )
    }

    /// The call of `tool` that its app was given `input` of ended: a result shows the app
    /// (opening it unless open); an error result, or none, goes to an open app only (as
    /// `tool-result`, or `tool-cancelled` with why).
    fn app_call_ended(
        self: &Arc<Self>,
        tool: &ToolInfo,
        input: Value,
        result: &Result<Value, RequestError>,
    ) {
        let Some(apps) = self.apps.on.get() else {
            return;
        };
        let end = match result {
            Ok(raw) if raw.get("isError").and_then(Value::as_bool) != Some(true) => {
                return self.show_app(tool, input, raw);
            }
            Ok(raw) => CallEnd::Result(raw.clone()),
            Err(RequestError::Aborted) => CallEnd::Cancelled("the user stopped the call".into()),
            Err(e) => {
                CallEnd::Cancelled(clean::line(&format!("the call failed: {e}")).into_owned())
            }
        };
        apps.call_ended(&tool.server, &tool.original, input, end);
    }

    /// Shows `tool`'s app with the call's `input` and `result`, in the background (the result
    /// goes to the model meanwhile); what came of it is an [`Event::App`].
    fn show_app(self: &Arc<Self>, tool: &ToolInfo, input: Value, result: &Value) {
        let (this, tool, result) = (self.clone(), tool.clone(), result.clone());
        self.tasks.spawn(async move {
            let shown = this.shown(&tool, input, result).await;
            let (kind, url, text) = match shown {
                Ok((shown, _)) if shown.reused => (SHOWN, shown.url, String::new()),
                Ok((shown, text)) => (OPENED, shown.url, text),
                Err(why) => (
                    ENDED,
                    String::new(),
                    format!("The app of {} could not be shown: {why}", tool.name),
                ),
            };
            this.events.emit(Event::App {
                kind: kind.into(),
                server: tool.server.clone(),
                tool: tool.original.clone(),
                url,
                text,
            });
        });
    }

    /// Reads the app's document, shows it, and opens a new tab (what to tell the user).
    async fn shown(
        self: &Arc<Self>,
        tool: &ToolInfo,
        input: Value,
        result: Value,
    ) -> Result<(Shown, String), String> {
        let apps = self.apps.on.get().ok_or("apps are off")?;
        let server = self.server(&tool.server).ok_or("no such server")?;
        let mode = self.config.client_settings(server).ui();
        let definition = tool.definition.clone().unwrap_or_default();
        let uri = resource_uri(&definition).ok_or("no interface")?.to_string();
        let document = self.app_document(&tool.server, &uri, &definition).await?;
        let shown = apps
            .show(&tool.server, &tool.original, document, input, result)
            .await
            .map_err(|e| format!("no loopback listener: {e}"))?;
        let label = format!(
            "The app of {} (MCP server \"{}\")",
            clean::line(&tool.original),
            tool.server
        );
        let text = match (shown.reused, mode) {
            (true, _) => String::new(),
            (false, UiMode::Browser) => {
                match Link::parse(shown.launch.as_ref().unwrap_or(&shown.url))
                    .map_err(|e| e.to_string())
                    .and_then(|link| crate::browser::open(&link, &self.env))
                {
                    Ok(_) => format!("{label} opened in your browser: {}", shown.url),
                    Err(why) => format!("{label} is at {} (no browser opened: {why})", shown.url),
                }
            }
            (false, _) => format!("{label} is at {} (settings: ui \"none\")", shown.url),
        };
        Ok((shown, text))
    }

    /// The app's HTML and policy, read from its server.
    async fn app_document(
        self: &Arc<Self>,
        server: &str,
        uri: &str,
        definition: &Value,
    ) -> Result<Document, String> {
        let conn = self
            .ready(server, Need::Handshake)
            .await
            .map_err(|why| why.reason(server))?
            .conn;
        let read = conn
            .request(
                "resources/read",
                json!({ "uri": uri }),
                self.plain_request(server),
            )
            .await
            .map_err(|e| format!("reading {uri}: {e}"))?;
        let content = read["contents"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["uri"] == uri).or(c.first()))
            .ok_or_else(|| format!("{uri} has no contents"))?;
        let html = match (content["text"].as_str(), content["blob"].as_str()) {
            (Some(text), _) => text.to_string(),
            (None, Some(blob)) => base64::engine::general_purpose::STANDARD
                .decode(blob)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| format!("{uri} is not UTF-8 text"))?,
            (None, None) => return Err(format!("{uri} has neither text nor blob")),
        };
        // The content's `_meta.ui`, else the listing's entry's.
        let listed = self.servers.meta(server).and_then(|meta| {
            meta.resources
                .iter()
                .find(|r| r["uri"] == uri)
                .and_then(|r| r["_meta"].get("ui").cloned())
        });
        let ui = content["_meta"].get("ui").cloned().or(listed);
        let (csp, frame) = (Csp::of(ui.as_ref()), Frame::of(ui.as_ref()));
        let left_out: Vec<String> = csp
            .dropped
            .iter()
            .map(|source| {
                format!("csp source {source}: only http(s) and ws(s) origins off this machine and its network")
            })
            .chain(frame.ignored.iter().cloned())
            .collect();
        if !left_out.is_empty() {
            self.app_log(
                server,
                LogMessage {
                    level: LogLevel::Warning,
                    logger: Some(format!("app {uri}")),
                    data: json!(format!(
                        "declared but not honoured: {}",
                        left_out.join("; ")
                    )),
                },
            );
        }
        Ok(Document {
            html,
            csp,
            frame,
            tool: definition.clone(),
        })
    }

    /// Writes `message` about `server`'s app to its log, at the server's log level.
    fn app_log(&self, server: &str, message: LogMessage) {
        let Some(config) = self.server(server) else {
            return;
        };
        if message.level >= self.config.client_settings(config).features().log_level {
            self.host.server_log().append(server, &message);
        }
    }

    /// The server's tool `name` for its app: listed for the model or for the app alone.
    fn app_tool(&self, server: &str, name: &str) -> Option<ToolInfo> {
        let view = self.servers.view();
        let found = view
            .tools()
            .iter()
            .chain(view.app_only())
            .find(|t| t.server == server && t.original == name && t.resource_uri.is_none());
        found.cloned()
    }

    /// The approval gate for the app's call of `name`, as for the model's; its dialog names the
    /// app. The tool as listed.
    async fn gate_for_app(
        self: &Arc<Self>,
        app: &AppRef,
        name: &str,
        args: &Value,
    ) -> Result<ToolInfo, String> {
        let server = app.server.as_str();
        let tool = self
            .app_tool(server, name)
            .ok_or_else(|| format!("{name} is not a tool of {server}"))?;
        let asker = format!("its app ({} in your browser)", clean::line(&app.tool));
        let subject = crate::approval::Subject::Tool(&tool);
        self.approved(Mode::Call, subject, args, Some(&asker))
            .await
            .map_err(|refused| refused.joined_text())?;
        Ok(tool)
    }

    /// A call the app makes: the approval gate as for the model's (unless the user allowed
    /// this call in the app's dialog), then the server.
    async fn call_for_app(
        self: &Arc<Self>,
        app: &AppRef,
        name: &str,
        args: Map<String, Value>,
        allowed: bool,
    ) -> Result<Value, String> {
        let server = app.server.as_str();
        let args = Value::Object(args);
        let tool = match allowed {
            true => self
                .app_tool(server, name)
                .ok_or_else(|| format!("{name} is not a tool of {server}"))?,
            false => self.gate_for_app(app, name, &args).await?,
        };
        let conn = self
            .ready(server, Need::Handshake)
            .await
            .map_err(|why| why.reason(server))?
            .conn;
        self.servers.mark_used(server);
        let cancel = self.closing.child_token();
        Tool::from(self)
            .send(&conn, &tool, args, &CallOptions::default(), cancel)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The gateway as the apps see it; weak, so that an app left open never keeps it alive.
struct AppGate(Weak<Kernel>);

impl AppGate {
    fn adapter(&self) -> Result<Arc<Kernel>, String> {
        self.0
            .upgrade()
            .ok_or_else(|| "the session has ended".into())
    }
}

impl AppHost for AppGate {
    fn tool(&self, server: &str, name: &str) -> Option<Arc<Value>> {
        self.0.upgrade()?.app_tool(server, name)?.definition
    }

    fn call_tool(
        &self,
        app: &AppRef,
        name: &str,
        args: Map<String, Value>,
        allowed: bool,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let (adapter, app, name) = (self.adapter(), app.clone(), name.to_string());
        async move {
            let adapter = adapter?;
            adapter.call_for_app(&app, &name, args, allowed).await
        }
        .boxed()
    }

    fn resources(
        &self,
        app: &AppRef,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let (adapter, server) = (self.adapter(), app.server.clone());
        async move {
            let adapter = adapter?;
            let conn = adapter
                .ready(&server, Need::Handshake)
                .await
                .map_err(|why| why.reason(&server))?
                .conn;
            let options = adapter.plain_request(&server);
            conn.request(method, params, options)
                .await
                .map_err(|e| e.to_string())
        }
        .boxed()
    }

    fn ask(&self, app: &AppRef, asks: Vec<Ask>) -> BoxFuture<'static, Grant> {
        let Ok(adapter) = self.adapter() else {
            return async { Grant::Deny }.boxed();
        };
        if let [Ask::Gated { name, args }] = asks.as_slice() {
            // Asked alone: the approval gate's own dialog, whose session grants it keeps.
            let (app, name, args) = (app.clone(), name.clone(), args.clone());
            return async move {
                match adapter.gate_for_app(&app, &name, &args).await {
                    Ok(_) => Grant::Once,
                    Err(_) => Grant::Deny,
                }
            }
            .boxed();
        }
        let wait = adapter.config.settings.approval_timeout;
        let call = |name: &str, args: &Value, gated: bool| {
            let tool = adapter.app_tool(&app.server, name);
            match (gated, &tool, adapter.server(&app.server)) {
                (true, Some(tool), Some(server)) => {
                    let subject = crate::approval::Subject::Tool(tool);
                    let request =
                        crate::approval::request::new(&subject, server, args, &adapter.home());
                    present::call_details(&request)
                }
                _ => present::arguments(args, tool.as_ref().and_then(ToolInfo::input_schema)),
            }
        };
        let question = consent_question(app, &asks, call, wait);
        let asked = adapter.host.approve(question, wait);
        let server = app.server.clone();
        let mut kept: Vec<&'static str> = asks.iter().filter_map(Ask::grant_key).collect();
        kept.sort();
        kept.dedup();
        async move {
            let grant = match asked.await {
                Some(Answer::Picked(choice)) => match choice {
                    Choice::Once => Grant::Once,
                    Choice::Session => Grant::Session,
                    Choice::Always => Grant::Always,
                    // Deny, or an option this dialog did not offer.
                    Choice::Tool | Choice::Server | Choice::Deny => Grant::Deny,
                },
                _ => Grant::Deny,
            };
            if grant == Grant::Always {
                // Not kept (a file that cannot be written): it still holds for this app session.
                for what in kept {
                    if let Some(always) = adapter.app_grant(&server, what) {
                        let _ = adapter.apps.grants.add(always);
                    }
                }
            }
            grant
        }
        .boxed()
    }

    fn granted_always(&self, server: &str, ask: &Ask) -> bool {
        let (Ok(adapter), Some(what)) = (self.adapter(), ask.grant_key()) else {
            return false;
        };
        adapter
            .app_grant(server, what)
            .is_some_and(|grant| adapter.apps.grants.covers(&grant))
    }

    fn approval_asks(&self, app: &AppRef, name: &str) -> bool {
        let Ok(adapter) = self.adapter() else {
            return false;
        };
        let (Some(server), Some(tool)) = (
            adapter.server(&app.server),
            adapter.app_tool(&app.server, name),
        ) else {
            return false;
        };
        let subject = crate::approval::Subject::Tool(&tool);
        subject.asks(server) && !adapter.approval.covers(server, &subject)
    }

    fn to_conversation(&self, app: &AppRef, kind: ToConversation, text: String) {
        let Ok(adapter) = self.adapter() else {
            return;
        };
        let kind = match kind {
            ToConversation::Message => "message",
            ToConversation::Context => "context",
        };
        adapter.events.emit(Event::App {
            kind: kind.into(),
            server: app.server.clone(),
            tool: app.tool.clone(),
            url: String::new(),
            text,
        });
    }

    fn log(&self, app: &AppRef, params: &Value) {
        let Ok(adapter) = self.adapter() else {
            return;
        };
        let mut message = LogMessage::from_params(params);
        let from = format!("app of {}", app.tool);
        message.logger = Some(match message.logger {
            Some(logger) => format!("{from}: {logger}"),
            None => from,
        });
        adapter.app_log(&app.server, message);
    }

    fn open_link(&self, url: &Link) -> Result<(), String> {
        let adapter = self.adapter()?;
        crate::browser::open(url, &adapter.env).map(|_| ())
    }

    fn ended(&self, app: &AppRef) {
        if let Ok(adapter) = self.adapter() {
            adapter.events.emit(Event::App {
                kind: ENDED.into(),
                server: app.server.clone(),
                tool: app.tool.clone(),
                url: String::new(),
                text: String::new(),
            });
        }
    }
}

/// Characters of a message the app would send shown in its ask, at most.
const MESSAGE_CHARS: usize = 160;

/// One dialog for everything the app asks at once, in the approval dialog's shape: each ask
/// (a call with its arguments as the approval dialog shows them: cleaned, clipped, credentials
/// hidden; `call` gives them, with the hints and why for a call the approval gate asks about),
/// one answer for all.
fn consent_question(
    app: &AppRef,
    asks: &[Ask],
    call: impl Fn(&str, &Value, bool) -> String,
    wait: std::time::Duration,
) -> impl FnOnce(u64) -> present::Question {
    let mut lines = vec![format!(
        "The app of {} (MCP server \"{}\") asks:",
        clean::line(&app.tool),
        clean::line(&app.server)
    )];
    let mut for_session = false;
    for ask in asks {
        for_session |= ask.grant_key().is_some();
        lines.push(match ask {
            Ask::Conversation(text) => format!(
                "- to write to this conversation (its messages reach the model, marked as the app's): \"{}\"",
                clean::excerpt(text, MESSAGE_CHARS)
            ),
            Ask::Tools { name, args } => format!(
                "- to call tools of its server (now {}; only those the server lets apps call)\n  {}",
                clean::line(name),
                call(name, args, false).replace('\n', "\n  ")
            ),
            Ask::Gated { name, args } => format!(
                "- to run {} (`approveTools` asks before each call: allowed this once)\n  {}",
                clean::line(name),
                call(name, args, true).replace('\n', "\n  ")
            ),
            Ask::Link(url) => format!("- to open {url} in your browser"),
        });
    }
    if asks.len() > 1 {
        lines.push(format!("One answer for all {}.", asks.len()));
    }
    let offer = |label: String, choice| present::Offered {
        label,
        choice,
        remember: None,
    };
    let mut options = vec![offer("Allow once".into(), Choice::Once)];
    if for_session {
        options.push(offer("Allow for this app session".into(), Choice::Session));
        let always = format!(
            "Always allow the apps of \"{}\" (until /mcp apps revoke)",
            clean::line(&app.server)
        );
        options.push(offer(always, Choice::Always));
    }
    options.push(offer("Deny".into(), Choice::Deny));
    let (server, title) = (app.server.clone(), lines.join("\n"));
    move |id| present::Question {
        id,
        server,
        title,
        options,
        timeout: wait,
    }
}
