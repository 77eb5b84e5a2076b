//! pi-mcp-adapter's plaintext token files, read (never written) so that its users' sign-ins
//! keep working: `<agentDir>/mcp-oauth/sha256-<hex>/tokens.json` (later versions) and
//! `<agentDir>/mcp-oauth/<name>/tokens.json` (older ones; a name that is not one safe path
//! component is encoded, see [`crate::path_component`]).

use super::store::Tokens;
use crate::path_component;
use pi_mcp_connection::secret::Secret;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `expires_at` values below this are seconds since the epoch, above it milliseconds.
const MILLIS_THRESHOLD: f64 = 1e11;

/// The token files that may hold the server's tokens, newest layout first.
pub fn token_files(agent_dir: &Path, name: &str) -> Vec<PathBuf> {
    let base = agent_dir.join("mcp-oauth");
    let mut files = vec![base.join(path_component::hashed(name)).join("tokens.json")];
    let own = base
        .join(&*path_component::component(name))
        .join("tokens.json");
    if !files.contains(&own) {
        files.push(own);
    }
    files
}

/// The first usable tokens stored for the server at `server_url` (tokens bound to another URL
/// are skipped); a file that is there but cannot be read or parsed is an error naming it.
pub fn read(
    agent_dir: &Path,
    name: &str,
    server_url: &str,
    limit: u64,
) -> Result<Option<Tokens>, String> {
    for file in token_files(agent_dir, name) {
        let bytes = match pi_mcp_connection::bounded_read::found(&file, limit) {
            Ok(bytes) => bytes,
            Err(e) if e.is_missing() => continue,
            Err(e) => return Err(format!("the OAuth token file {} {e}", file.display())),
        };
        let stored: Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "the OAuth token file {} is not valid JSON ({e})",
                file.display()
            )
        })?;
        if let Some(tokens) = parse(&stored, server_url) {
            return Ok(Some(tokens));
        }
    }
    Ok(None)
}

/// `{ access_token, expires_at? }` (old) or `{ serverUrl?, tokens: { accessToken, refreshToken?,
/// expiresAt?, scope? } }` (2.13 and later).
fn parse(stored: &Value, server_url: &str) -> Option<Tokens> {
    if let Some(url) = stored.get("serverUrl").and_then(Value::as_str) {
        if url.trim_end_matches('/') != server_url.trim_end_matches('/') {
            return None;
        }
    }
    let tokens = stored.get("tokens").unwrap_or(stored);
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| tokens.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let expires_at = ["expiresAt", "expires_at"]
        .iter()
        .find_map(|k| tokens.get(*k).and_then(Value::as_f64))
        .map(|at| {
            if at < MILLIS_THRESHOLD {
                at * 1000.0
            } else {
                at
            }
        });
    Some(Tokens {
        access: Secret::new(text(&["accessToken", "access_token"])?),
        refresh: text(&["refreshToken", "refresh_token"]).map(Secret::new),
        scope: text(&["scope"]),
        expires_at,
        lifetime: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_layouts_and_url_binding() {
        let url = "https://h.example/mcp";
        let old = parse(
            &json!({"access_token": "a1", "expires_at": 1_900_000_000}),
            url,
        )
        .unwrap();
        assert_eq!(old.access.expose(), "a1");
        assert_eq!(old.expires_at, Some(1_900_000_000_000.0));
        let new = json!({"serverUrl": url, "tokens": {"accessToken": "a2", "refreshToken": "r2", "expiresAt": 1_900_000_000}});
        let new = parse(&new, url).unwrap();
        assert_eq!(new.refresh.unwrap().expose(), "r2");
        let elsewhere =
            json!({"serverUrl": "https://other.example/mcp", "tokens": {"accessToken": "a3"}});
        assert!(parse(&elsewhere, url).is_none());
        assert!(parse(&json!({"refresh_token": "r"}), url).is_none());
    }

    #[test]
    fn file_names() {
        let files = token_files(Path::new("/a"), "srv");
        assert_eq!(files.len(), 2);
        assert!(files[0].to_string_lossy().contains("mcp-oauth/sha256-"));
        assert!(files[1].ends_with("mcp-oauth/srv/tokens.json"));
        let odd = token_files(Path::new("/a"), "../x");
        assert_eq!(odd.len(), 1);
        assert!(odd[0].to_string_lossy().starts_with("/a/mcp-oauth/sha256-"));
    }
}
