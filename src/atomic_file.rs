//! Files we create: private to the user (0600, directories 0700), and replaced so that readers
//! see the old or the new content, never half of it.

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

/// Opens (creating it 0600 if needed) a file that every write appends to (`O_APPEND`).
pub fn open_append_private(path: &Path) -> io::Result<fs::File> {
    private_options().create(true).append(true).open(path)
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
