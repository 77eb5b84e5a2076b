//! rmcp 3.9 knows neither half of 2025-11-25 client-side tasks, so both are handled on the
//! wire, around it: its `ClientCapabilities` has no `tasks` field (we add the declaration to
//! the outgoing `initialize`), and it reads a server's request by its method into a typed form
//! that drops the `task` param (a task-augmented request is given a method of ours before rmcp
//! reads it, so it arrives whole, as a custom request, with the `task` param kept).

use super::super::nesting;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, CustomRequest, JsonRpcRequest};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// What a task-augmented request's method is prefixed with.
pub const AS_TASK: &str = "pi-mcp-native/as-task:";
/// The requests a client may run as tasks.
pub const TASK_METHODS: [&str; 2] = ["sampling/createMessage", "elicitation/create"];

/// `message` (one JSON-RPC message) with its method marked [`AS_TASK`] when it is a
/// task-augmented request of [`TASK_METHODS`]; `None` when it is to stay as it is.
pub fn lifted(message: &str) -> Option<String> {
    // Only a message that could be one is read twice.
    let maybe = message.contains("\"task\"") && TASK_METHODS.iter().any(|m| message.contains(m));
    if !maybe {
        return None;
    }
    let mut value: Value = serde_json::from_str(message).ok()?;
    let method = value.get("method")?.as_str()?;
    let augmented = value.get("id").is_some()
        && TASK_METHODS.contains(&method)
        && value.get("params")?.get("task")?.is_object();
    if !augmented {
        return None;
    }
    value["method"] = Value::String(format!("{AS_TASK}{method}"));
    serde_json::to_string(&value).ok()
}

/// An SSE event's data (one JSON-RPC message) as rmcp is to read it: readable (see
/// [`nesting::readable`]) and [`lifted`] when it is a task-augmented request; `None` to drop it.
#[cfg_attr(
    not(feature = "remote"),
    expect(dead_code, reason = "the remote transports read it")
)]
pub fn incoming(data: &str) -> Option<Cow<'_, str>> {
    let readable = nesting::readable(data)?;
    Some(lifted(&readable).map_or(readable, Cow::Owned))
}

/// The `tasks` client capability, added to the `initialize` request rmcp builds.
#[derive(Clone, Default)]
pub struct TaskCapability(Option<Arc<Value>>);

impl TaskCapability {
    /// `tasks`: the capability's value, `None` to declare nothing.
    pub fn new(tasks: Option<Value>) -> TaskCapability {
        TaskCapability(tasks.map(Arc::new))
    }

    /// `message` declaring the capability, if it is the `initialize` request (else `None`).
    pub fn declared(&self, message: &ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        let tasks = self.0.as_ref()?;
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let ClientRequest::InitializeRequest(initialize) = &request.request else {
            return None;
        };
        let mut params = serde_json::to_value(initialize)
            .ok()?
            .get_mut("params")
            .map(Value::take)?;
        params
            .get_mut("capabilities")?
            .as_object_mut()?
            .insert("tasks".into(), (**tasks).clone());
        // rmcp's own form of the request cannot carry it: sent as a custom one, same id.
        let custom = CustomRequest::new("initialize", Some(params));
        Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
            request.id.clone(),
            ClientRequest::CustomRequest(custom),
        )))
    }
}

/// A transport whose `initialize` declares the `tasks` capability (for transports that
/// serialize what they are given; Streamable HTTP declares it in its client, below rmcp's
/// worker, which must see the typed `initialize`).
pub struct Declaring<T> {
    inner: T,
    tasks: TaskCapability,
}

impl<T> Declaring<T> {
    pub fn new(inner: T, tasks: TaskCapability) -> Self {
        Declaring { inner, tasks }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Declaring<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let item = self.tasks.declared(&item).unwrap_or(item);
        self.inner.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
