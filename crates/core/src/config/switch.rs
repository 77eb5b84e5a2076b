//! Turning a server on or off from `/mcp`, saved where it takes effect: the last of our config
//! files that sets a field of the server (an override entry there when it has none yet), or, as
//! "in this project", the project's `.pi/mcp.json`. Other tools' files (`imports`), installed Pi
//! packages' files and Pi extensions' registrations are never written: an override entry in the user's Pi config adjusts
//! them. Both keys that turn a server off (`enabled: false`, `disabled: true`) are handled.

use super::edit::edit_server_at;
use super::{Change, EditError, ServerConfig};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Which file to write the change to: `user` is the user's Pi config (`<agentDir>/mcp.json`, or
/// the file `--mcp-config` names), `project` the project's `.pi/mcp.json` when the project is
/// trusted.
pub struct Targets<'a> {
    pub user: &'a Path,
    pub project: Option<&'a Path>,
}

/// Where and what to write: the file, and each field's change.
#[derive(Debug, PartialEq)]
pub struct Plan {
    pub file: PathBuf,
    pub edits: Vec<(&'static str, Change)>,
}

/// The file and the edits that turn `server` on (`enabled`) or off; `in_project` puts them in
/// the project's file.
pub fn plan(
    server: &ServerConfig,
    enabled: bool,
    in_project: bool,
    targets: &Targets,
) -> Result<Plan, String> {
    let file = if in_project {
        targets
            .project
            .ok_or("the project is not trusted, so its .pi/mcp.json is not read")?
            .to_path_buf()
    } else {
        target(server, targets)
    };
    let set_here = |field: &str| server.field_files.get(field).is_some_and(|f| *f == file);
    let value = |field: &str| server.entry.get(field).cloned();
    let mut edits = vec![];
    if enabled {
        // Each key that turns it off now: removed where it is set, else outweighed here.
        for (field, off, on) in [
            ("enabled", json!(false), json!(true)),
            ("disabled", json!(true), json!(false)),
        ] {
            if value(field) == Some(off) {
                edits.push((
                    field,
                    if set_here(field) {
                        Change::Remove
                    } else {
                        Change::Set(on)
                    },
                ));
            }
        }
    } else if set_here("disabled") {
        edits.push(("disabled", Change::Set(Value::Bool(true))));
    } else {
        edits.push(("enabled", Change::Set(Value::Bool(false))));
    }
    Ok(Plan { file, edits })
}

/// Where a change to `server` takes effect: the last of our own files that sets a field of
/// it, else (for a server from another tool's file, an extension or a package) the user's file.
pub fn target(server: &ServerConfig, targets: &Targets) -> PathBuf {
    ours(server).unwrap_or_else(|| targets.user.to_path_buf())
}

/// The last of our own files that sets a field of the server (not another tool's file, an
/// extension's registration, nor an installed package's file).
fn ours(server: &ServerConfig) -> Option<PathBuf> {
    let elsewhere = (server.imported.is_some() || server.package.is_some())
        .then(|| server.files.first())
        .flatten();
    server
        .files
        .iter()
        .rev()
        .find(|f| Some(*f) != server.registered.as_ref() && Some(*f) != elsewhere)
        .cloned()
}

/// Makes the change of [`plan`]; returns the file, and whether it changed.
pub fn apply(
    server: &ServerConfig,
    enabled: bool,
    in_project: bool,
    targets: &Targets,
) -> Result<(PathBuf, bool), EditError> {
    let Plan { file, edits } =
        plan(server, enabled, in_project, targets).map_err(|why| EditError {
            file: targets.project.unwrap_or(targets.user).to_path_buf(),
            why,
        })?;
    let edits: Vec<(Vec<&str>, &Change)> = edits
        .iter()
        .map(|(field, change)| (vec![server.name.as_str(), *field], change))
        .collect();
    let changed = edit_server_at(&file, &edits)?;
    Ok((file, changed))
}
