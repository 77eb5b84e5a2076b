//! The protocol trace (`trace`, as pi-mcp-adapter writes it): a JSON line for each MCP message
//! a traced server and this session exchange, with metadata only: when, which server, which way,
//! request, response or notification, its method, its id when a number, an error's code and its
//! size. Never a parameter, a result, an argument, a header or a token: none of them is read.
//! The file (0600, in a directory made 0700) is created when the first message is traced and
//! stops growing at `maxBytes` or `maxEvents`; a file that cannot be written ends the trace and
//! nothing else.

use crate::atomic_file;
use crate::server_log::iso_time;
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The events' schema version, pi-mcp-adapter's.
const VERSION: u32 = 1;

pub struct Trace {
    path: PathBuf,
    max_bytes: u64,
    max_events: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    file: Option<std::fs::File>,
    bytes: u64,
    events: u64,
    /// Past a bound, or the file could not be written.
    stopped: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From this session to the server.
    Outbound,
    Inbound,
}

impl Trace {
    pub fn new(path: PathBuf, max_bytes: u64, max_events: u64) -> Trace {
        Trace {
            path,
            max_bytes,
            max_events,
            state: Mutex::default(),
        }
    }

    /// The default file: `.pi/mcp-traces/mcp-<time>-<pid>.jsonl` in the session's directory.
    pub fn default_path(cwd: &Path) -> PathBuf {
        let time = iso_time(SystemTime::now()).replace([':', '.'], "-");
        let name = format!("mcp-{time}-{}.jsonl", std::process::id());
        cwd.join(".pi").join("mcp-traces").join(name)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Notes `message`, sent or received over `transport` by `server`: read as JSON, of which
    /// only the method, a numeric id and an error's code are kept.
    pub fn record(
        &self,
        server: &str,
        transport: &str,
        direction: Direction,
        message: &impl Serialize,
    ) {
        let mut state = self.state.lock();
        if state.stopped {
            return;
        }
        let Ok(message) = serde_json::to_value(message) else {
            return;
        };
        let line = format!("{}\n", event(server, transport, direction, &message));
        let bytes = line.len() as u64;
        if state.events >= self.max_events || state.bytes + bytes > self.max_bytes {
            state.stopped = true;
            return;
        }
        if state.file.is_none() {
            match self.open() {
                Ok(file) => state.file = Some(file),
                Err(_) => {
                    state.stopped = true;
                    return;
                }
            }
        }
        let written = state.file.as_mut().map(|f| f.write_all(line.as_bytes()));
        if !matches!(written, Some(Ok(()))) {
            state.stopped = true;
            return;
        }
        state.bytes += bytes;
        state.events += 1;
    }

    /// Creates the file, empty (a trace is one session's).
    fn open(&self) -> std::io::Result<std::fs::File> {
        if let Some(dir) = self.path.parent() {
            atomic_file::create_private_dir(dir)?;
        }
        let file = atomic_file::open_append_private(&self.path)?;
        file.set_len(0)?;
        Ok(file)
    }
}

/// The event of one message.
fn event(server: &str, transport: &str, direction: Direction, message: &Value) -> Value {
    let (way, status) = match direction {
        Direction::Outbound => ("outbound", "sent"),
        Direction::Inbound => ("inbound", "received"),
    };
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id");
    let kind = match (method, id) {
        (Some(_), Some(_)) => "request",
        (Some(_), None) => "notification",
        (None, _) => "response",
    };
    let mut event = json!({
        "version": VERSION,
        "timestamp": iso_time(SystemTime::now()),
        "direction": way,
        "server": server,
        "transport": transport,
        "kind": kind,
        "status": status,
    });
    if let Some(method) = method {
        event["method"] = json!(crate::clean::excerpt(method, 120));
    }
    if let Some(id) = id {
        // A string id may be made of anything: only numbers are kept.
        event["id"] = match id {
            Value::Number(_) => id.clone(),
            _ => json!("[REDACTED_ID]"),
        };
    }
    if let Some(code) = message.pointer("/error/code").and_then(Value::as_i64) {
        event["errorCode"] = json!(code);
    }
    event["bytes"] = json!(message.to_string().len());
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn metadata_only_and_bounded() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-trace-{}", std::process::id()));
        let path = dir.join("sub").join("t.jsonl");
        let trace = Trace::new(path.clone(), 1_000, 4);
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "push", "arguments": {"token": "sk-secret-1"}}});
        trace.record("gh", "stdio", Direction::Outbound, &call);
        let answer = json!({"jsonrpc": "2.0", "id": "abc-secret", "error": {"code": -32602, "message": "bad sk-secret-2"}});
        trace.record("gh", "stdio", Direction::Inbound, &answer);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"message": "sk-secret-3"}});
        trace.record("gh", "stdio", Direction::Inbound, &note);
        let got = lines(&path);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0]["kind"], "request");
        assert_eq!(got[0]["method"], "tools/call");
        assert_eq!(got[0]["id"], 7);
        assert_eq!(got[0]["direction"], "outbound");
        assert_eq!(got[1]["id"], "[REDACTED_ID]");
        assert_eq!(got[1]["errorCode"], -32602);
        assert_eq!(got[2]["kind"], "notification");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("secret"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        // maxEvents: the fourth is written, the fifth and later are not.
        for _ in 0..3 {
            trace.record("gh", "stdio", Direction::Outbound, &call);
        }
        assert_eq!(lines(&path).len(), 4);
        // maxBytes: a trace that would pass it stops before.
        let small = Trace::new(dir.join("small.jsonl"), 300, 100);
        for _ in 0..5 {
            small.record("gh", "stdio", Direction::Outbound, &call);
        }
        assert!(std::fs::metadata(dir.join("small.jsonl")).unwrap().len() <= 300);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
