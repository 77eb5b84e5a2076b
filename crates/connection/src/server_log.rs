//! What servers log (`notifications/message`), appended to `<agentDir>/mcp.log` in the line format
//! of Pi 1.5's built-in MCP (`<time> [<server>] <level> <logger>: <message>`), so one file serves
//! whichever of the two a user runs. Appending only queues a line: one thread at a time writes
//! the queue, in order, under an advisory lock every writing process takes (several Pi processes,
//! the CLI and the broker write the same file), and stamps the lines as it writes them. So the
//! file's lines are in the order they were appended, their times never go back, and the rotation
//! to `mcp.log.1` past 5 MB ([`LogFile`]) keeps the newest lines.

use crate::atomic_file::{self, sibling};
use crate::clean;
use crate::log_file::LogFile;
use parking_lot::{Condvar, Mutex};
use serde_json::Value;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::log_file::ROTATE_BYTES;
/// Lines waiting to be written, at most: a file's worth. More means the disk cannot keep up;
/// the excess is counted and the count written instead.
const MAX_QUEUED: usize = ROTATE_BYTES as usize;
/// How long a process that ends waits for its queued lines to be written.
const FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// The syslog severities MCP uses, least severe first.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `notifications/message`.
#[derive(Clone, Debug, PartialEq)]
pub struct LogMessage {
    pub level: LogLevel,
    pub logger: Option<String>,
    /// Any JSON value; a string is written as it is, anything else as JSON.
    pub data: Value,
}

impl LogMessage {
    /// From the notification's params; an unknown or missing level counts as `info`.
    pub fn from_params(params: &Value) -> LogMessage {
        LogMessage {
            level: params
                .get("level")
                .and_then(Value::as_str)
                .and_then(LogLevel::parse)
                .unwrap_or(LogLevel::Info),
            logger: params
                .get("logger")
                .and_then(Value::as_str)
                .filter(|l| !l.is_empty())
                .map(str::to_string),
            data: params.get("data").cloned().unwrap_or(Value::Null),
        }
    }

    /// The message text, cleaned (`clean::text`): continuation lines indented, so every line of
    /// the file starts with a time stamp or with spaces.
    pub fn text(&self) -> String {
        let text = match &self.data {
            Value::String(s) => clean::text(s),
            other => clean::json(other).into(),
        };
        text.replace('\n', "\n    ")
    }

    /// Its logger's name, cleaned (`clean::line`).
    pub fn logger(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.logger.as_deref().map(clean::line)
    }

    /// The line as `mcp.log` holds it, newline included.
    pub fn line(&self, server: &str, at: SystemTime) -> String {
        format!("{} {}", iso_time(at), self.unstamped(server))
    }

    /// The line after its time stamp.
    fn unstamped(&self, server: &str) -> String {
        let logger = match self.logger() {
            Some(logger) => format!(" {logger}:"),
            None => String::new(),
        };
        format!("[{server}] {}{logger} {}\n", self.level, self.text())
    }
}

/// The log file of one agent dir. Clones share its queue.
#[derive(Clone)]
pub struct ServerLog {
    file: Arc<LogFile>,
    queue: Arc<Queue>,
}

#[derive(Default)]
struct Queue {
    waiting: Mutex<Waiting>,
    /// Signalled when the writer has written everything and stopped.
    idle: Condvar,
}

#[derive(Default)]
struct Waiting {
    /// Lines without their time stamp, in the order appended.
    lines: Vec<String>,
    bytes: usize,
    /// Lines left out since the last write: the queue was full.
    dropped: usize,
    /// A thread is writing the queue.
    writing: bool,
    /// Why the last write failed.
    trouble: Option<String>,
}

impl ServerLog {
    pub fn new(path: PathBuf) -> ServerLog {
        ServerLog {
            file: Arc::new(LogFile::new(path, ROTATE_BYTES)),
            queue: Arc::default(),
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Queues one message; a writer thread writes it soon. Logging never fails nor waits.
    pub fn append(&self, server: &str, message: &LogMessage) {
        let line = message.unstamped(server);
        let mut waiting = self.queue.waiting.lock();
        if waiting.bytes + line.len() > MAX_QUEUED {
            waiting.dropped += 1;
            return;
        }
        waiting.bytes += line.len();
        waiting.lines.push(line);
        if waiting.writing {
            return;
        }
        waiting.writing = true;
        drop(waiting);
        let log = self.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp.log".into())
            .spawn(move || log.write_queued());
        if spawned.is_err() {
            self.write_queued();
        }
    }

    /// Waits until what was appended is written, at most `limit`.
    pub fn flush(&self, limit: Duration) {
        let mut waiting = self.queue.waiting.lock();
        if waiting.writing {
            let _ = self
                .queue
                .idle
                .wait_while_for(&mut waiting, |w| w.writing, limit);
        }
    }

    /// [`ServerLog::flush`] for a process that ends, from a runtime: at most [`FLUSH_LIMIT`].
    pub async fn flushed(&self) {
        let log = self.clone();
        let _ = tokio::task::spawn_blocking(move || log.flush(FLUSH_LIMIT)).await;
    }

    /// Why the last write failed, if it did.
    pub fn trouble(&self) -> Option<String> {
        self.queue.waiting.lock().trouble.clone()
    }

    /// Why lines are not written: the last write's failure, or what stands in the file's place
    /// (a link, a FIFO, a directory) when nothing was written yet.
    pub fn check(&self) -> Option<String> {
        self.trouble()
            .or_else(|| atomic_file::unwritable(self.path()).map(|e| e.to_string()))
    }

    /// Writes the queue until it is empty.
    fn write_queued(&self) {
        loop {
            let (lines, dropped) = {
                let mut waiting = self.queue.waiting.lock();
                if waiting.lines.is_empty() && waiting.dropped == 0 {
                    waiting.writing = false;
                    self.queue.idle.notify_all();
                    return;
                }
                waiting.bytes = 0;
                let dropped = std::mem::take(&mut waiting.dropped);
                (std::mem::take(&mut waiting.lines), dropped)
            };
            let written = self.write(&lines, dropped);
            self.queue.waiting.lock().trouble = written.err().map(|e| e.to_string());
        }
    }

    /// Writes `lines`, stamped now, under the lock of every process writing the file.
    fn write(&self, lines: &[String], dropped: usize) -> io::Result<()> {
        let named = |e: io::Error, what: &Path| {
            io::Error::new(e.kind(), format!("cannot write {}: {e}", what.display()))
        };
        if let Some(dir) = self.path().parent() {
            atomic_file::create_private_dir(dir).map_err(|e| named(e, dir))?;
        }
        let path = sibling(self.path(), ".lock");
        let lock = atomic_file::open_lock(&path)?;
        lock.lock().map_err(|e| named(e, &path))?; // released when `lock` is dropped
        let stamp = iso_time(SystemTime::now());
        let mut stamped: Vec<String> = lines.iter().map(|l| format!("{stamp} {l}")).collect();
        if dropped > 0 {
            let note = LogMessage {
                level: LogLevel::Warning,
                logger: None,
                data: Value::String(format!(
                    "{dropped} log messages were left out: servers sent them faster than this file could be written"
                )),
            };
            stamped.push(format!("{stamp} {}", note.unstamped("pi-mcp-native")));
        }
        self.file.append(stamped.iter().map(String::as_bytes))
    }
}

/// `at` as JavaScript's `toISOString` writes it: UTC, milliseconds, `Z`.
pub fn iso_time(at: SystemTime) -> String {
    let millis = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis()) as i64;
    let (days, ms_of_day) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let secs = ms_of_day / 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        ms_of_day % 1000
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests;
