//! What sessions and the broker (or a family's hub, the broker in family mode) say to each other
//! besides MCP itself: the experimental capability of a session's `initialize` that asks for a
//! server (or for the broker's controls, or joins a family), the broker's notifications about
//! the share, its control requests and its error codes.

use crate::pool::{ClientFeatures, Protocol, StdioSpec};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The variable that holds a family's token (`v1.` and 43 characters): set by the session that
/// hosts the family, inherited by what it starts, never given to servers.
pub const FAMILY_VAR: &str = "PI_MCP_NATIVE_FAMILY";
/// What a family's hub puts before a session's id when it forwards the session's request: the
/// caller the server's questions name, which no call id of Pi's can be.
pub const FAMILY_CALLER: &str = "\u{1f}family:";
/// The key of `capabilities.experimental` in a session's `initialize`; its value is a [`Hello`].
pub const CAPABILITY: &str = "pi-mcp-native/broker";
/// Broker → session, just before the broker closes the connection: why ([`Farewell`]).
pub const FAREWELL: &str = "notifications/pi-mcp-native/farewell";
/// Broker → session: how many sessions use the server now (`{"sessions": n}`).
pub const SESSIONS: &str = "notifications/pi-mcp-native/sessions";
/// Member → family's hub, on its join's connection: may a gated use go ahead? Params: an
/// `approval::family::Ask`; result: an `approval::family::Verdict` from the family's UI.
pub const APPROVE: &str = "pi-mcp-native/approve";
/// Control → broker: the broker's state ([`BrokerStatus`]).
pub const STATUS: &str = "pi-mcp-native/status";
/// Control → broker: stop every shared server and exit.
pub const STOP: &str = "pi-mcp-native/stop";
/// The largest message a connection may send the broker (README "Shared servers"). Past any of
/// these bounds the broker drops the connection: its note names the peer's pid and the bound,
/// and a session that still reads gets a [`Farewell`] saying the same.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The requests one connection may have in flight at the broker.
pub const MAX_IN_FLIGHT: usize = 256;
/// The bytes of the broker's messages one connection may leave unread.
pub const MAX_UNREAD: usize = 64 * 1024 * 1024;
/// The requests a session has in flight on one connection at most; more wait for a slot. Half
/// of [`MAX_IN_FLIGHT`], so that requests the session cancelled while the broker still ends them
/// never count against it.
pub const SESSION_IN_FLIGHT: usize = MAX_IN_FLIGHT / 2;
/// `initialize` failed because the server could not be started (the message says why).
pub const START_FAILED: i32 = -32050;
/// The broker does not serve this peer (another user, another version).
pub const REFUSED: i32 = -32051;

/// What a connection to the broker is for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Hello {
    /// A session's connection to one shared server.
    Attach(Box<Attach>),
    /// `pi-mcp broker status|stop`.
    Control {},
    /// A process that inherited a family's token joins the family (once, before its first
    /// attach); the hub answers with its version and pid ([`Joined`]).
    Join { token: String, session: SessionInfo },
}

/// The hub's answer to [`Hello::Join`] (in the `initialize` result's `serverInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Joined {
    pub version: String,
    pub pid: u32,
}

/// The server a session wants, and who the session is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attach {
    /// The server's name in the session's config (shown in the broker's status and log).
    pub name: String,
    /// Sessions with the same identity share one process (see `identity`).
    pub identity: String,
    /// How to start it, the whole environment included.
    pub launch: StdioSpec,
    pub protocol: Protocol,
    pub client: ClientFeatures,
    /// Bounds the start and each request.
    pub timeout_ms: u64,
    /// How long the server may sit unused once no session uses it; `None`: the session would
    /// never stop it.
    pub idle_ms: Option<u64>,
    /// Echo the server's stderr (to the broker's log).
    pub debug: bool,
    pub session: SessionInfo,
    /// Set when the server is shared with a family (then `identity` is its family identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<FamilyAttach>,
}

/// What a family's hub needs besides the launch to check and serve an attach.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FamilyAttach {
    /// The family's token; `None` from a session of the hub's own process.
    pub token: Option<String>,
    pub agent_dir: PathBuf,
    /// The session's directory, when the server is offered roots (they name it).
    pub roots_cwd: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Unique per session (the process id and the session's number in it).
    pub id: String,
    pub pid: u32,
    /// Someone can answer questions there (Pi's UI, a terminal).
    pub ui: bool,
    /// Who it is, for a question asked in another session's UI (`subagent "worker" (pid 4242)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Why the broker ends a session's connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Farewell {
    pub reason: FarewellReason,
    /// For the model and the status, as a local server's end would be told.
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FarewellReason {
    /// The server exited, crashed or stopped answering; the next use starts it again.
    ServerLost,
    /// The broker stops (`pi-mcp broker stop`); the next use starts a new one.
    BrokerStopping,
    /// The connection passed one of its bounds ([`MAX_MESSAGE`], [`MAX_IN_FLIGHT`],
    /// [`MAX_UNREAD`]); the next use connects again.
    Dropped,
}

/// The broker's answer to [`STATUS`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerStatus {
    pub pid: u32,
    pub version: String,
    pub endpoint: String,
    pub uptime_ms: u64,
    /// Sessions connected now.
    pub sessions: usize,
    pub servers: Vec<SharedServer>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedServer {
    pub name: String,
    pub identity: String,
    pub command: String,
    /// The process group leader, while it runs.
    pub pid: Option<u32>,
    /// Sessions using it now.
    pub sessions: usize,
    /// Since its last request.
    pub idle_ms: u64,
    /// Why its last start failed, if it did.
    pub failure: Option<String>,
}
