//! The "always" the user gave a server's apps (to write to the conversation, to call the
//! server's tools), kept in
//! `<agentDir>/mcp-apps-grants.json` (0600): the server's name and the same hash of its launch
//! as written that the approval's grants use, so that another server given the name later is not
//! covered. `/mcp apps revoke` takes them back.

use parking_lot::Mutex;
use pi_mcp_connection::atomic_file;
use pi_mcp_connection::bounded_read;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub const FILE: &str = "mcp-apps-grants.json";
/// The most the file is read of: far more than any number of servers needs.
const MAX_BYTES: u64 = 1024 * 1024;

pub struct AlwaysGrants {
    path: PathBuf,
    /// Held while the file is read and written, so that two answers do not lose one.
    writing: Mutex<()>,
}

/// One grant: the server, its launch's hash, and what it covers (`"conversation"`, `"tools"`:
/// an [`super::Ask::grant_key`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Always {
    pub server: String,
    pub hash: String,
    pub what: String,
}

impl AlwaysGrants {
    pub fn in_dir(agent_dir: &Path) -> AlwaysGrants {
        AlwaysGrants {
            path: agent_dir.join(FILE),
            writing: Mutex::new(()),
        }
    }

    /// The grants kept; none when the file is missing or unreadable (then nothing is covered).
    pub fn list(&self) -> Vec<Always> {
        let Ok(bytes) = bounded_read::found(&self.path, MAX_BYTES) else {
            return vec![];
        };
        let file: Value = serde_json::from_slice(&bytes).unwrap_or_default();
        file["always"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| {
                Some(Always {
                    server: g["server"].as_str()?.to_string(),
                    hash: g["hash"].as_str()?.to_string(),
                    what: g["what"].as_str()?.to_string(),
                })
            })
            .collect()
    }

    pub fn covers(&self, grant: &Always) -> bool {
        self.list().contains(grant)
    }

    pub fn add(&self, grant: Always) -> std::io::Result<()> {
        let _writing = self.writing.lock();
        let mut all = self.list();
        all.retain(|g| g.server != grant.server || g.what != grant.what);
        all.push(grant);
        self.write(&all)
    }

    /// Takes back the grants of `server` (every one: `None`); how many there were.
    pub fn revoke(&self, server: Option<&str>) -> std::io::Result<usize> {
        let _writing = self.writing.lock();
        let mut all = self.list();
        let before = all.len();
        all.retain(|g| server.is_some_and(|s| s != g.server));
        match before - all.len() {
            0 => Ok(0),
            taken => self.write(&all).map(|()| taken),
        }
    }

    fn write(&self, all: &[Always]) -> std::io::Result<()> {
        let always: Vec<Value> = all
            .iter()
            .map(|g| json!({ "server": g.server, "hash": g.hash, "what": g.what }))
            .collect();
        let text = serde_json::to_string_pretty(&json!({ "version": 1, "always": always }))?;
        atomic_file::write(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_private_per_launch_and_taken_back() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-apps-grants-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let grants = AlwaysGrants::in_dir(&dir);
        let clock = Always {
            server: "clock".into(),
            hash: "a".repeat(64),
            what: "conversation".into(),
        };
        assert!(!grants.covers(&clock), "nothing yet");
        grants.add(clock.clone()).unwrap();
        grants
            .add(Always {
                server: "map".into(),
                hash: "b".repeat(64),
                what: "tools".into(),
            })
            .unwrap();
        let clock_tools = Always {
            what: "tools".into(),
            ..clock.clone()
        };
        assert!(
            !grants.covers(&clock_tools),
            "the conversation is not the tools"
        );
        grants.add(clock_tools.clone()).unwrap();
        assert!(
            grants.covers(&clock_tools) && grants.covers(&clock),
            "both kept"
        );
        assert!(grants.covers(&clock));
        let relaunched = Always {
            hash: "c".repeat(64),
            ..clock.clone()
        };
        assert!(!grants.covers(&relaunched), "another launch under the name");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(grants.revoke(Some("clock")).unwrap(), 2);
        assert!(!grants.covers(&clock));
        assert_eq!(grants.list().len(), 1);
        assert_eq!(grants.revoke(None).unwrap(), 1);
        assert!(grants.list().is_empty());

        std::fs::write(dir.join(FILE), "{ not json").unwrap();
        assert!(
            grants.list().is_empty(),
            "an unreadable file covers nothing"
        );
        grants.add(clock.clone()).unwrap();
        assert!(grants.covers(&clock));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
