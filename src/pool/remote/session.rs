//! rmcp's reqwest client for Streamable HTTP, with one correction: servers built on the
//! TypeScript SDK (server-everything among them) answer a request for a session they no longer
//! know (after a restart) with HTTP 400 and a JSON-RPC error without an id, where the spec says
//! 404. rmcp would pass that error on, nobody could match it to the request, and the call would
//! time out. Reported as an expired session instead, rmcp re-initializes and sends the request
//! again, as it does for a 404.

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Error as SseError, Sse};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// The JSON-RPC code such servers use for "Bad Request: No valid session ID provided".
const SERVER_ERROR: i32 = -32000;

#[derive(Clone)]
pub struct SessionAware(pub reqwest::Client);

type Result<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;

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
        let response = self
            .0
            .post_message(
                uri,
                message,
                session_id.clone(),
                auth_header,
                custom_headers,
            )
            .await;
        checked(&session_id, response)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse> {
        let response = self
            .0
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id.clone(),
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        checked(&session_id, response)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<()>> + Send + '_ {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
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
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<BoxStream<'static, std::result::Result<Sse, SseError>>>> + Send + '_
    {
        self.0.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
    }
}
