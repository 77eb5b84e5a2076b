//! `Adapter` as the binding and tests see the feature services: one line each, saying which
//! service answers and in which file. Each service is a handle on the kernel (the registry,
//! pool, config, connect path, output guard and events: `mod.rs` and the files it names) for one
//! request; its methods hold the docs.

use super::apps::McpApps;
use super::config_edit::{ConfigEdits, SavedChange, SwitchError};
use super::direct::{Direct, DirectTools};
use super::doctor::Doctor;
use super::exposure::{ExposureChange, ExposureError, ExposurePreview};
use super::pi_resources::Resources;
use super::prompts::{Completion, PromptCommand, Prompts};
use super::sign_in::SignIns;
use super::status::Status;
use super::{Adapter, Outcome, SetupRequest};
use crate::apps::OpenApp;
use serde_json::{Map, Value};
use std::sync::Arc;

impl Adapter {
    // Servers' prompts as commands (prompts.rs).
    pub fn prompt_commands(self: &Arc<Self>) -> Vec<PromptCommand> {
        Prompts(self).prompt_commands()
    }
    pub async fn run_prompt(self: &Arc<Self>, command: &str, text: &str) -> Outcome {
        Prompts(self).run_prompt(command, text).await
    }
    pub async fn get_prompt(
        self: &Arc<Self>,
        server: &str,
        name: &str,
        args: Map<String, Value>,
    ) -> Outcome {
        Prompts(self).get_prompt(server, name, args).await
    }
    pub async fn complete_prompt(self: &Arc<Self>, command: &str, text: &str) -> Vec<Completion> {
        Prompts(self).complete_prompt(command, text).await
    }
    pub async fn prompts(self: &Arc<Self>, server: Option<&str>) -> Outcome {
        Prompts(self).prompts(server).await
    }

    // Servers' resources: `mcp({ read })` (read.rs) and Pi's resource tools (pi_resources.rs).
    pub async fn read(
        self: &Arc<Self>,
        uri: &str,
        server: Option<&str>,
        args: Map<String, Value>,
        call_id: Option<String>,
    ) -> Outcome {
        Resources(self).read(uri, server, args, call_id).await
    }
    pub async fn pi_resource_tool(
        self: &Arc<Self>,
        name: &str,
        params: &Value,
        call_id: Option<String>,
    ) -> Outcome {
        Resources(self)
            .pi_resource_tool(name, params, call_id)
            .await
    }

    // The tools Pi registers of their own (direct.rs, exposed.rs).
    pub fn direct_tools(self: &Arc<Self>) -> DirectTools {
        Direct(self).direct_tools()
    }

    // `doctor` (doctor.rs).
    pub async fn doctor(self: &Arc<Self>, connect: bool) -> Outcome {
        Doctor(self).doctor(connect).await
    }

    // The servers' state (status.rs; sharing and the broker in shared.rs).
    pub fn status(self: &Arc<Self>) -> Outcome {
        Status(self).status()
    }
    pub fn footer(self: &Arc<Self>) -> Option<String> {
        Status(self).footer()
    }
    pub fn tools_overview(self: &Arc<Self>) -> Outcome {
        Status(self).tools_overview()
    }
    pub async fn broker_status(self: &Arc<Self>) -> Outcome {
        Status(self).broker_status().await
    }
    pub async fn broker_stop(self: &Arc<Self>) -> Outcome {
        Status(self).broker_stop().await
    }

    // Sign-ins people ask for (sign_in.rs; `/mcp-auth` in auth.rs).
    pub fn set_interactive(self: &Arc<Self>, interactive: bool) {
        SignIns(self).set_interactive(interactive)
    }
    pub fn paste(self: &Arc<Self>, name: &str, text: &str) -> bool {
        SignIns(self).paste(name, text)
    }
    pub fn cancel_sign_in(self: &Arc<Self>, name: &str) -> bool {
        SignIns(self).cancel_sign_in(name)
    }
    pub async fn login(self: &Arc<Self>, name: &str) -> Outcome {
        SignIns(self).login(name).await
    }
    pub async fn logout(self: &Arc<Self>, name: &str) -> Outcome {
        SignIns(self).logout(name).await
    }
    pub fn auth_help(self: &Arc<Self>, name: &str) -> Outcome {
        SignIns(self).auth_help(name)
    }

    // Changes to the config files (add.rs, setup.rs, config_edit.rs, exposure.rs).
    pub async fn add_typed(self: &Arc<Self>, text: &str, dry_run: bool) -> Outcome {
        ConfigEdits(self).add_typed(text, dry_run).await
    }
    pub async fn add_server(self: &Arc<Self>, words: &[String], dry_run: bool) -> Outcome {
        ConfigEdits(self).add_server(words, dry_run).await
    }
    pub fn setup_plan(self: &Arc<Self>, project: bool) -> Outcome {
        ConfigEdits(self).setup_plan(project)
    }
    pub fn setup_apply(self: &Arc<Self>, request: &SetupRequest) -> Outcome {
        ConfigEdits(self).setup_apply(request)
    }
    pub fn set_enabled(
        self: &Arc<Self>,
        name: &str,
        enabled: bool,
        in_project: bool,
    ) -> Result<SavedChange, SwitchError> {
        ConfigEdits(self).set_enabled(name, enabled, in_project)
    }
    pub fn exposure(
        self: &Arc<Self>,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<ExposurePreview, ExposureError> {
        ConfigEdits(self).exposure(changes, pi_reads)
    }
    pub fn save_exposure(
        self: &Arc<Self>,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<Vec<SavedChange>, ExposureError> {
        ConfigEdits(self).save_exposure(changes, pi_reads)
    }

    // MCP Apps as the embedder sees them (apps.rs).
    pub fn enable_apps(self: &Arc<Self>, script: Vec<u8>, context: Value) {
        McpApps(self).enable_apps(script, context)
    }
    pub fn open_apps(self: &Arc<Self>) -> Vec<OpenApp> {
        McpApps(self).open_apps()
    }
    pub fn app_grants(self: &Arc<Self>) -> Vec<(String, String)> {
        McpApps(self).app_grants()
    }
    pub fn revoke_app_grants(self: &Arc<Self>, server: Option<&str>) -> Result<usize, String> {
        McpApps(self).revoke_app_grants(server)
    }
    pub fn set_apps_context(self: &Arc<Self>, update: Map<String, Value>) {
        McpApps(self).set_apps_context(update)
    }
    pub fn app_input_partial(self: &Arc<Self>, name: &str, server: Option<&str>, args: Value) {
        McpApps(self).app_input_partial(name, server, args)
    }
}
