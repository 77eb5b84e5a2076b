//! The helper executable stdio servers start through on Linux (`pi-mcp-native-helper supervise`,
//! src/bin/helper): a child subreaper that stops every process a server started with it, also
//! those that left its process group (`setsid`, Node's `detached: true`), which a signal to the
//! group misses. The loader tells us where it is (next to the addon); without it servers start
//! directly, as on macOS and Windows.

use parking_lot::RwLock;
use std::path::PathBuf;
use std::sync::Once;

static HELPER: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Where the helper is (called once the addon is loaded).
pub fn set_helper(path: PathBuf) {
    *HELPER.write() = Some(path);
}

/// The helper to start servers through, if this platform uses one and it is there.
pub fn helper() -> Option<PathBuf> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let path = HELPER.read().clone()?;
    if path.is_file() {
        return Some(path);
    }
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        eprintln!(
            "pi-mcp-native: the helper {} is missing; processes a server detaches from its \
             process group may outlive it (rebuild with `npm run build`)",
            path.display()
        );
    });
    None
}
