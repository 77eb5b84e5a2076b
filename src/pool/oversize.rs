//! rmcp drops a stdio line longer than its limit (16 MiB) and goes on waiting for the answer that
//! was on it, so a tool with a too-large result would hang its call until the timeout. This
//! reader sits between the server's stdout and rmcp and watches every line go by; after a dropped
//! line that was a response, it adds a small JSON-RPC error for the same id, and the call fails at
//! once with [`RequestError::TooLarge`](super::RequestError::TooLarge).

use serde_json::{json, Value};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line rmcp accepts, newline included.
pub const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
/// The `data` field that marks our stand-in error; its value is the dropped line's size.
pub const TOO_LARGE_FIELD: &str = "piMcpNativeTooLarge";
/// Ids longer than this are not real ids: nothing is answered for them.
const MAX_ID: usize = 256;

pub struct LineGuard<R> {
    inner: R,
    scan: LineScan,
    chunk: Box<[u8]>,
    /// Bytes ready for rmcp (what the server sent, plus stand-in errors), from `pos` on.
    out: Vec<u8>,
    pos: usize,
}

impl<R> LineGuard<R> {
    pub fn new(inner: R) -> Self {
        LineGuard {
            inner,
            scan: LineScan::default(),
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
            out: Vec::new(),
            pos: 0,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pos == this.out.len() {
            this.out.clear();
            this.pos = 0;
            let mut chunk = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk))?;
            if chunk.filled().is_empty() {
                return Poll::Ready(Ok(())); // end of stream
            }
            this.scan.feed(chunk.filled(), &mut this.out);
        }
        let n = (this.out.len() - this.pos).min(buf.remaining());
        buf.put_slice(&this.out[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// Where the scanner is in the top-level object's `"id": value` pair.
#[derive(Default, PartialEq)]
enum IdState {
    #[default]
    Before,
    /// Read the key `"id"`, waiting for the colon.
    Colon,
    /// Copying the value's bytes.
    Value,
    Done,
}

/// Follows the JSON structure of the current line just enough to find the top-level `id`, and
/// whether the message is a request or notification (has a top-level `method`).
#[derive(Default)]
struct LineScan {
    len: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    expect_key: bool,
    /// The top-level key being read (first bytes only).
    key: Option<Vec<u8>>,
    has_method: bool,
    id_state: IdState,
    id: Vec<u8>,
}

impl LineScan {
    /// Copies `bytes` to `out`, with a stand-in error after each dropped response line.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut start = 0;
        while let Some(end) = bytes[start..].iter().position(|b| *b == b'\n') {
            let line = &bytes[start..=start + end];
            out.extend_from_slice(line);
            self.scan(line);
            if let Some(error) = self.finish_line() {
                out.extend_from_slice(&error);
            }
            start += end + 1;
        }
        out.extend_from_slice(&bytes[start..]);
        self.scan(&bytes[start..]);
    }

    fn scan(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            if self.id_state == IdState::Value && self.id.len() <= MAX_ID {
                self.id.push(b);
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.end_string();
                } else if let Some(key) = &mut self.key {
                    if key.len() < 8 {
                        key.push(b);
                    }
                } else if self.depth > 1 || self.id_state != IdState::Value {
                    // Skip the rest of a long string quickly (the bulk of a big result).
                    let skip = bytes[i..]
                        .iter()
                        .position(|c| matches!(c, b'"' | b'\\' | b'\n'))
                        .unwrap_or(bytes.len() - i);
                    i += skip;
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && self.expect_key {
                        self.key = Some(Vec::new());
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    self.expect_key = self.depth == 1 && b == b'{';
                }
                b'}' | b']' => {
                    if self.depth == 1 {
                        self.end_id();
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b',' if self.depth == 1 => {
                    self.end_id();
                    self.expect_key = true;
                }
                b':' if self.depth == 1 && self.id_state == IdState::Colon => {
                    self.id_state = IdState::Value;
                }
                _ => {}
            }
        }
    }

    fn end_string(&mut self) {
        self.in_string = false;
        if let Some(key) = self.key.take() {
            self.expect_key = false;
            match key.as_slice() {
                b"id" if self.id_state == IdState::Before => self.id_state = IdState::Colon,
                b"method" => self.has_method = true,
                _ => {}
            }
        }
    }

    /// The value's bytes end at a top-level `,` or `}` (which was copied too).
    fn end_id(&mut self) {
        if self.id_state == IdState::Value {
            self.id.pop();
            self.id_state = IdState::Done;
        }
    }

    /// At the end of a line: the stand-in error if it was a response too long for rmcp.
    fn finish_line(&mut self) -> Option<Vec<u8>> {
        let scan = std::mem::take(self);
        if scan.len <= MAX_LINE || scan.has_method || scan.id_state != IdState::Done {
            return None;
        }
        let id = serde_json::from_slice::<Value>(&scan.id)
            .ok()
            .filter(|id| id.is_number() || id.is_string())?;
        let message = format!(
            "result too large: the server's answer was {:.1} MiB, over the {} MiB limit of one message",
            scan.len as f64 / (1024.0 * 1024.0),
            MAX_LINE / (1024 * 1024)
        );
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": -32603, "message": message, "data": { TOO_LARGE_FIELD: scan.len } },
        });
        let mut line = serde_json::to_vec(&error).ok()?;
        line.push(b'\n');
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn id_of(line: &str) -> (IdState, Vec<u8>, bool) {
        let mut scan = LineScan::default();
        scan.scan(line.as_bytes());
        (scan.id_state, scan.id, scan.has_method)
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_is() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":7,"result":{"id":99}}"#, "7"),
            (
                r#"{"result":{"id":99,"x":[{"id":1}]},"jsonrpc":"2.0","id":"a\"b"}"#,
                r#""a\"b""#,
            ),
            (r#"{ "result" : "id" , "id" : 12 }"#, " 12 "),
            (
                r#"{"result":{"content":[{"text":"\"id\":5,"}]},"id":3}"#,
                "3",
            ),
        ];
        for (line, id) in cases {
            let (state, found, _) = id_of(line);
            assert!(state == IdState::Done, "{line}");
            assert_eq!(String::from_utf8(found).unwrap(), id, "{line}");
        }
        assert!(id_of(r#"{"jsonrpc":"2.0","method":"x","id":1}"#).2);
    }

    async fn relay(input: Vec<u8>) -> String {
        let mut guard = LineGuard::new(&input[..]);
        let mut out = Vec::new();
        guard.read_to_end(&mut out).await.unwrap();
        // The big lines themselves are rmcp's to drop; keep what follows them.
        String::from_utf8_lossy(&out)
            .lines()
            .filter(|l| l.len() < 1000)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[tokio::test]
    async fn answers_for_a_dropped_response() {
        let big = "x".repeat(MAX_LINE);
        let mut input =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"text\":\"{big}\"}}}}\n")
                .into_bytes();
        input.extend(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n");
        let out = relay(input).await;
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(lines[0]["id"], 4);
        assert!(lines[0]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("result too large: the server's answer was 16.0 MiB"));
        assert!(lines[0]["error"]["data"][TOO_LARGE_FIELD].as_u64().unwrap() > MAX_LINE as u64);
        assert_eq!(lines[1]["id"], 5);
    }

    #[tokio::test]
    async fn lets_lines_up_to_the_limit_and_big_garbage_through_untouched() {
        let fits = format!("{{\"id\":1,\"result\":\"{}\"}}\n", "y".repeat(1000));
        let garbage = format!("{}\n", "{".repeat(MAX_LINE + 10));
        let request = format!(
            "{{\"id\":2,\"method\":\"m\",\"params\":\"{}\"}}\n",
            "z".repeat(MAX_LINE)
        );
        for input in [fits.clone(), garbage, request] {
            let mut guard = LineGuard::new(input.as_bytes());
            let mut out = Vec::new();
            guard.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, input.as_bytes());
        }
    }
}
