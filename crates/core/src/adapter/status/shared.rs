//! Shared servers as a session sees them: which of its servers are shared and with how many
//! sessions (status, `/mcp`), and `pi-mcp broker status|stop`.

use crate::adapter::details::*;
use crate::adapter::status::Status;
use crate::adapter::Mode;
use crate::adapter::{ErrorCode, Outcome};
use crate::adapter::{SharingEntry, SharingScope};
use crate::config::{ServerConfig, Sharing};
use crate::render;
use pi_mcp_connection::broker::family::{family, RoleName};
use pi_mcp_connection::pool::shared::control;

impl Status<'_> {
    /// `pi-mcp broker status`: the broker serving this agent dir, if one runs.
    pub async fn broker_status(&self) -> Outcome {
        let place = match self.kernel.broker.place() {
            Ok(place) => place,
            Err(why) => return Outcome::error(Mode::Broker, ErrorCode::ConnectFailed, why.clone()),
        };
        match control::status(place).await {
            Ok(status) => {
                let text = render::broker_status(status.as_ref(), &self.shown_agent_dir());
                Outcome::text(Mode::Broker, text).with_part(BrokerDetails { broker: status })
            }
            Err(why) => Outcome::error(Mode::Broker, ErrorCode::ConnectFailed, why),
        }
    }

    /// `pi-mcp broker stop`: stops the broker and its servers; sessions using them start a new
    /// one on their next call.
    pub async fn broker_stop(&self) -> Outcome {
        let place = match self.kernel.broker.place() {
            Ok(place) => place,
            Err(why) => return Outcome::error(Mode::Broker, ErrorCode::ConnectFailed, why.clone()),
        };
        let before = control::status(place).await.ok().flatten();
        match control::stop(place).await {
            Ok(stopped) => {
                let stopped = before.filter(|_| stopped);
                Outcome::text(Mode::Broker, render::broker_stopped(stopped.as_ref()))
                    .with_part(BrokerStoppedDetails { stopped })
            }
            Err(why) => Outcome::error(Mode::Broker, ErrorCode::ConnectFailed, why),
        }
    }

    /// How `server` is shared, for status and `/mcp`: `None` when it is not; else the sessions
    /// using it now (when it runs in the broker) and why this session runs it itself (when it
    /// does).
    pub fn sharing(&self, server: &ServerConfig) -> Option<SharingEntry> {
        match server.sharing {
            Sharing::User { .. } => {}
            Sharing::Family => return self.family_sharing(server),
            Sharing::Own => return None,
        }
        let sessions = self
            .kernel
            .pool
            .get(&server.name)
            .and_then(|c| c.shared_with());
        let here = self.kernel.broker.off();
        let text = match (sessions, &here) {
            (Some(1), _) => "shared (no other session uses it now)".to_string(),
            (Some(n), _) => format!("shared with {}", render::plural(n - 1, "other session")),
            (None, Some(why)) => format!("shared, but this session runs its own: {why}"),
            (None, None) => "shared (runs in the broker once started)".to_string(),
        };
        Some(SharingEntry {
            scope: SharingScope::User,
            sessions,
            runs_in: None,
            runs_here: here,
            text,
        })
    }

    fn shown_agent_dir(&self) -> String {
        render::tilde(&self.kernel.agent_dir, &self.kernel.home())
    }

    /// How `server`, shared with the family, is shared now, for status and `/mcp`: `None` while
    /// no other session of the family uses it (as without a family).
    fn family_sharing(&self, server: &ServerConfig) -> Option<SharingEntry> {
        let role = family().role();
        let off = role.why.filter(|_| role.role == RoleName::Off);
        let Some(conn) = self.kernel.pool.peek(&server.name) else {
            return off.map(own);
        };
        if let (Some(why), None) = (&off, conn.shared_with()) {
            return Some(own(why.clone()));
        }
        let (sessions, runs_in) = match conn.shared_with() {
            Some(sessions) => (sessions, conn.runs_in()),
            None => (family().sessions_using(&conn), None),
        };
        if sessions <= 1 && runs_in.is_none() {
            return None;
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
        Some(SharingEntry {
            scope: SharingScope::Family,
            sessions: Some(sessions),
            runs_in,
            runs_here: None,
            text,
        })
    }
}

/// A family's server this session runs itself, and why.
fn own(why: String) -> SharingEntry {
    SharingEntry {
        scope: SharingScope::Family,
        sessions: None,
        runs_in: None,
        text: format!("this session runs its own: {why}"),
        runs_here: Some(why),
    }
}
