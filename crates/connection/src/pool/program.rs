//! Finding a server's program on its own `PATH` before the spawn, as execvp(3) would in the child.
//! Rust's `Command` uses posix_spawn (a vfork-style clone) only while it does not have to search
//! a `PATH` that differs from ours; a bare `node` or `npx` with an explicit environment sends it
//! to fork + exec instead, and fork copies the page tables of Pi's whole process (a large V8 heap)
//! on the cold call's path. A program given as a path needs no search.

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
    std::env::split_paths(std::ffi::OsStr::new(&path.1))
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

/// The error the spawn would give before the program runs, checked ahead of a spawn through the
/// helper (whose own failure to start it comes too late to be told apart from an exit): a
/// working directory that does not exist, a path that does not exist or cannot be executed, or a
/// name not on the server's `PATH`. `program` is `command` as [`resolve`] found it, or `command`.
#[cfg(unix)]
pub fn check(
    command: &str,
    program: &Path,
    env: &[(String, String)],
    cwd: &Path,
) -> std::io::Result<()> {
    use std::io::ErrorKind;
    use std::os::unix::fs::PermissionsExt;
    if !cwd.is_dir() {
        return Err(ErrorKind::NotFound.into());
    }
    if command.contains('/') || program.is_absolute() {
        let meta = std::fs::metadata(cwd.join(program))?;
        if meta.is_dir() || meta.permissions().mode() & 0o111 == 0 {
            return Err(ErrorKind::PermissionDenied.into());
        }
        return Ok(());
    }
    // A name `resolve` searched the server's PATH for and did not find.
    let searched = env.iter().any(|(k, _)| k == "PATH") && cwd.is_absolute();
    if searched {
        Err(ErrorKind::NotFound.into())
    } else {
        Ok(())
    }
}

#[cfg(not(unix))]
pub fn check(
    _command: &str,
    _program: &Path,
    _env: &[(String, String)],
    _cwd: &Path,
) -> std::io::Result<()> {
    Ok(())
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
    fn check_gives_the_errors_execvp_would() {
        use std::io::ErrorKind;
        let dir = TempDir::new("check");
        file(&dir.path().join("run"), 0o755);
        file(&dir.path().join("plain"), 0o644);
        let kind = |command: &str, env: &[(String, String)]| {
            check(command, Path::new(command), env, dir.path())
                .err()
                .map(|e| e.kind())
        };
        let path = env("/bin:/usr/bin");
        assert_eq!(kind("./run", &path), None);
        assert_eq!(kind("./plain", &path), Some(ErrorKind::PermissionDenied));
        assert_eq!(kind("./none", &path), Some(ErrorKind::NotFound));
        assert_eq!(
            kind("no-such-program-xyz", &path),
            Some(ErrorKind::NotFound)
        );
        assert_eq!(
            kind("no-such-program-xyz", &[]),
            None,
            "no PATH: execvp's own default"
        );
        let dir_path = dir.path().display().to_string();
        assert_eq!(kind(&dir_path, &path), Some(ErrorKind::PermissionDenied));
        let gone = dir.path().join("gone");
        let in_gone = check("./run", Path::new("./run"), &path, &gone);
        assert_eq!(in_gone.unwrap_err().kind(), ErrorKind::NotFound);
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
