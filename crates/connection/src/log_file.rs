//! Log files we append to (`mcp.log`, the broker's log): private, and rotated to `<name>.1`
//! before a write that would take them past their size, so a file holds at most that much and
//! the one before it the previous that much. Whoever shares a file with other processes holds
//! a lock across [`LogFile::append`] (see `server_log`).

use crate::atomic_file::{self, sibling};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Past this size a log file is rotated before the next write: `mcp.log` as Pi 1.5's built-in
/// MCP has it, and the broker's log the same.
pub const ROTATE_BYTES: u64 = 5 * 1024 * 1024;

pub struct LogFile {
    path: PathBuf,
    limit: u64,
}

impl LogFile {
    pub fn new(path: PathBuf, limit: u64) -> LogFile {
        LogFile { path, limit }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `pieces`, each whole in one file: before a piece that would take the file past
    /// its limit, the file is moved to `<name>.1` (replacing the one there) and a new one begun.
    /// Errors name the file.
    pub fn append<'a>(&self, pieces: impl IntoIterator<Item = &'a [u8]>) -> io::Result<()> {
        let named = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.path.display()),
            )
        };
        let mut file = atomic_file::open_append_private(&self.path)?;
        let mut size = file.metadata().map_err(named)?.len();
        let mut ready = Vec::new();
        for piece in pieces {
            let len = piece.len() as u64;
            if size > 0 && size + len > self.limit {
                file.write_all(&ready).map_err(named)?;
                ready.clear();
                drop(file); // Windows renames no open file
                fs::rename(&self.path, sibling(&self.path, ".1")).map_err(named)?;
                file = atomic_file::open_append_private(&self.path)?;
                size = 0;
            }
            ready.extend_from_slice(piece);
            size += len;
        }
        file.write_all(&ready).map_err(named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_that_does_not_fit_starts_a_new_file() {
        let dir = std::env::temp_dir().join(format!("pi-mcp-log-file-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let log = LogFile::new(dir.join("x.log"), 10);
        let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap();
        log.append([&b"12345\n"[..], b"abc\n"]).unwrap();
        assert_eq!(read("x.log"), "12345\nabc\n", "exactly full");
        log.append([&b"longer than 10\n"[..], b"next\n"]).unwrap();
        assert_eq!(
            read("x.log.1"),
            "longer than 10\n",
            "a piece over the limit alone"
        );
        assert_eq!(read("x.log"), "next\n");
        log.append([&b"last\n"[..]]).unwrap();
        assert_eq!(read("x.log"), "next\nlast\n");
        fs::remove_dir_all(&dir).unwrap();
    }
}
