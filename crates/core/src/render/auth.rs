//! Texts about credentials: what a server that wants them needs, and `/mcp-auth`.

use super::duration;
use crate::oauth::BrowserStep;
use pi_mcp_connection::clean::Link;
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
    /// OAuth: `login` is the command that signs in (`/mcp login x` in Pi, `pi-mcp auth x` in a
    /// terminal); `store` holds the sign-in (Pi's `mcp-auth.json`).
    OAuth {
        login: String,
        store: PathBuf,
    },
    /// Pi's `auth: {"provider": …}`: the credential of one of Pi's providers.
    Provider(String),
}

/// A needs-auth failure: the reason, then the fix.
pub fn needs_auth(server: &str, why: &str, kind: &AuthKind) -> String {
    let fix = match kind {
        AuthKind::Local | AuthKind::None => {
            "Give it credentials in its config (`\"auth\": \"bearer\"` with `bearerTokenEnv`, or `headers`)".to_string()
        }
        AuthKind::Bearer { env_var: Some(var) } => format!("Set {var} to a valid token"),
        AuthKind::Bearer { env_var: None } => "Fix its `bearerToken`".to_string(),
        AuthKind::OAuth { login, .. } => {
            return format!("needs sign-in: {why}. Sign in with `{login}`; the next call uses the new sign-in.")
        }
        AuthKind::Provider(provider) => format!("Sign in to {provider} in Pi with /login {provider}"),
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
             - or any header: \"headers\": {{ \"X-Api-Key\": \"${{MY_KEY}}\" }}"
        ),
        AuthKind::Bearer { env_var: Some(var) } => format!(
            "\"{server}\" sends `Authorization: Bearer <token>` with the token from the environment variable {var}. Set it before starting Pi (export {var}=...)."
        ),
        AuthKind::Bearer { env_var: None } => format!(
            "\"{server}\" sends `Authorization: Bearer <token>` with its `bearerToken`. Put the token there (\"${{VAR}}\" reads it from the environment)."
        ),
        AuthKind::Provider(provider) => format!(
            "\"{server}\" sends `Authorization: Bearer <credential>` with the credential Pi holds for the provider \"{provider}\" (`auth.provider`), read at each connect. Sign in with /login {provider} in Pi; outside Pi (pi-mcp) this server cannot be used."
        ),
        AuthKind::OAuth { login, store } => format!(
            "\"{server}\" signs in with OAuth when it asks for credentials. Sign in with `{login}` (a browser opens; over SSH, paste the address it ends on). The sign-in is kept in {} and shared with Pi's own MCP (`pi mcp login {server}` signs in here too); sign out with `{}`.",
            store.display(),
            login.replace(" login ", " logout ").replace(" auth ", " logout ")
        ),
    };
    match failing {
        Some(why) => out.push_str(&format!("\n\nNow: {}", why)),
        None => out.push_str("\n\nNow: no authentication problem is known."),
    }
    out.push_str(&format!(
        "\nThen reconnect: /mcp reconnect {server} (or mcp({{ connect: \"{server}\" }}))."
    ));
    out
}

/// Where the sign-in continues: the authorization page (a look-alike host beside its ASCII form),
/// and what to do when no browser shows it.
pub fn sign_in_url(server: &str, url: &Link, step: &BrowserStep) -> String {
    let url = url.shown();
    let step = match step {
        BrowserStep::Opened(command) => format!("It was opened with {command}."),
        BrowserStep::NotOpened(why) => format!("No browser was opened ({why})."),
        BrowserStep::PasteRefused(why) => {
            format!("What was pasted did not finish the sign-in: {why}. It still waits.")
        }
    };
    format!(
        "Sign in to \"{server}\" in a browser:\n  {url}\n{step} On another machine (over SSH), open the address there and paste the address the browser ends on (or the code) here."
    )
}

/// The question when asking for a pasted redirect.
pub fn paste_prompt(server: &str) -> String {
    format!(
        "Paste the address the browser ended on (or the code) to finish signing in to \"{server}\""
    )
}

/// A sign-in ended before its browser step completed (Esc at the paste prompt, the session closing).
pub fn sign_in_cancelled(server: &str) -> String {
    format!("Signing in to \"{server}\" was cancelled; nothing was saved.")
}

/// `expires_in_secs`: `None` when the token has no stated lifetime.
pub fn signed_in(server: &str, expires_in_secs: Option<u64>, tools: usize) -> String {
    let expiry = match expires_in_secs {
        Some(secs) => format!(", the access token expires in {}", duration(secs)),
        None => String::new(),
    };
    format!(
        "Signed in to \"{server}\"{expiry}; {} available.",
        super::plural(tools, "tool")
    )
}

/// A server's sign-in as status shows it (never a token).
pub fn sign_in_state(signed_in: bool, expires_in_secs: Option<i64>, renewable: bool) -> String {
    match (signed_in, expires_in_secs) {
        (false, _) => "not signed in".into(),
        (true, Some(secs)) if secs <= 0 && renewable => "signed in (renewed on next use)".into(),
        (true, Some(secs)) if secs <= 0 => "sign-in expired".into(),
        (true, Some(secs)) => format!("signed in, expires in {}", duration(secs as u64)),
        (true, None) => "signed in".into(),
    }
}

/// Why a server needs sign-in after a sign-out.
pub fn signed_out_reason() -> String {
    "signed out, its tokens were deleted".into()
}

/// `pi-mcp logout` / `/mcp logout`.
pub fn signed_out(server: &str, removed: bool, revocation: Option<&Result<(), String>>) -> String {
    if !removed {
        return format!("\"{server}\" had no stored sign-in.");
    }
    match revocation {
        Some(Ok(())) => format!("Signed out of \"{server}\": the tokens were revoked at the authorization server and deleted."),
        Some(Err(why)) => format!("Signed out of \"{server}\": the tokens were deleted, but revoking them at the authorization server failed ({why}); they stay valid there until they expire."),
        None => format!("Signed out of \"{server}\": the tokens were deleted (the authorization server offers no revocation)."),
    }
}
