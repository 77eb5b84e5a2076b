//! The gateway: configuration, cached metadata, the connection pool and the modes the `mcp`
//! tool offers, behind one object that the napi binding (and tests) drive.

mod auth;
mod call;
mod catalog_state;
mod connecting;
mod direct;
mod doctor;
mod errors;
mod lifecycle;
mod modes;
mod outcome;

pub use call::{CallOptions, DEFAULT_LIMIT};
pub use catalog_state::{glob_match, ServerMeta};
pub use direct::DirectToolSet;
pub use errors::{ErrorCode, Unavailable};
pub use lifecycle::Timing;
pub use outcome::Outcome;

use crate::bounded_read::FileLimits;
use crate::cache::{self, Loaded};
use crate::config::{self, Config, Env, LoadOptions, ServerConfig, Transport};
use crate::events::{EventSink, Events};
use crate::pool::{Pool, RemoteKind};
use catalog_state::CatalogState;
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Default per-request timeout (`requestTimeoutMs` overrides it).
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub cwd: PathBuf,
    pub agent_dir: Option<PathBuf>,
    /// Replaces the Pi global config file (`--mcp-config`).
    pub config_path: Option<PathBuf>,
    /// The environment servers inherit and `${VAR}` reads; the process environment when `None`.
    pub env: Option<Env>,
    pub timing: Timing,
    /// Whether the project's configs may be used (Pi's project trust); `None`: Pi's saved
    /// decision, else trusted.
    pub project_trusted: Option<bool>,
    /// Caps on the config, cache, env and token files read.
    pub file_limits: FileLimits,
}

struct Failure {
    at: Instant,
    cause: Unavailable,
}

pub struct Adapter {
    cwd: PathBuf,
    agent_dir: PathBuf,
    env: Env,
    config: Config,
    cache_path: PathBuf,
    /// Remembered `npx`/`uvx` resolutions (`<agentDir>/mcp-npx-cache.json`).
    launch_memo: PathBuf,
    file_limits: FileLimits,
    cache_warning: Option<String>,
    catalog: RwLock<CatalogState>,
    pool: Arc<Pool>,
    notices: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<crate::pool::Notice>>>,
    failures: Mutex<HashMap<String, Failure>>,
    /// The transport each remote server answered on, tried first when it reconnects.
    remote_kinds: Mutex<HashMap<String, RemoteKind>>,
    /// Servers the model has called this session (lazy-keep-alive ones stay up after that).
    used: Mutex<HashSet<String>>,
    timing: Timing,
    calls: Mutex<HashMap<String, CancellationToken>>,
    events: Events,
    /// Cancelled by `shutdown`: stops background work.
    closing: CancellationToken,
    /// Cache writes in flight, waited for by `shutdown`.
    background: TaskTracker,
}

impl Adapter {
    /// Reads config and cache (no server I/O): fast enough for Pi's extension loading.
    pub fn open(opts: OpenOptions) -> Arc<Adapter> {
        let env = opts.env.unwrap_or_else(|| std::env::vars().collect());
        let agent_dir = opts.agent_dir.unwrap_or_else(|| config::agent_dir(&env));
        let config = config::load(&LoadOptions {
            cwd: opts.cwd.clone(),
            agent_dir: agent_dir.clone(),
            config_path: opts.config_path,
            env: env.clone(),
            project_trusted: opts.project_trusted,
            limits: opts.file_limits,
        });
        let cache_path = cache::cache_path(&agent_dir);
        let (cached, cache_warning) = match cache::load(&cache_path, opts.file_limits.cache_bytes) {
            Loaded::Missing => (None, None),
            Loaded::Ok(cache) => (Some(cache), None),
            Loaded::Unusable { warning } => (None, Some(warning)),
        };
        let now = now_ms();
        // Entries are moved, not copied: a large catalog is cloned nowhere on the way to Pi.
        let mut cached = cached.map(|c| c.servers).unwrap_or_default();
        let (mut metas, mut remote_kinds) = (Vec::new(), HashMap::new());
        for server in &config.servers {
            let Some(entry) = cached.remove(&server.name) else {
                continue;
            };
            let hash = cache::config_hash(&server.entry, &env);
            // The transport holds while the config does, however old the tool list.
            let kind = entry.transport.as_deref().and_then(RemoteKind::from_name);
            if let Some(kind) = kind.filter(|_| entry.config_hash == hash) {
                remote_kinds.insert(server.name.clone(), kind);
            }
            if entry.is_valid(&hash, now) {
                let meta = ServerMeta {
                    tools: entry.tools.into_iter().map(Arc::new).collect(),
                    resources: entry.resources,
                    prompts: entry.prompts,
                    instructions: entry.instructions,
                    live_connection: None,
                };
                metas.push((server.name.clone(), meta));
            }
        }
        let catalog = CatalogState::new(
            metas.into_iter().collect(),
            &config.servers,
            config.settings.tool_prefix,
        );
        let (pool, notices) = Pool::new();
        Arc::new(Adapter {
            cwd: opts.cwd,
            agent_dir: agent_dir.clone(),
            env,
            config,
            cache_path,
            launch_memo: agent_dir.join("mcp-npx-cache.json"),
            file_limits: opts.file_limits,
            cache_warning,
            catalog: RwLock::new(catalog),
            pool,
            notices: Mutex::new(Some(notices)),
            failures: Mutex::new(HashMap::new()),
            remote_kinds: Mutex::new(remote_kinds),
            used: Mutex::new(HashSet::new()),
            timing: opts.timing,
            calls: Mutex::new(HashMap::new()),
            events: Events::default(),
            closing: CancellationToken::new(),
            background: TaskTracker::new(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The `mcp` tool as registered with Pi; byte-stable for a given config.
    pub fn tool_definition(&self) -> serde_json::Value {
        serde_json::json!({
            "name": "mcp",
            "label": "MCP",
            "description": crate::render::tool_description(&self.server_names()),
            "promptSnippet": "MCP gateway: status, search, describe and call tools of MCP servers",
            "parameters": crate::render::tool_parameters(),
        })
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

    pub fn on_event(&self, sink: EventSink) {
        self.events.set(sink);
    }

    /// Names of the enabled servers, in config order.
    pub fn server_names(&self) -> Vec<&str> {
        self.config
            .servers
            .iter()
            .filter(|s| !s.disabled)
            .map(|s| s.name.as_str())
            .collect()
    }

    /// `HOME` as servers see it (paths under it are shown as `~/…`).
    fn home(&self) -> String {
        self.env.get("HOME").cloned().unwrap_or_default()
    }

    /// Why a name that is not a configured server cannot be used.
    fn not_configured(&self) -> Unavailable {
        Unavailable::NotConfigured {
            configured: self
                .server_names()
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }

    fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.config.servers.iter().find(|s| s.name == name)
    }

    fn request_timeout(&self, server: &ServerConfig) -> Duration {
        server
            .request_timeout_ms
            .or(self.config.settings.request_timeout_ms)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT)
    }

    /// Background start-up, never awaited by Pi: connects `eager` and `keep-alive` servers, and
    /// every server without cached metadata (all of them on the very first run) to fill the
    /// cache; then runs the health loop. Calling it again does nothing.
    pub fn start(self: &Arc<Self>) {
        let Some(notices) = self.notices.lock().take() else {
            return;
        };
        tokio::spawn(self.clone().watch_notices(notices));
        let stdio =
            |s: &ServerConfig| !s.disabled && matches!(s.transport, Transport::Stdio { .. });
        if self.config.servers.iter().any(stdio) {
            crate::pool::watchdog::start_in_background(); // before any server: off a call's path
        }
        let servers: Vec<String> = {
            let catalog = self.catalog.read();
            self.config
                .servers
                .iter()
                .filter(|s| {
                    !s.disabled
                        && (s.lifecycle.connects_at_start() || catalog.meta(&s.name).is_none())
                })
                .map(|s| s.name.clone())
                .collect()
        };
        let this = self.clone();
        tokio::spawn(async move {
            use futures::StreamExt;
            futures::stream::iter(servers)
                .for_each_concurrent(lifecycle::PARALLEL_CONNECTS, |name: String| {
                    let this = this.clone();
                    async move {
                        let _ = this.connected(&name).await;
                    }
                })
                .await;
        });
        tokio::spawn(self.clone().health_loop());
    }

    /// Cancels running calls and closes every server (bounded in time).
    pub async fn shutdown(&self) {
        self.closing.cancel();
        for token in self.calls.lock().values() {
            token.cancel();
        }
        self.background.close();
        let stopped = futures::future::join(self.pool.close_all(), self.background.wait());
        let _ = tokio::time::timeout(Duration::from_secs(8), stopped).await;
    }

    /// Cancels the call started with `call_id` (Pi's abort signal).
    pub fn cancel(&self, call_id: &str) {
        if let Some(token) = self.calls.lock().get(call_id) {
            token.cancel();
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        self.closing.cancel();
        self.pool.abort_all();
    }
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}
