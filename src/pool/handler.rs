//! What a server may tell us on its own: progress of a running request, and that its tool or
//! resource list changed.

use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

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
    /// The connection ended without being asked to (crash, exit, closed stdout).
    Lost { server: String, why: String },
}

#[derive(Clone)]
pub struct Handler {
    pub server: String,
    pub progress: ProgressRoutes,
    pub notices: UnboundedSender<Notice>,
}

impl Handler {
    fn list_changed(&self) {
        let _ = self.notices.send(Notice::ListChanged {
            server: self.server.clone(),
            at: Instant::now(),
        });
    }
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let sink = self.progress.lock().get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed();
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pi-mcp-native", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
