//! Layering config files: settings key by key, servers field by field (later files win), and
//! where every field came from, so that a message names the file that set it.

use super::fields::{self as key, Place, Transport};
use super::imports::Renamed;
use super::reader::Reader;
use super::{fields, server::describe, Diagnostic, ImportKind, Imported, Level};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One server as merged so far.
#[derive(Clone, Debug)]
pub struct MergedServer {
    pub name: String,
    pub entry: Value,
    /// Files that set its fields, lowest precedence first.
    pub files: Vec<PathBuf>,
    /// The file that set each top-level field.
    pub field_files: HashMap<String, PathBuf>,
    pub imported: Option<Imported>,
    /// Set for a server a Pi extension registered: the extension's path.
    pub registered: Option<PathBuf>,
    /// Set for a server an installed Pi package declares.
    pub package: Option<super::PackageOrigin>,
    /// For an imported server: our field name → the other tool's, where they differ.
    pub renamed: Renamed,
}

impl MergedServer {
    pub fn new(name: &str, entry: Value, file: &Path) -> MergedServer {
        let field_files = entry
            .as_object()
            .map(|o| o.keys().map(|k| (k.clone(), file.to_path_buf())).collect())
            .unwrap_or_default();
        MergedServer {
            name: name.to_string(),
            entry,
            files: vec![file.to_path_buf()],
            field_files,
            imported: None,
            registered: None,
            package: None,
            renamed: vec![],
        }
    }

    /// The file that set `field` (`env.KEY` counts as `env`).
    pub fn file_of(&self, field: &str) -> &Path {
        let top = field.split('.').next().unwrap_or(field);
        self.field_files
            .get(top)
            .or(self.files.last())
            .map_or(Path::new(""), PathBuf::as_path)
    }

    /// The last file that set a field.
    pub fn source(&self) -> &Path {
        self.files.last().map_or(Path::new(""), PathBuf::as_path)
    }

    /// Whether this entry only adjusts a server defined elsewhere (another tool's config, or a
    /// Pi extension's registration): it names no transport, like Pi's project overrides
    /// (`{"enabled": false}`).
    pub fn is_override(&self) -> bool {
        self.imported.is_none()
            && self.registered.is_none()
            && self.package.is_none()
            && self.entry.as_object().is_some_and(|o| {
                !fields::at(Place::Server).any(|k| k.defines && o.contains_key(k.name))
            })
    }

    /// `base`, a server defined elsewhere, with this override's fields on top.
    pub fn over(self, mut base: MergedServer) -> MergedServer {
        if let (Value::Object(fields), Value::Object(target)) = (self.entry, &mut base.entry) {
            for (key, value) in fields {
                if let Some(file) = self.field_files.get(&key) {
                    base.field_files.insert(key.clone(), file.clone());
                }
                target.insert(key, value);
            }
        }
        base.files.extend(self.files);
        base
    }
}

/// The layers merged so far.
#[derive(Default)]
pub struct Merged {
    pub settings: Map<String, Value>,
    /// The file that set each setting.
    pub setting_files: HashMap<String, PathBuf>,
    pub servers: Vec<MergedServer>,
    /// `imports` in the order first asked for, with the file that asked.
    pub imports: Vec<(ImportKind, PathBuf)>,
    /// Pi's `autoEnableCodemode`, from the last file that set it.
    pub auto_enable_codemode: Option<bool>,
}

/// What one file contributed.
pub struct Layer {
    /// The key its servers are under (`mcpServers` or `mcp-servers`), if any.
    pub servers_key: Option<&'static str>,
    pub servers: Vec<String>,
}

impl Merged {
    pub fn add(
        &mut self,
        path: &Path,
        root: &Map<String, Value>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Layer {
        let mut report = |level: Level, field: &str, message: String| {
            diagnostics.push(Diagnostic::in_file(level, path, Some(field), message));
        };
        for key in root.keys() {
            if let Some((level, message)) = fields::check(Place::Root, key) {
                report(level, key, message);
            }
        }
        self.add_settings(path, root, &mut report);
        self.add_imports(path, root, &mut report);
        let field = match root.contains_key(key::MCP_SERVERS.name) {
            true => &key::MCP_SERVERS,
            false => &key::MCP_SERVERS_ALIAS,
        };
        let key = field.name;
        let mut layer = Layer {
            servers_key: None,
            servers: vec![],
        };
        match root.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(servers)) => {
                layer.servers_key = Some(key);
                for (name, entry) in servers {
                    self.add_server(name, entry, path);
                    layer.servers.push(name.clone());
                }
            }
            Some(other) => {
                let message = format!("must be {}, got {}", field.kind.expected(), describe(other));
                report(field.severity, key, message)
            }
        }
        layer
    }

    /// `settings`, key by key, and Pi's `autoEnableCodemode`: a later file wins.
    fn add_settings(
        &mut self,
        path: &Path,
        root: &Map<String, Value>,
        report: &mut impl FnMut(Level, &str, String),
    ) {
        let mut read = Reader::new(root, report);
        match read.get(&key::SETTINGS) {
            None => {}
            Some(Value::Object(settings)) => {
                for (key, value) in settings {
                    self.settings.insert(key.clone(), value.clone());
                    self.setting_files.insert(key.clone(), path.to_path_buf());
                }
            }
            Some(other) => read.wrong(&key::SETTINGS, &describe(other)),
        }
        if let Some(on) = read.flag_set(&key::AUTO_ENABLE_CODEMODE) {
            self.auto_enable_codemode = Some(on);
        }
    }

    fn add_imports(
        &mut self,
        path: &Path,
        root: &Map<String, Value>,
        report: &mut impl FnMut(Level, &str, String),
    ) {
        let mut read = Reader::new(root, report);
        let kinds = match read.get(&key::IMPORTS) {
            None => return,
            Some(Value::Array(kinds)) => kinds,
            Some(other) => return read.wrong(&key::IMPORTS, &describe(other)),
        };
        for kind in kinds {
            let parsed = kind.as_str().and_then(ImportKind::parse);
            match parsed {
                Some(kind) if self.imports.iter().any(|(k, _)| *k == kind) => {}
                Some(kind) => self.imports.push((kind, path.to_path_buf())),
                None => {
                    let names = ImportKind::ALL.map(ImportKind::name);
                    let hint = kind
                        .as_str()
                        .and_then(|k| fields::closest(k, &names))
                        .map(|k| format!("did you mean \"{k}\"? "))
                        .unwrap_or_default();
                    let what = kind
                        .as_str()
                        .map_or_else(|| describe(kind), |k| format!("\"{k}\""));
                    let message = format!(
                        "unknown tool {what}; {hint}expected one of {}; it is skipped",
                        names.map(|n| format!("\"{n}\"")).join(", ")
                    );
                    read.report(Level::Warning, key::IMPORTS.name, message);
                }
            }
        }
    }

    fn add_server(&mut self, name: &str, entry: &Value, path: &Path) {
        let Some(server) = self.servers.iter_mut().find(|s| s.name == name) else {
            self.servers
                .push(MergedServer::new(name, entry.clone(), path));
            return;
        };
        server.files.retain(|f| f != path);
        server.files.push(path.to_path_buf());
        let (Value::Object(base), Some(layer)) = (&mut server.entry, entry.as_object()) else {
            // Not objects: parsing reports it.
            *server = MergedServer::new(name, entry.clone(), path);
            return;
        };
        let url = key::URL.name;
        let url_changed = layer.contains_key(url) && base.get(url) != layer.get(url);
        let mut drop_fields = |fields: &[&str]| {
            for field in fields {
                base.remove(*field);
                server.field_files.remove(*field);
            }
        };
        let of = |transport| fields::names(Place::Server, |k| k.transport == transport);
        if layer.contains_key(key::COMMAND.name) {
            drop_fields(&of(Transport::Http));
        }
        if layer.contains_key(key::URL.name) {
            drop_fields(&of(Transport::Stdio));
        }
        if url_changed {
            drop_fields(&of(Transport::Http));
        }
        for (key, value) in layer {
            base.insert(key.clone(), value.clone());
            server.field_files.insert(key.clone(), path.to_path_buf());
        }
    }

    pub fn defines(&self, name: &str) -> Option<&MergedServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Adds `server`, defined outside our files, unless one of them defines it (by name, or by
    /// Pi's namespace, where `-` and `_` are the same): then it is dropped (returns false), or,
    /// when that entry is an override, put under it.
    pub fn add_from_elsewhere(&mut self, server: MergedServer) -> bool {
        let namespace = |name: &str| name.replace('-', "_");
        let found = self
            .servers
            .iter()
            .position(|s| s.name == server.name)
            .or_else(|| {
                self.servers
                    .iter()
                    .position(|s| namespace(&s.name) == namespace(&server.name))
            });
        let Some(at) = found else {
            self.servers.push(server);
            return true;
        };
        if !self.servers[at].is_override() {
            return false;
        }
        let over = self.servers.remove(at);
        self.servers.insert(at, over.over(server));
        true
    }
}

/// The names of the servers a config file defines.
pub fn server_names(root: &Map<String, Value>) -> Vec<String> {
    root.get("mcpServers")
        .or_else(|| root.get("mcp-servers"))
        .and_then(Value::as_object)
        .map(|servers| servers.keys().cloned().collect())
        .unwrap_or_default()
}
