//! Who we are to an authorization server: a pre-registered client (`oauth.clientId`), our own
//! Client ID Metadata Document (`oauth.clientMetadataUrl`), or a client registered dynamically
//! (RFC 7591) and remembered in the store for the authorization server that issued it.

use super::http::Http;
use super::metadata::ServerMetadata;
use super::token::{self, Client};
use pi_mcp_connection::pool::display_url;
use pi_mcp_connection::secret::Secret;
use serde_json::{json, Map, Value};
use url::Url;

/// The name we register under unless `oauth.clientName` says otherwise.
pub const DEFAULT_CLIENT_NAME: &str = "pi-mcp-native";

/// A client stored in Pi's format (`clientInformation`).
pub fn stored(info: &Map<String, Value>) -> Option<Client> {
    let text = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    Some(Client {
        id: text("client_id")?.to_string(),
        secret: text("client_secret").map(Secret::new),
        method_hint: text("token_endpoint_auth_method").map(str::to_string),
    })
}

/// The redirect URIs a stored client was registered with.
pub fn redirect_uris(info: &Map<String, Value>) -> Vec<String> {
    info.get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| {
            uris.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The stored form of a client identified by a Client ID Metadata Document.
pub fn document_client(url: &str, redirect_uri: &str) -> Map<String, Value> {
    let value = json!({
        "client_id": url,
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "none",
    });
    value.as_object().cloned().unwrap_or_default()
}

/// A usable `oauth.clientMetadataUrl`: HTTPS with a path (the draft's rule for client ids).
pub fn document_url(configured: &str) -> Result<Url, String> {
    match Url::parse(configured) {
        Ok(url) if url.scheme() == "https" && url.path() != "/" && !url.path().is_empty() => {
            Ok(url)
        }
        _ => Err(format!(
            "`oauth.clientMetadataUrl` {configured:?} must be an https:// URL with a path (the address of your client metadata document)"
        )),
    }
}

pub struct Registration<'a> {
    pub client_name: &'a str,
    pub client_uri: Option<&'a str>,
    pub logo_uri: Option<&'a str>,
    /// `None` for a machine client (client credentials).
    pub redirect_uri: Option<&'a str>,
    pub scope: Option<&'a str>,
}

/// Registers a client (RFC 7591) and returns the server's answer, which is stored as is.
pub async fn register(
    http: &Http,
    server: &ServerMetadata,
    registration: &Registration<'_>,
) -> Result<Map<String, Value>, String> {
    let endpoint = server.registration_endpoint.as_ref().ok_or_else(|| {
        format!(
            "the authorization server {} offers no dynamic client registration; register a client with it and set `oauth.clientId` (and `oauth.clientSecret`)",
            server.issuer
        )
    })?;
    let mut body = Map::new();
    body.insert("client_name".into(), json!(registration.client_name));
    match registration.redirect_uri {
        Some(uri) => {
            body.insert("redirect_uris".into(), json!([uri]));
            body.insert(
                "grant_types".into(),
                json!(["authorization_code", "refresh_token"]),
            );
            body.insert("response_types".into(), json!(["code"]));
            body.insert(
                "token_endpoint_auth_method".into(),
                json!(public_method(server)),
            );
            body.insert("application_type".into(), json!(application_type(uri)));
        }
        None => {
            body.insert("grant_types".into(), json!(["client_credentials"]));
            body.insert(
                "token_endpoint_auth_method".into(),
                json!("client_secret_basic"),
            );
        }
    }
    for (key, value) in [
        ("scope", registration.scope),
        ("client_uri", registration.client_uri),
        ("logo_uri", registration.logo_uri),
    ] {
        if let Some(value) = value {
            body.insert(key.into(), json!(value));
        }
    }
    let answer = http.post_json(endpoint, &Value::Object(body)).await?;
    let shown = display_url(endpoint.as_str());
    let parsed = answer.json().filter(Value::is_object);
    if !answer.ok() {
        let why = token::refusal(&answer).map_or_else(|| answer.excerpt(), |r| r.to_string());
        return Err(format!(
            "dynamic client registration at {shown} failed: HTTP {}: {why}",
            answer.status
        ));
    }
    let client = parsed
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    if stored(&client).is_none() {
        return Err(format!(
            "dynamic client registration at {shown} answered without a `client_id`"
        ));
    }
    Ok(client)
}

/// A native app is public: ask for no client authentication where the server allows that.
fn public_method(server: &ServerMetadata) -> &'static str {
    let methods = &server.token_auth_methods;
    if methods.is_empty() || methods.iter().any(|m| m == "none") {
        "none"
    } else if methods.iter().any(|m| m == "client_secret_basic") {
        "client_secret_basic"
    } else {
        "client_secret_post"
    }
}

/// `native` for a loopback or custom-scheme redirect (OIDC Registration §2).
fn application_type(redirect_uri: &str) -> &'static str {
    match Url::parse(redirect_uri) {
        Ok(url) if url.scheme() == "https" && !super::metadata::is_loopback(&url) => "web",
        _ => "native",
    }
}
