//! The lock Pi takes on its credential files: proper-lockfile's protocol, so Pi and we exclude
//! each other. The lock is a directory `<target>.lock` made with `mkdir` (atomic everywhere);
//! its holder touches its mtime while it holds it, and a lock whose mtime is older than the
//! stale time belongs to a process that died: it is removed and taken.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

#[derive(Clone, Copy, Debug)]
pub struct LockOptions {
    /// A lock untouched for this long is abandoned (proper-lockfile's `stale`).
    pub stale: Duration,
    /// How long to wait for a live holder before giving up.
    pub wait: Duration,
    /// Pause between attempts.
    pub retry: Duration,
}

/// `<agentDir>/mcp-auth.json`: Pi locks it with proper-lockfile's defaults (stale 10 s) and
/// gives up after about 200 ms, so it is only ever held for a read-modify-write.
pub const STORE: LockOptions = LockOptions {
    stale: Duration::from_secs(10),
    wait: Duration::from_secs(11),
    retry: Duration::from_millis(20),
};

/// Pi's per-server refresh lock (`mcp-auth-refresh-<hash>`): held across the token request.
pub const REFRESH: LockOptions = LockOptions {
    stale: Duration::from_secs(20),
    wait: Duration::from_secs(25),
    retry: Duration::from_millis(100),
};

#[derive(Debug)]
pub enum LockError {
    /// A live holder kept it for the whole wait.
    Busy(PathBuf),
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy(path) => write!(
                f,
                "{} is held by another process (Pi or pi-mcp) for too long",
                path.display()
            ),
            LockError::Io(path, e) => write!(f, "cannot lock {}: {e}", path.display()),
        }
    }
}

/// A held lock; dropping it removes the lock directory.
pub struct Lock {
    dir: PathBuf,
    keeper: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Lock {
    fn drop(&mut self) {
        if let Some(keeper) = self.keeper.take() {
            keeper.abort();
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The lock directory of `target`.
pub fn lock_dir(target: &Path) -> PathBuf {
    pi_mcp_connection::atomic_file::sibling(target, ".lock")
}

/// What one attempt found.
enum Attempt {
    Taken,
    Held,
}

fn attempt(dir: &Path, stale: Duration) -> Result<Attempt, LockError> {
    let io_error = |e| LockError::Io(dir.to_path_buf(), e);
    match make_dir(dir) {
        Ok(()) => return Ok(Attempt::Taken),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_error(e)),
    }
    let modified = match std::fs::metadata(dir).and_then(|m| m.modified()) {
        Ok(modified) => modified,
        // Released between our mkdir and stat: try again at once.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return make_dir(dir).map(|()| Attempt::Taken).or(Ok(Attempt::Held))
        }
        Err(e) => return Err(io_error(e)),
    };
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or_default();
    if age <= stale {
        return Ok(Attempt::Held);
    }
    // Abandoned: take it over, as proper-lockfile does (one removal, one new mkdir).
    match std::fs::remove_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(e)),
    }
    match make_dir(dir) {
        Ok(()) => Ok(Attempt::Taken),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Attempt::Held),
        Err(e) => Err(io_error(e)),
    }
}

fn make_dir(dir: &Path) -> io::Result<()> {
    #[cfg_attr(not(unix), allow(unused_mut, reason = "only Unix sets a mode"))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Takes the lock of `target`, blocking the thread while another process holds it. For short
/// critical sections (no touch-keeping).
pub fn acquire_blocking(target: &Path, options: LockOptions) -> Result<Lock, LockError> {
    let dir = lock_dir(target);
    let deadline = Instant::now() + options.wait;
    loop {
        if let Attempt::Taken = attempt(&dir, options.stale)? {
            return Ok(Lock { dir, keeper: None });
        }
        if Instant::now() >= deadline {
            return Err(LockError::Busy(dir));
        }
        std::thread::sleep(options.retry);
    }
}

/// Takes the lock of `target`, waiting asynchronously; while held, its mtime is refreshed every
/// half stale time so that other processes do not take it over.
pub async fn acquire(target: &Path, options: LockOptions) -> Result<Lock, LockError> {
    let dir = lock_dir(target);
    let deadline = Instant::now() + options.wait;
    loop {
        let (probe, stale) = (dir.clone(), options.stale);
        let attempted = tokio::task::spawn_blocking(move || attempt(&probe, stale))
            .await
            .map_err(|e| LockError::Io(dir.clone(), io::Error::other(e)))??;
        if let Attempt::Taken = attempted {
            let keeper = tokio::spawn(keep_fresh(dir.clone(), options.stale / 2));
            return Ok(Lock {
                dir,
                keeper: Some(keeper),
            });
        }
        if Instant::now() >= deadline {
            return Err(LockError::Busy(dir));
        }
        tokio::time::sleep(options.retry).await;
    }
}

async fn keep_fresh(dir: PathBuf, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let _ = touch(&dir);
    }
}

/// Sets the mtime of `path` to now.
fn touch(path: &Path) -> io::Result<()> {
    open_dir(path)?.set_modified(SystemTime::now())
}

#[cfg(not(windows))]
fn open_dir(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(windows)]
fn open_dir(path: &Path) -> io::Result<std::fs::File> {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pi-mcp-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const QUICK: LockOptions = LockOptions {
        stale: Duration::from_secs(10),
        wait: Duration::from_millis(150),
        retry: Duration::from_millis(10),
    };

    #[test]
    fn excludes_then_releases() {
        let dir = scratch("excl");
        let target = dir.join("mcp-auth.json");
        let held = acquire_blocking(&target, QUICK).unwrap();
        assert!(dir.join("mcp-auth.json.lock").is_dir());
        assert!(matches!(
            acquire_blocking(&target, QUICK),
            Err(LockError::Busy(_))
        ));
        drop(held);
        assert!(!dir.join("mcp-auth.json.lock").exists());
        drop(acquire_blocking(&target, QUICK).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_abandoned_lock_is_taken_over() {
        let dir = scratch("stale");
        let target = dir.join("mcp-auth.json");
        let lock = lock_dir(&target);
        std::fs::create_dir(&lock).unwrap();
        let old = SystemTime::now() - Duration::from_secs(30);
        open_dir(&lock).unwrap().set_modified(old).unwrap();
        drop(acquire_blocking(&target, QUICK).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_held_lock_stays_fresh() {
        let dir = scratch("fresh");
        let target = dir.join("refresh");
        let options = LockOptions {
            stale: Duration::from_millis(200),
            ..QUICK
        };
        let held = acquire(&target, options).await.unwrap();
        let old = SystemTime::now() - Duration::from_secs(1);
        open_dir(&lock_dir(&target))
            .unwrap()
            .set_modified(old)
            .unwrap();
        // The keeper touches it every 100 ms.
        tokio::time::sleep(Duration::from_millis(250)).await;
        let age = SystemTime::now()
            .duration_since(
                std::fs::metadata(lock_dir(&target))
                    .unwrap()
                    .modified()
                    .unwrap(),
            )
            .unwrap();
        assert!(age < Duration::from_secs(1), "{age:?}");
        drop(held);
        assert!(!lock_dir(&target).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
