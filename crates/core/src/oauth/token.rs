//! The token endpoint (authorization code, refresh, client credentials) and revocation (RFC
//! 7009), with the client authentication the authorization server supports.

use super::http::{Answer, Http};
use super::store::Issued;
use pi_mcp_connection::pool::display_url;
use pi_mcp_connection::secret::Secret;
use serde_json::Value;
use url::Url;

/// The client as the token endpoint sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Client {
    pub id: String,
    pub secret: Option<Secret>,
    /// The `token_endpoint_auth_method` its registration names.
    pub method_hint: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// A public client: `client_id` in the form.
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

impl AuthMethod {
    pub fn name(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
        }
    }

    fn from_name(name: &str) -> Option<AuthMethod> {
        [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }
}

/// The method to use: the registration's, when the server supports it; else the first of
/// basic, post (with a secret) and none that the server lists. A server that lists none
/// gets basic with a secret (RFC 8414's default), none without.
pub fn auth_method(client: &Client, supported: &[String]) -> AuthMethod {
    let supports = |m: AuthMethod| supported.iter().any(|s| s == m.name());
    let has_secret = client.secret.as_ref().is_some_and(|s| !s.is_empty());
    let hinted = client
        .method_hint
        .as_deref()
        .and_then(AuthMethod::from_name);
    if let Some(method) = hinted.filter(|m| supported.is_empty() || supports(*m)) {
        if method == AuthMethod::None || has_secret {
            return method;
        }
    }
    if !has_secret {
        return AuthMethod::None;
    }
    if supported.is_empty() || supports(AuthMethod::ClientSecretBasic) {
        AuthMethod::ClientSecretBasic
    } else if supports(AuthMethod::ClientSecretPost) {
        AuthMethod::ClientSecretPost
    } else if supports(AuthMethod::None) {
        AuthMethod::None
    } else {
        AuthMethod::ClientSecretPost
    }
}

pub enum Grant<'a> {
    Code {
        code: &'a str,
        verifier: &'a str,
        redirect_uri: &'a str,
    },
    Refresh {
        token: &'a Secret,
    },
    ClientCredentials {
        scope: Option<&'a str>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenError {
    /// The server answered with an OAuth error such as `invalid_grant`.
    Refused {
        code: String,
        description: Option<String>,
    },
    Failed(String),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::Refused {
                code,
                description: Some(text),
            } => write!(f, "{code} ({text})"),
            TokenError::Refused { code, .. } => f.write_str(code),
            TokenError::Failed(why) => f.write_str(why),
        }
    }
}

/// Where and as whom to ask.
pub struct Endpoint<'a> {
    pub url: &'a Url,
    pub client: &'a Client,
    /// `token_endpoint_auth_methods_supported` (empty when not stated).
    pub methods: &'a [String],
}

pub async fn request(
    http: &Http,
    endpoint: &Endpoint<'_>,
    grant: Grant<'_>,
    resource: Option<&str>,
) -> Result<Issued, TokenError> {
    let mut form: Vec<(&str, &str)> = match &grant {
        Grant::Code {
            code,
            verifier,
            redirect_uri,
        } => vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", verifier),
            ("redirect_uri", redirect_uri),
        ],
        Grant::Refresh { token } => vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", token.expose()),
        ],
        Grant::ClientCredentials { scope } => {
            let mut form = vec![("grant_type", "client_credentials")];
            form.extend(scope.map(|s| ("scope", s)));
            form
        }
    };
    form.extend(resource.map(|r| ("resource", r)));
    let answer = post_as_client(http, endpoint, form).await?;
    parse_issued(&answer, endpoint.url)
}

/// RFC 7009: asks the server to revoke `token`. A server that does not know the token answers
/// 200 too, so only a failure to ask is an error.
pub async fn revoke(
    http: &Http,
    endpoint: &Endpoint<'_>,
    token: &Secret,
    hint: &str,
) -> Result<(), TokenError> {
    let form = vec![("token", token.expose()), ("token_type_hint", hint)];
    let answer = post_as_client(http, endpoint, form).await?;
    if answer.ok() {
        return Ok(());
    }
    Err(refusal(&answer).unwrap_or_else(|| {
        TokenError::Failed(format!(
            "{} answered HTTP {}",
            display_url(endpoint.url.as_str()),
            answer.status
        ))
    }))
}

async fn post_as_client(
    http: &Http,
    endpoint: &Endpoint<'_>,
    mut form: Vec<(&str, &str)>,
) -> Result<Answer, TokenError> {
    let client = endpoint.client;
    let secret = client.secret.as_ref().map(Secret::expose).unwrap_or("");
    let basic = match auth_method(client, endpoint.methods) {
        AuthMethod::ClientSecretBasic => Some((client.id.as_str(), secret)),
        AuthMethod::ClientSecretPost => {
            form.push(("client_id", &client.id));
            form.push(("client_secret", secret));
            None
        }
        AuthMethod::None => {
            form.push(("client_id", &client.id));
            None
        }
    };
    http.post_form(endpoint.url, &form, basic)
        .await
        .map_err(TokenError::Failed)
}

/// The OAuth error (`error`, `error_description`) an answer carries, cleaned (`clean::line`).
pub(super) fn refusal(answer: &Answer) -> Option<TokenError> {
    let body = answer.json()?;
    let code = pi_mcp_connection::clean::line(body.get("error")?.as_str()?).into_owned();
    let description = body
        .get("error_description")
        .and_then(Value::as_str)
        .map(|d| {
            pi_mcp_connection::clean::line(&d.chars().take(300).collect::<String>()).into_owned()
        });
    Some(TokenError::Refused { code, description })
}

fn parse_issued(answer: &Answer, url: &Url) -> Result<Issued, TokenError> {
    if let Some(refused) = refusal(answer) {
        return Err(refused);
    }
    let shown = display_url(url.as_str());
    if !answer.ok() {
        return Err(TokenError::Failed(format!(
            "{shown} answered HTTP {}: {}",
            answer.status,
            answer.excerpt()
        )));
    }
    let body = answer
        .json()
        .filter(Value::is_object)
        .ok_or_else(|| TokenError::Failed(format!("{shown} did not answer with a JSON object")))?;
    let text = |key: &str| {
        body.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let access = text("access_token")
        .ok_or_else(|| TokenError::Failed(format!("{shown} answered without an `access_token`")))?;
    let token_type = text("token_type").unwrap_or("Bearer");
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(TokenError::Failed(format!(
            "{shown} issued a token of type {token_type:?}; only Bearer tokens are supported"
        )));
    }
    let expires_in = match body.get("expires_in") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|s: &f64| s.is_finite() && *s >= 0.0);
    Ok(Issued {
        access: Secret::new(access),
        token_type: token_type.to_string(),
        expires_in,
        scope: text("scope").map(str::to_string),
        refresh: text("refresh_token").map(Secret::new),
        id_token: text("id_token").map(Secret::new),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(secret: Option<&str>, hint: Option<&str>) -> Client {
        Client {
            id: "c".into(),
            secret: secret.map(Secret::new),
            method_hint: hint.map(str::to_string),
        }
    }

    fn methods(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_method_the_server_supports() {
        use AuthMethod::{ClientSecretBasic, ClientSecretPost};
        let secret = client(Some("s"), None);
        assert_eq!(auth_method(&secret, &[]), ClientSecretBasic);
        assert_eq!(
            auth_method(&secret, &methods(&["client_secret_post"])),
            ClientSecretPost
        );
        assert_eq!(auth_method(&secret, &methods(&["none"])), AuthMethod::None);
        let public = client(None, None);
        assert_eq!(
            auth_method(&public, &methods(&["client_secret_basic"])),
            AuthMethod::None
        );
        let hinted = client(Some("s"), Some("client_secret_post"));
        assert_eq!(
            auth_method(
                &hinted,
                &methods(&["client_secret_basic", "client_secret_post"])
            ),
            ClientSecretPost
        );
        // A hint the server does not support is not followed.
        assert_eq!(
            auth_method(&hinted, &methods(&["client_secret_basic"])),
            ClientSecretBasic
        );
    }

    #[test]
    fn token_answers() {
        let url = Url::parse("https://as.example/token").unwrap();
        let answer = |status: u16, body: &str| Answer {
            status,
            body: body.as_bytes().to_vec(),
            url: url.clone(),
        };
        let ok = parse_issued(
            &answer(200, r#"{"access_token":"a","token_type":"bearer","expires_in":"60","refresh_token":"r"}"#),
            &url,
        )
        .unwrap();
        assert_eq!(
            (ok.expires_in, ok.refresh.unwrap().expose()),
            (Some(60.0), "r")
        );
        let refused = parse_issued(
            &answer(
                400,
                r#"{"error":"invalid_grant","error_description":"expired"}"#,
            ),
            &url,
        );
        assert_eq!(refused.unwrap_err().to_string(), "invalid_grant (expired)");
        let dpop = parse_issued(
            &answer(200, r#"{"access_token":"a","token_type":"DPoP"}"#),
            &url,
        );
        assert!(dpop.unwrap_err().to_string().contains("only Bearer tokens"));
        let html = parse_issued(&answer(500, "<html>oops</html>"), &url);
        assert!(html
            .unwrap_err()
            .to_string()
            .contains("HTTP 500: <html>oops</html>"));
    }
}
