//! What servers log (`notifications/message`), appended to `<agentDir>/mcp.log` in the line format
//! of Pi 1.5's built-in MCP (`<time> [<server>] <level> <logger>: <message>`), so one file serves
//! whichever of the two a user runs. Several Pi processes and the CLI write the same file: each
//! line is one `O_APPEND` write, and the rotation to `mcp.log.1` past 5 MB happens under an
//! advisory lock that every writer also takes, so no line is written to a file being renamed.

use crate::atomic_file::{self, sibling};
use crate::clean;
use serde_json::Value;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Past this size the file is rotated before the next line.
pub const ROTATE_BYTES: u64 = 5 * 1024 * 1024;

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
        let logger = match self.logger() {
            Some(logger) => format!(" {logger}:"),
            None => String::new(),
        };
        format!(
            "{} [{server}] {}{logger} {}\n",
            iso_time(at),
            self.level,
            self.text()
        )
    }
}

/// The log file of one agent dir.
#[derive(Clone, Debug)]
pub struct ServerLog {
    path: PathBuf,
}

impl ServerLog {
    pub fn new(path: PathBuf) -> ServerLog {
        ServerLog { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one message. Errors are for the caller to ignore: logging never fails a call.
    pub fn append(&self, server: &str, message: &LogMessage) -> io::Result<()> {
        self.append_line(&message.line(server, SystemTime::now()))
    }

    fn append_line(&self, line: &str) -> io::Result<()> {
        if let Some(dir) = self.path.parent() {
            atomic_file::create_private_dir(dir)?;
        }
        let lock = atomic_file::open_private(&sibling(&self.path, ".lock"))?;
        lock.lock()?; // released when `lock` is dropped
        let size = fs::metadata(&self.path).map_or(0, |m| m.len());
        if size > 0 && size + line.len() as u64 > ROTATE_BYTES {
            fs::rename(&self.path, sibling(&self.path, ".1"))?;
        }
        atomic_file::open_append_private(&self.path)?.write_all(line.as_bytes())
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
