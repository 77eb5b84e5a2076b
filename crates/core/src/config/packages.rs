//! Servers that installed Pi packages declare: `"pi": {"mcp": "./mcp.json"}` (or a list of such
//! files) in a package's `package.json`, pi-mcp-adapter's format. The packages are those of
//! `packages` in the user's Pi settings (`<agentDir>/settings.json`) and, in a trusted project, the
//! project's (`.pi/settings.json`), found where Pi installs them: npm sources under
//! `<base>/npm/node_modules/<name>`, git sources under `<base>/git/<host>/<path>`, local paths
//! relative to the settings file's folder (`<base>` is the agent dir, or the project's `.pi`). A
//! project entry replaces the user's entry of the same package, as in Pi. A server is named
//! `<package>__<server>` (both made of letters, digits, `_` and `-`), as pi-mcp-adapter names it.
//! The files a manifest names must stay inside the package, and a relative `cwd` is the package's.

use super::files::{self, Origin, Read};
use super::interpolate::{expand_path, Env};
use super::sources::{Role, Source, SourceState};
use super::{Diagnostic, Level};
use pi_mcp_connection::bounded_read::{self, FileLimits};
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};

/// Where a server of a package comes from, for status and doctor.
#[derive(Clone, Debug, PartialEq)]
pub struct PackageOrigin {
    /// The package's name (its `package.json`'s).
    pub name: String,
    pub root: PathBuf,
    /// The Pi settings file whose `packages` lists it.
    pub settings: PathBuf,
    /// Listed in the project's settings.
    pub project: bool,
}

/// One server a package declares, in our fields.
pub struct PackageServer {
    pub name: String,
    pub entry: Value,
    /// The package's file that declares it.
    pub file: PathBuf,
    pub origin: PackageOrigin,
}

#[derive(Default)]
pub struct Packages {
    /// Every package config file looked at.
    pub sources: Vec<Source>,
    pub servers: Vec<PackageServer>,
}

pub struct Context<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    pub env: &'a Env,
    pub project_trusted: bool,
    pub limits: &'a FileLimits,
}

/// A package as a settings file lists it.
struct Listed {
    root: PathBuf,
    /// Pi's identity of a package: npm by name, git by repository, local by path.
    identity: String,
    settings: PathBuf,
    project: bool,
}

/// The servers of every installed package that declares some.
pub fn read(ctx: &Context, diagnostics: &mut Vec<Diagnostic>) -> Packages {
    let mut out = Packages::default();
    let mut listed: Vec<Listed> = vec![];
    let project_base = ctx.cwd.join(".pi");
    let scopes = [
        (project_base.clone(), true),
        (ctx.agent_dir.to_path_buf(), false),
    ];
    for (base, project) in scopes {
        if project && !ctx.project_trusted {
            continue; // Pi installs and loads project packages only in a trusted project
        }
        let settings = base.join("settings.json");
        for source in listed_sources(&settings, ctx, diagnostics) {
            let Some((root, identity)) = resolve(&source, &base, ctx.env) else {
                let message = format!("package \"{source}\": its source cannot be placed where Pi installs packages; skipped");
                diagnostics.push(Diagnostic::in_file(
                    Level::Warning,
                    &settings,
                    Some("packages"),
                    message,
                ));
                continue;
            };
            if listed
                .iter()
                .any(|l| l.identity == identity || l.root == root)
            {
                continue; // the project's entry replaces the user's
            }
            listed.push(Listed {
                root,
                identity,
                settings: settings.clone(),
                project,
            });
        }
    }
    for package in listed {
        read_package(&package, ctx, &mut out, diagnostics);
    }
    out
}

/// The sources `packages` of a Pi settings file lists (strings, or objects with `source`).
fn listed_sources(
    settings: &Path,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let root = match files::read(settings, Origin::Found, ctx.limits, diagnostics) {
        Read::Parsed { value, .. } => value,
        _ => return vec![],
    };
    let mut warn = |message: String| {
        diagnostics.push(Diagnostic::in_file(
            Level::Warning,
            settings,
            Some("packages"),
            message,
        ))
    };
    match root.get("packages") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(entries)) => entries
            .iter()
            .filter_map(|entry| {
                let source = entry
                    .as_str()
                    .or_else(|| entry.get("source").and_then(Value::as_str));
                if source.is_none() {
                    warn(
                        "an entry is neither a source nor an object with a `source`; skipped"
                            .into(),
                    );
                }
                source.map(|s| s.trim().to_string())
            })
            .collect(),
        Some(_) => {
            warn(
                "must be an array of package sources; no package's servers are read from it".into(),
            );
            vec![]
        }
    }
}

/// Where Pi installs `source` listed in a settings file in `base`, and the package's identity.
fn resolve(source: &str, base: &Path, env: &Env) -> Option<(PathBuf, String)> {
    if let Some(spec) = source.strip_prefix("npm:") {
        let name = npm_name(spec.trim())?;
        let root = contained(&base.join("npm").join("node_modules"), &name)?;
        return Some((root, format!("npm:{name}")));
    }
    if let Some(repo) = git_path(source) {
        let root = contained(&base.join("git"), &repo)?;
        return Some((root, format!("git:{repo}")));
    }
    let root = expand_path(source, env);
    let root = if root.is_absolute() {
        root
    } else {
        base.join(root)
    };
    let root = normal(&root);
    let identity = format!("local:{}", root.display());
    Some((root, identity))
}

/// The package name of an npm spec: `@scope/name@1.2` → `@scope/name`.
fn npm_name(spec: &str) -> Option<String> {
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(rest) => {
            let (scope, name) = rest.split_once('/')?;
            (format!("@{scope}/"), name)
        }
        None => (String::new(), spec),
    };
    let name = rest.split('@').next().filter(|n| !n.is_empty())?;
    Some(format!("{scope}{name}"))
}

/// `<host>/<path>` of a git source (`git:host/path@ref`, an http(s) or ssh URL, `git@host:path`),
/// without ref or `.git`, as Pi places its clone.
fn git_path(source: &str) -> Option<String> {
    let value = if let Some(rest) = source.strip_prefix("git:") {
        rest.trim().to_string()
    } else if let Some(rest) = source.strip_prefix("git@") {
        rest.replacen(':', "/", 1)
    } else if ["https://", "http://", "ssh://"]
        .iter()
        .any(|p| source.starts_with(p))
    {
        let url = url::Url::parse(source).ok()?;
        format!("{}{}", url.host_str()?, url.path())
    } else {
        return None;
    };
    let value = match value.rsplit_once('@') {
        Some((path, reference)) if !reference.contains('/') => path.to_string(),
        _ => value,
    };
    let value = value.trim_end_matches('/').trim_end_matches(".git");
    (!value.is_empty() && !value.starts_with('/')).then(|| value.to_string())
}

/// `base/relative` when it stays inside `base` (no `..` past it, not absolute).
fn contained(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut depth = 0usize;
    for part in Path::new(relative).components() {
        match part {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return None,
        }
    }
    Some(normal(&base.join(relative)))
}

/// `path` with `.` and `..` resolved by name (no file system access).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `name` made of letters, digits, `_` and `-` (others become `_`, none at the ends), as
/// pi-mcp-adapter names a package's servers.
fn name_part(name: &str, fallback: &str) -> String {
    let mut out = String::new();
    let mut replaced = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
            replaced = false;
        } else if !replaced {
            out.push('_');
            replaced = true;
        }
    }
    let trimmed = out.trim_matches(|c| c == '_' || c == '-');
    match trimmed.is_empty() {
        true => fallback.to_string(),
        false => trimmed.to_string(),
    }
}

/// Reads one package's manifest and the MCP config files it names.
fn read_package(
    package: &Listed,
    ctx: &Context,
    out: &mut Packages,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let manifest_file = package.root.join("package.json");
    let Some((name, paths)) = declared(&manifest_file, ctx, diagnostics) else {
        return;
    };
    let origin = PackageOrigin {
        name: name.clone(),
        root: package.root.clone(),
        settings: package.settings.clone(),
        project: package.project,
    };
    for path in &paths {
        let Some(file) = inside(&package.root, path) else {
            let message =
                format!("`pi.mcp` names {path}, which is not a file inside the package; skipped");
            diagnostics.push(Diagnostic::in_file(
                Level::Warning,
                &manifest_file,
                Some("pi.mcp"),
                message,
            ));
            continue;
        };
        let state = read_file(&file, &origin, ctx, out, diagnostics);
        let role = Role::Package {
            name: name.clone(),
            settings: package.settings.clone(),
            project: package.project,
        };
        out.sources.push(Source {
            path: file,
            role,
            state,
        });
    }
}

/// A package's name and the MCP config files its manifest names (`pi.mcp`); `None` when it
/// names none (a problem with what it names is reported).
fn declared(
    manifest_file: &Path,
    ctx: &Context,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(String, Vec<String>)> {
    let manifest = match bounded_read::found(manifest_file, ctx.limits.config_bytes) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes).ok(),
        Err(_) => return None, // not installed (yet): Pi installs it at its next start
    };
    let Some(manifest) = manifest.filter(Value::is_object) else {
        let message = "is not a JSON object; the package's MCP servers are not read".to_string();
        diagnostics.push(Diagnostic::in_file(
            Level::Warning,
            manifest_file,
            None,
            message,
        ));
        return None;
    };
    let declared = manifest.get("pi").and_then(|pi| pi.get("mcp"))?;
    let name = manifest["name"].as_str().unwrap_or_default().to_string();
    let paths: Vec<String> = match declared {
        Value::String(path) => vec![path.clone()],
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => vec![],
    };
    if name.is_empty() || paths.is_empty() {
        let message = "`pi.mcp` must name the package's MCP config files (a path, or a list of paths) in a package with a `name`; ignored".to_string();
        diagnostics.push(Diagnostic::in_file(
            Level::Warning,
            manifest_file,
            Some("pi.mcp"),
            message,
        ));
        return None;
    }
    Some((name, paths))
}

/// One MCP config file of a package: its servers added to `out` (the first of a name wins).
fn read_file(
    file: &Path,
    origin: &PackageOrigin,
    ctx: &Context,
    out: &mut Packages,
    diagnostics: &mut Vec<Diagnostic>,
) -> SourceState {
    let value = match files::read(file, Origin::Found, ctx.limits, diagnostics) {
        Read::Missing => return SourceState::Missing,
        Read::Blank => return SourceState::Blank,
        Read::Invalid => return SourceState::Invalid,
        Read::Parsed { value, .. } => value,
    };
    let prefix = name_part(&origin.name, "package");
    let servers = servers_of(&value, file, &prefix, origin, diagnostics);
    let names = servers.iter().map(|s| s.name.clone()).collect();
    for server in servers {
        if out.servers.iter().any(|s| s.name == server.name) {
            let message = format!(
                "server \"{}\" is declared twice; the first is used",
                server.name
            );
            diagnostics.push(Diagnostic::in_file(Level::Warning, file, None, message));
        } else {
            out.servers.push(server);
        }
    }
    SourceState::Loaded {
        servers: names,
        shadowed: vec![],
    }
}

/// The package file `path` names, when it is a file inside the package (after links).
fn inside(root: &Path, path: &str) -> Option<PathBuf> {
    let file = contained(root, path)?;
    let real = std::fs::canonicalize(&file).ok()?;
    let real_root = std::fs::canonicalize(root).ok()?;
    (real.starts_with(&real_root) && real.is_file()).then_some(file)
}

/// The servers of a package's MCP config, named `<package>__<server>`, a relative `cwd` made the
/// package's.
fn servers_of(
    root: &Value,
    file: &Path,
    prefix: &str,
    origin: &PackageOrigin,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<PackageServer> {
    let Some(servers) = root.get("mcpServers").and_then(Value::as_object) else {
        let message = "must hold an object `mcpServers`; the package's servers in it are not read"
            .to_string();
        diagnostics.push(Diagnostic::in_file(Level::Error, file, None, message));
        return vec![];
    };
    let mut out = vec![];
    for (name, entry) in servers {
        let Some(mut fields) = entry.as_object().cloned() else {
            let message = format!("server \"{name}\" must be an object; skipped");
            diagnostics.push(Diagnostic::in_file(Level::Error, file, None, message));
            continue;
        };
        match fields.get("cwd").and_then(Value::as_str) {
            Some(cwd) if Path::new(cwd).is_absolute() || cwd.starts_with('~') => {}
            Some(cwd) => match contained(&origin.root, cwd) {
                Some(dir) => {
                    fields.insert("cwd".into(), json!(dir));
                }
                None => {
                    let message =
                        format!("server \"{name}\": `cwd` {cwd} leaves the package; skipped");
                    diagnostics.push(Diagnostic::in_file(
                        Level::Error,
                        file,
                        Some("cwd"),
                        message,
                    ));
                    continue;
                }
            },
            None => {}
        }
        out.push(PackageServer {
            name: format!("{prefix}__{}", name_part(name, "server")),
            entry: Value::Object(fields),
            file: file.to_path_buf(),
            origin: origin.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_placed_where_pi_installs_them() {
        let base = Path::new("/a/.pi/agent");
        let env = Env::new();
        let at =
            |s: &str| resolve(s, base, &env).map(|(root, id)| (root.display().to_string(), id));
        assert_eq!(
            at("npm:@scope/tools@1.2.0"),
            Some((
                "/a/.pi/agent/npm/node_modules/@scope/tools".into(),
                "npm:@scope/tools".into()
            ))
        );
        assert_eq!(
            at("npm:tools").unwrap().0,
            "/a/.pi/agent/npm/node_modules/tools"
        );
        assert_eq!(
            at("git:github.com/u/repo@v1").unwrap().0,
            "/a/.pi/agent/git/github.com/u/repo"
        );
        assert_eq!(
            at("https://github.com/u/repo.git").unwrap().0,
            "/a/.pi/agent/git/github.com/u/repo"
        );
        assert_eq!(
            at("git@github.com:u/repo").unwrap().0,
            "/a/.pi/agent/git/github.com/u/repo"
        );
        assert_eq!(at("./local/pkg").unwrap().0, "/a/.pi/agent/local/pkg");
        assert_eq!(at("/abs/pkg").unwrap().0, "/abs/pkg");
        assert_eq!(at("npm:../x"), None);
        assert_eq!(at("git:host/../../x"), None);
    }

    #[test]
    fn names_as_pi_mcp_adapter_names_them() {
        assert_eq!(name_part("@scope/pi-tools", "package"), "scope_pi-tools");
        assert_eq!(name_part("my.server", "server"), "my_server");
        assert_eq!(name_part("...", "server"), "server");
        assert_eq!(npm_name("@s/n@^1"), Some("@s/n".into()));
        assert_eq!(npm_name("@s"), None);
    }
}
