//! `pi-mcp doctor`: every config source and what came of it, the merged servers with where each
//! came from, every problem (notes included), and a fresh, timed connection to each server.

use super::detail_entries::*;
use super::details::*;
use super::Kernel;
use super::Mode;
use super::{ErrorCode, Outcome};
use crate::config::{
    Diagnostic, Level, Role, ServerConfig, Sharing, Source, SourceState, Transport, Trust,
};
use crate::render::{self, ConnectCheck};
use futures::StreamExt;
use pi_mcp_connection::broker::family::{family, RoleName};
use std::sync::Arc;
use std::time::Instant;

/// `doctor`: the config's sources and problems, each server's state, and a connect test.
pub struct Doctor<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Doctor);

impl Doctor<'_> {
    /// With `connect`, (re)connects every enabled server under the listing queue's bound and
    /// times each; a lazy server it started is stopped once checked, unless the model wants it.
    pub async fn doctor(&self, connect: bool) -> Outcome {
        let checks: Vec<ConnectCheck> = if connect {
            let names: Vec<String> = self
                .kernel
                .server_names(false)
                .into_iter()
                .map(str::to_string)
                .collect();
            futures::stream::iter(names)
                .map(|name| self.timed_connect(name))
                .buffered(self.kernel.bounds.fill_concurrency)
                .collect()
                .await
        } else {
            vec![]
        };
        let config = &self.kernel.config;
        let failed = checks.iter().any(|c| c.result.is_err());
        let errors = config.diagnostics.iter().any(|d| d.level == Level::Error);
        let builtin = crate::config::builtin_mcp_on(
            &self.kernel.agent_dir,
            &self.kernel.cwd,
            self.kernel.file_limits.config_bytes,
        );
        let log_warning = self.kernel.host.server_log().check();
        let warnings: Vec<&str> = [self.kernel.cache_warning.as_deref(), log_warning.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        let mut text = render::doctor(config, &checks, &warnings, &self.kernel.home(), builtin);
        if let Some(line) = self.family_line() {
            text.push_str(&format!("\n\n{line}"));
        }
        let mut outcome = Outcome::text(Mode::Doctor, text).with_part(DoctorDetails {
            trust: trust_entry(&config.trust),
            sources: config.sources.iter().map(source_entry).collect(),
            servers: config
                .servers
                .iter()
                .map(|s| DoctorServer {
                    sign_in: self.kernel.sign_in.shown(s),
                    ..server_entry(s, checks.iter().find(|c| c.server == s.name))
                })
                .collect(),
            diagnostics: config.diagnostics.iter().map(diagnostic_entry).collect(),
            cache_warning: self.kernel.cache_warning.clone(),
            log_warning,
        });
        if failed {
            outcome.fail(ErrorCode::ConnectFailed);
        } else if errors {
            outcome.fail(ErrorCode::ConfigError);
        }
        outcome
    }

    async fn timed_connect(&self, name: String) -> ConnectCheck {
        let _turn = self.kernel.listings.turn().await;
        let started = Instant::now();
        let result = self.kernel.reconnect(&name).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let result = result
            .map(|_| self.kernel.servers.view().server_tools(&name).len())
            .map_err(|why| why.reason(&name));
        let sign_in = self
            .kernel
            .server(&name)
            .and_then(|s| self.kernel.sign_in.shown(s));
        let hints = result
            .as_ref()
            .ok()
            .and_then(|_| render::hints::summary(&self.kernel.servers.view().server_tools(&name)));
        let log = self.kernel.pool.recent_log(&name);
        self.kernel.stop_if_unwanted(&name).await;
        ConnectCheck {
            hints,
            log,
            server: name,
            ms,
            result,
            sign_in,
        }
    }

    /// The doctor's line about the family, when a server is shared with it.
    fn family_line(&self) -> Option<String> {
        let shared = self
            .kernel
            .servers
            .configs()
            .any(|s| s.sharing == Sharing::Family);
        let role = family().role();
        (shared || role.role != RoleName::Alone).then(|| {
            render::family(
                role.role.name(),
                role.endpoint.as_deref(),
                role.members,
                role.hub_pid,
                role.why.as_deref(),
            )
        })
    }
}

fn trust_entry(trust: &Trust) -> TrustEntry {
    use crate::config::TrustBasis;
    let (basis, file, folder) = match &trust.basis {
        TrustBasis::Given => (TrustBasisName::Given, None, None),
        TrustBasis::Default => (TrustBasisName::Default, None, None),
        TrustBasis::Saved { file, folder } => (TrustBasisName::Saved, Some(file), Some(folder)),
    };
    TrustEntry {
        trusted: trust.trusted,
        basis,
        file: file.map(|f| f.display().to_string()),
        folder: folder.map(|f| f.display().to_string()),
    }
}

fn source_entry(source: &Source) -> SourceEntry {
    let (import, imported_by) = match &source.role {
        Role::Import { kind, by, .. } => (Some(*kind), Some(by.display().to_string())),
        _ => (None, None),
    };
    let (state, servers, shadowed) = match &source.state {
        SourceState::Missing => (SourceStateName::Missing, None, None),
        SourceState::Blank => (SourceStateName::Blank, None, None),
        SourceState::Invalid => (SourceStateName::Invalid, None, None),
        SourceState::Loaded { servers, shadowed } => {
            (SourceStateName::Loaded, Some(servers), Some(shadowed))
        }
        SourceState::Untrusted { servers } => (SourceStateName::Untrusted, Some(servers), None),
    };
    SourceEntry {
        path: source.path.display().to_string(),
        role: role_name(&source.role),
        import,
        imported_by,
        state,
        servers: servers.cloned(),
        shadowed: shadowed.filter(|s| !s.is_empty()).cloned(),
    }
}

fn role_name(role: &Role) -> SourceRoleName {
    match role {
        Role::Shared => SourceRoleName::Shared,
        Role::PiGlobal => SourceRoleName::PiGlobal,
        Role::Explicit => SourceRoleName::Explicit,
        Role::Project => SourceRoleName::Project,
        Role::Import { .. } => SourceRoleName::Import,
        Role::Package { .. } => SourceRoleName::Package,
    }
}

/// A server's entry, without its sign-in (which the adapter knows).
fn server_entry(server: &ServerConfig, check: Option<&ConnectCheck>) -> DoctorServer {
    let shown = |path: &std::path::Path| path.display().to_string();
    let (transport, command, args, url, socket) = match &server.transport {
        Transport::Stdio { command, args, .. } => (
            TransportName::Stdio,
            Some(command.clone()),
            Some(args.clone()),
            None,
            None,
        ),
        // Without user info and query: either may hold a key.
        Transport::Http { url, .. } => (
            TransportName::Http,
            None,
            None,
            Some(pi_mcp_connection::pool::display_url(url.expose())),
            None,
        ),
        Transport::Socket { path } => (TransportName::Socket, None, None, None, Some(shown(path))),
    };
    DoctorServer {
        name: server.name.clone(),
        source: shown(&server.source),
        files: server.files.iter().map(|f| shown(f)).collect(),
        lifecycle: server.lifecycle,
        disabled: server.disabled,
        exposure: server.exposure.server,
        package: server.package.as_ref().map(Into::into),
        transport,
        command,
        args,
        url,
        socket,
        imported: server.imported.as_ref().map(|i| ImportedEntry {
            kind: i.kind,
            by: shown(&i.by),
        }),
        connect: check.map(|check| {
            let (tools, error) = match &check.result {
                Ok(tools) => (Some(*tools), None),
                Err(error) => (None, Some(error.clone())),
            };
            ConnectEntry {
                ok: check.result.is_ok(),
                ms: check.ms,
                tools,
                error,
                log: check
                    .log
                    .as_ref()
                    .map(|log| log.lines().map(str::to_string).collect()),
            }
        }),
        sign_in: None,
    }
}

fn diagnostic_entry(d: &Diagnostic) -> DiagnosticEntry {
    DiagnosticEntry {
        level: d.level,
        file: d.file.as_ref().map(|f| f.display().to_string()),
        line: d.line,
        server: d.server.clone(),
        field: d.field.clone(),
        message: d.message.clone(),
        text: d.to_string(),
    }
}
