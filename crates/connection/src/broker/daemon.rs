//! `pi-mcp-native-helper broker --dir <dir> --stem <stem> --agent-dir <dir> [--foreground]`:
//! runs the broker detached from whoever started it. On Unix the process forks; the child starts
//! a session of its own (no terminal, no signals meant for Pi's process group), takes the place's
//! lock (one broker per place; a stale socket is then safe to replace), listens, and tells the
//! parent, which prints `ready` (or `busy` when another broker holds the place) and exits, so the
//! session that started it knows when to connect. On Windows the process is started detached and
//! prints the same word itself. The broker's own log is `<dir>/<stem>.log` (see `own_log`).

use super::{Broker, Listener, Options};
use crate::pool::shared::place::Place;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
#[cfg(unix)]
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: pi-mcp-native-helper broker --dir <dir> --stem <stem> --agent-dir <dir> [--foreground]";
/// How long a broker waits for the place's lock (one that is exiting releases it soon).
#[cfg(unix)]
const LOCK_WAIT: Duration = Duration::from_secs(3);

struct Args {
    place: Place,
    agent_dir: PathBuf,
    /// Unix only: a Windows broker is started detached by the session that needs it.
    #[cfg_attr(not(unix), allow(dead_code, reason = "read on Unix only"))]
    foreground: bool,
}

impl Args {
    fn parse(args: Vec<OsString>) -> Option<Args> {
        let (mut dir, mut stem, mut agent_dir, mut foreground) = (None, None, None, false);
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.to_str()? {
                "--dir" => dir = Some(PathBuf::from(args.next()?)),
                "--stem" => stem = Some(args.next()?.into_string().ok()?),
                "--agent-dir" => agent_dir = Some(PathBuf::from(args.next()?)),
                "--foreground" => foreground = true,
                _ => return None,
            }
        }
        Some(Args {
            place: Place::from_parts(dir?, stem?),
            agent_dir: agent_dir?,
            foreground,
        })
    }
}

/// The helper's `broker` subcommand.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let Some(args) = Args::parse(args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // The broker's servers start through this same executable's `supervise`, as a session's do.
    if let Ok(exe) = std::env::current_exe() {
        crate::helper::set_path(exe);
    }
    if let Err(why) = args.place.prepare() {
        eprintln!("{why}");
        return ExitCode::FAILURE;
    }
    #[cfg(unix)]
    if !args.foreground {
        return detach(args);
    }
    ExitCode::from(run(args, Ready::Stdout))
}

/// Where the broker says it listens (or cannot).
enum Ready {
    Stdout,
    /// The pipe to the parent that detached it.
    #[cfg(unix)]
    Parent(std::fs::File),
}

impl Ready {
    fn say(self, word: &str) {
        match self {
            Ready::Stdout => {
                println!("{word}");
                let _ = std::io::stdout().flush();
            }
            #[cfg(unix)]
            Ready::Parent(mut pipe) => {
                let _ = writeln!(pipe, "{word}");
            }
        }
    }

    fn fail(self, why: &str) {
        eprintln!("{why}");
        self.say(&format!("error {why}"));
    }
}

/// Runs the broker until it stops; the exit code.
fn run(args: Args, ready: Ready) -> u8 {
    let Args {
        place, agent_dir, ..
    } = args;
    let _lock = match Lock::take(&place) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            ready.say("busy");
            return 0;
        }
        Err(why) => {
            ready.fail(&why);
            return 1;
        }
    };
    // The broker's stderr is its own log (see `note`).
    crate::tracing_log::write_to_stderr();
    super::memory::keep_big_allocations_mapped();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            ready.fail(&format!("cannot start the runtime: {e}"));
            return 1;
        }
    };
    runtime.block_on(async move {
        let listener = match Listener::bind(&place) {
            Ok(listener) => listener,
            Err(e) if cfg!(windows) && e.kind() == std::io::ErrorKind::PermissionDenied => {
                ready.say("busy"); // the pipe's first instance is another broker's
                return 0;
            }
            Err(e) => {
                ready.fail(&format!("cannot listen on {}: {e}", place.endpoint()));
                return 1;
            }
        };
        ready.say("ready");
        let broker = Broker::new(place, agent_dir, Options::from_env());
        broker.serve(listener).await;
        0
    })
}

/// The place's lock, held for as long as the broker runs (released when the process ends, even
/// by SIGKILL).
struct Lock {
    _held: Option<std::fs::File>,
}

impl Lock {
    /// `None` when another broker holds it beyond [`LOCK_WAIT`].
    #[cfg(unix)]
    fn take(place: &Place) -> Result<Option<Lock>, String> {
        let until = Instant::now() + LOCK_WAIT;
        loop {
            if let Some(file) = place.try_lock()? {
                return Ok(Some(Lock { _held: Some(file) }));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// On Windows the pipe's first instance is the lock.
    #[cfg(not(unix))]
    fn take(_: &Place) -> Result<Option<Lock>, String> {
        Ok(Some(Lock { _held: None }))
    }
}

/// Forks: the child becomes the broker, the parent relays its readiness and exits.
#[cfg(unix)]
fn detach(args: Args) -> ExitCode {
    use std::io::{BufRead, BufReader};
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills the two descriptors, which are then owned by the two files.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        eprintln!("cannot create a pipe: {}", std::io::Error::last_os_error());
        return ExitCode::FAILURE;
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (read, write) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    let log = args.place.log();
    // SAFETY: the helper has started no thread yet, so the child is a complete copy.
    match unsafe { libc::fork() } {
        -1 => {
            eprintln!("cannot fork: {}", std::io::Error::last_os_error());
            ExitCode::FAILURE
        }
        0 => {
            drop(read);
            let ready = Ready::Parent(write);
            let log = match become_daemon(&log) {
                Ok(log) => log,
                Err(why) => {
                    ready.say(&format!("error {why}"));
                    std::process::exit(1)
                }
            };
            let code = run(args, ready);
            log.finish();
            std::process::exit(code.into())
        }
        _ => {
            drop(write);
            let mut line = String::new();
            let _ = BufReader::new(read).read_line(&mut line);
            match line.trim() {
                word @ ("ready" | "busy") => {
                    println!("{word}");
                    ExitCode::SUCCESS
                }
                said => {
                    match said.strip_prefix("error ") {
                        Some(why) => eprintln!("{why}"),
                        None => eprintln!(
                            "the broker exited before it listened; see {}",
                            log.display()
                        ),
                    }
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// A session of its own, `/` as its directory, files private, stdin from /dev/null and its
/// output to its log; `Err` when the log cannot be kept (a link or a FIFO in its place).
#[cfg(unix)]
fn become_daemon(log: &std::path::Path) -> Result<super::own_log::OwnLog, String> {
    use std::os::fd::AsRawFd;
    let output = super::own_log::OwnLog::start(log)?;
    let null = std::fs::File::open("/dev/null");
    // SAFETY: setsid, umask and dup2 on descriptors this process owns; the log's thread is the
    // only other one, and uses neither.
    unsafe {
        libc::setsid();
        libc::umask(0o077);
        if let Ok(null) = &null {
            libc::dup2(null.as_raw_fd(), 0);
        }
    }
    let _ = std::env::set_current_dir("/");
    Ok(output)
}
