//! The last line of defence against orphans. When Pi dies without shutting down (SIGKILL, a
//! crash), a parent-death signal would reach only each server's direct child, not what wrapper
//! launchers (`npx`, `sh -c`) started. So a tiny watchdog runs beside us, in its own session,
//! holding the read end of a pipe whose write end only we hold. We tell it which process groups
//! are live; when the pipe reaches EOF (we are gone), it kills every group it still knows.
//! One watchdog serves every adapter of the process. The adapter starts it in the background
//! before any server is needed (`start_in_background`), otherwise the first server starts it.

use parking_lot::Mutex;
use std::io::{self, Write};
use std::process::{Child, ChildStdin};
use std::sync::LazyLock;

static SHARED: LazyLock<Option<Watchdog>> = LazyLock::new(|| match Watchdog::start() {
    Ok(watchdog) => Some(watchdog),
    Err(e) => {
        if cfg!(unix) {
            tracing::warn!("no watchdog ({e}); servers may outlive a killed Pi");
        }
        None
    }
});

/// Starts the watchdog on a thread of its own, off the path of the first server's spawn.
pub fn start_in_background() {
    std::thread::spawn(|| LazyLock::force(&SHARED));
}

/// Registers a server's process group with the process's watchdog.
pub fn watch(pgid: u32) {
    if let Some(watchdog) = SHARED.as_ref() {
        watchdog.watch(pgid);
    }
}

/// Has the watchdog remove `file` (a family's socket) once this process is gone.
pub fn remove_at_exit(file: &std::path::Path) {
    if let Some(watchdog) = SHARED.as_ref() {
        watchdog.remove_at_exit(file);
    }
}

/// Unregisters a process group that has been stopped.
pub fn forget(pgid: u32) {
    if let Some(watchdog) = SHARED.as_ref() {
        watchdog.forget(pgid);
    }
}

/// A POSIX shell loop: `+<pgid>` adds a group, `-<pgid>` removes it, `@<path>` names a file; on
/// EOF the files are removed, and every group gets SIGTERM, and SIGKILL a second later.
#[cfg(unix)]
const SCRIPT: &str = r#"groups=" "
files=""
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups${line#+} " ;;
    -*) kept=" "; for g in $groups; do [ "$g" = "${line#-}" ] || kept="$kept$g "; done; groups=$kept ;;
    @*) files="$files${line#@}
" ;;
  esac
done
printf '%s' "$files" | while IFS= read -r f; do rm -f -- "$f"; done
[ "$groups" = " " ] && exit 0
for g in $groups; do kill -TERM -"$g" 2>/dev/null; done
sleep 1
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done"#;

pub struct Watchdog {
    state: Mutex<Option<(Child, ChildStdin)>>,
}

impl Watchdog {
    /// Starts the watchdog process; `Err` where there is none (it is then simply absent).
    #[cfg(unix)]
    pub fn start() -> io::Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        // A process group of its own keeps signals to Pi's group (Ctrl-C, a kill of the whole
        // group) away from the watchdog. Unlike a `pre_exec` hook (e.g. for setsid), it lets
        // `Command` use posix_spawn instead of forking Pi's large process.
        use std::process::{Command, Stdio};
        let mut child = Command::new("/bin/sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no pipe to the watchdog"))?;
        Ok(Watchdog {
            state: Mutex::new(Some((child, stdin))),
        })
    }

    /// Windows servers live in Job Objects that die with us; no watchdog is needed.
    #[cfg(not(unix))]
    pub fn start() -> io::Result<Watchdog> {
        Err(io::Error::other("not needed on this platform"))
    }

    /// The group led by `pgid` must die with us.
    pub fn watch(&self, pgid: u32) {
        self.send(&format!("+{pgid}\n"));
    }

    /// The group led by `pgid` is gone.
    pub fn forget(&self, pgid: u32) {
        self.send(&format!("-{pgid}\n"));
    }

    /// `file` must go with us.
    pub fn remove_at_exit(&self, file: &std::path::Path) {
        self.send(&format!("@{}\n", file.display()));
    }

    fn send(&self, line: &str) {
        let mut state = self.state.lock();
        if let Some((_, stdin)) = state.as_mut() {
            if stdin.write_all(line.as_bytes()).is_err() {
                *state = None; // the watchdog died; nothing more to tell it
            }
        }
    }
}

impl Drop for Watchdog {
    /// Closing the pipe ends the watchdog (after it kills what we still had registered);
    /// a thread reaps it.
    fn drop(&mut self) {
        if let Some((mut child, stdin)) = self.state.lock().take() {
            drop(stdin);
            std::thread::spawn(move || child.wait());
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Whether any process of the group is still running (zombies do not count).
    fn group_alive(pgid: i32) -> bool {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|entry| {
                let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
                let fields: Vec<&str> = stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
            })
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let until = Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn spawn_group() -> std::process::Child {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("sh")
            .args(["-c", "sleep 300 & sleep 300"])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn kills_watched_groups_and_removes_files_when_we_go_away() {
        let (mut watched, mut forgotten) = (spawn_group(), spawn_group());
        let pgid = watched.id() as i32;
        assert!(group_alive(pgid));
        let watchdog = Watchdog::start().unwrap();
        watchdog.watch(watched.id());
        watchdog.watch(forgotten.id());
        watchdog.forget(forgotten.id());
        let file =
            std::env::temp_dir().join(format!("pi-mcp-watchdog {}.sock", std::process::id()));
        std::fs::write(&file, "").unwrap();
        watchdog.remove_at_exit(&file);
        drop(watchdog);
        wait_until("the file to be removed", || !file.exists());
        let _ = watched.try_wait(); // reaps the leader once it is dead
        wait_until("the watched group to die", || {
            let _ = watched.try_wait();
            !group_alive(pgid)
        });
        assert!(
            group_alive(forgotten.id() as i32),
            "a forgotten group must be left alone"
        );
        let _ = forgotten.kill();
        let _ = forgotten.wait();
        // SAFETY: plain kill(2) of the test's own process groups.
        unsafe {
            libc::kill(-(forgotten.id() as i32), libc::SIGKILL);
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = watched.wait();
    }
}
