//! Shared servers, the session's side: a stdio server marked `shared` is reached through the
//! per-user broker (src/broker), which runs one copy for every session that would launch the
//! same thing ([`identity`]). The session opens an MCP connection over the broker's socket whose
//! `initialize` names the server ([`wire::Attach`]); from then on the connection is an ordinary
//! one. A session that cannot reach or start the broker, or loses it, starts its shared servers
//! itself for the rest of its life, and its status says why. A server shared with the session's
//! family is reached the same way through the family's [`Hub`].

pub mod control;
pub mod family;
pub mod identity;
pub mod place;
pub mod wire;

use super::{RequestError, StdioSpec};
use futures::future::BoxFuture;
use parking_lot::Mutex;
use place::Place;
use rmcp::model::JsonObject;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use wire::{Farewell, FarewellReason};

/// How long a farewell the broker sent may take to be read after its connection ended.
const FAREWELL_WAIT: Duration = Duration::from_millis(500);
/// Room left in a message for what wraps a request's params (`jsonrpc`, `id`, `method`, `_meta`).
const ENVELOPE: usize = 64 * 1024;

/// A connection to the broker or to a family's hub: a Unix socket, a named pipe, or a duplex
/// within the process.
pub struct Stream(Pin<Box<dyn Duplex>>);

pub trait Duplex: AsyncRead + AsyncWrite + Send + Sync {}

impl<T: AsyncRead + AsyncWrite + Send + Sync> Duplex for T {}

impl Stream {
    pub fn new(stream: impl Duplex + 'static) -> Stream {
        Stream(Box::pin(stream))
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.0.as_mut().poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.0.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.0.as_mut().poll_shutdown(cx)
    }
}

/// A family's hub as its sessions reach it: in their own process, or over the hub's socket from
/// a process that inherited the family's token (see `crate::broker::family`).
pub trait Hub: Send + Sync {
    /// A new connection to the hub; `Err` (why) when there is none, and then the family's
    /// servers run in this process.
    fn dial(&self) -> BoxFuture<'static, Result<Stream, String>>;
    /// The hub did not serve this process (it refused, or did not answer in time): from now on
    /// the family's servers run here, and status says `why`.
    fn refused(&self, why: String);
    /// A connection to the hub ended without a farewell, so the hub is gone: what a call in
    /// flight on `server` is told. From now on the family's servers run here.
    fn lost(&self, server: &str) -> String;
    /// Where the family's servers run, as status says (`pi (pid 4242)`).
    fn runs_in(&self) -> String;
}

/// How one server of a session is reached through its family's hub.
#[derive(Clone)]
pub struct FamilyReach {
    pub hub: Arc<dyn Hub>,
    pub attach: wire::FamilyAttach,
}

impl fmt::Debug for FamilyReach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FamilyReach")
            .field("attach", &self.attach)
            .finish_non_exhaustive()
    }
}

impl PartialEq for FamilyReach {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.hub, &other.hub) && self.attach == other.attach
    }
}

/// How a session reaches its broker; one per session (an adapter), shared by its connections.
pub struct Broker {
    place: Result<Place, String>,
    /// Whose `mcp.log` the broker writes the servers' log messages to.
    agent_dir: PathBuf,
    /// The helper executable the broker runs as (`pi-mcp-native-helper broker`).
    program: Option<PathBuf>,
    /// Why this session starts its shared servers itself: set once, for the rest of it.
    off: Mutex<Option<String>>,
    session_id: String,
    /// Someone can answer questions in this session.
    ui: AtomicBool,
    /// Who the session is, for questions asked in another session's UI.
    label: Option<String>,
}

impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("place", &self.place)
            .field("session", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// A shared stdio server: how to start it here, and how the broker tells it apart.
#[derive(Clone, Debug)]
pub struct SharedSpec {
    pub stdio: StdioSpec,
    /// The server's identity (see [`identity`]).
    pub identity: String,
    /// How long it may sit unused; `None`: the session would never stop it.
    pub idle: Option<Duration>,
    /// The session (who it is, and the per-user broker it reaches).
    pub broker: Arc<Broker>,
    /// Set when the server is shared with the session's family: reached through its hub.
    pub family: Option<FamilyReach>,
}

impl PartialEq for SharedSpec {
    fn eq(&self, other: &Self) -> bool {
        self.stdio == other.stdio
            && self.identity == other.identity
            && self.idle == other.idle
            && Arc::ptr_eq(&self.broker, &other.broker)
            && self.family == other.family
    }
}

impl Broker {
    /// The broker of `agent_dir` (its place chosen with `env`), run as `program`, for a session
    /// that says it is `label` when another session's UI asks for it.
    pub fn new(
        agent_dir: &Path,
        env: &HashMap<String, String>,
        program: Option<PathBuf>,
        label: Option<String>,
    ) -> Broker {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Broker {
            place: Place::choose(agent_dir, env, place::current_uid()),
            agent_dir: agent_dir.to_path_buf(),
            program,
            off: Mutex::new(None),
            session_id: format!(
                "{}.{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            ui: AtomicBool::new(false),
            label,
        }
    }

    pub fn session(&self) -> wire::SessionInfo {
        wire::SessionInfo {
            id: self.session_id.clone(),
            pid: std::process::id(),
            ui: self.ui.load(Ordering::SeqCst),
            label: self.label.clone(),
        }
    }

    /// Whether someone can answer questions in this session.
    pub fn set_ui(&self, ui: bool) {
        self.ui.store(ui, Ordering::SeqCst);
    }

    /// Why this session starts its shared servers itself, once it does.
    pub fn off(&self) -> Option<String> {
        self.off.lock().clone()
    }

    fn turn_off(&self, why: String) -> String {
        self.off.lock().get_or_insert(why).clone()
    }

    /// The broker would not take this session: it starts its shared servers itself.
    pub fn refuse(&self, why: String) {
        self.turn_off(why);
    }

    pub fn place(&self) -> Result<&Place, &String> {
        self.place.as_ref()
    }

    /// A connection to the broker, starting it when none runs; `Err` (why) turns sharing off
    /// for this session.
    pub async fn connect(&self, limit: Duration) -> Result<Stream, String> {
        if let Some(why) = self.off() {
            return Err(why);
        }
        let place = self
            .place
            .as_ref()
            .map_err(|why| self.turn_off(why.clone()))?;
        match tokio::time::timeout(limit, self.reach(place)).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(why)) => Err(self.turn_off(why)),
            Err(_) => Err(self.turn_off(format!(
                "the broker at {} was not reachable within {} s",
                place.endpoint(),
                limit.as_secs_f32()
            ))),
        }
    }

    async fn reach(&self, place: &Place) -> Result<Stream, String> {
        place.prepare()?;
        if let Ok(stream) = dial(place).await {
            return Ok(stream);
        }
        // Sessions starting at once start one broker: the first starts it, the others find it.
        let _starting = StartLock::take(place).await?;
        match dial(place).await {
            Ok(stream) => return Ok(stream),
            Err(Dial::Refused(why)) => return Err(why),
            Err(Dial::Absent) => {}
        }
        self.start(place).await?;
        dial(place).await.map_err(|e| match e {
            Dial::Refused(why) => why,
            Dial::Absent => format!(
                "the broker started but {} accepts no connection",
                place.endpoint()
            ),
        })
    }

    /// Runs `<helper> broker`, which returns once the broker listens (or another one holds the
    /// place).
    async fn start(&self, place: &Place) -> Result<(), String> {
        let Some(program) = &self.program else {
            return Err(
                "the helper executable was not found next to the addon (rebuild with `npm run build`)"
                    .into(),
            );
        };
        let mut command = tokio::process::Command::new(program);
        command
            .arg("broker")
            .args(place.args())
            .arg("--agent-dir")
            .arg(&self.agent_dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        #[cfg(windows)]
        {
            // DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP: no console, no Ctrl-C from ours.
            command.creation_flags(0x0000_0008 | 0x0000_0200);
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the broker {}: {e}", program.display()))?;
        let mut said = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = tokio::io::BufReader::new(stdout).read_line(&mut said).await;
        }
        let said = said.trim();
        if said == "ready" || said == "busy" {
            // The process that said it exits at once (it detached the broker): reap it.
            #[cfg(unix)]
            tokio::spawn(async move { child.wait().await });
            return Ok(());
        }
        let mut why = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            use tokio::io::AsyncReadExt;
            let _ = (&mut stderr).take(4096).read_to_string(&mut why).await;
        }
        let _ = child.wait().await;
        Err(format!(
            "the broker did not start: {}",
            match why.trim() {
                "" => format!("see {}", place.log().display()),
                why => why.to_string(),
            }
        ))
    }
}

/// Why a dial failed.
enum Dial {
    /// No broker listens there (no socket, or a stale one).
    Absent,
    /// Something listens there that this session must not use.
    Refused(String),
}

#[cfg(unix)]
async fn dial(place: &Place) -> Result<Stream, Dial> {
    use std::io::ErrorKind;
    let socket = place.socket();
    let stream = match tokio::net::UnixStream::connect(&socket).await {
        Ok(stream) => stream,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
            return Err(Dial::Absent)
        }
        Err(e) => {
            return Err(Dial::Refused(format!(
                "cannot connect to {}: {e}",
                socket.display()
            )))
        }
    };
    let me = place::current_uid();
    match stream.peer_cred().map(|cred| cred.uid()) {
        Ok(uid) if uid == me => Ok(Stream::new(stream)),
        Ok(uid) => Err(Dial::Refused(format!(
            "{} is served by uid {uid}, not by you (uid {me})",
            socket.display()
        ))),
        Err(e) => Err(Dial::Refused(format!(
            "cannot tell who serves {}: {e}",
            socket.display()
        ))),
    }
}

#[cfg(windows)]
async fn dial(place: &Place) -> Result<Stream, Dial> {
    use tokio::net::windows::named_pipe::ClientOptions;
    const ERROR_PIPE_BUSY: i32 = 231;
    for _ in 0..50 {
        match ClientOptions::new().open(place.pipe()) {
            Ok(client) => return Ok(Stream::new(client)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Dial::Absent),
            Err(e) => {
                return Err(Dial::Refused(format!(
                    "cannot connect to {}: {e}",
                    place.pipe()
                )))
            }
        }
    }
    Err(Dial::Refused(format!("{} stayed busy", place.pipe())))
}

/// Held while this session starts the broker (a lock on the place's `.start` file).
struct StartLock {
    _held: std::fs::File,
}

impl StartLock {
    #[cfg(unix)]
    async fn take(place: &Place) -> Result<StartLock, String> {
        let path = place.start_lock();
        let file = place::lock_file(&path)?;
        tokio::task::spawn_blocking(move || match file.lock() {
            Ok(()) => Ok(StartLock { _held: file }),
            Err(e) => Err(format!("cannot lock {}: {e}", path.display())),
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// On Windows the pipe's first instance decides which broker runs.
    #[cfg(not(unix))]
    async fn take(place: &Place) -> Result<StartLock, String> {
        let path = place.start_lock();
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map(|file| StartLock { _held: file })
            .map_err(|e| format!("cannot open {}: {e}", path.display()))
    }
}

/// One connection's link to the broker: what the session told it, and what it says back.
pub struct BrokerLink {
    broker: Arc<Broker>,
    /// The family's hub, when the server is shared with the family.
    hub: Option<Arc<dyn Hub>>,
    /// The `initialize` capability naming the server.
    hello: JsonObject,
    /// Ends the connection (the broker said farewell).
    stop: CancellationToken,
    farewell: Mutex<Option<Farewell>>,
    said: Notify,
    /// Sessions using the server now, this one included.
    sessions: AtomicUsize,
    /// One per request in flight (see [`wire::SESSION_IN_FLIGHT`]).
    slots: tokio::sync::Semaphore,
}

impl BrokerLink {
    pub fn new(
        broker: Arc<Broker>,
        hub: Option<Arc<dyn Hub>>,
        attach: &wire::Attach,
        stop: CancellationToken,
    ) -> BrokerLink {
        let hello = match serde_json::to_value(wire::Hello::Attach(Box::new(attach.clone()))) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => JsonObject::new(),
        };
        BrokerLink {
            broker,
            hub,
            hello,
            stop,
            farewell: Mutex::new(None),
            said: Notify::new(),
            sessions: AtomicUsize::new(1),
            slots: tokio::sync::Semaphore::new(wire::SESSION_IN_FLIGHT),
        }
    }

    /// Lets a request with `params` go: a slot for it, held until its answer (waiting while
    /// every slot is taken, unless `cancel` comes first), or why it cannot go at all.
    pub async fn admit(
        &self,
        params: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<tokio::sync::SemaphorePermit<'_>, RequestError> {
        let size = serde_json::to_vec(params).map_or(0, |bytes| bytes.len());
        if size + ENVELOPE > wire::MAX_MESSAGE {
            return Err(RequestError::Protocol(format!(
                "the request is {:.1} MiB, over the {} MiB the shared-server broker takes in one message; send less",
                size as f64 / (1024.0 * 1024.0),
                wire::MAX_MESSAGE / (1024 * 1024)
            )));
        }
        tokio::select! {
            slot = self.slots.acquire() => slot.map_err(|_| RequestError::Aborted),
            _ = cancel.cancelled() => Err(RequestError::Aborted),
        }
    }

    pub fn hello(&self) -> JsonObject {
        self.hello.clone()
    }

    pub fn sessions(&self) -> usize {
        self.sessions.load(Ordering::SeqCst)
    }

    /// Where the server runs, when it is the family's.
    pub fn runs_in(&self) -> Option<String> {
        self.hub.as_ref().map(|hub| hub.runs_in())
    }

    /// Takes a notification of the broker's own; false for any other.
    pub fn heard(&self, method: &str, params: Option<&serde_json::Value>) -> bool {
        match method {
            wire::SESSIONS => {
                let count = params.and_then(|p| p.get("sessions")?.as_u64());
                if let Some(count) = count {
                    self.sessions.store(count as usize, Ordering::SeqCst);
                }
                true
            }
            wire::FAREWELL => {
                if let Some(farewell) = params.and_then(|p| Farewell::deserialize(p).ok()) {
                    *self.farewell.lock() = Some(farewell);
                    self.said.notify_waiters();
                }
                self.stop.cancel();
                true
            }
            _ => false,
        }
    }

    /// Why the connection ended (not by us): the broker's farewell, or — without one — the
    /// broker (or the family's hub) itself is gone, and this session starts its shared servers
    /// itself from now on.
    pub async fn end_note(&self, server: &str) -> String {
        let said = self.said.notified();
        if self.farewell.lock().is_none() {
            let _ = tokio::time::timeout(FAREWELL_WAIT, said).await;
        }
        match self.farewell.lock().clone() {
            Some(Farewell {
                reason: FarewellReason::ServerLost,
                message,
            }) => message,
            Some(Farewell {
                reason: FarewellReason::BrokerStopping,
                message,
            }) => format!("{message}; the next use starts it again"),
            Some(Farewell {
                reason: FarewellReason::Dropped,
                message,
            }) => format!("{message}; the next use connects again"),
            None => match &self.hub {
                Some(hub) => hub.lost(server),
                None => {
                    let why = "the shared-server broker stopped unexpectedly".to_string();
                    self.broker.turn_off(why.clone());
                    format!("{why}; this session starts {server} itself from now on")
                }
            },
        }
    }
}
