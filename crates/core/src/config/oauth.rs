//! A remote server's `oauth` object: pi-mcp-adapter's keys and Pi 1.5's, one meaning each.

use super::server::{describe, Fields};
use super::{fields, interpolate::expand, ConfigValue, Level};
use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct OAuthConfig {
    /// `auth: "oauth"`; otherwise OAuth starts when the server asks for it (401/403).
    pub explicit: bool,
    pub grant: Grant,
    pub client_id: Option<String>,
    /// `${VAR}` already expanded; a whole-value `!command` runs when the secret is needed.
    pub client_secret: Option<ConfigValue>,
    pub client_metadata_url: Option<String>,
    pub registration: Registration,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    /// Added to the scopes the server asks for.
    pub scope: Option<String>,
    /// Extra authorization request parameters (pi-mcp-adapter's `authorizationParams`).
    pub authorization_params: Vec<(String, String)>,
    /// Pi's `callbackPort`.
    pub callback_port: Option<u16>,
    /// Pi's `callbackUrl`.
    pub callback_url: Option<String>,
    /// pi-mcp-adapter's `redirectUri` (`{port}` stands for the listener's port).
    pub redirect_uri: Option<String>,
    pub auth_server_metadata_url: Option<String>,
    pub skip_issuer_metadata_validation: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grant {
    #[default]
    AuthorizationCode,
    /// A machine client: no browser.
    ClientCredentials,
}

/// `clientRegistration`: how a client without `clientId` identifies itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Registration {
    /// Our Client ID Metadata Document when `clientMetadataUrl` is set and the server supports
    /// documents, else dynamic registration.
    #[default]
    Auto,
    Dcr,
    Cimd,
}

/// Parses `oauth` (an object, or `false` handled by the caller).
pub fn parse(f: &mut Fields, object: &Map<String, Value>, explicit: bool) -> OAuthConfig {
    let report = |f: &mut Fields, key: &str, level: Level, message: String| {
        f.report(level, &format!("oauth.{key}"), message)
    };
    for key in object.keys() {
        if let Some((level, message)) = fields::OAUTH.check(key) {
            report(f, key, level, message);
        }
    }
    let text = |f: &mut Fields, key: &str| match object.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(expand(s, f.env()).trim().to_string()),
        Some(other) => {
            let got = describe(other);
            report(
                f,
                key,
                Level::Error,
                format!("must be a string, got {got}; ignored"),
            );
            None
        }
    };
    let grant = match text(f, "grantType").as_deref() {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some(other) => {
            report(
                f,
                "grantType",
                Level::Warning,
                format!("unknown value \"{other}\" (expected \"authorization_code\" or \"client_credentials\"); using \"authorization_code\""),
            );
            Grant::AuthorizationCode
        }
    };
    let registration = match text(f, "clientRegistration").as_deref() {
        None | Some("auto") => Registration::Auto,
        Some("dcr") => Registration::Dcr,
        Some("cimd") => Registration::Cimd,
        Some(other) => {
            report(
                f,
                "clientRegistration",
                Level::Warning,
                format!("unknown value \"{other}\" (expected \"auto\", \"dcr\" or \"cimd\"); using \"auto\""),
            );
            Registration::Auto
        }
    };
    let callback_port = match object.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_u64().filter(|p| (1..=65535).contains(p)) {
            Some(port) => Some(port as u16),
            None => {
                let got = describe(value);
                report(
                    f,
                    "callbackPort",
                    Level::Error,
                    format!("must be a port number (1-65535), got {got}; ignored"),
                );
                None
            }
        },
    };
    let authorization_params = match object.get("authorizationParams") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(params)) => params
            .iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k.clone(), expand(s, f.env()))),
                Value::Number(n) => Some((k.clone(), n.to_string())),
                Value::Bool(b) => Some((k.clone(), b.to_string())),
                _ => None,
            })
            .collect(),
        Some(other) => {
            let got = describe(other);
            report(
                f,
                "authorizationParams",
                Level::Error,
                format!("must be an object of strings, got {got}; ignored"),
            );
            Vec::new()
        }
    };
    let skip_issuer_metadata_validation = match object.get("skipIssuerMetadataValidation") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            let got = describe(other);
            report(
                f,
                "skipIssuerMetadataValidation",
                Level::Warning,
                format!("must be true or false, got {got}; using false"),
            );
            false
        }
    };
    let config = OAuthConfig {
        explicit,
        grant,
        client_id: text(f, "clientId"),
        client_secret: match object.get("clientSecret") {
            Some(Value::String(raw)) if !raw.trim().is_empty() => {
                Some(f.value("oauth", raw.trim()))
            }
            _ => text(f, "clientSecret").map(ConfigValue::text),
        },
        client_metadata_url: text(f, "clientMetadataUrl"),
        registration,
        client_name: text(f, "clientName"),
        client_uri: text(f, "clientUri"),
        logo_uri: text(f, "logoUri"),
        scope: text(f, "scope"),
        authorization_params,
        callback_port,
        callback_url: text(f, "callbackUrl"),
        redirect_uri: text(f, "redirectUri"),
        auth_server_metadata_url: text(f, "authServerMetadataUrl"),
        skip_issuer_metadata_validation,
    };
    if config.grant == Grant::ClientCredentials
        && config.client_id.is_some()
        && config.client_secret.is_none()
    {
        report(
            f,
            "clientSecret",
            Level::Warning,
            "is not set, but `grantType` \"client_credentials\" authenticates with it; add it (\"${VAR}\" or \"!command\" keep it out of the file)".into(),
        );
    }
    if config.registration == Registration::Cimd && config.client_metadata_url.is_none() {
        report(
            f,
            "clientRegistration",
            Level::Warning,
            "is \"cimd\" but `oauth.clientMetadataUrl` is not set; sign-in will fail until it names your client metadata document".into(),
        );
    }
    config
}
