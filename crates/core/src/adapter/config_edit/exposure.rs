//! `/mcp`'s exposure: each enabled server's tools with how the model reaches them now and once
//! the changes picked in the panel are saved (behind `mcp`, direct, hidden), what the direct
//! ones cost in tokens, where a save goes, and the save (`config::expose`).

use crate::adapter::config_edit::{ConfigEdits, SavedChange};
use crate::adapter::direct::{DirectToolDefinition, ToolAnnotations};
use crate::catalog::{build_server_tools, pi_tool_names, ToolInfo};
use crate::config::expose::{self, Choice, Defaults, Keys, Tool, Wanted};
use crate::config::{switch, EditError, Exposure, ServerConfig};
use crate::token_estimate;
use pi_mcp_connection::clean;
use serde_json::json;
use std::fmt;

/// One change picked in the panel: `choice` (`mcp`, `direct`, `hidden`) for one tool (its MCP
/// name), or without `tool` for every tool of the server.
#[derive(Clone, Debug, PartialEq)]
pub struct ExposureChange {
    pub server: String,
    pub tool: Option<String>,
    pub choice: String,
}

/// Every enabled server's exposure with the changes made, and the direct tools' cost.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct ExposurePreview {
    pub servers: Vec<ServerExposure>,
    pub direct: DirectCost,
    pub saved: DirectCost,
}

/// How many tools are declared to the model, and their declarations' estimated tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DirectCost {
    pub tools: u32,
    pub tokens: u32,
}

/// One server's exposure.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerExposure {
    pub server: String,
    pub keys: String,
    pub file: String,
    pub notes: Vec<String>,
    pub state: String,
    pub changed: bool,
    pub direct: DirectCost,
    pub saved: DirectCost,
    pub tools: Vec<ExposedTool>,
}

/// One tool of a server, listed or cached (those the config hides or leaves out too).
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct ExposedTool {
    pub name: String,
    pub tool: String,
    pub state: String,
    pub saved: String,
    pub tokens: u32,
    pub locked: Option<String>,
    pub annotations: Option<ToolAnnotations>,
    pub description: String,
}

/// Why exposure changes could not be previewed or saved.
#[derive(Debug)]
pub enum ExposureError {
    NotConfigured(String),
    UnknownTool { server: String, tool: String },
    UnknownChoice(String),
    Edit(EditError),
}

impl fmt::Display for ExposureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExposureError::NotConfigured(name) => {
                write!(f, "no enabled MCP server named \"{name}\"")
            }
            ExposureError::UnknownTool { server, tool } => {
                write!(f, "server \"{server}\" has no tool \"{tool}\" known")
            }
            ExposureError::UnknownChoice(choice) => write!(
                f,
                "unknown exposure \"{choice}\": expected \"mcp\", \"direct\" or \"hidden\""
            ),
            ExposureError::Edit(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ExposureError {}

/// A server's exposure change planned, with what the preview needs.
struct Planned<'a> {
    server: &'a ServerConfig,
    tools: Vec<ToolInfo>,
    plan: expose::Plan,
}

impl ConfigEdits<'_> {
    /// Every enabled server's exposure with `changes` made (nothing is saved); `pi_reads`: Pi
    /// reads `exposure` itself (≥ 0.99).
    pub fn exposure(
        &self,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<ExposurePreview, ExposureError> {
        let planned = self.plan_exposure(changes, pi_reads, true)?;
        let servers: Vec<ServerExposure> = planned
            .iter()
            .map(|p| self.server_exposure(p, pi_reads))
            .collect();
        let sum = |cost: fn(&ServerExposure) -> DirectCost| {
            servers
                .iter()
                .map(cost)
                .fold(DirectCost::default(), |a, c| DirectCost {
                    tools: a.tools + c.tools,
                    tokens: a.tokens + c.tokens,
                })
        };
        Ok(ExposurePreview {
            direct: sum(|s| s.direct),
            saved: sum(|s| s.saved),
            servers,
        })
    }

    /// Saves `changes` to the files of the servers they concern (comments kept; each file
    /// written once, whole); the gateway is opened again afterwards by its front end.
    pub fn save_exposure(
        &self,
        changes: &[ExposureChange],
        pi_reads: bool,
    ) -> Result<Vec<SavedChange>, ExposureError> {
        let planned = self.plan_exposure(changes, pi_reads, false)?;
        let saved = planned
            .iter()
            .map(|p| {
                let changed =
                    expose::apply(&p.server.name, &p.plan).map_err(ExposureError::Edit)?;
                Ok(SavedChange {
                    file: p.plan.file.display().to_string(),
                    changed,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.carry_cache_over(&planned);
        Ok(saved)
    }

    /// `excludeTools` is part of the cache hash (pi-mcp-adapter's), but the cache holds the
    /// tools it leaves out too: the metadata known is kept under the hash of the new config, so
    /// that the server need not start to be listed again.
    fn carry_cache_over(&self, planned: &[Planned]) {
        let moved: Vec<_> = planned
            .iter()
            .filter(|p| {
                crate::cache::config_hash(&p.server.entry, &self.kernel.env)
                    != crate::cache::config_hash(&p.plan.after.entry, &self.kernel.env)
            })
            .map(|p| (p.server.name.as_str(), &p.plan.after.entry))
            .collect();
        self.kernel.cache_known_as(&moved);
    }

    /// Plans `changes` for each server they concern (with `every`, for every enabled server).
    fn plan_exposure(
        &self,
        changes: &[ExposureChange],
        pi_reads: bool,
        every: bool,
    ) -> Result<Vec<Planned<'_>>, ExposureError> {
        let mut wanted: Vec<(&str, Wanted)> = vec![];
        for change in changes {
            let choice = Choice::parse(&change.choice)
                .ok_or_else(|| ExposureError::UnknownChoice(change.choice.clone()))?;
            let at = match wanted.iter().position(|(s, _)| *s == change.server) {
                Some(at) => at,
                None => {
                    wanted.push((&change.server, Wanted::default()));
                    wanted.len() - 1
                }
            };
            match &change.tool {
                Some(tool) => wanted[at].1.tools.push((tool.clone(), choice)),
                None => wanted[at].1.server = Some(choice),
            }
        }
        for (name, _) in &wanted {
            if !self
                .kernel
                .servers
                .configs()
                .any(|s| s.name == *name && !s.disabled)
            {
                return Err(ExposureError::NotConfigured(name.to_string()));
            }
        }
        let defaults = Defaults {
            direct_tools: self.kernel.config.settings.direct_tools,
            exposure: self.kernel.config.settings.exposure,
        };
        let user = self.user_file();
        let project = self.project_file();
        let targets = switch::Targets {
            user: &user,
            project: project.as_deref(),
        };
        let mut planned = vec![];
        for server in self.kernel.servers.configs().filter(|s| !s.disabled) {
            let mine = wanted.iter().find(|(name, _)| *name == server.name);
            if mine.is_none() && !every {
                continue;
            }
            let tools = self.all_tools(server);
            let wanted = mine.map(|(_, w)| w.clone()).unwrap_or_default();
            if let Some((tool, _)) = wanted
                .tools
                .iter()
                .find(|(t, _)| !tools.iter().any(|known| known.original == *t))
            {
                return Err(ExposureError::UnknownTool {
                    server: server.name.clone(),
                    tool: tool.clone(),
                });
            }
            let names: Vec<Tool> = tools.iter().map(tool_names).collect();
            let plan = expose::plan(server, defaults, &names, &wanted, pi_reads, &targets);
            planned.push(Planned {
                server,
                tools,
                plan,
            });
        }
        Ok(planned)
    }

    /// Every tool of `server` known now, including those its config hides or leaves out (not
    /// those for its app alone: no exposure reaches them).
    fn all_tools(&self, server: &ServerConfig) -> Vec<ToolInfo> {
        let Some(meta) = self.kernel.servers.meta(&server.name) else {
            return vec![];
        };
        let prefix = server
            .tool_prefix
            .unwrap_or(self.kernel.config.settings.tool_prefix);
        build_server_tools(
            &server.name,
            prefix,
            &meta.tools,
            &meta.resources,
            &meta.templates,
            server.expose_resources,
        )
        .into_iter()
        .filter(ToolInfo::for_model)
        .collect()
    }

    fn server_exposure(&self, planned: &Planned, pi_reads: bool) -> ServerExposure {
        let Planned {
            server,
            tools,
            plan,
        } = planned;
        let direct_default = self.kernel.config.settings.direct_tools;
        let names: Vec<Tool> = tools.iter().map(tool_names).collect();
        let costs = |keys: Keys| -> Vec<u32> {
            let declared: Vec<String> = match keys {
                Keys::Pi => {
                    let originals: Vec<&str> = names.iter().map(|t| t.original).collect();
                    pi_tool_names(&server.name, &originals)
                }
                Keys::Adapter => tools.iter().map(|t| t.name.clone()).collect(),
            };
            tools
                .iter()
                .zip(declared)
                .map(|(tool, name)| {
                    declared_tokens(&DirectToolDefinition {
                        name,
                        ..DirectToolDefinition::from(tool)
                    })
                })
                .collect()
        };
        let (now_costs, after_costs) = (costs(Keys::of(server, pi_reads)), costs(plan.keys));
        let mut direct = DirectCost::default();
        let mut saved = DirectCost::default();
        let rows: Vec<ExposedTool> = tools
            .iter()
            .zip(&names)
            .enumerate()
            .map(|(i, (tool, name))| {
                let now = server.reached(direct_default, *name);
                let after = plan.after.reached(direct_default, *name);
                for (reached, cost, sum) in [
                    (&now, now_costs[i], &mut saved),
                    (&after, after_costs[i], &mut direct),
                ] {
                    if reached.exposure == Some(Exposure::Direct) {
                        sum.tools += 1;
                        sum.tokens += cost;
                    }
                }
                let def = DirectToolDefinition::from(tool);
                ExposedTool {
                    name: tool.name.clone(),
                    tool: tool.original.clone(),
                    state: state_name(after.exposure, pi_reads).into(),
                    saved: state_name(now.exposure, pi_reads).into(),
                    tokens: after_costs[i],
                    locked: after.locked,
                    annotations: def.annotations,
                    description: clean::line(tool.description.lines().next().unwrap_or_default())
                        .into_owned(),
                }
            })
            .collect();
        let state = match rows.split_first() {
            Some((first, rest)) => match rest.iter().all(|r| r.state == first.state) {
                true => first.state.clone(),
                false => "mixed".into(),
            },
            None => match plan.keys {
                Keys::Pi => state_name(plan.after.exposure.server, pi_reads).into(),
                Keys::Adapter => match plan.after.direct_selection(direct_default) {
                    crate::config::DirectTools::All => "direct".into(),
                    _ if plan.after.exclude_tools.iter().flatten().any(|g| g == "*") => {
                        "hidden".into()
                    }
                    _ => "mcp".into(),
                },
            },
        };
        ServerExposure {
            server: server.name.clone(),
            keys: match plan.keys {
                Keys::Pi => "exposure",
                Keys::Adapter => "directTools",
            }
            .into(),
            file: plan.file.display().to_string(),
            notes: self.exposure_notes(server, plan),
            state,
            changed: !plan.edits.is_empty(),
            direct,
            saved,
            tools: rows,
        }
    }

    /// What a save of `server` means beyond its file: an override entry for a server defined
    /// elsewhere, a parent agent's `MCP_DIRECT_TOOLS`.
    fn exposure_notes(&self, server: &ServerConfig, plan: &expose::Plan) -> Vec<String> {
        let mut notes = vec![];
        let home = self.kernel.home();
        let file = plan.file.display().to_string();
        let file = match file.strip_prefix(&home) {
            Some(rest) if !home.is_empty() => format!("~{rest}"),
            _ => file,
        };
        let elsewhere = match (&server.imported, &server.package, &server.registered) {
            (Some(imported), _, _) => Some(format!("{}'s config", imported.kind.name())),
            (_, Some(package), _) => Some(format!("Pi package {}", package.name)),
            (_, _, Some(extension)) => Some(format!("the extension {}", extension.display())),
            _ => None,
        };
        if let Some(origin) = elsewhere.filter(|_| server.files.first() != Some(&plan.file)) {
            notes.push(format!(
                "saved as an override entry in {file}: {origin} is never written"
            ));
        }
        if self.kernel.env.contains_key("MCP_DIRECT_TOOLS") {
            notes.push(
                "MCP_DIRECT_TOOLS (set by a parent agent) picks this session's direct tools; a save applies to sessions without it"
                    .into(),
            );
        }
        notes
    }
}

fn tool_names(tool: &ToolInfo) -> Tool<'_> {
    Tool {
        original: &tool.original,
        name: &tool.name,
    }
}

/// A state as the panel names it; on Pi 0.87 (`pi_reads` false) `codemode` and `deferred`
/// mean behind `mcp`, as there is neither codemode nor tool_search.
fn state_name(exposure: Option<Exposure>, pi_reads: bool) -> &'static str {
    match exposure {
        None => "mcp",
        Some(Exposure::Codemode | Exposure::Deferred) if !pi_reads => "mcp",
        Some(e) => e.name(),
    }
}

/// The estimated tokens of a direct tool's declaration: the function the model is given
/// (name, description, parameters) and its line in Pi's system prompt.
fn declared_tokens(def: &DirectToolDefinition) -> u32 {
    let declaration = json!({
        "type": "function",
        "function": {"name": def.name, "description": def.description, "parameters": def.parameters},
    });
    token_estimate::estimate(&declaration.to_string())
        + token_estimate::estimate(&format!("- {}: {}", def.name, def.prompt_snippet))
}
