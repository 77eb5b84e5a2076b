//! Reading a file we found on disk: a config, an import, an env file, the cache, a token file.
//! Any of these can be a symlink to `/dev/zero`, a FIFO or a directory (git carries symlinks, so
//! a cloned repository can hold one), and they are read while Pi loads the extension: a read that
//! blocks or never ends would freeze Pi. So a found file is opened without blocking, must be a
//! regular file (checked on the opened descriptor, so nothing can swap it in between), and is
//! read up to a size cap. A file the user names explicitly (`--config <(…)`, `/dev/stdin`) may be
//! a pipe: it is read with the cap and a time limit.

use crate::atomic_file::not_regular;
use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::time::Duration;

const MIB: u64 = 1024 * 1024;

/// The caps on what we read. Defaults for real use; `McpAdapter.open` options lower them in tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimits {
    /// Config files, imported configs and Pi's `trust.json`.
    pub config_bytes: u64,
    /// The metadata cache and the npx/uvx resolution memo.
    pub cache_bytes: u64,
    /// `envFile` dotenv files.
    pub env_file_bytes: u64,
    /// OAuth token files.
    pub token_file_bytes: u64,
    /// How long a pipe named explicitly may take to reach its end.
    pub pipe_timeout: Duration,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            config_bytes: 8 * MIB,
            cache_bytes: 64 * MIB,
            env_file_bytes: MIB,
            token_file_bytes: MIB,
            pipe_timeout: Duration::from_secs(5),
        }
    }
}

/// Why a file was not read. Its `Display` is a predicate to follow the file's name or role:
/// "… is a FIFO (named pipe), not a regular file".
#[derive(Debug)]
pub enum ReadError {
    Missing,
    NotRegular(&'static str),
    TooLarge {
        limit: u64,
        size: Option<u64>,
    },
    /// A pipe given explicitly did not reach its end in time.
    TimedOut(Duration),
    Io(io::Error),
}

impl ReadError {
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Missing)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing => f.write_str("does not exist"),
            ReadError::NotRegular(kind) => write!(f, "is {kind}, not a regular file"),
            ReadError::TooLarge {
                limit,
                size: Some(size),
            } => {
                let unit = Unit::of(*limit);
                let (size, limit) = (unit.show(*size), unit.show(*limit));
                write!(f, "is {size}, over the {limit} limit")
            }
            ReadError::TooLarge { limit, size: None } => {
                write!(f, "is over the {} limit", Unit::of(*limit).show(*limit))
            }
            ReadError::TimedOut(limit) => write!(
                f,
                "did not reach its end within {} s (a pipe nobody finishes writing?)",
                limit.as_secs_f32()
            ),
            ReadError::Io(e) => write!(f, "cannot be read ({e})"),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => ReadError::Missing,
            _ => ReadError::Io(e),
        }
    }
}

/// The unit a limit is stated in; a size over it is shown in the same one.
struct Unit(u64, &'static str);

impl Unit {
    fn of(limit: u64) -> Unit {
        match limit {
            l if l >= MIB => Unit(MIB, "MiB"),
            l if l >= 1024 => Unit(1024, "KiB"),
            _ => Unit(1, "bytes"),
        }
    }

    fn show(&self, bytes: u64) -> String {
        let Unit(size, name) = *self;
        if bytes.is_multiple_of(size) {
            format!("{} {name}", bytes / size)
        } else {
            format!("{:.1} {name}", bytes as f64 / size as f64)
        }
    }
}

/// Opens a file we found, if it is a regular file (after following links).
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let (file, meta) = open(path)?;
    match not_regular(&meta) {
        Some(kind) => Err(ReadError::NotRegular(kind)),
        None => Ok(file),
    }
}

/// The bytes of a regular file we found, at most `limit` of them.
pub fn found(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    read_capped(file, limit)
}

/// The bytes of a file the user named: a regular file as [`found`], or a pipe or terminal read
/// until its end, at most `limit` bytes and for at most `timeout`.
pub fn given(path: &Path, limit: u64, timeout: Duration) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open(path)?;
    match not_regular(&meta) {
        None => read_capped(file, limit),
        Some(kind) if meta.is_dir() => Err(ReadError::NotRegular(kind)),
        Some(_) => read_stream(file, limit, timeout),
    }
}

/// Opens for reading without blocking (a FIFO without a writer would block `open` itself), and
/// without making a terminal our controlling one.
fn open(path: &Path) -> Result<(File, Metadata), ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        // Windows refuses to open a directory for reading.
        Err(_) if cfg!(windows) && path.is_dir() => {
            return Err(ReadError::NotRegular("a directory"))
        }
        Err(e) => return Err(e.into()),
    };
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// Reads to the end, failing once more than `limit` bytes came (a file can grow while we read).
fn read_capped(file: File, limit: u64) -> Result<Vec<u8>, ReadError> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > limit {
        return Err(ReadError::TooLarge {
            limit,
            size: Some(size),
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, size: None });
    }
    Ok(bytes)
}

/// Reads a pipe or terminal opened without blocking: waits for data with poll(2) until the
/// writer is done, the cap is passed or the time is up.
#[cfg(unix)]
fn read_stream(mut file: File, limit: u64, timeout: Duration) -> Result<Vec<u8>, ReadError> {
    use std::os::fd::AsRawFd;
    use std::time::Instant;
    let deadline = Instant::now() + timeout;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::TimedOut(timeout));
        }
        let mut poll = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: `poll` points at one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, ms) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(ReadError::Io(e));
        }
        if ready == 0 {
            continue; // the deadline check above ends it
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > limit {
                    return Err(ReadError::TooLarge { limit, size: None });
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
}

#[cfg(not(unix))]
fn read_stream(file: File, limit: u64, _timeout: Duration) -> Result<Vec<u8>, ReadError> {
    read_capped(file, limit)
}

#[cfg(test)]
#[cfg(unix)]
mod tests;
