//! The catalog as the modes see it: every enabled server's tools (and resource tools), named and
//! filtered as configured, in config order, with the search index (the config's `searchKeywords`
//! among its words) built at the first search.
//! Derived from the server registry's metadata and rebuilt when that changes.

use super::servers::ServerMeta;
use crate::catalog::{build_server_tools, ToolInfo, ToolPrefix};
use crate::config::{tool_pattern_matches, Exposure, SearchKeywords, ServerConfig};
use crate::search::{SearchIndex, ServerText};
use std::sync::{Arc, OnceLock};

pub struct View {
    tools: Vec<ToolInfo>,
    /// Tools the config hides (`exposure`/`toolExposure` `"hidden"`): in no list, search or call,
    /// kept only so that naming one says why it is unreachable.
    hidden: Vec<ToolInfo>,
    /// Tools only their server's app may call (`_meta.ui.visibility: ["app"]`): hidden from the
    /// model as the config's hidden ones are, and found here for the app.
    app_only: Vec<ToolInfo>,
    /// Each enabled server's name, `description` and instructions, for the search index.
    servers: Vec<(String, Option<String>, Option<String>)>,
    /// Per tool, the words its server's `searchKeywords` give it.
    keywords: Vec<String>,
    /// The search index of `tools`, built at the first search after they change (not at load).
    index: OnceLock<SearchIndex>,
}

impl View {
    /// The catalog of `servers` (each with its metadata, if known).
    pub fn build(
        servers: Vec<(&ServerConfig, Option<Arc<ServerMeta>>)>,
        prefix: ToolPrefix,
    ) -> View {
        let servers: Vec<_> = servers.into_iter().filter(|(s, _)| !s.disabled).collect();
        let texts = servers
            .iter()
            .map(|(s, m)| {
                let instructions = m.as_ref().and_then(|m| m.instructions.clone());
                (s.name.clone(), s.description.clone(), instructions)
            })
            .collect();
        let by_server: Vec<(String, SearchKeywords)> = servers
            .iter()
            .map(|(s, _)| (s.name.clone(), s.search_keywords.clone()))
            .collect();
        let (app_only, tools) = servers
            .into_iter()
            .filter_map(|(s, m)| m.map(|m| (s, m)))
            .flat_map(|(s, m)| {
                let prefix = s.tool_prefix.unwrap_or(prefix);
                build_server_tools(
                    &s.name,
                    prefix,
                    &m.tools,
                    &m.resources,
                    &m.templates,
                    s.expose_resources,
                )
                .into_iter()
                .filter(|t| s.lets_through(&t.original, &t.name))
                .map(|t| (s.exposure.of(&t.original) == Some(Exposure::Hidden), t))
                .collect::<Vec<_>>()
            })
            .partition::<Vec<_>, _>(|(_, t)| !t.for_model());
        let (hidden, tools): (Vec<_>, Vec<_>) = tools.into_iter().partition(|(hidden, _)| *hidden);
        let tools: Vec<ToolInfo> = tools.into_iter().map(|(_, t)| t).collect();
        let keywords = tools
            .iter()
            .map(|tool| {
                let of_server = by_server.iter().find(|(name, _)| *name == tool.server);
                of_server.map_or_else(String::new, |(_, k)| keywords_of(tool, k))
            })
            .collect();
        View {
            tools,
            hidden: hidden.into_iter().map(|(_, t)| t).collect(),
            app_only: app_only.into_iter().map(|(_, t)| t).collect(),
            servers: texts,
            keywords,
            index: OnceLock::new(),
        }
    }

    /// The tools the config hides.
    pub fn hidden(&self) -> &[ToolInfo] {
        &self.hidden
    }

    /// The tools only their server's app may call.
    pub fn app_only(&self) -> &[ToolInfo] {
        &self.app_only
    }

    pub fn tools(&self) -> &[ToolInfo] {
        &self.tools
    }

    pub fn index(&self) -> &SearchIndex {
        self.index.get_or_init(|| {
            let servers: Vec<ServerText> = self
                .servers
                .iter()
                .map(|(name, description, instructions)| ServerText {
                    name,
                    description: description.as_deref(),
                    instructions: instructions.as_deref(),
                })
                .collect();
            SearchIndex::build_with(&self.tools, &servers, &self.keywords)
        })
    }

    pub fn server_tools(&self, server: &str) -> Vec<&ToolInfo> {
        self.tools.iter().filter(|t| t.server == server).collect()
    }
}

/// The words `searchKeywords` gives `tool`: those of every entry whose key is its name (MCP or
/// as the model calls it) or a pattern fitting one.
fn keywords_of(tool: &ToolInfo, keywords: &SearchKeywords) -> String {
    keywords
        .iter()
        .filter(|(key, _)| {
            tool_pattern_matches(key, &tool.original) || tool_pattern_matches(key, &tool.name)
        })
        .flat_map(|(_, words)| words.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}
