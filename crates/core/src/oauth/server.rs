//! One server's OAuth context: its configuration, its key in the store, and what is stored
//! for it.

use super::http::Http;
use super::store::{ServerKey, State, Store, StoreError, Tokens};
use super::token::Client;
use super::{legacy, now_ms, OAuthError};
use crate::config::{Env, Grant, OAuthConfig, RunContext};
use pi_mcp_connection::secret::Secret;
use std::path::{Path, PathBuf};
use url::Url;

pub struct Server {
    pub name: String,
    pub url: Url,
    pub key: ServerKey,
    pub config: OAuthConfig,
    pub store: Store,
    pub http: Http,
    pub env: Env,
    /// Where a `!command` client secret runs.
    cwd: PathBuf,
    /// Size cap of pi-mcp-adapter's token files.
    pub file_limit: u64,
}

/// Where a server's OAuth runs: the agent dir (the store), the session's directory and
/// environment, the server's `caFile`, and the cap on token files read.
pub struct Place<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    pub env: &'a Env,
    pub ca_file: Option<&'a Path>,
    pub file_limit: u64,
}

/// Where a server's sign-in stands (never the token itself).
#[derive(Clone, Debug, PartialEq)]
pub enum AuthStatus {
    SignedOut,
    /// `expires_at`: epoch ms; `refreshable`: a refresh token (or client credentials) renews it.
    SignedIn {
        expires_at: Option<f64>,
        refreshable: bool,
    },
    /// Expired and nothing renews it.
    Expired,
}

impl Server {
    /// `protocol_version`: sent with metadata requests.
    pub fn new(
        name: &str,
        url: &Secret,
        config: &OAuthConfig,
        place: Place<'_>,
        protocol_version: &'static str,
    ) -> Result<Server, String> {
        let parsed = Url::parse(url.expose())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| "`url` is not an http(s) URL".to_string())?;
        Ok(Server {
            name: name.to_string(),
            key: ServerKey::new(name, url.expose())?,
            url: parsed,
            config: config.clone(),
            store: Store::new(place.agent_dir),
            http: Http::new(place.ca_file, protocol_version)?,
            env: place.env.clone(),
            cwd: place.cwd.to_path_buf(),
            file_limit: place.file_limit,
        })
    }

    pub fn load(&self) -> Result<Option<State>, OAuthError> {
        self.store.load(&self.key).map_err(store_error)
    }

    pub fn update<R>(&self, change: impl FnOnce(&mut State) -> R) -> Result<R, OAuthError> {
        self.store.update(&self.key, change).map_err(store_error)
    }

    /// The tokens to use: Pi's store first, then pi-mcp-adapter's token files.
    pub fn tokens(&self) -> Result<Option<Tokens>, OAuthError> {
        if let Some(tokens) = self.load()?.and_then(|s| s.tokens()) {
            return Ok(Some(tokens));
        }
        legacy::read(
            self.store.agent_dir(),
            &self.name,
            self.key.server_url.as_str(),
            self.file_limit,
        )
        .map_err(OAuthError::SignInRequired)
    }

    pub fn status(&self) -> Result<AuthStatus, OAuthError> {
        let Some(tokens) = self.tokens()? else {
            return Ok(AuthStatus::SignedOut);
        };
        let refreshable = tokens.refresh.is_some() || self.config.grant == Grant::ClientCredentials;
        if tokens.expiring(now_ms(), 0.0) && !refreshable {
            return Ok(AuthStatus::Expired);
        }
        Ok(AuthStatus::SignedIn {
            expires_at: tokens.expires_at,
            refreshable,
        })
    }

    /// The configured client (`oauth.clientId`, its secret resolved now: `!command` runs).
    pub async fn configured_client(&self) -> Result<Option<Client>, OAuthError> {
        let Some(id) = self.config.client_id.clone() else {
            return Ok(None);
        };
        let ctx = RunContext {
            env: &self.env,
            cwd: &self.cwd,
        };
        let secret = match &self.config.client_secret {
            None => None,
            Some(value) => Some(
                value
                    .resolve("oauth.clientSecret", &ctx)
                    .await
                    .map_err(|e| OAuthError::Failed(e.to_string()))?,
            ),
        };
        Ok(Some(Client {
            id,
            secret,
            method_hint: None,
        }))
    }
}

pub fn store_error(e: StoreError) -> OAuthError {
    OAuthError::Failed(e.to_string())
}
