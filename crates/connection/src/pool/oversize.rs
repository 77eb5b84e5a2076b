//! rmcp drops a stdio line it cannot take and goes on waiting for the answer that was on it, so
//! the request would hang until its timeout: a line longer than its limit (16 MiB), or one nested
//! deeper than serde_json reads (see [`nesting`](super::nesting)). This reader sits between the
//! server's stdout and rmcp and hands rmcp whole lines. After a too-long line that was a response
//! it adds a small JSON-RPC error for the same id ([`RequestError::TooLarge`]); a too-deep line is
//! replaced by its fixed form (a pruned listing, or an error: [`RequestError::TooDeep`]).
//!
//! [`RequestError::TooLarge`]: super::RequestError::TooLarge
//! [`RequestError::TooDeep`]: super::RequestError::TooDeep

use super::client_tasks::wire;
use super::nesting::{self, Fixed};
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
    /// The current line, held until it ends (or is too long for rmcp anyway: then it streams).
    line: Vec<u8>,
    /// Bytes ready for rmcp (what the server sent, fixed lines, stand-in errors), from `pos` on.
    out: Vec<u8>,
    pos: usize,
}

impl<R> LineGuard<R> {
    pub fn new(inner: R) -> Self {
        LineGuard {
            inner,
            scan: LineScan::default(),
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
            line: Vec::new(),
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
        while this.pos == this.out.len() {
            this.out.clear();
            this.pos = 0;
            let mut chunk = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk))?;
            if chunk.filled().is_empty() {
                // End of stream: what is left of an unfinished line, then the end.
                this.out.append(&mut this.line);
                if this.out.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                break;
            }
            this.scan
                .feed(chunk.filled(), &mut this.line, &mut this.out);
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
    depth: usize,
    max_depth: usize,
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
    /// Moves every line that ends in `bytes` to `out`, fixed if it is too deep, with a stand-in
    /// error after a too-long response; the unfinished rest stays in `line`.
    fn feed(&mut self, bytes: &[u8], line: &mut Vec<u8>, out: &mut Vec<u8>) {
        let mut start = 0;
        while let Some(end) = bytes[start..].iter().position(|b| *b == b'\n') {
            self.take(&bytes[start..=start + end], line, out);
            let (streamed, depth) = (self.len > MAX_LINE, self.max_depth);
            if let Some(error) = self.finish_line() {
                out.append(line);
                out.extend_from_slice(&error);
            } else if depth > nesting::MAX_DEPTH && !streamed {
                match nesting::fix(line.trim_ascii_end(), depth) {
                    Fixed::Pruned(fixed) | Fixed::Refused(fixed) => {
                        out.extend_from_slice(&fixed);
                        out.push(b'\n');
                    }
                    Fixed::Dropped => {}
                }
                line.clear();
            } else if let Some(lifted) = task_augmented(line) {
                out.extend_from_slice(lifted.as_bytes());
                out.push(b'\n');
                line.clear();
            } else {
                out.append(line);
            }
            start += end + 1;
        }
        self.take(&bytes[start..], line, out);
    }

    /// Adds `bytes` to the current line; once the line is too long for rmcp it streams to `out`.
    fn take(&mut self, bytes: &[u8], line: &mut Vec<u8>, out: &mut Vec<u8>) {
        self.scan(bytes);
        line.extend_from_slice(bytes);
        if self.len > MAX_LINE {
            out.append(line);
        }
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
                    self.max_depth = self.max_depth.max(self.depth);
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

/// The line marked as a task-augmented request, if it is one (see [`wire::lifted`]).
fn task_augmented(line: &[u8]) -> Option<String> {
    wire::lifted(std::str::from_utf8(line.trim_ascii_end()).ok()?)
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

    #[tokio::test]
    async fn fixes_too_deep_lines_and_passes_the_rest() {
        let deep = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
        let listing = format!(
            "{{\"id\":1,\"result\":{{\"tools\":[{{\"name\":\"a\"}},{{\"name\":\"b\",\"x\":{}}}]}}}}\n",
            deep(200)
        );
        let call = format!("{{\"id\":2,\"result\":{}}}\n", deep(100_000));
        let notice = format!("{{\"method\":\"n\",\"params\":{}}}\n", deep(500));
        let fine = "{\"id\":3,\"result\":{}}\n";
        // Fed in small chunks, as a pipe delivers them.
        let input = [listing, call, notice, fine.to_string()]
            .concat()
            .into_bytes();
        let mut guard = LineGuard::new(&input[..]);
        let mut out = Vec::new();
        guard.read_to_end(&mut out).await.unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0]["result"]["tools"], json!([{"name": "a"}]));
        assert!(lines[0]["result"]["_meta"][nesting::LEFT_OUT_FIELD][0]
            .as_str()
            .unwrap()
            .starts_with("tool \"b\": its definition nests 204 levels"));
        assert_eq!(lines[1]["id"], 2);
        assert_eq!(lines[1]["error"]["data"][nesting::TOO_DEEP_FIELD], 100_001);
        assert_eq!(lines[2], json!({"id": 3, "result": {}}));
    }
}
