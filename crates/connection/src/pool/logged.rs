//! rmcp hands each notification to the handler in a task of its own, so a server's log messages
//! could reach `mcp.log` in any order (of a burst of 3,000, 649 came after a later one), a call's
//! progress its caller shuffled (`[2, 1, 3]`) or after the answer, and the broker's count of the
//! sessions on a server an older count after a newer one. These are taken off the transport here
//! instead, one at a time as they come, before rmcp reads the rest. Every message passes here,
//! so the protocol trace (`trace`) notes them here too.

use super::handler::Handler;
use crate::trace::Direction;
use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use std::future::Future;

pub struct InOrder<T> {
    inner: T,
    handler: Handler,
}

impl<T> InOrder<T> {
    pub fn new(inner: T, handler: Handler) -> Self {
        InOrder { inner, handler }
    }

    /// Notes `message` in the protocol trace, where the server is traced.
    fn traced(&self, direction: Direction, message: &impl serde::Serialize) {
        let client = &self.handler.client;
        if let Some((trace, transport)) = &client.trace {
            trace.record(&client.server, transport, direction, message);
        }
    }

    /// Takes `notification` here when its order matters; gives it back for rmcp otherwise.
    fn take(&self, notification: ServerNotification) -> Option<ServerNotification> {
        match notification {
            ServerNotification::LoggingMessageNotification(log) => {
                if let Ok(params) = serde_json::to_value(log.params) {
                    self.handler.client.log(&params);
                }
            }
            ServerNotification::ProgressNotification(progress) => {
                self.handler.progressed(progress.params);
            }
            ServerNotification::CustomNotification(custom) => {
                if !self.handler.broker_says(&custom) {
                    return Some(ServerNotification::CustomNotification(custom));
                }
            }
            other => return Some(other),
        }
        None
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.traced(Direction::Outbound, &item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            self.traced(Direction::Inbound, &message);
            match message {
                JsonRpcMessage::Notification(JsonRpcNotification {
                    jsonrpc,
                    notification,
                }) => {
                    if let Some(notification) = self.take(notification) {
                        let kept = JsonRpcNotification {
                            jsonrpc,
                            notification,
                        };
                        return Some(JsonRpcMessage::Notification(kept));
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
