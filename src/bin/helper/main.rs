//! `pi-mcp-native-helper`: the small native executable shipped next to the addon in every platform
//! package. One binary, one subcommand per job, so that helpers to come (a per-user server broker)
//! live here too:
//!
//! - `supervise <cwd> <program> <argv0> [args…]` (Linux): runs one stdio server (in `cwd`) as its
//!   child and stops every process the server started with it, including those that left its
//!   process group.
//!
//! It depends on nothing of the addon (no Node, no runtime): it starts in about a millisecond.

#[cfg(target_os = "linux")]
mod supervise;

use std::ffi::OsString;
use std::process::ExitCode;

const USAGE: &str = "usage: pi-mcp-native-helper supervise <cwd> <program> <argv0> [args…]";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next().as_deref().and_then(|a| a.to_str()) {
        Some("supervise") => supervise(args.collect()),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(target_os = "linux")]
fn supervise(args: Vec<OsString>) -> ExitCode {
    let mut args = args.into_iter();
    let (Some(cwd), Some(program), Some(argv0)) = (args.next(), args.next(), args.next()) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
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
