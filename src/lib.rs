//! pi-mcp-native: the MCP gateway core for the Pi coding agent.
//!
//! # Layout
//!
//! Three layers; each module uses only those below it (and its own submodules):
//!
//! `binding` → `adapter` → {`apps`, `oauth`, `pool`, `config`, `render`, `search`, `cache`,
//! `validate`} →
//! {`catalog`, `secret`, `atomic_file`, `sorted_lines`, `value_kind`, `token_estimate`, `clean`}.
//!
//! - [`binding`]: the napi surface. Converts between JS and the core's types, nothing else.
//! - [`adapter`]: the gateway's centre. The server registry (one record per configured server; the
//!   tool catalog is derived from it), the one way to reach a server, the modes of the `mcp` tool,
//!   start-up, the health loop and shutdown. Everything the extension and the CLI ask goes here.
//! - [`pool`]: connections. Processes in their own groups (on Linux under the helper executable's
//!   subreaper), remote transports (Streamable HTTP, legacy SSE), rmcp sessions, listing and
//!   requests, the client side (roots, elicitation, sampling, logs) answered through a host.
//! - [`oauth`]: OAuth 2.1 for remote servers (Pi's token store, discovery, sign-in, refresh);
//!   the pool's transports ask it for credentials only through `pool::Credentials`.
//! - [`broker`]: the per-user broker of shared servers (the helper's `broker` subcommand): a pool
//!   of its own serving sessions over a Unix socket; the session's side is `pool::shared`.
//! - [`config`]: the config files and what they say (discovery, JSONC, merge with provenance,
//!   imports of other tools' files, interpolation, trust), never failing: problems are diagnostics.
//! - [`apps`]: MCP Apps (`io.modelcontextprotocol/ui`): a tool's interface and who may call it.
//! - [`render`]: every text the model or a person reads. [`search`]: ranking tools.
//!   [`cache`]: the metadata cache file shared with pi-mcp-adapter. [`validate`]: arguments
//!   against input schemas. Beside them: [`elicitation`] (forms), [`approval`] (what asks
//!   before it runs, session grants, the dialog, a family member's questions), [`server_log`]
//!   (`mcp.log`),
//!   [`output_guard`] (huge texts), [`trace`] (`trace`: metadata of MCP traffic),
//!   [`bounded_read`] (files read with a cap),
//!   [`path_component`] (names made safe as paths), [`helper`] (where the helper executable
//!   `src/bin/helper` is, and its subcommands' command lines).
//! - [`catalog`] (tool names and lookup), [`secret`] (secrets kept out of every text),
//!   [`loopback`] (what a listener on 127.0.0.1 needs: tokens, requests read with bounds),
//!   `atomic_file` (private files written whole), `log_file` (log files rotated by size),
//!   `sorted_lines` (tables compiled in, searched in place), `value_kind` (what a JSON value is,
//!   for messages that must not show it), `token_estimate` (what a text costs a model, without a
//!   tokenizer) and [`clean`] (the one rule for text a server supplies, before a person sees it;
//!   URLs fit to open): leaves.
//! - [`events`]: what happened to servers, for whoever embeds the core.

pub mod adapter;
pub mod approval;
pub mod apps;
mod atomic_file;
pub mod bounded_read;
pub mod broker;
mod browser;
pub mod cache;
pub mod catalog;
pub mod clean;
pub mod config;
pub mod elicitation;
pub mod events;
pub mod helper;
mod log_file;
pub mod loopback;
pub mod oauth;
pub mod output_guard;
pub mod path_component;
pub mod pool;
pub mod prompts;
pub mod render;
pub mod resources;
pub mod sampling;
pub mod search;
pub mod secret;
pub mod server_log;
mod sorted_lines;
#[cfg(test)]
mod test_report;
mod token_estimate;
pub mod trace;
mod unix_time;
pub mod validate;
mod value_kind;

pub mod binding;
