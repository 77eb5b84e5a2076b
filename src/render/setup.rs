//! Texts of the commands that change the config for the user: `add` (and, through it, `setup`).

use std::path::Path;

/// How many tool names an added server's answer names.
const TOOLS_NAMED: usize = 8;

/// `add`'s syntax, after what was wrong with the words given.
pub fn add_usage(why: &str, cli: bool) -> String {
    let command = if cli { "pi-mcp add" } else { "/mcp add" };
    format!(
        "{why}\nUsage: {command} <name> [options] --url <url>\n       {command} <name> [options] -- <command> [args…]\nOptions (as `pi mcp add`): -l/--local (the project's .pi/mcp.json), --env KEY=VALUE, --cwd <dir>, --header KEY=VALUE, --bearer-token-env-var <NAME>, --oauth-client-id <id>, --oauth-client-secret <secret>, --oauth-callback-port <port>, --oauth-client-name <name>, --oauth-client-registration auto|dcr|cimd, --exposure codemode|deferred|direct|hidden, --description <text>"
    )
}

/// A server `add` tried and could not use: why, and that nothing was saved.
pub fn add_failed(name: &str, why: &str) -> String {
    format!("\"{name}\" was not added: nothing was saved. {why}")
}

/// A name `add` cannot take.
pub fn name_taken(name: &str, taken: &str, source: &Path) -> String {
    let same = if taken == name {
        String::new()
    } else {
        format!(" (as \"{taken}\": Pi counts `-` and `_` as the same)")
    };
    format!(
        "A server named \"{name}\" is configured already{same}, in {}. Nothing was saved: pick another name, or change that entry.",
        source.display()
    )
}

/// The project's `.pi/mcp.json` cannot be written: the project is not trusted.
pub fn project_untrusted(file: &Path, cli: bool) -> String {
    let trust = if cli {
        "run with --approve"
    } else {
        "trust the project (/trust, or `pi --approve`)"
    };
    format!(
        "This project is not trusted, so {} is not read; nothing was saved. To use project servers, {trust}.",
        file.display()
    )
}

/// A server `add` connected to, listed and (unless `saved` is false: a dry run) saved.
pub fn added(name: &str, file: &Path, tools: &[String], saved: bool, cli: bool) -> String {
    let named: Vec<&str> = tools.iter().take(TOOLS_NAMED).map(String::as_str).collect();
    let more = tools.len().saturating_sub(TOOLS_NAMED);
    let listed = match tools.len() {
        0 => "no tools".to_string(),
        n => format!(
            "{n} tool{}: {}{}",
            if n == 1 { "" } else { "s" },
            named.join(", "),
            if more > 0 {
                format!(", … ({more} more)")
            } else {
                String::new()
            }
        ),
    };
    let what = if saved { "Added" } else { "Would add" };
    let next = match (saved, cli) {
        (false, _) => "Nothing was saved (--dry-run).",
        (true, true) => "Pi sessions use it from their next start (or /reload).",
        (true, false) => "It is in use now.",
    };
    format!(
        "{what} \"{name}\" to {}: connected, {listed}. {next}",
        file.display()
    )
}
