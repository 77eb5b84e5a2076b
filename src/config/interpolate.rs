//! References to environment variables in config values, and `~` in paths.
//!
//! [`interpolate`] resolves exactly the forms pi-mcp-adapter resolves (`${VAR}`, `$env:VAR`,
//! `{env:VAR}`): the cache hash depends on it. [`expand`] is what values take effect with: it
//! also resolves the forms other tools write in the files we import, `${VAR:-default}` (Claude
//! Code) and `${env:VAR}` (VS Code, Cursor, Windsurf).

use regex::Regex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;

/// The environment servers inherit and `${VAR}` reads.
pub type Env = HashMap<String, String>;

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$env:([A-Za-z_][A-Za-z0-9_]*)|\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
        .expect("valid pattern")
});

/// `${VAR:-default}`, `${VAR-default}` and `${env:VAR}`.
static EXTENDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{(?:([A-Za-z_][A-Za-z0-9_]*)(:?-)([^}]*)|env:([A-Za-z_][A-Za-z0-9_]*))\}")
        .expect("valid pattern")
});

/// Replaces every pi-mcp-adapter reference with the variable's value; unset variables become empty.
pub fn interpolate(text: &str, env: &Env) -> String {
    interpolate_reporting(text, env).0
}

/// Like [`interpolate`], and also returns the names of the unset variables it met.
fn interpolate_reporting(text: &str, env: &Env) -> (String, Vec<String>) {
    let mut missing = Vec::new();
    let out = REFERENCE.replace_all(text, |caps: &regex::Captures| {
        let name = (1..=3).find_map(|i| caps.get(i)).map_or("", |m| m.as_str());
        lookup(name, env, &mut missing)
    });
    (out.into_owned(), missing)
}

/// Every reference form resolved; unset variables without a default become empty.
pub fn expand(text: &str, env: &Env) -> String {
    expand_reporting(text, env).0
}

/// Like [`expand`], and also returns the names of the unset variables that had no default.
pub fn expand_reporting(text: &str, env: &Env) -> (String, Vec<String>) {
    let mut missing = Vec::new();
    let first = EXTENDED.replace_all(text, |caps: &regex::Captures| {
        if let Some(name) = caps.get(4) {
            return lookup(name.as_str(), env, &mut missing);
        }
        let name = &caps[1];
        // `:-` also replaces an empty value, `-` only an unset one (as in a POSIX shell).
        match env.get(name) {
            Some(value) if !(value.is_empty() && &caps[2] == ":-") => value.clone(),
            _ => caps[3].to_string(),
        }
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
    let extended = EXTENDED
        .captures_iter(text)
        .filter_map(|caps| caps.get(1).or(caps.get(4)));
    let plain = REFERENCE
        .captures_iter(text)
        .filter_map(|caps| (1..=3).find_map(|i| caps.get(i)));
    let mut names: Vec<String> = extended
        .chain(plain)
        .map(|m| m.as_str().to_string())
        .collect();
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
