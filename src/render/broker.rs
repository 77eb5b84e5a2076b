//! `pi-mcp broker status|stop`: the shared-server broker as a person reads it.

use super::{duration, plural};
use crate::pool::shared::wire::BrokerStatus;

/// The running broker (`None`: none runs), for the agent dir `agent_dir`.
pub fn broker_status(status: Option<&BrokerStatus>, agent_dir: &str) -> String {
    let Some(status) = status else {
        return format!(
            "No shared-server broker runs for {agent_dir}. The first session that uses a shared server (\"shared\": true, or settings.sharedServers) starts it."
        );
    };
    let mut out = format!(
        "Shared-server broker {} (pid {}), up {}, at {}: {}, {}",
        status.version,
        status.pid,
        duration(status.uptime_ms / 1000),
        status.endpoint,
        plural(status.sessions, "session"),
        plural(status.servers.len(), "server"),
    );
    for server in &status.servers {
        let state = match (server.pid, &server.failure) {
            (Some(pid), _) => format!(
                "pid {pid}, {}, idle {}",
                plural(server.sessions, "session"),
                duration(server.idle_ms / 1000)
            ),
            (None, Some(why)) => format!("failed to start: {why}"),
            (None, None) => "starting".to_string(),
        };
        out.push_str(&format!(
            "\n- {} ({}, identity {}): {state}",
            server.name, server.command, server.identity
        ));
    }
    out
}

/// What `pi-mcp broker stop` did: the broker it stopped (`None`: none ran).
pub fn broker_stopped(stopped: Option<&BrokerStatus>) -> String {
    match stopped {
        Some(status) => format!(
            "Stopped the shared-server broker (pid {}) and its {}; the {} using them start a new broker on their next call.",
            status.pid,
            plural(status.servers.len(), "server"),
            plural(status.sessions, "session"),
        ),
        None => "No shared-server broker was running.".to_string(),
    }
}
