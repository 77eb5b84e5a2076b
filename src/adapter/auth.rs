//! Credentials of remote servers: the `Authorization` value each `auth` mode yields (a bearer
//! token from the config or the environment, or a stored OAuth access token), what to do when a
//! server wants credentials, and the `/mcp-auth` instructions.

use super::{now_ms, Adapter, ErrorCode, Outcome};
use crate::bounded_read;
use crate::config::{HttpAuth, ServerConfig, Transport};
use crate::path_component;
use crate::pool::ConnectError;
use crate::render;
use crate::secret::Secret;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `expires_at` values below this are seconds since the epoch, above it milliseconds.
const MILLIS_THRESHOLD: f64 = 1e11;

impl Adapter {
    /// The `Authorization` header value `auth` asks for; `NeedsAuth` when the credential is
    /// missing or expired.
    pub(super) fn authorization(
        &self,
        server: &str,
        auth: &HttpAuth,
    ) -> Result<Option<Secret>, ConnectError> {
        match auth {
            HttpAuth::None => Ok(None),
            HttpAuth::Bearer { token, env_var } => {
                let from_env = env_var
                    .as_ref()
                    .and_then(|var| self.env.get(var))
                    .filter(|v| !v.trim().is_empty())
                    .map(Secret::new);
                match token.clone().filter(|t| !t.is_empty()).or(from_env) {
                    Some(token) => Ok(Some(Secret::new(format!("Bearer {}", token.expose())))),
                    None => Err(ConnectError::NeedsAuth(match env_var {
                        Some(var) => format!("`bearerTokenEnv` names {var}, which is not set"),
                        None => "no bearer token is configured".to_string(),
                    })),
                }
            }
            HttpAuth::OAuth => {
                let path = self.tokens_path(server);
                stored_token(&path, self.file_limits.token_file_bytes, now_ms())
                    .map(Some)
                    .map_err(ConnectError::NeedsAuth)
            }
        }
    }

    /// `<agentDir>/mcp-oauth/<server>/tokens.json` (a name that is not one safe path component
    /// is encoded).
    fn tokens_path(&self, server: &str) -> PathBuf {
        self.agent_dir
            .join("mcp-oauth")
            .join(&*path_component::component(server))
            .join("tokens.json")
    }

    /// A needs-auth reason completed with how to fix it for this server's `auth`.
    pub(super) fn auth_fix(&self, server: &ServerConfig, why: &str) -> String {
        render::needs_auth(&server.name, why, &self.auth_kind(server))
    }

    fn auth_kind(&self, server: &ServerConfig) -> render::AuthKind {
        match &server.transport {
            Transport::Stdio { .. } => render::AuthKind::Local,
            Transport::Http { auth, .. } => match auth {
                HttpAuth::None => render::AuthKind::None,
                HttpAuth::Bearer { env_var, .. } => render::AuthKind::Bearer {
                    env_var: env_var.clone(),
                },
                HttpAuth::OAuth => render::AuthKind::OAuth {
                    tokens: self.tokens_path(&server.name),
                },
            },
        }
    }

    /// `/mcp-auth <server>`: how to give the server credentials, and where it stands now.
    pub fn auth_help(&self, name: &str) -> Outcome {
        if name.is_empty() {
            let remote: Vec<(&str, bool)> = self
                .servers
                .configs()
                .filter(|s| !s.disabled && matches!(s.transport, Transport::Http { .. }))
                .map(|s| {
                    let needs_auth = self
                        .servers
                        .failure(&s.name)
                        .is_some_and(|(_, why)| why.needs_auth());
                    (s.name.as_str(), needs_auth)
                })
                .collect();
            return Outcome::error(
                "auth",
                ErrorCode::ServerRequired,
                render::auth_usage(&remote),
            );
        }
        let server = match self.enabled_server("auth", name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        let state = self
            .servers
            .failure(name)
            .filter(|(_, cause)| cause.needs_auth())
            .map(|(_, cause)| cause.reason(name));
        Outcome::text(
            "auth",
            render::auth_help(name, &self.auth_kind(server), state.as_deref()),
        )
        .with("server", name)
        .with("needsAuth", state.is_some())
    }
}

/// The `Authorization` value of a stored OAuth token (seed format: `access_token`, optional
/// `token_type` and `expires_at`). Errors never quote the token.
fn stored_token(path: &Path, limit: u64, now_ms: f64) -> Result<Secret, String> {
    let text = bounded_read::found(path, limit).map_err(|e| {
        if e.is_missing() {
            format!("no OAuth token is stored ({} is missing)", path.display())
        } else {
            format!("the OAuth token file {} {e}", path.display())
        }
    })?;
    let stored: Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{} is not valid JSON ({e})", path.display()))?;
    let token = stored
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| format!("{} has no `access_token`", path.display()))?;
    let expires = stored
        .get("expires_at")
        .or_else(|| stored.get("expiresAt"))
        .and_then(Value::as_f64)
        .map(|at| {
            if at < MILLIS_THRESHOLD {
                at * 1000.0
            } else {
                at
            }
        });
    if expires.is_some_and(|at| at <= now_ms) {
        return Err(format!("the OAuth token in {} has expired", path.display()));
    }
    let kind = match stored.get("token_type").and_then(Value::as_str) {
        None => "Bearer".to_string(),
        Some(t) if t.eq_ignore_ascii_case("bearer") => "Bearer".to_string(),
        Some(t) => t.to_string(),
    };
    Ok(Secret::new(format!("{kind} {}", token.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: u64 = 1 << 20;

    fn write(dir: &Path, json: &str) -> PathBuf {
        let path = dir.join("tokens.json");
        std::fs::write(&path, json).unwrap();
        path
    }

    #[test]
    fn stored_tokens() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let now = 1_800_000_000_000.0;
        let path = write(&dir, r#"{"access_token":"at-1","token_type":"bearer"}"#);
        assert_eq!(
            stored_token(&path, LIMIT, now).unwrap().expose(),
            "Bearer at-1"
        );
        // Seconds and milliseconds both read as instants.
        let path = write(&dir, r#"{"access_token":"at-2","expires_at":1900000000}"#);
        assert_eq!(
            stored_token(&path, LIMIT, now).unwrap().expose(),
            "Bearer at-2"
        );
        let path = write(
            &dir,
            r#"{"access_token":"at-3","expires_at":1700000000000}"#,
        );
        let err = stored_token(&path, LIMIT, now).unwrap_err();
        assert!(
            err.contains("has expired") && !err.contains("at-3"),
            "{err}"
        );
        let err = stored_token(&path, 8, now).unwrap_err();
        assert!(
            err.ends_with("tokens.json is 50 bytes, over the 8 bytes limit"),
            "{err}"
        );
        let path = write(&dir, r#"{"refresh_token":"r"}"#);
        assert!(stored_token(&path, LIMIT, now)
            .unwrap_err()
            .contains("no `access_token`"));
        let err = stored_token(&dir.join("none.json"), LIMIT, now).unwrap_err();
        assert!(err.contains("no OAuth token is stored"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
