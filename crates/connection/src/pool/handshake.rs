//! Which MCP lifecycle a connection starts with: the `initialize` handshake (every server on npm
//! today speaks it), the stateless 2026-07-28 revision (`server/discover` and per-request
//! `_meta`), or a probe for the latter that falls back to the former.

use super::handler::Handler;
use super::logged::InOrder;
use rmcp::model::ProtocolVersion;
use rmcp::service::{serve_client_with_lifecycle_and_ct, ClientInitializeError, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{ClientLifecycleMode, RoleClient};
use tokio_util::sync::CancellationToken;

/// A server's `protocolVersion` setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// `initialize` with 2025-11-25, negotiating down.
    #[default]
    Initialize,
    /// 2026-07-28 only.
    Modern,
    /// 2026-07-28 when the server answers `server/discover`, `initialize` otherwise.
    Auto,
}

impl Protocol {
    fn lifecycle(self) -> ClientLifecycleMode {
        let modern = vec![ProtocolVersion::V_2026_07_28];
        match self {
            Protocol::Initialize => ClientLifecycleMode::Initialize,
            Protocol::Modern => ClientLifecycleMode::Discover {
                preferred_versions: modern,
            },
            Protocol::Auto => ClientLifecycleMode::Auto {
                preferred_versions: modern,
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
        }
    }
}

pub type Service = RunningService<RoleClient, Handler>;

/// Runs the lifecycle's opening exchange over `transport`; cancelling `ct` ends the session.
pub async fn start<T, E, A>(
    handler: Handler,
    transport: T,
    protocol: Protocol,
    ct: CancellationToken,
) -> Result<Service, ClientInitializeError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let transport = InOrder::new(transport.into_transport(), handler.clone());
    serve_client_with_lifecycle_and_ct(handler, transport, protocol.lifecycle(), ct).await
}
