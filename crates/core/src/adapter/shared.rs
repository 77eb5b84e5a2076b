//! Shared servers as a session sees them: which of its servers are shared and with how many
//! sessions (status, `/mcp`), and `pi-mcp broker status|stop`.

use super::details::*;
use super::status::Status;
use super::Mode;
use super::{ErrorCode, Outcome};
use crate::config::{ServerConfig, Sharing};
use crate::render;
use pi_mcp_connection::pool::shared::control;
use serde_json::{json, Value};

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
                Outcome::text(Mode::Broker, text).with_part(BrokerDetails {
                    broker: json!(status),
                })
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
                Outcome::text(Mode::Broker, render::broker_stopped(stopped.as_ref())).with_part(
                    BrokerStoppedDetails {
                        stopped: json!(stopped),
                    },
                )
            }
            Err(why) => Outcome::error(Mode::Broker, ErrorCode::ConnectFailed, why),
        }
    }

    /// How `server` is shared, for status and `/mcp`: `null` when it is not; else the sessions
    /// using it now (when it runs in the broker) and why this session runs it itself (when it
    /// does).
    pub fn sharing(&self, server: &ServerConfig) -> Value {
        match server.sharing {
            Sharing::User { .. } => {}
            Sharing::Family => return self.kernel.family_sharing(server),
            Sharing::Own => return Value::Null,
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
        json!({ "scope": "user", "sessions": sessions, "runsHere": here, "text": text })
    }

    fn shown_agent_dir(&self) -> String {
        render::tilde(&self.kernel.agent_dir, &self.kernel.home())
    }
}
