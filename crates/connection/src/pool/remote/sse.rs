//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp no longer ships: a GET opens an
//! event stream whose first event, `endpoint`, names the URL to POST messages to; the replies come
//! back on the stream.
//!
//! A reader task owns the stream, so [`Transport::receive`] is cancel-safe. It follows re-sent
//! `endpoint` events, ignores `ping` and unknown events, and reconnects a dropped stream (with
//! `Last-Event-ID`, honouring `retry`). When the server answers the reconnect with a new session,
//! the requests the old session took with it fail at once and the client's `initialize` is
//! replayed, so the connection goes on working.

use super::HeadersProgram;
use crate::pool::client_tasks::wire::{self, TaskCapability};
use futures::stream::BoxStream;
use futures::StreamExt;
use parking_lot::Mutex;
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, ErrorData, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use sse_stream::{Sse, SseStream};
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use url::Url;

type Events = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// Reconnect attempts after the stream drops, before the connection counts as lost.
const MAX_RECONNECTS: u32 = 5;
/// The first reconnect delay when the server gave no `retry`; doubled per attempt.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// A POST only hands a message over (202); the reply comes on the stream.
const POST_TIMEOUT: Duration = Duration::from_secs(30);
/// Waiting for the `endpoint` event of a reconnected stream, and for a replayed `initialize`.
const RESUME_TIMEOUT: Duration = Duration::from_secs(10);
/// Messages buffered between the reader task and rmcp.
const INBOUND_BUFFER: usize = 256;

#[derive(Debug)]
pub enum SseError {
    /// The request did not get an HTTP answer (refused, DNS, TLS, timeout).
    Http(reqwest::Error),
    /// An HTTP answer other than 2xx; `body` is its start.
    Status {
        status: u16,
        body: String,
    },
    /// A 2xx answer that is not an event stream.
    NotAnEventStream(Option<String>),
    /// The stream ended or broke before naming its endpoint.
    NoEndpoint(String),
    /// The endpoint is not a URL, or points to another origin.
    BadEndpoint(String),
    /// The transport was closed.
    Closed,
    Encode(serde_json::Error),
    /// `requestHeadersCommand` gave no headers.
    Signing(String),
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::Http(e) => write!(f, "{}", describe_reqwest(e)),
            SseError::Status { status, body } if body.is_empty() => write!(f, "HTTP {status}"),
            SseError::Status { status, body } => write!(f, "HTTP {status}: {body}"),
            SseError::NotAnEventStream(Some(kind)) => {
                write!(f, "the answer is {kind}, not an event stream")
            }
            SseError::NotAnEventStream(None) => {
                f.write_str("the answer has no content type, not an event stream")
            }
            SseError::NoEndpoint(why) => {
                write!(f, "the event stream named no endpoint ({why})")
            }
            SseError::BadEndpoint(why) => write!(f, "unusable endpoint: {why}"),
            SseError::Closed => f.write_str("the connection is closed"),
            SseError::Encode(e) => write!(f, "cannot encode the message: {e}"),
            SseError::Signing(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SseError {}

/// A reqwest error without the URL it quotes (the URL may carry a key).
pub fn describe_reqwest(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        "cannot connect"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "the answer broke off"
    } else {
        "request failed"
    };
    let mut source = std::error::Error::source(e);
    let mut causes = Vec::new();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.contains(&text) {
            causes.push(text);
        }
        source = cause.source();
    }
    match causes.last() {
        Some(root) => format!("{kind}: {root}"),
        None => kind.to_string(),
    }
}

/// What the stream told us besides messages.
#[derive(Default)]
struct StreamState {
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl StreamState {
    fn note(&mut self, event: &Sse) {
        if let Some(id) = event.id.as_ref().filter(|id| !id.is_empty()) {
            self.last_event_id = Some(id.clone());
        }
        if let Some(ms) = event.retry {
            self.retry = Some(Duration::from_millis(ms));
        }
    }
}

/// State the sending side and the reader task share.
struct Shared {
    client: reqwest::Client,
    sse_url: Url,
    headers: HeaderMap,
    /// Adds headers to each request (`requestHeadersCommand`).
    signer: Option<HeadersProgram>,
    /// Where messages go; `None` while a reconnect waits for the new endpoint.
    endpoint: watch::Sender<Option<Url>>,
    /// The client's `initialize` and `initialized`, replayed for a new session.
    handshake: Mutex<(Option<ClientJsonRpcMessage>, Option<ClientJsonRpcMessage>)>,
    /// Requests posted to the server and not answered yet.
    pending: Mutex<HashSet<RequestId>>,
    /// Declared in the `initialize` posted (replays included).
    tasks: TaskCapability,
}

impl Shared {
    /// Keeps the handshake messages, for a new session after a reconnect.
    fn remember(&self, message: &ClientJsonRpcMessage) {
        match message {
            ClientJsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::InitializeRequest(_)) =>
            {
                self.handshake.lock().0 = Some(message.clone());
            }
            ClientJsonRpcMessage::Notification(n)
                if matches!(
                    n.notification,
                    ClientNotification::InitializedNotification(_)
                ) =>
            {
                self.handshake.lock().1 = Some(message.clone());
            }
            _ => {}
        }
    }

    fn answered(&self, message: &ServerJsonRpcMessage) {
        let id = match message {
            ServerJsonRpcMessage::Response(r) => Some(&r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.pending.lock().remove(id);
        }
    }

    async fn post(&self, endpoint: Url, message: &ClientJsonRpcMessage) -> Result<(), SseError> {
        let declared = self.tasks.declared(message);
        let body =
            serde_json::to_vec(declared.as_ref().unwrap_or(message)).map_err(SseError::Encode)?;
        let headers = self.signed("POST", &endpoint, &body).await?;
        let response = self
            .client
            .post(endpoint)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .timeout(POST_TIMEOUT)
            .body(body)
            .send()
            .await
            .map_err(SseError::Http)?;
        if response.status().is_success() {
            return Ok(());
        }
        Err(status_error(response).await)
    }

    /// The headers of a request to `url`: the configured ones, and those `requestHeadersCommand`
    /// gives it.
    async fn signed(&self, method: &str, url: &Url, body: &[u8]) -> Result<HeaderMap, SseError> {
        let mut headers = self.headers.clone();
        if let Some(signer) = &self.signer {
            let signed = signer.headers(method, url.as_str(), body).await;
            for (name, value) in signed.map_err(SseError::Signing)? {
                headers.insert(name, value);
            }
        }
        Ok(headers)
    }

    /// GETs the event stream (resuming after `last_event_id`).
    async fn open(&self, last_event_id: Option<&str>) -> Result<Events, SseError> {
        let headers = self.signed("GET", &self.sse_url, &[]).await?;
        let mut request = self
            .client
            .get(self.sse_url.clone())
            .headers(headers)
            .header(ACCEPT, "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.map_err(SseError::Http)?;
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        let kind = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if !kind
            .as_deref()
            .is_some_and(|k| k.starts_with("text/event-stream"))
        {
            return Err(SseError::NotAnEventStream(kind));
        }
        Ok(SseStream::from_bytes_stream(response.bytes_stream()).boxed())
    }

    /// Reads `events` up to the `endpoint` event and resolves it against the stream's URL.
    async fn endpoint_of(
        &self,
        events: &mut Events,
        state: &mut StreamState,
    ) -> Result<Url, SseError> {
        loop {
            match events.next().await {
                Some(Ok(event)) => {
                    state.note(&event);
                    if event.event.as_deref() == Some("endpoint") {
                        return self.resolve(event.data.as_deref().unwrap_or_default());
                    }
                }
                Some(Err(e)) => return Err(SseError::NoEndpoint(e.to_string())),
                None => return Err(SseError::NoEndpoint("the stream ended".into())),
            }
        }
    }

    fn resolve(&self, data: &str) -> Result<Url, SseError> {
        endpoint_url(&self.sse_url, data)
    }
}

/// The endpoint an `endpoint` event names, resolved against the stream's URL; it must stay on
/// the stream's origin, or the server could send our messages and credentials elsewhere.
fn endpoint_url(sse_url: &Url, data: &str) -> Result<Url, SseError> {
    let endpoint = sse_url
        .join(data.trim())
        .map_err(|e| SseError::BadEndpoint(format!("{:?} is not a URL ({e})", data.trim())))?;
    if endpoint.origin() != sse_url.origin() {
        return Err(SseError::BadEndpoint(format!(
            "it points to {}, another origin than the event stream",
            endpoint.origin().ascii_serialization()
        )));
    }
    Ok(endpoint)
}

async fn status_error(response: reqwest::Response) -> SseError {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    SseError::Status {
        status,
        body: crate::clean::excerpt(&text, 200),
    }
}

pub struct SseTransport {
    shared: Arc<Shared>,
    inbound: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseTransport {
    /// Opens the event stream at `sse_url` and waits for its endpoint.
    pub async fn connect(
        client: reqwest::Client,
        sse_url: Url,
        headers: HeaderMap,
        signer: Option<&HeadersProgram>,
        tasks: TaskCapability,
    ) -> Result<SseTransport, SseError> {
        let (endpoint, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            client,
            sse_url,
            headers,
            signer: signer.cloned(),
            endpoint,
            handshake: Mutex::default(),
            pending: Mutex::default(),
            tasks,
        });
        let mut state = StreamState::default();
        let mut events = shared.open(None).await?;
        let endpoint = shared.endpoint_of(&mut events, &mut state).await?;
        shared.endpoint.send_replace(Some(endpoint));
        let (tx, inbound) = mpsc::channel(INBOUND_BUFFER);
        let reader = tokio::spawn(
            Reader {
                shared: shared.clone(),
                tx,
                state,
            }
            .run(events),
        );
        Ok(SseTransport {
            shared,
            inbound,
            reader,
        })
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), SseError>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            shared.remember(&item);
            let mut endpoint = shared.endpoint.subscribe();
            let url = match endpoint.wait_for(Option::is_some).await {
                Ok(url) => url.clone(),
                Err(_) => return Err(SseError::Closed),
            };
            let Some(url) = url else {
                return Err(SseError::Closed);
            };
            // Pending from now on: a request still waiting for an endpoint is not lost with the
            // old session, it goes to the new one.
            if let ClientJsonRpcMessage::Request(request) = &item {
                shared.pending.lock().insert(request.id.clone());
            }
            let sent = shared.post(url, &item).await;
            if sent.is_err() {
                if let ClientJsonRpcMessage::Request(request) = &item {
                    shared.pending.lock().remove(&request.id);
                }
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.inbound.recv().await
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.abort();
        self.inbound.close();
        Ok(())
    }
}

/// The task that owns the event stream.
struct Reader {
    shared: Arc<Shared>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    state: StreamState,
}

impl Reader {
    async fn run(mut self, mut events: Events) {
        loop {
            let next = tokio::select! {
                next = events.next() => next,
                _ = self.tx.closed() => return,
            };
            match next {
                Some(Ok(event)) => {
                    if !self.take(event).await {
                        return;
                    }
                }
                Some(Err(_)) | None => match self.reconnect().await {
                    Some(resumed) => events = resumed,
                    // Dropping `tx` ends `receive`: rmcp fails what is pending and the
                    // connection reports itself lost.
                    None => return,
                },
            }
        }
    }

    /// Handles one event; false once nobody listens any more.
    async fn take(&mut self, event: Sse) -> bool {
        self.state.note(&event);
        match event.event.as_deref() {
            Some("endpoint") => {
                // A server may move the endpoint; one on another origin is ignored.
                if let Ok(url) = self
                    .shared
                    .resolve(event.data.as_deref().unwrap_or_default())
                {
                    self.shared.endpoint.send_replace(Some(url));
                }
                true
            }
            None | Some("message") => match parse(&event) {
                Some(message) => {
                    self.shared.answered(&message);
                    self.tx.send(message).await.is_ok()
                }
                None => true,
            },
            Some(_) => true, // ping and anything newer
        }
    }

    /// Re-opens the stream with backoff. `None` when the server stays away.
    async fn reconnect(&mut self) -> Option<Events> {
        let previous = self.shared.endpoint.send_replace(None);
        let mut backoff = FIRST_BACKOFF;
        for _ in 0..MAX_RECONNECTS {
            let delay = self.state.retry.unwrap_or(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = self.tx.closed() => return None,
            }
            let last = self.state.last_event_id.clone();
            let mut events = match self.shared.open(last.as_deref()).await {
                Ok(events) => events,
                Err(SseError::Status { status, .. }) if permanent(status) => return None,
                Err(_) => continue,
            };
            let endpoint = tokio::time::timeout(
                RESUME_TIMEOUT,
                self.shared.endpoint_of(&mut events, &mut self.state),
            )
            .await;
            let Ok(Ok(endpoint)) = endpoint else { continue };
            let new_session = previous.as_ref() != Some(&endpoint);
            if new_session {
                self.fail_pending().await;
                if self.replay_handshake(&endpoint, &mut events).await.is_err() {
                    continue;
                }
            }
            self.shared.endpoint.send_replace(Some(endpoint));
            return Some(events);
        }
        None
    }

    /// The old session's open requests will never be answered: fail them now.
    async fn fail_pending(&mut self) {
        let lost: Vec<RequestId> = self.shared.pending.lock().drain().collect();
        for id in lost {
            let error = ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "the server's event stream dropped and the server started a new session; \
                 this request's outcome is unknown",
                None,
            );
            let _ = self
                .tx
                .send(ServerJsonRpcMessage::error(error, Some(id)))
                .await;
        }
    }

    /// Initializes the new session the way the client initialized the old one.
    async fn replay_handshake(
        &mut self,
        endpoint: &Url,
        events: &mut Events,
    ) -> Result<(), SseError> {
        let (initialize, initialized) = self.shared.handshake.lock().clone();
        let Some(ClientJsonRpcMessage::Request(mut request)) = initialize else {
            return Ok(());
        };
        let id = RequestId::String(format!("pi-mcp-native-reinit-{}", rand_suffix()).into());
        request.id = id.clone();
        self.shared
            .post(endpoint.clone(), &ClientJsonRpcMessage::Request(request))
            .await?;
        let answered = tokio::time::timeout(RESUME_TIMEOUT, async {
            while let Some(event) = events.next().await {
                let Ok(event) = event else { break };
                self.state.note(&event);
                let Some(message) = parse(&event) else {
                    continue;
                };
                match &message {
                    ServerJsonRpcMessage::Response(r) if r.id == id => return true,
                    ServerJsonRpcMessage::Error(e) if e.id.as_ref() == Some(&id) => return false,
                    _ => {
                        let _ = self.tx.send(message).await;
                    }
                }
            }
            false
        })
        .await;
        if answered != Ok(true) {
            return Err(SseError::NoEndpoint(
                "the new session did not accept `initialize`".into(),
            ));
        }
        match initialized {
            Some(notification) => self.shared.post(endpoint.clone(), &notification).await,
            None => Ok(()),
        }
    }
}

/// Statuses after which reconnecting cannot help.
fn permanent(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 408 | 425 | 429)
}

fn parse(event: &Sse) -> Option<ServerJsonRpcMessage> {
    let data = event.data.as_deref()?.trim();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(&wire::incoming(data)?).ok()
}

/// Distinguishes replayed `initialize` ids across reconnects.
fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_stay_on_the_stream_origin() {
        let sse = Url::parse("https://h.example:8443/v1/sse").unwrap();
        let url = |data: &str| endpoint_url(&sse, data).map(|u| u.to_string());
        assert_eq!(
            url("/v1/messages?sessionId=1").unwrap(),
            "https://h.example:8443/v1/messages?sessionId=1"
        );
        assert_eq!(url("msg?s=2").unwrap(), "https://h.example:8443/v1/msg?s=2");
        assert_eq!(
            url(" https://h.example:8443/m ").unwrap(),
            "https://h.example:8443/m"
        );
        for elsewhere in [
            "https://evil.example/m",
            "http://h.example:8443/m",
            "//h.example/m",
        ] {
            let err = url(elsewhere).unwrap_err().to_string();
            assert!(err.contains("another origin"), "{elsewhere}: {err}");
        }
    }

    #[test]
    fn events_that_are_not_messages_are_skipped() {
        let event = |kind: Option<&str>, data: &str| Sse {
            event: kind.map(str::to_string),
            data: Some(data.to_string()),
            id: None,
            retry: None,
        };
        assert!(parse(&event(None, "")).is_none());
        assert!(parse(&event(Some("message"), "not json")).is_none());
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(parse(&event(Some("message"), ok)).is_some());
        let mut state = StreamState::default();
        state.note(&Sse {
            id: Some("event-7".into()),
            retry: Some(500),
            ..event(Some("ping"), "")
        });
        assert_eq!(state.last_event_id.as_deref(), Some("event-7"));
        assert_eq!(state.retry, Some(Duration::from_millis(500)));
    }
}
