//! The broker's own log, `<stem>.log`: what it notes, and the stderr of servers with `debug` on.
//! The detached broker's stdout and stderr are a pipe whose other end a thread reads, appending
//! whole lines to the file with the rotation `mcp.log` has ([`LogFile`]: `.log.1` past 5 MB),
//! so a chatty server cannot grow it without bound while the broker runs.

use crate::log_file::{LogFile, ROTATE_BYTES};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// The most a line may grow before it is written unfinished.
const MAX_PENDING: usize = 64 * 1024;
/// How long the last lines may take to be written when the broker exits.
const LAST_LINES: Duration = Duration::from_secs(1);

/// The thread writing the log; [`OwnLog::finish`] lets it write what is left.
pub struct OwnLog {
    done: mpsc::Receiver<()>,
}

impl OwnLog {
    /// Sends this process's stdout and stderr to `path`; `Err` when the file cannot be kept (a
    /// link or a FIFO in its place: nothing is written through it).
    pub fn start(path: &Path) -> Result<OwnLog, String> {
        let file = LogFile::new(path.to_path_buf(), ROTATE_BYTES);
        let cannot = |e: std::io::Error| format!("cannot keep the broker's log: {e}");
        file.append([]).map_err(cannot)?;
        let (reader, writer) = std::io::pipe().map_err(cannot)?;
        // SAFETY: dup2(2) onto this process's own stdout and stderr.
        unsafe {
            libc::dup2(writer.as_raw_fd(), 1);
            libc::dup2(writer.as_raw_fd(), 2);
        }
        drop(writer);
        let (finished, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("broker log".into())
            .spawn(move || {
                copy_lines(reader, &file);
                let _ = finished.send(());
            })
            .map_err(cannot)?;
        Ok(OwnLog { done })
    }

    /// Closes stdout and stderr and waits (a moment at most) for what they held to be written.
    pub fn finish(self) {
        if let Ok(null) = std::fs::File::open("/dev/null") {
            // SAFETY: dup2(2) onto this process's own stdout and stderr: the pipe's last
            // write ends, so the thread reads to its end.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
                libc::dup2(null.as_raw_fd(), 2);
            }
        }
        let _ = self.done.recv_timeout(LAST_LINES);
    }
}

/// Appends what comes from `pipe` to `file`, whole lines at a time (a line longer than
/// [`MAX_PENDING`] in pieces), until the pipe's end. A write that fails loses those lines only.
fn copy_lines(mut pipe: impl Read, file: &LogFile) {
    let mut pending = Vec::new();
    let mut chunk = vec![0u8; MAX_PENDING];
    loop {
        let read = match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        pending.extend_from_slice(&chunk[..read]);
        let whole = match pending.iter().rposition(|&b| b == b'\n') {
            Some(end) => end + 1,
            None if pending.len() >= MAX_PENDING => pending.len(),
            None => continue,
        };
        let _ = file.append(pending[..whole].split_inclusive(|&b| b == b'\n'));
        pending.drain(..whole);
    }
    if !pending.is_empty() {
        let _ = file.append([&pending[..]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_are_written_and_the_rest_at_the_end() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-own-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = LogFile::new(dir.join("b.log"), 100);
        let input: Vec<u8> = (0..30)
            .flat_map(|n| format!("line {n:02}\n").into_bytes())
            .chain(*b"unfinished")
            .collect();
        copy_lines(&input[..], &file);
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let (previous, last) = (read("b.log.1"), read("b.log"));
        assert!(previous.len() <= 100 && last.len() <= 100);
        assert!(previous.ends_with('\n'), "no line split: {previous:?}");
        assert!(last.ends_with("line 29\nunfinished"), "{last:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
