//! `/mcp setup` and `pi-mcp setup`: what the user has in other tools' configs and the
//! well-known servers (the plan), then the change that takes what they chose, shown as a preview
//! and written (comments kept, atomically) only when they confirmed it: as `imports`, or as
//! copied entries, in the file `pi mcp add` writes to (`--project`: the trusted project's).

use crate::adapter::config_edit::ConfigEdits;
use crate::adapter::detail_entries::*;
use crate::adapter::details::*;
use crate::adapter::Mode;
use crate::adapter::{ErrorCode, Outcome};
use crate::config::setup::{self, Choice, Found, WellKnown};
use crate::config::{ImportKind, LoadOptions};
use crate::render;
use serde_json::Value;
use std::path::PathBuf;

/// What the user chose in `setup`.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, Default)]
pub struct SetupRequest {
    pub project: Option<bool>,
    pub imports: Option<Vec<String>>,
    pub copy: Option<Vec<String>>,
    pub add: Option<Vec<String>>,
    pub dry_run: Option<bool>,
}

impl ConfigEdits<'_> {
    /// What `setup` can do here: other tools' configs and what each would add, the well-known
    /// servers, and the file it would write.
    pub fn setup_plan(&self, project: bool) -> Outcome {
        let file = match self.setup_target(project) {
            Ok(file) => file,
            Err(outcome) => return outcome,
        };
        let found = self.setup_found(&file);
        let configured = |id: &str| self.kernel.config.servers.iter().any(|s| s.name == id);
        let offers: Vec<(WellKnown, bool)> = setup::well_known()
            .into_iter()
            .map(|w| {
                let taken = configured(&w.id);
                (w, taken)
            })
            .collect();
        let text = render::setup_plan(&file, &found, &offers, self.kernel.cli);
        Outcome::text(Mode::Setup, text).with_part(SetupPlanDetails {
            file: file.display().to_string(),
            exists: file.exists(),
            found: found.iter().map(found_entry).collect(),
            well_known: offers
                .into_iter()
                .map(|(w, configured)| WellKnownEntry {
                    id: w.id,
                    title: w.title,
                    about: w.about,
                    entry: w.entry,
                    configured,
                })
                .collect(),
        })
    }

    /// Makes the change the user chose: its preview, and unless `dry_run` the file written.
    pub fn setup_apply(&self, request: &SetupRequest) -> Outcome {
        let usage = |why: String| Outcome::error(Mode::Setup, ErrorCode::BadUsage, why);
        let file = match self.setup_target(request.project.unwrap_or(false)) {
            Ok(file) => file,
            Err(outcome) => return outcome,
        };
        let kinds = |names: &Option<Vec<String>>| -> Result<Vec<ImportKind>, String> {
            names
                .iter()
                .flatten()
                .map(|n| ImportKind::parse(n).ok_or_else(|| render::unknown_tool(n)))
                .collect()
        };
        let (imports, copies) = match (kinds(&request.imports), kinds(&request.copy)) {
            (Ok(i), Ok(c)) => (i, c),
            (Err(why), _) | (_, Err(why)) => return usage(why),
        };
        let found = self.setup_found(&file);
        let mut servers: Vec<(String, Value)> = vec![];
        for kind in copies {
            let Some(found) = found.iter().find(|f| f.kind == kind) else {
                return usage(render::nothing_to_copy(kind.name()));
            };
            servers.extend(
                found
                    .servers
                    .iter()
                    .filter(|(name, _)| found.new.contains(name))
                    .cloned(),
            );
        }
        let offers = setup::well_known();
        for id in request.add.iter().flatten() {
            let Some(offer) = offers.iter().find(|w| &w.id == id) else {
                let ids: Vec<&str> = offers.iter().map(|w| w.id.as_str()).collect();
                return usage(render::unknown_well_known(id, &ids));
            };
            if let Some(outcome) = self.name_taken(id, &file) {
                return outcome.with_mode(Mode::Setup);
            }
            servers.push((offer.id.clone(), Value::Object(offer.entry.clone())));
        }
        let choice = Choice { imports, servers };
        let old = crate::config::read_text(&file);
        let new = old
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|old| setup::edited(old, &choice));
        let (old, new) = match (old, new) {
            (Ok(old), Ok(new)) => (old, new),
            (Err(why), _) | (_, Err(why)) => {
                let text = format!(
                    "cannot change {}: {why}; nothing was written.",
                    file.display()
                );
                return Outcome::error(Mode::Setup, ErrorCode::ConfigError, text);
            }
        };
        let preview = setup::preview(&old, &new);
        let dry_run = request.dry_run.unwrap_or(false);
        let written = match dry_run || old == new {
            true => false,
            false => match crate::config::write_text(&file, new.as_bytes()) {
                Ok(()) => true,
                Err(why) => {
                    let text = format!(
                        "cannot write {}: {why}; nothing was written.",
                        file.display()
                    );
                    return Outcome::error(Mode::Setup, ErrorCode::ConfigError, text);
                }
            },
        };
        let text = render::setup_done(&file, &preview, written, old == new, self.kernel.cli);
        Outcome::text(Mode::Setup, text).with_part(SetupDoneDetails {
            file: file.display().to_string(),
            preview,
            written,
        })
    }

    /// The file `setup` writes: the user's Pi config, or the trusted project's `.pi/mcp.json`.
    fn setup_target(&self, project: bool) -> Result<PathBuf, Outcome> {
        self.add_target(project).map_err(|mut outcome| {
            outcome.set_mode(Mode::Setup);
            outcome
        })
    }

    fn setup_found(&self, file: &std::path::Path) -> Vec<Found> {
        let opts = LoadOptions {
            cwd: self.kernel.cwd.clone(),
            agent_dir: self.kernel.agent_dir.clone(),
            config_path: None,
            env: self.kernel.env.clone(),
            project_trusted: Some(self.kernel.config.trust.trusted),
            limits: self.kernel.file_limits,
            registered: vec![],
        };
        setup::find(&opts, &self.kernel.config, file)
    }
}

fn found_entry(found: &Found) -> FoundEntry {
    FoundEntry {
        tool: found.kind,
        files: found
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        servers: found.servers.iter().map(|(name, _)| name.clone()).collect(),
        new: found.new.clone(),
        imported: found.imported,
    }
}
