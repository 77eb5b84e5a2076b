//! MCP Apps (the `io.modelcontextprotocol/ui` extension): what a tool's `_meta.ui` says about
//! its user interface and who may call it. See `docs/design/mcp-apps.md` for the whole design
//! (the host page on loopback, the app's own origin, the bridge, consent).

pub mod meta;

pub use meta::{resource_uri, Visibility};
