//! What the apps need of whoever embeds them (the adapter): the server's tools and resources,
//! the approval gate, the user's consent, the conversation and the browser.

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The app session a request comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppRef {
    pub id: String,
    pub server: String,
    /// The tool whose interface it is (its MCP name).
    pub tool: String,
}

/// Where something the app sends to the conversation goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToConversation {
    /// `ui/message`: a message from the app; Pi answers it (a new turn).
    Message,
    /// `ui/update-model-context`: the app's context, replacing its last, read at the next turn.
    Context,
}

/// What the user may be asked about an app; the asks of one app session waiting at the same
/// time are shown in one dialog (at most [`super::bridge::MAX_ASKS`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// Let the app send messages and context to the conversation (what it sends now, cleaned).
    Conversation(String),
    /// Let the app call tools of its server (the call it makes now: the tool and its arguments).
    Tools { name: String, args: Value },
    /// A call the approval gate asks about (`approveTools`): the tool and its arguments. Asked
    /// for each call, until the user says no to one; alone it is the approval gate's own dialog.
    Gated { name: String, args: Value },
    /// Open `url` (shown as it will be opened).
    Link(String),
}

impl Ask {
    /// What a grant of this covers for an app session, or "always": `None` for what is asked
    /// each time (a link).
    pub fn grant_key(&self) -> Option<&'static str> {
        match self {
            Ask::Conversation(_) => Some("conversation"),
            Ask::Tools { .. } => Some(super::bridge::TOOLS),
            Ask::Gated { .. } | Ask::Link(_) => None,
        }
    }
}

/// The user's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// This once.
    Once,
    /// For the rest of this app session.
    Session,
    /// For every session of this server's app, kept in the agent dir until revoked.
    Always,
    Deny,
}

impl Grant {
    pub fn allows(self) -> bool {
        self != Grant::Deny
    }
}

pub trait AppHost: Send + Sync + 'static {
    /// The server's tool `name` as listed, if it has one.
    fn tool(&self, server: &str, name: &str) -> Option<Arc<Value>>;
    /// Calls the tool of the app's server through the approval gate (as the app), unless the
    /// user just allowed the call in the app's dialog (`allowed`); the MCP result, or why not.
    fn call_tool(
        &self,
        app: &AppRef,
        name: &str,
        args: Map<String, Value>,
        allowed: bool,
    ) -> BoxFuture<'static, Result<Value, String>>;
    /// Sends the app's server `resources/read`, `resources/list` or `resources/templates/list`.
    fn resources(
        &self,
        app: &AppRef,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, String>>;
    /// Asks the user everything in `asks` in one dialog, one answer for all; `Deny` when nobody
    /// can be asked or nobody answered in time.
    fn ask(&self, app: &AppRef, asks: Vec<Ask>) -> BoxFuture<'static, Grant>;
    /// Whether the user said "always" to `ask` (its [`Ask::grant_key`]) for this server's
    /// apps before.
    fn granted_always(&self, server: &str, ask: &Ask) -> bool;
    /// Whether the approval gate will ask the user before the app's call of `name` (then the
    /// call is an [`Ask::Gated`], not an [`Ask::Tools`]: never asked about twice).
    fn approval_asks(&self, app: &AppRef, name: &str) -> bool;
    /// The text reaches the conversation, labelled as coming from the app.
    fn to_conversation(&self, app: &AppRef, kind: ToConversation, text: String);
    /// Writes the app's log message (`notifications/message`'s params) to its server's log.
    fn log(&self, app: &AppRef, params: &Value);
    /// Opens a checked link in the user's browser; why not, if it could not.
    fn open_link(&self, url: &pi_mcp_connection::clean::Link) -> Result<(), String>;
    /// The app session ended (its tab closed, it asked, or the session ended).
    fn ended(&self, app: &AppRef);
}
