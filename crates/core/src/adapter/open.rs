//! Opening the adapter: its options, the config and the metadata cache read (no server I/O),
//! the kernel assembled from them, and the protocol trace started.

use super::reach::{Bounds, ListQueue, Startup, Timing};
use super::servers::{Cached, Servers};
use super::{approval, apps, host, sign_in, Adapter, Kernel, ServerMeta};
use crate::cache::{self, Loaded};
use crate::config::{self, Env, LoadOptions};
use crate::events::Events;
use pi_mcp_connection::bounded_read::FileLimits;
use pi_mcp_connection::broker::family::{family, LocalSession};
use pi_mcp_connection::pool::{Broker, Pool, RemoteKind};
use pi_mcp_connection::trace::Trace;
use pi_mcp_connection::unix_time::now_ms;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub cwd: PathBuf,
    pub agent_dir: Option<PathBuf>,
    /// Replaces the Pi global config file (`--mcp-config`).
    pub config_path: Option<PathBuf>,
    /// The environment servers inherit and `${VAR}` reads; the process environment when `None`.
    pub env: Option<Env>,
    pub timing: Timing,
    pub bounds: Bounds,
    /// Whether the project's configs may be used (Pi's project trust); `None`: Pi's saved
    /// decision, else trusted.
    pub project_trusted: Option<bool>,
    /// Caps on the config, cache, env and token files read.
    pub file_limits: FileLimits,
    /// Servers other Pi extensions registered.
    pub registered: Vec<config::Registered>,
    /// Opened by the `pi-mcp` command line: texts name its commands (`pi-mcp auth`), and a
    /// sign-in can be shown (on the terminal).
    pub cli: bool,
    /// Overrides `settings.autoAuth` (`pi-mcp --auth`).
    pub auto_auth: Option<bool>,
    /// Pi's `--tools` / `--exclude-tools` for this run, as they bound MCP tools.
    pub run_tools: RunTools,
    /// Read this config instead of the files (a server `add` tries before saving it).
    pub only: Option<config::Only>,
    /// `pi-mcp call --yes`: uses `approveTools` asks for go ahead unasked (outside Pi, or where
    /// `allowYesInsidePi` allows it).
    pub assume_yes: bool,
    /// Who this session is when another session of its family asks for it
    /// (`subagent "worker"`, `pi -p`).
    pub family_label: Option<String>,
}

/// Which MCP tools Pi's command line leaves callable in this run. Entries are Pi's tool names
/// (`mcp__<server>__<tool>`) or patterns with `*`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTools {
    /// `--tools`, when one of its entries names MCP tools (starts with `mcp__`).
    pub allow: Option<Vec<String>>,
    /// `--exclude-tools`.
    pub deny: Vec<String>,
}

impl Adapter {
    /// Reads config and cache (no server I/O): fast enough for Pi's extension loading.
    pub fn open(opts: OpenOptions) -> Arc<Adapter> {
        Arc::new(Adapter {
            kernel: Kernel::open(opts),
        })
    }
}

impl Kernel {
    fn open(opts: OpenOptions) -> Arc<Kernel> {
        let env = opts.env.unwrap_or_else(|| std::env::vars().collect());
        let agent_dir = opts.agent_dir.unwrap_or_else(|| config::agent_dir(&env));
        let load = LoadOptions {
            cwd: opts.cwd.clone(),
            agent_dir: agent_dir.clone(),
            config_path: opts.config_path,
            env: env.clone(),
            project_trusted: opts.project_trusted,
            limits: opts.file_limits,
            registered: opts.registered,
        };
        let config = match &opts.only {
            Some(only) => config::load_only(&load, only),
            None => config::load(&load),
        };
        let cache_path = cache::cache_path(&agent_dir);
        let (cached, cache_warning) = match cache::load(&cache_path, opts.file_limits.cache_bytes) {
            Loaded::Missing => (None, None),
            Loaded::Ok(cache) => (Some(cache), None),
            Loaded::Unusable { warning } => (None, Some(warning)),
        };
        let now = now_ms();
        // Entries are moved, not copied: a large catalog is cloned nowhere on the way to Pi.
        let mut cached = cached.map(|c| c.servers).unwrap_or_default();
        let mut known = HashMap::new();
        for server in &config.servers {
            let Some(entry) = cached.remove(&server.name) else {
                continue;
            };
            let hash = cache::config_hash(&server.entry, &env);
            // The transport holds while the config does, however old the tool list.
            let remote_kind = entry
                .transport
                .as_deref()
                .and_then(RemoteKind::from_name)
                .filter(|_| entry.config_hash == hash);
            let meta = entry.is_valid(&hash, now).then(|| ServerMeta {
                tools: entry.tools.into_iter().map(Arc::new).collect(),
                resources: entry.resources,
                templates: entry.templates,
                prompts: entry.prompts,
                instructions: entry.instructions,
                left_out: entry.left_out,
                live_connection: None,
                cut: None,
            });
            known.insert(server.name.clone(), Cached { meta, remote_kind });
        }
        let servers = Servers::new(config.servers.clone(), config.settings.tool_prefix, known);
        let auto_approve = config
            .servers
            .iter()
            .filter(|s| config.client_settings(s).sampling_auto_approve())
            .map(|s| s.name.clone())
            .collect();
        let (host, asked) = host::SessionHost::open(&opts.cwd, &agent_dir, auto_approve);
        start_trace(&config, &opts.cwd, &host);
        let (pool, notices) = Pool::with_host(asked.clone());
        let label = opts.family_label.map(|l| {
            pi_mcp_connection::clean::line(&l)
                .chars()
                .take(80)
                .collect()
        });
        let broker = Arc::new(Broker::new(
            &agent_dir,
            &env,
            pi_mcp_connection::helper::path(),
            label,
        ));
        family().inherit(&env);
        broker.set_ui(opts.cli);
        let approval = approval::Approval::new(opts.assume_yes);
        let answerer = approval.for_family(
            host.clone(),
            config.settings.approval_timeout,
            env.get("HOME").cloned().unwrap_or_default(),
        );
        let in_family = family().enter(LocalSession {
            info: broker.clone(),
            host: asked,
            answerer,
        });
        let auto_auth = opts.auto_auth.unwrap_or(config.settings.auto_auth);
        let bounds = opts.bounds.lowered_from_default();
        let sign_in = sign_in::SignIn::new(&config, &load, auto_auth, opts.cli, &host);
        Arc::new(Kernel {
            run_tools: opts.run_tools,
            cwd: opts.cwd,
            agent_dir: agent_dir.clone(),
            env,
            config,
            cache_path,
            launch_memo: agent_dir.join("mcp-npx-cache.json"),
            file_limits: opts.file_limits,
            cache_warning,
            servers,
            sign_in,
            cli: opts.cli,
            approval,
            pool,
            broker,
            in_family,
            host,
            startup: Startup::new(notices),
            listings: ListQueue::new(bounds.fill_concurrency),
            timing: opts.timing,
            bounds,
            events: Events::default(),
            closing: CancellationToken::new(),
            tasks: TaskTracker::new(),
            apps: apps::AppsState::new(&agent_dir),
        })
    }
}

/// Which servers the protocol trace follows (`trace` per server, else `settings.trace.enabled`)
/// and where it is written (`settings.trace.file`, relative to the session's directory, else
/// `.pi/mcp-traces/` there): the trace of the servers that are traced starts, if any; nothing is
/// written before the first message.
fn start_trace(config: &config::Config, cwd: &Path, host: &host::SessionHost) {
    let settings = &config.settings.trace;
    let traced: HashSet<String> = config
        .servers
        .iter()
        .filter(|s| s.trace.unwrap_or(settings.enabled))
        .map(|s| s.name.clone())
        .collect();
    if traced.is_empty() {
        return;
    }
    let path = match &settings.file {
        Some(file) => cwd.join(file),
        None => Trace::default_path(cwd),
    };
    let trace = Trace::new(path, settings.max_bytes, settings.max_events);
    host.set_trace(trace, traced);
}
