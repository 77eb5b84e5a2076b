//! The HTTP client both remote transports use: rustls with the `ring` provider (installed once, so
//! no OpenSSL and no C build), no total timeout (an event stream stays open for as long as a call
//! runs; requests have their own MCP timeouts), and redirects only within the same origin, since
//! another host must not receive the session id and the credentials.

use crate::bounded_read::{self, FileLimits};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::path::Path;
use std::sync::Once;
use std::time::Duration;

/// Redirect hops followed for one request.
const MAX_REDIRECTS: usize = 5;

fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when the host process installed a provider first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client for one server. `ca_file`: PEM certificates trusted in addition to the system's.
pub fn build(ca_file: Option<&Path>, connect_timeout: Duration) -> Result<reqwest::Client, String> {
    builder(ca_file, connect_timeout)?
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// The settings every client of ours shares (TLS, `caFile`, timeouts, user agent); the caller
/// chooses the redirect policy.
pub fn builder(
    ca_file: Option<&Path>,
    connect_timeout: Duration,
) -> Result<reqwest::ClientBuilder, String> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        // A reused idle connection can stall on delayed ACKs; MCP traffic is sparse anyway.
        .pool_max_idle_per_host(0)
        .user_agent(concat!("pi-mcp-native/", env!("CARGO_PKG_VERSION")));
    if let Some(path) = ca_file {
        let limit = FileLimits::default().config_bytes;
        let pem = bounded_read::found(path, limit)
            .map_err(|e| format!("`caFile` {} {e}", path.display()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|certs| !certs.is_empty())
            .ok_or_else(|| {
                format!(
                    "`caFile` {} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)",
                    path.display()
                )
            })?;
        builder = builder.tls_certs_merge(certs);
    }
    Ok(builder)
}

/// Only 307/308 (which keep the POST body) to the same origin.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && same_origin && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Headers the transports manage themselves; a configured one would break the protocol.
const RESERVED: [&str; 5] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "last-event-id",
    "mcp-protocol-version",
];

/// The configured headers as a header map. `authorization` (from `auth`) replaces a configured
/// `Authorization` header. Errors name the header, never its value.
pub fn header_map(
    headers: &[(String, crate::secret::Secret)],
    authorization: Option<&crate::secret::Secret>,
) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("header name {name:?} is not a valid HTTP header name"))?;
        if RESERVED.contains(&header.as_str()) {
            return Err(format!(
                "header `{name}` is set by the MCP transport itself; remove it from `headers`"
            ));
        }
        if authorization.is_some() && header == reqwest::header::AUTHORIZATION {
            continue;
        }
        map.insert(header, sensitive_value(name, value.expose())?);
    }
    if let Some(auth) = authorization {
        map.insert(
            reqwest::header::AUTHORIZATION,
            sensitive_value("Authorization", auth.expose())?,
        );
    }
    Ok(map)
}

pub fn sensitive_value(name: &str, value: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
        format!(
            "the value of header `{name}` contains characters HTTP does not allow (e.g. a newline)"
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;

    #[test]
    fn headers_and_authorization() {
        let headers = vec![
            ("X-Team".to_string(), Secret::new("blue")),
            ("Authorization".to_string(), Secret::new("Basic old")),
        ];
        let map = header_map(&headers, Some(&Secret::new("Bearer t0k"))).unwrap();
        assert_eq!(map["x-team"], "blue");
        assert_eq!(map["authorization"], "Bearer t0k");
        assert!(map["authorization"].is_sensitive());
        let map = header_map(&headers, None).unwrap();
        assert_eq!(map["authorization"], "Basic old");
    }

    #[test]
    fn bad_headers_are_named_not_quoted() {
        let bad = vec![("Accept".to_string(), Secret::new("x"))];
        assert!(header_map(&bad, None).unwrap_err().contains("`Accept`"));
        let bad = vec![("X-Key".to_string(), Secret::new("se\ncret"))];
        let err = header_map(&bad, None).unwrap_err();
        assert!(err.contains("`X-Key`") && !err.contains("se"), "{err}");
    }
}
