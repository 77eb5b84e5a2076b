//! Starting a server without its package runner. `npx`/`npm exec` and `uvx` servers run the
//! binary the runner would run, found where the runner keeps it: that saves the runner's own
//! processes (npm alone weighs more than most servers), its start-up time, and lets signals
//! reach the server itself. Resolutions are remembered for a day in
//! `<agentDir>/mcp-npx-cache.json`; whatever cannot be resolved runs through the runner as
//! configured (which also fills the runner's cache for next time).

mod npx;
mod uvx;

use crate::bounded_read::{self, FileLimits};
use crate::unix_time::now_ms;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a remembered resolution is trusted.
const MEMO_TTL: Duration = Duration::from_secs(24 * 3600);
const MEMO_VERSION: u64 = 2;

/// Where a resolution looks: the server's working directory and environment.
pub struct Lookup<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
}

impl Lookup<'_> {
    fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A package's binary as found on disk.
pub struct Found {
    pub path: PathBuf,
    pub version: Option<String>,
}

/// The program to run instead of the runner.
#[derive(Clone, Debug, PartialEq)]
pub struct Direct {
    pub command: String,
    pub args: Vec<String>,
    /// `npx` or `uvx`: the runner this replaces.
    pub runner: &'static str,
}

/// A runner command line this module understands.
enum Request {
    Npx(npx::Invocation),
    Uvx(uvx::Invocation),
}

impl Request {
    fn parse(command: &str, args: &[String]) -> Option<Request> {
        npx::parse(command, args)
            .map(Request::Npx)
            .or_else(|| uvx::parse(command, args).map(Request::Uvx))
    }

    fn runner(&self) -> &'static str {
        match self {
            Request::Npx(_) => "npx",
            Request::Uvx(_) => "uvx",
        }
    }

    fn spec(&self) -> String {
        match self {
            Request::Npx(inv) => inv.spec(),
            Request::Uvx(inv) => inv.spec(),
        }
    }

    fn find(&self, lookup: &Lookup) -> Option<Found> {
        match self {
            Request::Npx(inv) => npx::find(inv, lookup),
            Request::Uvx(inv) => uvx::find(inv, lookup),
        }
    }

    /// The arguments for the binary itself.
    fn args(&self) -> &[String] {
        match self {
            Request::Npx(inv) => &inv.args,
            Request::Uvx(inv) => &inv.args,
        }
    }
}

/// The direct command line for `command args`, or `None` to run it as configured.
pub fn resolve(command: &str, args: &[String], lookup: &Lookup, memo: &Path) -> Option<Direct> {
    let request = Request::parse(command, args)?;
    let (runner, spec) = (request.runner(), request.spec());
    let found = remembered(memo, runner, &spec, lookup.cwd).or_else(|| request.find(lookup))?;
    remember(memo, runner, &spec, lookup.cwd, &found);
    let path = found.path.display().to_string();
    let args = request.args().to_vec();
    // npm packages' bins are mostly JavaScript: run them with node, as their shebang would.
    Some(if runner == "npx" && is_javascript(&found.path) {
        Direct {
            command: "node".into(),
            args: [vec![path], args].concat(),
            runner,
        }
    } else {
        Direct {
            command: path,
            args,
            runner,
        }
    })
}

/// A `.js`/`.mjs`/`.cjs` file, or a script whose `#!` line runs node.
fn is_javascript(path: &Path) -> bool {
    let by_extension = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "js" | "mjs" | "cjs"));
    by_extension || first_line(path).is_some_and(|l| l.starts_with("#!") && l.contains("node"))
}

fn first_line(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = bounded_read::open_regular(path)
        .ok()?
        .read(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    text.lines().next().map(str::to_string)
}

fn memo_key(runner: &str, spec: &str, cwd: &Path) -> String {
    json!([runner, spec, cwd.display().to_string()]).to_string()
}

fn read_memo(memo: &Path) -> Map<String, Value> {
    let root: Value = bounded_read::found(memo, FileLimits::default().cache_bytes)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    match (
        root.get("version").and_then(Value::as_u64),
        root.get("entries"),
    ) {
        (Some(MEMO_VERSION), Some(Value::Object(entries))) => entries.clone(),
        _ => Map::new(),
    }
}

/// A resolution made less than a day ago whose binary still exists.
fn remembered(memo: &Path, runner: &str, spec: &str, cwd: &Path) -> Option<Found> {
    let entries = read_memo(memo);
    let entry = entries.get(&memo_key(runner, spec, cwd))?;
    let at = entry.get("resolvedAt").and_then(Value::as_u64)?;
    let path = PathBuf::from(entry.get("resolvedBin").and_then(Value::as_str)?);
    let fresh = (now_ms() as u64).saturating_sub(at) < MEMO_TTL.as_millis() as u64;
    let version = entry
        .get("packageVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    (fresh && path.is_file()).then_some(Found { path, version })
}

/// Adds (or refreshes) a resolution, dropping expired ones; a failure only costs the memo.
fn remember(memo: &Path, runner: &str, spec: &str, cwd: &Path, found: &Found) {
    let now = now_ms() as u64;
    let mut entries = read_memo(memo);
    entries.retain(|_, e| {
        let at = e.get("resolvedAt").and_then(Value::as_u64).unwrap_or(0);
        now.saturating_sub(at) < MEMO_TTL.as_millis() as u64
    });
    let entry = json!({
        "resolvedBin": found.path.display().to_string(),
        "resolvedAt": now,
        "packageVersion": found.version,
        "isJs": is_javascript(&found.path),
    });
    let key = memo_key(runner, spec, cwd);
    if entries.get(&key).and_then(|e| e.get("resolvedBin")) == entry.get("resolvedBin") {
        return; // already known; keep the file untouched
    }
    entries.insert(key, entry);
    let root = json!({ "version": MEMO_VERSION, "entries": entries });
    if let Some(dir) = memo.parent() {
        let _ = crate::atomic_file::create_private_dir(dir);
    }
    let _ = crate::atomic_file::write(memo, root.to_string().as_bytes());
}

#[cfg(test)]
mod tests;
