//! The helper executable: its command-line dispatch, and `supervise` (Linux): the server's exit
//! status and argv[0] pass through, and no process the server started outlives it, even one that
//! left its process group and session.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn supervise_in(cwd: &str, script: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_pi-mcp-native-helper"))
        .args(["supervise", cwd, "/bin/sh", "server", "-c", script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn supervise(script: &str) -> Child {
    supervise_in("/", script)
}

/// The next line the server printed (e.g. the pid of what it started).
fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    // One byte at a time: nothing is read ahead of the line.
    let mut byte = [0u8];
    while std::io::Read::read(child.stdout.as_mut().unwrap(), &mut byte).unwrap() == 1 {
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0] as char);
    }
    line.trim().to_string()
}

/// Running and not a zombie.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        state != Some("Z")
    })
}

fn gone_soon(pid: &str) {
    let until = Instant::now() + Duration::from_secs(3);
    while alive(pid) {
        assert!(Instant::now() < until, "{pid} survived");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A detached process (its own session and process group), as `detached: true` starts one.
const DETACHED: &str = "setsid sleep 300 & echo $!";

fn helper(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pi-mcp-native-helper"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_first_argument_names_the_subcommand() {
    let help = helper(&["help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("supervise <cwd> <program> <argv0>"));
    for wrong in [&[][..], &["no-such-subcommand"], &["supervise", "/"]] {
        let out = helper(wrong);
        assert_eq!(out.status.code(), Some(2), "{wrong:?}");
        assert!(String::from_utf8_lossy(&out.stderr)
            .starts_with("usage: pi-mcp-native-helper <subcommand>"));
    }
}

#[test]
fn exit_status_and_argv0_pass_through() {
    let mut child = supervise("echo $0; exit 7");
    assert_eq!(first_line(&mut child), "server");
    assert_eq!(child.wait().unwrap().code(), Some(7));
    let mut child = supervise("kill -9 $$");
    assert_eq!(child.wait().unwrap().signal(), Some(9));
    let missing = helper(&["supervise", "/", "/no/such/server", "x"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot start `x`"));
}

#[test]
fn the_server_runs_in_its_directory_and_dies_with_the_helper() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let mut child = supervise_in(dir.to_str().unwrap(), "echo $$; pwd; exec sleep 300");
    let (server, pwd) = (first_line(&mut child), first_line(&mut child));
    assert_eq!(pwd, dir.display().to_string());
    child.kill().unwrap(); // SIGKILL: no clean-up runs, the server gets SIGKILL from the kernel
    child.wait().unwrap();
    gone_soon(&server);
}

#[test]
fn a_detached_descendant_ends_when_the_server_exits() {
    let mut child = supervise(&format!("{DETACHED}; exit 3"));
    let detached = first_line(&mut child);
    assert_eq!(child.wait().unwrap().code(), Some(3));
    gone_soon(&detached);
}

#[test]
fn a_descendant_orphaned_by_a_crash_ends_too() {
    // The middle process exits at once: the detached sleep is re-parented before the crash.
    let mut child = supervise("sh -c 'setsid sleep 300 & echo $!'; sleep 0.2; kill -SEGV $$");
    let detached = first_line(&mut child);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGSEGV));
    gone_soon(&detached);
}

/// The server ignores SIGTERM, the process it detached does not; `stop` signals the helper.
fn a_stop_ends_the_whole_tree_within_the_grace(stop: impl Fn(i32)) {
    let mut child = supervise(&format!(
        "trap '' TERM; {DETACHED}; while :; do sleep 1; done"
    ));
    let detached = first_line(&mut child);
    assert!(alive(&detached));
    let started = Instant::now();
    stop(child.id() as i32);
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        status.signal(),
        Some(libc::SIGKILL),
        "the server ignored SIGTERM"
    );
    gone_soon(&detached);
}

#[test]
fn a_stop_signal_ends_the_whole_tree_within_the_grace() {
    // SAFETY: kill(2) of the helper we started.
    a_stop_ends_the_whole_tree_within_the_grace(|pid| unsafe {
        libc::kill(pid, libc::SIGTERM);
    });
}

/// A signal sent to a process is delivered to any of its threads that does not block it, and
/// the helper has threads besides its main one (the linked library starts a runtime's): one
/// other than the main one gets SIGTERM here, as the kernel may choose it.
#[test]
fn a_stop_signal_reaching_any_thread_of_the_helper_is_a_stop() {
    a_stop_ends_the_whole_tree_within_the_grace(|pid| {
        let threads: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .filter_map(|t| t.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        let other = threads.iter().find(|&&t| t != pid).copied();
        // SAFETY: tgkill(2) of a thread of the helper we started.
        unsafe { libc::syscall(libc::SYS_tgkill, pid, other.unwrap_or(pid), libc::SIGTERM) };
    });
}

/// The product's path: `process::spawn` starts the server through the helper, and a normal stop
/// (`stop_group`) also ends the process the server detached.
#[tokio::test]
async fn a_stopped_server_takes_its_detached_descendants_along() {
    use pi_mcp_connection::{helper, pool::process};
    use tokio::io::AsyncBufReadExt;
    helper::set_path(env!("CARGO_BIN_EXE_pi-mcp-native-helper").into());
    let spec = process::StdioSpec {
        command: "sh".into(),
        args: vec!["-c".into(), format!("{DETACHED}; echo $0; cat")],
        env: std::env::vars().collect(),
        cwd: std::env::temp_dir(),
    };
    let spawned = process::spawn(&spec).unwrap();
    let mut lines = tokio::io::BufReader::new(spawned.stdout).lines();
    let detached = lines.next_line().await.unwrap().unwrap();
    assert_eq!(
        lines.next_line().await.unwrap().unwrap(),
        "sh",
        "argv[0] as configured"
    );
    assert!(alive(&detached));
    let helper_cwd = std::fs::read_link(format!("/proc/{}/cwd", spawned.pid)).unwrap();
    assert_eq!(
        helper_cwd,
        std::path::Path::new("/"),
        "the helper keeps no directory busy"
    );
    drop(spawned.stdin); // `cat` ends: the server exits, as on a normal stop
    process::stop_group(spawned.pid, spawned.exit, Duration::from_millis(200)).await;
    gone_soon(&detached);
}
