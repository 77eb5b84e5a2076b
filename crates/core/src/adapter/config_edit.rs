//! Changes `/mcp` saves to the config files: turning a server on or off where it takes effect
//! (see `config::switch`). The session's gateway is opened again afterwards by its front end.

mod add;
mod exposure;
mod setup;

pub use exposure::{
    DirectCost, ExposedTool, ExposureChange, ExposureError, ExposurePreview, ServerExposure,
};
pub use setup::SetupRequest;

use super::Kernel;
use crate::config::{switch, EditError, Role};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A change saved to a config file.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedChange {
    pub file: String,
    pub changed: bool,
}

/// Why a server could not be turned on or off.
#[derive(Debug)]
pub enum SwitchError {
    /// No server of that name is configured (enabled or not).
    NotConfigured(String),
    /// The config file could not be changed.
    Edit(EditError),
}

impl fmt::Display for SwitchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SwitchError::NotConfigured(name) => write!(f, "no MCP server named \"{name}\""),
            SwitchError::Edit(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SwitchError {}

/// Changes to the config files: `add`, `setup`, enabling a server, exposures (add.rs,
/// setup.rs, exposure.rs).
pub struct ConfigEdits<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(ConfigEdits);

impl ConfigEdits<'_> {
    /// The user's Pi config, where `pi mcp add` writes: `<agentDir>/mcp.json`, or the file
    /// `--mcp-config` names.
    pub fn user_file(&self) -> PathBuf {
        self.kernel
            .config
            .sources
            .iter()
            .find(|s| matches!(s.role, Role::Explicit | Role::PiGlobal))
            .map_or_else(
                || self.kernel.agent_dir.join("mcp.json"),
                |s| s.path.clone(),
            )
    }

    /// The project's `.pi/mcp.json`, when the project is trusted (else it is not read).
    pub fn project_file(&self) -> Option<PathBuf> {
        self.kernel
            .config
            .trust
            .trusted
            .then(|| self.kernel.cwd.join(".pi").join("mcp.json"))
    }

    /// Turns `name` on or off in the config file it comes from, or with `in_project` in the
    /// project's `.pi/mcp.json`; comments and everything else in the file are kept.
    pub fn set_enabled(
        &self,
        name: &str,
        enabled: bool,
        in_project: bool,
    ) -> Result<SavedChange, SwitchError> {
        let server = self
            .kernel
            .config
            .servers
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| SwitchError::NotConfigured(name.to_string()))?;
        let user = self.user_file();
        let project = self.project_file();
        let targets = switch::Targets {
            user: &user,
            project: project.as_deref(),
        };
        let (file, changed) =
            switch::apply(server, enabled, in_project, &targets).map_err(SwitchError::Edit)?;
        Ok(SavedChange {
            file: file.display().to_string(),
            changed,
        })
    }
}
