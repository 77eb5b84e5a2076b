//! The session in its family (README "Shared servers"): what the processes it starts inherit to
//! join it. How a server shared with the family is reached is part of connecting (`connect`).

use crate::adapter::Kernel;
use crate::config::{ServerConfig, Sharing, Transport};
use pi_mcp_connection::broker::family::family;
use pi_mcp_connection::pool::shared::wire::FAMILY_VAR;

impl Kernel {
    /// The variable the processes this session starts inherit to join its family (its name and
    /// value): set by the extension before a tool that may start processes runs. `None` when no
    /// enabled server is shared with the family (a stdio one) or asks for approval (its
    /// subagents' uses are asked about here), or its hub cannot listen (status says why). Binds
    /// the hub's socket the first time (in a runtime).
    pub fn family_env(&self) -> Option<(String, String)> {
        let joins = |s: &ServerConfig| {
            let shares =
                s.sharing == Sharing::Family && matches!(s.transport, Transport::Stdio { .. });
            !s.disabled && (shares || !s.approval.is_off())
        };
        if !self.servers.configs().any(joins) {
            return None;
        }
        let token = family().token(&self.agent_dir, &self.env).ok()?;
        Some((FAMILY_VAR.to_string(), token))
    }
}
