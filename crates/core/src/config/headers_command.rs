//! `requestHeadersCommand` (pi-mcp-adapter's key): a program run for each HTTP request to a
//! remote server, given the request (`{"version": 1, "method", "url", "bodyBase64"}`) on stdin,
//! whose output, a JSON object of strings, adds headers to that request: the signature a signing
//! gateway wants. It runs as the user, so as for a `!command` a project's runs only where the
//! project is trusted by a decision, and another tool's config (`imports`) never has one.

use super::fields as key;
use super::interpolate::expand;
use super::reader::Reader;
use super::server::{describe, Fields};
use super::Level;
use std::path::PathBuf;
use std::time::Duration;

/// How long the program may run when `timeoutMs` does not say, and at most.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_MS: u64 = 60_000;

#[derive(Clone, Debug, PartialEq)]
pub struct HeadersCommand {
    /// Run without a shell, variables expanded.
    pub command: String,
    pub args: Vec<String>,
    /// Added to the session's environment, variables expanded.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    /// The file that set it.
    pub file: PathBuf,
    /// Set when the file is a project's and the project is trusted only by default: not run.
    pub untrusted: bool,
}

impl HeadersCommand {
    /// Why it did not run, when [`HeadersCommand::untrusted`].
    pub fn refusal(&self) -> String {
        format!(
            "`requestHeadersCommand` in {}, a project file, runs a program, and no trust decision is saved for this project, so it was not run; trust the project to run it: /trust in Pi, or --approve (`pi --approve`, `pi-mcp --approve`)",
            self.file.display()
        )
    }
}

/// A `url` server's `requestHeadersCommand`; problems are errors and leave it out (its requests
/// then go unsigned, and a gateway that wants the signature refuses them).
pub(super) fn parse(f: &mut Fields) -> Option<HeadersCommand> {
    let value = f.get(&key::REQUEST_HEADERS_COMMAND)?;
    let name = key::REQUEST_HEADERS_COMMAND.name;
    let Some(object) = value.as_object() else {
        f.read()
            .wrong(&key::REQUEST_HEADERS_COMMAND, &describe(value));
        return None;
    };
    if f.is_imported() {
        let message = "another tool's config cannot run a program for each request; ignored".into();
        f.report(Level::Error, name, message);
        return None;
    }
    let env = f.env();
    let file = f.file_of(name).to_path_buf();
    let untrusted = !f.commands_run_from(&file);
    let mut report =
        |level, field: &str, message| f.report(level, &format!("{name}.{field}"), message);
    let mut read = Reader::new(object, &mut report);
    let command = read
        .string(&key::HEADERS_COMMAND)
        .filter(|c| !c.trim().is_empty());
    let args = read.strings(&key::HEADERS_ARGS).unwrap_or_default();
    let vars = read.text_map(&key::HEADERS_ENV, "; ignored");
    let timeout_ms = read.count(&key::HEADERS_TIMEOUT_MS);
    if timeout_ms > MAX_TIMEOUT_MS {
        let message =
            format!("is at most {MAX_TIMEOUT_MS}, got {timeout_ms}; using {MAX_TIMEOUT_MS}");
        read.report(Level::Warning, key::HEADERS_TIMEOUT_MS.name, message);
    }
    let Some(command) = command else {
        let message =
            "is missing: name the program that prints the headers; requests go without them".into();
        read.report(Level::Error, key::HEADERS_COMMAND.name, message);
        return None;
    };
    Some(HeadersCommand {
        command: expand(&command, env),
        args: args.iter().map(|a| expand(a, env)).collect(),
        env: vars
            .into_iter()
            .map(|(k, v)| (k, expand(&v, env)))
            .collect(),
        timeout: Duration::from_millis(timeout_ms.min(MAX_TIMEOUT_MS)),
        file,
        untrusted,
    })
}
