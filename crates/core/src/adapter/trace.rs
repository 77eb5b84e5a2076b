//! Which servers the protocol trace follows (`trace` per server, else `settings.trace.enabled`)
//! and where it is written (`settings.trace.file`, relative to the session's directory, else
//! `.pi/mcp-traces/` there).

use super::host::SessionHost;
use crate::config::Config;
use pi_mcp_connection::trace::Trace;
use std::collections::HashSet;
use std::path::Path;

/// Starts the trace of the servers that are traced, if any: nothing is written before the first
/// message.
pub(super) fn start(config: &Config, cwd: &Path, host: &SessionHost) {
    let settings = &config.settings.trace;
    let traced: HashSet<String> = config
        .servers
        .iter()
        .filter(|s| s.trace.unwrap_or(settings.enabled))
        .map(|s| s.name.clone())
        .collect();
    if traced.is_empty() {
        return;
    }
    let path = match &settings.file {
        Some(file) => cwd.join(file),
        None => Trace::default_path(cwd),
    };
    let trace = Trace::new(path, settings.max_bytes, settings.max_events);
    host.set_trace(trace, traced);
}
