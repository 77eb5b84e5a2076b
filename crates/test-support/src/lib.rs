//! What the workspace's Rust tests share: where the MCP test server (the connection crate's
//! `mcp-test-server`) was built, and the reliability matrix's rows they record ([`report`]).

pub mod report;

use std::path::PathBuf;

/// The test server cargo built beside the running test (`target/<profile>/mcp-test-server`):
/// `cargo test --workspace --all-targets` builds it with the connection crate's tests.
pub fn test_server() -> String {
    let exe = std::env::current_exe().expect("the running test's path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .expect("a test runs from target/<profile>/deps");
    let server = dir.join(format!("mcp-test-server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        server.is_file(),
        "{} is not built: run the tests with `cargo test --workspace --all-targets`",
        server.display()
    );
    server.to_string_lossy().into_owned()
}
