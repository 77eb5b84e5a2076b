//! A session's family (README "Shared servers"): the session, every process it starts that
//! inherits its environment, and the other sessions of its process share their stdio servers.
//! The broker in family mode is the family's hub, inside the process of the session that hosts
//! it: it serves the sessions of its own process over in-process duplexes, and, once its socket
//! is bound, the processes that inherited the family's token.

use super::{hop::Hop, Broker, Mode, Notes};
use crate::pool::shared::identity;
use crate::pool::shared::wire::{Attach, Joined};
use crate::pool::shared::{Hub, Stream};
use crate::server_log::ServerLog;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

/// Bytes a duplex to the hub buffers each way.
const DUPLEX_BUFFER: usize = 64 * 1024;

/// What a broker in family mode knows besides its table of servers.
pub struct FamilyMode {
    /// The family's token, once the hub listens for other processes.
    token: OnceLock<String>,
    /// Where it listens, as status shows it.
    endpoint: OnceLock<String>,
    /// The servers' log messages go to their session's agent dir's `mcp.log`.
    logs: Mutex<HashMap<PathBuf, ServerLog>>,
}

impl FamilyMode {
    pub fn endpoint(&self) -> String {
        self.endpoint
            .get()
            .cloned()
            .unwrap_or_else(|| "in this process".into())
    }

    /// Whether the hub serves `attach`: from its own process, or with the family's token; and
    /// only under the identity its launch has, so a member reaches no process whose whole
    /// launch (secrets included) it cannot state.
    pub fn admits(&self, in_process: bool, attach: &Attach) -> Result<(), String> {
        let Some(family) = &attach.family else {
            return Err("this is a family's hub; it serves the family's servers only".into());
        };
        if !in_process && !self.token_is(family.token.as_deref().unwrap_or_default()) {
            return Err("the family's token does not match".into());
        }
        let launch = identity::family(
            &attach.launch,
            attach.protocol,
            &attach.client,
            &family.agent_dir,
            family.roots_cwd.as_deref(),
        );
        match launch == attach.identity {
            true => Ok(()),
            false => Err(format!(
                "{}: the launch does not match the identity it was asked under",
                attach.name
            )),
        }
    }

    fn token_is(&self, given: &str) -> bool {
        self.token
            .get()
            .is_some_and(|token| same_secret(token.as_bytes(), given.as_bytes()))
    }

    pub fn log(&self, agent_dir: &Path) -> ServerLog {
        self.logs
            .lock()
            .entry(agent_dir.to_path_buf())
            .or_insert_with(|| ServerLog::new(agent_dir.join("mcp.log")))
            .clone()
    }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

impl Broker {
    /// A family's hub, inside this process; its own notes go to `agent_dir`'s `mcp.log`.
    pub fn hub(agent_dir: &Path) -> Arc<Broker> {
        let family = FamilyMode {
            token: OnceLock::new(),
            endpoint: OnceLock::new(),
            logs: Mutex::default(),
        };
        let notes = Notes::Log(family.log(agent_dir));
        Broker::with_mode(Mode::Family(family), notes)
    }

    /// A connection to the hub from a session of its own process.
    pub fn in_process(self: &Arc<Self>) -> Stream {
        let (ours, theirs) = tokio::io::duplex(DUPLEX_BUFFER);
        tokio::spawn(super::hop::serve(
            self.clone(),
            theirs,
            super::hop::Peer::InProcess,
        ));
        Stream::new(ours)
    }

    /// A process that inherited the family's token joins: the hub's version and pid.
    pub(super) fn join_family(&self, _hop: &Hop, token: &str) -> Result<Value, String> {
        let family = self.family().ok_or("not a family's hub")?;
        if !family.token_is(token) {
            return Err("the family's token does not match".into());
        }
        let joined = Joined {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
        };
        Ok(json!({
            "capabilities": {},
            "serverInfo": { "name": "pi-mcp-native-family", "version": joined.version },
            "joined": joined,
        }))
    }
}

/// The hub as the sessions of its own process reach it.
pub struct InProcess(pub Weak<Broker>);

impl Hub for InProcess {
    fn dial(&self) -> BoxFuture<'static, Result<Stream, String>> {
        let hub = self.0.upgrade();
        Box::pin(async move {
            hub.map(|hub| hub.in_process())
                .ok_or_else(|| "the family's hub is gone".to_string())
        })
    }

    fn refused(&self, _why: String) {}

    fn lost(&self, server: &str) -> String {
        format!("the family's hub in this process ended the connection; this session starts {server} itself from now on")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"v1.abc", b"v1.abc"));
        assert!(!same_secret(b"v1.abc", b"v1.abd"));
        assert!(!same_secret(b"v1.abc", b"v1.ab"));
        assert!(!same_secret(b"", b"x"));
    }
}
