//! pi-mcp-native: the MCP gateway core for the Pi coding agent.

pub mod adapter;
mod atomic_file;
pub mod bounded_read;
pub mod cache;
pub mod catalog;
pub mod config;
pub mod elicitation;
pub mod events;
pub mod oauth;
pub mod output_guard;
pub mod path_component;
pub mod pool;
pub mod render;
pub mod search;
pub mod secret;
pub mod server_log;
#[cfg(test)]
mod test_report;
pub mod validate;

pub mod binding;
