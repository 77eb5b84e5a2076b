//! Reading one config file (JSON with comments, or TOML) into a JSON value, with a diagnostic
//! that says where a syntax error is.

use super::{jsonc, locate, Diagnostic, Level};
use pi_mcp_connection::bounded_read::{self, FileLimits};
use serde_json::Value;
use std::path::Path;

pub enum Read {
    Missing,
    /// Empty, or only comments: treated as absent.
    Blank,
    /// Unreadable or not valid; a diagnostic says why.
    Invalid,
    Parsed {
        value: Value,
        text: String,
    },
}

/// How a config file comes to be read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Looked for where configs live: read only if it is a regular file.
    Found,
    /// Named by the user (`--config`): must exist, and may be a pipe (`<(…)`, `/dev/stdin`).
    Given,
}

/// Reads `path` within the config size cap.
pub fn read(
    path: &Path,
    origin: Origin,
    limits: &FileLimits,
    diagnostics: &mut Vec<Diagnostic>,
) -> Read {
    let mut problem = |line: Option<usize>, message: String| {
        diagnostics.push(Diagnostic {
            line,
            ..Diagnostic::in_file(Level::Error, path, None, message)
        });
        Read::Invalid
    };
    let bytes = match origin {
        Origin::Found => bounded_read::found(path, limits.config_bytes),
        Origin::Given => bounded_read::given(path, limits.config_bytes, limits.pipe_timeout),
    };
    let text = match bytes.map(String::from_utf8) {
        Ok(Ok(text)) => text.trim_start_matches('\u{feff}').to_string(),
        Ok(Err(_)) => {
            return problem(
                None,
                "the config file is not UTF-8 text; its servers are not loaded".into(),
            )
        }
        Err(e) if e.is_missing() && origin == Origin::Found => return Read::Missing,
        Err(e) => {
            return problem(
                None,
                format!("the config file {e}; its servers are not loaded"),
            )
        }
    };
    let parsed = match path.extension().is_some_and(|e| e == "toml") {
        true => parse_toml(text),
        false => parse_jsonc(text),
    };
    parsed.unwrap_or_else(|(line, message)| problem(line, message))
}

/// Why a text does not parse: the line, and a message.
type Problem = (Option<usize>, String);

fn parse_toml(text: String) -> Result<Read, Problem> {
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(Read::Blank);
    }
    match toml::from_str::<Value>(&text) {
        Ok(value) => Ok(Read::Parsed { value, text }),
        Err(e) => {
            let line = e.span().map(|span| locate::line_at(&text, span.start));
            let why = e.message().trim().to_string();
            let message =
                format!("invalid TOML: {why}; its servers are not loaded until it is fixed");
            Err((line, message))
        }
    }
}

fn parse_jsonc(text: String) -> Result<Read, Problem> {
    if jsonc::is_blank(&text) {
        return Ok(Read::Blank);
    }
    match serde_json::from_str::<Value>(&jsonc::strip(&text)) {
        Ok(value) => Ok(Read::Parsed { value, text }),
        Err(e) => {
            // The line goes in front of the message; serde_json also appends it.
            let full = e.to_string();
            let why = full.split(" at line ").next().unwrap_or(&full);
            let message = format!(
                "invalid JSON at column {}: {why}; its servers are not loaded until it is fixed",
                e.column()
            );
            Err((Some(e.line()), message))
        }
    }
}
