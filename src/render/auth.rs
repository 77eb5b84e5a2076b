//! Texts about credentials: what a server that wants them needs, and `/mcp-auth`.

use std::path::PathBuf;

/// A server's `auth` as the texts need it (never the secret itself).
#[derive(Clone, Debug, PartialEq)]
pub enum AuthKind {
    /// A stdio server: no HTTP credentials.
    Local,
    /// A remote server without `auth`.
    None,
    Bearer {
        env_var: Option<String>,
    },
    OAuth {
        tokens: PathBuf,
    },
}

/// A needs-auth failure: the reason, then the fix.
pub fn needs_auth(server: &str, why: &str, kind: &AuthKind) -> String {
    let fix = match kind {
        AuthKind::Local | AuthKind::None => {
            "Give it credentials in its config (`\"auth\": \"bearer\"` with `bearerTokenEnv`, or `headers`)".to_string()
        }
        AuthKind::Bearer { env_var: Some(var) } => format!("Set {var} to a valid token"),
        AuthKind::Bearer { env_var: None } => "Fix its `bearerToken`".to_string(),
        AuthKind::OAuth { .. } => "Store a valid access token for it".to_string(),
    };
    format!("needs authentication: {why}. {fix}, then mcp({{ connect: \"{server}\" }}); /mcp-auth {server} shows how.")
}

/// `/mcp-auth` without a server: the remote servers and which need auth.
pub fn auth_usage(remote: &[(&str, bool)]) -> String {
    let mut out = "Usage: /mcp-auth <server>".to_string();
    if remote.is_empty() {
        out.push_str("\nNo remote (url) servers are configured.");
    }
    for (name, needs_auth) in remote {
        out.push_str(&format!("\n- {name}"));
        if *needs_auth {
            out.push_str(": needs auth");
        }
    }
    out
}

/// `/mcp-auth <server>`.
pub fn auth_help(server: &str, kind: &AuthKind, failing: Option<&str>) -> String {
    let mut out = match kind {
        AuthKind::Local => {
            return format!("\"{server}\" is a local (stdio) server; it needs no HTTP authentication. Pass credentials to it through `env` in its config.");
        }
        AuthKind::None => format!(
            "\"{server}\" is configured without credentials. To add them, edit its entry in mcp.json:\n\
             - a bearer token from the environment: \"auth\": \"bearer\", \"bearerTokenEnv\": \"MY_TOKEN\"\n\
             - or a fixed token: \"auth\": \"bearer\", \"bearerToken\": \"${{MY_TOKEN}}\"\n\
             - or any header: \"headers\": {{ \"X-Api-Key\": \"${{MY_KEY}}\" }}\n\
             - or an OAuth access token you obtained: \"auth\": \"oauth\", stored as below."
        ),
        AuthKind::Bearer { env_var: Some(var) } => format!(
            "\"{server}\" sends `Authorization: Bearer <token>` with the token from the environment variable {var}. Set it before starting Pi (export {var}=...)."
        ),
        AuthKind::Bearer { env_var: None } => format!(
            "\"{server}\" sends `Authorization: Bearer <token>` with its `bearerToken`. Put the token there (\"${{VAR}}\" reads it from the environment)."
        ),
        AuthKind::OAuth { tokens } => format!(
            "\"{server}\" uses OAuth with a stored access token. Obtain one from the service and write it to\n  {}\nas {{ \"access_token\": \"...\", \"token_type\": \"Bearer\", \"expires_at\": <epoch ms, optional> }}.",
            tokens.display()
        ),
    };
    if matches!(kind, AuthKind::None) {
        out.push_str(&format!(
            "\n  OAuth tokens go to <agentDir>/mcp-oauth/{}/tokens.json as {{ \"access_token\": \"...\" }}.",
            crate::path_component::component(server)
        ));
    }
    match failing {
        Some(why) => out.push_str(&format!("\n\nNow: {}", why)),
        None => out.push_str("\n\nNow: no authentication problem is known."),
    }
    out.push_str(&format!(
        "\nThen reconnect: /mcp reconnect {server} (or mcp({{ connect: \"{server}\" }}))."
    ));
    out
}
