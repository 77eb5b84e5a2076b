//! Credentials that change while a connection runs (OAuth access tokens): asked for before each
//! request, and asked for a replacement once when the server answers 401 to them.

use crate::secret::Secret;
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::fmt;
use std::sync::Arc;

pub trait Credentials: Send + Sync {
    /// The whole `Authorization` value for the next request; `None`: send none.
    fn current(&self) -> BoxFuture<'_, Option<Secret>>;
    /// The server refused `sent` (HTTP 401): a different value to retry with, if there is one.
    fn rejected<'a>(&'a self, sent: Option<&'a Secret>) -> BoxFuture<'a, Option<Secret>>;
}

/// A [`Credentials`] shared by the connections of one server.
#[derive(Clone)]
pub struct SharedCredentials(pub Arc<dyn Credentials>);

impl fmt::Debug for SharedCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedCredentials")
    }
}

impl PartialEq for SharedCredentials {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A server's refusal of our credentials (HTTP 401, or 403 for too little scope).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthNeed {
    pub message: String,
    /// The `WWW-Authenticate` header, when the server sent one.
    pub challenge: Option<String>,
    /// HTTP 403: the credentials were valid but lacked scope.
    pub forbidden: bool,
}

impl AuthNeed {
    pub fn new(status: u16, challenge: Option<String>) -> AuthNeed {
        let message = match status {
            401 => "the server answered HTTP 401 Unauthorized",
            _ => "the server answered HTTP 403 Forbidden",
        };
        AuthNeed {
            message: message.to_string(),
            challenge,
            forbidden: status == 403,
        }
    }

    /// Credentials known to be missing before any request.
    pub fn missing(message: String) -> AuthNeed {
        AuthNeed {
            message,
            challenge: None,
            forbidden: false,
        }
    }

    /// The refusal in a Streamable HTTP error, if it is one.
    pub fn from_streamable(error: &StreamableHttpError<reqwest::Error>) -> Option<AuthNeed> {
        match error {
            StreamableHttpError::AuthRequired(e) => {
                Some(AuthNeed::new(401, Some(e.www_authenticate_header.clone())))
            }
            StreamableHttpError::InsufficientScope(e) => {
                Some(AuthNeed::new(403, Some(e.www_authenticate_header.clone())))
            }
            StreamableHttpError::Client(e) => match e.status().map(|s| s.as_u16()) {
                Some(status @ (401 | 403)) => Some(AuthNeed::new(status, None)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for AuthNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
