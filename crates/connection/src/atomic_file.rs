//! Files we create: private to the user (0600, directories 0700), and replaced so that readers
//! see the old or the new content, never half of it. Lock and log files, opened in place, are
//! never opened through a link (a planted one would have us write or create its target) and
//! must be regular files.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Writes `bytes` to a temp file beside `path` (unique per process and call), then renames it.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let unique = format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let tmp = sibling(path, &unique);
    let written = (|| {
        let mut file = private_options().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Opens (creating it 0600 if needed) a file that is kept as it is, e.g. a lock file.
pub fn open_private(path: &Path) -> io::Result<fs::File> {
    private_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Opens (creating it 0600 if needed) a lock file of ours: a regular file, never through a link.
pub fn open_lock(path: &Path) -> io::Result<fs::File> {
    let opened = own_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path);
    regular(path, opened)
}

/// Opens (creating it 0600 if needed) a file that every write appends to (`O_APPEND`): a
/// regular file, never through a link.
pub fn open_append_private(path: &Path) -> io::Result<fs::File> {
    let opened = own_options().create(true).append(true).open(path);
    regular(path, opened)
}

/// Options for a file only we write: the last component is not followed when it is a link (on
/// Windows the link itself is opened, which [`regular`] then refuses), and a FIFO without a
/// reader does not make `open` wait.
fn own_options() -> fs::OpenOptions {
    let mut options = private_options();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, FILE_FLAG_OPEN_REPARSE_POINT);
    options
}

/// CreateFileW's flag that opens a symbolic link or junction itself instead of its target.
#[cfg(windows)]
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// The file `opened` at `path` if it is a regular one; else an error naming it and saying what
/// it is (a link refused by `O_NOFOLLOW`, a FIFO without a reader, a directory).
fn regular(path: &Path, opened: io::Result<fs::File>) -> io::Result<fs::File> {
    match opened {
        Ok(file) => match not_regular(&file.metadata()?) {
            Some(kind) => Err(refused(path, kind)),
            None => Ok(file),
        },
        Err(e) => Err(unwritable(path).unwrap_or_else(|| {
            io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display()))
        })),
    }
}

/// Why nothing of ours may be written at `path`: something other than a regular file is there.
pub fn unwritable(path: &Path) -> Option<io::Error> {
    let meta = fs::symlink_metadata(path).ok()?;
    not_regular(&meta).map(|kind| refused(path, kind))
}

fn refused(path: &Path, kind: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {kind}, not a regular file; nothing is written there: remove it",
            path.display()
        ),
    )
}

/// What a file that is not a regular one is, in words.
pub fn not_regular(meta: &fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    if kind.is_symlink() {
        return Some("a symbolic link");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

/// Creates `dir` and its missing parents as 0700 (existing ones are left as they are).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn private_options() -> fs::OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut, reason = "only Unix sets a mode"))]
    let mut options = fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// `path` with `suffix` appended to its file name.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_and_dirs_are_private() {
        let base = std::env::temp_dir().join(format!("pi-mcp-atomic-{}", std::process::id()));
        let dir = base.join("a").join("b");
        create_private_dir(&dir).unwrap();
        let file = dir.join("f.json");
        write(&file, b"{}").unwrap();
        write(&dir.join("f.bak"), b"{}").unwrap();
        open_private(&dir.join("f.lock")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&base.join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        for name in ["f.json", "f.bak", "f.lock"] {
            assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
        }
        fs::remove_dir_all(&base).unwrap();
    }
}
