//! `Adapter` as the binding and tests see it: one line each, saying which service (or the
//! kernel) answers and in which file. Each service borrows the kernel (the registry, pool,
//! config, connect path, output guard and events: `mod.rs` and the files it names) for one
//! request; its methods hold the docs.

use super::apps::McpApps;
use super::config_edit::{ConfigEdits, SavedChange, SwitchError};
use super::config_edit::{ExposureChange, ExposureError, ExposurePreview};
use super::direct::{Direct, DirectTools};
use super::doctor::Doctor;
use super::pi_resources::Resources;
use super::prompts::{Completion, PromptCommand, Prompts};
use super::sign_in::SignIns;
use super::status::Status;
use super::tool::Tool;
use super::CredentialSource;
use super::{Adapter, Outcome, SetupRequest};
use super::{CallOptions, DeclaredListing, FrontEnd, Page, Request, StartOptions, ToolDefinition};
use crate::approval::Entry;
use crate::apps::OpenApp;
use crate::config::Config;
use crate::events::EventSink;
use crate::render;
use crate::search::SearchOptions;
use serde_json::{Map, Value};
use std::sync::Arc;

impl Adapter {
    // Servers' prompts as commands (prompts.rs).
    pub fn prompt_commands(&self) -> Vec<PromptCommand> {
        Prompts::from(&self.kernel).prompt_commands()
    }
    pub async fn run_prompt(&self, command: &str, text: &str) -> Outcome {
        Prompts::from(&self.kernel).run_prompt(command, text).await
    }
    pub async fn get_prompt(&self, server: &str, name: &str, args: Map<String, Value>) -> Outcome {
        Prompts::from(&self.kernel)
            .get_prompt(server, name, args)
            .await
    }
    pub async fn complete_prompt(&self, command: &str, text: &str) -> Vec<Completion> {
        Prompts::from(&self.kernel)
            .complete_prompt(command, text)
            .await
    }
    pub async fn prompts(&self, server: Option<&str>) -> Outcome {
        Prompts::from(&self.kernel).prompts(server).await
    }

    // Servers' resources: `mcp({ read })` (pi_resources/read.rs) and Pi's resource tools (pi_resources.rs).
    pub async fn read(
        &self,
        uri: &str,
        server: Option<&str>,
        args: Map<String, Value>,
        call_id: Option<String>,
    ) -> Outcome {
        Resources::from(&self.kernel)
            .read(uri, server, args, call_id)
            .await
    }
    pub async fn pi_resource_tool(
        &self,
        name: &str,
        params: &Value,
        call_id: Option<String>,
    ) -> Outcome {
        Resources::from(&self.kernel)
            .pi_resource_tool(name, params, call_id)
            .await
    }

    // The tools Pi registers of their own, and the system prompt's section on the other servers
    // (direct.rs, direct/exposed.rs).
    pub fn direct_tools(&self) -> DirectTools {
        Direct::from(&self.kernel).direct_tools()
    }
    pub fn servers_section(&self) -> Option<String> {
        Direct::from(&self.kernel).servers_section()
    }

    // `doctor` (doctor.rs).
    pub async fn doctor(&self, connect: bool) -> Outcome {
        Doctor::from(&self.kernel).doctor(connect).await
    }

    // The servers' state (status.rs; sharing and the broker in status/shared.rs).
    pub fn status(&self) -> Outcome {
        Status::from(&self.kernel).status()
    }
    pub fn footer(&self) -> Option<String> {
        Status::from(&self.kernel).footer()
    }
    pub fn tools_overview(&self) -> Outcome {
        Status::from(&self.kernel).tools_overview()
    }
    pub async fn broker_status(&self) -> Outcome {
        Status::from(&self.kernel).broker_status().await
    }
    pub async fn broker_stop(&self) -> Outcome {
        Status::from(&self.kernel).broker_stop().await
    }

    // Sign-ins people ask for, `/mcp-auth` (sign_in/flows.rs).
    pub fn set_interactive(&self, interactive: bool) {
        SignIns::from(&self.kernel).set_interactive(interactive)
    }
    pub fn paste(&self, name: &str, text: &str) -> bool {
        SignIns::from(&self.kernel).paste(name, text)
    }
    pub fn cancel_sign_in(&self, name: &str) -> bool {
        SignIns::from(&self.kernel).cancel_sign_in(name)
    }
    pub async fn login(&self, name: &str) -> Outcome {
        SignIns::from(&self.kernel).login(name).await
    }
    pub async fn logout(&self, name: &str) -> Outcome {
        SignIns::from(&self.kernel).logout(name).await
    }
    pub fn auth_help(&self, name: &str) -> Outcome {
        SignIns::from(&self.kernel).auth_help(name)
    }

    // Changes to the config files (config_edit.rs, and add.rs, setup.rs, exposure.rs in config_edit/).
    pub async fn add_typed(&self, text: &str, dry_run: bool) -> Outcome {
        ConfigEdits::from(&self.kernel)
            .add_typed(text, dry_run)
            .await
    }
    pub async fn add_server(&self, words: &[String], dry_run: bool) -> Outcome {
        ConfigEdits::from(&self.kernel)
            .add_server(words, dry_run)
            .await
    }
    pub fn setup_plan(&self, project: bool) -> Outcome {
        ConfigEdits::from(&self.kernel).setup_plan(project)
    }
    pub fn setup_apply(&self, request: &SetupRequest) -> Outcome {
        ConfigEdits::from(&self.kernel).setup_apply(request)
    }
    pub fn set_enabled(
        &self,
        name: &str,
        enabled: bool,
        in_project: bool,
    ) -> Result<SavedChange, SwitchError> {
        ConfigEdits::from(&self.kernel).set_enabled(name, enabled, in_project)
    }
    pub fn exposure(
        &self,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<ExposurePreview, ExposureError> {
        ConfigEdits::from(&self.kernel).exposure(changes, pi_reads)
    }
    pub fn save_exposure(
        &self,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<Vec<SavedChange>, ExposureError> {
        ConfigEdits::from(&self.kernel).save_exposure(changes, pi_reads)
    }

    // MCP Apps as the embedder sees them (apps.rs).
    pub fn enable_apps(&self, script: Vec<u8>, context: Value) {
        McpApps::from(&self.kernel).enable_apps(script, context)
    }
    pub fn open_apps(&self) -> Vec<OpenApp> {
        McpApps::from(&self.kernel).open_apps()
    }
    pub fn app_grants(&self) -> Vec<(String, String)> {
        McpApps::from(&self.kernel).app_grants()
    }
    pub fn revoke_app_grants(&self, server: Option<&str>) -> Result<usize, String> {
        McpApps::from(&self.kernel).revoke_app_grants(server)
    }
    pub fn set_apps_context(&self, update: Map<String, Value>) {
        McpApps::from(&self.kernel).set_apps_context(update)
    }
    pub fn app_input_partial(&self, name: &str, server: Option<&str>, args: Value) {
        McpApps::from(&self.kernel).app_input_partial(name, server, args)
    }

    // The kernel's own: start-up, shutdown and listing (reach/lifecycle.rs, reach/unlisted.rs),
    // grants (approval.rs), the family (reach/family.rs), and the session (mod.rs).
    pub fn config(&self) -> &Config {
        self.kernel.config()
    }
    pub fn tool_definition(&self) -> ToolDefinition {
        self.kernel.tool_definition()
    }
    pub fn diagnostics(&self) -> Vec<String> {
        self.kernel.diagnostics()
    }
    pub fn attach_front_end(&self, front_end: Arc<dyn FrontEnd>) {
        self.kernel.attach_front_end(front_end)
    }
    pub async fn set_cwd(&self, cwd: &std::path::Path) {
        self.kernel.set_cwd(cwd).await
    }
    pub fn take_field(&self, id: u64, name: &str, answer: &Value) -> Result<Option<Value>, String> {
        self.kernel.take_field(id, name, answer)
    }
    pub fn open_url(&self, url: &str) -> Option<String> {
        self.kernel.open_url(url)
    }
    pub fn on_event(&self, sink: EventSink) {
        self.kernel.on_event(sink)
    }
    pub fn server_names(&self, include_disabled: bool) -> Vec<&str> {
        self.kernel.server_names(include_disabled)
    }
    pub fn cancel(&self, call_id: &str) {
        self.kernel.cancel(call_id)
    }
    pub fn set_credentials(&self, source: CredentialSource) {
        self.kernel.set_credentials(source)
    }
    pub fn restore_grants(&self, entries: &[Entry]) {
        self.kernel.restore_grants(entries)
    }
    pub fn family_env(&self) -> Option<(String, String)> {
        self.kernel.family_env()
    }
    pub fn start(&self, opts: StartOptions) {
        self.kernel.start(opts)
    }
    pub async fn shutdown(&self) {
        self.kernel.shutdown().await
    }
    pub async fn list_servers(&self, servers: &[String]) -> Vec<String> {
        self.kernel.list_servers(servers).await
    }
    pub async fn list_declared(&self, wait: bool) -> DeclaredListing {
        self.kernel.list_declared(wait).await
    }

    // The `mcp` tool (tool/: request.rs, modes.rs, call.rs).
    pub async fn execute(&self, params: &Value, call_id: Option<String>) -> Outcome {
        Tool::from(&self.kernel).execute(params, call_id).await
    }
    pub async fn run(&self, request: Request, call_id: Option<String>) -> Outcome {
        Tool::from(&self.kernel).run(request, call_id).await
    }
    pub async fn list(&self, name: &str, page: Page) -> Outcome {
        Tool::from(&self.kernel).list(name, page).await
    }
    pub async fn search(&self, query: &str, opts: SearchOptions, include_schemas: bool) -> Outcome {
        Tool::from(&self.kernel)
            .search(query, opts, include_schemas)
            .await
    }
    pub async fn describe(&self, name: &str, server: Option<&str>) -> Outcome {
        Tool::from(&self.kernel).describe(name, server).await
    }
    pub async fn describe_for(
        &self,
        name: &str,
        server: Option<&str>,
        audience: render::Audience,
    ) -> Outcome {
        Tool::from(&self.kernel)
            .describe_for(name, server, audience)
            .await
    }
    pub async fn instructions(&self, name: &str) -> Outcome {
        Tool::from(&self.kernel).instructions(name).await
    }
    pub async fn connect(&self, name: &str) -> Outcome {
        Tool::from(&self.kernel).connect(name).await
    }
    pub async fn call(&self, name: &str, args: Map<String, Value>, opts: CallOptions) -> Outcome {
        Tool::from(&self.kernel).call(name, args, opts).await
    }
}
