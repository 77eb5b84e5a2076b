//! `requestHeadersCommand`: a program run for each HTTP request to a remote server, given the
//! request on stdin as pi-mcp-adapter gives it (`{"version": 1, "method", "url", "bodyBase64"}`),
//! whose output, a JSON object of strings, adds headers to that request. Its output may hold
//! secrets: a message names at most a header, never a value.

use super::super::process::StdioSpec;
use super::super::run::{self, RunError};
use base64::Engine;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Output beyond this is refused: no set of headers is that long.
const MAX_OUTPUT: usize = 64 * 1024;

#[derive(Clone, Debug, PartialEq)]
pub struct HeadersProgram {
    /// The program, its arguments, its whole environment and working directory.
    pub spec: StdioSpec,
    pub timeout: Duration,
}

impl HeadersProgram {
    /// The headers for `method` to `url` with `body` (empty for a GET or a DELETE).
    pub async fn headers(
        &self,
        method: &str,
        url: &str,
        body: &[u8],
    ) -> Result<HashMap<HeaderName, HeaderValue>, String> {
        let request = json!({
            "version": 1,
            "method": method,
            "url": url,
            "bodyBase64": base64::engine::general_purpose::STANDARD.encode(body),
        });
        let output = run::to_end(
            &self.spec,
            request.to_string().as_bytes(),
            MAX_OUTPUT,
            self.timeout,
        )
        .await
        .map_err(|e| failure(&e, self.timeout))?;
        headers(&output).map_err(|why| format!("`requestHeadersCommand` {why}"))
    }
}

fn failure(error: &RunError, timeout: Duration) -> String {
    let why = match error {
        RunError::Spawn(why) => format!("could not be started: {why}"),
        RunError::Failed(status) => {
            format!("{status}; its output is not shown, as it may hold secrets")
        }
        RunError::TimedOut => format!(
            "did not finish within {} s and was stopped",
            timeout.as_secs_f32()
        ),
        RunError::TooLong => format!("printed more than {} KiB", MAX_OUTPUT / 1024),
    };
    format!("`requestHeadersCommand` {why}")
}

/// The program's output as headers.
fn headers(output: &[u8]) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let Ok(Value::Object(map)) = serde_json::from_slice(output) else {
        return Err("did not print a JSON object of header names and values".into());
    };
    let mut headers = HashMap::with_capacity(map.len());
    for (name, value) in map {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            format!(
                "printed an invalid header name {:?}",
                crate::clean::excerpt(&name, 40)
            )
        })?;
        let mut value = value
            .as_str()
            .and_then(|v| HeaderValue::from_str(v).ok())
            .ok_or_else(|| {
                format!("printed a value for {header} that is not a valid header value")
            })?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_as_headers() {
        let got = headers(br#"{"X-Signature": "abc", "x-date": "today"}"#).unwrap();
        assert_eq!(got[&HeaderName::from_static("x-signature")], "abc");
        assert!(got[&HeaderName::from_static("x-date")].is_sensitive());
        for bad in [
            &b"not json"[..],
            b"[1]",
            br#"{"X": 1}"#,
            br#"{"bad name": "v"}"#,
            br#"{"X": "a\nb"}"#,
        ] {
            let why = headers(bad).unwrap_err();
            assert!(!why.contains("abc"), "{why}");
        }
        assert_eq!(
            headers(br#"{"X": "secret\nvalue"}"#).unwrap_err(),
            "printed a value for x that is not a valid header value"
        );
    }
}
