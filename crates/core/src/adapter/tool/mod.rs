//! The `mcp` tool as a service: what the model asks of it, parsed once and run by one `match`
//! (`request`), the read-only modes and connect (`modes`), and calling a tool (`call`). Finding
//! a tool by name, shared by describe and call, is here; the apps' calls go out through
//! [`Tool::send`].

mod call;
mod modes;
mod request;

pub use call::CallOptions;
pub use modes::{Page, DEFAULT_LIST_LIMIT};
pub use request::{Request, DEFAULT_LIMIT};

use super::reach::Purpose;
use super::{ErrorCode, Kernel, Mode, Outcome};
use crate::catalog::{lookup, Lookup, ToolInfo};
use crate::config::ServerConfig;
use crate::render;
use crate::search;
use std::sync::Arc;

/// The `mcp` tool: its modes, each request of the model run once.
pub struct Tool<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Tool);

impl Tool<'_> {
    /// Resolves a tool name for `describe` / `call`; fetches metadata it lacks before giving up.
    async fn resolve(
        &self,
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
        let listed = self.kernel.list_unknown(server, Some(name), purpose).await;
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
                    .kernel
                    .server_names(false)
                    .iter()
                    .any(|s| s != only && name.starts_with(&format!("{s}_")));
                if !other_prefix {
                    return Err(why.outcome(mode, only));
                }
            }
        }
        // A tool of a server that is turned off: that is the answer, not suggestions.
        let off = self.kernel.config.servers.iter().find(|s| {
            s.disabled
                && server.is_none_or(|n| n == s.name)
                && name.starts_with(&format!("{}_", s.name))
        });
        if let Some(off) = off {
            self.enabled_server(mode, &off.name)?;
        }
        let catalog = self.kernel.servers.view();
        if let Lookup::Found(tool) = lookup(catalog.hidden(), name, server) {
            let source = self
                .kernel
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

    fn lookup(
        &self,
        mode: Mode,
        name: &str,
        server: Option<&str>,
    ) -> Result<Option<ToolInfo>, Outcome> {
        let catalog = self.kernel.servers.view();
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

    fn enabled_server(&self, mode: Mode, name: &str) -> Result<&ServerConfig, Outcome> {
        self.kernel
            .servers
            .enabled(name)
            .map_err(|why| why.outcome(mode, name))
    }
}
