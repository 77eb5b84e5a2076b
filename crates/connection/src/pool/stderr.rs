//! A server's stderr, drained continuously (a full pipe would block the server) into a bounded
//! tail that failure messages quote, cleaned (`clean::text`) as everything a server writes.

use crate::clean;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

const TAIL_BYTES: usize = 8 * 1024;
/// How much of the tail a failure message quotes.
const QUOTED_LINES: usize = 12;

#[derive(Default)]
pub struct StderrTail {
    bytes: Mutex<VecDeque<u8>>,
    /// Cancelled when the server closed its stderr (everything it wrote is in `bytes`).
    closed: CancellationToken,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock();
        let keep = chunk.len().min(TAIL_BYTES);
        let overflow = (bytes.len() + keep).saturating_sub(TAIL_BYTES);
        bytes.drain(..overflow);
        bytes.extend(&chunk[chunk.len() - keep..]);
    }

    /// Waits up to `limit` for the stream to end, so that a message about a server that
    /// exited quotes all it wrote.
    pub async fn settle(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.closed.cancelled()).await;
    }

    /// The last lines written, trimmed, or `None` when the server wrote nothing.
    pub fn last_lines(&self) -> Option<String> {
        let bytes = self.bytes.lock();
        let (a, b) = bytes.as_slices();
        let bytes = [a, b].concat();
        let text = clean::text(&String::from_utf8_lossy(&bytes)).into_owned();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        let start = lines.len().saturating_sub(QUOTED_LINES);
        let tail = lines[start..].join("\n");
        (!tail.is_empty()).then_some(tail)
    }
}

/// Reads `stream` to its end into `tail`; with `echo`, also copies it to our own stderr
/// (the server's `debug` setting).
pub async fn drain(mut stream: impl AsyncRead + Unpin, tail: &StderrTail, echo_as: Option<&str>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return tail.closed.cancel(),
            Ok(n) => {
                tail.push(&buf[..n]);
                if let Some(server) = echo_as {
                    for line in clean::text(&String::from_utf8_lossy(&buf[..n])).lines() {
                        tracing::info!("[{server}] stderr: {line}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_tail() {
        let tail = StderrTail::default();
        assert_eq!(tail.last_lines(), None);
        for i in 0..10_000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert!(tail.bytes.lock().len() <= TAIL_BYTES);
        let quoted = tail.last_lines().unwrap();
        assert!(quoted.ends_with("line 9999"));
        assert_eq!(quoted.lines().count(), QUOTED_LINES);
    }

    #[test]
    fn quoted_without_escape_sequences() {
        let tail = StderrTail::default();
        tail.push(b"\x1b]0;pwned\x07\x1b[31mfatal\x1b[0m: no key\x07\r\n\xc2\x9b2Jdone");
        assert_eq!(tail.last_lines().unwrap(), "fatal: no key\\x07\ndone");
    }

    #[test]
    fn huge_chunk_keeps_its_end() {
        let tail = StderrTail::default();
        let mut chunk = vec![b'x'; 100_000];
        chunk.extend(b"\nfatal: config missing\n");
        tail.push(&chunk);
        assert!(tail
            .last_lines()
            .unwrap()
            .ends_with("fatal: config missing"));
    }
}
