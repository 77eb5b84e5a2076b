//! Project trust. Project configs (`.mcp.json`, `.pi/mcp.json`, a workspace's `.vscode/mcp.json`,
//! `.cursor/mcp.json` or `opencode.json`) start programs, so they are used only in a project Pi
//! trusts.

use super::{Diagnostic, Level};
use pi_mcp_connection::bounded_read::{self, FileLimits};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub struct Trust {
    pub trusted: bool,
    pub basis: TrustBasis,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TrustBasis {
    /// Said by whoever loads the config: Pi's `ctx.isProjectTrusted()`, the CLI's flags.
    Given,
    /// A decision Pi saved (`/trust`) for the project or a folder above it.
    Saved { file: PathBuf, folder: PathBuf },
    /// No decision anywhere: trusted, as in Pi versions without project trust.
    Default,
}

/// `given` when there is one, else Pi's saved decision in `<agentDir>/trust.json` for `cwd` or
/// its nearest decided parent, else trusted. A store that cannot be read is reported.
pub fn resolve(
    given: Option<bool>,
    agent_dir: &Path,
    cwd: &Path,
    limits: &FileLimits,
    diagnostics: &mut Vec<Diagnostic>,
) -> Trust {
    if let Some(trusted) = given {
        return Trust {
            trusted,
            basis: TrustBasis::Given,
        };
    }
    let file = agent_dir.join("trust.json");
    let text = match bounded_read::found(&file, limits.config_bytes) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.is_missing() => String::new(),
        Err(e) => {
            let message = format!("Pi's project trust store {e}; its decisions are not used");
            diagnostics.push(Diagnostic::in_file(Level::Warning, &file, None, message));
            String::new()
        }
    };
    saved_decision(&text, cwd).map_or(
        Trust {
            trusted: true,
            basis: TrustBasis::Default,
        },
        |(folder, trusted)| Trust {
            trusted,
            basis: TrustBasis::Saved { file, folder },
        },
    )
}

/// Pi's store maps canonical folder paths to `true`, `false` or `null` (no decision).
fn saved_decision(text: &str, cwd: &Path) -> Option<(PathBuf, bool)> {
    let store: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let store = store.as_object()?;
    let start = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    start.ancestors().find_map(|folder| {
        let decision = store.get(folder.to_str()?)?.as_bool()?;
        Some((folder.to_path_buf(), decision))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_then_saved_then_default() {
        let root = std::env::temp_dir().join(format!("pi-mcp-trust-{}", std::process::id()));
        let project = root.join("work/project");
        std::fs::create_dir_all(&project).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        let agent = root.join("agent");
        std::fs::create_dir_all(&agent).unwrap();

        assert_eq!(
            resolve(None, &agent, &project, &FileLimits::default(), &mut vec![]).basis,
            TrustBasis::Default
        );
        assert!(resolve(None, &agent, &project, &FileLimits::default(), &mut vec![]).trusted);

        let work = root.join("work");
        let store = serde_json::json!({
            work.to_str().unwrap(): false,
            root.join("work/project").to_str().unwrap(): null,
        });
        std::fs::write(agent.join("trust.json"), store.to_string()).unwrap();
        let trust = resolve(None, &agent, &project, &FileLimits::default(), &mut vec![]);
        assert!(!trust.trusted);
        assert_eq!(
            trust.basis,
            TrustBasis::Saved {
                file: agent.join("trust.json"),
                folder: work
            }
        );
        assert!(
            resolve(
                Some(true),
                &agent,
                &project,
                &FileLimits::default(),
                &mut vec![]
            )
            .trusted
        );

        std::fs::write(agent.join("trust.json"), "not json").unwrap();
        assert!(resolve(None, &agent, &project, &FileLimits::default(), &mut vec![]).trusted);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
