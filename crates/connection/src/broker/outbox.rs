//! What the broker has to say to one session connection, queued until the socket takes it.
//! The queue counts its bytes: a session that leaves more than [`MAX_UNREAD`] of them unread is
//! refused the next message (its connection is then dropped), so a client that sends requests
//! and never reads the answers cannot grow the broker.

use crate::pool::shared::wire::MAX_UNREAD;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long what is queued for a closing connection may take to be written.
pub const LAST_WORDS: Duration = Duration::from_secs(1);

pub struct Outbox {
    lines: mpsc::UnboundedSender<String>,
    queued: Arc<AtomicUsize>,
}

/// The writer's end of an [`Outbox`].
pub struct Queued {
    lines: mpsc::UnboundedReceiver<String>,
    queued: Arc<AtomicUsize>,
}

/// Queuing a message would leave more than [`MAX_UNREAD`] bytes unread.
#[derive(Debug)]
pub struct Unread;

impl Outbox {
    pub fn new() -> (Outbox, Queued) {
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let outbox = Outbox {
            lines: tx,
            queued: queued.clone(),
        };
        (outbox, Queued { lines: rx, queued })
    }

    /// Queues `line` (a newline is added), unless the session has left too much unread.
    pub fn push(&self, mut line: String) -> Result<(), Unread> {
        line.push('\n');
        let len = line.len();
        if self.queued.fetch_add(len, Ordering::SeqCst) + len > MAX_UNREAD {
            self.queued.fetch_sub(len, Ordering::SeqCst);
            return Err(Unread);
        }
        let _ = self.lines.send(line);
        Ok(())
    }

    /// Queues `line` (a newline is added) whatever is unread: a farewell, small and the last.
    pub fn push_last(&self, mut line: String) {
        line.push('\n');
        self.queued.fetch_add(line.len(), Ordering::SeqCst);
        let _ = self.lines.send(line);
    }
}

/// Writes the lines queued for a session. Once the connection is closed — even while a write
/// waits for a session that reads nothing — the line begun and what was queued before it still go
/// out (a farewell, a last answer), for [`LAST_WORDS`] at most.
pub async fn write_lines<W: AsyncWrite + Unpin>(
    write: W,
    mut queue: Queued,
    closed: CancellationToken,
) {
    let mut out = tokio::io::BufWriter::new(write);
    // The line being written, and how much of it the writer took.
    let mut current: Option<(String, usize)> = None;
    loop {
        if current.is_none() {
            current = tokio::select! {
                biased;
                line = queue.lines.recv() => line.map(|line| (line, 0)),
                _ = closed.cancelled() => None,
            };
        }
        let Some((line, taken)) = current.as_mut() else {
            break;
        };
        let step = tokio::select! {
            written = async {
                write_from(&mut out, line, taken).await?;
                if queue.lines.is_empty() {
                    out.flush().await?;
                }
                std::io::Result::Ok(())
            } => Some(written),
            _ = closed.cancelled() => None,
        };
        match step {
            None => break,
            Some(Err(_)) => {
                closed.cancel();
                return;
            }
            Some(Ok(())) => {
                queue.queued.fetch_sub(line.len(), Ordering::SeqCst);
                current = None;
            }
        }
    }
    let _ = tokio::time::timeout(LAST_WORDS, async {
        if let Some((line, mut taken)) = current {
            write_from(&mut out, &line, &mut taken).await?;
        }
        while let Ok(line) = queue.lines.try_recv() {
            out.write_all(line.as_bytes()).await?;
        }
        out.flush().await?;
        out.shutdown().await
    })
    .await;
}

/// Writes `line` from byte `taken` on, counting in `taken` what the writer took: a write
/// cancelled between two calls leaves it right.
async fn write_from<W: AsyncWrite + Unpin>(
    out: &mut W,
    line: &str,
    taken: &mut usize,
) -> std::io::Result<()> {
    while *taken < line.len() {
        match out.write(&line.as_bytes()[*taken..]).await? {
            0 => return Err(std::io::ErrorKind::WriteZero.into()),
            n => *taken += n,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_bound_a_message_is_refused_but_a_farewell_goes() {
        let (outbox, mut queue) = Outbox::new();
        let big = "x".repeat(MAX_UNREAD / 4 - 1);
        for _ in 0..4 {
            outbox.push(big.clone()).unwrap();
        }
        assert!(outbox.push("one more".into()).is_err());
        outbox.push_last("farewell".into());
        let mut lines = 0;
        while queue.lines.try_recv().is_ok() {
            lines += 1;
        }
        assert_eq!(lines, 5);
    }

    #[tokio::test]
    async fn a_session_that_reads_nothing_does_not_hold_the_writer() {
        let (ours, _theirs) = tokio::io::duplex(64 * 1024);
        let (outbox, queue) = Outbox::new();
        outbox.push("x".repeat(1024 * 1024)).unwrap();
        let closed = CancellationToken::new();
        let writer = tokio::spawn(write_lines(ours, queue, closed.clone()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!writer.is_finished(), "blocked on the full pipe");
        closed.cancel();
        let ended = tokio::time::timeout(LAST_WORDS * 3, writer).await;
        assert!(
            ended.is_ok(),
            "the writer ends once the connection is closed"
        );
    }
}
