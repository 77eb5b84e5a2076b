//! `npx <pkg> …` and `npm exec <pkg> …`: the package's binary, found where npx itself would
//! find it (the project's `node_modules`, then npx's cache `<npm cache>/_npx/*`).

use super::{Found, Lookup};
use crate::bounded_read::{self, FileLimits};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What an npx command line asks to run.
#[derive(Debug, PartialEq)]
pub struct Invocation {
    pub name: String,
    pub version: Option<String>,
    /// The binary to run when the command line names it (`-p pkg bin`).
    pub bin: Option<String>,
    pub args: Vec<String>,
}

impl Invocation {
    /// The key under which a resolution is remembered.
    pub fn spec(&self) -> String {
        let bin = self.bin.as_deref().unwrap_or("");
        match &self.version {
            Some(v) => format!("{}@{v} {bin}", self.name),
            None => format!("{} {bin}", self.name),
        }
    }
}

/// Parses `npx [flags] <pkg>[@version] args…`, `npx -p <pkg> <bin> args…` and the same after
/// `npm exec` / `npm x`. `None` for anything it does not fully understand.
pub fn parse(command: &str, args: &[String]) -> Option<Invocation> {
    let rest = match program_name(command).as_str() {
        "npx" => args,
        "npm" if matches!(args.first().map(String::as_str), Some("exec" | "x")) => &args[1..],
        _ => return None,
    };
    let mut packages = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        match arg {
            "-y" | "--yes" | "-q" | "--quiet" | "--prefer-offline" | "--no-install" => {}
            "-p" | "--package" => {
                packages.push(rest.get(i + 1)?.clone());
                i += 1;
            }
            "--" => {
                i += 1;
                break;
            }
            _ if arg.starts_with("--package=") => {
                packages.push(arg["--package=".len()..].to_string())
            }
            _ if arg.starts_with('-') => return None,
            _ => break,
        }
        i += 1;
    }
    let positional = rest.get(i)?.clone();
    let args = rest[i + 1..].to_vec();
    let (spec, bin) = match packages.as_slice() {
        [] => (positional, None),
        [one] => (one.clone(), Some(positional)),
        _ => return None,
    };
    let (name, version) = split_spec(&spec)?;
    Some(Invocation {
        name,
        version,
        bin,
        args,
    })
}

/// `@scope/name@1.2.3` → (`@scope/name`, `1.2.3`). Paths, URLs and git specs are refused.
fn split_spec(spec: &str) -> Option<(String, Option<String>)> {
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", spec),
    };
    let (name, version) = match rest.split_once('@') {
        Some((name, version)) => (format!("{scope}{name}"), Some(version.to_string())),
        None => (spec.to_string(), None),
    };
    let slashes = name.matches('/').count();
    let valid = !name.is_empty()
        && !name.contains(':')
        && !name.starts_with('.')
        && slashes == usize::from(scope == "@")
        && version.as_deref().is_none_or(|v| !v.is_empty());
    valid.then_some((name, version.filter(|v| v != "latest")))
}

fn program_name(command: &str) -> String {
    let base = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    base.trim_end_matches(".cmd")
        .trim_end_matches(".exe")
        .to_string()
}

/// Looks for the package in the project (walking up from `cwd`), then in npx's cache.
pub fn find(inv: &Invocation, lookup: &Lookup) -> Option<Found> {
    let local = lookup
        .cwd
        .ancestors()
        .map(|dir| dir.join("node_modules").join(&inv.name))
        .find_map(|dir| package_bin(&dir, inv));
    local.or_else(|| {
        let mut candidates: Vec<PathBuf> = std::fs::read_dir(npm_cache(lookup)?.join("_npx"))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("node_modules").join(&inv.name))
            .filter(|dir| dir.join("package.json").is_file())
            .collect();
        // Newest install first, as npx would reuse it.
        candidates.sort_by_key(|dir| std::cmp::Reverse(modified(&dir.join("package.json"))));
        candidates.iter().find_map(|dir| package_bin(dir, inv))
    })
}

fn npm_cache(lookup: &Lookup) -> Option<PathBuf> {
    let configured = ["npm_config_cache", "NPM_CONFIG_CACHE"]
        .iter()
        .find_map(|k| lookup.var(k).filter(|v| !v.is_empty()));
    if let Some(dir) = configured {
        return Some(PathBuf::from(dir));
    }
    if cfg!(windows) {
        return lookup
            .var("LOCALAPPDATA")
            .map(|d| Path::new(d).join("npm-cache"));
    }
    lookup.var("HOME").map(|home| Path::new(home).join(".npm"))
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The binary of the package installed in `dir`, if it is the wanted version.
fn package_bin(dir: &Path, inv: &Invocation) -> Option<Found> {
    let limit = FileLimits::default().config_bytes;
    let manifest = bounded_read::found(&dir.join("package.json"), limit).ok()?;
    let manifest: Value = serde_json::from_slice(&manifest).ok()?;
    let version = manifest
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(wanted) = &inv.version {
        if version.as_deref() != Some(wanted.as_str()) {
            return None;
        }
    }
    let unscoped = inv.name.rsplit('/').next().unwrap_or(&inv.name);
    let relative = match manifest.get("bin")? {
        Value::String(path) => path.clone(),
        Value::Object(bins) => {
            let named = inv.bin.as_deref().unwrap_or(unscoped);
            let chosen = bins.get(named).or_else(|| match (bins.len(), &inv.bin) {
                (1, None) => bins.values().next(),
                _ => None,
            });
            chosen?.as_str()?.to_string()
        }
        _ => return None,
    };
    let path = dir.join(relative);
    path.is_file().then_some(Found { path, version })
}
