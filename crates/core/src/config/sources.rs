//! Which config files are read, in which order, and what came of each one (for `doctor`).

use super::{home, ImportKind, LoadOptions};
use std::path::PathBuf;

/// A file that was looked at.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub path: PathBuf,
    pub role: Role,
    pub state: SourceState,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// `~/.config/mcp/mcp.json`, `~/.agents/mcp.json`, `~/.agents/mcp/mcp.json`.
    Shared,
    /// `<agentDir>/mcp.json`.
    PiGlobal,
    /// `--config` / `--mcp-config`: replaces `<agentDir>/mcp.json`.
    Explicit,
    /// `.mcp.json`, `.pi/mcp.json`: used only in a trusted project.
    Project,
    /// An installed Pi package's MCP config (`"pi": {"mcp": …}` in its `package.json`).
    Package {
        /// The package's name.
        name: String,
        /// The Pi settings file whose `packages` lists it.
        settings: PathBuf,
        project: bool,
    },
    /// Another tool's config, read because a config file lists it in `imports`.
    Import {
        kind: ImportKind,
        by: PathBuf,
        /// In the project (e.g. `.vscode/mcp.json`): used only in a trusted project.
        project: bool,
    },
}

impl Role {
    pub fn is_project(&self) -> bool {
        matches!(
            self,
            Role::Project
                | Role::Import { project: true, .. }
                | Role::Package { project: true, .. }
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SourceState {
    Missing,
    /// Empty or only comments.
    Blank,
    /// Unreadable or invalid; a diagnostic says why.
    Invalid,
    Loaded {
        servers: Vec<String>,
        /// Imported servers not used because a config (or an earlier import) defines them.
        shadowed: Vec<String>,
    },
    /// Not used: the project is not trusted.
    Untrusted {
        servers: Vec<String>,
    },
}

/// The role `file` has among the native config files (the user's Pi config when it is none).
pub fn role_of(file: &std::path::Path, opts: &LoadOptions) -> Role {
    native(opts)
        .into_iter()
        .find(|(path, _, _)| path == file)
        .map_or(Role::PiGlobal, |(_, role, _)| role)
}

/// `PI_MCP_CONFIG_MODE=exclusive`: only the user's Pi config (or `--config`) is read.
pub fn exclusive(opts: &LoadOptions) -> bool {
    opts.env
        .get("PI_MCP_CONFIG_MODE")
        .map(|m| m.trim().to_lowercase())
        == Some("exclusive".into())
}

/// The native config files in precedence order, lowest first, and whether each must exist.
pub fn native(opts: &LoadOptions) -> Vec<(PathBuf, Role, bool)> {
    let pi_global = match &opts.config_path {
        Some(path) => (opts.cwd.join(path), Role::Explicit, true),
        None => (opts.agent_dir.join("mcp.json"), Role::PiGlobal, false),
    };
    if exclusive(opts) {
        return vec![pi_global];
    }
    let home = home(&opts.env);
    vec![
        (home.join(".config/mcp/mcp.json"), Role::Shared, false),
        (home.join(".agents/mcp.json"), Role::Shared, false),
        (home.join(".agents/mcp/mcp.json"), Role::Shared, false),
        pi_global,
        (opts.cwd.join(".mcp.json"), Role::Project, false),
        (opts.cwd.join(".pi/mcp.json"), Role::Project, false),
    ]
}
