//! The session in its family (README "Shared servers"): how it reaches a server shared with the
//! family (through the hub when another connection runs it, else started here and bound to the
//! family) and what status says of it.

use super::Adapter;
use crate::broker::family::{family, Reach};
use crate::config::ServerConfig;
use crate::pool::shared::identity;
use crate::pool::shared::wire::FamilyAttach;
use crate::pool::{ClientFeatures, Keeping, SharedSpec, StdioSpec, TransportSpec};
use crate::render;
use serde_json::{json, Value};

impl Adapter {
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

    /// How `server`, shared with the family, is shared now, for status and `/mcp`: `null` while
    /// no other session of the family uses it (as without a family).
    pub(super) fn family_sharing(&self, server: &ServerConfig) -> Value {
        let Some(conn) = self.pool.peek(&server.name) else {
            return Value::Null;
        };
        let (sessions, runs_in) = match conn.shared_with() {
            Some(sessions) => (sessions, conn.runs_in()),
            None => (family().sessions_using(&conn), None),
        };
        if sessions <= 1 && runs_in.is_none() {
            return Value::Null;
        }
        let mut text = format!(
            "used by this session and {} in its family",
            render::plural(sessions.saturating_sub(1), "other")
        );
        if let Some(place) = &runs_in {
            text.push_str(&format!("; runs in {place}"));
        }
        json!({ "scope": "family", "sessions": sessions, "runsIn": runs_in, "runsHere": null, "text": text })
    }
}
