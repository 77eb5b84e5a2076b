//! A remote server's `oauth` object: pi-mcp-adapter's keys and Pi 1.5's, one meaning each.

use super::fields::{self as key, Field, Place};
use super::reader::{Reader, Report};
use super::server::{describe, Fields};
use super::{fields, interpolate::expand, ConfigValue, Env, Level};
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
    let env = f.env();
    let mut read = within(f, object);
    read.check_keys(|k| fields::check(Place::OAuth, k));
    let grant_type = text(&mut read, env, &key::GRANT_TYPE);
    let client_registration = text(&mut read, env, &key::CLIENT_REGISTRATION);
    let config = OAuthConfig {
        explicit,
        grant: grant(&mut read, grant_type),
        client_id: text(&mut read, env, &key::CLIENT_ID),
        client_secret: None,
        client_metadata_url: text(&mut read, env, &key::CLIENT_METADATA_URL),
        registration: registration(&mut read, client_registration),
        client_name: text(&mut read, env, &key::CLIENT_NAME),
        client_uri: text(&mut read, env, &key::CLIENT_URI),
        logo_uri: text(&mut read, env, &key::LOGO_URI),
        scope: text(&mut read, env, &key::SCOPE),
        authorization_params: authorization_params(&mut read, env),
        callback_port: read.port(&key::CALLBACK_PORT),
        callback_url: text(&mut read, env, &key::CALLBACK_URL),
        redirect_uri: text(&mut read, env, &key::REDIRECT_URI),
        auth_server_metadata_url: text(&mut read, env, &key::AUTH_SERVER_METADATA_URL),
        skip_issuer_metadata_validation: read.flag(&key::SKIP_ISSUER_METADATA_VALIDATION),
    };
    drop(read);
    let config = OAuthConfig {
        client_secret: client_secret(f, object),
        ..config
    };
    warn_of_missing(f, &config);
    config
}

/// A reader of `oauth`'s keys, reporting them as `oauth.<key>`.
fn within<'f, 'o>(f: &'f mut Fields, object: &'o Map<String, Value>) -> Reader<'o, Report<'f>> {
    let report = move |level, name: &str, message| {
        f.report(level, &format!("{}.{name}", key::OAUTH.name), message)
    };
    Reader::new(object, Box::new(report))
}

/// A string with variables expanded, trimmed; `None` when empty.
fn text(read: &mut Reader<Report>, env: &Env, field: &Field) -> Option<String> {
    let text = read
        .string(field)
        .map(|s| expand(&s, env).trim().to_string());
    text.filter(|s| !s.is_empty())
}

fn grant(read: &mut Reader<Report>, word: Option<String>) -> Grant {
    match word.as_deref() {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some(other) => {
            read.unknown(&key::GRANT_TYPE, other);
            Grant::AuthorizationCode
        }
    }
}

fn registration(read: &mut Reader<Report>, word: Option<String>) -> Registration {
    match word.as_deref() {
        None | Some("auto") => Registration::Auto,
        Some("dcr") => Registration::Dcr,
        Some("cimd") => Registration::Cimd,
        Some(other) => {
            read.unknown(&key::CLIENT_REGISTRATION, other);
            Registration::Auto
        }
    }
}

/// `authorizationParams`: strings (variables expanded), numbers and booleans as their text.
fn authorization_params(read: &mut Reader<Report>, env: &Env) -> Vec<(String, String)> {
    let field = &key::AUTHORIZATION_PARAMS;
    match read.get(field) {
        None => vec![],
        Some(Value::Object(params)) => params
            .iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k.clone(), expand(s, env))),
                Value::Number(n) => Some((k.clone(), n.to_string())),
                Value::Bool(b) => Some((k.clone(), b.to_string())),
                _ => None,
            })
            .collect(),
        Some(other) => {
            read.wrong(field, &describe(other));
            vec![]
        }
    }
}

/// `clientSecret`: text, or (in our own files) a whole-value `!command` run when needed.
fn client_secret(f: &mut Fields, object: &Map<String, Value>) -> Option<ConfigValue> {
    let raw = within(f, object).string(&key::CLIENT_SECRET)?;
    let raw = raw.trim();
    (!raw.is_empty()).then(|| f.value(key::OAUTH.name, raw))
}

/// What a sign-in with this config would miss.
fn warn_of_missing(f: &mut Fields, config: &OAuthConfig) {
    if config.grant == Grant::ClientCredentials
        && config.client_id.is_some()
        && config.client_secret.is_none()
    {
        let message = "is not set, but `grantType` \"client_credentials\" authenticates with it; add it (\"${VAR}\" or \"!command\" keep it out of the file)".into();
        let field = format!("{}.{}", key::OAUTH.name, key::CLIENT_SECRET.name);
        f.report(Level::Warning, &field, message);
    }
    if config.registration == Registration::Cimd && config.client_metadata_url.is_none() {
        let message = "is \"cimd\" but `oauth.clientMetadataUrl` is not set; sign-in will fail until it names your client metadata document".into();
        let field = format!("{}.{}", key::OAUTH.name, key::CLIENT_REGISTRATION.name);
        f.report(Level::Warning, &field, message);
    }
}
