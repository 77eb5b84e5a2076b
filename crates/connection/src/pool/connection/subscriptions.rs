//! Updates of resources the model has read: `resources/subscribe` on a 2025 connection (the
//! server then sends `notifications/resources/updated`, handled with the other notifications),
//! one `subscriptions/listen` stream for all of them on a 2026-07-28 connection (restarted with
//! the longer list when another resource is added). Only where the server offers subscriptions.

use super::Connection;
use crate::pool::handler::Notice;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use serde_json::json;
use std::time::Duration;

/// How long a server may take to acknowledge a listen stream.
const LISTEN_ACK: Duration = Duration::from_secs(10);

impl Connection {
    /// Asks for updates of `uri` (once per connection).
    pub async fn subscribe(&self, uri: &str) {
        let offered = self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true))
        });
        if !offered || !self.subscribed.lock().insert(uri.to_string()) {
            return;
        }
        match self.is_modern() {
            false => {
                let params = json!({ "uri": uri });
                let _ = self
                    .request(
                        "resources/subscribe",
                        params,
                        self.plain(Duration::from_secs(10)),
                    )
                    .await;
            }
            true => self.listen().await,
        }
    }

    /// (Re)opens the listen stream for every subscribed resource, list changes included, and
    /// returns once the server has acknowledged it (so no update after a read is missed).
    async fn listen(&self) {
        let mut filter = SubscriptionFilter::new();
        filter.resource_subscriptions = Some(self.subscribed.lock().iter().cloned().collect());
        filter.tools_list_changed = Some(true);
        filter.prompts_list_changed = Some(true);
        filter.resources_list_changed = Some(true);
        let acknowledged = tokio::time::timeout(LISTEN_ACK, self.peer.listen(filter)).await;
        let Ok(Ok(mut stream)) = acknowledged else {
            return;
        };
        let (notices, server) = (self.client_notices.clone(), self.server.clone());
        let ended = self.ended.clone();
        let task = tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = stream.next() => next,
                    _ = ended.cancelled() => return,
                };
                let notice = match next {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        Notice::ResourceUpdated {
                            server: server.clone(),
                            uri: n.params.uri,
                        }
                    }
                    Ok(Some(
                        ServerNotification::ToolListChangedNotification(_)
                        | ServerNotification::PromptListChangedNotification(_)
                        | ServerNotification::ResourceListChangedNotification(_),
                    )) => Notice::ListChanged {
                        server: server.clone(),
                        at: std::time::Instant::now(),
                    },
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => return,
                };
                let _ = notices.send(notice);
            }
        });
        if let Some(previous) = self.listener.lock().replace(task) {
            previous.abort();
        }
    }
}
