use super::*;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Instant;

/// A private directory, removed at the end of the test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("pi-mcp-read-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_found_file_must_be_regular_and_small_enough() {
    let dir = TempDir::new("found");
    let file = dir.0.join("mcp.json");
    std::fs::write(&file, b"{\"a\":1}").unwrap();
    assert_eq!(found(&file, 100).unwrap(), b"{\"a\":1}");
    let err = found(&file, 4).unwrap_err();
    assert_eq!(err.to_string(), "is 7 bytes, over the 4 bytes limit");

    let zero = dir.0.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let started = Instant::now();
    let err = found(&zero, 1 << 20).unwrap_err();
    assert_eq!(err.to_string(), "is a character device, not a regular file");
    assert!(started.elapsed() < Duration::from_secs(1));

    let fifo = dir.fifo("fifo.json");
    let err = found(&fifo, 1 << 20).unwrap_err();
    assert_eq!(
        err.to_string(),
        "is a FIFO (named pipe), not a regular file"
    );
    assert!(started.elapsed() < Duration::from_secs(1), "a FIFO blocked");

    let err = found(&dir.0, 1 << 20).unwrap_err();
    assert_eq!(err.to_string(), "is a directory, not a regular file");
    assert!(found(&dir.0.join("none"), 10).unwrap_err().is_missing());
    let dangling = dir.0.join("dangling.json");
    std::os::unix::fs::symlink(dir.0.join("none"), &dangling).unwrap();
    assert!(found(&dangling, 10).unwrap_err().is_missing());
}

#[test]
fn a_given_pipe_is_read_to_its_end_within_the_cap_and_the_time() {
    let dir = TempDir::new("given");
    let fifo = dir.fifo("config.json");
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            pipe.write_all(b"{\"mcpServers\":").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            pipe.write_all(b"{}}").unwrap();
        })
    };
    let read = given(&fifo, 1 << 20, Duration::from_secs(5)).unwrap();
    writer.join().unwrap();
    assert_eq!(read, b"{\"mcpServers\":{}}");

    // Nobody writes: the time limit ends it.
    let started = Instant::now();
    let err = given(&fifo, 1 << 20, Duration::from_millis(200)).unwrap_err();
    assert!(matches!(err, ReadError::TimedOut(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));

    // An endless device: the cap ends it.
    let err = given(Path::new("/dev/zero"), 1 << 20, Duration::from_secs(5)).unwrap_err();
    assert_eq!(err.to_string(), "is over the 1 MiB limit");
    let err = given(&dir.0, 1 << 20, Duration::from_secs(5)).unwrap_err();
    assert_eq!(err.to_string(), "is a directory, not a regular file");
}
