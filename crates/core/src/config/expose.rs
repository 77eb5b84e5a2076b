//! How the model reaches each tool of a server, as `/mcp` shows it and saves a change to it:
//! behind the `mcp` tool, direct (a Pi tool of its own, declared to the model) or hidden.
//!
//! A change is written with Pi's keys (`exposure`, `toolExposure`) where Pi reads them itself
//! (≥ 0.99) or the server uses them already; else with pi-mcp-adapter's (`directTools`,
//! `excludeTools`), the keys of the files Pi 0.87's users share with it. It goes to the file
//! `/mcp` turns the server on or off in (see `switch`), as fields that win over any other file's:
//! a field is removed only from a server's only file, else written with an explicit value.

use super::edit::{edit_server_at, Change, EditError};
use super::exposure::{self, Exposure};
use super::fields as key;
use super::switch::{target, Targets};
use super::{DirectTools, ServerConfig};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// What the user picks for a tool, or for every tool of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Mcp,
    Direct,
    Hidden,
}

impl Choice {
    pub fn parse(text: &str) -> Option<Choice> {
        match text {
            "mcp" => Some(Choice::Mcp),
            "direct" => Some(Choice::Direct),
            "hidden" => Some(Choice::Hidden),
            _ => None,
        }
    }

    fn exposure(self) -> Option<Exposure> {
        match self {
            Choice::Mcp => None,
            Choice::Direct => Some(Exposure::Direct),
            Choice::Hidden => Some(Exposure::Hidden),
        }
    }
}

/// Which keys a server's exposure is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// Pi's `exposure` and `toolExposure`.
    Pi,
    /// pi-mcp-adapter's `directTools` and `excludeTools`.
    Adapter,
}

impl Keys {
    /// Pi's keys where Pi reads them (`pi_reads`: Pi ≥ 0.99) or the server has them already
    /// (with them, `directTools` is ignored).
    pub fn of(server: &ServerConfig, pi_reads: bool) -> Keys {
        match pi_reads || server.exposure.is_set() {
            true => Keys::Pi,
            false => Keys::Adapter,
        }
    }
}

/// A tool of the server: its MCP name and its prefixed name (`excludeTools` and `directTools`
/// may name either).
#[derive(Clone, Copy, Debug)]
pub struct Tool<'a> {
    pub original: &'a str,
    pub name: &'a str,
}

/// How the config reaches a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Reached {
    /// `None`: behind the `mcp` tool only.
    pub exposure: Option<Exposure>,
    /// Why `/mcp` cannot change it: `includeTools`, or an `excludeTools` pattern, leaves it out.
    pub locked: Option<String>,
}

impl ServerConfig {
    /// Which tools its config makes direct: `directTools`, else `settings.directTools`; none
    /// when it has `exposure`/`toolExposure`, which decide instead.
    pub fn direct_selection(&self, settings_direct: bool) -> DirectTools {
        match (self.exposure.is_set(), &self.direct_tools) {
            (true, _) => DirectTools::None,
            (false, Some(own)) => own.clone(),
            (false, None) if settings_direct => DirectTools::All,
            (false, None) => DirectTools::None,
        }
    }

    /// How the config reaches `tool`: the rules the catalog, the direct tools and Pi's
    /// exposure-registered tools apply (hidden when left out, then `exposure`/`toolExposure`,
    /// else `directTools`).
    pub fn reached(&self, settings_direct: bool, tool: Tool) -> Reached {
        if !self.lets_through(tool.original, tool.name) {
            let patterns: Vec<&str> = self
                .excluded_by(tool.original, tool.name)
                .into_iter()
                .filter(|g| *g != tool.original && *g != tool.name)
                .collect();
            let locked = match (patterns.first(), self.include_tools.is_some()) {
                (Some(glob), _) => format!("left out by excludeTools \"{glob}\""),
                (None, true) if self.excluded_by(tool.original, tool.name).is_empty() => {
                    "left out by includeTools".to_string()
                }
                (None, _) => {
                    return Reached {
                        exposure: Some(Exposure::Hidden),
                        locked: None,
                    }
                }
            };
            return Reached {
                exposure: Some(Exposure::Hidden),
                locked: Some(locked),
            };
        }
        let exposure = match self.exposure.is_set() {
            true => self.exposure.of(tool.original),
            false => self
                .direct_selection(settings_direct)
                .selects(tool.original, tool.name)
                .then_some(Exposure::Direct),
        };
        Reached {
            exposure,
            locked: None,
        }
    }
}

impl DirectTools {
    /// Whether it selects the tool (a list may name its MCP or its prefixed name).
    pub fn selects(&self, original: &str, name: &str) -> bool {
        match self {
            DirectTools::All => true,
            DirectTools::None => false,
            DirectTools::Only(names) => names.iter().any(|n| n == original || n == name),
        }
    }
}

/// What to change: every tool of the server (its known tools, and in Pi's keys those to come),
/// then single tools by MCP name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Wanted {
    pub server: Option<Choice>,
    pub tools: Vec<(String, Choice)>,
}

/// The settings a server's exposure depends on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Defaults {
    /// `settings.directTools`.
    pub direct_tools: bool,
    /// `settings.exposure`.
    pub exposure: Option<Exposure>,
}

/// A change planned: where, with which keys, the edits (paths below the server's entry), and
/// the server as configured once they are made.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub file: PathBuf,
    pub keys: Keys,
    pub edits: Vec<(Vec<String>, Change)>,
    pub after: ServerConfig,
}

/// Plans `wanted` for `server`, whose known tools are `tools`; `pi_reads`: Pi reads `exposure`
/// itself (≥ 0.99). Locked tools keep their state.
pub fn plan(
    server: &ServerConfig,
    defaults: Defaults,
    tools: &[Tool],
    wanted: &Wanted,
    pi_reads: bool,
    targets: &Targets,
) -> Plan {
    let file = target(server, targets);
    let keys = Keys::of(server, pi_reads);
    if wanted.server.is_none() && wanted.tools.is_empty() {
        return Plan {
            file,
            keys,
            edits: vec![],
            after: server.clone(),
        };
    }
    let mut writer = Writer {
        server,
        alone: server.files == [file.clone()],
        target: file.clone(),
        edits: vec![],
        after: server.clone(),
    };
    let now: Vec<Reached> = tools
        .iter()
        .map(|t| server.reached(defaults.direct_tools, *t))
        .collect();
    let desired = desired(tools, &now, wanted);
    match keys {
        Keys::Pi => writer.pi_keys(defaults, tools, &now, &desired, wanted),
        Keys::Adapter => writer.direct_tools(defaults, tools, &desired, wanted),
    }
    let exclude = exclude_tools(server, tools, &desired, wanted, keys);
    writer.exclude_tools(exclude);
    writer.after.exposure = exposure::parse(
        writer.after.entry.get(key::EXPOSURE.name),
        writer.after.entry.get(key::TOOL_EXPOSURE.name),
        defaults.exposure,
        &mut vec![],
    );
    Plan {
        file,
        keys,
        edits: writer.edits,
        after: writer.after,
    }
}

/// Each tool's exposure after the change: what is asked for it (the last word on it, else the
/// server's), unless the session locks it.
fn desired(tools: &[Tool], now: &[Reached], wanted: &Wanted) -> Vec<Option<Exposure>> {
    tools
        .iter()
        .zip(now)
        .map(|(tool, reached)| match reached.locked {
            Some(_) => reached.exposure,
            None => wanted
                .tools
                .iter()
                .rev()
                .find(|(name, _)| name == tool.original)
                .map(|(_, c)| c.exposure())
                .or(wanted.server.map(|c| c.exposure()))
                .unwrap_or(reached.exposure),
        })
        .collect()
}

/// Makes the plan's edits to its file (one write); returns whether the file changed.
pub fn apply(server: &str, plan: &Plan) -> Result<bool, EditError> {
    let edits: Vec<(Vec<&str>, &Change)> = plan
        .edits
        .iter()
        .map(|(path, change)| {
            let mut full = vec![server];
            full.extend(path.iter().map(String::as_str));
            (full, change)
        })
        .collect();
    edit_server_at(&plan.file, &edits)
}

/// The server's `excludeTools` once the tools are as `desired`: without the entries naming a
/// tool not hidden any more; with pi-mcp-adapter's keys, with the tools hidden now (all of them,
/// `*`, when none is known).
fn exclude_tools(
    server: &ServerConfig,
    tools: &[Tool],
    desired: &[Option<Exposure>],
    wanted: &Wanted,
    keys: Keys,
) -> Vec<String> {
    let hidden = |d: &Option<Exposure>| *d == Some(Exposure::Hidden);
    let shown: Vec<&Tool> = tools
        .iter()
        .zip(desired)
        .filter(|(_, d)| !hidden(d))
        .map(|(t, _)| t)
        .collect();
    let mut list: Vec<String> = server
        .exclude_tools
        .iter()
        .flatten()
        .filter(|g| !shown.iter().any(|t| *g == t.original || *g == t.name))
        .cloned()
        .collect();
    if keys == Keys::Pi {
        return list;
    }
    for (tool, d) in tools.iter().zip(desired) {
        let listed = list.iter().any(|g| g == tool.original || g == tool.name);
        if hidden(d) && server.lets_through(tool.original, tool.name) && !listed {
            list.push(tool.original.to_string());
        }
    }
    if tools.is_empty() && wanted.server == Some(Choice::Hidden) && !list.iter().any(|g| g == "*") {
        list.push("*".into());
    }
    list
}

/// Collects the edits, and keeps `after` (its entry and typed fields) as they will be.
struct Writer<'a> {
    server: &'a ServerConfig,
    /// The target is the server's only file: a removed field leaves no other value showing.
    alone: bool,
    /// The file written.
    target: PathBuf,
    edits: Vec<(Vec<String>, Change)>,
    after: ServerConfig,
}

impl Writer<'_> {
    /// Whether the target file sets `field`.
    fn in_target(&self, field: &str) -> bool {
        self.server.field_files.get(field) == Some(&self.target)
    }

    /// Sets `field` to `value`, or with `None` removes it where that leaves it unset (else
    /// `explicit`, the value meaning "not set").
    fn set(&mut self, field: &str, value: Option<Value>, explicit: Value) {
        let value = match value {
            Some(v) => Some(v),
            None if self.alone || self.server.entry.get(field).is_none_or(Value::is_null) => None,
            None => Some(explicit),
        };
        if self.after.entry.get(field) == value.as_ref() {
            return;
        }
        let change = match &value {
            Some(v) => Change::Set(v.clone()),
            None => Change::Remove,
        };
        self.edits.push((vec![field.to_string()], change));
        if let Value::Object(entry) = &mut self.after.entry {
            match value {
                Some(v) => entry.insert(field.to_string(), v),
                None => entry.remove(field),
            };
        }
    }

    /// `exposure` and `toolExposure` saying `desired` for each tool: an exact entry where the
    /// server's `exposure` or a pattern would say otherwise. Behind `mcp` only has no value of
    /// its own there: where another value would apply, Pi's default `codemode` is written.
    fn pi_keys(
        &mut self,
        defaults: Defaults,
        tools: &[Tool],
        now: &[Reached],
        desired: &[Option<Exposure>],
        wanted: &Wanted,
    ) {
        let server = self.server;
        let own = server
            .entry
            .get(key::EXPOSURE.name)
            .filter(|v| !v.is_null());
        let mut level = match wanted.server {
            Some(choice) => choice.exposure(),
            None => server.exposure.server,
        };
        let current: Map<String, Value> = server
            .entry
            .get(key::TOOL_EXPOSURE.name)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let patterns = patterns(&current);
        // From `directTools` (no exposure keys yet), every tool's state is written out.
        let converting = !server.exposure.is_set();
        let mut exact = current.clone();
        for ((tool, want), reached) in tools.iter().zip(desired).zip(now) {
            let changed = wanted.server.is_some()
                || wanted.tools.iter().any(|(name, _)| name == tool.original);
            if !(changed || converting) || reached.locked.is_some() {
                continue;
            }
            let base = patterns
                .iter()
                .find(|(p, _)| super::glob::matches(p, tool.original))
                .map_or(level, |(_, e)| Some(*e));
            match written(*want, base) {
                Some(e) => exact.insert(tool.original.to_string(), json!(e.name())),
                None => exact.remove(tool.original),
            };
        }
        // Without exposure keys of its own, `settings.exposure` would apply again.
        if level.is_none() && defaults.exposure.is_some() && exact.is_empty() {
            level = Some(Exposure::Codemode);
        }
        let level_value = match level {
            Some(e) if own.is_none() && exact.is_empty() && defaults.exposure == Some(e) => None,
            Some(e) => Some(json!(e.name())),
            None => None,
        };
        self.set(
            key::EXPOSURE.name,
            level_value,
            json!(Exposure::Codemode.name()),
        );
        self.tool_exposure(current, exact);
        self.settle_direct_tools(defaults);
    }

    /// `directTools` means nothing beside exposure keys (and a warning says so), and would
    /// apply again without them.
    fn settle_direct_tools(&mut self, defaults: Defaults) {
        let entry = &self.after.entry;
        let has_keys = entry.get(key::EXPOSURE.name).is_some_and(|v| !v.is_null())
            || entry
                .get(key::TOOL_EXPOSURE.name)
                .and_then(Value::as_object)
                .is_some_and(|o| !o.is_empty());
        let direct = key::DIRECT_TOOLS.name;
        if has_keys && self.in_target(direct) {
            self.edits.push((vec![direct.into()], Change::Remove));
            if let Value::Object(entry) = &mut self.after.entry {
                entry.remove(direct);
            }
            self.after.direct_tools = None;
        } else if !has_keys
            && self.server.direct_selection(defaults.direct_tools) != DirectTools::None
        {
            self.no_direct_tools(defaults);
        }
    }

    /// `directTools` selecting none: removed, or `false` where another value would apply.
    fn no_direct_tools(&mut self, defaults: Defaults) {
        let value = defaults.direct_tools.then(|| json!(false));
        self.set("directTools", value, json!(false));
        self.after.direct_tools = self
            .after
            .entry
            .get("directTools")
            .map(|_| DirectTools::None);
    }

    /// `toolExposure` from `current` to `exact`: key by key where the target file sets it
    /// (comments inside kept), else whole.
    fn tool_exposure(&mut self, current: Map<String, Value>, exact: Map<String, Value>) {
        if current == exact {
            return;
        }
        if !exact.is_empty() && self.in_target("toolExposure") {
            for (key, value) in &exact {
                if current.get(key) != Some(value) {
                    self.edits.push((
                        vec!["toolExposure".into(), key.clone()],
                        Change::Set(value.clone()),
                    ));
                }
            }
            for key in current.keys().filter(|k| !exact.contains_key(*k)) {
                self.edits
                    .push((vec!["toolExposure".into(), key.clone()], Change::Remove));
            }
            if let Value::Object(entry) = &mut self.after.entry {
                entry.insert("toolExposure".into(), Value::Object(exact));
            }
            return;
        }
        let value = (!exact.is_empty()).then(|| Value::Object(exact));
        self.set("toolExposure", value, json!({}));
    }

    /// `directTools` saying `desired`: `true` when every tool not hidden is direct, else the
    /// list (names of tools not known now kept).
    fn direct_tools(
        &mut self,
        defaults: Defaults,
        tools: &[Tool],
        desired: &[Option<Exposure>],
        wanted: &Wanted,
    ) {
        let now = self.server.direct_selection(defaults.direct_tools);
        let direct: Vec<&str> = tools
            .iter()
            .zip(desired)
            .filter(|(_, d)| **d == Some(Exposure::Direct))
            .map(|(t, _)| t.original)
            .collect();
        let visible = desired
            .iter()
            .filter(|d| **d != Some(Exposure::Hidden))
            .count();
        let new = if tools.is_empty() {
            match wanted.server {
                Some(Choice::Direct) => DirectTools::All,
                Some(Choice::Mcp) => DirectTools::None,
                _ => now.clone(),
            }
        } else if !direct.is_empty() && direct.len() == visible {
            DirectTools::All
        } else if direct.is_empty() {
            DirectTools::None
        } else {
            let unknown = match &now {
                DirectTools::Only(names) => names
                    .iter()
                    .filter(|n| !tools.iter().any(|t| *n == t.original || *n == t.name))
                    .map(String::as_str)
                    .collect(),
                _ => vec![],
            };
            DirectTools::Only(
                unknown
                    .into_iter()
                    .chain(direct)
                    .map(String::from)
                    .collect(),
            )
        };
        if new == now {
            return;
        }
        let value = match &new {
            DirectTools::All => json!(true),
            DirectTools::Only(names) => json!(names),
            DirectTools::None => return self.no_direct_tools(defaults),
        };
        self.set("directTools", Some(value), json!(false));
        self.after.direct_tools = Some(new);
    }

    /// `excludeTools` as `list`.
    fn exclude_tools(&mut self, list: Vec<String>) {
        if list == self.server.exclude_tools.clone().unwrap_or_default() {
            return;
        }
        let value = (!list.is_empty()).then(|| json!(list));
        self.set("excludeTools", value, json!([]));
        self.after.exclude_tools = (!list.is_empty() || !self.alone).then_some(list);
    }
}
/// The exact `toolExposure` value that makes a tool's exposure `want` where `base` (the
/// server's, or a pattern's) applies otherwise; `None`: no entry. Behind `mcp` only has no
/// value of its own: Pi's default `codemode` is written.
fn written(want: Option<Exposure>, base: Option<Exposure>) -> Option<Exposure> {
    match (want, base) {
        (w, b) if w == b => None,
        (None, Some(Exposure::Codemode)) => None,
        (None, Some(_)) => Some(Exposure::Codemode),
        (w, _) => w,
    }
}

/// `toolExposure`'s patterns, as the config reads them: a pattern with a bad value is ignored.
fn patterns(tool_exposure: &Map<String, Value>) -> Vec<(&String, Exposure)> {
    tool_exposure
        .iter()
        .filter(|(k, _)| super::glob::is_pattern(k))
        .filter_map(|(k, v)| Some((k, Exposure::parse(v).ok()?)))
        .collect()
}
