//! What a failed request means: a timeout, the server's error (our stand-ins for answers too
//! large or too deep, pages to visit first, a bad header annotation), a sign-in a remote server
//! needs, or the connection gone and why (exit status and the end of its log).

use super::Connection;
use crate::pool::link::{with_stderr, Link};
use crate::pool::nesting::TOO_DEEP_FIELD;
use crate::pool::oversize::TOO_LARGE_FIELD;
#[cfg(feature = "remote")]
use crate::pool::remote::param_headers::INVALID_ANNOTATION_FIELD;
#[cfg(feature = "remote")]
use crate::pool::AuthNeed;
use crate::pool::{BrowserStep, RequestError};
#[cfg(feature = "remote")]
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::ServiceError;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Connection {
    pub(super) async fn failure(&self, error: ServiceError) -> RequestError {
        match error {
            ServiceError::Timeout { timeout } => {
                self.suspect.store(true, Ordering::SeqCst);
                RequestError::Timeout(timeout)
            }
            ServiceError::McpError(e) => {
                match (stand_in(&e, TOO_LARGE_FIELD), stand_in(&e, TOO_DEEP_FIELD)) {
                    (Some(bytes), _) => RequestError::TooLarge(bytes),
                    (_, Some(depth)) => {
                        RequestError::TooDeep(Some(depth as usize).filter(|d| *d > 0))
                    }
                    _ if e.code.0 == URL_ELICITATION_REQUIRED => {
                        RequestError::BrowserSteps(browser_steps(&e))
                    }
                    #[cfg(feature = "remote")]
                    _ if e
                        .data
                        .as_ref()
                        .and_then(|d| d.get(INVALID_ANNOTATION_FIELD))
                        .is_some() =>
                    {
                        RequestError::InvalidHeaderAnnotation(e.message.to_string())
                    }
                    _ => RequestError::Mcp {
                        code: e.code.0,
                        message: e.message.to_string(),
                    },
                }
            }
            #[cfg(feature = "remote")]
            ServiceError::TransportSend(e) if self.remote_kind().is_some() => {
                let refused = e
                    .error
                    .downcast_ref::<StreamableHttpError<reqwest::Error>>()
                    .and_then(AuthNeed::from_streamable);
                if let Some(need) = refused {
                    return RequestError::NeedsAuth(need);
                }
                self.stop.cancel();
                RequestError::Closed(self.scrub(&e.error.to_string()))
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                RequestError::Closed(self.death_note().await)
            }
            other => RequestError::Protocol(other.to_string()),
        }
    }

    #[cfg(feature = "remote")]
    fn scrub(&self, text: &str) -> String {
        match &self.link {
            Link::Remote { scrubber, .. } => scrubber.scrub(text),
            Link::Process { .. } | Link::Broker(_) | Link::Socket => text.to_string(),
        }
    }

    /// Why the connection is gone, for the model: exit status and the end of stderr.
    pub(super) async fn death_note(&self) -> String {
        let note = self.exit_note().await;
        match self.recent_log() {
            Some(lines) => format!("{note}\nIts last logged warnings and errors:\n{lines}"),
            None => note,
        }
    }

    async fn exit_note(&self) -> String {
        let (mut exit, tail) = match &self.link {
            Link::Process { exit, stderr, .. } => (exit.clone(), stderr),
            Link::Remote { .. } | Link::Socket if self.asked.load(Ordering::SeqCst) => {
                return "the connection was closed".to_string()
            }
            Link::Remote { .. } | Link::Socket => {
                return "the server ended the connection".to_string()
            }
            Link::Broker(_) if self.asked.load(Ordering::SeqCst) => {
                return "the connection was closed".to_string()
            }
            Link::Broker(link) => return link.end_note(&self.server).await,
        };
        exit.wait(Duration::from_millis(500)).await;
        let what = match exit.get() {
            Some(status) => format!("the server {status}"),
            None if self.asked.load(Ordering::SeqCst) => "the connection was closed".to_string(),
            None => "the server closed its output".to_string(),
        };
        with_stderr(what, tail).await
    }
}

/// The code of an error that names pages the user must visit first.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The pages a `-32042` error names (`data.elicitations`), not yet shown.
fn browser_steps(error: &rmcp::ErrorData) -> Vec<BrowserStep> {
    let listed = error.data.as_ref().and_then(|d| d.get("elicitations"));
    listed
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some(BrowserStep {
                url: e.get("url")?.as_str()?.to_string(),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                opened: false,
            })
        })
        .collect()
}

/// The figure of our stand-in for a dropped answer (`field` says which: see `oversize` and
/// `nesting`), if `error` is one.
fn stand_in(error: &rmcp::ErrorData, field: &str) -> Option<u64> {
    error.data.as_ref()?.get(field)?.as_u64()
}

#[cfg(test)]
mod tests;
