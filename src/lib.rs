//! pi-mcp-native's Node-API addon: the binding of the core (`pi_mcp_core`) to JavaScript. It
//! converts between JS and the core's types, nothing else; the layers beneath are crates of the
//! workspace (see the README's "Layout").

pub mod binding;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod relocation_table;
