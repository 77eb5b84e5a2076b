//! Opening a page in the user's browser (a sign-in's authorization page, a server's URL
//! question): `$BROWSER` when set (a `:`-separated list of commands, `%s` standing for the URL,
//! as in the `$BROWSER` convention), else the platform's opener. Only a checked URL is opened
//! (`clean::Link`: http(s), no hidden characters), in its ASCII form. The URL is always shown as
//! well, so a failure here only costs a click.

use crate::config::Env;
use pi_mcp_connection::clean::Link;
use std::process::{Command, Stdio};

/// Starts the browser; returns the command that was started, or why none could be.
pub fn open(url: &Link, env: &Env) -> Result<String, String> {
    let url = url.as_str();
    let commands = match env.get("BROWSER").filter(|b| !b.trim().is_empty()) {
        Some(browsers) => browsers
            .split(':')
            .filter(|c| !c.trim().is_empty())
            .map(|c| with_url(c, url))
            .collect(),
        None => vec![platform_opener(url)],
    };
    let mut errors = Vec::new();
    for argv in commands {
        let Some((program, args)) = argv.split_first() else {
            continue;
        };
        let started = Command::new(program)
            .args(args)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match started {
            Ok(mut child) => {
                // Reap it whenever it ends, so it never lingers as a zombie.
                std::thread::spawn(move || child.wait());
                return Ok(program.clone());
            }
            Err(e) => errors.push(format!("{program}: {e}")),
        }
    }
    Err(format!(
        "no browser could be started ({})",
        errors.join("; ")
    ))
}

fn with_url(command: &str, url: &str) -> Vec<String> {
    let mut argv: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    if argv.iter().any(|a| a.contains("%s")) {
        for arg in &mut argv {
            *arg = arg.replace("%s", url);
        }
    } else {
        argv.push(url.to_string());
    }
    argv
}

fn platform_opener(url: &str) -> Vec<String> {
    let argv: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["rundll32", "url.dll,FileProtocolHandler"]
    } else {
        &["xdg-open"]
    };
    argv.iter()
        .map(|s| s.to_string())
        .chain([url.to_string()])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_commands() {
        assert_eq!(with_url("firefox", "u"), ["firefox", "u"]);
        assert_eq!(
            with_url("node b.js %s --x", "u"),
            ["node", "b.js", "u", "--x"]
        );
    }
}
