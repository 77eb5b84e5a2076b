//! Spawning a stdio server in its own process group (a Job Object on Windows) and taking the
//! whole group down again: wrapper launchers (`npx`, `sh -c`) leave grandchildren that a signal
//! to the direct child misses. On Linux the server starts through the helper's `supervise` (see
//! [`helper`](crate::helper)), which leads the group and also stops what left it.

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{watch, Notify};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    /// The server's whole environment (nothing else is inherited).
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

pub struct Spawned {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
    pub pid: u32,
    pub exit: ExitWatch,
}

/// The server's exit status once it has exited (filled by a task that waits on the child), and
/// a way to have that task kill it.
#[derive(Clone)]
pub struct ExitWatch {
    status: watch::Receiver<Option<Exit>>,
    kill: Arc<Notify>,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Exit {
    /// Exit code 0.
    pub success: bool,
    /// E.g. "exited with code 1", "was killed by signal 9".
    pub text: String,
}

impl ExitWatch {
    /// How it ended, in words.
    pub fn get(&self) -> Option<String> {
        self.status().map(|exit| exit.text)
    }

    pub fn status(&self) -> Option<Exit> {
        self.status.borrow().clone()
    }

    /// Waits up to `limit` for the exit; true if it exited.
    pub async fn wait(&mut self, limit: Duration) -> bool {
        tokio::time::timeout(limit, self.status.wait_for(Option::is_some))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Kills the server (on Windows, its whole Job Object).
    pub fn kill(&self) {
        self.kill.notify_one();
    }
}

pub fn spawn(spec: &StdioSpec) -> io::Result<Spawned> {
    let program = super::program::resolve(&spec.command, &spec.env, &spec.cwd);
    let program = program.unwrap_or_else(|| PathBuf::from(&spec.command));
    let mut cmd = match crate::helper::supervise(&spec.cwd, &program, spec.command.as_ref()) {
        Some(cmd) => {
            // The helper's own failure to start the program would come too late to tell apart.
            super::program::check(&spec.command, &program, &spec.env, &spec.cwd)?;
            cmd
        }
        None => {
            let mut cmd = Command::new(program);
            #[cfg(unix)]
            cmd.arg0(&spec.command); // as configured, as a PATH search would leave it
            cmd.current_dir(&spec.cwd);
            cmd
        }
    };
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)));
    let mut wrapped = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    {
        use windows::Win32::System::Threading::CREATE_NO_WINDOW;
        wrapped.wrap(process_wrap::tokio::CreationFlags(CREATE_NO_WINDOW));
        wrapped.wrap(process_wrap::tokio::JobObject);
        wrapped.wrap(process_wrap::tokio::KillOnDrop);
    }
    let mut child = wrapped.spawn()?;
    let pid = child.id().unwrap_or_default();
    super::watchdog::watch(pid);
    let pipes = (
        child.stdin().take(),
        child.stdout().take(),
        child.stderr().take(),
    );
    let exit = watch_exit(child);
    let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
        exit.kill();
        return Err(io::Error::other(
            "the server's stdio pipes could not be opened",
        ));
    };
    Ok(Spawned {
        stdin,
        stdout,
        stderr,
        pid,
        exit,
    })
}

fn watch_exit(mut child: Box<dyn ChildWrapper>) -> ExitWatch {
    let (tx, status) = watch::channel(None);
    let kill = Arc::new(Notify::new());
    let killed = kill.clone();
    tokio::spawn(async move {
        let exited = tokio::select! {
            status = child.wait() => Some(status),
            _ = killed.notified() => None,
        };
        let status = match exited {
            Some(status) => status,
            None => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        let _ = tx.send(Some(match status {
            Ok(status) => Exit {
                success: status.success(),
                text: describe_exit(status),
            },
            Err(e) => Exit {
                success: false,
                text: format!("could not be waited for ({e})"),
            },
        }));
    });
    ExitWatch { status, kill }
}

fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "exited".to_string(),
    }
}

/// Brings a server down after its stdin was closed: waits `grace` for it to exit by itself, then
/// SIGTERMs its process group, and SIGKILLs whatever of the group is left after another `grace`
/// (at least [`KILL_AFTER`]). The group is signalled even when the leader exited by itself, for
/// orphaned grandchildren. (On Windows the server is killed after `grace`; its Job Object takes
/// the rest along.)
pub async fn stop_group(pid: u32, mut exit: ExitWatch, grace: Duration) {
    let exited = exit.wait(grace).await;
    if cfg!(not(unix)) {
        if !exited {
            exit.kill();
            exit.wait(grace).await;
        }
        return;
    }
    signal_group(pid, Signal::Term);
    if !exited {
        exit.wait(grace).await;
    }
    // A std thread, so the final SIGKILL happens even if the runtime is shutting down.
    std::thread::spawn(move || {
        std::thread::sleep(grace.max(KILL_AFTER));
        signal_group(pid, Signal::Kill);
        super::watchdog::forget(pid);
    });
}

/// The least time between the SIGTERM and the SIGKILL of a group: the helper, which leads it on
/// Linux, needs up to half a second to stop what left the group (SIGKILL would end it first).
const KILL_AFTER: Duration = Duration::from_secs(1);

#[derive(Clone, Copy)]
pub enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
pub fn signal_group(pid: u32, signal: Signal) {
    let Ok(pgid) = i32::try_from(pid) else { return };
    if pgid <= 1 {
        return;
    }
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a negative pid signals the process group we created at spawn;
    // it has no memory-safety preconditions.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

#[cfg(not(unix))]
pub fn signal_group(_pid: u32, _signal: Signal) {}

/// Running and not a zombie (an orphan may wait a while to be reaped by init); Linux only.
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stop_group_kills_grandchildren() {
        let spec = StdioSpec {
            command: "sh".into(),
            args: vec!["-c".into(), "sleep 300 & echo $!; wait".into()],
            env: std::env::vars().collect(),
            cwd: std::env::temp_dir(),
        };
        let spawned = spawn(&spec).unwrap();
        let mut out = tokio::io::BufReader::new(spawned.stdout);
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
            .await
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(alive(grandchild));
        drop(spawned.stdin);
        stop_group(
            spawned.pid,
            spawned.exit.clone(),
            Duration::from_millis(200),
        )
        .await;
        let mut exit = spawned.exit;
        assert!(exit.wait(Duration::from_secs(2)).await);
        for _ in 0..50 {
            if !alive(grandchild) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("grandchild {grandchild} survived");
    }

    #[cfg(unix)]
    async fn first_line(spec: &StdioSpec) -> String {
        let spawned = spawn(spec).unwrap();
        let mut out = tokio::io::BufReader::new(spawned.stdout);
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
            .await
            .unwrap();
        line.trim().to_string()
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn runs_the_program_on_the_servers_own_path_under_its_configured_name() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("pi-mcp-spawn-path-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("pi-mcp-test-server");
        std::fs::write(&program, "#!/bin/sh\necho \"found $1\"\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let spec = |command: &str, args: &[&str]| StdioSpec {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: vec![("PATH".into(), format!("{}:/usr/bin:/bin", dir.display()))],
            cwd: std::env::temp_dir(),
        };
        let found = first_line(&spec("pi-mcp-test-server", &["x"])).await;
        let arg0 = first_line(&spec("sh", &["-c", "echo $0"])).await;
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found, "found x");
        assert_eq!(arg0, "sh");
    }

    #[tokio::test]
    async fn reports_missing_command() {
        let spec = StdioSpec {
            command: "definitely-not-a-command-xyz".into(),
            args: vec![],
            env: std::env::vars().collect(),
            cwd: std::env::temp_dir(),
        };
        assert_eq!(spawn(&spec).err().unwrap().kind(), io::ErrorKind::NotFound);
    }
}
