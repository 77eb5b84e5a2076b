//! A short-lived program run to its end in a process group of its own: given its input, its
//! stdout kept up to a bound, stderr discarded, the group stopped afterwards or once the time
//! limit is reached. `!command` values and `requestHeadersCommand` run this way.

use super::process::{self, StdioSpec};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Why a program gave no output.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// It could not be started.
    Spawn(String),
    /// E.g. "exited with code 1".
    Failed(String),
    TimedOut,
    /// It printed more than the bound.
    TooLong,
}

/// Runs `spec` with `input` on its stdin; its stdout once it exited successfully within `limit`
/// having printed at most `max_output` bytes.
pub async fn to_end(
    spec: &StdioSpec,
    input: &[u8],
    max_output: usize,
    limit: Duration,
) -> Result<Vec<u8>, RunError> {
    let spawned = process::spawn(spec).map_err(|e| RunError::Spawn(e.to_string()))?;
    let (pid, mut exit) = (spawned.pid, spawned.exit);
    let (mut stdin, input) = (spawned.stdin, input.to_vec());
    tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
        // Dropped: the program reads the end of its input.
    });
    let mut stderr = spawned.stderr;
    tokio::spawn(async move { tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await });
    let deadline = Instant::now() + limit;
    let mut stdout = Vec::new();
    let mut pipe = spawned.stdout.take(max_output as u64 + 1);
    let read = pipe.read_to_end(&mut stdout);
    let finished = match tokio::time::timeout(limit, read).await {
        Ok(_) => {
            exit.wait(deadline.saturating_duration_since(Instant::now()))
                .await
        }
        Err(_) => false,
    };
    let status = exit.status();
    process::stop_group(pid, exit, Duration::ZERO).await;
    match status {
        _ if !finished => Err(RunError::TimedOut),
        Some(status) if !status.success => Err(RunError::Failed(status.text)),
        _ if stdout.len() > max_output => Err(RunError::TooLong),
        _ => Ok(stdout),
    }
}
