//! The read-only modes: list, search, describe, instructions; and connect (status is status.rs).

use super::Tool;
use crate::adapter::details::*;
use crate::adapter::reach::Purpose;
use crate::adapter::sign_in::SignIns;
use crate::adapter::status::Status;
use crate::adapter::Mode;
use crate::adapter::{ErrorCode, Outcome, Unavailable};
use crate::render;
use crate::search::{self, SearchOptions};

/// Tools a `list` shows unless `limit` says otherwise.
pub const DEFAULT_LIST_LIMIT: usize = 100;

/// Which part of a long answer to show.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Page {
    /// `None`: the mode's default.
    pub limit: Option<usize>,
    pub offset: usize,
}

impl Tool<'_> {
    /// A page of a server's tools (listing it at once when they are not known yet); a server
    /// that wants a sign-in gets one first under `autoAuth`.
    pub async fn list(&self, name: &str, page: Page) -> Outcome {
        SignIns::from(self.kernel)
            .with_sign_in(|| self.list_once(name, page))
            .await
    }

    async fn list_once(&self, name: &str, page: Page) -> Outcome {
        let server = match self.enabled_server(Mode::List, name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        let listed = self.kernel.list_unknown(Some(name), None, Purpose::Look);
        if let Some((_, why)) = listed.await.failed.into_iter().next() {
            return why.outcome(Mode::List, name);
        }
        let outcome = {
            let catalog = self.kernel.servers.view();
            let state = Status::from(self.kernel).state_of(server, true);
            let meta = self.kernel.servers.meta(name);
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
        self.kernel.bounded(outcome)
    }

    pub async fn search(&self, query: &str, opts: SearchOptions, include_schemas: bool) -> Outcome {
        if let Some(name) = opts.server.as_deref() {
            if let Err(outcome) = self.enabled_server(Mode::Search, name) {
                return outcome;
            }
        }
        let listed = self
            .kernel
            .list_unknown(opts.server.as_deref(), None, Purpose::Look)
            .await;
        let catalog = self.kernel.servers.view();
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
        self.kernel.bounded(outcome)
    }

    /// A tool's description and parameters as the model reads them.
    pub async fn describe(&self, name: &str, server: Option<&str>) -> Outcome {
        self.describe_for(name, server, render::Audience::Model)
            .await
    }

    pub async fn describe_for(
        &self,
        name: &str,
        server: Option<&str>,
        audience: render::Audience,
    ) -> Outcome {
        match self.resolve(Mode::Describe, name, server).await {
            Ok(tool) => self.kernel.bounded(
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

    pub async fn instructions(&self, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server(Mode::Instructions, name) {
            return outcome;
        }
        let listed = self.kernel.list_unknown(Some(name), None, Purpose::Look);
        if let Some((_, why)) = listed.await.failed.into_iter().next() {
            return why.outcome(Mode::Instructions, name);
        }
        let meta = self.kernel.servers.meta(name);
        let text = meta.as_ref().and_then(|m| m.instructions.as_deref());
        self.kernel.bounded(
            Outcome::text(Mode::Instructions, render::instructions(name, text)).with_server(name),
        )
    }

    /// (Re)connects `name` now, ignoring backoff, refreshing its metadata and cache.
    /// (Re)connects `name`; one that wants a sign-in gets one first under `autoAuth`.
    pub async fn connect(&self, name: &str) -> Outcome {
        SignIns::from(self.kernel)
            .with_sign_in(|| self.connect_once(name))
            .await
    }

    async fn connect_once(&self, name: &str) -> Outcome {
        if let Err(outcome) = self.enabled_server(Mode::Connect, name) {
            return outcome;
        }
        self.kernel.servers.mark_wanted(name);
        match self.kernel.reconnect(name).await {
            Ok(_) => {
                let mut listed = self.list_once(name, Page::default()).await;
                listed.set_mode(Mode::Connect);
                listed
            }
            Err(why) => why.connect_outcome(name),
        }
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
