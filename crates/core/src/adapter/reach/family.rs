//! The session in its family (README "Shared servers"): how it reaches a server shared with the
//! family (through the hub when another connection runs it, else started here and bound to the
//! family) and what status says of it.

use crate::adapter::Kernel;
use crate::config::{ServerConfig, Sharing, Transport};
use pi_mcp_connection::broker::family::{family, Reach};
use pi_mcp_connection::pool::shared::identity;
use pi_mcp_connection::pool::shared::wire::{FamilyAttach, FAMILY_VAR};
use pi_mcp_connection::pool::{ClientFeatures, Keeping, SharedSpec, StdioSpec, TransportSpec};

impl Kernel {
    /// How to reach `server`, shared with the family, launched as `stdio`: through the hub when
    /// another connection runs it, else started here (and bound to the family by the keeping).
    pub(super) async fn in_family(
        &self,
        server: &ServerConfig,
        stdio: StdioSpec,
        client: &ClientFeatures,
    ) -> (TransportSpec, Option<Keeping>) {
        let roots = client.roots.then(|| self.cwd.clone());
        let identity = identity::family(
            &server.name,
            &stdio,
            server.protocol,
            client,
            &self.agent_dir,
            roots.as_deref(),
        );
        let attach = FamilyAttach {
            token: None,
            agent_dir: self.agent_dir.clone(),
            roots_cwd: roots,
        };
        match family()
            .reach(identity.clone(), &self.in_family, attach)
            .await
        {
            Reach::Guest(reach) => {
                let shared = SharedSpec {
                    stdio,
                    identity,
                    idle: self.idle_limit(server),
                    broker: self.broker.clone(),
                    family: Some(reach),
                };
                (TransportSpec::Shared(shared), None)
            }
            Reach::Own(keeping) => (TransportSpec::Stdio(stdio), Some(keeping)),
        }
    }

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
