//! What servers tell us, checked before anything is used: the `WWW-Authenticate` challenge, a
//! protected resource's metadata (RFC 9728) and an authorization server's metadata (RFC 8414 /
//! OpenID discovery). A document that breaks a rule is refused with a message naming the
//! document and the rule.

use pi_mcp_connection::clean::Link;
use pi_mcp_connection::pool::display_url;
use serde_json::{Map, Value};
use url::{Host, Url};

/// A `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<Url>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge of a header (the first one when no scheme is `Bearer`); relative
    /// URLs resolve against `base`.
    pub fn parse(header: &str, base: &Url) -> Challenge {
        let challenges = auth_params(header);
        let chosen = challenges
            .iter()
            .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .or_else(|| challenges.first());
        let Some((_, params)) = chosen else {
            return Challenge::default();
        };
        let param = |name: &str| {
            params
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Challenge {
            resource_metadata: param("resource_metadata").and_then(|u| base.join(&u).ok()),
            scope: param("scope"),
            error: param("error"),
        }
    }

    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// `scheme param=value, param="quoted \" value", … , scheme2 …` as (scheme, params) pairs.
fn auth_params(header: &str) -> Vec<(String, Vec<(String, String)>)> {
    let chars: Vec<char> = header.chars().collect();
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut i = 0;
    let token_end = |mut j: usize| {
        while j < chars.len() && !chars[j].is_whitespace() && !matches!(chars[j], '=' | ',') {
            j += 1;
        }
        j
    };
    while i < chars.len() {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let end = token_end(i);
        let token: String = chars[i..end].iter().collect();
        i = end;
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        if j < chars.len() && chars[j] == '=' && !token.is_empty() {
            j += 1;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let mut value = String::new();
            if j < chars.len() && chars[j] == '"' {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    value.push(chars[j]);
                    j += 1;
                }
                j += 1;
            } else {
                while j < chars.len() && chars[j] != ',' && !chars[j].is_whitespace() {
                    value.push(chars[j]);
                    j += 1;
                }
            }
            i = j;
            match out.last_mut() {
                Some((_, params)) => params.push((token, value)),
                None => out.push((String::new(), vec![(token, value)])),
            }
        } else if !token.is_empty() {
            out.push((token, Vec::new()));
        } else {
            i += 1;
        }
    }
    out
}

/// A protected resource's metadata (RFC 9728).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceMetadata {
    /// The document as served (stored for Pi's discovery cache).
    pub raw: Map<String, Value>,
    pub resource: Url,
    pub authorization_servers: Vec<Url>,
    pub scopes_supported: Option<Vec<String>>,
}

/// An authorization server's metadata (RFC 8414), or the defaults a 2025-03-26 server implies.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerMetadata {
    pub raw: Map<String, Value>,
    pub issuer: String,
    pub authorization_endpoint: Url,
    pub token_endpoint: Url,
    pub registration_endpoint: Option<Url>,
    pub revocation_endpoint: Option<Url>,
    pub scopes_supported: Option<Vec<String>>,
    /// Empty when not stated.
    pub token_auth_methods: Vec<String>,
    pub grant_types: Option<Vec<String>>,
    pub client_id_metadata_documents: bool,
    pub iss_parameter: bool,
}

/// A checked document's fields.
struct Doc<'a> {
    map: &'a Map<String, Value>,
    what: &'a str,
    from: &'a Url,
}

impl Doc<'_> {
    fn invalid(&self, why: String) -> String {
        format!(
            "the {} at {} is not valid: {why}",
            self.what,
            display_url(self.from.as_str())
        )
    }

    /// An http(s) URL; one with hidden characters (which a browser or a person may be given) is
    /// refused.
    fn url(&self, field: &str) -> Result<Option<Url>, String> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => match Link::check(s).map(|()| Url::parse(s)) {
                Err(hidden) => Err(self.invalid(format!("`{field}` is refused: {hidden}"))),
                Ok(Ok(url)) if matches!(url.scheme(), "http" | "https") && url.has_host() => {
                    Ok(Some(url))
                }
                Ok(_) => Err(self.invalid(format!("`{field}` is not an http(s) URL"))),
            },
            Some(_) => Err(self.invalid(format!("`{field}` is not a string"))),
        }
    }

    fn required_url(&self, field: &str) -> Result<Url, String> {
        self.url(field)?
            .ok_or_else(|| self.invalid(format!("`{field}` is missing")))
    }

    /// An endpoint credentials or codes are sent to: HTTPS, or HTTP on this machine.
    fn endpoint(&self, field: &str) -> Result<Option<Url>, String> {
        let url = self.url(field)?;
        if let Some(url) = &url {
            if !secure(url) {
                return Err(self.invalid(format!(
                    "`{field}` {} is plain HTTP on another host; authorization endpoints must use HTTPS",
                    display_url(url.as_str())
                )));
            }
        }
        Ok(url)
    }

    fn strings(&self, field: &str) -> Result<Option<Vec<String>>, String> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| self.invalid(format!("`{field}` is not a list of strings"))),
            Some(_) => Err(self.invalid(format!("`{field}` is not a list of strings"))),
        }
    }

    fn flag(&self, field: &str) -> bool {
        self.map.get(field).and_then(Value::as_bool) == Some(true)
    }
}

/// HTTPS, or HTTP to this machine.
pub fn secure(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && is_loopback(url))
}

pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn object<'a>(value: &'a Value, what: &str, from: &Url) -> Result<&'a Map<String, Value>, String> {
    value.as_object().ok_or_else(|| {
        format!(
            "the {what} at {} is not a JSON object",
            display_url(from.as_str())
        )
    })
}

pub fn resource_metadata(value: &Value, from: &Url) -> Result<ResourceMetadata, String> {
    let map = object(value, "protected resource metadata", from)?;
    let doc = Doc {
        map,
        what: "protected resource metadata",
        from,
    };
    let authorization_servers = doc
        .strings("authorization_servers")?
        .unwrap_or_default()
        .iter()
        .map(|s| match Url::parse(s) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
            _ => Err(doc.invalid(format!(
                "`authorization_servers` holds {s:?}, which is not an http(s) URL"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ResourceMetadata {
        raw: map.clone(),
        resource: doc.required_url("resource")?,
        authorization_servers,
        scopes_supported: doc.strings("scopes_supported")?,
    })
}

pub fn server_metadata(value: &Value, from: &Url) -> Result<ServerMetadata, String> {
    let map = object(value, "authorization server metadata", from)?;
    let doc = Doc {
        map,
        what: "authorization server metadata",
        from,
    };
    let issuer = match map.get("issuer") {
        Some(Value::String(s)) if Url::parse(s).is_ok() => s.clone(),
        Some(_) => return Err(doc.invalid("`issuer` is not a URL".into())),
        None => return Err(doc.invalid("`issuer` is missing".into())),
    };
    if let Some(types) = doc.strings("response_types_supported")? {
        if !types.iter().any(|t| t == "code") {
            return Err(doc.invalid(
                "`response_types_supported` lacks \"code\": this server offers no authorization code flow"
                    .into(),
            ));
        }
    }
    match doc.strings("code_challenge_methods_supported")? {
        Some(methods) if methods.iter().any(|m| m == "S256") => {}
        Some(_) => {
            return Err(doc.invalid(
                "`code_challenge_methods_supported` lacks \"S256\"; MCP sign-in requires PKCE with S256"
                    .into(),
            ))
        }
        None => {
            return Err(doc.invalid(
                "`code_challenge_methods_supported` is missing, so PKCE support is not stated; MCP sign-in requires PKCE with S256"
                    .into(),
            ))
        }
    }
    Ok(ServerMetadata {
        raw: map.clone(),
        issuer,
        authorization_endpoint: doc
            .endpoint("authorization_endpoint")?
            .ok_or_else(|| doc.invalid("`authorization_endpoint` is missing".into()))?,
        token_endpoint: doc
            .endpoint("token_endpoint")?
            .ok_or_else(|| doc.invalid("`token_endpoint` is missing".into()))?,
        registration_endpoint: doc.endpoint("registration_endpoint")?,
        revocation_endpoint: doc.endpoint("revocation_endpoint")?,
        scopes_supported: doc.strings("scopes_supported")?,
        token_auth_methods: doc
            .strings("token_endpoint_auth_methods_supported")?
            .unwrap_or_default(),
        grant_types: doc.strings("grant_types_supported")?,
        client_id_metadata_documents: doc.flag("client_id_metadata_document_supported"),
        iss_parameter: doc.flag("authorization_response_iss_parameter_supported"),
    })
}

/// The 2025-03-26 defaults for a server without metadata: `/authorize`, `/token` and
/// `/register` at the origin of `base`.
pub fn default_endpoints(base: &Url) -> Result<ServerMetadata, String> {
    let origin = base.origin().ascii_serialization();
    let at = |path: &str| Url::parse(&format!("{origin}{path}")).map_err(|e| e.to_string());
    let metadata = ServerMetadata {
        raw: Map::new(),
        issuer: origin.clone(),
        authorization_endpoint: at("/authorize")?,
        token_endpoint: at("/token")?,
        registration_endpoint: Some(at("/register")?),
        revocation_endpoint: None,
        scopes_supported: None,
        token_auth_methods: Vec::new(),
        grant_types: None,
        client_id_metadata_documents: false,
        iss_parameter: false,
    };
    if !secure(&metadata.token_endpoint) {
        return Err(format!(
            "{origin} has no authorization server metadata, and its default endpoints would be plain HTTP on another host; authorization endpoints must use HTTPS"
        ));
    }
    Ok(metadata)
}

/// Whether `resource` (from metadata) covers `server`: same origin, and the server's path at or
/// below the resource's (RFC 9728 §3.3 allows a resource that names a prefix).
pub fn covers(resource: &Url, server: &Url) -> bool {
    let path = |u: &Url| {
        let p = u.path();
        if p.ends_with('/') {
            p.to_string()
        } else {
            format!("{p}/")
        }
    };
    resource.origin() == server.origin() && path(server).starts_with(&path(resource))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn challenges() {
        let base = url("https://mcp.example/mcp");
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#,
            &base,
        );
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            c.resource_metadata.unwrap().as_str(),
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
        let c = Challenge::parse(
            r#"Basic realm="x", Bearer realm="a \"q\"", scope=read,resource_metadata=/prm"#,
            &base,
        );
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(
            c.resource_metadata.unwrap().as_str(),
            "https://mcp.example/prm"
        );
        assert_eq!(Challenge::parse("", &base), Challenge::default());
    }

    fn as_doc() -> Value {
        json!({
            "issuer": "https://as.example",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        })
    }

    #[test]
    fn hostile_server_metadata_is_refused() {
        let from = url("https://as.example/.well-known/oauth-authorization-server");
        assert!(server_metadata(&as_doc(), &from).is_ok());
        let mut http = as_doc();
        http["authorization_endpoint"] = json!("http://evil.example/authorize");
        let err = server_metadata(&http, &from).unwrap_err();
        assert!(err.contains("`authorization_endpoint` http://evil.example/authorize is plain HTTP on another host"), "{err}");
        let mut local = as_doc();
        local["token_endpoint"] = json!("http://127.0.0.1:9/token");
        assert!(server_metadata(&local, &from).is_ok());
        let mut plain = as_doc();
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(server_metadata(&plain, &from)
            .unwrap_err()
            .contains("lacks \"S256\""));
        let mut bad = as_doc();
        bad["token_endpoint"] = json!(["x"]);
        assert!(server_metadata(&bad, &from)
            .unwrap_err()
            .contains("`token_endpoint` is not a string"));
        assert!(server_metadata(&json!([1]), &from)
            .unwrap_err()
            .contains("not a JSON object"));
    }

    #[test]
    fn resources_cover_their_paths() {
        let server = url("https://h.example/api/mcp");
        assert!(covers(&url("https://h.example/"), &server));
        assert!(covers(&url("https://h.example/api"), &server));
        assert!(covers(&url("https://h.example/api/mcp"), &server));
        assert!(!covers(&url("https://h.example/ap"), &server));
        assert!(!covers(&url("https://evil.example/api/mcp"), &server));
        assert!(!covers(&url("http://h.example/api/mcp"), &server));
    }
}
