//! The helper executable shipped next to the addon (`pi-mcp-native-helper-<platform>`, built from
//! `src/bin/helper`, whose header is its command-line contract): where it is, and the command
//! lines of its subcommands as the core starts them. The loader tells us where it is by absolute
//! path (runtimes such as the Bun-compiled Pi have no usable `process.execPath` for this).
//!
//! - `supervise` (Linux): stdio servers start through it, a child subreaper that stops every
//!   process a server started with it, also those that left its process group (`setsid`, Node's
//!   `detached: true`), which a signal to the group misses. Without the helper, servers start
//!   directly, as on macOS and Windows.

use parking_lot::RwLock;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Once;
use tokio::process::Command;

static PATH: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Where the helper is (the loader calls this once the addon is loaded).
pub fn set_path(path: PathBuf) {
    *PATH.write() = Some(path);
}

/// The helper, on any platform, once the loader has said where it is and if it is there.
pub fn path() -> Option<PathBuf> {
    PATH.read().clone().filter(|path| path.is_file())
}

/// `<helper> supervise <cwd> <program> <argv0>`, to which the caller adds the server's arguments:
/// runs `program` in `cwd` with `argv0` as its `argv[0]`, the helper itself in `/` (it keeps no
/// directory busy). `None` where servers start directly: not on Linux, or the helper is missing
/// (said once on stderr).
pub fn supervise(cwd: &Path, program: &Path, argv0: &OsStr) -> Option<Command> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let Some(helper) = path() else {
        warn_missing();
        return None;
    };
    let mut cmd = Command::new(helper);
    cmd.arg("supervise")
        .arg(cwd)
        .arg(program)
        .arg(argv0)
        .current_dir("/");
    Some(cmd)
}

fn warn_missing() {
    let Some(expected) = PATH.read().clone() else {
        return; // not loaded through the loader (Rust tests): nothing was promised
    };
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        tracing::warn!(
            "the helper {} is missing; processes a server detaches from its process group may \
             outlive it (rebuild with `npm run build`)",
            expected.display()
        );
    });
}
