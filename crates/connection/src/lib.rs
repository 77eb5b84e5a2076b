//! The connection layer of pi-mcp-native: reaching MCP servers and keeping them honest. No Node,
//! no search, no OAuth (a remote transport asks the core for credentials only through
//! [`pool::Credentials`]).
//!
//! - [`pool`]: connections. Processes in their own groups (on Linux under the helper executable's
//!   subreaper), remote transports (Streamable HTTP, legacy SSE; the `remote` feature), rmcp
//!   sessions, listing and requests, the client side (roots, elicitation, sampling, logs)
//!   answered through a host; `pool::shared` is a session's side of the broker.
//! - [`broker`]: the per-user broker of shared servers (the helper's `broker` subcommand): a pool
//!   of its own serving sessions over a Unix socket.
//! - [`elicitation`]: the forms a server asks to fill; [`family_approval`]: a use asked about in
//!   a family's UI, as the broker relays it.
//! - Leaves: [`secret`] (secrets kept out of every text), [`server_log`] (`mcp.log`), [`trace`]
//!   (metadata of MCP traffic), [`bounded_read`] (files read with a cap), [`clean`] (the one rule
//!   for text a server supplies, before a person sees it; URLs fit to open), [`helper`] (where the
//!   helper executable is, and its subcommands' command lines), `atomic_file` (private files
//!   written whole), `log_file` (log files rotated by size), `value_kind` (what a JSON value is,
//!   for messages that must not show it), `unix_time`, `english` (lists in prose), [`tracing_log`]
//!   (what the gateway itself says, through `tracing`, into `mcp.log`).

pub mod atomic_file;
pub mod bounded_read;
pub mod broker;
pub mod clean;
pub mod elicitation;
pub mod english;
pub mod family_approval;
pub mod helper;
mod log_file;
pub mod pool;
pub mod secret;
pub mod server_log;
pub mod trace;
pub mod tracing_log;
pub mod unix_time;
pub mod value_kind;
