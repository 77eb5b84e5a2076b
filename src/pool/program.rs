//! Finding a server's program on its own `PATH` before the spawn, as execvp(3) would in the child.
//! Rust's `Command` uses posix_spawn (a vfork-style clone) only while it does not have to search
//! a `PATH` that differs from ours; a bare `node` or `npx` with an explicit environment sends it
//! to fork + exec instead, and fork copies the page tables of Pi's whole process (a large V8 heap)
//! on the cold call's path. A program given as a path needs no search.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where execvp would find `command` with the environment `env` and working directory `cwd`, as
/// an absolute path; `None` leaves the search to the spawn (a path, no `PATH` in `env`, nothing
/// found there so that the spawn reports the error as before, or a relative working directory).
#[cfg(unix)]
pub fn resolve(command: &str, env: &[(String, String)], cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if command.is_empty() || command.contains('/') {
        return None;
    }
    let path = env.iter().rev().find(|(k, _)| k == "PATH")?;
    std::env::split_paths(OsStr::new(&path.1))
        .map(|dir| cwd.join(dir).join(command)) // an empty entry is the working directory
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .filter(|found| found.is_absolute())
}

#[cfg(not(unix))]
pub fn resolve(_command: &str, _env: &[(String, String)], _cwd: &Path) -> Option<PathBuf> {
    None
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(path: &Path, mode: u32) {
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A private directory, removed at the end of the test.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir =
                std::env::temp_dir().join(format!("pi-mcp-program-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn env(path: &str) -> Vec<(String, String)> {
        vec![
            ("HOME".to_string(), "/h".to_string()),
            ("PATH".to_string(), path.to_string()),
        ]
    }

    #[test]
    fn finds_the_first_executable_on_the_servers_path() {
        let dir = TempDir::new("first");
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).unwrap();
        }
        file(&a.join("srv"), 0o644); // not executable: skipped, as execvp does
        std::fs::create_dir(b.join("srv")).unwrap(); // a directory: skipped
        file(&c.join("srv"), 0o755);
        let path = format!("{}:{}:{}", a.display(), b.display(), c.display());
        assert_eq!(
            resolve("srv", &env(&path), Path::new("/")),
            Some(c.join("srv"))
        );
    }

    #[test]
    fn relative_entries_are_relative_to_the_servers_working_directory() {
        let dir = TempDir::new("relative");
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        file(&dir.path().join("bin").join("srv"), 0o755);
        file(&dir.path().join("here"), 0o755);
        assert_eq!(
            resolve("srv", &env("bin"), dir.path()),
            Some(dir.path().join("bin").join("srv"))
        );
        assert_eq!(
            resolve("here", &env("/nowhere::"), dir.path()),
            Some(dir.path().join("here"))
        );
    }

    #[test]
    fn leaves_paths_unknown_programs_and_a_missing_path_to_the_spawn() {
        assert_eq!(resolve("./srv", &env("/bin"), Path::new("/")), None);
        assert_eq!(resolve("/bin/sh", &env("/bin"), Path::new("/")), None);
        assert_eq!(
            resolve("no-such-program-xyz", &env("/bin:/usr/bin"), Path::new("/")),
            None
        );
        assert_eq!(resolve("sh", &[], Path::new("/")), None);
    }
}
