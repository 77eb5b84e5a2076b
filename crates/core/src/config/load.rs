//! Loading, phase by phase: trust and the files to read, each of our files read and merged,
//! servers registered by Pi extensions and declared by Pi packages, other tools' configs
//! (`imports`), then settings and servers checked and every diagnostic given its line.

use super::files::{self, Origin, Read};
use super::merge::{self, Merged, MergedServer};
use super::{
    approval, home, imports, locate, names, packages, pi_rules, server, settings, sources, trust,
    CommandPolicy, Config, Diagnostic, Imported, Level, LoadOptions, Only, Role, Source,
    SourceState, Trust,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A load in progress: what each phase adds to.
struct Loading<'a> {
    opts: &'a LoadOptions,
    only: Option<&'a Only>,
    trust: Trust,
    merged: Merged,
    sources: Vec<Source>,
    places: Places,
    approvals: approval::Votes,
    /// The user's and the project's Pi config, as written: where Pi's own rule reads them
    /// differently (for `doctor`).
    pi_files: (Map<String, Value>, Map<String, Value>),
    diagnostics: Vec<Diagnostic>,
}

/// Reads and merges every config file and import (or `only`'s config alone).
pub(super) fn load(opts: &LoadOptions, only: Option<&Only>) -> Config {
    let mut diagnostics = vec![];
    let trust = trust::resolve(
        opts.project_trusted,
        &opts.agent_dir,
        &opts.cwd,
        &opts.limits,
        &mut diagnostics,
    );
    let mut load = Loading {
        opts,
        only,
        trust,
        merged: Merged::default(),
        sources: vec![],
        places: Places::default(),
        approvals: approval::Votes::default(),
        pi_files: (Map::new(), Map::new()),
        diagnostics,
    };
    let native = match only {
        Some(only) => vec![(only.file.clone(), sources::role_of(&only.file, opts), false)],
        None => sources::native(opts),
    };
    let project_files: Vec<PathBuf> = native
        .iter()
        .filter(|(_, role, _)| role.is_project())
        .map(|(path, _, _)| path.clone())
        .collect();
    let packages = load.packages();
    let commands = CommandPolicy::new(
        &load.trust,
        native
            .iter()
            .map(|(path, role, _)| (path.as_path(), role))
            .chain(packages.sources.iter().map(|s| (s.path.as_path(), &s.role))),
    );
    for (path, role, required) in native {
        load.native_file(path, role, required);
    }
    load.registered();
    load.package_servers(packages);
    load.imports();
    load.finish(&project_files, &commands)
}

impl Loading<'_> {
    /// Servers of installed Pi packages: none with a config given alone (`PI_MCP_CONFIG_MODE`,
    /// `add`'s trial).
    fn packages(&mut self) -> packages::Packages {
        if self.only.is_some() || sources::exclusive(self.opts) {
            return packages::Packages::default();
        }
        let ctx = packages::Context {
            agent_dir: &self.opts.agent_dir,
            cwd: &self.opts.cwd,
            env: &self.opts.env,
            project_trusted: self.trust.trusted,
            limits: &self.opts.limits,
        };
        packages::read(&ctx, &mut self.diagnostics)
    }

    /// One of our files: read (or `only`'s config), and merged unless it is an untrusted
    /// project's.
    fn native_file(&mut self, path: PathBuf, role: Role, required: bool) {
        if self.sources.iter().any(|s| s.path == path) {
            return; // e.g. the project is the home directory
        }
        let origin = if required {
            Origin::Given
        } else {
            Origin::Found
        };
        let read = match self.only {
            Some(only) => Read::Parsed {
                value: only.root.clone(),
                text: serde_json::to_string_pretty(&only.root).unwrap_or_default(),
            },
            None => files::read(&path, origin, &self.opts.limits, &mut self.diagnostics),
        };
        let state = match read {
            Read::Missing => SourceState::Missing,
            Read::Blank => SourceState::Blank,
            Read::Invalid => SourceState::Invalid,
            Read::Parsed { value, text } => self.parsed_file(&path, &role, value, text),
        };
        self.sources.push(Source { path, role, state });
    }

    fn parsed_file(&mut self, path: &Path, role: &Role, value: Value, text: String) -> SourceState {
        let root = match value {
            Value::Object(root) => root,
            other => {
                let message = format!(
                    "must hold a JSON object like {{\"mcpServers\": {{...}}}}, got {}; its servers are not loaded",
                    server::describe(&other)
                );
                let d = Diagnostic::in_file(Level::Error, path, None, message);
                self.diagnostics.push(d);
                return SourceState::Invalid;
            }
        };
        if role.is_project() && !self.trust.trusted {
            let servers = merge::server_names(&root);
            report_untrusted(path, &servers, &mut self.diagnostics);
            return SourceState::Untrusted { servers };
        }
        match role {
            Role::PiGlobal | Role::Explicit => self.pi_files.0 = root.clone(),
            Role::Project if path == self.opts.cwd.join(".pi").join("mcp.json") => {
                self.pi_files.1 = root.clone()
            }
            _ => {}
        }
        let user = !role.is_project();
        self.approvals
            .file(path, user, &root, &mut self.diagnostics);
        let layer = self.merged.add(path, &root, &mut self.diagnostics);
        self.places
            .add(path, text, layer.servers_key, &layer.servers);
        SourceState::Loaded {
            servers: layer.servers,
            shadowed: vec![],
        }
    }

    /// Servers Pi extensions registered (`pi.registerMcpServer()`).
    fn registered(&mut self) {
        for registered in &self.opts.registered {
            let mut entry = MergedServer::new(
                &registered.name,
                registered.config.clone(),
                &registered.extension,
            );
            entry.registered = Some(registered.extension.clone());
            if self.add_from_elsewhere(entry) {
                continue;
            }
            let by = self
                .merged
                .defines(&registered.name)
                .map(|s| s.source().display().to_string());
            let message = format!(
                "registered by {} is not used: a config file defines it{}",
                registered.extension.display(),
                by.map(|f| format!(" ({f})")).unwrap_or_default()
            );
            self.diagnostics.push(Diagnostic {
                level: Level::Note,
                file: None,
                line: None,
                server: Some(registered.name.clone()),
                field: None,
                message,
            });
        }
    }

    fn package_servers(&mut self, packages: packages::Packages) {
        let mut package_sources = packages.sources;
        for server in packages.servers {
            let mut entry = MergedServer::new(&server.name, server.entry, &server.file);
            entry.package = Some(server.origin);
            if !self.add_from_elsewhere(entry) {
                mark_shadowed(&mut package_sources, &server.file, &server.name);
            }
        }
        self.sources.extend(package_sources);
    }

    /// Other tools' configs, in the order `imports` first asked for them.
    fn imports(&mut self) {
        let home = home(&self.opts.env);
        let ctx = imports::Context {
            home: &home,
            cwd: &self.opts.cwd,
            env: &self.opts.env,
            project_trusted: self.trust.trusted,
            limits: &self.opts.limits,
        };
        for (kind, by) in self.merged.imports.clone() {
            let found = imports::read(kind, &by, &ctx, &mut self.diagnostics);
            let mut kind_sources = found.sources;
            self.places.texts.extend(found.texts);
            for (file, name, servers_path) in found.places {
                self.places.servers.insert((file, name), servers_path);
            }
            for server in found.servers {
                let mut entry = MergedServer::new(&server.name, server.entry, &server.file);
                let by = by.clone();
                entry.imported = Some(Imported { kind, by });
                entry.renamed = server.renamed;
                if !self.add_from_elsewhere(entry) {
                    mark_shadowed(&mut kind_sources, &server.file, &server.name);
                }
            }
            self.sources.extend(kind_sources);
        }
    }

    /// Settings and servers checked, names checked, and each diagnostic given its line.
    fn finish(mut self, project_files: &[PathBuf], commands: &CommandPolicy) -> Config {
        let diagnostics = &mut self.diagnostics;
        let merged = &self.merged;
        let mut settings = settings::parse(&merged.settings, &merged.setting_files, diagnostics);
        settings.yes_inside_pi = self.approvals.yes_inside_pi_allowed();
        let ctx = server::Context {
            project_files,
            default_exposure: settings.exposure,
            shared_by_default: settings.shared_servers,
            family_by_default: settings.share_with_subagents,
            env: &self.opts.env,
            limits: &self.opts.limits,
            cwd: &self.opts.cwd,
            commands,
            approvals: &self.approvals,
        };
        let servers = merged
            .servers
            .iter()
            .filter_map(|s| server::parse(s, &ctx, diagnostics))
            .collect();
        names::check(&merged.servers, diagnostics);
        self.places.locate(diagnostics, &merged.servers);
        Config {
            servers,
            settings,
            diagnostics: self.diagnostics,
            sources: self.sources,
            trust: self.trust,
            auto_enable_codemode: self.merged.auto_enable_codemode,
            merge_differences: pi_rules::merge_differences(&self.pi_files.0, &self.pi_files.1),
        }
    }

    /// Adds a server defined outside the config files (a registration, a package, an import)
    /// unless a file defines it; its `approveTools` then adds to what the user's files ask.
    fn add_from_elsewhere(&mut self, entry: MergedServer) -> bool {
        let (name, file, vote) = (
            entry.name.clone(),
            entry.source().to_path_buf(),
            entry.entry.clone(),
        );
        let added = self.merged.add_from_elsewhere(entry);
        if added {
            self.approvals
                .entry(&name, &file, &vote, &mut self.diagnostics);
        }
        added
    }
}

fn mark_shadowed(sources: &mut [Source], file: &Path, name: &str) {
    for source in sources.iter_mut().filter(|s| s.path == file) {
        if let SourceState::Loaded { shadowed, .. } = &mut source.state {
            shadowed.push(name.to_string());
        }
    }
}

/// Says that a project file is not used, when it defines servers.
pub(super) fn report_untrusted(path: &Path, servers: &[String], diagnostics: &mut Vec<Diagnostic>) {
    if servers.is_empty() {
        return;
    }
    let names = servers
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!(
        "not used, because Pi does not trust this project and project configs start programs (servers {names}). Trust the project to use them: /trust in Pi, `pi --approve`, or `pi-mcp --approve`"
    );
    diagnostics.push(Diagnostic::in_file(Level::Warning, path, None, message));
}

/// What is needed to find the line a diagnostic is about.
#[derive(Default)]
struct Places {
    texts: HashMap<PathBuf, String>,
    /// For a server in a file: the keys of the object of servers it is in.
    servers: HashMap<(PathBuf, String), Vec<String>>,
}

impl Places {
    fn add(&mut self, file: &Path, text: String, servers_key: Option<&str>, servers: &[String]) {
        if let Some(key) = servers_key {
            for name in servers {
                self.servers
                    .insert((file.to_path_buf(), name.clone()), vec![key.to_string()]);
            }
        }
        self.texts.insert(file.to_path_buf(), text);
    }

    /// Fills in lines, and gives the fields of imported servers the names their tool uses.
    fn locate(&self, diagnostics: &mut [Diagnostic], servers: &[MergedServer]) {
        for d in diagnostics.iter_mut() {
            let server = d
                .server
                .as_ref()
                .and_then(|name| servers.iter().find(|s| &s.name == name));
            if let (Some(server), Some(field)) = (server, &mut d.field) {
                let (top, rest) = field.split_once('.').unwrap_or((field.as_str(), ""));
                if let Some((_, theirs)) = server.renamed.iter().find(|(ours, _)| *ours == top) {
                    *field = [*theirs, rest].join(if rest.is_empty() { "" } else { "." });
                }
            }
            if d.line.is_some() {
                continue;
            }
            let Some(text) = d.file.as_ref().and_then(|f| self.texts.get(f)) else {
                continue;
            };
            let file = d.file.clone().unwrap_or_default();
            let fields: Vec<&str> = d
                .field
                .as_deref()
                .map_or(vec![], |f| f.split('.').collect());
            d.line = match &d.server {
                None => locate::json_line(text, &fields),
                Some(name) => {
                    let Some(prefix) = self.servers.get(&(file.clone(), name.clone())) else {
                        continue;
                    };
                    if file.extension().is_some_and(|e| e == "toml") {
                        locate::toml_line(text, &prefix[0], name, fields.first().copied())
                    } else {
                        let mut path: Vec<&str> = prefix.iter().map(String::as_str).collect();
                        path.push(name);
                        path.extend(fields);
                        locate::json_line(text, &path)
                    }
                }
            };
        }
    }
}
