//! Lifecycle events for whoever embeds the core (the Pi extension shows them in the footer).

use parking_lot::Mutex;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Receives events as JSON objects with a `type`: `connected`, `failed`, `disconnected`,
/// `catalog-changed`, `progress`.
pub type EventSink = Arc<dyn Fn(Value) + Send + Sync>;

#[derive(Default)]
pub struct Events(Mutex<Option<EventSink>>);

impl Events {
    pub fn set(&self, sink: EventSink) {
        *self.0.lock() = Some(sink);
    }

    pub fn emit(&self, kind: &str, fields: Value) {
        let Some(sink) = self.0.lock().clone() else {
            return;
        };
        let mut event = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        event.insert("type".into(), Value::String(kind.into()));
        sink(Value::Object(event));
    }
}
