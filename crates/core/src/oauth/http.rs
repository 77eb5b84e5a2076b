//! HTTP for OAuth: every request bounded (15 s, 1 MiB of answer, 5 redirects), redirects followed
//! only for metadata (which carries no credentials), never for a POST, and every error naming
//! the URL (without its query) and what went wrong.

use pi_mcp_connection::pool::display_url;
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use url::Url;

const TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A metadata document or token answer is a few KB; anything past this is not one.
pub const MAX_BODY: usize = 1024 * 1024;
const MAX_REDIRECTS: usize = 5;

#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    /// Sent as `MCP-Protocol-Version` with metadata requests.
    protocol_version: &'static str,
}

/// An answer, read to the end (within [`MAX_BODY`]).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// Where the answer came from (after redirects).
    pub url: Url,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The start of the body as one line, for an error message.
    pub fn excerpt(&self) -> String {
        pi_mcp_connection::clean::excerpt(&String::from_utf8_lossy(&self.body), 200)
    }
}

impl Http {
    pub fn new(ca_file: Option<&Path>, protocol_version: &'static str) -> Result<Http, String> {
        let client = pi_mcp_connection::pool::http_client_builder(ca_file, CONNECT_TIMEOUT)?
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(Http {
            client,
            protocol_version,
        })
    }

    /// GETs a JSON document, following redirects (to http or https URLs, at most five).
    pub async fn get(&self, url: &Url) -> Result<Answer, String> {
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let request = self
                .client
                .get(url.clone())
                .header(ACCEPT, "application/json")
                .header("MCP-Protocol-Version", self.protocol_version);
            let sent = self.send(request, &url).await?;
            if !(300..400).contains(&sent.answer.status) {
                return Ok(sent.answer);
            }
            url = sent.redirect.ok_or_else(|| {
                format!(
                    "{} answered HTTP {} without a usable Location",
                    display_url(url.as_str()),
                    sent.answer.status
                )
            })?;
        }
        Err(format!(
            "{} redirected more than {MAX_REDIRECTS} times (a redirect loop?)",
            display_url(url.as_str())
        ))
    }

    /// POSTs a form (`basic`: client id and secret for HTTP Basic authentication).
    pub async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Answer, String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut request = self
            .client
            .post(url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some((id, secret)) = basic {
            request = request.header(AUTHORIZATION, basic_header(id, secret)?);
        }
        self.send_no_redirect(request, url).await
    }

    pub async fn post_json(&self, url: &Url, body: &Value) -> Result<Answer, String> {
        let request = self
            .client
            .post(url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.send_no_redirect(request, url).await
    }

    async fn send_no_redirect(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<Answer, String> {
        let sent = self.send(request, url).await?;
        if (300..400).contains(&sent.answer.status) {
            return Err(format!(
                "{} answered with a redirect (HTTP {}); OAuth requests are not redirected",
                display_url(url.as_str()),
                sent.answer.status
            ));
        }
        Ok(sent.answer)
    }

    async fn send(&self, request: reqwest::RequestBuilder, url: &Url) -> Result<Sent, String> {
        let shown = display_url(url.as_str());
        let mut response = request.send().await.map_err(|e| {
            if e.is_timeout() {
                format!("{shown} did not answer within {} s", TIMEOUT.as_secs())
            } else {
                format!(
                    "cannot reach {shown}: {}",
                    pi_mcp_connection::pool::describe_reqwest(&e)
                )
            }
        })?;
        let status = response.status().as_u16();
        let redirect = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|location| url.join(location).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https"));
        let mut body = Vec::new();
        loop {
            let chunk = response.chunk().await.map_err(|e| {
                if e.is_timeout() {
                    format!(
                        "{shown} did not finish its answer within {} s",
                        TIMEOUT.as_secs()
                    )
                } else {
                    format!("reading the answer of {shown} failed: {e}")
                }
            })?;
            let Some(chunk) = chunk else { break };
            if body.len() + chunk.len() > MAX_BODY {
                return Err(format!(
                    "{shown} answered with more than {} KiB; an OAuth document is a few KB, so it was not read",
                    MAX_BODY / 1024
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Sent {
            answer: Answer {
                status,
                body,
                url: url.clone(),
            },
            redirect,
        })
    }
}

struct Sent {
    answer: Answer,
    redirect: Option<Url>,
}

/// RFC 6749 §2.3.1: id and secret form-encoded, joined by a colon, base64.
fn basic_header(id: &str, secret: &str) -> Result<HeaderValue, String> {
    use base64::Engine;
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(id), encode(secret));
    let mut value = HeaderValue::from_str(&format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    ))
    .map_err(|_| "the client credentials cannot be sent in a header".to_string())?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_encoded() {
        let value = basic_header("id:1", "s p").unwrap();
        use base64::Engine;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(value.to_str().unwrap().trim_start_matches("Basic "))
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "id%3A1:s+p");
    }
}
