//! Changing one field of one server in a config file, keeping everything else as the user wrote
//! it: comments, order, indentation, the other servers and keys. `/mcp` turns servers on and off
//! with it: the change is spliced into the text, never written back from a parsed value.

use super::jsonc;
use super::locate::{members, Members};
use pi_mcp_connection::atomic_file;
use serde_json::Value;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What to do with the field.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    Set(Value),
    Remove,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EditError {
    pub file: PathBuf,
    pub why: String,
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot change {}: {}", self.file.display(), self.why)
    }
}

impl std::error::Error for EditError {}

/// Applies `change` to `field` of `server` in `file` (under `mcpServers`, or `mcp-servers` where
/// the file uses that); a missing file, servers object or server entry is created for `Set`.
/// Returns whether the file changed. The file keeps its permissions.
pub fn edit_server(
    file: &Path,
    server: &str,
    field: &str,
    change: &Change,
) -> Result<bool, EditError> {
    edit_server_at(file, &[(vec![server, field], change)])
}

/// Makes each change at its path below the servers' key (`[server, field, …]`), in order, as
/// [`edit_server`] does one; the file is written once, when it changed. An object set whole is
/// laid out over lines.
pub fn edit_server_at(file: &Path, edits: &[(Vec<&str>, &Change)]) -> Result<bool, EditError> {
    let error = |why: String| EditError {
        file: file.to_path_buf(),
        why,
    };
    let original = read(file).map_err(error)?;
    let mut text = original.clone();
    for (path, change) in edits {
        let layout = match change {
            Change::Set(Value::Object(_)) => Layout::Spread,
            _ => Layout::Inline,
        };
        if let Some(edited) = edit_path(&text, path, change, layout).map_err(error)? {
            text = edited;
        }
    }
    if text == original {
        return Ok(false);
    }
    write(file, text.as_bytes()).map_err(error)?;
    Ok(true)
}

/// Adds `server` with `entry` to `file` (as the last server, laid out over lines as Pi writes
/// it), keeping the rest of the file; the file is created when missing. A file that defines the
/// server already is left as it is (an error).
pub fn add_server(file: &Path, server: &str, entry: &Value) -> Result<(), EditError> {
    let error = |why: String| EditError {
        file: file.to_path_buf(),
        why,
    };
    let text = read(file).map_err(error)?;
    let edited = with_server(&text, server, entry).map_err(error)?;
    write(file, edited.as_bytes()).map_err(error)
}

/// `text` with `server` added as [`add_server`] adds it.
pub fn with_server(text: &str, server: &str, entry: &Value) -> Result<String, String> {
    if defines(text, server) {
        return Err(format!("it defines server \"{server}\" already"));
    }
    let change = Change::Set(entry.clone());
    Ok(edit_path(text, &[server], &change, Layout::Spread)?.unwrap_or_else(|| text.to_string()))
}

/// Whether the servers of a config text include `server`.
pub fn defines(text: &str, server: &str) -> bool {
    let stripped = jsonc::strip(text);
    serde_json::from_str::<Value>(&stripped)
        .is_ok_and(|root| root[servers_key(&stripped)].get(server).is_some())
}

/// A config file's text; a missing file is empty.
pub fn read(file: &Path) -> Result<String, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes `bytes` whole (a temp file renamed), creating the directory, keeping the file's
/// permissions.
pub fn write(file: &Path, bytes: &[u8]) -> Result<(), String> {
    let permissions = std::fs::metadata(file).ok().map(|m| m.permissions());
    if let Some(dir) = file.parent() {
        atomic_file::create_private_dir(dir).map_err(|e| e.to_string())?;
    }
    atomic_file::write(file, bytes).map_err(|e| e.to_string())?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(file, permissions).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The key a file keeps its servers under: `mcp-servers` where it uses that, else `mcpServers`.
fn servers_key(stripped: &str) -> &'static str {
    match stripped.contains("\"mcp-servers\"") && !stripped.contains("\"mcpServers\"") {
        true => "mcp-servers",
        false => "mcpServers",
    }
}

/// How a new value is written.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// On one line: `"enabled": false`.
    Inline,
    /// An object or array over lines, two spaces a level, as Pi and `JSON.stringify` write it.
    Spread,
}

/// `text` with the change made to the value at `path` below the servers' key; `None` when it
/// would not change.
fn edit_path(
    text: &str,
    below: &[&str],
    change: &Change,
    layout: Layout,
) -> Result<Option<String>, String> {
    let mut path = vec![servers_key(&jsonc::strip(text))];
    path.extend(below);
    edit_at(text, &path, change, layout)
}

/// `text` whose root `imports` lists `kinds` too (after the ones it lists); `None` when it lists
/// them all already.
pub fn add_imports(text: &str, kinds: &[&str]) -> Result<Option<String>, String> {
    let stripped = jsonc::strip(text);
    let root: Value = match jsonc::is_blank(text) {
        true => Value::Null,
        false => {
            serde_json::from_str(&stripped).map_err(|e| format!("it is not valid JSON ({e})"))?
        }
    };
    let mut listed = match root.get("imports") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err("its `imports` is not a list".into()),
    };
    let before = listed.len();
    for kind in kinds {
        if !listed.iter().any(|k| k == kind) {
            listed.push(Value::String(kind.to_string()));
        }
    }
    if listed.len() == before {
        return Ok(None);
    }
    edit_at(
        text,
        &["imports"],
        &Change::Set(Value::Array(listed)),
        Layout::Inline,
    )
}

/// `text` with the change made to the value at `path` from the root; `None` when it would not
/// change.
fn edit_at(
    text: &str,
    path: &[&str],
    change: &Change,
    layout: Layout,
) -> Result<Option<String>, String> {
    let stripped = jsonc::strip(text);
    if jsonc::is_blank(text) {
        return Ok(match change {
            Change::Set(value) => Some(format!("{}\n", block(path, value, "", layout))),
            Change::Remove => None,
        });
    }
    match serde_json::from_str::<Value>(&stripped) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err("it does not hold a JSON object".into()),
        Err(e) => return Err(format!("it is not valid JSON ({e})")),
    }
    let start = stripped.find('{').unwrap_or_default();
    let mut object = members(&stripped, start).ok_or("it does not hold a JSON object")?;
    for (depth, key) in path.iter().enumerate() {
        let Some(member) = object.get(key) else {
            return Ok(match change {
                Change::Set(value) => Some(insert(
                    text,
                    &stripped,
                    &object,
                    &path[depth..],
                    value,
                    layout,
                )),
                Change::Remove => None,
            });
        };
        if depth + 1 == path.len() {
            return Ok(replace(
                text,
                &stripped,
                &object,
                member.value.clone(),
                member.key_start,
                change,
            ));
        }
        object = members(&stripped, member.value.start)
            .ok_or_else(|| format!("`{}` is not an object", path[..=depth].join(".")))?;
    }
    Ok(None)
}

/// Sets or removes the member whose value spans `value`.
fn replace(
    text: &str,
    stripped: &str,
    object: &Members,
    value: Range<usize>,
    key_start: usize,
    change: &Change,
) -> Option<String> {
    let mut out = text.to_string();
    match change {
        Change::Set(new) => {
            let current: Option<Value> = serde_json::from_str(&stripped[value.clone()]).ok();
            if current.as_ref() == Some(new) {
                return None;
            }
            out.replace_range(value, &new.to_string());
        }
        Change::Remove => {
            let before = stripped[..key_start].trim_end();
            if before.ends_with(',') {
                let comma = before.len() - 1;
                if text[comma..key_start] == stripped[comma..key_start] {
                    // `…, "key": value`: from the comma before it.
                    out.replace_range(comma..value.end, "");
                } else {
                    // A comment between the comma and the member stays; the member goes with
                    // its line where it has one of its own.
                    let (start, end) = own_line(stripped, key_start, value.end);
                    out.replace_range(start..end, "");
                    out.replace_range(comma..comma + 1, "");
                }
            } else {
                // The first member: up to the next one, or to the closing brace.
                let rest = &stripped[value.end..object.close];
                let end = match rest.trim_start().strip_prefix(',') {
                    Some(after) => object.close - after.trim_start().len(),
                    None => value.end,
                };
                let start = if end == value.end {
                    before.len()
                } else {
                    key_start
                };
                out.replace_range(start..end, "");
            }
        }
    }
    Some(out)
}

/// The whole line of `start..end` (its newline too) when nothing else is on it, else the range.
fn own_line(stripped: &str, start: usize, end: usize) -> (usize, usize) {
    let line_start = stripped[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = stripped[end..].find('\n').map(|i| end + i);
    match line_end {
        Some(line_end)
            if stripped[line_start..start].trim().is_empty()
                && stripped[end..line_end].trim().is_empty() =>
        {
            (line_start, line_end + 1)
        }
        _ => (start, end),
    }
}

/// Inserts `"path[0]": …` (nested down to `value`) as the last member of `object`, indented like
/// the members it has (or two spaces more than the object's line).
fn insert(
    text: &str,
    stripped: &str,
    object: &Members,
    path: &[&str],
    value: &Value,
    layout: Layout,
) -> String {
    let outer = line_indent(stripped, object.open);
    let indent = object
        .items
        .first()
        .map(|m| line_indent(stripped, m.key_start))
        .filter(|indent| indent.len() > outer.len())
        .unwrap_or_else(|| format!("{outer}  "));
    let member = format!("{indent}{}", member(path, value, &indent, layout));
    let inner = stripped[object.open + 1..object.close].trim_end();
    let mut out = text.to_string();
    if inner.trim().is_empty() {
        out.replace_range(
            object.open + 1..object.close,
            &format!("\n{member}\n{outer}"),
        );
    } else {
        let end = object.open + 1 + inner.len();
        let comma = if inner.ends_with(',') { "" } else { "," };
        out.insert_str(end, &format!("{comma}\n{member}"));
    }
    out
}

/// `"a": {…"z": value…}` for `path` [a, …, z], each level on its own lines below `indent`.
fn member(path: &[&str], value: &Value, indent: &str, layout: Layout) -> String {
    match path {
        [] => written(value, indent, layout),
        [key] => format!("{}: {}", quote(key), written(value, indent, layout)),
        [key, rest @ ..] => format!("{}: {}", quote(key), block(rest, value, indent, layout)),
    }
}

/// `{ "a": … }` spread over lines, its closing brace at `indent`.
fn block(path: &[&str], value: &Value, indent: &str, layout: Layout) -> String {
    let inner = format!("{indent}  ");
    format!(
        "{{\n{inner}{}\n{indent}}}",
        member(path, value, &inner, layout)
    )
}

/// `value` as JSON whose lines after the first are indented below `indent`.
fn written(value: &Value, indent: &str, layout: Layout) -> String {
    match layout {
        Layout::Inline => value.to_string(),
        Layout::Spread => serde_json::to_string_pretty(value)
            .unwrap_or_else(|_| value.to_string())
            .replace('\n', &format!("\n{indent}")),
    }
}

fn quote(key: &str) -> String {
    Value::String(key.to_string()).to_string()
}

fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `text` with the change made; `None` when it would not change.
    fn edit_text(
        text: &str,
        server: &str,
        field: &str,
        change: &Change,
    ) -> Result<Option<String>, String> {
        edit_path(text, &[server, field], change, Layout::Inline)
    }

    fn edit(text: &str, server: &str, field: &str, change: Change) -> String {
        let out = edit_text(text, server, field, &change)
            .unwrap()
            .unwrap_or_else(|| text.to_string());
        let parsed: Value =
            serde_json::from_str(&jsonc::strip(&out)).unwrap_or_else(|e| panic!("{e}:\n{out}"));
        assert!(parsed.is_object());
        out
    }

    const FILE: &str = r#"{
  // my servers
  "mcpServers": {
    "fs": {
      "command": "npx", // the filesystem server
      "args": ["-y", "fs"]
    },
    "web": { "url": "https://x/mcp", "enabled": true }
  },
  "settings": {"toolPrefix": "server"} /* keep */
}
"#;

    #[test]
    fn sets_a_field_keeping_comments_and_layout() {
        let out = edit(FILE, "fs", "enabled", Change::Set(json!(false)));
        assert_eq!(
            out,
            FILE.replace(
                "\"args\": [\"-y\", \"fs\"]\n",
                "\"args\": [\"-y\", \"fs\"],\n      \"enabled\": false\n"
            )
        );
        let out = edit(FILE, "web", "enabled", Change::Set(json!(false)));
        assert_eq!(
            out,
            FILE.replace("\"enabled\": true }", "\"enabled\": false }")
        );
        assert_eq!(
            edit_text(FILE, "web", "enabled", &Change::Set(json!(true))),
            Ok(None)
        );
    }

    #[test]
    fn removes_a_field_with_its_comma() {
        let out = edit(FILE, "web", "enabled", Change::Remove);
        assert_eq!(out, FILE.replace(", \"enabled\": true }", " }"));
        let first = r#"{"mcpServers": {"a": {"disabled": true, "command": "x"}}}"#;
        let out = edit(first, "a", "disabled", Change::Remove);
        assert_eq!(out, r#"{"mcpServers": {"a": {"command": "x"}}}"#);
        let only = r#"{"mcpServers": {"a": { "disabled": true }}}"#;
        assert_eq!(
            edit(only, "a", "disabled", Change::Remove),
            r#"{"mcpServers": {"a": { }}}"#
        );
        assert_eq!(edit_text(FILE, "fs", "enabled", &Change::Remove), Ok(None));
        // A comment after the comma stays; the member's own line goes.
        let commented = "{\"mcpServers\": {\"a\": {\n  \"x\": 1, // one\n  \"y\": 2\n}}}";
        assert_eq!(
            edit(commented, "a", "y", Change::Remove),
            "{\"mcpServers\": {\"a\": {\n  \"x\": 1 // one\n}}}"
        );
    }

    #[test]
    fn adds_an_override_entry_or_the_whole_file() {
        let out = edit(FILE, "cursor-server", "enabled", Change::Set(json!(false)));
        assert!(
            out.contains("\"web\": { \"url\": \"https://x/mcp\", \"enabled\": true },\n    \"cursor-server\": {\n      \"enabled\": false\n    }\n  },"),
            "{out}"
        );
        assert!(out.contains("// my servers") && out.contains("/* keep */"));
        let out = edit("", "s", "enabled", Change::Set(json!(false)));
        assert_eq!(
            out,
            "{\n  \"mcpServers\": {\n    \"s\": {\n      \"enabled\": false\n    }\n  }\n}\n"
        );
        let out = edit(
            "{\"settings\": {}}",
            "s",
            "exposure",
            Change::Set(json!("direct")),
        );
        assert_eq!(out, "{\"settings\": {},\n  \"mcpServers\": {\n    \"s\": {\n      \"exposure\": \"direct\"\n    }\n  }}");
        let out = edit("{ }", "s", "enabled", Change::Set(json!(false)));
        assert!(out.starts_with("{\n  \"mcpServers\": {"), "{out}");
    }

    #[test]
    fn adds_a_server_spread_over_lines_as_pi_writes_it() {
        let entry = json!({"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}});
        let out = edit_path(FILE, &["new"], &Change::Set(entry.clone()), Layout::Spread)
            .unwrap()
            .unwrap();
        assert!(
            out.contains("\"web\": { \"url\": \"https://x/mcp\", \"enabled\": true },\n    \"new\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"fs\"\n      ],\n      \"env\": {\n        \"A\": \"1\"\n      }\n    }\n  },"),
            "{out}"
        );
        assert!(out.contains("// my servers") && out.contains("/* keep */"));
        // An empty file becomes what `pi mcp add` writes into a new one.
        let fresh = edit_path("", &["fs"], &Change::Set(entry), Layout::Spread)
            .unwrap()
            .unwrap();
        assert_eq!(
            fresh,
            "{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"fs\"\n      ],\n      \"env\": {\n        \"A\": \"1\"\n      }\n    }\n  }\n}\n"
        );
        assert!(defines(FILE, "web") && !defines(FILE, "new") && !defines("", "web"));
    }

    #[test]
    fn refuses_what_it_cannot_edit_safely() {
        assert!(edit_text("[1]", "s", "enabled", &Change::Set(json!(false))).is_err());
        assert!(edit_text("{\"mcpServers\": [", "s", "enabled", &Change::Remove).is_err());
        let err = edit_text(
            "{\"mcpServers\": {\"s\": \"npx\"}}",
            "s",
            "enabled",
            &Change::Set(json!(false)),
        );
        assert_eq!(err, Err("`mcpServers.s` is not an object".into()));
    }

    #[test]
    fn writes_the_file_keeping_its_permissions() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mcp.json");
        std::fs::write(&file, FILE).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        assert_eq!(
            edit_server(&file, "fs", "enabled", &Change::Set(json!(false))),
            Ok(true)
        );
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .contains("\"enabled\": false"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644);
        }
        let created = dir.join("new/mcp.json");
        assert_eq!(
            edit_server(&created, "s", "enabled", &Change::Set(json!(false))),
            Ok(true)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
