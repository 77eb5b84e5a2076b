//! `supervise`: runs a stdio server as our child and stops every process it started when it ends
//! or when we are told to stop. We are a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process
//! orphaned below us is re-parented to us instead of to init, so the whole tree the server
//! started, detached processes (`setsid`, Node's `detached: true`) included, stays below us,
//! where /proc finds it.
//!
//! - The server exits, or crashes: what it left running gets SIGTERM, and SIGKILL after [`GRACE`];
//!   then we exit as the server did (its exit code, or its signal raised on ourselves).
//! - SIGTERM, SIGINT or SIGHUP (a stop signals our process group; so does the watchdog when Pi
//!   died): the same for the whole tree, the server included, well before the SIGKILL that
//!   follows such a signal (1 s later at the earliest).
//!
//! The server gets our stdio (its pipes to Pi); we keep no copy once it runs, so its output ends
//! when it, and what it started, close it. It runs in its own working directory, we in `/` (we
//! keep no directory busy, and tests find a server's processes by their working directory). If
//! we are killed outright, the server gets SIGKILL too (`PR_SET_PDEATHSIG`), so its pipes close.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long the processes below us get after SIGTERM, before SIGKILL.
const GRACE: Duration = Duration::from_millis(500);
/// How long we try at most to end them all (a process in uninterruptible sleep dies late).
const GIVE_UP: Duration = Duration::from_secs(5);
const STOP_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The server to run, as the addon asks for it.
pub struct Server {
    pub cwd: PathBuf,
    pub program: OsString,
    pub argv0: OsString,
    pub args: Vec<OsString>,
}

pub fn run(server: &Server) -> ExitCode {
    // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER takes one integer argument.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        let e = std::io::Error::last_os_error();
        eprintln!("pi-mcp-native-helper: cannot become a child subreaper ({e})");
    }
    let signals = Signals::install();
    // SAFETY: getpid(2) cannot fail.
    let me = unsafe { libc::getpid() };
    let mut command = Command::new(&server.program);
    command
        .arg0(&server.argv0)
        .args(&server.args)
        .current_dir(&server.cwd);
    // SAFETY: runs in the forked child before exec and only makes async-signal-safe calls.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != me {
                libc::_exit(1); // we died before the line above took effect
            }
            Ok(())
        });
    }
    // The server starts with our handlers reset by exec(2) and the signal mask `Command` clears.
    let server_pid = match command.spawn() {
        Ok(child) => child.id() as i32, // reaped below, like every other process
        Err(e) => {
            let name = server.argv0.to_string_lossy();
            eprintln!("pi-mcp-native-helper: cannot start `{name}`: {e}");
            return ExitCode::from(if e.kind() == ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    release_stdio();
    let mut tree = Tree::new(server_pid);
    loop {
        let stop = signals
            .wait(Duration::from_millis(250))
            .is_some_and(|signal| STOP_SIGNALS.contains(&signal));
        tree.reap();
        if stop || tree.server_status.is_some() {
            break;
        }
    }
    tree.end(&signals);
    match tree.server_status {
        Some(status) => exit_like(ExitStatus::from_raw(status)),
        None => ExitCode::from(1),
    }
}

/// The processes below us, and how the server ended once it has.
struct Tree {
    server: i32,
    server_status: Option<i32>,
}

impl Tree {
    fn new(server: i32) -> Tree {
        Tree {
            server,
            server_status: None,
        }
    }

    /// Collects every child of ours that has ended (the server, or an orphan re-parented to us).
    fn reap(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) writes the status into a local.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            if pid == self.server {
                self.server_status = Some(status);
            }
        }
    }

    /// SIGTERM to every process below us, SIGKILL to what is left after [`GRACE`] (and to what
    /// appears after that); returns once none is left and the server has been collected.
    fn end(&mut self, signals: &Signals) {
        let started = Instant::now();
        let mut killing = false;
        signal_all(&living_below(), libc::SIGTERM);
        loop {
            self.reap();
            let left = living_below();
            if left.is_empty() && self.server_status.is_some() {
                return;
            }
            if started.elapsed() > GIVE_UP {
                return;
            }
            if killing || started.elapsed() >= GRACE {
                killing = true;
                signal_all(&left, libc::SIGKILL);
            }
            signals.wait(Duration::from_millis(10));
        }
    }
}

fn signal_all(pids: &[i32], signal: i32) {
    for &pid in pids {
        // SAFETY: kill(2) of a process found below us; no memory is involved.
        unsafe { libc::kill(pid, signal) };
    }
}

/// The processes below us that have not ended (zombies are left to `reap` and their parents).
fn living_below() -> Vec<i32> {
    // SAFETY: getpid(2) cannot fail.
    let me = unsafe { libc::getpid() };
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut zombies = HashSet::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // gone meanwhile
        };
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
        let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let (Some(state), Some(ppid)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let Ok(ppid) = ppid.parse() {
            children.entry(ppid).or_default().push(pid);
        }
        if state == "Z" {
            zombies.insert(pid);
        }
    }
    let mut below = vec![];
    let mut next = vec![me];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
            next.push(child);
            if !zombies.contains(&child) {
                below.push(child);
            }
        }
    }
    below
}

/// Points our stdin, stdout and stderr at /dev/null: the server's pipes are the server's.
fn release_stdio() {
    let null = c"/dev/null";
    // SAFETY: open(2) of a constant path; dup2(2)/close(2) of descriptors we own.
    unsafe {
        let fd = libc::open(null.as_ptr(), libc::O_RDWR);
        if fd < 0 {
            return;
        }
        for std in 0..=2 {
            libc::dup2(fd, std);
        }
        if fd > 2 {
            libc::close(fd);
        }
    }
}

/// Exits as the server did: with its code, or killed by its signal.
fn exit_like(status: ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(code as u8);
    }
    let Some(signal) = status.signal() else {
        return ExitCode::from(1);
    };
    // SAFETY: plain calls on our own process: no core file, the signal's default action
    // restored, then raised.
    unsafe {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    ExitCode::from(128u8.wrapping_add(signal as u8)) // a signal that does not end a process
}

/// The signals we wait for instead of being ended by them. The process is not single-threaded
/// (the library this binary links starts a runtime's threads before `main`), and a signal sent
/// to the process may reach any thread that does not block it, so a mask on our thread would
/// not hold: each signal gets a handler, in every thread, that writes its number into a pipe
/// (the self-pipe trick), and we wait on that pipe. Handlers do not survive `exec`, so the
/// server starts with default dispositions.
struct Signals {
    read: i32,
}

/// The pipe's write end, for the handler (a handler can reach only globals).
static WRITE_END: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the byte is a local. A full pipe drops the byte,
    // which is harmless: a wake-up is already pending.
    unsafe {
        libc::write(
            WRITE_END.load(Ordering::Relaxed),
            (&raw const byte).cast(),
            1,
        )
    };
}

impl Signals {
    fn install() -> Signals {
        let mut fds = [-1; 2];
        // SAFETY: pipe2(2) writes two descriptors into the local array; sigaction(2) installs a
        // handler that only calls write(2).
        unsafe {
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
                let e = std::io::Error::last_os_error();
                eprintln!("pi-mcp-native-helper: cannot make a pipe for signals ({e})");
            }
            WRITE_END.store(fds[1], Ordering::Relaxed);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
        Signals { read: fds[0] }
    }

    /// The next of our signals to arrive within `limit`.
    fn wait(&self, limit: Duration) -> Option<i32> {
        let mut poll = libc::pollfd {
            fd: self.read,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut byte = 0u8;
        // SAFETY: poll(2) and read(2) on our own pipe, into locals.
        let read = unsafe {
            libc::poll(&mut poll, 1, limit.as_millis().min(i32::MAX as u128) as i32);
            libc::read(self.read, (&raw mut byte).cast(), 1)
        };
        (read == 1).then_some(i32::from(byte))
    }
}
