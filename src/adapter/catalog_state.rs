//! The metadata the adapter knows per server (from the cache or a live listing) and the
//! flattened tool catalog built from it.

use crate::catalog::{build_server_tools, ToolInfo, ToolPrefix};
use crate::config::ServerConfig;
use crate::search::SearchIndex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerMeta {
    /// Shared with the catalog's entries, which point at their definitions.
    pub tools: Vec<Arc<Value>>,
    pub resources: Vec<Value>,
    pub prompts: Option<Vec<Value>>,
    pub instructions: Option<String>,
    /// The id of the connection that listed it; `None` while it comes from the cache.
    pub live_connection: Option<u64>,
}

#[derive(Default)]
pub struct CatalogState {
    meta: HashMap<String, ServerMeta>,
    tools: Vec<ToolInfo>,
    /// The search index of `tools`, built at the first search after they change (not at load).
    index: OnceLock<SearchIndex>,
}

impl CatalogState {
    pub fn new(
        meta: HashMap<String, ServerMeta>,
        servers: &[ServerConfig],
        prefix: ToolPrefix,
    ) -> Self {
        let mut state = CatalogState {
            meta,
            ..CatalogState::default()
        };
        state.rebuild(servers, prefix);
        state
    }

    pub fn meta(&self, server: &str) -> Option<&ServerMeta> {
        self.meta.get(server)
    }

    pub fn tools(&self) -> &[ToolInfo] {
        &self.tools
    }

    pub fn index(&self) -> &SearchIndex {
        self.index.get_or_init(|| SearchIndex::build(&self.tools))
    }

    pub fn server_tools(&self, server: &str) -> Vec<&ToolInfo> {
        self.tools.iter().filter(|t| t.server == server).collect()
    }

    /// Stores `meta` for `server` and rebuilds the catalog in config order.
    pub fn set(
        &mut self,
        server: &str,
        meta: ServerMeta,
        servers: &[ServerConfig],
        prefix: ToolPrefix,
    ) {
        self.meta.insert(server.to_string(), meta);
        self.rebuild(servers, prefix);
    }

    fn rebuild(&mut self, servers: &[ServerConfig], prefix: ToolPrefix) {
        self.tools = servers
            .iter()
            .filter(|s| !s.disabled)
            .filter_map(|s| self.meta.get(&s.name).map(|m| (s, m)))
            .flat_map(|(s, m)| {
                let prefix = s.tool_prefix.unwrap_or(prefix);
                build_server_tools(&s.name, prefix, &m.tools, &m.resources, s.expose_resources)
                    .into_iter()
                    .filter(|t| selected(s, t))
            })
            .collect();
        self.index = OnceLock::new();
    }
}

/// `includeTools` / `excludeTools` globs, matched against the original and the displayed name.
fn selected(server: &ServerConfig, tool: &ToolInfo) -> bool {
    let matches = |globs: &Option<Vec<String>>| {
        globs.as_ref().map(|globs| {
            globs
                .iter()
                .any(|g| glob_match(g, &tool.original) || glob_match(g, &tool.name))
        })
    };
    matches(&server.include_tools).unwrap_or(true)
        && !matches(&server.exclude_tools).unwrap_or(false)
}

/// `*` (any run) and `?` (one character) globs.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("get_*", "get_sum"));
        assert!(glob_match("*sum", "get_sum"));
        assert!(glob_match("g?t_*m", "get_sum"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("get_*", "echo"));
        assert!(!glob_match("a*b", "acbd"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
    }
}
