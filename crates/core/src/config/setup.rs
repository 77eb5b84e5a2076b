//! Guided setup: the configs a user already has in other tools (and what each would add), a
//! short list of well-known servers, and the change to the user's (or the project's) Pi config
//! that takes what was chosen, with a preview of it. Nothing here writes: `setup` in the adapter
//! writes the text made here once the user confirmed it.

use super::diagnostic::Diagnostic;
use super::imports::{self, ImportKind};
use super::{edit, Config, LoadOptions};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// What another tool's config would bring.
#[derive(Clone, Debug)]
pub struct Found {
    pub kind: ImportKind,
    /// Its files that were read.
    pub files: Vec<PathBuf>,
    /// Its servers in our fields, by name.
    pub servers: Vec<(String, Value)>,
    /// Those no config defines yet: what importing or copying adds.
    pub new: Vec<String>,
    /// A config's `imports` lists the tool already.
    pub imported: bool,
}

/// Every tool whose config holds servers, with what it would add (to the file `by`, in the
/// config `config` loaded with `opts`).
pub fn find(opts: &LoadOptions, config: &Config, by: &Path) -> Vec<Found> {
    let home = super::home(&opts.env);
    let ctx = imports::Context {
        home: &home,
        cwd: &opts.cwd,
        env: &opts.env,
        project_trusted: config.trust.trusted,
        limits: &opts.limits,
    };
    let defined: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    let listed: Vec<ImportKind> = config
        .sources
        .iter()
        .filter_map(|s| match &s.role {
            super::Role::Import { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    let namespace = |n: &str| n.replace('-', "_");
    ImportKind::ALL
        .into_iter()
        .filter_map(|kind| {
            // Problems in another tool's file are its own; doctor shows them once imported.
            let mut ignored: Vec<Diagnostic> = vec![];
            let read = imports::read(kind, by, &ctx, &mut ignored);
            if read.servers.is_empty() {
                return None;
            }
            let files = read.texts.into_iter().map(|(file, _)| file).collect();
            let servers: Vec<(String, Value)> = read
                .servers
                .into_iter()
                .map(|s| (s.name, s.entry))
                .collect();
            let new = servers
                .iter()
                .map(|(name, _)| name)
                .filter(|name| !defined.iter().any(|d| namespace(d) == namespace(name)))
                .cloned()
                .collect();
            Some(Found {
                kind,
                files,
                servers,
                new,
                imported: listed.contains(&kind),
            })
        })
        .collect()
}

/// A server worth knowing of, with the entry that runs it (`src/config/well_known.json`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct WellKnown {
    /// Its name in the config.
    pub id: String,
    pub title: String,
    /// What it does and what it needs, in a line.
    pub about: String,
    pub entry: Map<String, Value>,
}

/// The well-known servers, in the order they are offered.
pub fn well_known() -> Vec<WellKnown> {
    serde_json::from_str(include_str!("well_known.json")).unwrap_or_default()
}

/// What the user chose.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    /// Tools to list in `imports`.
    pub imports: Vec<ImportKind>,
    /// Servers to copy into the file (from other tools' configs, or well-known ones).
    pub servers: Vec<(String, Value)>,
}

/// `text` (the target file's, empty when it is missing) with `choice` made; an empty file gets
/// an empty `mcpServers` when nothing else is chosen.
pub fn edited(text: &str, choice: &Choice) -> Result<String, String> {
    let mut out = text.to_string();
    if super::jsonc::is_blank(&out) {
        out = format!("{:#}\n", json!({ "mcpServers": {} }));
    }
    let kinds: Vec<&str> = choice.imports.iter().map(|k| k.name()).collect();
    if let Some(with) = edit::add_imports(&out, &kinds)? {
        out = with;
    }
    for (name, entry) in &choice.servers {
        out = edit::with_server(&out, name, entry)?;
    }
    Ok(out)
}

/// The lines `new` adds to and removes from `old`, as `+ ` and `- ` lines with two lines of
/// context around each change (`…` between distant ones).
pub fn preview(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    // Longest common subsequence of lines; config files are small.
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = match a[i] == b[j] {
                true => common[i + 1][j + 1] + 1,
                false => common[i + 1][j].max(common[i][j + 1]),
            };
        }
    }
    let mut lines: Vec<(char, &str)> = vec![];
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push((' ', a[i]));
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || common[i][j + 1] >= common[i + 1][j]) {
            lines.push(('+', b[j]));
            j += 1;
        } else {
            lines.push(('-', a[i]));
            i += 1;
        }
    }
    let near = |at: usize| {
        let from = at.saturating_sub(2);
        lines[from..(at + 3).min(lines.len())]
            .iter()
            .any(|(mark, _)| *mark != ' ')
    };
    let mut out = vec![];
    let mut skipped = false;
    for (at, (mark, line)) in lines.iter().enumerate() {
        if near(at) {
            if skipped && !out.is_empty() {
                out.push("  …".to_string());
            }
            skipped = false;
            out.push(format!("{mark} {line}"));
        } else {
            skipped = true;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_servers_are_short_and_well_formed() {
        let servers = well_known();
        assert!((5..=12).contains(&servers.len()), "a short list");
        for server in &servers {
            assert!(super::super::names::pi_accepts(&server.id), "{}", server.id);
            let transport = ["url", "command"]
                .iter()
                .filter(|k| server.entry.contains_key(**k))
                .count();
            assert_eq!(transport, 1, "{}: a url or a command", server.id);
            assert!(server.entry["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty() && d.len() < 100));
            assert!(!server.about.is_empty() && !server.title.is_empty());
        }
    }

    /// Each package a well-known server runs was looked up in the npm registry once; the record
    /// says what it found (the test makes no network call).
    #[test]
    fn well_known_packages_were_checked_against_the_registry() {
        let record: Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../__test__/fixtures/well-known-registry.json"
        )))
        .unwrap();
        for server in well_known()
            .iter()
            .filter(|s| s.entry.contains_key("command"))
        {
            assert_eq!(server.entry["command"], "npx", "{}", server.id);
            let args = server.entry["args"].as_array().unwrap();
            assert_eq!(args[0], "-y");
            let spec = args[1].as_str().unwrap();
            let checked = &record["packages"][spec];
            assert!(checked.is_object(), "{spec} is not in the registry record");
            assert_eq!(
                Some(checked["version"].as_str().unwrap()),
                spec.rsplit('@').next()
            );
        }
    }

    #[test]
    fn the_change_keeps_the_file_and_shows_only_what_it_adds() {
        let old = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\" }\n  }\n}\n";
        let choice = Choice {
            imports: vec![ImportKind::Cursor, ImportKind::Codex],
            servers: vec![(
                "deepwiki".into(),
                json!({"url": "https://mcp.deepwiki.com/mcp"}),
            )],
        };
        let new = edited(old, &choice).unwrap();
        assert!(
            new.contains("// mine") && new.contains("\"imports\": [\"cursor\",\"codex\"]"),
            "{new}"
        );
        let shown = preview(old, &new);
        assert!(
            shown.contains("+     \"deepwiki\": {")
                && shown.contains("-     \"a\": { \"command\": \"x\" }"),
            "{shown}"
        );
        assert!(!shown.contains("// mine") || shown.contains("  // mine"));
        // A missing file starts as an empty config.
        assert_eq!(
            edited("", &Choice::default()).unwrap(),
            "{\n  \"mcpServers\": {}\n}\n"
        );
        // A taken name is refused.
        let taken = Choice {
            servers: vec![("a".into(), json!({"command": "y"}))],
            ..Choice::default()
        };
        assert!(edited(old, &taken)
            .unwrap_err()
            .contains("defines server \"a\" already"));
    }
}
