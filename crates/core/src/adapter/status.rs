//! What `status`, `/mcp`, `/mcp tools` and Pi's status bar show of the servers (shared servers'
//! part and `pi-mcp broker status|stop` in shared.rs).

mod shared;

use super::detail_entries::*;
use super::details::*;
use super::Kernel;
use super::Mode;
use super::Outcome;
use crate::catalog::ToolInfo;
use crate::config::ServerConfig;
use crate::render::{self, ServerState, ServerStatus};
use pi_mcp_connection::broker::family::{family, Role, RoleName};
use std::sync::Arc;

/// The servers' state as status, the status bar and `/mcp tools` show it.
pub struct Status<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Status);

impl Status<'_> {
    pub fn status(&self) -> Outcome {
        let servers = self.server_statuses();
        let details: Vec<_> = servers
            .iter()
            .map(|s| {
                let config = self.kernel.server(&s.name);
                let problem = match &s.state {
                    ServerState::Failed { reason, .. } | ServerState::NeedsAuth { reason } => {
                        Some(pi_mcp_connection::clean::text(reason).into_owned())
                    }
                    _ => None,
                };
                StatusServer {
                    name: s.name.clone(),
                    state: state_name(&s.state),
                    tools: s.tool_count,
                    left_out: s.left_out,
                    source: config.map(|c| c.source.display().to_string()),
                    transport: self.kernel.pool.get(&s.name).and_then(|c| c.remote_kind()),
                    description: s.description.clone(),
                    exposure: config.and_then(|c| c.exposure.server),
                    imported: config.and_then(|c| c.imported.as_ref()).map(|i| i.kind),
                    registered_by: config
                        .and_then(|c| c.registered.as_ref())
                        .map(|p| p.display().to_string()),
                    package: config.and_then(|c| c.package.as_ref()).map(Into::into),
                    problem,
                    sign_in: s.sign_in.clone(),
                    shared: config.and_then(|c| self.sharing(c)),
                }
            })
            .collect();
        let total: usize = servers
            .iter()
            .filter(|s| s.state != ServerState::Disabled)
            .map(|s| s.tool_count)
            .sum();
        let problems = self.kernel.diagnostics();
        let mut text = render::status(&servers, &problems);
        let listing = self.kernel.being_listed();
        if !listing.is_empty() {
            text.push_str("\n\n");
            text.push_str(&render::status_still_listing(&listing));
        }
        if !self.kernel.config.servers.is_empty() {
            text.push_str("\n\n");
            text.push_str(&render::config_sources(&self.config_sources()));
        }
        let outcome = Outcome::text(Mode::Status, text).with_part(StatusDetails {
            servers: details,
            total_tools: total,
            problems,
            family: self.family_role(),
        });
        self.kernel.bounded(outcome.with_listing(&listing))
    }

    /// Each config file that defines servers: its path (`~` for home), whether it belongs to the
    /// project, and its servers in config order.
    fn config_sources(&self) -> Vec<(String, bool, Vec<&str>)> {
        let home = self.kernel.home();
        let mut files: Vec<(String, bool, Vec<&str>)> = vec![];
        for server in &self.kernel.config.servers {
            let shown = match (&server.registered, &server.package) {
                (Some(extension), _) if *extension == server.source => {
                    format!(
                        "registered by the Pi extension {}",
                        render::tilde(extension, &home)
                    )
                }
                (_, Some(package)) if server.files.len() == 1 => format!(
                    "the Pi package {} ({})",
                    package.name,
                    render::tilde(&server.source, &home)
                ),
                _ => render::tilde(&server.source, &home),
            };
            match files.iter_mut().find(|(p, _, _)| *p == shown) {
                Some((_, _, names)) => names.push(&server.name),
                None => files.push((
                    shown,
                    server.source.starts_with(&self.kernel.cwd),
                    vec![&server.name],
                )),
            }
        }
        files
    }

    /// The line for Pi's status bar; `None` without enabled servers.
    pub fn footer(&self) -> Option<String> {
        render::footer(&self.server_statuses())
    }

    /// Every server's tools (`/mcp tools`), from what is known now.
    pub fn tools_overview(&self) -> Outcome {
        let catalog = self.kernel.servers.view();
        let groups: Vec<(String, Vec<&ToolInfo>)> = self
            .kernel
            .server_names(false)
            .into_iter()
            .map(|name| (name.to_string(), catalog.server_tools(name)))
            .collect();
        Outcome::text(Mode::Tools, render::tools_overview(&groups)).with_part(ToolsDetails {
            total_tools: catalog.tools().len(),
        })
    }

    fn server_statuses(&self) -> Vec<ServerStatus> {
        let catalog = self.kernel.servers.view();
        self.kernel
            .servers
            .configs()
            .map(|s| ServerStatus {
                name: s.name.clone(),
                state: self.state_of(s, self.kernel.servers.has_meta(&s.name)),
                tool_count: catalog.server_tools(&s.name).len(),
                description: s.description.clone(),
                sign_in: self.kernel.sign_in.shown(s),
                left_out: self
                    .kernel
                    .servers
                    .meta(&s.name)
                    .map_or(0, |m| m.left_out.len()),
                sharing: self.sharing(s).map(|sharing| sharing.text),
            })
            .collect()
    }

    pub fn state_of(&self, server: &ServerConfig, has_metadata: bool) -> ServerState {
        let name = &server.name;
        if server.disabled {
            ServerState::Disabled
        } else if self.kernel.pool.is_live(name) {
            ServerState::Connected
        } else if self.kernel.pool.is_connecting(name) {
            ServerState::Connecting
        } else if let Some((ago, cause)) = self.kernel.servers.failure(name) {
            let reason = cause.reason(name);
            if cause.needs_auth() {
                ServerState::NeedsAuth { reason }
            } else {
                ServerState::Failed {
                    ago_secs: ago.as_secs(),
                    reason,
                }
            }
        } else if has_metadata {
            ServerState::Cached
        } else {
            ServerState::NotConnected
        }
    }

    /// What this process is in its family (`details.family`), unless alone with nothing to say.
    fn family_role(&self) -> Option<Role> {
        let role = family().role();
        let said = role.role != RoleName::Alone || role.why.is_some();
        said.then_some(role)
    }
}

fn state_name(state: &ServerState) -> ServerStateName {
    match state {
        ServerState::Connected => ServerStateName::Connected,
        ServerState::Connecting => ServerStateName::Connecting,
        ServerState::Cached => ServerStateName::Cached,
        ServerState::NotConnected => ServerStateName::NotConnected,
        ServerState::Failed { .. } => ServerStateName::Failed,
        ServerState::NeedsAuth { .. } => ServerStateName::NeedsAuth,
        ServerState::Disabled => ServerStateName::Disabled,
    }
}
