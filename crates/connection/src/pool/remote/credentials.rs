//! Credentials that change while a connection runs (OAuth access tokens): asked for before each
//! request, and asked for a replacement once when the server answers 401 to them.

use crate::pool::AuthNeed;
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

impl AuthNeed {
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
