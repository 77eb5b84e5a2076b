//! Signing in and out. The browser sign-in: discovery and its checks, the client identity, a
//! redirect listener, PKCE, the authorization URL (opened and shown), the response from the
//! browser or pasted by hand, the RFC 9207 `iss` and `state` checks, then the code exchange;
//! everything kept in Pi's store. Machine clients (`grantType: "client_credentials"`) skip the
//! browser.

use super::callback::{Page, Plan, Response};
use super::client::{self, Registration};
use super::discovery::{self, Discovered};
use super::metadata::{Challenge, ServerMetadata};
use super::pkce::{random_token, Pkce};
use super::server::Server;
use super::store::{Issued, State};
use super::token::{self, Client, Endpoint, Grant, TokenError};
use super::{now_ms, OAuthError};
use crate::browser;
use crate::config::{Grant as GrantType, Registration as RegistrationMode};
use pi_mcp_connection::clean::{self, Link};
use pi_mcp_connection::pool::display_url;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

/// How long the browser step may take.
pub const BROWSER_WAIT: Duration = Duration::from_secs(5 * 60);
const OFFLINE_ACCESS: &str = "offline_access";

/// Where the browser step stands when the authorization URL is shown.
#[derive(Clone, Debug, PartialEq)]
pub enum BrowserStep {
    /// The browser was started with this command.
    Opened(String),
    /// No browser was started, for this reason.
    NotOpened(String),
    /// What the user pasted did not complete the sign-in (why); it still waits.
    PasteRefused(String),
}

/// Shows the authorization URL and where its browser step stands.
pub type ShowUrl = Box<dyn Fn(&Link, BrowserStep) + Send + Sync>;

pub struct SignIn {
    /// The server's `WWW-Authenticate` challenge, when it sent one.
    pub challenge: Option<Challenge>,
    /// Text pasted by the user: the redirected URL or the code.
    pub pasted: Option<mpsc::Receiver<String>>,
    /// Start the browser (the URL is shown either way).
    pub open_browser: bool,
    pub cancel: CancellationToken,
    pub show_url: ShowUrl,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SignedIn {
    pub scope: Option<String>,
    /// Epoch ms.
    pub expires_at: Option<f64>,
}

pub async fn sign_in(server: &Server, mut request: SignIn) -> Result<SignedIn, OAuthError> {
    let discovered = discovery::discover(
        &server.http,
        &server.url,
        request.challenge.as_ref(),
        discovery::Options {
            metadata_url: server.config.auth_server_metadata_url.as_deref(),
            skip_issuer_check: server.config.skip_issuer_metadata_validation,
        },
    )
    .await
    .map_err(OAuthError::Failed)?;
    let stored = forget_other_servers(server, &discovered)?;
    if server.config.grant == GrantType::ClientCredentials {
        return machine_sign_in(server, &discovered, request.challenge.as_ref()).await;
    }
    let scope = requested_scope(
        server,
        &discovered,
        request.challenge.as_ref(),
        stored.as_ref(),
    );
    let registered = stored
        .as_ref()
        .and_then(State::client)
        .and_then(|c| client::redirect_uris(c).into_iter().next());
    let plan = Plan::new(&server.config, &server.env, registered.as_deref())
        .map_err(OAuthError::Failed)?;
    let state = random_token();
    let mut listener = plan.listen(&state).await.map_err(OAuthError::Failed)?;
    let redirect_uri = listener.redirect_uri.clone();
    let (client, to_store) = identity(
        server,
        &discovered,
        stored.as_ref(),
        &redirect_uri,
        scope.as_deref(),
    )
    .await?;
    if let Some(info) = to_store {
        server.update(|s| {
            s.set_client(info);
            s.set_discovery(discovered.to_pi());
        })?;
    }
    let pkce = Pkce::new();
    let resource = discovered.resource_param(&server.url);
    let url = authorization_url(
        server,
        &discovered.server,
        &client,
        &redirect_uri,
        &pkce,
        &state,
        scope.as_deref(),
        &resource,
    );
    let url = Link::parse(url.as_str())
        .map_err(|why| OAuthError::Failed(format!("the authorization URL is not opened: {why}")))?;
    let opened = match request.open_browser {
        true => browser::open(&url, &server.env),
        false => Err("not asked to".into()),
    };
    let step = opened.map_or_else(BrowserStep::NotOpened, BrowserStep::Opened);
    (request.show_url)(&url, step);

    let deadline = tokio::time::sleep(BROWSER_WAIT);
    tokio::pin!(deadline);
    loop {
        let (response, reply) = tokio::select! {
            arrival = listener.next() => (arrival.response, Some(arrival.reply)),
            pasted = recv(&mut request.pasted) => match Response::pasted(&pasted, &redirect_uri) {
                Ok(response) => (response, None),
                Err(why) => {
                    (request.show_url)(&url, BrowserStep::PasteRefused(why));
                    continue;
                }
            },
            _ = &mut deadline => return Err(OAuthError::TimedOut),
            _ = request.cancel.cancelled() => return Err(OAuthError::Cancelled),
        };
        let exchange = Exchange {
            client: &client,
            redirect_uri: &redirect_uri,
            verifier: &pkce.verifier,
            resource: &resource,
            scope: scope.as_deref(),
        };
        let result = complete(server, &discovered, &state, &response, &exchange).await;
        if let Some(reply) = reply {
            let page = match &result {
                Ok(_) => Page {
                    ok: true,
                    message: format!(
                        "pi-mcp is signed in to \"{}\". You can close this page.",
                        server.name
                    ),
                },
                Err(e) => Page {
                    ok: false,
                    message: e.to_string(),
                },
            };
            let _ = reply.send(page);
        }
        return result;
    }
}

async fn recv(pasted: &mut Option<mpsc::Receiver<String>>) -> String {
    match pasted {
        Some(rx) => match rx.recv().await {
            Some(text) => text,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// The stored state, minus a client and tokens from another authorization server: a resource
/// that moved to a new one means registering again, never presenting old credentials there.
fn forget_other_servers(
    server: &Server,
    discovered: &Discovered,
) -> Result<Option<State>, OAuthError> {
    let stored = server.load()?;
    let moved = stored
        .as_ref()
        .and_then(State::issuer)
        .is_some_and(|issuer| {
            issuer.trim_end_matches('/') != discovered.server.issuer.trim_end_matches('/')
        });
    if !moved {
        return Ok(stored);
    }
    server
        .update(|s| {
            s.clear_client();
            s.clear_tokens();
            s.set_discovery(discovered.to_pi());
            s.clone()
        })
        .map(Some)
}

/// The scope to ask for: the challenge's, else the resource's `scopes_supported`; on
/// `insufficient_scope` the scopes granted so far as well; `oauth.scope` always;
/// `offline_access` when the authorization server offers it. `None` when nothing says.
fn requested_scope(
    server: &Server,
    discovered: &Discovered,
    challenge: Option<&Challenge>,
    stored: Option<&State>,
) -> Option<String> {
    let mut scopes: Vec<String> = Vec::new();
    let mut add = |text: &str| add_scopes(&mut scopes, text);
    if challenge.is_some_and(Challenge::insufficient_scope) {
        if let Some(granted) = stored.and_then(State::tokens).and_then(|t| t.scope) {
            add(&granted);
        }
    }
    match challenge.and_then(|c| c.scope.as_deref()) {
        Some(challenged) => add(challenged),
        None => {
            if let Some(supported) = discovered
                .resource
                .as_ref()
                .and_then(|r| r.scopes_supported.as_ref())
            {
                add(&supported.join(" "));
            }
        }
    }
    if let Some(configured) = &server.config.scope {
        add(configured);
    }
    let offered = discovered
        .server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == OFFLINE_ACCESS));
    if offered && !scopes.is_empty() && server.config.grant == GrantType::AuthorizationCode {
        add_scopes(&mut scopes, OFFLINE_ACCESS);
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

fn add_scopes(scopes: &mut Vec<String>, text: &str) {
    for scope in text.split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
}

/// The client to sign in as, and its registration to store (when new): `oauth.clientId`, our
/// Client ID Metadata Document where allowed and supported, a stored registration for the same
/// redirect URI, else a dynamic registration.
async fn identity(
    server: &Server,
    discovered: &Discovered,
    stored: Option<&State>,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<(Client, Option<Map<String, Value>>), OAuthError> {
    if let Some(configured) = server.configured_client().await? {
        return Ok((configured, None));
    }
    let config = &server.config;
    let mode = config.registration;
    if let Some(document) = &config.client_metadata_url {
        if mode != RegistrationMode::Dcr {
            let url = client::document_url(document).map_err(OAuthError::Failed)?;
            if discovered.server.client_id_metadata_documents {
                let info = client::document_client(url.as_str(), redirect_uri);
                let client = client::stored(&info).expect("a document client has an id");
                return Ok((client, Some(info)));
            }
            if mode == RegistrationMode::Cimd {
                return Err(OAuthError::Failed(format!(
                    "the authorization server {} does not support Client ID Metadata Documents (`client_id_metadata_document_supported`), and `oauth.clientRegistration` is \"cimd\"",
                    discovered.server.issuer
                )));
            }
        }
    } else if mode == RegistrationMode::Cimd {
        return Err(OAuthError::Failed(
            "`oauth.clientRegistration` is \"cimd\" but `oauth.clientMetadataUrl` is not set: set it to the https:// address of your client metadata document".into(),
        ));
    }
    let reusable = stored.and_then(State::client).filter(|info| {
        client::redirect_uris(info)
            .iter()
            .any(|u| u == redirect_uri)
            && !info
                .get("client_id")
                .and_then(Value::as_str)
                .is_some_and(|id| id.starts_with("https://"))
    });
    if let Some(info) = reusable {
        if let Some(client) = client::stored(info) {
            return Ok((client, None));
        }
    }
    let registration = Registration {
        client_name: config
            .client_name
            .as_deref()
            .unwrap_or(client::DEFAULT_CLIENT_NAME),
        client_uri: config.client_uri.as_deref(),
        logo_uri: config.logo_uri.as_deref(),
        redirect_uri: Some(redirect_uri),
        scope,
    };
    let info = client::register(&server.http, &discovered.server, &registration)
        .await
        .map_err(OAuthError::Failed)?;
    let client = client::stored(&info).expect("checked by register");
    Ok((client, Some(info)))
}

#[allow(
    clippy::too_many_arguments,
    reason = "each is one query parameter of the authorization request"
)]
fn authorization_url(
    server: &Server,
    metadata: &ServerMetadata,
    client: &Client,
    redirect_uri: &str,
    pkce: &Pkce,
    state: &str,
    scope: Option<&str>,
    resource: &str,
) -> Url {
    let mut url = metadata.authorization_endpoint.clone();
    let mut ours: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", &client.id),
        ("redirect_uri", redirect_uri),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
        ("state", state),
    ];
    if let Some(scope) = scope {
        ours.push(("scope", scope));
        if scope.split_whitespace().any(|s| s == OFFLINE_ACCESS) {
            ours.push(("prompt", "consent"));
        }
    }
    ours.push(("resource", resource));
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in &ours {
            query.append_pair(key, value);
        }
        // `oauth.authorizationParams` add to the request; they cannot replace ours.
        for (key, value) in &server.config.authorization_params {
            if !ours.iter().any(|(k, _)| k == key) {
                query.append_pair(key, value);
            }
        }
    }
    url
}

struct Exchange<'a> {
    client: &'a Client,
    redirect_uri: &'a str,
    verifier: &'a str,
    resource: &'a str,
    scope: Option<&'a str>,
}

/// Checks the authorization response and exchanges its code.
async fn complete(
    server: &Server,
    discovered: &Discovered,
    state: &str,
    response: &Response,
    exchange: &Exchange<'_>,
) -> Result<SignedIn, OAuthError> {
    if let Some(got) = &response.state {
        if got != state {
            return Err(OAuthError::Failed(
                "the authorization response belongs to another sign-in (its `state` differs); sign-in stopped".into(),
            ));
        }
    }
    check_issuer(&discovered.server, response.iss.as_deref())?;
    if let Some(error) = &response.error {
        let detail = response
            .error_description
            .as_deref()
            .map(|d| {
                format!(
                    " ({})",
                    clean::line(&d.chars().take(300).collect::<String>())
                )
            })
            .unwrap_or_default();
        return Err(OAuthError::Failed(format!(
            "the authorization server refused the sign-in: {}{detail}",
            clean::line(error)
        )));
    }
    let code = response
        .code
        .as_deref()
        .ok_or_else(|| OAuthError::Failed("the authorization response has no `code`".into()))?;
    let endpoint = Endpoint {
        url: &discovered.server.token_endpoint,
        client: exchange.client,
        methods: &discovered.server.token_auth_methods,
    };
    let grant = Grant::Code {
        code,
        verifier: exchange.verifier,
        redirect_uri: exchange.redirect_uri,
    };
    match token::request(&server.http, &endpoint, grant, Some(exchange.resource)).await {
        Ok(issued) => save(server, discovered, &issued, exchange.scope),
        Err(TokenError::Refused { code, description }) if code == "invalid_client" => {
            server.update(State::clear_client)?;
            Err(OAuthError::SignInRequired(format!(
                "the authorization server does not accept the client (invalid_client{}); its registration was forgotten, sign in again",
                description.map(|d| format!(": {d}")).unwrap_or_default()
            )))
        }
        Err(e) => Err(OAuthError::Failed(format!(
            "exchanging the authorization code at {} failed: {e}",
            display_url(discovered.server.token_endpoint.as_str())
        ))),
    }
}

/// RFC 9207 §2.4 as the MCP spec tabulates it: a present `iss` must equal the recorded issuer
/// exactly; an absent one is refused when the server promised it.
fn check_issuer(metadata: &ServerMetadata, iss: Option<&str>) -> Result<(), OAuthError> {
    match iss {
        Some(iss) if iss != metadata.issuer => Err(OAuthError::Failed(format!(
            "the authorization response names the issuer {iss:?}, not {:?} (RFC 9207); sign-in stopped, the code was not used",
            metadata.issuer
        ))),
        None if metadata.iss_parameter => Err(OAuthError::Failed(format!(
            "the authorization server {} promises an `iss` parameter (RFC 9207) but its response has none; sign-in stopped, the code was not used",
            metadata.issuer
        ))),
        _ => Ok(()),
    }
}

fn save(
    server: &Server,
    discovered: &Discovered,
    issued: &Issued,
    scope: Option<&str>,
) -> Result<SignedIn, OAuthError> {
    server.update(|s| {
        s.set_tokens(issued, scope, now_ms());
        s.set_discovery(discovered.to_pi());
        let tokens = s.tokens();
        SignedIn {
            scope: tokens.as_ref().and_then(|t| t.scope.clone()),
            expires_at: tokens.and_then(|t| t.expires_at),
        }
    })
}

/// `client_credentials`: the configured client (or one registered for the purpose) asks the
/// token endpoint directly.
async fn machine_sign_in(
    server: &Server,
    discovered: &Discovered,
    challenge: Option<&Challenge>,
) -> Result<SignedIn, OAuthError> {
    let scope = server
        .config
        .scope
        .clone()
        .or_else(|| challenge.and_then(|c| c.scope.clone()));
    let client = machine_client(server, discovered).await?;
    let issued = machine_token(server, discovered, &client, scope.as_deref()).await?;
    save(server, discovered, &issued, scope.as_deref())
}

pub async fn machine_client(
    server: &Server,
    discovered: &Discovered,
) -> Result<Client, OAuthError> {
    if let Some(client) = server.configured_client().await? {
        return Ok(client);
    }
    if let Some(client) = server
        .load()?
        .as_ref()
        .and_then(State::client)
        .and_then(client::stored)
    {
        return Ok(client);
    }
    let registration = Registration {
        client_name: server
            .config
            .client_name
            .as_deref()
            .unwrap_or(client::DEFAULT_CLIENT_NAME),
        client_uri: None,
        logo_uri: None,
        redirect_uri: None,
        scope: server.config.scope.as_deref(),
    };
    let info = client::register(&server.http, &discovered.server, &registration)
        .await
        .map_err(|why| {
            OAuthError::Failed(format!(
                "{why}; `grantType: \"client_credentials\"` needs `oauth.clientId` and `oauth.clientSecret`"
            ))
        })?;
    let client = client::stored(&info).expect("checked by register");
    server.update(|s| s.set_client(info))?;
    Ok(client)
}

pub async fn machine_token(
    server: &Server,
    discovered: &Discovered,
    client: &Client,
    scope: Option<&str>,
) -> Result<Issued, OAuthError> {
    let endpoint = Endpoint {
        url: &discovered.server.token_endpoint,
        client,
        methods: &discovered.server.token_auth_methods,
    };
    let resource = discovered.resource_param(&server.url);
    token::request(
        &server.http,
        &endpoint,
        Grant::ClientCredentials { scope },
        Some(&resource),
    )
    .await
    .map_err(|e| {
        OAuthError::Failed(format!(
            "the client credentials grant at {} failed: {e}",
            display_url(discovered.server.token_endpoint.as_str())
        ))
    })
}

/// What signing out did.
#[derive(Clone, Debug, PartialEq)]
pub struct SignOut {
    /// Whether anything was stored.
    pub removed: bool,
    /// `None`: nothing to revoke (no tokens, or no `revocation_endpoint`); else the outcome.
    pub revocation: Option<Result<(), String>>,
}

/// Revokes the tokens where the authorization server offers revocation (RFC 7009), then deletes
/// the server's state (tokens and registration) from the store.
pub async fn sign_out(server: &Server) -> Result<SignOut, OAuthError> {
    let stored = server.load()?;
    let revocation = match &stored {
        Some(state) => revoke(server, state).await,
        None => None,
    };
    let removed = server
        .store
        .remove(&server.key)
        .map_err(super::server::store_error)?
        .is_some();
    Ok(SignOut {
        removed,
        revocation,
    })
}

async fn revoke(server: &Server, state: &State) -> Option<Result<(), String>> {
    let tokens = state.tokens()?;
    let metadata = state.discovery()?.get("authorizationServerMetadata")?;
    let from = Url::parse(state.issuer().unwrap_or("https://invalid.example")).ok()?;
    let metadata = super::metadata::server_metadata(metadata, &from).ok()?;
    let endpoint_url = metadata.revocation_endpoint.clone()?;
    let client = match server.configured_client().await {
        Ok(Some(client)) => client,
        Ok(None) => state.client().and_then(client::stored)?,
        Err(e) => return Some(Err(e.to_string())),
    };
    let endpoint = Endpoint {
        url: &endpoint_url,
        client: &client,
        methods: &metadata.token_auth_methods,
    };
    // The refresh token first: revoking it usually ends the access token too (RFC 7009 §2.1).
    let mut outcome = Ok(());
    for (token, hint) in [
        (tokens.refresh.as_ref(), "refresh_token"),
        (Some(&tokens.access), "access_token"),
    ] {
        if let Some(token) = token {
            if let Err(e) = token::revoke(&server.http, &endpoint, token, hint).await {
                outcome = Err(format!(
                    "revoking the {hint} at {} failed: {e}",
                    display_url(endpoint_url.as_str())
                ));
            }
        }
    }
    Some(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuer_checks_follow_the_specs_table() {
        let mut metadata = super::super::metadata::default_endpoints(
            &Url::parse("https://as.example/mcp").unwrap(),
        )
        .unwrap();
        metadata.issuer = "https://as.example".into();
        assert!(check_issuer(&metadata, None).is_ok());
        assert!(check_issuer(&metadata, Some("https://as.example")).is_ok());
        // No normalization: a trailing slash is another issuer.
        assert!(check_issuer(&metadata, Some("https://as.example/")).is_err());
        metadata.iss_parameter = true;
        let err = check_issuer(&metadata, None).unwrap_err().to_string();
        assert!(err.contains("promises an `iss` parameter"), "{err}");
        assert!(check_issuer(&metadata, Some("https://evil.example")).is_err());
    }
}
