//! Servers configured with a `url`: Streamable HTTP first (rmcp's transport: sessions, resumable
//! streams, re-initialization after an expired session, a DELETE on close), the legacy HTTP+SSE
//! transport when the server rejects that. The transport that worked is reported, so the next
//! connect tries it first.

pub mod client;
mod credentials;
mod headers_program;
pub mod param_headers;
mod session;
mod sse;

use super::handler::Handler;
use super::handshake::{self, Protocol, Service};
use super::link::RemoteKind;
use super::{AuthNeed, ConnectError};
use crate::secret::{Scrubber, Secret};
pub use credentials::{Credentials, SharedCredentials};
pub use headers_program::HeadersProgram;
use reqwest::header::HeaderMap;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::StreamableHttpClientTransport;
pub use sse::describe_reqwest;
use sse::{SseError, SseTransport};
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Bounds the TCP and TLS set-up of each request; the MCP timeouts bound the rest.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connect waits for the session's standalone stream (see `session`).
const STANDALONE_WAIT: Duration = Duration::from_secs(2);

#[derive(Clone, Debug, PartialEq)]
pub struct RemoteSpec {
    /// Secret because a key may sit in its query string.
    pub url: Secret,
    pub headers: Vec<(String, Secret)>,
    /// The whole `Authorization` value (e.g. `Bearer …`), from the server's `auth`.
    pub authorization: Option<Secret>,
    /// Credentials asked for at each request (OAuth); they replace `authorization` and a
    /// configured `Authorization` header.
    pub credentials: Option<SharedCredentials>,
    /// PEM certificates to trust besides the system's.
    pub ca_file: Option<PathBuf>,
    /// The transport that worked last time, tried first.
    pub prefer: Option<RemoteKind>,
    /// Adds headers to each request (`requestHeadersCommand`).
    pub signer: Option<HeadersProgram>,
}

impl RemoteSpec {
    /// The URL as messages may show it: no user info, the query reduced to `?…`.
    pub fn display_url(&self) -> String {
        display_url(self.url.expose())
    }

    /// Hides every credential of this spec in a text.
    pub fn scrubber(&self) -> Scrubber {
        let mut scrubber = Scrubber::default();
        scrubber.replace(&self.url, &self.display_url());
        if let Ok(url) = Url::parse(self.url.expose()) {
            for (_, value) in url.query_pairs() {
                scrubber.hide(&Secret::new(value.into_owned()));
            }
            if let Some(password) = url.password() {
                scrubber.hide(&Secret::new(password));
            }
        }
        for secret in self
            .headers
            .iter()
            .map(|(_, v)| v)
            .chain(&self.authorization)
        {
            scrubber.hide(secret);
            // `Bearer abc`: the token alone may be quoted too.
            if let Some((_, token)) = secret.expose().split_once(' ') {
                scrubber.hide(&Secret::new(token));
            }
        }
        scrubber
    }
}

/// A URL as messages may show it: no user info, the query reduced to `?…`.
pub fn display_url(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(mut url) => {
            let had_query = url.query().is_some();
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            let mut shown = url.to_string();
            if had_query {
                shown.push_str("?…");
            }
            shown
        }
        Err(_) => "(an invalid URL)".to_string(),
    }
}

pub struct Opened {
    pub service: Service,
    pub kind: RemoteKind,
}

/// Connects, picking the transport; every message is free of the spec's credentials.
pub async fn open(
    spec: &RemoteSpec,
    protocol: Protocol,
    handler: Handler,
    ct: CancellationToken,
) -> Result<Opened, ConnectError> {
    let scrubber = spec.scrubber();
    connect(spec, protocol, handler, ct)
        .await
        .map_err(|e| e.map(|text| scrubber.scrub(&text)))
}

async fn connect(
    spec: &RemoteSpec,
    protocol: Protocol,
    handler: Handler,
    ct: CancellationToken,
) -> Result<Opened, ConnectError> {
    let url = Url::parse(spec.url.expose())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        .ok_or_else(|| {
            ConnectError::Failed(format!(
                "`url` {} is not an http:// or https:// URL",
                spec.display_url()
            ))
        })?;
    let client =
        client::build(spec.ca_file.as_deref(), CONNECT_TIMEOUT).map_err(ConnectError::Failed)?;
    let mut headers = client::header_map(&spec.headers, spec.authorization.as_ref())
        .map_err(ConnectError::Failed)?;
    if spec.credentials.is_some() {
        headers.remove(reqwest::header::AUTHORIZATION);
    }
    // 2026-07-28 has no HTTP+SSE transport; a server that has only that is legacy.
    let sse_allowed = protocol != Protocol::Modern;
    let sse = || legacy(&client, &url, &headers, spec, handler.clone(), ct.clone());

    if spec.prefer == Some(RemoteKind::Sse) && sse_allowed {
        match sse().await {
            Ok(service) => return Ok(opened(service, RemoteKind::Sse)),
            Err(Verdict::NeedsAuth(why)) => return Err(ConnectError::NeedsAuth(why)),
            // The server changed since: probe from the start.
            Err(_) => {}
        }
    }
    let streamable = streamable(
        &client,
        spec,
        &url,
        &headers,
        handler.clone(),
        protocol,
        ct.clone(),
    );
    match streamable.await {
        Ok(service) => Ok(opened(service, RemoteKind::StreamableHttp)),
        Err(Verdict::Rejected(why)) if sse_allowed => match sse().await {
            Ok(service) => Ok(opened(service, RemoteKind::Sse)),
            Err(Verdict::NeedsAuth(auth)) => Err(ConnectError::NeedsAuth(auth)),
            Err(Verdict::Rejected(other) | Verdict::Failed(other)) => Err(ConnectError::Failed(
                format!("{why}; the legacy SSE transport did not work either ({other})"),
            )),
        },
        Err(Verdict::NeedsAuth(why)) => Err(ConnectError::NeedsAuth(why)),
        Err(Verdict::Rejected(why)) if !sse_allowed => Err(ConnectError::Failed(format!(
            "{why}; `protocolVersion` 2026-07-28 has no legacy SSE transport to fall back to \
             (\"auto\" or no `protocolVersion` would try it)"
        ))),
        Err(Verdict::Rejected(why) | Verdict::Failed(why)) => Err(ConnectError::Failed(why)),
    }
}

fn opened(service: Service, kind: RemoteKind) -> Opened {
    Opened { service, kind }
}

/// How a transport attempt failed.
enum Verdict {
    /// 401/403: credentials missing or refused.
    NeedsAuth(AuthNeed),
    /// The server answered, but not as this transport expects: another may work.
    Rejected(String),
    Failed(String),
}

async fn streamable(
    client: &reqwest::Client,
    spec: &RemoteSpec,
    url: &Url,
    headers: &HeaderMap,
    handler: Handler,
    protocol: Protocol,
    ct: CancellationToken,
) -> Result<Service, Verdict> {
    let custom = headers
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
    let tasks = handler.client.task_declaration();
    let (client, standalone) = session::SessionAware::new(
        client.clone(),
        spec.credentials.clone(),
        spec.signer.clone(),
        tasks,
    );
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let service = handshake::start(handler, transport, protocol, ct)
        .await
        .map_err(|e| classify_init(&e))?;
    standalone.settled(STANDALONE_WAIT).await;
    Ok(service)
}

async fn legacy(
    client: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
    spec: &RemoteSpec,
    handler: Handler,
    ct: CancellationToken,
) -> Result<Service, Verdict> {
    let mut headers = headers.clone();
    // The legacy transport keeps the credentials it connected with.
    if let Some(credentials) = &spec.credentials {
        if let Some(value) = credentials.0.current().await {
            let value = client::sensitive_value("Authorization", value.expose())
                .map_err(Verdict::Failed)?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
    }
    let tasks = handler.client.task_declaration();
    let signer = spec.signer.as_ref();
    let transport = SseTransport::connect(client.clone(), url.clone(), headers, signer, tasks)
        .await
        .map_err(|e| classify_sse(&e))?;
    // A server on the legacy transport speaks the legacy lifecycle.
    handshake::start(handler, transport, Protocol::Initialize, ct)
        .await
        .map_err(|e| classify_init(&e))
}

fn classify_sse(error: &SseError) -> Verdict {
    match error {
        SseError::Status { status, .. } => by_status(*status, error.to_string()),
        SseError::NotAnEventStream(_) | SseError::NoEndpoint(_) | SseError::BadEndpoint(_) => {
            Verdict::Rejected(error.to_string())
        }
        _ => Verdict::Failed(error.to_string()),
    }
}

fn by_status(status: u16, text: String) -> Verdict {
    match status {
        401 | 403 => Verdict::NeedsAuth(AuthNeed::new(status, None)),
        400..=499 => Verdict::Rejected(text),
        _ => Verdict::Failed(text),
    }
}

fn classify_init(error: &ClientInitializeError) -> Verdict {
    match error {
        ClientInitializeError::TransportError { error, .. } => {
            let inner = error.error.as_ref();
            if let Some(http) = inner.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                classify_streamable(http)
            } else if let Some(sse) = inner.downcast_ref::<SseError>() {
                classify_sse(sse)
            } else {
                Verdict::Failed(inner.to_string())
            }
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => classify_init(fallback),
        ClientInitializeError::JsonRpcError(e) => Verdict::Rejected(format!(
            "the server refused `initialize` (MCP error {}: {})",
            e.code.0, e.message
        )),
        ClientInitializeError::ConnectionClosed(_) => {
            Verdict::Failed("the server closed the connection during `initialize`".into())
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => Verdict::Failed(format!(
            "the server supports protocol versions {}, none of which this client speaks; \
             remove `protocolVersion` or set it to \"auto\"",
            server_supported
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        other => Verdict::Failed(other.to_string()),
    }
}

fn classify_streamable(error: &StreamableHttpError<reqwest::Error>) -> Verdict {
    if let Some(need) = AuthNeed::from_streamable(error) {
        return Verdict::NeedsAuth(need);
    }
    match error {
        StreamableHttpError::HttpStatus(status) => {
            Verdict::Failed(format!("the server answered HTTP {}", status.status))
        }
        StreamableHttpError::UnexpectedServerResponse(text) => match leading_status(text) {
            Some(status) => by_status(status, crate::clean::excerpt(text, 200)),
            None => Verdict::Rejected(crate::clean::excerpt(text, 200)),
        },
        StreamableHttpError::UnexpectedContentType(kind) => Verdict::Rejected(format!(
            "the answer is {}, not MCP",
            kind.as_deref().unwrap_or("without a content type")
        )),
        StreamableHttpError::Deserialize(_) => {
            Verdict::Rejected("the answer is not JSON-RPC".into())
        }
        StreamableHttpError::Client(e) => match e.status() {
            Some(status) => by_status(status.as_u16(), format!("HTTP {status}")),
            None => Verdict::Failed(sse::describe_reqwest(e)),
        },
        other => Verdict::Failed(other.to_string()),
    }
}

/// rmcp reports other statuses as text starting with `HTTP 404 Not Found: …`.
fn leading_status(text: &str) -> Option<u16> {
    text.strip_prefix("HTTP ")?.get(..3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            display_url("https://user:pw@h.example:8443/mcp?key=abc#x"),
            "https://h.example:8443/mcp?…"
        );
        assert_eq!(
            display_url("http://127.0.0.1:3/sse"),
            "http://127.0.0.1:3/sse"
        );
        let spec = RemoteSpec {
            url: Secret::new("https://h.example/mcp?key=s3cr3t"),
            headers: vec![("X-Api-Key".into(), Secret::new("hdr-secret"))],
            authorization: Some(Secret::new("Bearer tok-123")),
            credentials: None,
            ca_file: None,
            prefer: None,
            signer: None,
        };
        let scrubbed = spec.scrubber().scrub(
            "error sending request for url (https://h.example/mcp?key=s3cr3t): tok-123 hdr-secret s3cr3t",
        );
        assert_eq!(
            scrubbed,
            "error sending request for url (https://h.example/mcp?…): *** *** ***"
        );
    }

    #[test]
    fn statuses() {
        assert_eq!(leading_status("HTTP 404 Not Found: <html>"), Some(404));
        assert_eq!(leading_status("HTTPS"), None);
        assert!(matches!(by_status(405, "x".into()), Verdict::Rejected(_)));
        assert!(matches!(by_status(401, "x".into()), Verdict::NeedsAuth(_)));
        assert!(matches!(by_status(502, "x".into()), Verdict::Failed(_)));
    }
}
