//! `!command` values, as in Pi's `mcp.json`: a value of `env`, `headers`, `bearerToken` or
//! `oauth.clientSecret` that is `!` followed by a shell command takes that command's output, e.g.
//! `"Authorization": "!echo Bearer $(gh auth token)"`. The command runs each time the server
//! connects (never while the config is read or hashed, so the value can change, e.g. a refreshed
//! token), within [`TIME_LIMIT`]; its output is trimmed and never quoted in a message. A command
//! can do anything the user can, so one in a project's file runs only when the user trusted the
//! project by a decision (Pi's `ctx.isProjectTrusted()`, one Pi saved, `--approve`), never merely
//! because no decision was saved. Values of other tools' configs (`imports`) are always text.

use super::{Env, Role, Trust, TrustBasis};
use futures::future::BoxFuture;
use pi_mcp_connection::pool::process::StdioSpec;
use pi_mcp_connection::pool::run::{self, RunError};
use pi_mcp_connection::pool::shared::wire::FAMILY_VAR;
use pi_mcp_connection::secret::Secret;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a command may run.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);
/// Output beyond this is refused: no header or variable is that long.
const MAX_OUTPUT: usize = 64 * 1024;

/// A value of `env`, `headers`, `bearerToken` or `oauth.clientSecret` as configured.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigValue {
    /// Used as it is (variables already expanded).
    Text(Secret),
    /// `!command`: the command's output, when the server connects.
    Command(Command),
}

/// A `!command` and the file that set it.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// The command line; secret because it may carry a token.
    line: Secret,
    file: PathBuf,
    /// Set when the file is a project's and the project is trusted only by default.
    untrusted: bool,
}

#[cfg(test)]
impl From<&str> for ConfigValue {
    fn from(text: &str) -> Self {
        ConfigValue::text(text)
    }
}

impl ConfigValue {
    pub fn text(value: impl Into<String>) -> ConfigValue {
        ConfigValue::Text(Secret::new(value))
    }

    /// The text, or the command's output.
    pub async fn resolve(&self, field: &str, ctx: &RunContext<'_>) -> Result<Secret, ValueError> {
        match self {
            ConfigValue::Text(text) => Ok(text.clone()),
            ConfigValue::Command(command) => command.run(field, ctx).await,
        }
    }
}

/// Where commands run: the environment and working directory the session's servers get.
pub struct RunContext<'a> {
    pub env: &'a Env,
    pub cwd: &'a Path,
}

/// Resolves `env` or `headers` (`kind`) in order; the first failure stops.
pub async fn resolve_all(
    kind: &str,
    values: &[(String, ConfigValue)],
    ctx: &RunContext<'_>,
) -> Result<Vec<(String, Secret)>, ValueError> {
    let mut resolved = Vec::with_capacity(values.len());
    for (name, value) in values {
        let field = format!("{kind} \"{name}\"");
        resolved.push((name.clone(), value.resolve(&field, ctx).await?));
    }
    Ok(resolved)
}

/// Which files' commands may run: decided once per config load.
#[derive(Clone, Debug, Default)]
pub struct CommandPolicy {
    /// Project files read although no trust decision exists for the project.
    untrusted: Vec<PathBuf>,
}

impl CommandPolicy {
    /// `files`: every native config file with its role.
    pub fn new<'a>(trust: &Trust, files: impl IntoIterator<Item = (&'a Path, &'a Role)>) -> Self {
        let untrusted = match trust.basis {
            TrustBasis::Default => files
                .into_iter()
                .filter(|(_, role)| role.is_project())
                .map(|(path, _)| path.to_path_buf())
                .collect(),
            TrustBasis::Given | TrustBasis::Saved { .. } => vec![],
        };
        CommandPolicy { untrusted }
    }

    /// `raw` as set by `file`: a command when it starts with `!`, else text expanded by `expand`;
    /// `!!` starts a text that begins with `!` (pi-mcp-adapter's escape).
    pub fn value(
        &self,
        raw: &str,
        file: &Path,
        expand: impl FnOnce(&str) -> String,
    ) -> ConfigValue {
        if let Some(text) = raw.strip_prefix("!!") {
            return ConfigValue::text(format!("!{}", expand(text)));
        }
        match raw.strip_prefix('!') {
            Some(line) => ConfigValue::Command(Command {
                line: Secret::new(line),
                file: file.to_path_buf(),
                untrusted: !self.runs_from(file),
            }),
            None => ConfigValue::text(expand(raw)),
        }
    }

    /// Whether commands set in `file` may run.
    pub fn runs_from(&self, file: &Path) -> bool {
        !self.untrusted.iter().any(|f| f == file)
    }
}

/// Why a `!command` value has none.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueError {
    /// E.g. `header "Authorization"`.
    pub field: String,
    pub file: PathBuf,
    pub kind: ValueErrorKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueErrorKind {
    /// Not run: the project is trusted only because no decision was saved.
    Untrusted,
    /// The shell could not be started.
    Spawn(String),
    /// E.g. "exited with code 1".
    Failed(String),
    TimedOut,
    Empty,
    TooLong,
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (field, file) = (&self.field, self.file.display());
        if self.kind == ValueErrorKind::Untrusted {
            return write!(
                f,
                "{field} is a !command in {file}, a project file, and no trust decision is saved for this project, so it was not run; trust the project to run it: /trust in Pi, or --approve (`pi --approve`, `pi-mcp --approve`)"
            );
        }
        write!(f, "the !command of {field} (in {file}) ")?;
        match &self.kind {
            ValueErrorKind::Untrusted => Ok(()),
            ValueErrorKind::Spawn(why) => write!(f, "could not be started: {why}"),
            ValueErrorKind::Failed(status) => write!(
                f,
                "{status}; its output is not shown, as it may hold secrets: run the command in a shell to see why"
            ),
            ValueErrorKind::TimedOut => write!(
                f,
                "did not finish within {} s and was stopped",
                TIME_LIMIT.as_secs()
            ),
            ValueErrorKind::Empty => write!(f, "printed nothing"),
            ValueErrorKind::TooLong => {
                write!(f, "printed more than {} KiB", MAX_OUTPUT / 1024)
            }
        }
    }
}

impl std::error::Error for ValueError {}

impl Command {
    /// Boxed, so that its state machine is compiled once, here: rustc copies an `async fn`'s
    /// state machine into every crate that awaits it (the addon held a second copy, 15 KB).
    fn run<'a>(
        &'a self,
        field: &'a str,
        ctx: &'a RunContext<'_>,
    ) -> BoxFuture<'a, Result<Secret, ValueError>> {
        Box::pin(self.run_once(field, ctx))
    }

    async fn run_once(&self, field: &str, ctx: &RunContext<'_>) -> Result<Secret, ValueError> {
        let error = |kind| ValueError {
            field: field.to_string(),
            file: self.file.clone(),
            kind,
        };
        if self.untrusted {
            return Err(error(ValueErrorKind::Untrusted));
        }
        let output = run_shell(self.line.expose(), ctx, TIME_LIMIT)
            .await
            .map_err(error)?;
        let text = output.trim();
        if text.is_empty() {
            return Err(error(ValueErrorKind::Empty));
        }
        Ok(Secret::new(text))
    }
}

/// The shell that runs a command line, as Pi's does.
fn shell(line: &str) -> (String, Vec<String>) {
    if cfg!(windows) {
        let args = ["/d", "/s", "/c", line].map(String::from).to_vec();
        ("cmd.exe".into(), args)
    } else {
        ("/bin/sh".into(), vec!["-c".into(), line.into()])
    }
}

/// Runs `line` in its own process group with no input, stderr discarded and without the family's
/// token; its stdout once it exited successfully. The group is stopped afterwards, and when
/// `limit` is reached.
async fn run_shell(
    line: &str,
    ctx: &RunContext<'_>,
    limit: Duration,
) -> Result<String, ValueErrorKind> {
    let (command, args) = shell(line);
    let spec = StdioSpec {
        command,
        args,
        env: ctx
            .env
            .iter()
            .filter(|(k, _)| k.as_str() != FAMILY_VAR)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        cwd: ctx.cwd.to_path_buf(),
    };
    match run::to_end(&spec, &[], MAX_OUTPUT, limit).await {
        Ok(stdout) => Ok(String::from_utf8_lossy(&stdout).into_owned()),
        Err(RunError::Spawn(why)) => Err(ValueErrorKind::Spawn(why)),
        Err(RunError::Failed(status)) => Err(ValueErrorKind::Failed(status)),
        Err(RunError::TimedOut) => Err(ValueErrorKind::TimedOut),
        Err(RunError::TooLong) => Err(ValueErrorKind::TooLong),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_mcp_connection::pool::process;
    use std::time::Instant;

    fn policy(untrusted: &[&Path]) -> CommandPolicy {
        CommandPolicy {
            untrusted: untrusted.iter().map(|p| p.to_path_buf()).collect(),
        }
    }

    async fn resolve(raw: &str, untrusted: bool) -> Result<String, String> {
        let file = Path::new("/cfg/.mcp.json");
        let untrusted: &[&Path] = if untrusted { &[file] } else { &[] };
        let value = policy(untrusted).value(raw, file, str::to_string);
        let env: Env = std::env::vars().collect();
        let ctx = RunContext {
            env: &env,
            cwd: &std::env::temp_dir(),
        };
        value
            .resolve("header \"Authorization\"", &ctx)
            .await
            .map(|s| s.expose().to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn only_a_leading_bang_makes_a_command() {
        let file = Path::new("/cfg/mcp.json");
        let p = policy(&[]);
        assert_eq!(
            p.value("a!b", file, |s| s.to_uppercase()),
            ConfigValue::text("A!B")
        );
        let ConfigValue::Command(command) = p.value("!echo ${X}", file, |_| unreachable!()) else {
            panic!("not a command");
        };
        // Variables are the shell's business, and the line is secret.
        assert_eq!(command.line.expose(), "echo ${X}");
        assert!(!format!("{command:?}").contains("echo"));
    }

    #[tokio::test]
    async fn output_is_trimmed() {
        assert_eq!(
            resolve("!printf '  Bearer t0k\\n\\n'", false)
                .await
                .unwrap(),
            "Bearer t0k"
        );
        assert_eq!(resolve("plain ${X}", false).await.unwrap(), "plain ${X}");
    }

    #[tokio::test]
    async fn failures_never_quote_the_output() {
        let failed = resolve("!echo sk-secret-1; echo sk-secret-2 >&2; exit 3", false)
            .await
            .unwrap_err();
        assert!(failed.contains("exited with code 3"), "{failed}");
        assert!(!failed.contains("sk-secret"), "{failed}");
        assert!(
            failed.starts_with("the !command of header \"Authorization\" (in /cfg/.mcp.json)"),
            "{failed}"
        );
        let empty = resolve("!printf '  \\n'", false).await.unwrap_err();
        assert!(empty.ends_with("printed nothing"), "{empty}");
        let long = resolve("!head -c 70000 /dev/zero | tr '\\0' x", false)
            .await
            .unwrap_err();
        assert!(long.ends_with("printed more than 64 KiB"), "{long}");
    }

    #[tokio::test]
    async fn a_command_past_its_time_limit_is_stopped_with_its_children() {
        let marker = std::env::temp_dir().join(format!("pi-mcp-command-{}", std::process::id()));
        let line = format!("sleep 30 & echo $! > {}; wait", marker.display());
        let env: Env = std::env::vars().collect();
        let ctx = RunContext {
            env: &env,
            cwd: &std::env::temp_dir(),
        };
        let started = Instant::now();
        let result = run_shell(&line, &ctx, Duration::from_millis(300)).await;
        assert_eq!(result, Err(ValueErrorKind::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(3));
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let _ = std::fs::remove_file(&marker);
        for _ in 0..100 {
            if !process::alive(pid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the command's child {pid} survived");
    }

    #[tokio::test]
    async fn untrusted_project_commands_do_not_run() {
        let refused = resolve("!touch /tmp/pi-mcp-should-not-exist", true)
            .await
            .unwrap_err();
        assert!(!Path::new("/tmp/pi-mcp-should-not-exist").exists());
        assert!(refused.contains("/cfg/.mcp.json"), "{refused}");
        assert!(refused.contains("--approve"), "{refused}");
        assert!(refused.contains("no trust decision is saved"), "{refused}");
    }

    #[test]
    fn only_project_files_under_default_trust_are_refused() {
        let (user, project) = (
            Path::new("/h/.pi/agent/mcp.json"),
            Path::new("/p/.mcp.json"),
        );
        let files = [(user, &Role::PiGlobal), (project, &Role::Project)];
        let trust = |basis| Trust {
            trusted: true,
            basis,
        };
        let default = CommandPolicy::new(&trust(TrustBasis::Default), files);
        assert_eq!(default.untrusted, vec![project.to_path_buf()]);
        assert!(CommandPolicy::new(&trust(TrustBasis::Given), files)
            .untrusted
            .is_empty());
    }
}
