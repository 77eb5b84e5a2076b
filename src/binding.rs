//! The napi surface: converts between JS and the core's types, nothing else.

#[macro_use]
mod mirror;
mod detail_entries;
mod details;
mod front_end;
mod json;

use details::OutcomeDetails;
use front_end::{FieldTaken, FrontEndCallbacks, JsFrontEnd, SessionEntry};
use json::{JsonObject, JsonValue, McpParams};
use mirror::{
    Completion, DeclaredListing, DirectTools, ExposureChange, ExposurePreview, Js, LifecycleEvent,
    PromptCommand, SavedChange, SetupRequest, ToolDefinition,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use pi_mcp_connection::bounded_read::FileLimits;
use pi_mcp_core::adapter::{self, Adapter, Bounds, CallOptions, Timing};
use pi_mcp_core::render::Block;
use pi_mcp_core::search::SearchOptions;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[napi(object)]
#[derive(Default)]
pub struct OpenOptions {
    /// The session's working directory (project config, default server cwd); `process.cwd()` if absent.
    pub cwd: Option<String>,
    /// Pi's agent dir; `PI_CODING_AGENT_DIR` or `~/.pi/agent` if absent.
    pub agent_dir: Option<String>,
    /// A config file that replaces `<agentDir>/mcp.json` (`--mcp-config`).
    pub config_path: Option<String>,
    /// The environment for `${VAR}` and for servers; `process.env` if absent.
    pub env: Option<HashMap<String, String>>,
    /// How often keep-alive servers are checked and idle ones stopped (default 30000).
    pub health_interval_ms: Option<u32>,
    /// How long a server that failed to connect is left alone (default 60000).
    pub failure_backoff_ms: Option<u32>,
    /// How long `shutdown` lets listings under way finish (default 2000).
    pub fill_grace_ms: Option<u32>,
    /// How long a request that needs servers listed (a first search over uncached servers)
    /// waits for them before it answers from what is listed by then (default 5000).
    pub list_wait_ms: Option<u32>,
    /// Tools (and resources, and prompts) kept of one server (default and most 5000).
    pub max_server_tools: Option<u32>,
    /// Bytes of one server's tools, resources and prompts kept (default and most 16 MiB).
    pub max_server_metadata_bytes: Option<u32>,
    /// Servers listed at once by the first-run cache fill and every listing the model did not
    /// name (default and most: min(4, cores)).
    pub fill_concurrency: Option<u32>,
    /// Whether the project's configs (`.mcp.json`, `.pi/mcp.json`, …), which start programs, may
    /// be used: Pi's `ctx.isProjectTrusted()`. If absent, the decision Pi saved for the project
    /// in `<agentDir>/trust.json`, else trusted.
    pub project_trusted: Option<bool>,
    /// Largest config file read (default 8 MiB; lowered in tests).
    pub max_config_bytes: Option<u32>,
    /// Largest metadata cache file read (default 64 MiB).
    pub max_cache_bytes: Option<u32>,
    /// Largest `envFile` read (default 1 MiB).
    pub max_env_file_bytes: Option<u32>,
    /// Largest OAuth token file read (default 1 MiB).
    pub max_token_file_bytes: Option<u32>,
    /// How long a config given as a pipe (`--config <(…)`) may take to end (default 5000).
    pub pipe_timeout_ms: Option<u32>,
    /// Opened by the `pi-mcp` command line: texts name its commands (`pi-mcp auth <server>`)
    /// and sign-ins can be shown on the terminal.
    pub cli: Option<bool>,
    /// Overrides `settings.autoAuth`: sign in when a server asks for it, then retry.
    pub auto_auth: Option<bool>,
    /// Servers other Pi extensions registered (`pi.getMcpServers()`); a config file's entry of the
    /// same name wins over one.
    pub registered: Option<Vec<RegisteredServer>>,
    /// Pi's `--tools` entries when one names MCP tools (`mcp__…`): only MCP tools they name or
    /// match (`*` patterns, Pi's names) may be called in this run.
    pub tools_allowed: Option<Vec<String>>,
    /// Pi's `--exclude-tools` entries: MCP tools they name or match may not be called.
    pub tools_excluded: Option<Vec<String>>,
    /// `pi-mcp call --yes`: uses `approveTools` asks for go ahead without asking; inside a Pi
    /// session (`PI_CODING_AGENT` set) only where `settings.allowYesInsidePi` allows it.
    pub assume_yes: Option<bool>,
    /// Who this session is when a question of one of its calls is asked in another session's UI
    /// (its family's): `subagent "worker"`, `pi -p`; 80 characters at most.
    pub family_label: Option<String>,
}

/// The variable that makes a process this session starts join its family.
#[napi(object)]
pub struct FamilyVariable {
    /// `PI_MCP_NATIVE_FAMILY`.
    pub name: String,
    /// The family's token: a secret of the family's processes.
    pub value: String,
}

/// A server a Pi extension registered with `pi.registerMcpServer(name, config)`.
#[napi(object)]
pub struct RegisteredServer {
    pub name: String,
    /// An entry of the `mcpServers` shape.
    pub config: Map<String, Value>,
    /// The extension's path (`extensionPath`).
    pub extension_path: String,
}

#[napi(object)]
pub struct SearchOpts {
    pub regex: Option<bool>,
    pub server: Option<String>,
    pub include_schemas: Option<bool>,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

/// What every mode returns: content blocks for Pi, details for programs, and the error flag.
#[napi(object)]
pub struct Outcome {
    pub content: Vec<ContentBlock>,
    /// `mode` names the mode; failures set `error` to a stable code.
    pub details: OutcomeDetails,
    pub is_error: bool,
    /// The result as JSON, for tools that declare an output schema.
    pub structured_content: Option<JsonObject>,
}

/// A text or image block as Pi shows it to the model.
#[napi(discriminant_case = "lowercase")]
pub enum ContentBlock {
    Text { text: String },
    Image { data: String, mime_type: String },
}

impl Js for Block {
    type Js = ContentBlock;
    fn js(self) -> ContentBlock {
        match self {
            Block::Text(text) => ContentBlock::Text { text },
            Block::Image { data, mime_type } => ContentBlock::Image { data, mime_type },
        }
    }
}

impl From<adapter::Outcome> for Outcome {
    fn from(outcome: adapter::Outcome) -> Self {
        let adapter::Outcome {
            content,
            details,
            is_error,
            structured,
        } = outcome;
        Outcome {
            content: content.js(),
            details: (*details).js(),
            is_error,
            structured_content: structured.map(|v| *v),
        }
    }
}

#[napi(object)]
pub struct StartOpts {
    /// Start the first-run cache fill at the first `execute` instead of now (one-shot runs).
    pub defer_fill: Option<bool>,
}

#[napi(object)]
pub struct ListOpts {
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

#[napi(object)]
pub struct CallOpts {
    pub server: Option<String>,
    /// An id for `cancel(callId)`; progress events carry it.
    pub call_id: Option<String>,
    pub timeout_ms: Option<u32>,
}

fn file_limits(opts: &OpenOptions) -> FileLimits {
    let default = FileLimits::default();
    let bytes = |v: Option<u32>, default: u64| v.map_or(default, u64::from);
    FileLimits {
        config_bytes: bytes(opts.max_config_bytes, default.config_bytes),
        cache_bytes: bytes(opts.max_cache_bytes, default.cache_bytes),
        env_file_bytes: bytes(opts.max_env_file_bytes, default.env_file_bytes),
        token_file_bytes: bytes(opts.max_token_file_bytes, default.token_file_bytes),
        pipe_timeout: opts.pipe_timeout_ms.map_or(default.pipe_timeout, |ms| {
            Duration::from_millis(u64::from(ms))
        }),
    }
}

fn timing(opts: &OpenOptions) -> Timing {
    let ms = |v: Option<u32>| v.map(|ms| Duration::from_millis(u64::from(ms)));
    let default = Timing::default();
    Timing {
        health_interval: ms(opts.health_interval_ms).unwrap_or(default.health_interval),
        failure_backoff: ms(opts.failure_backoff_ms).unwrap_or(default.failure_backoff),
        fill_grace: ms(opts.fill_grace_ms).unwrap_or(default.fill_grace),
        list_wait: ms(opts.list_wait_ms).unwrap_or(default.list_wait),
    }
}

fn bounds(opts: &OpenOptions) -> Bounds {
    let default = Bounds::default();
    let or = |v: Option<u32>, default: usize| v.map_or(default, |n| n as usize);
    Bounds {
        max_server_tools: or(opts.max_server_tools, default.max_server_tools),
        max_server_metadata: or(opts.max_server_metadata_bytes, default.max_server_metadata),
        fill_concurrency: or(opts.fill_concurrency, default.fill_concurrency),
    }
}

/// Where the helper executable is (the loader finds it next to the addon). Not public API.
#[napi(skip_typescript)]
pub fn set_helper(path: String) {
    pi_mcp_connection::helper::set_path(PathBuf::from(path));
}

/// napi-rs's runtime, with one worker thread instead of one per CPU: the core waits on servers
/// and the network far more than it computes, and every thread that allocates gets a glibc arena
/// of its own whose pages stay in Pi's memory (with 16 CPUs, 16 workers). Tokio's 2 MiB stacks
/// are enough: no future over `large_futures`' bound (clippy.toml) is awaited in place.
#[napi_derive::module_init]
fn init() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build();
    // Without it napi-rs builds its default runtime at first use.
    if let Ok(runtime) = runtime {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}

/// pi-mcp-adapter's `configHash` of a server entry (as written in mcp.json); `${VAR}`
/// references resolve from `env`, else from the process environment.
#[napi]
pub fn config_hash(entry: Map<String, Value>, env: Option<HashMap<String, String>>) -> String {
    let env = env.unwrap_or_else(|| std::env::vars().collect());
    pi_mcp_core::cache::config_hash(&Value::Object(entry), &env)
}

#[napi]
pub struct McpAdapter {
    inner: Arc<Adapter>,
}

#[napi]
impl McpAdapter {
    /// Reads config and metadata cache synchronously; starts nothing.
    #[napi(factory)]
    pub fn open(opts: Option<OpenOptions>) -> Result<McpAdapter> {
        let opts = opts.unwrap_or_default();
        let (file_limits, timing, bounds) = (file_limits(&opts), timing(&opts), bounds(&opts));
        let cwd = match opts.cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::current_dir()
                .map_err(|e| Error::from_reason(format!("no working directory: {e}")))?,
        };
        let inner = Adapter::open(adapter::OpenOptions {
            cwd,
            agent_dir: opts.agent_dir.map(PathBuf::from),
            config_path: opts.config_path.map(PathBuf::from),
            env: opts.env,
            timing,
            bounds,
            project_trusted: opts.project_trusted,
            file_limits,
            run_tools: adapter::RunTools {
                allow: opts.tools_allowed,
                deny: opts.tools_excluded.unwrap_or_default(),
            },
            registered: opts
                .registered
                .unwrap_or_default()
                .into_iter()
                .map(|r| pi_mcp_core::config::Registered {
                    name: r.name,
                    config: Value::Object(r.config),
                    extension: PathBuf::from(r.extension_path),
                })
                .collect(),
            cli: opts.cli.unwrap_or(false),
            auto_auth: opts.auto_auth,
            only: None,
            assume_yes: opts.assume_yes.unwrap_or(false),
            family_label: opts.family_label,
        });
        Ok(McpAdapter { inner })
    }

    /// The variable the processes this session starts must inherit to use its servers (its
    /// family's): put it in `process.env` before a tool that may start processes runs. The first
    /// call makes the session's process the family's host (its hub listens from then on);
    /// a process that inherited one gives it on. Null when no enabled stdio server is shared
    /// with the family, or the hub cannot listen (status says why).
    #[napi]
    pub fn family_env(&self) -> Option<FamilyVariable> {
        let found = napi::bindgen_prelude::within_runtime_if_available(|| self.inner.family_env());
        found.map(|(name, value)| FamilyVariable { name, value })
    }

    /// The `mcp` tool as Pi registers it.
    #[napi]
    pub fn tool_definition(&self) -> ToolDefinition {
        self.inner.tool_definition().js()
    }

    /// The system prompt's `mcp_servers` section: the servers the model reaches through the
    /// `mcp` tool, each with a one-line summary (null when there are none). The same
    /// config and metadata cache give the same text.
    #[napi]
    pub fn servers_section(&self) -> Option<String> {
        self.inner.servers_section()
    }

    /// Tools to register as Pi tools of their own (`directTools`, `MCP_DIRECT_TOOLS`), from the
    /// catalog known now; `warnings` say why selected tools were left out.
    #[napi]
    pub fn direct_tools(&self) -> DirectTools {
        self.inner.direct_tools().js()
    }

    /// Runs one of Pi's resource tools (`directTools().resourceTools`) with its parameters;
    /// `callId` lets `cancel` abort a read.
    #[napi]
    pub async fn pi_resource_tool(
        &self,
        name: String,
        params: Map<String, Value>,
        call_id: Option<String>,
    ) -> Outcome {
        self.inner
            .pi_resource_tool(&name, &Value::Object(params), call_id)
            .await
            .into()
    }

    /// Every enabled server's tools with how the model reaches them now and once `changes` are
    /// saved (behind `mcp`, direct, hidden), the direct ones' estimated tokens, and where a save
    /// goes; `piReadsExposure`: Pi reads `exposure` itself (≥ 0.99), so a save writes Pi's
    /// keys, else pi-mcp-adapter's. Nothing is saved.
    #[napi]
    pub fn exposure(
        &self,
        changes: Option<Vec<ExposureChange>>,
        pi_reads_exposure: Option<bool>,
    ) -> Result<ExposurePreview> {
        self.inner
            .exposure(
                &core_changes(changes.unwrap_or_default()),
                pi_reads_exposure.unwrap_or(false),
            )
            .map(Js::js)
            .map_err(|e| Error::from_reason(e.to_string()))
    }

    /// Saves `changes` (see `exposure`) to the config files of the servers they concern,
    /// keeping the rest of each file. The change takes effect in an adapter opened afterwards.
    #[napi]
    pub fn save_exposure(
        &self,
        changes: Vec<ExposureChange>,
        pi_reads_exposure: Option<bool>,
    ) -> Result<Vec<SavedChange>> {
        self.inner
            .save_exposure(&core_changes(changes), pi_reads_exposure.unwrap_or(false))
            .map(Js::js)
            .map_err(|e| Error::from_reason(e.to_string()))
    }

    /// Turns a server on or off in the config file it comes from (`inProject`: in the project's
    /// `.pi/mcp.json`), keeping the rest of the file. The change takes effect in an adapter
    /// opened afterwards.
    #[napi]
    pub fn set_enabled(
        &self,
        server: String,
        enabled: bool,
        in_project: Option<bool>,
    ) -> Result<SavedChange> {
        self.inner
            .set_enabled(&server, enabled, in_project.unwrap_or(false))
            .map(Js::js)
            .map_err(|e| Error::from_reason(e.to_string()))
    }

    /// `/mcp add`, `pi-mcp add`: the server given in `pi mcp add`'s syntax (the words after
    /// `add`, or the line typed) is connected and listed, signed in to if it asks, then saved to
    /// the user's `mcp.json` (`-l`: the project's `.pi/mcp.json`) as `pi mcp add` writes it; a
    /// failure or a taken name saves nothing. `dryRun` tries it without saving.
    #[napi]
    pub async fn add_server(
        &self,
        args: Either<String, Vec<String>>,
        dry_run: Option<bool>,
    ) -> Outcome {
        let dry_run = dry_run.unwrap_or(false);
        match args {
            Either::A(text) => self.inner.add_typed(&text, dry_run).await,
            Either::B(words) => self.inner.add_server(&words, dry_run).await,
        }
        .into()
    }

    /// `/mcp setup`, `pi-mcp setup`: other tools' MCP configs and what each would add, the
    /// well-known servers, and the file setup writes (`project`: the trusted project's
    /// `.pi/mcp.json`).
    #[napi]
    pub fn setup_plan(&self, project: Option<bool>) -> Outcome {
        self.inner.setup_plan(project.unwrap_or(false)).into()
    }

    /// Makes the change chosen in setup (imports, copied servers, well-known servers; an empty
    /// config when the file is missing), comments kept: its preview, and unless `dryRun` the
    /// file written.
    #[napi]
    pub fn setup_apply(&self, request: SetupRequest) -> Outcome {
        self.inner.setup_apply(&request.into()).into()
    }

    /// Whether the project's configs are used (see `OpenOptions.projectTrusted`).
    #[napi]
    pub fn project_trusted(&self) -> bool {
        self.inner.config().trust.trusted
    }

    /// Config problems and cache warnings, one line each.
    #[napi]
    pub fn diagnostics(&self) -> Vec<String> {
        self.inner.diagnostics()
    }

    /// Names of the enabled servers (with `includeDisabled`, all of them), in config order.
    #[napi]
    pub fn servers(&self, include_disabled: Option<bool>) -> Vec<String> {
        self.inner
            .server_names(include_disabled.unwrap_or(false))
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The footer line for Pi's status bar (`undefined` without enabled servers).
    #[napi]
    pub fn footer(&self) -> Option<String> {
        self.inner.footer()
    }

    /// Every server's tools as known now (`/mcp tools`).
    #[napi]
    pub async fn tools(&self) -> Outcome {
        self.inner.tools_overview().into()
    }

    /// Starts background work (first-run cache fill, eager servers) and returns at once.
    #[napi]
    pub async fn start(&self, opts: Option<StartOpts>) {
        let defer_fill = opts.and_then(|o| o.defer_fill).unwrap_or(false);
        self.inner.start(adapter::StartOptions { defer_fill });
    }

    #[napi]
    pub async fn status(&self) -> Outcome {
        self.inner.status().into()
    }

    /// `pi-mcp broker status`: the shared-server broker of this agent dir, if one runs.
    #[napi]
    pub async fn broker_status(&self) -> Outcome {
        self.inner.broker_status().await.into()
    }

    /// `pi-mcp broker stop`: stops the shared-server broker and its servers.
    #[napi]
    pub async fn broker_stop(&self) -> Outcome {
        self.inner.broker_stop().await.into()
    }

    /// Lists the servers whose tools Pi declares to the model (`exposure`/`toolExposure`
    /// `"direct"`, `directTools`, `MCP_DIRECT_TOOLS`) and that are not known yet, through the
    /// listing queue; with `wait`, resolves once they are listed or `settings.startupWaitMs`
    /// (10 s, Pi's rule) has passed, else at once. Says which are still being listed.
    #[napi]
    pub async fn list_declared(&self, wait: Option<bool>) -> DeclaredListing {
        self.inner.list_declared(wait.unwrap_or(true)).await.js()
    }

    /// Lists those of `servers` whose tools are not known yet, through the listing queue (at most
    /// `fillConcurrency` at once), waiting up to `listWaitMs`; resolves with those still being
    /// listed. For tools that reach other tools (Pi's codemode and tool_search) before they run.
    #[napi]
    pub async fn list_servers(&self, servers: Vec<String>) -> Vec<String> {
        self.inner.list_servers(&servers).await
    }

    /// A page of a server's tools (`limit` default 100).
    #[napi]
    pub async fn list(&self, server: String, opts: Option<ListOpts>) -> Outcome {
        let page = opts.map_or_else(adapter::Page::default, |o| adapter::Page {
            limit: o.limit.filter(|n| *n > 0).map(|n| n as usize),
            offset: o.offset.unwrap_or(0) as usize,
        });
        self.inner.list(&server, page).await.into()
    }

    #[napi]
    pub async fn search(&self, query: String, opts: Option<SearchOpts>) -> Outcome {
        let opts = opts.unwrap_or(SearchOpts {
            regex: None,
            server: None,
            include_schemas: None,
            limit: None,
            offset: None,
        });
        let search = SearchOptions {
            regex: opts.regex.unwrap_or(false),
            server: opts.server,
            limit: opts
                .limit
                .filter(|n| *n > 0)
                .map_or(adapter::DEFAULT_LIMIT, |n| n as usize),
            offset: opts.offset.unwrap_or(0) as usize,
        };
        self.inner
            .search(&query, search, opts.include_schemas.unwrap_or(true))
            .await
            .into()
    }

    /// A tool's description and parameters: as the model reads it (its hint as one word), or
    /// with `forPerson` as a person does (every hint, its icon).
    #[napi]
    pub async fn describe(
        &self,
        tool: String,
        server: Option<String>,
        for_person: Option<bool>,
    ) -> Outcome {
        let audience = match for_person {
            Some(true) => pi_mcp_core::render::Audience::Person,
            _ => pi_mcp_core::render::Audience::Model,
        };
        self.inner
            .describe_for(&tool, server.as_deref(), audience)
            .await
            .into()
    }

    #[napi]
    pub async fn instructions(&self, server: String) -> Outcome {
        self.inner.instructions(&server).await.into()
    }

    /// `/mcp-auth <server>`: how to give the server credentials, and its auth state.
    #[napi]
    pub fn auth_help(&self, server: String) -> Outcome {
        self.inner.auth_help(&server).into()
    }

    /// Signs in to an OAuth server (the URL comes as an `auth-url` event; `paste` completes it
    /// by hand), then connects it.
    #[napi]
    pub async fn login(&self, server: String) -> Outcome {
        self.inner.login(&server).await.into()
    }

    /// Revokes (where the server offers it) and deletes a server's sign-in.
    #[napi]
    pub async fn logout(&self, server: String) -> Outcome {
        self.inner.logout(&server).await.into()
    }

    /// What the user pasted (the address the browser ended on, or the code) for the sign-in to
    /// `server` waiting in its browser step; false when none waits.
    #[napi]
    pub fn paste(&self, server: String, text: String) -> bool {
        self.inner.paste(&server, &text)
    }

    /// Ends the sign-in to `server` waiting in its browser step (the user gave up on it); its
    /// `login` then answers `aborted`. False when none waits.
    #[napi]
    pub fn cancel_sign_in(&self, server: String) -> bool {
        self.inner.cancel_sign_in(&server)
    }

    /// Whether someone can see a sign-in (Pi's `ctx.hasUI`): `autoAuth` signs in only then.
    #[napi]
    pub fn set_interactive(&self, interactive: bool) {
        self.inner.set_interactive(interactive);
    }

    #[napi]
    pub async fn connect(&self, server: String) -> Outcome {
        self.inner.connect(&server).await.into()
    }

    /// Every known prompt of the enabled servers as a slash command to register.
    #[napi]
    pub fn prompt_commands(&self) -> Vec<PromptCommand> {
        self.inner.prompt_commands().js()
    }

    /// Runs prompt command `command` with the text typed after it: the user message it expands
    /// to, or why not.
    #[napi]
    pub async fn run_prompt(&self, command: String, text: String) -> Outcome {
        self.inner.run_prompt(&command, &text).await.into()
    }

    /// Completions of the text typed after prompt command `command`.
    #[napi]
    pub async fn complete_prompt(&self, command: String, text: String) -> Vec<Completion> {
        self.inner.complete_prompt(&command, &text).await.js()
    }

    /// The prompts of `server` (or of every server), each as its command.
    #[napi]
    pub async fn prompts(&self, server: Option<String>) -> Outcome {
        self.inner.prompts(server.as_deref()).await.into()
    }

    /// `prompts/get` of prompt `name` of `server`: its messages as one user message.
    #[napi]
    pub async fn get_prompt(
        &self,
        server: String,
        name: String,
        args: Option<HashMap<String, String>>,
    ) -> Outcome {
        let args = args.unwrap_or_default().into_iter();
        let args = args.map(|(key, value)| (key, Value::String(value)));
        self.inner
            .get_prompt(&server, &name, args.collect())
            .await
            .into()
    }

    #[napi]
    pub async fn call(
        &self,
        tool: String,
        args: Option<Map<String, Value>>,
        opts: Option<CallOpts>,
    ) -> Outcome {
        let opts = opts.map_or_else(CallOptions::default, |o| CallOptions {
            server: o.server,
            call_id: o.call_id,
            timeout_ms: o.timeout_ms.map(u64::from),
            on_progress: None,
        });
        self.inner
            .call(&tool, args.unwrap_or_default(), opts)
            .await
            .into()
    }

    /// Runs the `mcp` tool with the parameters the model gave.
    #[napi]
    pub async fn execute(&self, params: McpParams, call_id: Option<String>) -> Outcome {
        self.inner.execute(&params, call_id).await.into()
    }

    /// Every config source and what came of it, the merged servers with where each came from,
    /// every problem (notes included) and, unless `connect` is false, a fresh timed connection
    /// to each enabled server. `isError` when a server failed or a config has an error.
    #[napi]
    pub async fn doctor(&self, connect: Option<bool>) -> Outcome {
        self.inner.doctor(connect.unwrap_or(true)).await.into()
    }

    /// Aborts the running call started with `callId`; the server gets `notifications/cancelled`.
    #[napi]
    pub fn cancel(&self, call_id: String) {
        self.inner.cancel(&call_id);
    }

    /// Where the credentials of Pi's providers come from (`auth: {"provider": …}`): asked at each
    /// connect of such a server, never kept. Without it those servers cannot be used.
    #[napi]
    pub fn on_credential(&self, callback: Function<String, Promise<Option<String>>>) -> Result<()> {
        let tsfn = Arc::new(
            callback
                .build_threadsafe_function::<String>()
                .weak::<true>()
                .build()?,
        );
        self.inner.set_credentials(Arc::new(move |provider| {
            let tsfn = tsfn.clone();
            Box::pin(async move {
                let promise = tsfn.call_async(provider).await.ok()?;
                promise
                    .await
                    .ok()
                    .flatten()
                    .map(pi_mcp_connection::secret::Secret::new)
            })
        }));
        Ok(())
    }

    /// The session's directory moved: running servers keep running and are told that their
    /// roots changed (`notifications/roots/list_changed`); the config stays the one opened.
    #[napi]
    pub async fn set_cwd(&self, cwd: String) {
        self.inner.set_cwd(std::path::Path::new(&cwd)).await;
    }

    /// Where servers' questions for a person (elicitation) or a model (sampling) go; without
    /// it nobody can be asked and the `elicitation` setting decides.
    #[napi]
    pub fn set_front_end(&self, callbacks: FrontEndCallbacks) {
        self.inner
            .attach_front_end(Arc::new(JsFrontEnd::from(callbacks)));
    }

    /// The session's approval grants are the ones its entries hold: pass every custom entry of
    /// the current branch (others' are passed over) when the session starts, reloads, resumes or
    /// moves to another branch.
    #[napi]
    pub fn restore_grants(&self, entries: Vec<SessionEntry>) {
        let entries: Vec<_> = entries.into_iter().map(Into::into).collect();
        self.inner.restore_grants(&entries);
    }

    /// Field `name` of open question `id` from what was typed (a string) or picked (an
    /// option's value or a list of them), or the error to show before asking again.
    #[napi]
    pub fn take_field(&self, id: u32, name: String, answer: JsonValue) -> FieldTaken {
        self.inner.take_field(u64::from(id), &name, &answer).into()
    }

    /// Opens `url` in the user's browser (`$BROWSER`, else the platform's opener) after they
    /// agreed to a server's URL question; the text to show when no browser could be started.
    #[napi]
    pub fn open_url(&self, url: String) -> Option<String> {
        self.inner.open_url(&url)
    }

    /// Turns MCP Apps on for this session (a session with a UI): a call of a tool with an
    /// interface then shows it in the browser, and `app` events follow. `script` is the host
    /// page's script (`extension/pi-mcp-native/app-host.js`), `context` the host context's fixed
    /// part (`theme`, `locale`, `timeZone`, `platform`).
    #[napi]
    pub fn enable_apps(&self, script: Buffer, context: Map<String, Value>) {
        self.inner
            .enable_apps(script.to_vec(), Value::Object(context));
    }

    /// Pi's side of the apps' host context changed (`{ theme }`, say): what differs is sent to
    /// the open apps (`ui/notifications/host-context-changed`) and given to those opened later.
    #[napi]
    pub fn set_apps_context(&self, update: Map<String, Value>) {
        self.inner.set_apps_context(update);
    }

    /// The model is still writing a call of `tool` (as `call` names it; `server`'s, if given):
    /// when the tool's app is open, it gets the arguments so far
    /// (`ui/notifications/tool-input-partial`). Nothing starts, nothing opens.
    #[napi]
    pub fn app_input_partial(
        &self,
        tool: String,
        args: Map<String, Value>,
        server: Option<String>,
    ) {
        self.inner
            .app_input_partial(&tool, server.as_deref(), Value::Object(args));
    }

    /// The apps open now, oldest first.
    #[napi]
    pub fn open_apps(&self) -> Vec<OpenApp> {
        self.inner
            .open_apps()
            .into_iter()
            .map(|app| OpenApp {
                since_ms: pi_mcp_connection::unix_time::epoch_ms(app.since),
                server: app.server,
                tool: app.tool,
                url: app.url,
            })
            .collect()
    }

    /// The "always" the user gave servers' apps (kept in `<agentDir>/mcp-apps-grants.json`):
    /// each server and what it covers (`conversation`, `tools`).
    #[napi]
    pub fn app_grants(&self) -> Vec<AppGrant> {
        let grants = self.inner.app_grants().into_iter();
        grants
            .map(|(server, what)| AppGrant { server, what })
            .collect()
    }

    /// Takes back the "always" of `server`'s apps (every server's without one); how many were
    /// taken back. Throws when the file cannot be written.
    #[napi]
    pub fn revoke_app_grants(&self, server: Option<String>) -> Result<u32> {
        self.inner
            .revoke_app_grants(server.as_deref())
            .map(|n| n as u32)
            .map_err(napi::Error::from_reason)
    }

    /// Receives lifecycle events; the callback never keeps Node alive.
    #[napi]
    pub fn on_event(&self, callback: Function<LifecycleEvent, ()>) -> Result<()> {
        let tsfn = callback
            .build_threadsafe_function::<LifecycleEvent>()
            .weak::<true>()
            .build()?;
        self.inner.on_event(Arc::new(move |event| {
            tsfn.call(event.js(), ThreadsafeFunctionCallMode::NonBlocking);
        }));
        Ok(())
    }

    /// Cancels running calls and stops every server (bounded in time).
    #[napi]
    pub async fn shutdown(&self) {
        self.inner.shutdown().await;
    }
}

/// An MCP App open now: its server, its tool, its tab's address, and since when (ms since
/// 1970).
#[napi(object)]
pub struct OpenApp {
    pub server: String,
    pub tool: String,
    pub url: String,
    pub since_ms: f64,
}

/// An "always" given to a server's apps: what it covers (`conversation`: write to the
/// conversation; `tools`: call the server's tools).
#[napi(object)]
pub struct AppGrant {
    pub server: String,
    pub what: String,
}

/// Exposure changes as the core takes them.
fn core_changes(changes: Vec<ExposureChange>) -> Vec<adapter::ExposureChange> {
    changes.into_iter().map(Into::into).collect()
}
