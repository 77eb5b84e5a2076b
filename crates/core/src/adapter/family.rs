//! The session in its family (README "Shared servers"): how it reaches a server shared with the
//! family (through the hub when another connection runs it, else started here and bound to the
//! family) and what status says of it.

use super::Kernel;
use crate::config::{ServerConfig, Sharing, Transport};
use crate::events::Event;
use crate::render;
use pi_mcp_connection::broker::family::{family, Reach};
use pi_mcp_connection::pool::shared::identity;
use pi_mcp_connection::pool::shared::wire::{FamilyAttach, FAMILY_VAR};
use pi_mcp_connection::pool::{ClientFeatures, Keeping, SharedSpec, StdioSpec, TransportSpec};
use serde_json::{json, Value};

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

    /// Says once, after a connect, that this process runs its own servers, not its family's.
    pub(super) fn tell_family_off(&self) {
        if let Some(text) = family().take_warning() {
            self.events.emit(Event::FamilyOff { text });
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

    /// What this process is in its family (`details.family`), unless alone with nothing to say.
    pub(super) fn family_role(&self) -> Option<Value> {
        let role = family().role();
        let said = role.role != "alone" || role.why.is_some();
        said.then(|| json!(role))
    }

    /// The doctor's line about the family, when a server is shared with it.
    pub(super) fn family_line(&self) -> Option<String> {
        let shared = self.servers.configs().any(|s| s.sharing == Sharing::Family);
        let role = family().role();
        (shared || role.role != "alone").then(|| {
            render::family(
                role.role,
                role.endpoint.as_deref(),
                role.members,
                role.hub_pid,
                role.why.as_deref(),
            )
        })
    }

    /// How `server`, shared with the family, is shared now, for status and `/mcp`: `null` while
    /// no other session of the family uses it (as without a family).
    pub(super) fn family_sharing(&self, server: &ServerConfig) -> Value {
        let role = family().role();
        let off = role.why.filter(|_| role.role == "off");
        let Some(conn) = self.pool.peek(&server.name) else {
            return off.map_or(Value::Null, |why| own(&why));
        };
        if let (Some(why), None) = (&off, conn.shared_with()) {
            return own(why);
        }
        let (sessions, runs_in) = match conn.shared_with() {
            Some(sessions) => (sessions, conn.runs_in()),
            None => (family().sessions_using(&conn), None),
        };
        if sessions <= 1 && runs_in.is_none() {
            return Value::Null;
        }
        let used = format!(
            "used by this session and {} in its family",
            render::plural(sessions.saturating_sub(1), "other")
        );
        let text = match (&runs_in, sessions > 1) {
            (Some(place), true) => format!("{used}; runs in {place}"),
            (Some(place), false) => format!("runs in {place}"),
            (None, _) => used,
        };
        json!({ "scope": "family", "sessions": sessions, "runsIn": runs_in, "runsHere": null, "text": text })
    }
}

/// A family's server this session runs itself, and why.
fn own(why: &str) -> Value {
    let text = format!("this session runs its own: {why}");
    json!({ "scope": "family", "sessions": null, "runsIn": null, "runsHere": why, "text": text })
}
