//! Lifecycle events for whoever embeds the core (the Pi extension shows them in the footer and
//! routes progress to the running tool call). One enum: Rust code matches on it, serde gives it
//! its JSON form, and the binding mirrors it for JavaScript (`LifecycleEvent`).

use parking_lot::Mutex;
use serde::Serialize;
use std::sync::Arc;

/// Something that happened to a server, or the progress of a running call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// A connection to the server is being opened.
    Connecting { server: String },
    /// A connection to the server opened; `connected` or `reconnected` follows once its tools
    /// are listed (after the call that opened it, when that call's tool was known already).
    Opened { server: String },
    /// The server's first connection this session is listed.
    Connected { server: String, tools: u32 },
    /// A later connection is listed (after a crash, a restart, an idle stop or a reconnect).
    Reconnected { server: String, tools: u32 },
    /// The server was stopped as idle (0 minutes: it was started only to fill the cache).
    IdleShutdown { server: String, idle_minutes: f64 },
    /// The server could not be started, reached or listed.
    Failed {
        server: String,
        error: String,
        needs_auth: bool,
    },
    /// The connection ended without being asked to, or was restarted.
    Disconnected { server: String, reason: String },
    /// The server's tools changed (it said so, and was listed again).
    CatalogChanged { server: String, tools: u32 },
    /// A sign-in waits for its browser step: `text` says where to sign in (the URL, whether a
    /// browser was opened), `prompt` asks for the redirected address to be pasted.
    AuthUrl {
        server: String,
        url: String,
        text: String,
        prompt: String,
    },
    /// A sign-in ended (`error`: why it did not work).
    AuthDone {
        server: String,
        signed_in: bool,
        error: Option<String>,
    },
    /// A resource the model read changed (the server offers subscriptions): `text` says so to
    /// the user, `note` to the model (and how to read it again).
    ResourceUpdated {
        server: String,
        uri: String,
        text: String,
        note: String,
    },
    /// The session runs its own servers, not its family's (a stale or forged token, a hub that
    /// did not answer, one that exited): said once per process.
    FamilyOff { text: String },
    /// An MCP App: `opened` (a new tab; `text` says where, or why no browser opened), `shown`
    /// (a later call went to its open tab), `message` and `context` (what the app sends to
    /// the conversation, cleaned; the user agreed), `ended` (its tab closed, it asked, or the
    /// session ended).
    App {
        kind: String,
        server: String,
        tool: String,
        url: String,
        text: String,
    },
    /// Progress of the call started with `call_id`; `text` is the line to show.
    Progress {
        call_id: String,
        server: String,
        tool: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        text: String,
    },
}

/// Receives every event.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

#[derive(Default)]
pub struct Events(Mutex<Option<EventSink>>);

impl Events {
    pub fn set(&self, sink: EventSink) {
        *self.0.lock() = Some(sink);
    }

    /// Where events go now.
    pub fn sink(&self) -> Option<EventSink> {
        self.0.lock().clone()
    }

    pub fn emit(&self, event: Event) {
        let sink = self.0.lock().clone();
        if let Some(sink) = sink {
            sink(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_is_tagged_kebab_case_with_camel_case_fields() {
        let event = Event::IdleShutdown {
            server: "s".into(),
            idle_minutes: 0.5,
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({ "type": "idle-shutdown", "server": "s", "idleMinutes": 0.5 })
        );
        let failed = Event::Failed {
            server: "s".into(),
            error: "x".into(),
            needs_auth: true,
        };
        assert_eq!(serde_json::to_value(&failed).unwrap()["needsAuth"], true);
    }
}
