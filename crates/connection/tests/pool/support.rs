//! What the pool tests share: specs for the cargo-built test server, request options, listing
//! bounds that keep everything.

use pi_mcp_connection::pool::{
    ClientFeatures, ConnectSpec, ListBounds, Protocol, RequestOptions, StdioSpec, TransportSpec,
};
use std::path::PathBuf;
use std::time::Duration;

/// The MCP test server cargo built for these tests.
pub use pi_mcp_test_support::test_server;

/// The test server over stdio with these scenario arguments, as server `name`.
pub fn stdio_server(name: &str, args: &[&str], client: ClientFeatures) -> ConnectSpec {
    ConnectSpec {
        server: name.into(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: test_server(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: std::env::vars().collect(),
            cwd: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        }),
        protocol: Protocol::Initialize,
        timeout: Duration::from_secs(30),
        debug: false,
        client,
        keeper: None,
    }
}

pub fn stdio(spec: &mut ConnectSpec) -> &mut StdioSpec {
    match &mut spec.transport {
        TransportSpec::Stdio(stdio) => stdio,
        _ => unreachable!("a stdio spec"),
    }
}

/// Listing bounds that keep everything a test server lists.
pub fn bounds(timeout: Duration) -> ListBounds {
    ListBounds {
        timeout,
        items: usize::MAX,
        bytes: usize::MAX,
    }
}

pub fn opts(timeout: Duration) -> RequestOptions {
    RequestOptions::new(timeout)
}
