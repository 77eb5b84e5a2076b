//! `pi-mcp broker status|stop`: the shared-server broker as a person reads it.

use super::{duration, plural};
use pi_mcp_connection::pool::shared::wire::BrokerStatus;

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

/// What this process is in its session's family (`role`: host, member, off or alone), for
/// doctor: where its hub listens (`endpoint`), the processes joined (`members`), the hub's
/// process (`hub_pid`), why it runs its own servers or cannot host (`why`).
pub fn family(
    role: &str,
    endpoint: Option<&str>,
    members: Option<usize>,
    hub_pid: Option<u32>,
    why: Option<&str>,
) -> String {
    let at = endpoint.map_or_else(String::new, |e| format!(" at {e}"));
    match (role, hub_pid, why) {
        ("host", ..) => {
            let joined = match members.unwrap_or(0) {
                1 => "1 process".to_string(),
                n => format!("{n} processes"),
            };
            format!(
                "Family: the processes this session starts (subagents, `pi -p` through bash) use its servers, through its hub{at} ({joined} joined)."
            )
        }
        ("member", Some(pid), _) => {
            format!("Family: this session uses its family's servers, which run in pi (pid {pid}).")
        }
        ("member", None, _) => format!(
            "Family: this session will use its family's servers (its hub{at}) once it needs one."
        ),
        (_, _, Some(why)) if role == "off" => {
            format!("Family: this session runs its own servers, not its family's: {why}.")
        }
        (_, _, Some(why)) => {
            format!("Family: the processes this session starts run their own servers: {why}.")
        }
        _ => "Family: no process this session started has used its servers.".to_string(),
    }
}
