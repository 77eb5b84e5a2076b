//! `pi-mcp doctor`: every config source and what came of it, the merged servers with where each
//! came from, every problem (notes included), and a fresh, timed connection to each server.

use super::details::*;
use super::Kernel;
use super::Mode;
use super::{ErrorCode, Outcome};
use crate::config::{
    Diagnostic, Level, Role, ServerConfig, Sharing, Source, SourceState, Transport, Trust,
};
use crate::render::{self, ConnectCheck};
use futures::StreamExt;
use pi_mcp_connection::broker::family::family;
use serde_json::{json, Value};
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
            trust: trust_json(&config.trust),
            sources: config.sources.iter().map(source_json).collect(),
            servers: config
                .servers
                .iter()
                .map(|s| {
                    let mut json = server_json(s, checks.iter().find(|c| c.server == s.name));
                    if let Some(sign_in) = self.kernel.sign_in.shown(s) {
                        json["signIn"] = sign_in.into();
                    }
                    json
                })
                .collect(),
            diagnostics: config.diagnostics.iter().map(diagnostic_json).collect(),
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
        let result = self.kernel.renew(&name).await;
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
        (shared || role.role != "alone").then(|| {
            render::family(
                role.role,
                role.endpoint.as_deref(),
                role.members,
                role.hub_pid,
                role.why.as_deref(),
            )
        })
    }
}

fn trust_json(trust: &Trust) -> Value {
    use crate::config::TrustBasis;
    match &trust.basis {
        TrustBasis::Given => json!({ "trusted": trust.trusted, "basis": "given" }),
        TrustBasis::Default => json!({ "trusted": trust.trusted, "basis": "default" }),
        TrustBasis::Saved { file, folder } => json!({
            "trusted": trust.trusted, "basis": "saved", "file": file, "folder": folder
        }),
    }
}

fn source_json(source: &Source) -> Value {
    let mut out = json!({ "path": source.path, "role": role_name(&source.role) });
    if let Role::Import { kind, by, .. } = &source.role {
        out["import"] = json!(kind.name());
        out["importedBy"] = json!(by);
    }
    let (state, servers, shadowed) = match &source.state {
        SourceState::Missing => ("missing", None, None),
        SourceState::Blank => ("blank", None, None),
        SourceState::Invalid => ("invalid", None, None),
        SourceState::Loaded { servers, shadowed } => ("loaded", Some(servers), Some(shadowed)),
        SourceState::Untrusted { servers } => ("untrusted", Some(servers), None),
    };
    out["state"] = json!(state);
    if let Some(servers) = servers {
        out["servers"] = json!(servers);
    }
    if let Some(shadowed) = shadowed.filter(|s| !s.is_empty()) {
        out["shadowed"] = json!(shadowed);
    }
    out
}

fn role_name(role: &Role) -> &'static str {
    match role {
        Role::Shared => "shared",
        Role::PiGlobal => "pi-global",
        Role::Explicit => "explicit",
        Role::Project => "project",
        Role::Import { .. } => "import",
        Role::Package { .. } => "package",
    }
}

fn server_json(server: &ServerConfig, check: Option<&ConnectCheck>) -> Value {
    let mut out = json!({
        "name": server.name,
        "source": server.source,
        "files": server.files,
        "lifecycle": server.lifecycle.name(),
        "disabled": server.disabled,
        "exposure": server.exposure.server.map(|e| e.name()),
    });
    if let Some(package) = &server.package {
        out["package"] =
            json!({ "name": package.name, "root": package.root, "settings": package.settings });
    }
    match &server.transport {
        Transport::Stdio { command, args, .. } => {
            out["transport"] = json!("stdio");
            out["command"] = json!(command);
            out["args"] = json!(args);
        }
        Transport::Http { url, .. } => {
            out["transport"] = json!("http");
            // Without user info and query: either may hold a key.
            out["url"] = json!(pi_mcp_connection::pool::display_url(url.expose()));
        }
        Transport::Socket { path } => {
            out["transport"] = json!("socket");
            out["socket"] = json!(path);
        }
    }
    if let Some(imported) = &server.imported {
        out["imported"] = json!({ "kind": imported.kind.name(), "by": imported.by });
    }
    if let Some(check) = check {
        out["connect"] = match &check.result {
            Ok(tools) => json!({ "ok": true, "ms": check.ms, "tools": tools }),
            Err(error) => json!({ "ok": false, "ms": check.ms, "error": error }),
        };
        if let Some(log) = &check.log {
            out["connect"]["log"] = json!(log.lines().collect::<Vec<_>>());
        }
    }
    out
}

fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "level": match d.level { Level::Error => "error", Level::Warning => "warning", Level::Note => "note" },
        "file": d.file,
        "line": d.line,
        "server": d.server,
        "field": d.field,
        "message": d.message,
        "text": d.to_string(),
    })
}
