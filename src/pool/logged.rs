//! rmcp hands each notification to the handler in a task of its own, so a server's log messages
//! could reach `mcp.log` in any order (of a burst of 3,000, 649 came after a later one). They are
//! taken off the transport here instead, one at a time as they come, before rmcp reads the rest.

use super::client_side::ClientSide;
use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use std::future::Future;

pub struct InOrder<T> {
    inner: T,
    client: ClientSide,
}

impl<T> InOrder<T> {
    pub fn new(inner: T, client: ClientSide) -> Self {
        InOrder { inner, client }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.inner.receive().await? {
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::LoggingMessageNotification(log),
                    ..
                }) => {
                    if let Ok(params) = serde_json::to_value(log.params) {
                        self.client.log(&params);
                    }
                }
                message => return Some(message),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
