//! pi-mcp-native: the MCP gateway core for the Pi coding agent.

pub mod catalog;
pub mod pool;
