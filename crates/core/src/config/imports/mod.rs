//! `imports`: servers from the configs of other tools (Cursor, Claude Code, Claude Desktop,
//! VS Code, Windsurf, Codex, OpenCode), read where those tools keep them and mapped to our fields.
//! They come last: an imported server never overrides one a config file defines.

mod codex;
mod editors;
mod opencode;

use super::diagnostic::{Diagnostic, Level};
use super::fields as key;
use super::files::{self, Origin, Read};
use super::interpolate::Env;
use super::server::describe;
use super::sources::{Role, Source, SourceState};
use pi_mcp_connection::bounded_read::FileLimits;
use pi_mcp_connection::value_kind::value_kind;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImportKind {
    Cursor,
    ClaudeCode,
    ClaudeDesktop,
    Vscode,
    Windsurf,
    Codex,
    Opencode,
}

impl ImportKind {
    pub const ALL: [ImportKind; 7] = [
        ImportKind::Cursor,
        ImportKind::ClaudeCode,
        ImportKind::ClaudeDesktop,
        ImportKind::Vscode,
        ImportKind::Windsurf,
        ImportKind::Codex,
        ImportKind::Opencode,
    ];

    /// The name used in `imports`.
    pub fn name(self) -> &'static str {
        match self {
            ImportKind::Cursor => "cursor",
            ImportKind::ClaudeCode => "claude-code",
            ImportKind::ClaudeDesktop => "claude-desktop",
            ImportKind::Vscode => "vscode",
            ImportKind::Windsurf => "windsurf",
            ImportKind::Codex => "codex",
            ImportKind::Opencode => "opencode",
        }
    }

    pub fn parse(name: &str) -> Option<ImportKind> {
        ImportKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Our field names → the tool's, where they differ (for messages and finding lines).
pub type Renamed = Vec<(&'static str, &'static str)>;
/// A server in our fields, and the fields it got under another name.
type Mapped = (Map<String, Value>, Renamed);

/// Where the tools' files are looked up.
pub struct Context<'a> {
    pub home: &'a Path,
    pub cwd: &'a Path,
    pub env: &'a Env,
    /// Files in the project (e.g. `.vscode/mcp.json`) are read only in a trusted project.
    pub project_trusted: bool,
    pub limits: &'a FileLimits,
}

/// One server from another tool's file, in our fields.
#[derive(Clone, Debug)]
pub struct ImportedServer {
    pub name: String,
    pub entry: Value,
    pub file: PathBuf,
    pub renamed: Renamed,
}

#[derive(Default)]
pub struct Imports {
    /// Every file looked at, in order.
    pub sources: Vec<Source>,
    pub servers: Vec<ImportedServer>,
    /// The text of each file read, for finding lines.
    pub texts: Vec<(PathBuf, String)>,
    /// Each server found (file, name) with the keys of the object of servers it is in.
    pub places: Vec<(PathBuf, String, Vec<String>)>,
}

/// A server as the tool wrote it.
struct Raw {
    name: String,
    value: Value,
    file: PathBuf,
    servers_path: Vec<String>,
}

struct Candidate {
    path: PathBuf,
    project: bool,
}

impl Candidate {
    fn user(path: PathBuf) -> Candidate {
        Candidate {
            path,
            project: false,
        }
    }

    fn project(path: PathBuf) -> Candidate {
        Candidate {
            path,
            project: true,
        }
    }
}

/// Claude Code's files: in `CLAUDE_CONFIG_DIR` when it is set.
fn claude_code_files(home: &Path, config_dir: Option<PathBuf>) -> Vec<PathBuf> {
    match config_dir {
        Some(dir) => vec![dir.join("mcp.json"), dir.join(".claude.json")],
        None => vec![
            home.join(".claude/mcp.json"),
            home.join(".claude.json"),
            home.join(".claude/claude_desktop_config.json"),
        ],
    }
}

/// Reads the servers of `kind` (asked for by the config file `by`).
pub fn read(
    kind: ImportKind,
    by: &Path,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Imports {
    let mut out = Imports::default();
    let mut raws: Vec<Raw> = vec![];
    // Within a group the first file found is used; a later group overrides an earlier one.
    for group in candidates(kind, ctx) {
        for candidate in group {
            if out.sources.iter().any(|s| s.path == candidate.path) {
                continue; // e.g. the project is the home directory
            }
            let role = Role::Import {
                kind,
                by: by.to_path_buf(),
                project: candidate.project,
            };
            let file = File { kind, ctx, role };
            if file.read(candidate, &mut out, &mut raws, diagnostics) {
                break;
            }
        }
    }
    for raw in raws {
        out.servers.extend(mapped(kind, raw, ctx, diagnostics));
    }
    out
}

/// One of a tool's files, to read.
struct File<'a> {
    kind: ImportKind,
    ctx: &'a Context<'a>,
    role: Role,
}

impl File<'_> {
    /// Reads `candidate` into `out` (its servers into `raws`); whether it was found.
    fn read(
        self,
        candidate: Candidate,
        out: &mut Imports,
        raws: &mut Vec<Raw>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> bool {
        let (kind, ctx) = (self.kind, self.ctx);
        let untrusted = candidate.project && !ctx.project_trusted;
        // An untrusted file is read only to name its servers; its problems are not reported.
        let mut scratch = vec![];
        let sink = if untrusted {
            &mut scratch
        } else {
            &mut *diagnostics
        };
        let state = match files::read(&candidate.path, Origin::Found, ctx.limits, sink) {
            Read::Missing => SourceState::Missing,
            Read::Blank => SourceState::Blank,
            Read::Invalid => SourceState::Invalid,
            Read::Parsed { value, text } => {
                let found = servers_of(kind, &value, &candidate.path, ctx, sink);
                let names: Vec<String> = found.iter().map(|r| r.name.clone()).collect();
                if untrusted {
                    super::report_untrusted(&candidate.path, &names, diagnostics);
                    SourceState::Untrusted { servers: names }
                } else {
                    out.texts.push((candidate.path.clone(), text));
                    out.places.extend(
                        found
                            .iter()
                            .map(|r| (r.file.clone(), r.name.clone(), r.servers_path.clone())),
                    );
                    layer(kind, raws, found, &mut out.sources);
                    SourceState::Loaded {
                        servers: names,
                        shadowed: vec![],
                    }
                }
            }
        };
        let found = !matches!(state, SourceState::Missing);
        out.sources.push(Source {
            path: candidate.path,
            role: self.role,
            state,
        });
        found
    }
}

/// A server of another tool's file in our terms; `None` when it cannot be read.
fn mapped(
    kind: ImportKind,
    raw: Raw,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ImportedServer> {
    let mut report = |level: Level, field: Option<&str>, message: String| {
        diagnostics.push(Diagnostic {
            level,
            file: Some(raw.file.clone()),
            line: None,
            server: Some(raw.name.clone()),
            field: field.map(str::to_string),
            message,
        });
    };
    let Some(object) = raw.value.as_object() else {
        let got = value_kind(&raw.value); // an entry written as one string may hold a token
        report(Level::Error, None, format!("must be an object, got {got}"));
        return None;
    };
    let (entry, renamed) = match kind {
        ImportKind::Codex => codex::map(object, &mut report),
        ImportKind::Opencode => opencode::map(object, &mut report)?,
        ImportKind::Cursor | ImportKind::Vscode | ImportKind::Windsurf => {
            editors::map(kind, object, ctx, &mut report)
        }
        ImportKind::ClaudeCode | ImportKind::ClaudeDesktop => (object.clone(), vec![]),
    };
    Some(ImportedServer {
        name: raw.name,
        entry: Value::Object(entry),
        file: raw.file,
        renamed,
    })
}

/// Adds a file's servers over the ones read so far; the ones it replaces are marked shadowed.
fn layer(kind: ImportKind, raws: &mut Vec<Raw>, found: Vec<Raw>, sources: &mut [Source]) {
    for raw in found {
        let Some(existing) = raws.iter_mut().find(|r| r.name == raw.name) else {
            raws.push(raw);
            continue;
        };
        if let Some(Source {
            state: SourceState::Loaded { shadowed, .. },
            ..
        }) = sources.iter_mut().find(|s| s.path == existing.file)
        {
            shadowed.push(raw.name.clone());
        }
        if kind == ImportKind::Opencode {
            opencode::merge(&mut existing.value, &raw.value);
            existing.file = raw.file;
            existing.servers_path = raw.servers_path;
        } else {
            *existing = raw;
        }
    }
}

/// The files `kind` keeps its servers in: groups of alternatives, lowest precedence first.
fn candidates(kind: ImportKind, ctx: &Context) -> Vec<Vec<Candidate>> {
    let var = |name: &str| {
        ctx.env
            .get(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = ctx.home;
    let (user, project) = (Candidate::user, Candidate::project);
    let xdg = var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
    let mac = home.join("Library/Application Support");
    match kind {
        ImportKind::Cursor => vec![
            vec![user(home.join(".cursor/mcp.json"))],
            vec![project(ctx.cwd.join(".cursor/mcp.json"))],
        ],
        ImportKind::ClaudeCode => {
            let files = claude_code_files(home, var("CLAUDE_CONFIG_DIR"));
            vec![files.into_iter().map(user).collect()]
        }
        ImportKind::ClaudeDesktop => vec![vec![
            user(mac.join("Claude/claude_desktop_config.json")),
            user(xdg.join("Claude/claude_desktop_config.json")),
        ]],
        ImportKind::Vscode => vec![
            vec![
                user(xdg.join("Code/User/mcp.json")),
                user(mac.join("Code/User/mcp.json")),
            ],
            vec![project(ctx.cwd.join(".vscode/mcp.json"))],
        ],
        ImportKind::Windsurf => vec![vec![
            user(home.join(".codeium/windsurf/mcp_config.json")),
            user(home.join(".windsurf/mcp.json")),
        ]],
        ImportKind::Codex => {
            let dir = var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
            vec![vec![
                user(dir.join("config.toml")),
                user(dir.join("config.json")),
            ]]
        }
        ImportKind::Opencode => vec![
            vec![
                user(xdg.join("opencode/opencode.json")),
                user(xdg.join("opencode/opencode.jsonc")),
            ],
            opencode::project_files(ctx.cwd)
                .into_iter()
                .map(project)
                .collect(),
        ],
    }
}

/// The servers in a tool's file, by name, as written.
fn servers_of(
    kind: ImportKind,
    root: &Value,
    file: &Path,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Raw> {
    let mut found = vec![];
    for path in servers_paths(kind, root, ctx) {
        let mut value = Some(root);
        for key in &path {
            value = value.and_then(|v| v.get(key));
        }
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Object(servers)) => {
                for (name, value) in servers {
                    let raw = Raw {
                        name: name.clone(),
                        value: value.clone(),
                        file: file.to_path_buf(),
                        servers_path: path.clone(),
                    };
                    match found.iter_mut().find(|r: &&mut Raw| &r.name == name) {
                        Some(existing) => *existing = raw,
                        None => found.push(raw),
                    }
                }
            }
            Some(other) => diagnostics.push(Diagnostic::in_file(
                Level::Error,
                file,
                Some(&path.join(".")),
                format!(
                    "must be an object of servers by name, got {}",
                    describe(other)
                ),
            )),
        }
    }
    found
}

/// Where `kind`'s file keeps its servers: key paths, a later one's servers winning.
fn servers_paths(kind: ImportKind, root: &Value, ctx: &Context) -> Vec<Vec<String>> {
    let first_key = |keys: &[&str]| -> Vec<String> {
        let key = keys
            .iter()
            .find(|k| root.get(k).is_some())
            .unwrap_or(&keys[0]);
        vec![key.to_string()]
    };
    let ours = [key::MCP_SERVERS.name, key::MCP_SERVERS_ALIAS.name];
    match kind {
        ImportKind::Cursor | ImportKind::Windsurf | ImportKind::ClaudeDesktop => {
            vec![first_key(&ours)]
        }
        ImportKind::Vscode => vec![first_key(&["servers", ours[0], ours[1]])],
        ImportKind::Codex => vec![first_key(&["mcp_servers", ours[0]])],
        ImportKind::Opencode => {
            // OpenCode 2 nests them under `mcp.servers`.
            let nested = root
                .get("mcp")
                .and_then(|m| m.get("servers"))
                .is_some_and(Value::is_object);
            match nested {
                true => vec![vec!["mcp".into(), "servers".into()]],
                false => vec![vec!["mcp".into()]],
            }
        }
        ImportKind::ClaudeCode => {
            let mut paths = vec![vec![ours[0].to_string()]];
            // Servers added with `claude mcp add` in this project ("local" scope) win.
            let canonical =
                std::fs::canonicalize(ctx.cwd).unwrap_or_else(|_| ctx.cwd.to_path_buf());
            let dir = [ctx.cwd, canonical.as_path()]
                .into_iter()
                .filter_map(Path::to_str)
                .find(|dir| root["projects"].get(dir).is_some());
            if let Some(dir) = dir {
                paths.push(vec!["projects".into(), dir.into(), ours[0].into()]);
            }
            paths
        }
    }
}

/// Copies `from` into `to` under another name; returns whether there was a value.
fn rename(from: &Map<String, Value>, key: &str, to: &mut Map<String, Value>, new: &str) -> bool {
    match from.get(key) {
        Some(value) if !value.is_null() => {
            to.insert(new.to_string(), value.clone());
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
