//! What the gateway itself says: its `tracing` events (and the warnings of the crates beneath it,
//! rmcp's among them), written to `mcp.log` beside what servers log, as
//! `<time> [pi-mcp-native] <level> <module>: <message>`. Never to the terminal: Pi's TUI owns it,
//! and a line written there would tear its frame. The broker, whose stderr is its own log file,
//! writes them there.

use crate::server_log::{LogLevel, LogMessage, ServerLog};
use parking_lot::Mutex;
use serde_json::Value;
use std::fmt::{self, Write};
use std::time::SystemTime;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The name our own lines carry where a server's name stands.
pub const SOURCE: &str = "pi-mcp-native";

enum Sink {
    Log(ServerLog),
    Stderr,
}

/// Where events go: the log of the session opened last (one agent dir per process in practice).
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Sends this process's `tracing` events to `log` from now on.
pub fn write_to(log: &ServerLog) {
    send_to(Sink::Log(log.clone()));
}

/// Sends this process's `tracing` events to its stderr: the broker's, which is its log file.
pub fn write_to_stderr() {
    send_to(Sink::Stderr);
}

/// The first call installs the subscriber; a process that already has one keeps it.
fn send_to(sink: Sink) {
    *SINK.lock() = Some(sink);
    let _ = tracing::subscriber::set_global_default(ToLog);
}

/// Our crates' events from `info` up; others' from `warn` up.
fn wanted(meta: &Metadata<'_>) -> bool {
    let ours = meta.target().starts_with("pi_mcp_");
    *meta.level() <= if ours { Level::INFO } else { Level::WARN }
}

struct ToLog;

impl Subscriber for ToLog {
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        wanted(meta)
    }

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        let level = match *meta.level() {
            Level::ERROR => LogLevel::Error,
            Level::WARN => LogLevel::Warning,
            Level::INFO => LogLevel::Info,
            Level::DEBUG | Level::TRACE => LogLevel::Debug,
        };
        let message = LogMessage {
            level,
            logger: Some(meta.target().to_string()),
            data: Value::String(text.0),
        };
        match &*SINK.lock() {
            Some(Sink::Log(log)) => log.append(SOURCE, &message),
            Some(Sink::Stderr) => eprint!("{}", message.line(SOURCE, SystemTime::now())),
            None => {}
        }
    }

    // Spans are not written: the events say what happened, each on its own line.
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// An event's message, then its other fields as `name=value`.
#[derive(Default)]
struct Text(String);

impl Text {
    fn push(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        let sep = if self.0.is_empty() { "" } else { " " };
        let _ = match field.name() {
            "message" => write!(self.0, "{sep}{value}"),
            name => write!(self.0, "{sep}{name}={value}"),
        };
    }
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, format_args!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, format_args!("{value}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_reach_mcp_log_with_their_level_module_and_fields() {
        let dir = std::env::temp_dir().join(format!("own-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = ServerLog::new(dir.join("mcp.log"));
        write_to(&log);
        tracing::warn!(
            server = "memory",
            "could not write the cache: {}",
            "disk full"
        );
        tracing::debug!("left out below info");
        log.flush(std::time::Duration::from_secs(5));
        let text = std::fs::read_to_string(dir.join("mcp.log")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let line = text.lines().find(|l| l.contains("disk full")).unwrap();
        assert!(
            line.ends_with(
                "[pi-mcp-native] warning pi_mcp_connection::tracing_log::tests: could not write the \
                 cache: disk full server=memory"
            ),
            "{line}"
        );
        assert!(!text.contains("left out below info"));
    }
}
