//! References to environment variables in config values, and `~` in paths.
//!
//! [`interpolate`] resolves exactly the forms pi-mcp-adapter resolves (`${VAR}`, `$env:VAR`,
//! `{env:VAR}`): the cache hash depends on it. [`expand`] is what values take effect with: it
//! also resolves the forms other tools write in the files we import, `${VAR:-default}` (Claude
//! Code) and `${env:VAR}` (VS Code, Cursor, Windsurf).

use std::collections::HashMap;
use std::path::PathBuf;

/// The environment servers inherit and `${VAR}` reads.
pub type Env = HashMap<String, String>;

// The forms are scanned for by hand: every config value goes through them when a config opens,
// and a regular expression would compile and run the `regex` engine there (its code and tables
// in the session's memory) for four fixed shapes.

/// A reference at the start of a text: the bytes it takes and what it says.
type Found<'a> = Option<(usize, Reference<'a>)>;

enum Reference<'a> {
    /// `${VAR}`, `$env:VAR`, `{env:VAR}`, `${env:VAR}`.
    Plain(&'a str),
    /// `${VAR:-default}` (`colon`: also for an empty value) and `${VAR-default}`.
    Default {
        name: &'a str,
        colon: bool,
        default: &'a str,
    },
}

/// The length of the variable name `text` starts with: `[A-Za-z_][A-Za-z0-9_]*`.
fn name_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => bytes
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count(),
        _ => 0,
    }
}

/// `text` starting with `open`, a name, then `close` (may be empty): the bytes and the name.
fn enclosed<'a>(text: &'a str, open: &str, close: &str) -> Option<(usize, &'a str)> {
    let rest = text.strip_prefix(open)?;
    let n = name_len(rest);
    (n > 0 && rest[n..].starts_with(close)).then(|| (open.len() + n + close.len(), &rest[..n]))
}

/// pi-mcp-adapter's forms: `${VAR}`, `$env:VAR`, `{env:VAR}`.
fn adapter_form(text: &str) -> Found<'_> {
    enclosed(text, "${", "}")
        .or_else(|| enclosed(text, "$env:", ""))
        .or_else(|| enclosed(text, "{env:", "}"))
        .map(|(len, name)| (len, Reference::Plain(name)))
}

/// The other tools' forms: `${VAR:-default}`, `${VAR-default}` and `${env:VAR}`.
fn extended_form(text: &str) -> Found<'_> {
    let rest = text.strip_prefix("${")?;
    let n = name_len(rest);
    let after = &rest[n..];
    let dash = if after.starts_with(":-") {
        2
    } else {
        usize::from(after.starts_with('-'))
    };
    if n > 0 && dash > 0 {
        if let Some(end) = after[dash..].find('}') {
            let default = &after[dash..dash + end];
            let name = &rest[..n];
            return Some((
                2 + n + dash + end + 1,
                Reference::Default {
                    name,
                    colon: dash == 2,
                    default,
                },
            ));
        }
    }
    enclosed(text, "${env:", "}").map(|(len, name)| (len, Reference::Plain(name)))
}

/// `text` with each reference `find` finds (leftmost first, not overlapping) replaced by `with`.
fn replace_all<'a>(
    text: &'a str,
    find: fn(&'a str) -> Found<'a>,
    mut with: impl FnMut(Reference<'a>) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut at, mut copied) = (0, 0);
    while at < text.len() {
        if let Some((len, found)) = find(&text[at..]) {
            out.push_str(&text[copied..at]);
            out.push_str(&with(found));
            at += len;
            copied = at;
        } else {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Replaces every pi-mcp-adapter reference with the variable's value; unset variables become empty.
pub fn interpolate(text: &str, env: &Env) -> String {
    interpolate_reporting(text, env).0
}

/// Like [`interpolate`], and also returns the names of the unset variables it met.
fn interpolate_reporting(text: &str, env: &Env) -> (String, Vec<String>) {
    let mut missing = Vec::new();
    let out = replace_all(text, adapter_form, |found| match found {
        Reference::Plain(name) | Reference::Default { name, .. } => lookup(name, env, &mut missing),
    });
    (out, missing)
}

/// Every reference form resolved; unset variables without a default become empty.
pub fn expand(text: &str, env: &Env) -> String {
    expand_reporting(text, env).0
}

/// Like [`expand`], and also returns the names of the unset variables that had no default.
pub fn expand_reporting(text: &str, env: &Env) -> (String, Vec<String>) {
    let mut missing = Vec::new();
    let first = replace_all(text, extended_form, |found| match found {
        Reference::Plain(name) => lookup(name, env, &mut missing),
        // `:-` also replaces an empty value, `-` only an unset one (as in a POSIX shell).
        Reference::Default {
            name,
            colon,
            default,
        } => match env.get(name) {
            Some(value) if !(value.is_empty() && colon) => value.clone(),
            _ => default.to_string(),
        },
    });
    let (out, more) = interpolate_reporting(&first, env);
    missing.extend(more);
    (out, missing)
}

fn lookup(name: &str, env: &Env, missing: &mut Vec<String>) -> String {
    match env.get(name) {
        Some(value) => value.clone(),
        None => {
            missing.push(name.to_string());
            String::new()
        }
    }
}

/// The names of the variables `text` refers to, in any form [`expand`] resolves.
pub fn references(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for find in [extended_form, adapter_form] {
        replace_all(text, find, |found| {
            let (Reference::Plain(name) | Reference::Default { name, .. }) = found;
            names.push(name.to_string());
            String::new()
        });
    }
    names.sort();
    names.dedup();
    names
}

/// A path with references expanded and a leading `~` replaced by `HOME`.
pub fn expand_path(text: &str, env: &Env) -> PathBuf {
    PathBuf::from(expand_home(text, env))
}

/// References expanded, and `~` or a leading `~/` replaced by `HOME` (as a shell would, and Pi
/// does for `command`, `args` and `cwd`).
pub fn expand_home(text: &str, env: &Env) -> String {
    let text = expand(text, env);
    let home = env.get("HOME").filter(|h| !h.is_empty());
    match (text.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        [("HOME", "/home/u"), ("TOKEN", "s3"), ("EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn adapter_forms() {
        let env = env();
        assert_eq!(interpolate("Bearer ${TOKEN}", &env), "Bearer s3");
        assert_eq!(interpolate("$env:TOKEN/{env:TOKEN}", &env), "s3/s3");
        assert_eq!(interpolate("$TOKEN ${ not}", &env), "$TOKEN ${ not}");
        let (out, missing) = interpolate_reporting("a${NOPE}b", &env);
        assert_eq!((out.as_str(), missing), ("ab", vec!["NOPE".to_string()]));
        // What pi-mcp-adapter hashes: the forms it does not know stay (mostly) as written.
        assert_eq!(interpolate("${TOKEN:-x}", &env), "${TOKEN:-x}");
        assert_eq!(interpolate("${env:TOKEN}", &env), "$s3");
    }

    #[test]
    fn other_tools_forms() {
        let env = env();
        assert_eq!(expand("${env:TOKEN}", &env), "s3");
        assert_eq!(expand("${TOKEN:-d}|${NOPE:-d}|${EMPTY:-d}", &env), "s3|d|d");
        assert_eq!(
            expand("${EMPTY-d}|${NOPE-}|${NOPE:-a b/c}", &env),
            "||a b/c"
        );
        assert_eq!(expand("${TOKEN} $env:TOKEN", &env), "s3 s3");
        let (out, missing) = expand_reporting("${env:NOPE}${NOPE:-fine}${GONE}", &env);
        assert_eq!(out, "fine");
        assert_eq!(missing, ["NOPE", "GONE"]);
    }

    #[test]
    fn edges_of_the_forms() {
        let env = env();
        assert_eq!(
            expand("é${TOKEN}ü{env:TOKEN}$env:TOKEN.x", &env),
            "és3üs3s3.x"
        );
        assert_eq!(expand("${A:-x ${NOPE-y", &env), "${A:-x ${NOPE-y");
        assert_eq!(expand("${NOPE:-a}}", &env), "a}");
        assert_eq!(
            expand("${TOKEN-}${NOPE-}|${:-x}|${1A}|$env:|{env:}|${env:}", &env),
            "s3|${:-x}|${1A}|$env:|{env:}|${env:}"
        );
        assert_eq!(expand("${env:-x}${env:TOKEN}", &env), "xs3");
        assert_eq!(interpolate("$$env:TOKEN{{env:TOKEN}}", &env), "$s3{s3}");
    }

    #[test]
    fn references_in_every_form() {
        assert_eq!(
            references("${A}/$env:B/{env:C}/${D:-x}/${env:E}/${A}/$F"),
            ["A", "B", "C", "D", "E"]
        );
        assert!(references("plain").is_empty());
    }

    #[test]
    fn paths() {
        let env = env();
        assert_eq!(expand_path("~/srv", &env), PathBuf::from("/home/u/srv"));
        assert_eq!(expand_path("~", &env), PathBuf::from("/home/u"));
        assert_eq!(expand_path("~other/x", &env), PathBuf::from("~other/x"));
        assert_eq!(expand_path("${HOME}/x", &env), PathBuf::from("/home/u/x"));
    }
}
