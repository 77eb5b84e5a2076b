//! OAuth 2.1 for remote MCP servers (the MCP authorization spec of 2025-11-25 and 2026-07-28):
//! discovery, the checks, client identity, the browser sign-in with PKCE, refresh, client
//! credentials and sign-out. Credentials live in Pi's own store, so a sign-in made by Pi is
//! ours too and the other way round.
//!
//! Written here rather than on rmcp's `auth` feature: rmcp keeps credentials as its own
//! `StoredCredentials` (no registered client secret, no authorization server binding, no
//! discovery cache), which cannot round-trip Pi's `mcp-auth.json` entries, and its manager has
//! no revocation, no hook for Pi's refresh lock protocol beside its own guard, and errors we
//! could not turn into messages naming the failed check.

mod callback;
mod client;
mod discovery;
mod flow;
mod http;
mod legacy;
mod lock;
mod metadata;
pub use metadata::is_loopback;
mod pkce;
mod refresh;
mod server;
mod store;
mod token;

#[cfg(test)]
mod tests;

pub use callback::Response as AuthorizationResponse;
pub use flow::{sign_in, sign_out, BrowserStep, SignIn, SignOut, SignedIn};
pub use metadata::Challenge;
use pi_mcp_connection::unix_time::now_ms;
pub use refresh::Access;
pub use server::{AuthStatus, Place, Server};
pub use store::{ServerKey, Store, FILE_NAME as STORE_FILE};

/// Why an OAuth step did not work out.
#[derive(Clone, Debug, PartialEq)]
pub enum OAuthError {
    /// Only a (new) sign-in helps: no tokens, a refused refresh, a client the server forgot.
    SignInRequired(String),
    /// Stopped: a check failed, a server misbehaved or could not be reached.
    Failed(String),
    /// Nobody completed the browser step in time.
    TimedOut,
    Cancelled,
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // What an authorization server wrote is in it.
            OAuthError::SignInRequired(why) | OAuthError::Failed(why) => {
                f.write_str(&pi_mcp_connection::clean::text(why))
            }
            OAuthError::TimedOut => write!(
                f,
                "the sign-in was not completed within {} minutes",
                flow::BROWSER_WAIT.as_secs() / 60
            ),
            OAuthError::Cancelled => f.write_str("the sign-in was cancelled"),
        }
    }
}
