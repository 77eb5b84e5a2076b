//! The system prompt's section on the servers the model reaches only through the `mcp` tool (or
//! Pi's codemode and tool_search): every enabled server but those whose tools the config declares
//! to the model one and all (`directTools`, `MCP_DIRECT_TOOLS`, `exposure` `direct`) or hides.

use super::Kernel;
use crate::config::{DirectTools as Selection, Exposure};
use crate::render::SectionServer;

impl Kernel {
    /// The text of the system prompt's `mcp_servers` section, or None when no server is reached
    /// that way. From the config and the metadata cache only: byte-stable for a given pair.
    pub fn servers_section(&self) -> Option<String> {
        let declared = self.direct_selection();
        let listed: Vec<_> = self
            .servers
            .configs()
            .filter(|s| !s.disabled)
            .filter(|s| {
                !declared
                    .iter()
                    .any(|(name, wanted)| *name == s.name && *wanted == Selection::All)
            })
            .filter(|s| {
                !s.exposure
                    .always_among(&[Exposure::Direct, Exposure::Hidden])
            })
            .map(|s| (s, self.servers.meta(&s.name)))
            .collect();
        crate::render::servers_section(
            listed
                .iter()
                .map(|(server, meta)| SectionServer {
                    name: &server.name,
                    description: server.description.as_deref(),
                    instructions: meta.as_ref().and_then(|m| m.instructions.as_deref()),
                })
                .collect(),
        )
    }
}
