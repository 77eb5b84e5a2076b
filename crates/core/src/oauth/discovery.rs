//! Finding a server's authorization server, in the order the MCP authorization spec gives:
//! the challenge's `resource_metadata`, else the protected resource metadata at the path-based
//! then the root well-known URL (RFC 9728); then the authorization server's metadata (RFC 8414
//! with path insertion, then OpenID discovery); without resource metadata, the 2025-03-26 way:
//! metadata at the server's origin, else its default endpoints. `oauth.authServerMetadataUrl`
//! replaces the authorization server part.

use super::http::{Answer, Http};
use super::metadata::{self, Challenge, ResourceMetadata, ServerMetadata};
use pi_mcp_connection::pool::display_url;
use serde_json::{json, Map, Value};
use url::Url;

#[derive(Clone, Debug)]
pub struct Discovered {
    pub resource: Option<ResourceMetadata>,
    pub resource_metadata_url: Option<Url>,
    pub server: ServerMetadata,
    /// The authorization server as named by the resource (or the configured metadata's issuer).
    pub authorization_server: String,
}

impl Discovered {
    /// The RFC 8707 `resource` parameter: the resource the metadata names, else the server URL.
    pub fn resource_param(&self, server_url: &Url) -> String {
        match &self.resource {
            Some(resource) => resource
                .raw
                .get("resource")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| resource.resource.to_string()),
            None => {
                let mut url = server_url.clone();
                url.set_fragment(None);
                url.to_string()
            }
        }
    }

    /// Pi's discovery cache entry (`discovery` in the server's state).
    pub fn to_pi(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "authorizationServerUrl".into(),
            json!(self.authorization_server),
        );
        if !self.server.raw.is_empty() {
            out.insert(
                "authorizationServerMetadata".into(),
                Value::Object(self.server.raw.clone()),
            );
        }
        if let Some(resource) = &self.resource {
            out.insert(
                "resourceMetadata".into(),
                Value::Object(resource.raw.clone()),
            );
        }
        if let Some(url) = &self.resource_metadata_url {
            out.insert("resourceMetadataUrl".into(), json!(url.as_str()));
        }
        out
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// `oauth.authServerMetadataUrl`: used instead of discovery, trusted as configured.
    pub metadata_url: Option<&'a str>,
    /// `oauth.skipIssuerMetadataValidation` (pi-mcp-adapter's escape hatch).
    pub skip_issuer_check: bool,
}

pub async fn discover(
    http: &Http,
    server_url: &Url,
    challenge: Option<&Challenge>,
    options: Options<'_>,
) -> Result<Discovered, String> {
    let found = resource_metadata(http, server_url, challenge).await?;
    if let Some((resource, from)) = &found {
        if !metadata::covers(&resource.resource, server_url) {
            return Err(format!(
                "the protected resource metadata at {} is for {}, not for this server ({}); sign-in stopped",
                display_url(from.as_str()),
                display_url(resource.resource.as_str()),
                display_url(server_url.as_str())
            ));
        }
    }
    let (resource, resource_metadata_url) = match found {
        Some((resource, from)) => (Some(resource), Some(from)),
        None => (None, None),
    };
    if let Some(configured) = options.metadata_url {
        let url = Url::parse(configured)
            .ok()
            .filter(metadata::secure)
            .ok_or_else(|| {
                format!("`oauth.authServerMetadataUrl` {configured:?} must be an https:// URL (or http:// on this machine)")
            })?;
        let answer = http.get(&url).await?;
        let server = match document(&answer) {
            Some(doc) => metadata::server_metadata(&doc, &answer.url)?,
            None => {
                return Err(format!(
                    "`oauth.authServerMetadataUrl` {} answered HTTP {} without a metadata document",
                    display_url(url.as_str()),
                    answer.status
                ))
            }
        };
        return Ok(Discovered {
            authorization_server: server.issuer.clone(),
            resource,
            resource_metadata_url,
            server,
        });
    }
    let authorization_server = match &resource {
        Some(resource) => resource.authorization_servers.first().cloned().ok_or_else(|| {
            format!(
                "the protected resource metadata of {} names no authorization server (`authorization_servers` is empty)",
                display_url(server_url.as_str())
            )
        })?,
        // 2025-03-26: the authorization server is the MCP server's origin.
        None => Url::parse(&server_url.origin().ascii_serialization()).map_err(|e| e.to_string())?,
    };
    let issuer = issuer_text(&authorization_server, resource.is_some());
    let mut tried = Vec::new();
    for url in server_metadata_urls(&authorization_server) {
        let answer = http.get(&url).await?;
        let Some(doc) = document(&answer) else {
            if let Some(broken) = server_error(&answer) {
                return Err(broken);
            }
            tried.push(display_url(url.as_str()));
            continue;
        };
        let server = metadata::server_metadata(&doc, &answer.url)?;
        if !options.skip_issuer_check && trimmed(&server.issuer) != trimmed(&issuer) {
            return Err(format!(
                "the authorization server metadata at {} names the issuer {:?}, not {:?} as it must (RFC 8414 §3.3); sign-in stopped",
                display_url(url.as_str()),
                server.issuer,
                issuer
            ));
        }
        return Ok(Discovered {
            resource,
            resource_metadata_url,
            server,
            authorization_server: issuer,
        });
    }
    if resource.is_some() {
        return Err(format!(
            "no authorization server metadata found for {issuer} (tried {})",
            tried.join(", ")
        ));
    }
    Ok(Discovered {
        server: metadata::default_endpoints(server_url)?,
        resource,
        resource_metadata_url,
        authorization_server: issuer,
    })
}

/// The issuer as the resource metadata names it; the bare origin (no `/`) for the 2025-03-26
/// fallback, as servers of that era write it.
fn issuer_text(url: &Url, named: bool) -> String {
    if named {
        url.as_str().to_string()
    } else {
        url.origin().ascii_serialization()
    }
}

fn trimmed(s: &str) -> &str {
    s.trim_end_matches('/')
}

/// A server failing (5xx other than 502): discovery stops with it. 4xx and 502 only mean "not
/// here", and the next place is tried.
fn server_error(answer: &Answer) -> Option<String> {
    (answer.status >= 500 && answer.status != 502).then(|| {
        format!(
            "{} answered HTTP {}: {}",
            display_url(answer.url.as_str()),
            answer.status,
            answer.excerpt()
        )
    })
}

/// A JSON object answered with a 2xx status; anything else is a miss.
fn document(answer: &Answer) -> Option<Value> {
    answer
        .ok()
        .then(|| answer.json())
        .flatten()
        .filter(Value::is_object)
}

/// The protected resource metadata and where it was found; `None` when the server has none.
async fn resource_metadata(
    http: &Http,
    server_url: &Url,
    challenge: Option<&Challenge>,
) -> Result<Option<(ResourceMetadata, Url)>, String> {
    let mut candidates: Vec<Url> = challenge
        .and_then(|c| c.resource_metadata.clone())
        .into_iter()
        .collect();
    let path = server_url.path().trim_end_matches('/');
    let origin = server_url.origin().ascii_serialization();
    if !path.is_empty() {
        candidates.extend(Url::parse(&format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        )));
    }
    candidates.extend(Url::parse(&format!(
        "{origin}/.well-known/oauth-protected-resource"
    )));
    candidates.dedup();
    for url in candidates {
        let answer = http.get(&url).await?;
        if let Some(doc) = document(&answer) {
            return Ok(Some((metadata::resource_metadata(&doc, &answer.url)?, url)));
        }
        if let Some(broken) = server_error(&answer) {
            return Err(broken);
        }
    }
    Ok(None)
}

/// RFC 8414 §3.1 with path insertion, then OpenID discovery (inserted, then appended).
fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls.iter().filter_map(|u| Url::parse(u).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_in_the_specs_order() {
        let urls = |s: &str| {
            server_metadata_urls(&Url::parse(s).unwrap())
                .iter()
                .map(|u| u.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            urls("https://as.example/tenant1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            urls("https://as.example/"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }
}
