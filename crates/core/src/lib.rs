//! The core of pi-mcp-native, over the connection layer (`pi_mcp_connection`): what a session's
//! config says, OAuth, the tool catalog and its search, every text the model or a person reads,
//! and the adapter that the binding (the addon's root crate) and the CLI ask.
//!
//! - [`adapter`]: the gateway's centre. The server registry (one record per configured server; the
//!   tool catalog is derived from it), the one way to reach a server, the modes of the `mcp` tool,
//!   start-up, the health loop and shutdown.
//! - [`oauth`]: OAuth 2.1 for remote servers (Pi's token store, discovery, sign-in, refresh);
//!   the connection layer's transports ask it for credentials only through
//!   `pi_mcp_connection::pool::Credentials`.
//! - [`config`]: the config files and what they say (discovery, JSONC, merge with provenance,
//!   imports of other tools' files, interpolation, trust), never failing: problems are diagnostics.
//! - [`apps`]: MCP Apps (`io.modelcontextprotocol/ui`): a tool's interface and who may call it.
//! - [`render`]: every text the model or a person reads. [`search`]: ranking tools.
//!   [`cache`]: the metadata cache file shared with pi-mcp-adapter. [`validate`]: arguments
//!   against input schemas. Beside them: [`approval`] (what asks before it runs, session grants,
//!   the dialog, a family member's questions), [`output_guard`] (huge texts), [`prompts`],
//!   [`resources`], [`sampling`], [`path_component`] (names made safe as paths), [`loopback`]
//!   (what a listener on 127.0.0.1 needs: tokens, requests read with bounds), [`catalog`] (tool
//!   names and lookup), `sorted_lines` (tables compiled in, searched in place), `token_estimate`
//!   (what a text costs a model, without a tokenizer).
//! - [`events`]: what happened to servers, for whoever embeds the core.

pub mod adapter;
pub mod approval;
pub mod apps;
mod browser;
pub mod cache;
pub mod catalog;
pub mod config;
pub mod events;
pub mod loopback;
mod named_enum;
pub mod oauth;
pub mod output_guard;
pub mod path_component;
pub mod prompts;
pub mod render;
pub mod resources;
pub mod sampling;
pub mod search;
mod sorted_lines;
mod token_estimate;
pub mod validate;
