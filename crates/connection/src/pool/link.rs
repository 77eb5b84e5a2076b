//! What carries a connection: a process we start (spawned, its stderr drained, stopped as a
//! group when opening fails) or a remote endpoint, and the opening handshake over it.

use super::client_tasks::wire::Declaring;
use super::handler::Handler;
use super::handshake::{self, Service};
use super::oversize::LineGuard;
use super::process::{self, ExitWatch, StdioSpec};
#[cfg(feature = "remote")]
use super::remote::{self, RemoteSpec};
use super::shared::{wire, BrokerLink, SharedSpec};
use super::spec::ConnectSpec;
use super::stderr::{self, StderrTail};
use super::ConnectError;
use crate::secret::Scrubber;
use rmcp::service::ClientInitializeError;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What carries the session.
pub(super) enum Link {
    /// A process we started, in its own process group.
    Process {
        pid: u32,
        exit: ExitWatch,
        stderr: Arc<StderrTail>,
    },
    #[cfg_attr(
        not(feature = "remote"),
        expect(
            dead_code,
            reason = "made only by the remote transports (the `remote` feature)"
        )
    )]
    Remote {
        kind: RemoteKind,
        /// Hides the server's credentials in error texts.
        scrubber: Scrubber,
    },
    /// The broker's socket to a shared server (whose process the broker owns).
    Broker(Arc<BrokerLink>),
    /// A Unix socket a server listens on (`socket`).
    Socket,
}

/// The transport of a remote server: which of the two worked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteKind {
    StreamableHttp,
    /// The legacy HTTP+SSE transport (2024-11-05).
    Sse,
}

impl RemoteKind {
    pub const ALL: [RemoteKind; 2] = [RemoteKind::StreamableHttp, RemoteKind::Sse];

    pub fn name(self) -> &'static str {
        match self {
            RemoteKind::StreamableHttp => "streamable-http",
            RemoteKind::Sse => "sse",
        }
    }

    pub fn from_name(name: &str) -> Option<RemoteKind> {
        match name {
            "streamable-http" => Some(RemoteKind::StreamableHttp),
            "sse" => Some(RemoteKind::Sse),
            _ => None,
        }
    }
}

/// Spawns a stdio server and runs the handshake over its pipes.
pub(super) async fn open_process(
    spec: &ConnectSpec,
    stdio: &StdioSpec,
    handler: Handler,
    stop: &CancellationToken,
) -> Result<(Service, Link), String> {
    let spawned = process::spawn(stdio).map_err(|e| spawn_error(stdio, e))?;
    let (pid, mut exit) = (spawned.pid, spawned.exit);
    let tail = Arc::new(StderrTail::default());
    {
        let (tail, echo) = (tail.clone(), spec.debug.then(|| spec.server.clone()));
        tokio::spawn(async move { stderr::drain(spawned.stderr, &tail, echo.as_deref()).await });
    }
    let stdout = LineGuard::new(spawned.stdout);
    let tasks = handler.client.task_declaration();
    let pipes = AsyncRwTransport::new_client(stdout, spawned.stdin);
    let init = handshake::start(
        handler,
        Declaring::new(pipes, tasks),
        spec.protocol,
        stop.clone(),
    );
    match tokio::time::timeout(spec.timeout, init).await {
        Ok(Ok(service)) => Ok((
            service,
            Link::Process {
                pid,
                exit,
                stderr: tail,
            },
        )),
        Ok(Err(e)) => {
            exit.wait(Duration::from_millis(300)).await;
            let why = match exit.get() {
                Some(status) => format!("{status} before answering `initialize`"),
                None => format!("failed during `initialize`: {e}"),
            };
            Err(abandon(stop, pid, exit, why, &tail).await)
        }
        Err(_) => {
            let why = format!(
                "did not answer `initialize` within {} s",
                spec.timeout.as_secs_f32()
            );
            Err(abandon(stop, pid, exit, why, &tail).await)
        }
    }
}

#[cfg(feature = "remote")]
pub(super) async fn open_remote(
    spec: &ConnectSpec,
    remote: &RemoteSpec,
    handler: Handler,
    stop: &CancellationToken,
) -> Result<(Service, Link), ConnectError> {
    let opened = remote::open(remote, spec.protocol, handler, stop.clone());
    match tokio::time::timeout(spec.timeout, opened).await {
        Ok(Ok(opened)) => Ok((
            opened.service,
            Link::Remote {
                kind: opened.kind,
                scrubber: remote.scrubber(),
            },
        )),
        Ok(Err(e)) => {
            stop.cancel();
            Err(e.map(|why| format!("{}: {why}", remote.display_url())))
        }
        Err(_) => {
            stop.cancel();
            Err(ConnectError::Failed(format!(
                "{} did not answer `initialize` within {} s",
                remote.display_url(),
                spec.timeout.as_secs_f32()
            )))
        }
    }
}

/// Connects to a server listening on the Unix socket `path` and runs the handshake over it
/// (newline-delimited JSON-RPC, as over a server's pipes).
pub(super) async fn open_socket(
    spec: &ConnectSpec,
    path: &std::path::Path,
    handler: Handler,
    stop: &CancellationToken,
) -> Result<(Service, Link), String> {
    let opened = async {
        let (read, write) = socket::connect(path).await?;
        let tasks = handler.client.task_declaration();
        let transport = AsyncRwTransport::new_client(LineGuard::new(read), write);
        let init = handshake::start(
            handler,
            Declaring::new(transport, tasks),
            spec.protocol,
            stop.clone(),
        );
        init.await
            .map_err(|e| format!("failed during `initialize`: {e}"))
    };
    let shown = path.display();
    match tokio::time::timeout(spec.timeout, opened).await {
        Ok(Ok(service)) => Ok((service, Link::Socket)),
        Ok(Err(why)) => {
            stop.cancel();
            Err(format!("the Unix socket {shown}: {why}"))
        }
        Err(_) => {
            stop.cancel();
            Err(format!(
                "the Unix socket {shown} did not answer `initialize` within {} s",
                spec.timeout.as_secs_f32()
            ))
        }
    }
}

#[cfg(unix)]
mod socket {
    use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
    use tokio::net::UnixStream;

    pub async fn connect(
        path: &std::path::Path,
    ) -> Result<(OwnedReadHalf, OwnedWriteHalf), String> {
        let stream = UnixStream::connect(path)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        Ok(stream.into_split())
    }
}

#[cfg(not(unix))]
mod socket {
    pub async fn connect(
        _path: &std::path::Path,
    ) -> Result<(tokio::io::Empty, tokio::io::Sink), String> {
        Err("Unix sockets are not available on this platform".into())
    }
}

/// Reaches a shared server through the broker (or the family's hub); starts it here instead when
/// that cannot be used (why is kept in the session's [`Broker`](super::Broker), or by the hub,
/// for status). A broker
/// that closes the connection while it takes the session (it was exiting, idle) is tried once
/// more: the next attempt starts a new one.
pub(super) async fn open_shared(
    spec: &ConnectSpec,
    shared: &SharedSpec,
    handler: Handler,
    stop: &CancellationToken,
) -> Result<(Service, Link), ConnectError> {
    let mut attempts = 0;
    let why = loop {
        attempts += 1;
        match attach(spec, shared, &handler, stop).await {
            Ok(opened) => return Ok(opened),
            Err(Attach::StartFailed(why)) => return Err(ConnectError::Failed(why)),
            Err(Attach::Closed(_)) if attempts < 2 => continue,
            Err(Attach::Closed(why) | Attach::Refused(why)) => break why,
            Err(Attach::Unreachable) => break String::new(),
        }
    };
    if !why.is_empty() {
        match &shared.family {
            Some(family) => family.hub.refused(why),
            None => shared.broker.refuse(why),
        }
    }
    open_process(spec, &shared.stdio, handler, stop)
        .await
        .map_err(ConnectError::Failed)
}

/// Why a session could not attach to a shared server through the broker.
enum Attach {
    /// The broker could not start the server (said as it is, like a local start's failure).
    StartFailed(String),
    /// The connection ended before the server was attached.
    Closed(String),
    /// The broker would not take the session, or did not answer in time.
    Refused(String),
    /// No broker could be reached or started (the session's [`Broker`](super::Broker) says why).
    Unreachable,
}

async fn attach(
    spec: &ConnectSpec,
    shared: &SharedSpec,
    handler: &Handler,
    stop: &CancellationToken,
) -> Result<(Service, Link), Attach> {
    let stream = match &shared.family {
        Some(family) => family.hub.dial().await,
        None => shared.broker.connect(BROKER_REACH).await,
    };
    let Ok(stream) = stream else {
        return Err(Attach::Unreachable);
    };
    let attach = wire::Attach {
        name: spec.server.clone(),
        identity: shared.identity.clone(),
        launch: shared.stdio.clone(),
        protocol: spec.protocol,
        client: spec.client.clone(),
        timeout_ms: spec.timeout.as_millis() as u64,
        idle_ms: shared.idle.map(|d| d.as_millis() as u64),
        debug: spec.debug,
        session: shared.broker.session(),
        family: shared.family.as_ref().map(|f| f.attach.clone()),
    };
    // The broker's farewell ends this connection only, not a local start that may follow.
    let ended = stop.child_token();
    let hub = shared.family.as_ref().map(|f| f.hub.clone());
    let link = Arc::new(BrokerLink::new(
        shared.broker.clone(),
        hub,
        &attach,
        ended.clone(),
    ));
    let through_broker = Handler {
        broker: Some(link.clone()),
        ..handler.clone()
    };
    let init = handshake::start(
        through_broker,
        tokio::io::split(stream),
        handshake::Protocol::Initialize,
        ended,
    );
    // The broker's own bound on starting the server comes first.
    let limit = spec.timeout + BROKER_REACH;
    match tokio::time::timeout(limit, init).await {
        Ok(Ok(service)) => Ok((service, Link::Broker(link))),
        Ok(Err(ClientInitializeError::JsonRpcError(e))) if e.code.0 == wire::START_FAILED => {
            Err(Attach::StartFailed(e.message.to_string()))
        }
        Ok(Err(ClientInitializeError::JsonRpcError(e))) => Err(Attach::Refused(format!(
            "the broker did not take the session: {}",
            e.message
        ))),
        Ok(Err(e)) => Err(Attach::Closed(format!(
            "the broker did not take the session: {e}"
        ))),
        Err(_) => Err(Attach::Refused(format!(
            "the broker did not answer within {} s",
            limit.as_secs_f32()
        ))),
    }
}

/// How long reaching (or starting) the broker may take.
const BROKER_REACH: Duration = Duration::from_secs(5);

/// Stops a server whose handshake failed; returns the message for the failure.
async fn abandon(
    stop: &CancellationToken,
    pid: u32,
    exit: ExitWatch,
    why: String,
    tail: &StderrTail,
) -> String {
    stop.cancel();
    process::stop_group(pid, exit, Duration::ZERO).await;
    with_stderr(why, tail).await
}

fn spawn_error(spec: &StdioSpec, e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound if !spec.cwd.is_dir() => {
            format!(
                "cannot start: working directory {} does not exist",
                spec.cwd.display()
            )
        }
        std::io::ErrorKind::NotFound => format!(
            "cannot start `{}`: command not found (check `command` and PATH)",
            spec.command
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!(
                "cannot start `{}`: permission denied (is it executable?)",
                spec.command
            )
        }
        _ => format!("cannot start `{}`: {e}", spec.command),
    }
}

/// `what`, followed by the end of the server's stderr when it wrote any.
pub(super) async fn with_stderr(what: String, tail: &StderrTail) -> String {
    tail.settle(Duration::from_millis(500)).await;
    match tail.last_lines() {
        Some(lines) => format!("{what}. Its stderr ends with:\n{lines}"),
        None => what,
    }
}
