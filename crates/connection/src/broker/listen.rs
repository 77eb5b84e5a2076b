//! Accepting sessions. On Unix the socket sits in a directory only its user can enter (a family's
//! hub on Linux: an abstract socket, which anyone may reach), and each peer's credentials are
//! checked again: another user's connection is answered with a refusal. On Windows a named
//! pipe, created as the first instance with remote clients rejected, whose default security
//! admits the user who created it (and administrators and the system).

use super::{hop, Broker};
use crate::pool::shared::family::Address;
use crate::pool::shared::place::Place;
use std::io;
use std::sync::Arc;

#[cfg(unix)]
pub struct Listener(tokio::net::UnixListener);

#[cfg(windows)]
pub struct Listener {
    pipe: String,
    next: tokio::net::windows::named_pipe::NamedPipeServer,
}

impl Listener {
    /// Listens at `place` (in a runtime). The caller holds the place's lock, so a socket file
    /// found there is a stale one (of a broker that was killed): it is replaced.
    #[cfg(unix)]
    pub fn bind(place: &Place) -> io::Result<Listener> {
        use std::os::unix::fs::PermissionsExt;
        let socket = place.socket();
        match std::fs::remove_file(&socket) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = tokio::net::UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        Ok(Listener(listener))
    }

    /// Creates the pipe's first instance; `AlreadyExists`-like errors mean another broker has it.
    #[cfg(windows)]
    pub fn bind(place: &Place) -> io::Result<Listener> {
        Listener::pipe(place.pipe())
    }

    #[cfg(windows)]
    fn pipe(pipe: String) -> io::Result<Listener> {
        let next = pipe_options(true).create(&pipe)?;
        Ok(Listener { pipe, next })
    }

    /// Listens at a family's `address` (in a runtime): an abstract socket, or a socket file (0600)
    /// in a directory only this user may enter.
    #[cfg(unix)]
    pub fn family(address: &Address) -> io::Result<Listener> {
        use std::os::unix::fs::PermissionsExt;
        match address {
            Address::Abstract(name) => bind_abstract(name).map(Listener),
            Address::Path(socket) => {
                if let Some(dir) = socket.parent() {
                    crate::pool::shared::place::private_dir(dir).map_err(io::Error::other)?;
                }
                let listener = tokio::net::UnixListener::bind(socket)?;
                std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
                Ok(Listener(listener))
            }
            Address::Pipe(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    #[cfg(windows)]
    pub fn family(address: &Address) -> io::Result<Listener> {
        match address {
            Address::Pipe(pipe) => Listener::pipe(pipe.clone()),
            Address::Abstract(_) | Address::Path(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }
}

#[cfg(target_os = "linux")]
fn bind_abstract(name: &str) -> io::Result<tokio::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let listener = std::os::unix::net::UnixListener::bind_addr(&address)?;
    listener.set_nonblocking(true)?;
    tokio::net::UnixListener::from_std(listener)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn bind_abstract(_: &str) -> io::Result<tokio::net::UnixListener> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(windows)]
fn pipe_options(first: bool) -> tokio::net::windows::named_pipe::ServerOptions {
    let mut options = tokio::net::windows::named_pipe::ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true);
    options
}

/// Serves connections until the broker stops.
#[cfg(unix)]
pub(crate) async fn accept(broker: &Arc<Broker>, listener: Listener) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.0.accept() => accepted,
            _ = broker.stopping.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                broker.note(&format!("accept failed: {e}"));
                continue;
            }
        };
        let accepted_uid = broker.accept_uid();
        match stream.peer_cred() {
            Ok(_) if broker.full() => {
                tokio::spawn(hop::refuse(stream, full_hub()));
            }
            Ok(cred) if cred.uid() == accepted_uid => {
                let peer = cred.pid().map(|pid| pid as u32);
                tokio::spawn(hop::serve(broker.clone(), stream, hop::Peer::Process(peer)));
            }
            peer => {
                let who = match peer {
                    Ok(cred) => format!(
                        "uid {}{}",
                        cred.uid(),
                        cred.pid()
                            .map_or_else(String::new, |pid| format!(" (pid {pid})"))
                    ),
                    Err(e) => format!("an unknown user ({e})"),
                };
                let why = format!(
                    "refused: this shared-server broker serves uid {accepted_uid} only, and the connection is from {who}"
                );
                broker.note(&why);
                tokio::spawn(hop::refuse(stream, why));
            }
        }
    }
    // The lock is still held: no other broker can have taken the place meanwhile.
    if let Some(place) = broker.place() {
        let _ = std::fs::remove_file(place.socket());
    }
}

#[cfg(windows)]
pub(crate) async fn accept(broker: &Arc<Broker>, listener: Listener) {
    let Listener { pipe, mut next } = listener;
    loop {
        let connected = tokio::select! {
            connected = next.connect() => connected,
            _ = broker.stopping.cancelled() => break,
        };
        let fresh = match pipe_options(false).create(&pipe) {
            Ok(fresh) => fresh,
            Err(e) => {
                broker.note(&format!("cannot open another instance of {pipe}: {e}"));
                broker.stop();
                break;
            }
        };
        let stream = std::mem::replace(&mut next, fresh);
        if let Err(e) = connected {
            broker.note(&format!("accept failed: {e}"));
            continue;
        }
        if broker.full() {
            tokio::spawn(hop::refuse(stream, full_hub()));
            continue;
        }
        tokio::spawn(hop::serve(broker.clone(), stream, hop::Peer::Process(None)));
    }
}

/// Why a connection past the hub's limit is refused.
fn full_hub() -> String {
    format!(
        "refused: the family's hub has {} connections already",
        hop::MAX_HOPS
    )
}
