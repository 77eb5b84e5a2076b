//! rmcp's side of a connection: what the server tells us on its own (progress of a running
//! request, changed lists; log messages are taken earlier, see `logged`) and what it asks of us (answered by [`ClientSide`]).
#![expect(
    deprecated,
    reason = "roots, sampling and logging are deprecated by 2026-07-28 but servers still use them"
)]

use super::client_side::{ClientSide, Origin};
use super::client_tasks::StatusSink;
use super::shared::{wire, BrokerLink};
use parking_lot::Mutex;
use rmcp::model::{
    ClientConfig, ClientNotification, CreateMessageRequestParams, CreateMessageResult,
    CustomNotification, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

/// The notification that tells the server a task's new status.
const TASK_STATUS: &str = "notifications/tasks/status";

#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Progress sinks of the requests in flight, by the progress token rmcp attached to them.
pub type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>;

/// Something a connection reports to whoever owns the pool.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// The server said (when we heard it: `at`) that its tools, resources or prompts changed.
    ListChanged { server: String, at: Instant },
    /// An attempt to connect the server started (its process starts, or its URL is reached).
    Connecting { server: String },
    /// The attempt opened a connection (its handshake done), which is now the server's live one.
    Opened { server: String },
    /// The connection ended without being asked to (crash, exit, closed stdout).
    Lost { server: String, why: String },
    /// A resource the client subscribed to changed.
    ResourceUpdated { server: String, uri: String },
}

#[derive(Clone)]
pub struct Handler {
    pub client: ClientSide,
    pub progress: ProgressRoutes,
    pub notices: UnboundedSender<Notice>,
    /// Set on a connection through the broker (a shared server): it names the server in
    /// `initialize` and hears the broker's own notifications.
    pub broker: Option<Arc<BrokerLink>>,
}

impl Handler {
    /// A request's progress, to the caller that waits for it (in the order the server sent it:
    /// see `logged`).
    pub fn progressed(&self, params: ProgressNotificationParam) {
        let sink = self.progress.lock().get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    /// Takes a notification of the broker's own (on a connection through it); false for any other.
    pub fn broker_says(&self, notification: &CustomNotification) -> bool {
        self.broker
            .as_ref()
            .is_some_and(|link| link.heard(&notification.method, notification.params.as_ref()))
    }

    fn list_changed(&self) {
        let _ = self.notices.send(Notice::ListChanged {
            server: self.client.server.clone(),
            at: Instant::now(),
        });
    }

    /// Answers a typed request through the JSON answer of [`ClientSide`]; its `_meta` (which
    /// rmcp keeps apart, in the context) goes back into its params: a `related-task` there says
    /// whose question it is.
    async fn answer<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        context: RequestContext<RoleClient>,
    ) -> Result<R, ErrorData> {
        let mut params = serde_json::to_value(params)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if let (Value::Object(params), Ok(Value::Object(meta))) =
            (&mut params, serde_json::to_value(&context.meta))
        {
            if !meta.is_empty() {
                params.entry("_meta").or_insert(Value::Object(meta));
            }
        }
        let origin = Origin::request_of_the_server(context.ct);
        let answer = self.client.answer(method, params, origin).await?;
        serde_json::from_value(answer).map_err(|e| {
            ErrorData::internal_error(format!("the client's answer is malformed: {e}"), None)
        })
    }
}

impl ClientHandler for Handler {
    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.answer("elicitation/create", params, context).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.answer("sampling/createMessage", params, context).await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.answer("roots/list", Value::Null, context).await
    }

    /// Requests rmcp could not read as their typed form (an elicitation whose schema is not a
    /// flat form, say) arrive here, so they get the same answer or a specific error; so do the
    /// server's requests about the tasks it asked us to run, and the questions it asked as tasks.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or(Value::Null);
        let peer = context.peer.clone();
        let notify: StatusSink = Arc::new(move |task| {
            let peer = peer.clone();
            let status = CustomNotification::new(TASK_STATUS, Some(task));
            tokio::spawn(async move {
                let _ = peer
                    .send_notification(ClientNotification::CustomNotification(status))
                    .await;
            });
        });
        if let Some(answer) =
            self.client
                .answer_task(&request.method, params.clone(), notify, context.ct.clone())
        {
            return answer.await.map(CustomResult);
        }
        self.client
            .answer(
                &request.method,
                params,
                Origin::request_of_the_server(context.ct),
            )
            .await
            .map(CustomResult)
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.notices.send(Notice::ResourceUpdated {
            server: self.client.server.clone(),
            uri: params.uri,
        });
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed();
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed();
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed();
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = self.client.capabilities();
        if let Some(link) = &self.broker {
            let experimental = capabilities
                .experimental
                .get_or_insert_with(Default::default);
            experimental.insert(wire::CAPABILITY.into(), link.hello());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("pi-mcp-native", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
