//! `uvx <tool> …` and `uv tool run <tool> …`: the tool's script in the environment uv already
//! built for it (`<uv cache>/environments-v2/*/*` → a virtualenv with `bin/<tool>`).

use super::{Found, Lookup};
use std::path::{Path, PathBuf};

#[derive(Debug, PartialEq)]
pub struct Invocation {
    /// The Python package (`--from`, or the tool's own name).
    pub package: String,
    pub version: Option<String>,
    /// The command the package installs.
    pub tool: String,
    pub args: Vec<String>,
}

impl Invocation {
    pub fn spec(&self) -> String {
        match &self.version {
            Some(v) => format!("{}=={v} {}", self.package, self.tool),
            None => format!("{} {}", self.package, self.tool),
        }
    }
}

/// Parses `uvx [--from pkg] [--offline|-q] <tool>[@version] args…`. `None` for anything else
/// (`--with`, `--python`… change the environment, so those keep going through uv).
pub fn parse(command: &str, args: &[String]) -> Option<Invocation> {
    let name = Path::new(command)
        .file_name()?
        .to_str()?
        .trim_end_matches(".exe");
    let rest = match name {
        "uvx" => args,
        "uv" if args.len() > 2 && args[0] == "tool" && args[1] == "run" => &args[2..],
        _ => return None,
    };
    let mut from = None;
    let mut i = 0;
    while i < rest.len() {
        match rest[i].as_str() {
            "--offline" | "-q" | "--quiet" | "--no-progress" => {}
            "--from" => {
                from = Some(rest.get(i + 1)?.clone());
                i += 1;
            }
            arg if arg.starts_with("--from=") => from = Some(arg["--from=".len()..].to_string()),
            arg if arg.starts_with('-') => return None,
            _ => break,
        }
        i += 1;
    }
    let positional = rest.get(i)?;
    let args = rest[i + 1..].to_vec();
    let (package, version, tool) = match from {
        Some(from) => {
            let (package, version) = split_requirement(&from)?;
            (package, version, positional.clone())
        }
        None => {
            let (tool, version) = split_requirement(positional)?;
            (tool.clone(), version, tool)
        }
    };
    Some(Invocation {
        package,
        version,
        tool,
        args,
    })
}

/// `pkg`, `pkg@1.2`, `pkg==1.2` → name and exact version; anything fancier is refused.
fn split_requirement(spec: &str) -> Option<(String, Option<String>)> {
    let (name, version) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
        Some((name, version)) => (name, Some(version.to_string())),
        None => (spec, None),
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let valid = plain(name) && version.as_deref().is_none_or(plain);
    valid.then(|| (name.to_string(), version.filter(|v| v != "latest")))
}

/// Finds the newest environment uv built that has the tool (and the wanted version).
pub fn find(inv: &Invocation, lookup: &Lookup) -> Option<Found> {
    let mut environments: Vec<PathBuf> =
        std::fs::read_dir(uv_cache(lookup)?.join("environments-v2"))
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_dir(e.path()).ok())
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_none()) // skip the `.lock` files beside each link
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
    environments.sort_by_key(|env| {
        std::cmp::Reverse(std::fs::metadata(env).and_then(|m| m.modified()).ok())
    });
    environments.iter().find_map(|env| {
        let script = env
            .join(if cfg!(windows) { "Scripts" } else { "bin" })
            .join(&inv.tool);
        let version = installed_version(env, &inv.package)?;
        let wanted = inv.version.as_deref().is_none_or(|v| v == version);
        (wanted && script.is_file()).then_some(Found {
            path: script,
            version: Some(version),
        })
    })
}

/// The version of `package` installed in the environment, from its `.dist-info` directory.
fn installed_version(env: &Path, package: &str) -> Option<String> {
    let normalized = package.to_lowercase().replace(['-', '.'], "_");
    let lib = env.join("lib");
    let site_packages = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .chain(std::iter::once(env.join("Lib").join("site-packages")));
    site_packages
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".dist-info")?;
            let (pkg, version) = stem.split_once('-')?;
            (pkg.to_lowercase() == normalized).then(|| version.to_string())
        })
}

fn uv_cache(lookup: &Lookup) -> Option<PathBuf> {
    if let Some(dir) = lookup.var("UV_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if cfg!(windows) {
        return lookup
            .var("LOCALAPPDATA")
            .map(|d| Path::new(d).join("uv").join("cache"));
    }
    match lookup.var("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => Some(Path::new(dir).join("uv")),
        None => lookup
            .var("HOME")
            .map(|home| Path::new(home).join(".cache").join("uv")),
    }
}
