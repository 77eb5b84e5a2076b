//! Tools Pi registers because of the config's `exposure`/`toolExposure` (Pi 1.5's keys): under
//! Pi's names (`mcp__<server>__<tool>`), with the server as their namespace and its hints, from the
//! catalog known now (the metadata cache), so no server starts before a tool is called.
//! `direct` ones are declared to the model; `codemode` and `deferred` ones are for Pi's
//! `codemode` scripts and `tool_search` (Pi ≥ 0.99). Hidden tools are not in the catalog.

use crate::adapter::direct::{Direct, DirectToolDefinition, DirectTools, ToolNamespace};
use crate::catalog::pi_tool_names;
use crate::config::Exposure;
use pi_mcp_connection::clean;

impl Direct<'_> {
    /// Adds the exposure-registered tools of every enabled server to `set`, and what they need.
    pub fn exposed_tools(&self, set: &mut DirectTools) {
        let catalog = self.kernel.servers.view();
        for server in self
            .kernel
            .servers
            .configs()
            .filter(|s| !s.disabled && s.exposure.is_set())
        {
            let possible = server.exposure.possible();
            set.reach.codemode |= possible.contains(&Exposure::Codemode);
            set.reach.tool_search |= possible.contains(&Exposure::Deferred);
            if !self.kernel.servers.has_meta(&server.name) {
                set.unlisted.push(server.name.clone());
            }
            let tools = catalog.server_tools(&server.name);
            let originals: Vec<&str> = tools.iter().map(|t| t.original.as_str()).collect();
            let names = pi_tool_names(&server.name, &originals);
            let namespace = ToolNamespace {
                name: format!("mcp__{}", server.name.replace('-', "_")),
                aliases: vec![server.name.clone()],
                description: server.description.clone(),
                instructions: self.kernel.servers.meta(&server.name).and_then(|m| {
                    m.instructions
                        .as_deref()
                        .map(|i| clean::text(i).into_owned())
                }),
            };
            for (tool, name) in tools.into_iter().zip(names) {
                let exposure = match server.exposure.of(&tool.original) {
                    Some(e @ (Exposure::Direct | Exposure::Codemode | Exposure::Deferred)) => e,
                    Some(Exposure::Hidden) | None => continue,
                };
                let mut def = DirectToolDefinition::from(tool);
                def.name = name;
                def.exposure = Some(exposure);
                def.namespace = Some(namespace.clone());
                set.tools.push(def);
            }
        }
        set.auto_enable_codemode = self.kernel.config.auto_enable_codemode.unwrap_or(true);
    }
}
