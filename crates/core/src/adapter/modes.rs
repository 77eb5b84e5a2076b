//! The read-only modes: status, list, search, describe, instructions; and connect.

use super::unlisted::{pending_details, Purpose};
use super::{Adapter, ErrorCode, Outcome, Unavailable};
use crate::catalog::{lookup, Lookup, ToolInfo};
use crate::config::ServerConfig;
use crate::render::{self, ServerState, ServerStatus};
use crate::search::{self, SearchOptions};
use serde_json::json;
use std::sync::Arc;

/// Tools a `list` shows unless `limit` says otherwise.
pub const DEFAULT_LIST_LIMIT: usize = 100;

/// Which part of a long answer to show.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Page {
    /// `None`: the mode's default.
    pub limit: Option<usize>,
    pub offset: usize,
}

impl Adapter {
    pub fn status(&self) -> Outcome {
        let servers = self.server_statuses();
        let details: Vec<_> = servers
            .iter()
            .map(|s| {
                let transport = self
                    .pool
                    .get(&s.name)
                    .and_then(|c| c.remote_kind())
                    .map(|kind| kind.name());
                let config = self.server(&s.name);
                let source = config.map(|c| c.source.display().to_string());
                let registered = config.and_then(|c| c.registered.as_ref()).map(|p| p.display().to_string());
                let imported = config.and_then(|c| c.imported.as_ref()).map(|i| i.kind.name());
                let package = config.and_then(|c| c.package.as_ref()).map(|p| json!({ "name": p.name, "root": p.root, "settings": p.settings, "project": p.project }));
                let exposure = config.and_then(|c| c.exposure.server).map(|e| e.name());
                let problem = match &s.state {
                    ServerState::Failed { reason, .. } | ServerState::NeedsAuth { reason } => Some(pi_mcp_connection::clean::text(reason)),
                    _ => None,
                };
                let shared = config.map_or(serde_json::Value::Null, |c| self.sharing(c));
                json!({ "name": s.name, "state": state_name(&s.state), "tools": s.tool_count, "leftOut": s.left_out, "source": source, "transport": transport, "description": s.description, "exposure": exposure, "imported": imported, "registeredBy": registered, "package": package, "problem": problem, "signIn": s.sign_in, "shared": shared })
            })
            .collect();
        let total: usize = servers
            .iter()
            .filter(|s| s.state != ServerState::Disabled)
            .map(|s| s.tool_count)
            .sum();
        let problems = self.diagnostics();
        let mut text = render::status(&servers, &problems);
        let listing = self.being_listed();
        if !listing.is_empty() {
            text.push_str("\n\n");
            text.push_str(&render::status_still_listing(&listing));
        }
        if !self.config.servers.is_empty() {
            text.push_str("\n\n");
            text.push_str(&render::config_sources(&self.config_sources()));
        }
        let mut outcome = Outcome::text("status", text)
            .with("servers", details)
            .with("totalTools", total)
            .with("problems", problems);
        if let Some(role) = self.family_role() {
            outcome.set("family", role);
        }
        self.bounded(match listing.is_empty() {
            true => outcome,
            false => outcome.with("listing", pending_details(&listing)),
        })
    }

    /// Each config file that defines servers: its path (`~` for home), whether it belongs to the
    /// project, and its servers in config order.
    fn config_sources(&self) -> Vec<(String, bool, Vec<&str>)> {
        let home = self.home();
        let mut files: Vec<(String, bool, Vec<&str>)> = vec![];
        for server in &self.config.servers {
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
                    server.source.starts_with(&self.cwd),
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
        let catalog = self.servers.view();
        let groups: Vec<(String, Vec<&ToolInfo>)> = self
            .server_names(false)
            .into_iter()
            .map(|name| (name.to_string(), catalog.server_tools(name)))
            .collect();
        Outcome::text("tools", render::tools_overview(&groups))
            .with("totalTools", catalog.tools().len())
    }

    fn server_statuses(&self) -> Vec<ServerStatus> {
        let catalog = self.servers.view();
        self.servers
            .configs()
            .map(|s| ServerStatus {
                name: s.name.clone(),
                state: self.state_of(s, self.servers.has_meta(&s.name)),
                tool_count: catalog.server_tools(&s.name).len(),
                description: s.description.clone(),
                sign_in: self.shown_sign_in(s),
                left_out: self.servers.meta(&s.name).map_or(0, |m| m.left_out.len()),
                sharing: self.sharing(s)["text"].as_str().map(str::to_string),
            })
            .collect()
    }

    fn state_of(&self, server: &ServerConfig, has_metadata: bool) -> ServerState {
        let name = &server.name;
        if server.disabled {
            ServerState::Disabled
        } else if self.pool.is_live(name) {
            ServerState::Connected
        } else if self.pool.is_connecting(name) {
            ServerState::Connecting
        } else if let Some((ago, cause)) = self.servers.failure(name) {
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

    /// A page of a server's tools (listing it at once when they are not known yet); a server
    /// that wants a sign-in gets one first under `autoAuth`.
    pub async fn list(self: &Arc<Self>, name: &str, page: Page) -> Outcome {
        self.with_sign_in(|| self.list_once(name, page)).await
    }

    async fn list_once(self: &Arc<Self>, name: &str, page: Page) -> Outcome {
        let server = match self.enabled_server("list", name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        if let Err(why) = self.look_at(name).await {
            return why.outcome("list", name);
        }
        let outcome = {
            let catalog = self.servers.view();
            let state = self.state_of(server, true);
            let meta = self.servers.meta(name);
            let tools = catalog.server_tools(name);
            let listed = render::Listed {
                server: name,
                state: &state,
                tools: &tools,
                offset: page.offset,
                limit: page.limit.unwrap_or(DEFAULT_LIST_LIMIT),
                instructions: meta.as_ref().and_then(|m| m.instructions.as_deref()),
                cut: meta.as_ref().and_then(|m| m.cut),
                left_out: meta.as_ref().map_or(&[][..], |m| &m.left_out),
            };
            Outcome::text("list", render::list(&listed))
                .with("server", name)
                .with("tools", tools.len())
                .with("offset", page.offset)
        };
        self.bounded(outcome)
    }

    pub async fn search(
        self: &Arc<Self>,
        query: &str,
        opts: SearchOptions,
        include_schemas: bool,
    ) -> Outcome {
        if let Some(name) = opts.server.as_deref() {
            if let Err(outcome) = self.enabled_server("search", name) {
                return outcome;
            }
        }
        let unlisted = self.unlisted(opts.server.as_deref(), None);
        let listed = self.list_for(&unlisted, Purpose::Look).await;
        let catalog = self.servers.view();
        let page = match search::search(catalog.tools(), catalog.index(), query, &opts) {
            Ok(page) => page,
            Err(why) => return Outcome::error("search", ErrorCode::InvalidQuery, why),
        };
        let mut text = render::search(query, opts.server.as_deref(), &page, include_schemas);
        append_unavailable(&mut text, &listed.failed);
        if !listed.pending.is_empty() {
            text.push('\n');
            text.push_str(&render::search_still_listing(&listed.pending));
        }
        let matches: Vec<_> = page
            .hits
            .iter()
            .map(|hit| {
                let mut found = json!({ "server": hit.tool.server, "tool": hit.tool.name });
                if !hit.also.is_empty() {
                    let also: Vec<_> = hit
                        .also
                        .iter()
                        .map(|t| json!({ "server": t.server, "tool": t.name }))
                        .collect();
                    found["also"] = json!(also);
                }
                found
            })
            .collect();
        let outcome = Outcome::text("search", text)
            .with("query", query)
            .with("matches", matches)
            .with("total", page.total)
            .with("offset", page.offset);
        let outcome = match &page.weak {
            Some(servers) => outcome.with("weak", true).with(
                "servers",
                servers
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>(),
            ),
            None => outcome,
        };
        let outcome = match &page.signals {
            // What "No strong match" is decided on, for scripts/fit-weak.mjs.
            Some(s) => outcome.with(
                "signals",
                json!({
                    "strength": s.strength,
                    "firstShare": s.first_share,
                    "firstScore": s.first_score,
                    "fifthOfFirst": s.fifth_of_first,
                    "terms": s.terms,
                }),
            ),
            None => outcome,
        };
        let outcome = match listed.pending.is_empty() {
            true => outcome,
            false => outcome.with("listing", pending_details(&listed.pending)),
        };
        drop(catalog);
        self.bounded(outcome)
    }

    /// A tool's description and parameters as the model reads them.
    pub async fn describe(self: &Arc<Self>, name: &str, server: Option<&str>) -> Outcome {
        self.describe_for(name, server, render::Audience::Model)
            .await
    }

    pub async fn describe_for(
        self: &Arc<Self>,
        name: &str,
        server: Option<&str>,
        audience: render::Audience,
    ) -> Outcome {
        match self.resolve("describe", name, server).await {
            Ok(tool) => self.bounded(
                Outcome::text("describe", render::describe(&tool, audience))
                    .with("server", tool.server.clone())
                    .with("tool", tool.name.clone())
                    // For programs: the schema exactly as the server sent it.
                    .with(
                        "inputSchema",
                        tool.input_schema().cloned().unwrap_or_default(),
                    ),
            ),
            Err(outcome) => outcome,
        }
    }

    pub async fn instructions(self: &Arc<Self>, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server("instructions", name) {
            return outcome;
        }
        if let Err(why) = self.look_at(name).await {
            return why.outcome("instructions", name);
        }
        let meta = self.servers.meta(name);
        let text = meta.as_ref().and_then(|m| m.instructions.as_deref());
        self.bounded(
            Outcome::text("instructions", render::instructions(name, text)).with("server", name),
        )
    }

    /// (Re)connects `name` now, ignoring backoff, refreshing its metadata and cache.
    /// (Re)connects `name`; one that wants a sign-in gets one first under `autoAuth`.
    pub async fn connect(self: &Arc<Self>, name: &str) -> Outcome {
        self.with_sign_in(|| self.connect_once(name)).await
    }

    async fn connect_once(self: &Arc<Self>, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server("connect", name) {
            return outcome;
        }
        match self.reconnect(name).await {
            Ok(_) => {
                let mut listed = self.list_once(name, Page::default()).await;
                listed.set("mode", "connect");
                listed
            }
            Err(why) => why.connect_outcome(name),
        }
    }

    /// Resolves a tool name for `describe` / `call`; fetches metadata it lacks before giving up.
    pub(super) async fn resolve(
        self: &Arc<Self>,
        mode: &str,
        name: &str,
        server: Option<&str>,
    ) -> Result<ToolInfo, Outcome> {
        if let Some(s) = server {
            self.enabled_server(mode, s)?;
        }
        if let Some(found) = self.lookup(mode, name, server)? {
            return Ok(found);
        }
        let unlisted = self.unlisted(server, Some(name));
        let mut pending = vec![];
        if !unlisted.servers.is_empty() {
            // A call keeps the server it lists; a describe only looks.
            let purpose = match mode {
                "call" => Purpose::Call,
                _ => Purpose::Look,
            };
            // A call through the queue keeps the server it finds the tool on running for it.
            let _seeking =
                (purpose == Purpose::Call && !unlisted.named).then(|| self.listings.seek(name));
            let listed = self.list_for(&unlisted, purpose).await;
            if let Some(found) = self.lookup(mode, name, server)? {
                return Ok(found);
            }
            pending = listed.pending;
            // The only server the tool could be on cannot be reached: that is the answer,
            // unless the name carries another server's prefix (then it is likely a misspelling).
            if let ([only], [(_, why)]) = (unlisted.servers.as_slice(), listed.failed.as_slice()) {
                let other_prefix = self
                    .server_names(false)
                    .iter()
                    .any(|s| s != only && name.starts_with(&format!("{s}_")));
                if !other_prefix {
                    return Err(why.outcome(mode, only));
                }
            }
        }
        // A tool of a server that is turned off: that is the answer, not suggestions.
        let off = self.config.servers.iter().find(|s| {
            s.disabled
                && server.is_none_or(|n| n == s.name)
                && name.starts_with(&format!("{}_", s.name))
        });
        if let Some(off) = off {
            self.enabled_server(mode, &off.name)?;
        }
        let catalog = self.servers.view();
        if let Lookup::Found(tool) = lookup(catalog.hidden(), name, server) {
            let source = self
                .server(&tool.server)
                .map(|s| s.source.clone())
                .unwrap_or_default();
            let text = render::hidden(&tool.name, &tool.server, &source);
            return Err(Outcome::error(mode, ErrorCode::ToolHidden, text).with("tool", name));
        }
        if let Lookup::Found(tool) = lookup(catalog.app_only(), name, server) {
            let text = render::for_app(&tool.name, &tool.server);
            return Err(Outcome::error(mode, ErrorCode::ToolForApp, text).with("tool", name));
        }
        let suggestions = search::did_you_mean(catalog.tools(), catalog.index(), name, server, 5);
        let mut text = render::not_found(name, server, &suggestions);
        if !pending.is_empty() {
            text.push('\n');
            text.push_str(&render::lookup_still_listing(&pending));
        }
        let outcome = Outcome::error(mode, ErrorCode::ToolNotFound, text).with("tool", name);
        Err(match pending.is_empty() {
            true => outcome,
            false => outcome.with("listing", pending_details(&pending)),
        })
    }

    pub(super) fn lookup(
        &self,
        mode: &str,
        name: &str,
        server: Option<&str>,
    ) -> Result<Option<ToolInfo>, Outcome> {
        let catalog = self.servers.view();
        match lookup(catalog.tools(), name, server) {
            Lookup::Found(tool) => Ok(Some(tool.clone())),
            Lookup::Ambiguous(candidates) => Err(Outcome::error(
                mode,
                ErrorCode::AmbiguousTool,
                render::ambiguous(name, &candidates),
            )
            .with("tool", name)),
            Lookup::NotFound => Ok(None),
        }
    }

    pub(super) fn enabled_server(&self, mode: &str, name: &str) -> Result<&ServerConfig, Outcome> {
        self.servers
            .enabled(name)
            .map_err(|why| why.outcome(mode, name))
    }
}

fn append_unavailable(text: &mut String, unavailable: &[(String, Unavailable)]) {
    for (name, why) in unavailable {
        let why = why.reason(name);
        let first_line = why.lines().next().unwrap_or_default();
        text.push_str(&format!(
            "\n(Server \"{name}\" was not searched: {first_line})"
        ));
    }
}

fn state_name(state: &ServerState) -> &'static str {
    match state {
        ServerState::Connected => "connected",
        ServerState::Connecting => "connecting",
        ServerState::Cached => "cached",
        ServerState::NotConnected => "not-connected",
        ServerState::Failed { .. } => "failed",
        ServerState::NeedsAuth { .. } => "needs-auth",
        ServerState::Disabled => "disabled",
    }
}
