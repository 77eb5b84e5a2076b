//! `pi-mcp-native-helper`: the small native executable shipped next to the addon in every platform
//! package (`pi-mcp-native-helper-<platform>`, found by the loader, reached through
//! `pi_mcp_connection::helper`). One binary for every job that needs a process of its own:
//!
//! ```text
//! pi-mcp-native-helper <subcommand> [arguments…]
//! ```
//!
//! The first argument names the subcommand, which owns all the others. Without one, or with one
//! that is not known, the usage goes to stderr and the exit code is 2; `help` prints it on stdout
//! (exit 0). A subcommand that cannot run on this platform says so on stderr, exit code 2.
//! Subcommands:
//!
//! - `supervise <cwd> <program> <argv0> [args…]` (Linux): runs the stdio server `program` in
//!   `cwd` with `argv0` as its `argv[0]`, `args` and the helper's own environment, stdin, stdout
//!   and stderr; stops every process the server started with it, including those that left its
//!   process group, when the server ends or the helper gets SIGTERM, SIGINT or SIGHUP; exits as
//!   the server did (127/126 when it cannot be started). See `supervise.rs`.
//! - `broker --dir <dir> --stem <stem> --agent-dir <dir> [--foreground]`: the per-user broker
//!   that runs shared stdio servers for every session (`pi_mcp_connection::broker`). Without
//!   `--foreground` it detaches (a session of its own), and the process that was started prints
//!   `ready` (listening), `busy` (another broker holds the place) or exits 1 with why on stderr.
//!
//! A new subcommand is one arm in [`main`] and one line in [`USAGE`]. `supervise` uses nothing of
//! the addon (no Node, no async runtime) and starts in about a millisecond; `broker` runs the
//! core's pool on a runtime of its own.

#[cfg(target_os = "linux")]
mod supervise;

use std::ffi::OsString;
use std::process::ExitCode;

const USAGE: &str = "usage: pi-mcp-native-helper <subcommand> [arguments…]
subcommands:
  supervise <cwd> <program> <argv0> [args…]   run a stdio server and stop everything it starts (Linux)
  broker --dir <dir> --stem <stem> --agent-dir <dir> [--foreground]
                                              the per-user broker of shared servers
  help                                        this text";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next().as_deref().and_then(|a| a.to_str()) {
        Some("supervise") => supervise(args.collect()),
        Some("broker") => pi_mcp_connection::broker::main(args.collect()),
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => usage_error(),
    }
}

fn usage_error() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

#[cfg(target_os = "linux")]
fn supervise(args: Vec<OsString>) -> ExitCode {
    let mut args = args.into_iter();
    let (Some(cwd), Some(program), Some(argv0)) = (args.next(), args.next(), args.next()) else {
        return usage_error();
    };
    let server = supervise::Server {
        cwd: cwd.into(),
        program,
        argv0,
        args: args.collect(),
    };
    supervise::run(&server)
}

#[cfg(not(target_os = "linux"))]
fn supervise(_args: Vec<OsString>) -> ExitCode {
    eprintln!("pi-mcp-native-helper: `supervise` needs Linux (a child subreaper)");
    ExitCode::from(2)
}
