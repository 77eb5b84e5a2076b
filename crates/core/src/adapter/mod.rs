//! The gateway: configuration, the server registry, the connection pool and the modes the `mcp`
//! tool offers, behind one object that the napi binding (and tests) drive.
//!
//! Where things are. `Adapter` is the facade (`facade`: one line per method, naming the service
//! or the kernel that answers) over one `Kernel` that the services borrow.
//!
//! The kernel (its fields here; its code in): `open` (its options, the config and cache read,
//! the kernel assembled) · `servers` (the registry: one record per server, and the catalog view
//! derived from it) · `reach` (one module behind one small API, named in its doc; in `reach`
//! itself what its files share, each server's metadata in step with what it lists and the cache
//! writes; `connect`, the one way to reach a server; `unlisted`, servers whose tools are not
//! known yet, listed under one bound; `lifecycle`, start-up, cache fill, the notices watched,
//! health loop, idle stop, shutdown; `family`) · `errors` (codes, why a server is unavailable) ·
//! `output` (every answer within the output guard) · `host` (what servers ask of the session,
//! and the same host as the pool holds it); here, what every part uses (`caller`, `trimmed`)
//! and which tools go direct (asked by `Direct` and by `reach`'s listing of the servers whose
//! tools are declared). Three parts of it own their state behind a small API in their feature's
//! file: `sign_in::SignIn` (credentials and sign-ins; the connect path asks it what to send,
//! tells it of a refusal and asks whether a sign-in came since), `approval::Approval` (the gate
//! every use of a server passes: its grants and `--yes`) and `apps::AppsState`.
//!
//! The feature services, each a struct that borrows the kernel (`From<&Arc<Kernel>>`), in its
//! own file or directory: `Tool` (tool: the `mcp` tool's parameters parsed once and run by one
//! match in `request`, the read-only modes and connect in `modes`, a call in `call`) · `Prompts`
//! (prompts) · `Resources` (pi_resources, and `read` in it) · `Direct` (direct: direct tools
//! and the system prompt's servers section; `exposed` in it) · `Doctor` (doctor) · `Status`
//! (status, and `shared` in it) · `SignIns` (sign_in/flows: login, logout, the pasted
//! redirect, `/mcp-auth`, the autoAuth retry) · `McpApps` (apps) · `ConfigEdits` (config_edit,
//! and `add`, `setup`, `exposure` in it).

/// A feature service is made from the kernel it borrows for one request:
/// `Prompts::from(&kernel)`.
macro_rules! borrows_kernel {
    ($service:ident) => {
        impl<'a> From<&'a std::sync::Arc<$crate::adapter::Kernel>> for $service<'a> {
            fn from(kernel: &'a std::sync::Arc<$crate::adapter::Kernel>) -> Self {
                $service { kernel }
            }
        }
    };
}
use borrows_kernel;

mod approval;
mod apps;
mod catalog_view;
mod config_edit;
mod detail_entries;
mod details;
mod direct;
mod doctor;
mod errors;
mod facade;
mod host;
mod open;
mod outcome;
mod output;
mod pi_resources;
mod prompts;
mod reach;
mod servers;
mod sign_in;
mod status;
mod tool;

pub use config_edit::{
    DirectCost, ExposedTool, ExposureChange, ExposureError, ExposurePreview, SavedChange,
    ServerExposure, SetupRequest, SwitchError,
};
pub use detail_entries::*;
pub use details::*;
pub use direct::{DirectToolDefinition, DirectTools, Reach, ToolAnnotations, ToolNamespace};
pub use errors::{ErrorCode, Unavailable};
pub use host::{CredentialSource, FrontEnd};
pub use open::{OpenOptions, RunTools};
pub use outcome::{Mode, Outcome};
pub use prompts::{Completion, PromptCommand};
pub use reach::{Bounds, DeclaredListing, StartOptions, Timing};
pub use servers::ServerMeta;
pub use tool::{CallOptions, Page, Request, DEFAULT_LIMIT, DEFAULT_LIST_LIMIT};

use crate::config::DEFAULT_REQUEST_TIMEOUT;
use crate::config::{self, Config, DirectTools as Selection, Env, Exposure, ServerConfig};
use crate::events::{EventSink, Events};
use crate::output_guard::{Limits, DEFAULT_LIMITS};
use pi_mcp_connection::bounded_read::FileLimits;
use pi_mcp_connection::broker::family::LocalSession;
use pi_mcp_connection::pool::{Broker, Caller, Pool, RequestOptions};
use pi_mcp_connection::unix_time::now_ms;
use reach::{ListQueue, Startup};
use serde_json::Value;
use servers::Servers;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The `mcp` tool as Pi registers it.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub label: String,
    pub description: String,
    pub prompt_snippet: String,
    pub parameters: serde_json::Value,
}

/// The gateway as the binding and tests drive it: the kernel, and the feature services
/// (`facade`) that borrow it.
pub struct Adapter {
    kernel: Arc<Kernel>,
}

/// What every feature borrows: the config, the server registry, the pool and broker, the
/// session host, the connect path and the background work; sign-in, approval and the apps'
/// state are parts of it that keep their fields to themselves.
///
/// Its crate-visible API is the reach path's (`reach`): `ready` (with `Need`, `Ready`),
/// `reconnect`, `fail`, `refused`, `list_unknown` (with `Purpose`, `Listed`), `being_listed`,
/// `stop_if_unwanted`, `listed_on`, `cache_known_as`, `begin_deferred_fill`, and its state's
/// types `Startup` and `ListQueue`. Beside it the services use, across files: the output guard
/// (`within_guard` for calls and reads, `bounded` for metadata, whose limits are the kernel's
/// `metadata_limits`), approval's gate (`approved`), the apps' hook around a call
/// (`app_call_began`, which hands back what tells the app each result) and the tool's `send`
/// for an app's call.
struct Kernel {
    cwd: PathBuf,
    /// Pi's `--tools` / `--exclude-tools`.
    run_tools: RunTools,
    agent_dir: PathBuf,
    env: Env,
    config: Config,
    cache_path: PathBuf,
    /// Remembered `npx`/`uvx` resolutions (`<agentDir>/mcp-npx-cache.json`).
    launch_memo: PathBuf,
    file_limits: FileLimits,
    cache_warning: Option<String>,
    /// Everything known about each configured server, and the catalog derived from it.
    servers: Servers,
    /// Credentials and sign-ins, which the connect path asks.
    sign_in: sign_in::SignIn,
    /// Opened by `pi-mcp` (see [`OpenOptions::cli`]).
    cli: bool,
    /// The approval gate's grants, and `--yes`.
    approval: approval::Approval,
    pool: Arc<Pool>,
    /// Where shared servers run (one broker per user and agent dir); who this session is.
    broker: Arc<Broker>,
    /// The session as its family (the other sessions of this process, and beyond) knows it.
    in_family: Arc<LocalSession>,
    /// Answers what servers ask (roots, logs, and through a front end, people and models), and
    /// holds where the credentials of Pi's providers come from.
    host: Arc<host::SessionHost>,
    /// What `start` sets going (the pool's notices, the cache fill).
    startup: Startup,
    /// Listings of servers whose tools are not known, under one bound.
    listings: ListQueue,
    timing: Timing,
    bounds: Bounds,
    events: Events,
    /// Cancelled by `shutdown` (and drop): stops background work, refuses new work.
    closing: CancellationToken,
    /// MCP Apps, and the "always" the user gave them.
    apps: apps::AppsState,
    /// Every task the adapter spawns; `shutdown` waits for them. Long-lived ones hold the
    /// adapter weakly, so dropping it stops them too.
    tasks: TaskTracker,
}

impl Kernel {
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The limits of metadata answers (lists, descriptions, schemas): the output guard's, or
    /// its defaults when it is off.
    fn metadata_limits(&self) -> Limits {
        self.config.settings.output_guard.unwrap_or(DEFAULT_LIMITS)
    }

    /// The `mcp` tool as registered with Pi; byte-stable for a given config.
    pub fn tool_definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "mcp".into(),
            label: "MCP".into(),
            description: crate::render::tool_description(&self.server_summaries()),
            prompt_snippet: "MCP gateway: status, search, describe and call tools of MCP servers"
                .into(),
            parameters: crate::render::tool_parameters(),
        }
    }

    /// Config problems and cache warnings, one line each (notes are left to `doctor`).
    pub fn diagnostics(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .config
            .diagnostics
            .iter()
            .filter(|d| d.level != config::Level::Note)
            .map(|d| d.to_string())
            .collect();
        lines.extend(self.cache_warning.clone());
        lines
    }

    /// Where servers' questions for a person or a model go from now on.
    pub fn attach_front_end(&self, front_end: Arc<dyn FrontEnd>) {
        self.host.attach(front_end);
    }

    /// The session's directory moved to `cwd`: servers keep running and are told their roots
    /// changed (`notifications/roots/list_changed`, where they were offered roots and the
    /// revision has it); they ask for the new list. The config stays the one opened.
    pub async fn set_cwd(&self, cwd: &std::path::Path) {
        if !self.host.set_cwd(cwd) {
            return;
        }
        let live: Vec<_> = self
            .pool
            .servers()
            .iter()
            .filter_map(|name| self.pool.peek(name))
            .collect();
        futures::future::join_all(live.iter().map(|conn| conn.roots_changed())).await;
    }

    /// Field `name` of open question `id` (see `FrontEnd::elicit`) as what the front end got for
    /// it (`None`: left empty), or the error to show before asking again.
    pub fn take_field(
        &self,
        id: u64,
        name: &str,
        answer: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        self.host.take_field(id, name, answer)
    }

    /// Opens `url` (a server's URL question the user agreed to) in the browser; what to tell the
    /// user when it is not opened (it holds hidden characters, or no browser could be started).
    pub fn open_url(&self, url: &str) -> Option<String> {
        let link = match pi_mcp_connection::clean::Link::parse(url) {
            Ok(link) => link,
            Err(why) => return Some(format!("The page was not opened: {why}.")),
        };
        crate::browser::open(&link, &self.env).err().map(|why| {
            format!(
                "No browser was opened ({why}): open {} yourself.",
                link.shown()
            )
        })
    }

    /// Where credentials of Pi's providers come from (the Pi extension sets it).
    pub fn set_credentials(&self, source: CredentialSource) {
        self.host.set_credentials(source);
    }

    pub fn on_event(&self, sink: EventSink) {
        self.events.set(sink);
    }

    /// Names of the enabled servers (with `include_disabled`, of all), in config order.
    pub fn server_names(&self, include_disabled: bool) -> Vec<&str> {
        self.servers.names(include_disabled)
    }

    /// The enabled servers with their `description`, for the `mcp` tool's description.
    fn server_summaries(&self) -> Vec<(&str, Option<&str>)> {
        self.config
            .servers
            .iter()
            .filter(|s| !s.disabled)
            .map(|s| (s.name.as_str(), s.description.as_deref()))
            .collect()
    }

    /// `HOME` as servers see it (paths under it are shown as `~/…`).
    fn home(&self) -> String {
        self.env.get("HOME").cloned().unwrap_or_default()
    }

    fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.config(name)
    }

    fn request_timeout(&self, server: &ServerConfig) -> Duration {
        server
            .request_timeout_ms
            .or(self.config.settings.request_timeout_ms)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT)
    }

    /// A request that is not a tool call (a prompt, an app's document or resources): bounded
    /// by the server's request timeout alone, cancelled when the session ends.
    fn plain_request(&self, server: &str) -> RequestOptions {
        let timeout = self
            .server(server)
            .map_or(DEFAULT_REQUEST_TIMEOUT, |s| self.request_timeout(s));
        RequestOptions {
            timeout,
            cancel: self.closing.child_token(),
            on_progress: None,
            caller: None,
            total: Some(timeout),
            tool: None,
        }
    }

    /// Cancels the call started with `call_id` (Pi's abort signal).
    pub fn cancel(&self, call_id: &str) {
        self.servers.cancel_call(call_id);
    }
}

/// Which tools go direct, from the config and the registry: asked by the direct tools (`direct`)
/// and by the listing queue (`reach`).
impl Kernel {
    /// Enabled servers some of whose tools Pi declares to the model (direct tools, `direct` in
    /// `exposure`/`toolExposure`) and whose tools are not known yet.
    fn declared_unlisted(&self) -> Vec<String> {
        let direct: Vec<String> = self
            .direct_selection()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        self.servers
            .configs()
            .filter(|s| !s.disabled && !self.servers.has_meta(&s.name))
            .filter(|s| {
                direct.contains(&s.name) || s.exposure.possible().contains(&Exposure::Direct)
            })
            .map(|s| s.name.clone())
            .collect()
    }

    /// Per enabled server, which tools go direct: `MCP_DIRECT_TOOLS` when set, else the config.
    fn direct_selection(&self) -> Vec<(String, Selection)> {
        let enabled = self.servers.configs().filter(|s| !s.disabled);
        match self.env.get("MCP_DIRECT_TOOLS") {
            Some(spec) => {
                let selectors: Vec<(&str, Option<&str>)> = spec
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && *s != NONE_SELECTED)
                    .map(|s| match s.split_once('/') {
                        Some((server, tool)) => (server, Some(tool)),
                        None => (s, None),
                    })
                    .collect();
                enabled
                    .filter_map(|server| {
                        let mine = selectors.iter().filter(|(s, _)| *s == server.name);
                        let mut names = Vec::new();
                        for (_, tool) in mine {
                            match tool {
                                None => return Some((server.name.clone(), Selection::All)),
                                Some(tool) => names.push(tool.to_string()),
                            }
                        }
                        (!names.is_empty()).then(|| (server.name.clone(), Selection::Only(names)))
                    })
                    .collect()
            }
            None => enabled
                .map(|server| {
                    let wanted = server.direct_selection(self.config.settings.direct_tools);
                    (server.name.clone(), wanted)
                })
                .filter(|(_, wanted)| *wanted != Selection::None)
                .collect(),
        }
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.closing.cancel();
        self.pool.abort_all();
    }
}

/// `MCP_DIRECT_TOOLS` value meaning "no direct tools at all".
const NONE_SELECTED: &str = "__none__";

/// Whom a call is made for: its call id, or an id of its own for a call that has none (nobody
/// can cancel it), so that the questions its server asks during it still end with it.
fn caller(call_id: Option<&str>) -> Caller {
    static UNNAMED: AtomicU64 = AtomicU64::new(1);
    match call_id {
        Some(id) => id.into(),
        None => format!("unnamed-call-{}", UNNAMED.fetch_add(1, Ordering::Relaxed)).into(),
    }
}

/// The string parameter `key`, trimmed; `None` when absent, not a string, or blank.
fn trimmed<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}
