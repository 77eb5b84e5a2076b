//! Keeping a server's access token usable while connections run: the token in memory, re-read
//! (a short file-locked read) when the store changes (a sign-in or refresh by another process, Pi's included), refreshed
//! shortly before it expires and when the server refuses it. A refresh takes Pi's per-server
//! refresh lock and re-reads the store under it, so when several processes find the same
//! token expiring, one refreshes and the others use its result.

use super::discovery;
use super::flow;
use super::lock;
use super::metadata::{self, ServerMetadata};
use super::server::Server;
use super::store::{State, Tokens};
use super::token::{self, Endpoint, Grant, TokenError};
use super::{client, now_ms, OAuthError};
use crate::config::Grant as GrantType;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use pi_mcp_connection::pool::{display_url, Credentials};
use pi_mcp_connection::secret::Secret;
use serde_json::Value;
use std::sync::Arc;
use std::time::SystemTime;
use url::Url;

/// Renew this long before the token expires (as Pi does), or at half its lifetime when that is
/// shorter: a token issued for 20 s is not renewed at once.
const SKEW_MS: f64 = 30_000.0;

fn margin(tokens: &Tokens) -> f64 {
    tokens
        .lifetime
        .map_or(SKEW_MS, |lifetime| SKEW_MS.min(lifetime / 2.0))
}

type Stamp = Option<(SystemTime, u64)>;

/// The credentials of one server for its connections.
pub struct Access {
    server: Arc<Server>,
    /// The tokens last read and the store's stamp then.
    cached: Mutex<Option<(Option<Tokens>, Stamp)>>,
    /// One refresh at a time in this process.
    refreshing: tokio::sync::Mutex<()>,
    /// Why the last renewal failed, for the message of a refused request.
    problem: Mutex<Option<OAuthError>>,
}

impl Access {
    pub fn new(server: Arc<Server>) -> Access {
        Access {
            server,
            cached: Mutex::new(None),
            refreshing: tokio::sync::Mutex::new(()),
            problem: Mutex::new(None),
        }
    }

    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The tokens as stored now (read again only when the store file changed).
    fn tokens(&self) -> Result<Option<Tokens>, OAuthError> {
        let stamp = self.server.store.stamp();
        if let Some((tokens, seen)) = &*self.cached.lock() {
            if *seen == stamp && stamp.is_some() {
                return Ok(tokens.clone());
            }
        }
        let tokens = self.server.tokens()?;
        *self.cached.lock() = Some((tokens.clone(), stamp));
        Ok(tokens)
    }

    /// Reads the store again on next use (after a sign-in or sign-out).
    pub fn reload(&self) {
        *self.cached.lock() = None;
    }

    /// Why the credentials could not be renewed last time (cleared by a success).
    pub fn problem(&self) -> Option<OAuthError> {
        self.problem.lock().clone()
    }

    fn note<T>(&self, result: Result<T, OAuthError>) -> Result<T, OAuthError> {
        *self.problem.lock() = result.as_ref().err().cloned();
        result
    }

    /// The `Authorization` value for the next request; renewed first when it is about to
    /// expire. `None` when not signed in.
    pub async fn current(&self) -> Result<Option<Secret>, OAuthError> {
        let tokens = self.tokens()?;
        let renewable = |t: &Tokens| {
            t.refresh.is_some() || self.server.config.grant == GrantType::ClientCredentials
        };
        match tokens {
            Some(t) if t.expiring(now_ms(), margin(&t)) && renewable(&t) => {
                match self.renew(Some(&t.access)).await {
                    Ok(fresh) => Ok(Some(fresh.bearer())),
                    // Still valid for a few seconds: use it; the server decides.
                    Err(_) if !t.expiring(now_ms(), 0.0) => Ok(Some(t.bearer())),
                    Err(e) => Err(e),
                }
            }
            // Expired, and nothing renews it: not sent (the server's refusal asks for a sign-in).
            Some(t) if t.expiring(now_ms(), 0.0) => Ok(None),
            Some(t) => Ok(Some(t.bearer())),
            None if self.server.config.grant == GrantType::ClientCredentials
                && self
                    .server
                    .load()?
                    .and_then(|s| s.discovery().cloned())
                    .is_some() =>
            {
                Ok(Some(self.renew(None).await?.bearer()))
            }
            None => Ok(None),
        }
    }

    /// The server refused `sent` (HTTP 401): a token to retry with, renewed unless the store
    /// already holds a newer one; `None` when there is no sign-in to renew. `SignInRequired`
    /// when only a new sign-in helps.
    pub async fn rejected(&self, sent: Option<&Secret>) -> Result<Option<Secret>, OAuthError> {
        self.reload();
        let stored = self.tokens()?;
        let machine = self.server.config.grant == GrantType::ClientCredentials;
        let expired = stored
            .as_ref()
            .is_some_and(|t| t.expiring(now_ms(), 0.0) && t.refresh.is_none());
        match &stored {
            None if !machine => return Ok(None),
            _ if expired && !machine => return Ok(None),
            Some(t) if !expired && sent.map(Secret::expose) != Some(t.bearer().expose()) => {
                return Ok(Some(t.bearer()))
            }
            _ => {}
        }
        let access = stored.map(|t| t.access);
        Ok(Some(self.renew(access.as_ref()).await?.bearer()))
    }

    /// A new token in place of `stale` (`None`: none yet), unless another process already
    /// stored one.
    async fn renew(&self, stale: Option<&Secret>) -> Result<Tokens, OAuthError> {
        let renewed = self.renew_once(stale).await;
        self.note(renewed)
    }

    async fn renew_once(&self, stale: Option<&Secret>) -> Result<Tokens, OAuthError> {
        let _one = self.refreshing.lock().await;
        let server = &self.server;
        let lock_path = server.key.refresh_lock(server.store.agent_dir());
        pi_mcp_connection::atomic_file::create_private_dir(server.store.agent_dir())
            .map_err(|e| OAuthError::Failed(e.to_string()))?;
        let _lock = lock::acquire(&lock_path, lock::REFRESH)
            .await
            .map_err(|e| {
                OAuthError::Failed(format!(
                    "cannot refresh the sign-in of \"{}\": {e}",
                    server.name
                ))
            })?;
        self.reload();
        let state = server.load()?;
        let tokens = state.as_ref().and_then(State::tokens);
        if let Some(t) = &tokens {
            // Another process renewed it while we waited for the lock: use its token.
            let replaced = stale.map(Secret::expose) != Some(t.access.expose());
            if replaced && !t.expiring(now_ms(), 0.0) {
                return Ok(t.clone());
            }
        }
        let renewed = match server.config.grant {
            GrantType::ClientCredentials => self.client_credentials(state.as_ref()).await,
            GrantType::AuthorizationCode => self.refresh(state.as_ref(), tokens.as_ref()).await,
        };
        self.reload();
        renewed
    }

    async fn client_credentials(&self, state: Option<&State>) -> Result<Tokens, OAuthError> {
        let server = &self.server;
        let discovered = match state.and_then(|s| cached_metadata(s, &server.url)) {
            Some(discovered) => discovered,
            None => discover(server).await?,
        };
        let client = flow::machine_client(server, &discovered).await?;
        let scope = state
            .and_then(State::tokens)
            .and_then(|t| t.scope)
            .or_else(|| server.config.scope.clone());
        let issued = flow::machine_token(server, &discovered, &client, scope.as_deref()).await?;
        server
            .update(|s| {
                s.set_tokens(&issued, scope.as_deref(), now_ms());
                s.set_discovery(discovered.to_pi());
                s.tokens()
            })?
            .ok_or_else(|| OAuthError::Failed("the new tokens were not stored".into()))
    }

    async fn refresh(
        &self,
        state: Option<&State>,
        tokens: Option<&Tokens>,
    ) -> Result<Tokens, OAuthError> {
        let server = &self.server;
        let name = &server.name;
        let refresh_token = tokens.and_then(|t| t.refresh.clone()).ok_or_else(|| {
            OAuthError::SignInRequired(match tokens {
                Some(_) => format!("the sign-in to \"{name}\" expired and cannot be renewed (no refresh token); sign in again"),
                None => format!("\"{name}\" needs a sign-in"),
            })
        })?;
        let state = state.expect("tokens come from a state");
        let discovered = match cached_metadata(state, &server.url) {
            Some(discovered) => discovered,
            None => discover(server).await?,
        };
        let client = match server.configured_client().await? {
            Some(client) => client,
            None => state.client().and_then(client::stored).ok_or_else(|| {
                OAuthError::SignInRequired(format!(
                    "the sign-in to \"{name}\" expired, and the client it was made with is not stored, so it cannot be renewed; sign in again"
                ))
            })?,
        };
        let endpoint = Endpoint {
            url: &discovered.server.token_endpoint,
            client: &client,
            methods: &discovered.server.token_auth_methods,
        };
        let resource = discovered.resource_param(&server.url);
        let grant = Grant::Refresh {
            token: &refresh_token,
        };
        match token::request(&server.http, &endpoint, grant, Some(&resource)).await {
            Ok(issued) => server
                .update(|s| {
                    s.set_tokens(&issued, None, now_ms());
                    s.tokens()
                })?
                .ok_or_else(|| OAuthError::Failed("the new tokens were not stored".into())),
            Err(TokenError::Refused { code, description })
                if matches!(
                    code.as_str(),
                    "invalid_grant" | "invalid_client" | "unauthorized_client"
                ) =>
            {
                server.update(|s| {
                    s.clear_tokens();
                    if code != "invalid_grant" {
                        s.clear_client();
                    }
                })?;
                let detail = description.map(|d| format!(": {d}")).unwrap_or_default();
                Err(OAuthError::SignInRequired(format!(
                    "the authorization server refused to renew the sign-in to \"{name}\" ({code}{detail}); sign in again"
                )))
            }
            Err(e) => Err(OAuthError::Failed(format!(
                "renewing the sign-in to \"{name}\" at {} failed: {e}",
                display_url(discovered.server.token_endpoint.as_str())
            ))),
        }
    }
}

impl Credentials for Access {
    fn current(&self) -> BoxFuture<'_, Option<Secret>> {
        Box::pin(async move {
            let current = self.current().await;
            self.note(current).ok().flatten()
        })
    }

    fn rejected<'a>(&'a self, sent: Option<&'a Secret>) -> BoxFuture<'a, Option<Secret>> {
        Box::pin(async move { self.rejected(sent).await.ok().flatten() })
    }
}

async fn discover(server: &Server) -> Result<discovery::Discovered, OAuthError> {
    discovery::discover(
        &server.http,
        &server.url,
        None,
        discovery::Options {
            metadata_url: server.config.auth_server_metadata_url.as_deref(),
            skip_issuer_check: server.config.skip_issuer_metadata_validation,
        },
    )
    .await
    .map_err(OAuthError::Failed)
}

/// The discovery Pi (or we) stored with the state, checked as if fetched.
fn cached_metadata(state: &State, server_url: &Url) -> Option<discovery::Discovered> {
    let cached = state.discovery()?;
    let issuer = state.issuer()?;
    let from = Url::parse(issuer).ok()?;
    let server: ServerMetadata =
        metadata::server_metadata(cached.get("authorizationServerMetadata")?, &from).ok()?;
    let resource = cached
        .get("resourceMetadata")
        .filter(|v| v.is_object())
        .and_then(|v| metadata::resource_metadata(v, server_url).ok());
    Some(discovery::Discovered {
        authorization_server: cached
            .get("authorizationServerUrl")
            .and_then(Value::as_str)
            .unwrap_or(issuer)
            .to_string(),
        resource_metadata_url: cached
            .get("resourceMetadataUrl")
            .and_then(Value::as_str)
            .and_then(|u| Url::parse(u).ok()),
        resource,
        server,
    })
}
