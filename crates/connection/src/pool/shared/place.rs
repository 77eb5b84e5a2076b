//! Where sessions and the broker meet (README "Shared servers"): a Unix domain socket in a
//! directory only its user may enter — `<agentDir>/mcp-broker/` when the socket's path fits
//! `sun_path`, else `$XDG_RUNTIME_DIR/pi-mcp/` or `/tmp/pi-mcp-<uid>/` — and a named pipe on
//! Windows. The files beside the socket share its stem: `.lock` (held by the running broker),
//! `.start` (held by a session while it starts one) and `.log` (the broker's own log). The stem
//! names the version, so sessions of another version of pi-mcp-native run a broker of their own.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The longest socket path: `sun_path` (104 bytes on macOS and the BSDs, 108 elsewhere) less its
/// terminating NUL.
pub const MAX_SOCKET_PATH: usize = if cfg!(any(target_vendor = "apple", target_os = "freebsd")) {
    103
} else {
    107
};

/// The broker's directory and the stem of its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub dir: PathBuf,
    pub stem: String,
}

impl Place {
    /// The place of the broker serving `agent_dir` for user `uid` (`XDG_RUNTIME_DIR` read from
    /// `env`). `Err` when no socket path fits.
    pub fn choose(
        agent_dir: &Path,
        env: &HashMap<String, String>,
        uid: u32,
    ) -> Result<Place, String> {
        let version = env!("CARGO_PKG_VERSION");
        if cfg!(windows) {
            // A pipe name is global: the user and the agent dir make it this broker's.
            let user = env.get("USERNAME").map_or("", String::as_str);
            let tag = short_hash(&format!("{user}\n{}", agent_dir.display()));
            return Ok(Place {
                dir: agent_dir.join("mcp-broker"),
                stem: format!("pi-mcp-broker-{version}-{tag}"),
            });
        }
        let home = Place {
            dir: agent_dir.join("mcp-broker"),
            stem: format!("broker-{version}"),
        };
        if fits(&home.socket()) {
            return Ok(home);
        }
        let runtime = env
            .get("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute());
        let dir = match runtime {
            Some(runtime) => runtime.join("pi-mcp"),
            None => PathBuf::from(format!("/tmp/pi-mcp-{uid}")),
        };
        let away = Place {
            dir,
            // Several agent dirs of one user meet here: each has a broker of its own.
            stem: format!(
                "broker-{version}-{}",
                short_hash(&agent_dir.display().to_string())
            ),
        };
        match fits(&away.socket()) {
            true => Ok(away),
            false => Err(format!(
                "no socket path for the broker fits the {MAX_SOCKET_PATH} bytes a Unix socket may have: {} and {} are both too long",
                home.socket().display(),
                away.socket().display()
            )),
        }
    }

    /// Rebuilt from what [`Place::args`] gave the broker.
    pub fn from_parts(dir: PathBuf, stem: String) -> Place {
        Place { dir, stem }
    }

    /// The broker's command-line arguments naming this place.
    pub fn args(&self) -> [std::ffi::OsString; 4] {
        [
            "--dir".into(),
            self.dir.clone().into_os_string(),
            "--stem".into(),
            self.stem.clone().into(),
        ]
    }

    /// The Unix domain socket the broker listens on.
    pub fn socket(&self) -> PathBuf {
        self.file("sock")
    }

    /// The named pipe the broker listens on (Windows).
    pub fn pipe(&self) -> String {
        format!(r"\\.\pipe\{}", self.stem)
    }

    /// Where sessions reach the broker, as shown to people.
    pub fn endpoint(&self) -> String {
        match cfg!(windows) {
            true => self.pipe(),
            false => self.socket().display().to_string(),
        }
    }

    /// Held by the running broker for as long as it runs.
    pub fn lock(&self) -> PathBuf {
        self.file("lock")
    }

    /// Takes the broker's lock without waiting; `None` while another process holds it. It is
    /// released when the file is dropped, or the process ends (even by SIGKILL).
    #[cfg(unix)]
    pub fn try_lock(&self) -> Result<Option<std::fs::File>, String> {
        let path = self.lock();
        let file = lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(format!("cannot lock {}: {e}", path.display()))
            }
        }
    }

    /// Whether a broker runs here (holds the lock).
    #[cfg(unix)]
    pub fn held(&self) -> bool {
        self.lock().exists() && matches!(self.try_lock(), Ok(None))
    }

    /// Held by a session while it starts the broker, so that two sessions start one.
    pub fn start_lock(&self) -> PathBuf {
        self.file("start")
    }

    /// The broker's own log (what it started, stopped and refused).
    pub fn log(&self) -> PathBuf {
        self.file("log")
    }

    fn file(&self, extension: &str) -> PathBuf {
        self.dir.join(format!("{}.{extension}", self.stem))
    }

    /// Creates the directory, only its owner may enter, or checks that an existing one is ours
    /// and closed to others (a directory left open by us is closed).
    pub fn prepare(&self) -> Result<(), String> {
        private_dir(&self.dir)
    }
}

/// Creates `dir`, only its owner may enter, or checks that an existing one is ours and closed to
/// others (a directory left open by us is closed).
#[cfg(unix)]
pub fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let shown = dir.display();
    if let Some(parent) = dir.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(format!("cannot create {shown}: {e}"));
        }
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_dir() {
        return Err(format!(
            "{shown} is not a directory (a link or a file); remove it"
        ));
    }
    let me = current_uid();
    if meta.uid() != me {
        return Err(format!(
            "{shown} belongs to uid {}, not to you (uid {me}); remove it, or set XDG_RUNTIME_DIR to a directory of yours",
            meta.uid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot close {shown} to other users: {e}"))?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// A lock file only its owner may read or write, opened (created when missing).
#[cfg(unix)]
pub fn lock_file(path: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

fn fits(socket: &Path) -> bool {
    socket.as_os_str().len() <= MAX_SOCKET_PATH
}

/// 12 hex digits of SHA-256: tells agent dirs apart in a shared directory.
fn short_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The user this process runs as (its effective uid).
#[cfg(unix)]
pub fn current_uid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
pub fn current_uid() -> u32 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn under_the_agent_dir_when_the_socket_fits() {
        let place = Place::choose(Path::new("/home/a/.pi/agent"), &env(&[]), 1000).unwrap();
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(
            place.socket(),
            PathBuf::from(format!(
                "/home/a/.pi/agent/mcp-broker/broker-{version}.sock"
            ))
        );
        assert_eq!(
            place.lock(),
            PathBuf::from(format!(
                "/home/a/.pi/agent/mcp-broker/broker-{version}.lock"
            ))
        );
        let back = Place::from_parts(place.dir.clone(), place.stem.clone());
        assert_eq!(back, place);
    }

    #[cfg(unix)]
    #[test]
    fn a_long_agent_dir_moves_the_socket_to_the_runtime_dir_or_tmp() {
        let long = PathBuf::from(format!("/home/a/{}/agent", "x".repeat(120)));
        let runtime =
            Place::choose(&long, &env(&[("XDG_RUNTIME_DIR", "/run/user/1000")]), 1000).unwrap();
        assert_eq!(runtime.dir, PathBuf::from("/run/user/1000/pi-mcp"));
        assert!(runtime.socket().as_os_str().len() <= MAX_SOCKET_PATH);
        let tmp = Place::choose(&long, &env(&[("XDG_RUNTIME_DIR", "relative")]), 1000).unwrap();
        assert_eq!(tmp.dir, PathBuf::from("/tmp/pi-mcp-1000"));
        let other = PathBuf::from(format!("/home/a/{}/other", "x".repeat(120)));
        let elsewhere = Place::choose(&other, &env(&[]), 1000).unwrap();
        assert_ne!(
            elsewhere.stem, tmp.stem,
            "each agent dir has a broker of its own"
        );
        let deep = format!("/{}", "r".repeat(100));
        let none = Place::choose(&long, &env(&[("XDG_RUNTIME_DIR", &deep)]), 1000);
        assert!(none.unwrap_err().contains("too long"));
    }

    #[cfg(unix)]
    #[test]
    fn prepare_makes_a_private_dir_and_refuses_what_it_cannot_trust() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("pi-mcp-place-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let place = Place::from_parts(root.join("a").join("mcp-broker"), "broker".into());
        place.prepare().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&place.dir), 0o700);
        std::fs::set_permissions(&place.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        place.prepare().unwrap();
        assert_eq!(mode(&place.dir), 0o700, "reopened to others: closed again");
        let file = Place::from_parts(root.join("file"), "broker".into());
        std::fs::write(&file.dir, "").unwrap();
        assert!(file.prepare().unwrap_err().contains("not a directory"));
        let link = Place::from_parts(root.join("link"), "broker".into());
        std::os::unix::fs::symlink(&place.dir, &link.dir).unwrap();
        assert!(link.prepare().unwrap_err().contains("not a directory"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
