//! The read-only modes: list, search, describe, instructions; and connect (status is status.rs).

use super::details::*;
use super::reach::Purpose;
use super::sign_in::SignIns;
use super::status::Status;
use super::Mode;
use super::{ErrorCode, Kernel, Outcome, Unavailable};
use crate::catalog::{lookup, Lookup, ToolInfo};
use crate::config::ServerConfig;
use crate::render;
use crate::search::{self, SearchOptions};
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

impl Kernel {
    /// A page of a server's tools (listing it at once when they are not known yet); a server
    /// that wants a sign-in gets one first under `autoAuth`.
    pub async fn list(self: &Arc<Self>, name: &str, page: Page) -> Outcome {
        SignIns::from(self)
            .with_sign_in(|| self.list_once(name, page))
            .await
    }

    async fn list_once(self: &Arc<Self>, name: &str, page: Page) -> Outcome {
        let server = match self.enabled_server(Mode::List, name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        if let Err(why) = self.look_at(name).await {
            return why.outcome(Mode::List, name);
        }
        let outcome = {
            let catalog = self.servers.view();
            let state = Status::from(self).state_of(server, true);
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
            Outcome::text(Mode::List, render::list(&listed))
                .with_server(name)
                .with_part(ListDetails {
                    tools: tools.len(),
                    offset: page.offset,
                })
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
            if let Err(outcome) = self.enabled_server(Mode::Search, name) {
                return outcome;
            }
        }
        let listed = self
            .list_unknown(opts.server.as_deref(), None, Purpose::Look)
            .await;
        let catalog = self.servers.view();
        let page = match search::search(catalog.tools(), catalog.index(), query, &opts) {
            Ok(page) => page,
            Err(why) => return Outcome::error(Mode::Search, ErrorCode::InvalidQuery, why),
        };
        let mut text = render::search(query, opts.server.as_deref(), &page, include_schemas);
        append_unavailable(&mut text, &listed.failed);
        if !listed.pending.is_empty() {
            text.push('\n');
            text.push_str(&render::search_still_listing(&listed.pending));
        }
        let matches = page
            .hits
            .iter()
            .map(|hit| SearchMatch {
                server: hit.tool.server.clone(),
                tool: hit.tool.name.clone(),
                also: hit
                    .also
                    .iter()
                    .map(|t| ToolRef {
                        server: t.server.clone(),
                        tool: t.name.clone(),
                    })
                    .collect(),
            })
            .collect();
        let weak = page.weak.as_ref();
        let outcome = Outcome::text(Mode::Search, text)
            .with_part(SearchDetails {
                query: query.to_string(),
                matches,
                total: page.total,
                offset: page.offset,
                weak: weak.map(|_| true),
                servers: weak.map(|servers| servers.iter().map(|(name, _)| name.clone()).collect()),
                signals: page.signals,
            })
            .with_listing(&listed.pending);
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
        match self.resolve(Mode::Describe, name, server).await {
            Ok(tool) => self.bounded(
                Outcome::text(Mode::Describe, render::describe(&tool, audience))
                    .with_server(tool.server.clone())
                    .with_tool(tool.name.clone())
                    // For programs: the schema exactly as the server sent it.
                    .with_part(DescribeDetails {
                        input_schema: Some(tool.input_schema().cloned().unwrap_or_default()),
                    }),
            ),
            Err(outcome) => outcome,
        }
    }

    pub async fn instructions(self: &Arc<Self>, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server(Mode::Instructions, name) {
            return outcome;
        }
        if let Err(why) = self.look_at(name).await {
            return why.outcome(Mode::Instructions, name);
        }
        let meta = self.servers.meta(name);
        let text = meta.as_ref().and_then(|m| m.instructions.as_deref());
        self.bounded(
            Outcome::text(Mode::Instructions, render::instructions(name, text)).with_server(name),
        )
    }

    /// (Re)connects `name` now, ignoring backoff, refreshing its metadata and cache.
    /// (Re)connects `name`; one that wants a sign-in gets one first under `autoAuth`.
    pub async fn connect(self: &Arc<Self>, name: &str) -> Outcome {
        SignIns::from(self)
            .with_sign_in(|| self.connect_once(name))
            .await
    }

    async fn connect_once(self: &Arc<Self>, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server(Mode::Connect, name) {
            return outcome;
        }
        match self.reconnect(name).await {
            Ok(_) => {
                let mut listed = self.list_once(name, Page::default()).await;
                listed.set_mode(Mode::Connect);
                listed
            }
            Err(why) => why.connect_outcome(name),
        }
    }

    /// Resolves a tool name for `describe` / `call`; fetches metadata it lacks before giving up.
    pub(super) async fn resolve(
        self: &Arc<Self>,
        mode: Mode,
        name: &str,
        server: Option<&str>,
    ) -> Result<ToolInfo, Outcome> {
        if let Some(s) = server {
            self.enabled_server(mode, s)?;
        }
        if let Some(found) = self.lookup(mode, name, server)? {
            return Ok(found);
        }
        // A call keeps the server it lists; a describe only looks.
        let purpose = match mode {
            Mode::Call => Purpose::Call,
            _ => Purpose::Look,
        };
        let listed = self.list_unknown(server, Some(name), purpose).await;
        let mut pending = vec![];
        if !listed.asked.is_empty() {
            if let Some(found) = self.lookup(mode, name, server)? {
                return Ok(found);
            }
            pending = listed.pending;
            // The only server the tool could be on cannot be reached: that is the answer,
            // unless the name carries another server's prefix (then it is likely a misspelling).
            if let ([only], [(_, why)]) = (listed.asked.as_slice(), listed.failed.as_slice()) {
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
            return Err(Outcome::error(mode, ErrorCode::ToolHidden, text).with_tool(name));
        }
        if let Lookup::Found(tool) = lookup(catalog.app_only(), name, server) {
            let text = render::for_app(&tool.name, &tool.server);
            return Err(Outcome::error(mode, ErrorCode::ToolForApp, text).with_tool(name));
        }
        let suggestions = search::did_you_mean(catalog.tools(), catalog.index(), name, server, 5);
        let mut text = render::not_found(name, server, &suggestions);
        if !pending.is_empty() {
            text.push('\n');
            text.push_str(&render::lookup_still_listing(&pending));
        }
        Err(Outcome::error(mode, ErrorCode::ToolNotFound, text)
            .with_tool(name)
            .with_listing(&pending))
    }

    pub(super) fn lookup(
        &self,
        mode: Mode,
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
            .with_tool(name)),
            Lookup::NotFound => Ok(None),
        }
    }

    pub(super) fn enabled_server(&self, mode: Mode, name: &str) -> Result<&ServerConfig, Outcome> {
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
