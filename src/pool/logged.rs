//! rmcp hands each notification to the handler in a task of its own, so a server's log messages
//! could reach `mcp.log` in any order (of a burst of 3,000, 649 came after a later one). They are
//! taken off the transport here instead, one at a time as they come, before rmcp reads the rest.
//! Every message passes here, so the protocol trace (`trace`) notes them here too.

use super::client_side::ClientSide;
use crate::trace::Direction;
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

    /// Notes `message` in the protocol trace, where the server is traced.
    fn traced(&self, direction: Direction, message: &impl serde::Serialize) {
        if let Some((trace, transport)) = &self.client.trace {
            trace.record(&self.client.server, transport, direction, message);
        }
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
