//! `includeTools` and `excludeTools`: which of a server's tools its config lets through, by
//! `*`/`?` globs over a tool's MCP name or its prefixed name.

use super::glob::matches;
use super::ServerConfig;

impl ServerConfig {
    /// Whether `includeTools` and `excludeTools` let the tool through (`original`: its MCP
    /// name, `name`: its prefixed name).
    pub fn lets_through(&self, original: &str, name: &str) -> bool {
        let listed = |globs: &Option<Vec<String>>| {
            globs
                .as_ref()
                .map(|globs| globs.iter().any(|g| names(g, original, name)))
        };
        listed(&self.include_tools).unwrap_or(true) && !listed(&self.exclude_tools).unwrap_or(false)
    }

    /// The `excludeTools` entries that leave the tool out.
    pub fn excluded_by(&self, original: &str, name: &str) -> Vec<&str> {
        self.exclude_tools
            .iter()
            .flatten()
            .filter(|g| names(g, original, name))
            .map(String::as_str)
            .collect()
    }
}

/// Whether `glob` matches the tool's MCP or prefixed name.
fn names(glob: &str, original: &str, name: &str) -> bool {
    matches(glob, original) || matches(glob, name)
}
