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

/// `setup`'s plan: what other tools' configs and the well-known list offer, and how to choose.
pub fn setup_plan(
    file: &Path,
    found: &[crate::config::setup::Found],
    offers: &[(crate::config::setup::WellKnown, bool)],
    cli: bool,
) -> String {
    let mut out = format!("Setup writes to {}", file.display());
    out.push_str(if file.exists() { "." } else { " (a new file)." });
    if found.is_empty() {
        out.push_str("\n\nNo other tool's MCP config was found (Cursor, Claude Code, Claude Desktop, VS Code, Windsurf, Codex, OpenCode).");
    } else {
        out.push_str("\n\nYour other tools' MCP configs:");
        for f in found {
            let files: Vec<String> = f.files.iter().map(|p| p.display().to_string()).collect();
            let new = match (f.imported, f.new.len()) {
                (true, _) => "imported already".to_string(),
                (false, 0) => "every one configured here already".to_string(),
                (false, n) => format!("{n} new: {}", f.new.join(", ")),
            };
            out.push_str(&format!(
                "\n- {} ({}): {} server{}, {new}",
                f.kind.name(),
                files.join(", "),
                f.servers.len(),
                if f.servers.len() == 1 { "" } else { "s" }
            ));
        }
        out.push_str("\nImporting reads the tool's file each time (it stays the place to change them); copying puts its servers in your file.");
    }
    out.push_str("\n\nWell-known servers:");
    for (offer, taken) in offers {
        let what = offer
            .entry
            .get("url")
            .or_else(|| offer.entry.get("args").and_then(|a| a.get(1)))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let taken = if *taken { " (configured)" } else { "" };
        out.push_str(&format!(
            "\n- {}{taken}: {}: {} ({what})",
            offer.id, offer.title, offer.about
        ));
    }
    out.push_str(if cli {
        "\n\nChoose with: pi-mcp setup --import cursor,codex --copy claude-code --add deepwiki [--project] [--dry-run] [--yes]; or add any server with pi-mcp add."
    } else {
        "\n\nRun /mcp setup in Pi's terminal UI to choose, or add any server with /mcp add."
    });
    out
}

/// `setup`'s change, shown before (or after) it is written.
pub fn setup_done(file: &Path, preview: &str, written: bool, unchanged: bool, cli: bool) -> String {
    let file = file.display();
    if unchanged {
        return format!("{file} has all of it already; nothing was written.");
    }
    let head = match written {
        true => format!("Wrote {file}:"),
        false => format!("The change to {file} (not written yet):"),
    };
    let tail = match (written, cli) {
        (true, true) => "\nPi sessions use it from their next start (or /reload).",
        (true, false) => "\nIt is in use now.",
        (false, _) => "",
    };
    format!("{head}\n{preview}{tail}")
}

/// A tool `setup` does not know.
pub fn unknown_tool(name: &str) -> String {
    let known: Vec<&str> = crate::config::ImportKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    format!(
        "unknown tool \"{name}\"; expected one of {}",
        known.join(", ")
    )
}

/// `--copy` of a tool whose config holds no server.
pub fn nothing_to_copy(tool: &str) -> String {
    format!("no MCP config of {tool} with servers was found; there is nothing to copy")
}

/// An id that is not a well-known server.
pub fn unknown_well_known(id: &str, ids: &[&str]) -> String {
    format!(
        "\"{id}\" is not a well-known server; they are: {}",
        ids.join(", ")
    )
}
