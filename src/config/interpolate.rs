//! `${VAR}`, `$env:VAR` and `{env:VAR}` references in config values, and `~` in paths.

use super::Env;
use regex::Regex;
use std::path::PathBuf;
use std::sync::LazyLock;

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$env:([A-Za-z_][A-Za-z0-9_]*)|\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
        .expect("valid pattern")
});

/// Replaces every reference with the variable's value; unset variables become empty.
pub fn interpolate(text: &str, env: &Env) -> String {
    interpolate_reporting(text, env).0
}

/// Like [`interpolate`], and also returns the names of the unset variables it met.
pub fn interpolate_reporting(text: &str, env: &Env) -> (String, Vec<String>) {
    let mut missing = Vec::new();
    let out = REFERENCE.replace_all(text, |caps: &regex::Captures| {
        let name = (1..=3).find_map(|i| caps.get(i)).map_or("", |m| m.as_str());
        match env.get(name) {
            Some(value) => value.clone(),
            None => {
                missing.push(name.to_string());
                String::new()
            }
        }
    });
    (out.into_owned(), missing)
}

/// A path with references interpolated and a leading `~` expanded to `HOME`.
pub fn expand_path(text: &str, env: &Env) -> PathBuf {
    let text = interpolate(text, env);
    let home = env.get("HOME").filter(|h| !h.is_empty());
    match (text.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{home}{rest}"))
        }
        _ => PathBuf::from(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        [("HOME", "/home/u"), ("TOKEN", "s3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn all_reference_forms() {
        let env = env();
        assert_eq!(interpolate("Bearer ${TOKEN}", &env), "Bearer s3");
        assert_eq!(interpolate("$env:TOKEN/{env:TOKEN}", &env), "s3/s3");
        assert_eq!(interpolate("$TOKEN ${ not}", &env), "$TOKEN ${ not}");
        let (out, missing) = interpolate_reporting("a${NOPE}b", &env);
        assert_eq!((out.as_str(), missing), ("ab", vec!["NOPE".to_string()]));
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
