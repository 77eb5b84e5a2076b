//! rmcp's reqwest client for Streamable HTTP, with credentials that may change (each request
//! carries the current `Authorization`; a 401 gets one retry with a renewed one), and one
//! correction: servers built on the TypeScript SDK (server-everything among them) answer a
//! request for a session they no longer know (after a restart) with HTTP 400 and a JSON-RPC
//! error without an id, where the spec says 404. rmcp would pass that error on, nobody could
//! match it to the request, and the call would time out. Reported as an expired session
//! instead, rmcp re-initializes and sends the request again, as it does for a 404.
//!
//! An answer nested deeper than serde_json reads (see `nesting`) is fixed before rmcp parses it
//! when it comes in an event stream (a listing loses only its too-deep entries); a JSON body is
//! parsed inside rmcp, whose error would end the session: the request gets our error instead,
//! and a listing is fetched again and pruned here.
//!
//! A call carries the `Mcp-Param-*` headers of the tool it calls as the caller knows it (see
//! `param_headers`), not only of a tool rmcp saw listed on this connection. Every request also
//! carries the headers `requestHeadersCommand` makes for it (see `headers_program`).
//!
//! It also tells when the session's standalone GET stream has opened (or failed to): a server
//! may send a request of its own (an elicitation, `roots/list`) right after the handshake, on
//! that stream only, and it would be lost if the stream were not open yet.

use super::super::client_tasks::wire::{self, TaskCapability};
use super::super::nesting;
use super::super::oversize::MAX_LINE;
use super::credentials::SharedCredentials;
use super::param_headers;
use super::HeadersProgram;
use crate::pool::AuthNeed;
use crate::secret::Secret;
use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Error as SseError, Sse};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The JSON-RPC code such servers use for "Bad Request: No valid session ID provided".
const SERVER_ERROR: i32 = -32000;
/// rmcp's default limit of one event (the plain methods are called without one).
const DEFAULT_MAX_SSE_EVENT_SIZE: usize = 16 * 1024 * 1024;
/// Requests that only read, so they can be sent again.
const LISTINGS: [&str; 4] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

#[derive(Clone)]
pub struct SessionAware {
    client: reqwest::Client,
    credentials: Option<SharedCredentials>,
    signer: Option<HeadersProgram>,
    standalone: StandaloneStream,
    /// Declared in `initialize` (here, below rmcp's worker, which must see the typed request).
    tasks: TaskCapability,
}

impl SessionAware {
    pub fn new(
        client: reqwest::Client,
        credentials: Option<SharedCredentials>,
        signer: Option<HeadersProgram>,
        tasks: TaskCapability,
    ) -> (SessionAware, StandaloneStream) {
        let standalone = StandaloneStream::default();
        let aware = SessionAware {
            client,
            credentials,
            signer,
            standalone: standalone.clone(),
            tasks,
        };
        (aware, standalone)
    }

    async fn authorization(&self) -> Option<Secret> {
        match &self.credentials {
            Some(c) => c.0.current().await,
            None => None,
        }
    }

    /// `response` with too-deep answers made readable: an event stream's fixed as they come, a
    /// JSON body rmcp could not parse replaced by our error for request `id`, or for a listing
    /// (`again`) by the listing fetched again and pruned.
    async fn readable(
        &self,
        response: Result<StreamableHttpPostResponse>,
        id: Option<RequestId>,
        again: Option<Post>,
        session_id: Option<Arc<str>>,
    ) -> Result<StreamableHttpPostResponse> {
        match response {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                Ok(StreamableHttpPostResponse::Sse(readable(events), session))
            }
            // serde_json's own words for a body nested deeper than it reads.
            Err(StreamableHttpError::UnexpectedServerResponse(why))
                if why.contains("recursion limit exceeded") =>
            {
                let Some(id) = id else {
                    return Ok(StreamableHttpPostResponse::Accepted);
                };
                let pruned = match again {
                    Some(post) => self.pruned_listing(post).await,
                    None => None,
                };
                let answer = match pruned {
                    Some(answer) => answer,
                    None => our_error(id, |id| nesting::refusal(id, None))?,
                };
                let session = session_id.as_deref().map(str::to_string);
                Ok(StreamableHttpPostResponse::Json(answer, session))
            }
            other => other,
        }
    }

    /// Sends a listing request again and reads the body itself (rmcp keeps no copy of what it
    /// could not parse), to drop the entries nested too deeply; `None` if that does not work out.
    async fn pruned_listing(&self, post: Post) -> Option<ServerJsonRpcMessage> {
        let headers = with_authorization(post.custom_headers, self.authorization().await.as_ref());
        let mut request = self
            .client
            .post(post.uri.as_ref())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .json(&post.message);
        if let Some(auth) = post.auth_header {
            request = request.bearer_auth(auth);
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = post.session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let mut response = request.send().await.ok()?.error_for_status().ok()?;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_LINE {
                return None;
            }
        }
        match nesting::fix(&body, nesting::depth(&body)) {
            nesting::Fixed::Pruned(fixed) => serde_json::from_slice(&fixed).ok(),
            _ => None,
        }
    }

    /// `headers` with those `requestHeadersCommand` gives the request (`method` to `uri` with
    /// `body`).
    async fn signed(
        &self,
        method: &str,
        uri: &str,
        body: &[u8],
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> std::result::Result<HashMap<HeaderName, HeaderValue>, String> {
        if let Some(signer) = &self.signer {
            headers.extend(signer.headers(method, uri, body).await?);
        }
        Ok(headers)
    }

    /// A renewed `Authorization` after the server refused `sent`, when there is one.
    async fn renewed(&self, sent: Option<&Secret>) -> Option<Secret> {
        self.credentials
            .as_ref()?
            .0
            .rejected(sent)
            .await
            .filter(|fresh| Some(fresh) != sent)
    }
}

/// Whether the session's standalone stream has been tried.
#[derive(Clone, Default)]
pub struct StandaloneStream {
    /// rmcp opens the stream only for a session: set by the first request that carries one.
    session: Arc<AtomicBool>,
    tried: CancellationToken,
}

impl StandaloneStream {
    /// Returns once the stream is open or refused, or after `limit`; at once without a session.
    pub async fn settled(&self, limit: Duration) {
        if self.session.load(Ordering::SeqCst) {
            let _ = tokio::time::timeout(limit, self.tried.cancelled()).await;
        }
    }

    async fn tried_after<T>(&self, opened: impl Future<Output = T>) -> T {
        let result = opened.await;
        self.tried.cancel();
        result
    }
}

type Result<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;
type Events = BoxStream<'static, std::result::Result<Sse, SseError>>;

/// A listing request as it was sent, to send it again.
struct Post {
    uri: Arc<str>,
    message: ClientJsonRpcMessage,
    session_id: Option<Arc<str>>,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
}

/// Our error answer to request `id`, as `error` writes it for the id.
fn our_error(
    id: RequestId,
    error: impl FnOnce(serde_json::Value) -> serde_json::Value,
) -> Result<ServerJsonRpcMessage> {
    let id = serde_json::to_value(id).unwrap_or_default();
    serde_json::from_value(error(id))
        .map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.to_string().into()))
}

/// The event stream with each message nested too deeply fixed, or dropped if nobody waits for it.
fn readable(events: Events) -> Events {
    events
        .filter_map(|event| async move {
            let Ok(mut event) = event else {
                return Some(event);
            };
            if let Some(data) = &event.data {
                event.data = Some(wire::incoming(data)?.into_owned());
            }
            Some(Ok(event))
        })
        .boxed()
}

/// The answer to a request `requestHeadersCommand` gave no headers for: our error for request
/// `id`, or for a notification the failure itself.
fn unsigned(
    id: Option<RequestId>,
    why: String,
    session_id: &Option<Arc<str>>,
) -> Result<StreamableHttpPostResponse> {
    let Some(id) = id else {
        return Err(StreamableHttpError::UnexpectedServerResponse(why.into()));
    };
    let error = |id| serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32603, "message": why } });
    let session = session_id.as_deref().map(str::to_string);
    Ok(StreamableHttpPostResponse::Json(
        our_error(id, error)?,
        session,
    ))
}

/// `response`, or `SessionExpired` for an id-less "no valid session" error answering a request
/// that carried a session id.
fn checked(
    session_id: &Option<Arc<str>>,
    response: Result<StreamableHttpPostResponse>,
) -> Result<StreamableHttpPostResponse> {
    if let Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _)) = &response {
        if session_id.is_some()
            && error.id.is_none()
            && error.error.code.0 == SERVER_ERROR
            && error.error.message.to_ascii_lowercase().contains("session")
        {
            return Err(StreamableHttpError::SessionExpired);
        }
    }
    response
}

/// `headers` with `Authorization` set to `authorization`.
fn with_authorization(
    mut headers: HashMap<HeaderName, HeaderValue>,
    authorization: Option<&Secret>,
) -> HashMap<HeaderName, HeaderValue> {
    if let Some(mut value) = authorization.and_then(|a| HeaderValue::from_str(a.expose()).ok()) {
        value.set_sensitive(true);
        headers.insert(http::header::AUTHORIZATION, value);
    }
    headers
}

impl StreamableHttpClient for SessionAware {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            DEFAULT_MAX_SSE_EVENT_SIZE,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse> {
        if session_id.is_some() {
            self.standalone.session.store(true, Ordering::SeqCst);
        }
        let message = self.tasks.declared(&message).unwrap_or(message);
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request),
            _ => None,
        };
        let id = request.map(|r| r.id.clone());
        if let (Err(why), Some(id)) = (
            param_headers::mirror(&message, &mut custom_headers),
            id.clone(),
        ) {
            let refused = our_error(id, |id| param_headers::refusal(id, &why))?;
            let session = session_id.as_deref().map(str::to_string);
            return Ok(StreamableHttpPostResponse::Json(refused, session));
        }
        if self.signer.is_some() {
            let body = serde_json::to_vec(&message).unwrap_or_default();
            match self.signed("POST", &uri, &body, custom_headers).await {
                Ok(signed) => custom_headers = signed,
                Err(why) => return unsigned(id, why, &session_id),
            }
        }
        let again = request
            .filter(|r| LISTINGS.contains(&r.request.method()))
            .map(|_| Post {
                uri: uri.clone(),
                message: message.clone(),
                session_id: session_id.clone(),
                auth_header: auth_header.clone(),
                custom_headers: custom_headers.clone(),
            });
        let sent = self.authorization().await;
        let post = |authorization: Option<&Secret>, message: ClientJsonRpcMessage| {
            self.client.post_message_with_max_sse_event_size(
                uri.clone(),
                message,
                session_id.clone(),
                auth_header.clone(),
                with_authorization(custom_headers.clone(), authorization),
                max_sse_event_size,
            )
        };
        let retry = self.credentials.is_some().then(|| message.clone());
        let mut response = post(sent.as_ref(), message).await;
        let refused = matches!(&response, Err(e) if AuthNeed::from_streamable(e).is_some_and(|n| !n.forbidden));
        if let (true, Some(message)) = (refused, retry) {
            if let Some(fresh) = self.renewed(sent.as_ref()).await {
                response = post(Some(&fresh), message).await;
            }
        }
        let response = checked(&session_id, response);
        self.readable(response, id, again, session_id).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<()> {
        let headers = self
            .signed("DELETE", &uri, &[], custom_headers)
            .await
            .map_err(|why| StreamableHttpError::UnexpectedServerResponse(why.into()))?;
        let headers = with_authorization(headers, self.authorization().await.as_ref());
        self.client
            .delete_session(uri, session_id, auth_header, headers)
            .await
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<BoxStream<'static, std::result::Result<Sse, SseError>>>> + Send + '_
    {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            DEFAULT_MAX_SSE_EVENT_SIZE,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, std::result::Result<Sse, SseError>>> {
        let headers = self
            .signed("GET", &uri, &[], custom_headers)
            .await
            .map_err(|why| StreamableHttpError::UnexpectedServerResponse(why.into()))?;
        let headers = with_authorization(headers, self.authorization().await.as_ref());
        let opened = self.client.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            headers,
            max_sse_event_size,
        );
        Ok(readable(self.standalone.tried_after(opened).await?))
    }
}
