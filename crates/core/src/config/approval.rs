//! `approveTools`: which tools ask the user before they run. The user's own files decide (a
//! server's own value over `settings.approveTools`); a project's files, other tools' configs read
//! through `imports` and servers other extensions register may only add to it, never take it
//! away: a repository must not turn off the question its own tools would be asked.

use super::fields as key;
use super::glob::matches;
use super::server::describe;
use super::{Diagnostic, Level};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which uses of a server ask first. Empty: none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Approval {
    /// Every tool (`true`, or a value that could not be read: approval fails closed).
    pub all: bool,
    /// Every tool whose hints do not say it is safe (`"destructive"`).
    pub destructive: bool,
    /// Tools whose name fits one of these (globs: `*` any characters, `?` one).
    pub patterns: Vec<String>,
    /// The files (and keys) that asked for it, for messages.
    pub set_by: Vec<SetBy>,
}

/// Where a part of a server's approval was asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct SetBy {
    pub file: PathBuf,
    /// `approveTools` or `settings.approveTools`.
    pub key: &'static str,
}

impl Approval {
    pub fn is_off(&self) -> bool {
        !self.all && !self.destructive && self.patterns.is_empty()
    }

    /// Whether a call of the tool known by `names` (its MCP name, and the names the model and Pi
    /// call it by) with the MCP `annotations` asks first. Under `"destructive"`, only a tool whose
    /// server says `readOnlyHint: true` or `destructiveHint: false` runs unasked: MCP's defaults
    /// take a tool without hints as one that may destroy.
    pub fn asks(&self, names: &[&str], annotations: Option<&Value>) -> bool {
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        let safe = hint("readOnlyHint") == Some(true) || hint("destructiveHint") == Some(false);
        self.all
            || (self.destructive && !safe)
            || self
                .patterns
                .iter()
                .any(|p| names.iter().any(|name| matches(p, name)))
    }

    /// Whether every use of the server asks (`true`, or a pattern of only `*`): then reading its
    /// resources and getting its prompts ask too.
    pub fn whole_server(&self) -> bool {
        self.all || self.patterns.iter().any(|p| p.chars().all(|c| c == '*'))
    }

    fn add(&mut self, other: &Approval) {
        self.all |= other.all;
        self.destructive |= other.destructive;
        for pattern in &other.patterns {
            if !self.patterns.contains(pattern) {
                self.patterns.push(pattern.clone());
            }
        }
        if !other.is_off() {
            self.set_by.extend(other.set_by.iter().cloned());
        }
    }
}

/// `approveTools` as each config layer says it, collected while the files are read.
#[derive(Default)]
pub struct Votes {
    /// `settings.approveTools` of the user's last file that sets it.
    user_settings: Option<Approval>,
    /// `settings.approveTools` of the other files.
    other_settings: Vec<Approval>,
    /// A server's own `approveTools` in the user's last file that sets it.
    user_servers: HashMap<String, Approval>,
    other_servers: HashMap<String, Vec<Approval>>,
    /// `settings.allowYesInsidePi` of the user's files.
    yes_inside_pi: bool,
}

impl Votes {
    /// The votes of config file `path`; `user`: one of the user's own files (not a project's).
    pub fn file(
        &mut self,
        path: &Path,
        user: bool,
        root: &Map<String, Value>,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let settings = root.get(key::SETTINGS.name).and_then(Value::as_object);
        if let Some(value) = settings.and_then(|s| s.get(key::APPROVE_TOOLS.name)) {
            let vote = vote(value, path, None, user, diagnostics);
            match user {
                true => self.user_settings = Some(vote),
                false => self.other_settings.push(vote),
            }
        }
        if let Some(value) = settings.and_then(|s| s.get(key::ALLOW_YES_INSIDE_PI.name)) {
            self.yes_inside_pi(value, path, user, diagnostics);
        }
        let servers = [key::MCP_SERVERS.name, key::MCP_SERVERS_ALIAS.name]
            .iter()
            .find_map(|key| root.get(*key).and_then(Value::as_object));
        for (name, entry) in servers.into_iter().flatten() {
            match user {
                true => {
                    if let Some(value) = entry.get(key::APPROVE_TOOLS.name) {
                        let vote = vote(value, path, Some(name), true, diagnostics);
                        self.user_servers.insert(name.clone(), vote);
                    }
                }
                false => self.entry(name, path, entry, diagnostics),
            }
        }
    }

    /// The vote of a server entry that is not the user's own (another tool's config, a Pi
    /// extension's registration, a project file).
    pub fn entry(
        &mut self,
        name: &str,
        path: &Path,
        entry: &Value,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        if let Some(value) = entry.get(key::APPROVE_TOOLS.name) {
            let vote = vote(value, path, Some(name), false, diagnostics);
            self.other_servers
                .entry(name.to_string())
                .or_default()
                .push(vote);
        }
    }

    fn yes_inside_pi(
        &mut self,
        value: &Value,
        path: &Path,
        user: bool,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let field = Some("settings.allowYesInsidePi");
        match (value, user) {
            (Value::Bool(on), true) => self.yes_inside_pi = *on,
            (Value::Null, _) => {}
            (_, false) => diagnostics.push(Diagnostic::in_file(
                Level::Warning,
                path,
                field,
                "only your own config files (such as ~/.pi/agent/mcp.json) may let `pi-mcp call --yes` skip approval inside Pi; ignored here".into(),
            )),
            (other, true) => diagnostics.push(Diagnostic::in_file(
                Level::Warning,
                path,
                field,
                format!("must be true or false, got {}; {}", describe(other), key::ALLOW_YES_INSIDE_PI.default),
            )),
        }
    }

    /// Whether `pi-mcp call --yes` may skip approval inside a Pi session.
    pub fn yes_inside_pi_allowed(&self) -> bool {
        self.yes_inside_pi
    }

    /// `server`'s approval: the user's (its own value, else the user's setting) with everything
    /// the other files add.
    pub fn of(&self, server: &str) -> Approval {
        let mut approval = Approval::default();
        let user = self
            .user_servers
            .get(server)
            .or(self.user_settings.as_ref());
        let others = self.other_servers.get(server).into_iter().flatten();
        for vote in user.into_iter().chain(&self.other_settings).chain(others) {
            approval.add(vote);
        }
        approval
    }
}

/// What an `approveTools` value asks for; `None` for a value of another kind.
fn wanted(value: &Value) -> Option<Approval> {
    let approval = match value {
        Value::Null | Value::Bool(false) => Approval::default(),
        Value::Bool(true) => Approval {
            all: true,
            ..Approval::default()
        },
        Value::String(s) if s == "destructive" => Approval {
            destructive: true,
            ..Approval::default()
        },
        Value::Array(items) => Approval {
            patterns: items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()?,
            ..Approval::default()
        },
        _ => return None,
    };
    Some(approval)
}

/// One `approveTools` value of `path` (a server's when `server` is given, else the setting's).
fn vote(
    value: &Value,
    path: &Path,
    server: Option<&str>,
    user: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Approval {
    let key = match server {
        Some(_) => key::APPROVE_TOOLS.name,
        None => "settings.approveTools",
    };
    let mut report = |level: Level, message: String| {
        diagnostics.push(Diagnostic {
            level,
            file: Some(path.to_path_buf()),
            line: None,
            server: server.map(str::to_string),
            field: Some(key.to_string()),
            message,
        });
    };
    let mut approval = wanted(value).unwrap_or_else(|| {
        let whose = match server {
            Some(_) => "every tool of the server asks",
            None => "every tool asks",
        };
        let expected = key::APPROVE_TOOLS.kind.expected();
        let got = describe(value);
        let message = format!("must be {expected}, got {got}; {whose} until it is fixed");
        report(Level::Error, message);
        Approval {
            all: true,
            ..Approval::default()
        }
    });
    if !user && approval.is_off() && !value.is_null() {
        report(
            Level::Note,
            "only adds approval in this file (a project's, or another tool's): it turns off none that your own config files ask for".into(),
        );
    }
    if !approval.is_off() {
        approval.set_by.push(SetBy {
            file: path.to_path_buf(),
            key,
        });
    }
    approval
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn each_value_and_the_tools_it_asks_for() {
        let (mut votes, mut diagnostics) = (Votes::default(), vec![]);
        let file = root(json!({
            "settings": { "approveTools": "destructive" },
            "mcpServers": {
                "all": { "approveTools": true },
                "none": { "approveTools": false },
                "some": { "approveTools": ["delete_*", "github_push"] },
                "bad": { "approveTools": 3 },
                "default": {}
            }
        }));
        votes.file(Path::new("/u/mcp.json"), true, &file, &mut diagnostics);
        let (read_only, destroys, adds) = (
            json!({"readOnlyHint": true}),
            json!({"destructiveHint": true}),
            json!({"destructiveHint": false}),
        );
        assert!(votes.of("all").asks(&["echo"], Some(&read_only)));
        assert!(!votes.of("none").asks(&["delete_x"], None));
        let some = votes.of("some");
        assert!(some.asks(&["delete_entities"], Some(&read_only)));
        assert!(some.asks(&["push", "github_push"], None));
        assert!(!some.asks(&["read_graph"], None));
        assert!(!some.whole_server());
        let default = votes.of("default");
        assert!(default.asks(&["no_hints"], None));
        assert!(default.asks(&["destroys"], Some(&destroys)));
        assert!(!default.asks(&["reads"], Some(&read_only)));
        assert!(!default.asks(&["adds"], Some(&adds)));
        assert!(!default.whole_server());
        assert_eq!(default.set_by[0].key, "settings.approveTools");
        // A value that cannot be read fails closed, with an error naming the file and server.
        assert!(votes.of("bad").whole_server());
        let error = diagnostics
            .iter()
            .find(|d| d.level == Level::Error)
            .unwrap();
        assert_eq!(error.server.as_deref(), Some("bad"));
        assert!(
            error.message.contains("every tool of the server asks"),
            "{}",
            error.message
        );
        assert!(votes.of("all").whole_server());
    }

    #[test]
    fn other_files_only_add() {
        let (mut votes, mut diagnostics) = (Votes::default(), vec![]);
        let user = root(json!({
            "settings": { "approveTools": true, "allowYesInsidePi": true },
            "mcpServers": { "quiet": { "approveTools": false }, "gated": { "approveTools": ["rm"] } }
        }));
        let project = root(json!({
            "settings": { "approveTools": false, "allowYesInsidePi": false },
            "mcpServers": {
                "gated": { "approveTools": false },
                "quiet": { "approveTools": ["push"] },
                "other": { "approveTools": false }
            }
        }));
        votes.file(Path::new("/u/mcp.json"), true, &user, &mut diagnostics);
        votes.file(Path::new("/p/.mcp.json"), false, &project, &mut diagnostics);
        // The user's server value wins over the user's setting; the project cannot remove either.
        assert!(votes.of("gated").asks(&["rm"], None));
        assert!(!votes.of("gated").asks(&["ls"], None));
        assert!(votes.of("other").all);
        // The project adds to a server the user left unasked.
        assert!(votes.of("quiet").asks(&["push"], None));
        assert!(!votes.of("quiet").asks(&["pull"], None));
        assert_eq!(votes.of("quiet").set_by[0].file, Path::new("/p/.mcp.json"));
        // Only the user's own files may let `--yes` through inside Pi.
        assert!(votes.yes_inside_pi_allowed());
        let notes: Vec<_> = diagnostics
            .iter()
            .filter(|d| d.level == Level::Note)
            .collect();
        assert_eq!(notes.len(), 3, "{diagnostics:?}");
        let warning = diagnostics
            .iter()
            .find(|d| d.level == Level::Warning)
            .unwrap();
        assert_eq!(warning.field.as_deref(), Some("settings.allowYesInsidePi"));
        // A registered or imported entry adds the same way.
        votes.entry(
            "quiet",
            Path::new("/ext"),
            &json!({ "approveTools": true }),
            &mut diagnostics,
        );
        assert!(votes.of("quiet").whole_server());
    }
}
