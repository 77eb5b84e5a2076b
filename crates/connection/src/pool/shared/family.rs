//! A family as the processes that inherited its token see it (README "Shared servers"): the
//! token (`PI_MCP_NATIVE_FAMILY`, [`Token`]), the address it names ([`Address`]), and this
//! process's membership ([`Member`]): once, at the first use of a family's server, the process
//! joins the hub (the peer checked before the token is sent, all within [`JOIN_LIMIT`]); from
//! then on its sessions reach the family's servers through the hub. A token that is malformed,
//! stale or forged, a peer of another user, a file where the socket would be, or a hub that does
//! not answer: one warning, and the process runs its own servers.

use super::wire::{self, Hello, Joined, SessionInfo};
use super::{Hub, Stream};
use crate::family_approval::{Ask, Verdict};
use base64::Engine;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// How long joining may take: connecting, the peer check and the hub's answer.
pub const JOIN_LIMIT: Duration = Duration::from_secs(1);
/// What a token starts with; what follows is 32 random bytes, base64url without padding.
const TOKEN_PREFIX: &str = "v1.";
const TOKEN_BYTES: usize = 32;

/// A family's token: a secret only the family's processes have.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A new token, from the system's randomness.
    pub fn new() -> Result<Token, String> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::getrandom(&mut bytes).map_err(|e| format!("no randomness for a token: {e}"))?;
        let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        Ok(Token(format!("{TOKEN_PREFIX}{text}")))
    }

    /// The token `value` holds, or why it is none.
    pub fn parse(value: &str) -> Result<Token, String> {
        let decoded = value.strip_prefix(TOKEN_PREFIX).and_then(|rest| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(rest)
                .ok()
        });
        match decoded {
            Some(bytes) if bytes.len() == TOKEN_BYTES => Ok(Token(value.to_string())),
            _ => Err(format!(
                "{} is malformed (not a token of this version of pi-mcp-native)",
                wire::FAMILY_VAR
            )),
        }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// 32 hex digits that name the family's socket; the token cannot be read back from them.
    fn name(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"pi-mcp-native family\0");
        hash.update(self.0.as_bytes());
        hash.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Names a directory for the family's socket file: bridges network namespaces on Linux, where
/// the socket is otherwise abstract.
pub const FAMILY_DIR: &str = "PI_MCP_FAMILY_DIR";
/// The longest socket path that fits `sun_path` on every Unix (macOS: 104 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 103;

/// Where a family's hub listens.
#[derive(Clone, Debug, PartialEq)]
pub enum Address {
    /// A Linux abstract socket: no file, gone with the hub's process.
    Abstract(String),
    /// A socket file in a directory only its user may enter.
    Path(PathBuf),
    /// A Windows named pipe.
    Pipe(String),
}

impl Address {
    /// The address `token` names: on Linux an abstract socket, unless [`FAMILY_DIR`] names a
    /// directory; elsewhere a socket file in that directory, or in `$TMPDIR/pi-mcp-<uid>`, or
    /// `/tmp/pi-mcp-<uid>`; on Windows a named pipe.
    pub fn of(token: &Token, env: &HashMap<String, String>) -> Result<Address, String> {
        let name = token.name();
        if cfg!(windows) {
            return Ok(Address::Pipe(format!(
                r"\\.\pipe\pi-mcp-native-family-{name}"
            )));
        }
        let uid = super::place::current_uid();
        let set = |key: &str| env.get(key).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = set(FAMILY_DIR);
        if cfg!(target_os = "linux") && dir.is_none() {
            return Ok(Address::Abstract(format!(
                "pi-mcp-native/family/{uid}/{name}"
            )));
        }
        let dir = dir.unwrap_or_else(|| {
            let tmp = set("TMPDIR").unwrap_or_else(|| PathBuf::from("/tmp"));
            tmp.join(format!("pi-mcp-{uid}"))
        });
        let socket = dir.join(format!("f-{name}.sock"));
        match socket.as_os_str().len() <= MAX_SOCKET_PATH {
            true => Ok(Address::Path(socket)),
            false => Err(format!(
                "{} is longer than a socket address may be; set {FAMILY_DIR} to a shorter directory",
                socket.display()
            )),
        }
    }

    /// As status shows it, with only the start of its name: `@pi-mcp-native/family/1000/1a2b3c4d…`.
    pub fn shown(&self) -> String {
        let cut = |text: &str| match text.len().checked_sub(24) {
            Some(at) if text.is_char_boundary(at) => format!("{}…", &text[..at]),
            _ => text.to_string(),
        };
        match self {
            Address::Abstract(name) => format!("@{}", cut(name)),
            Address::Path(path) => cut(&path.display().to_string()),
            Address::Pipe(pipe) => cut(pipe),
        }
    }
}

/// A connection to the hub at `address`, served by this user.
#[cfg(unix)]
pub async fn dial(address: &Address) -> Result<Stream, String> {
    let shown = address.shown();
    let connected = match address {
        Address::Abstract(name) => connect_abstract(name),
        Address::Path(path) => tokio::net::UnixStream::connect(path).await,
        Address::Pipe(_) => Err(std::io::ErrorKind::Unsupported.into()),
    };
    let stream = connected.map_err(|e| {
        format!(
            "no family hub answers at {shown} ({e}): the session that started this one has ended"
        )
    })?;
    let me = super::place::current_uid();
    match stream.peer_cred().map(|cred| cred.uid()) {
        Ok(uid) if uid == me => Ok(Stream::new(stream)),
        Ok(uid) => Err(format!(
            "{shown} is served by uid {uid}, not by you (uid {me}); its token was not sent"
        )),
        Err(e) => Err(format!("cannot tell who serves {shown}: {e}")),
    }
}

#[cfg(target_os = "linux")]
fn connect_abstract(name: &str) -> std::io::Result<tokio::net::UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let stream = std::os::unix::net::UnixStream::connect_addr(&address)?;
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn connect_abstract(_: &str) -> std::io::Result<tokio::net::UnixStream> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// A connection to the hub's pipe. The pipe's name comes from the token, which only the family
/// has, and the hub creates it as the first instance, so no one else can have made it first.
#[cfg(windows)]
pub async fn dial(address: &Address) -> Result<Stream, String> {
    use tokio::net::windows::named_pipe::ClientOptions;
    const ERROR_PIPE_BUSY: i32 = 231;
    let Address::Pipe(pipe) = address else {
        return Err(format!("{} is not a pipe", address.shown()));
    };
    for _ in 0..50 {
        match ClientOptions::new().open(pipe) {
            Ok(client) => return Ok(Stream::new(client)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => {
                return Err(format!(
                "no family hub answers at {} ({e}): the session that started this one has ended",
                address.shown()
            ))
            }
        }
    }
    Err(format!("{} stayed busy", address.shown()))
}

/// This process in the family whose token it inherited.
pub struct Member {
    token: Option<Token>,
    address: Option<Address>,
    state: Mutex<State>,
    /// The hub's process, once joined (kept after the hub is gone, to say which it was).
    hub: OnceLock<u32>,
    /// One join at a time.
    joining: tokio::sync::Mutex<()>,
    /// The warning that this process runs its own servers, until a session tells it.
    untold: Mutex<Option<String>>,
    /// The join's connection, once joined: what this process asks the hub itself.
    link: Mutex<Option<Arc<Link>>>,
}

enum State {
    Unjoined,
    Joined,
    Off(String),
}

impl Member {
    /// The process's membership of the family whose token is `value` (its socket's directory
    /// from `env`); a malformed token or an impossible address makes it run its own servers.
    pub fn inherit(value: &str, env: &HashMap<String, String>) -> Arc<Member> {
        let found = Token::parse(value).and_then(|token| {
            let address = Address::of(&token, env)?;
            Ok((token, address))
        });
        let (token, address, state) = match found {
            Ok((token, address)) => (Some(token), Some(address), State::Unjoined),
            Err(why) => (None, None, State::Off(why)),
        };
        let member = Arc::new(Member {
            token,
            address,
            state: Mutex::new(State::Unjoined),
            hub: OnceLock::new(),
            joining: tokio::sync::Mutex::new(()),
            untold: Mutex::new(None),
            link: Mutex::new(None),
        });
        if let State::Off(why) = state {
            member.turn_off(why);
        }
        member
    }

    pub fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// Why this process runs its family's servers itself, once it does.
    pub fn off(&self) -> Option<String> {
        match &*self.state.lock() {
            State::Off(why) => Some(why.clone()),
            State::Unjoined | State::Joined => None,
        }
    }

    /// The hub's process, once joined.
    pub fn hub_pid(&self) -> Option<u32> {
        self.hub.get().copied()
    }

    pub fn address(&self) -> Option<&Address> {
        self.address.as_ref()
    }

    /// The one warning that this process runs its own servers, the first time it is asked.
    pub fn take_warning(&self) -> Option<String> {
        self.untold.lock().take()
    }

    fn turn_off(&self, why: String) {
        let mut state = self.state.lock();
        if matches!(*state, State::Off(_)) {
            return;
        }
        *self.untold.lock() = Some(format!(
            "MCP: this session runs its own servers, not its family's: {why}"
        ));
        *state = State::Off(why);
    }

    /// Joins the hub unless done (or given up) already. Boxed for the reason
    /// `Connection::request` gives.
    fn join(self: &Arc<Self>) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(self.join_hub())
    }

    async fn join_hub(self: &Arc<Self>) -> Result<(), String> {
        let _one = self.joining.lock().await;
        match &*self.state.lock() {
            State::Joined => return Ok(()),
            State::Off(why) => return Err(why.clone()),
            State::Unjoined => {}
        }
        let (Some(token), Some(address)) = (&self.token, &self.address) else {
            return Err("no token".into());
        };
        let joined = tokio::time::timeout(JOIN_LIMIT, hello(address, token)).await;
        let joined = joined.unwrap_or_else(|_| {
            Err(format!(
                "the family's hub at {} did not answer within {} s",
                address.shown(),
                JOIN_LIMIT.as_secs_f32()
            ))
        });
        match joined {
            Ok((joined, link, rest)) => {
                let _ = self.hub.set(joined.pid);
                *self.link.lock() = Some(link);
                *self.state.lock() = State::Joined;
                let member = Arc::downgrade(self);
                tokio::spawn(async move {
                    rest.await;
                    if let Some(member) = member.upgrade() {
                        member.link.lock().take();
                        member.turn_off(format!("the family's hub (pid {}) exited", joined.pid));
                    }
                });
                Ok(())
            }
            Err(why) => {
                self.turn_off(why.clone());
                Err(why)
            }
        }
    }
}

impl Member {
    /// Asks the family's UI, through the hub, whether the use `ask` names may go ahead (joining
    /// first). Nobody when the hub cannot be reached or its connection ends before it answers.
    /// Boxed for the reason `Connection::request` gives.
    pub fn approve<'a>(self: &'a Arc<Self>, ask: &'a Ask) -> BoxFuture<'a, Verdict> {
        Box::pin(self.ask_hub(ask))
    }

    async fn ask_hub(self: &Arc<Self>, ask: &Ask) -> Verdict {
        let nobody = |why: String| Verdict::Nobody { why };
        if let Err(why) = self.join().await {
            return nobody(format!("and its family's session cannot be asked: {why}"));
        }
        let Some(link) = self.link.lock().clone() else {
            return nobody("and its family's session has ended".into());
        };
        let params = serde_json::to_value(ask).unwrap_or_default();
        let pi = self
            .hub_pid()
            .map_or_else(String::new, |pid| format!(" (pi, pid {pid})"));
        match link.request(wire::APPROVE, params).await {
            Ok(verdict) => serde_json::from_value(verdict).unwrap_or_else(|_| {
                nobody(format!(
                    "and its family's session{pi} answered in a way this version does not read"
                ))
            }),
            Err(Ended) => nobody(format!(
                "and its family's session{pi} ended before it answered"
            )),
            Err(Refused(why)) => nobody(format!("and its family's session{pi} did not ask: {why}")),
        }
    }
}

/// The join's connection to the hub, kept open while the process lives: the hub answers this
/// process's own requests on it.
struct Link {
    write: tokio::sync::Mutex<tokio::io::WriteHalf<Stream>>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next: AtomicU64,
}

/// Why a request on the [`Link`] has no answer.
enum Unanswered {
    /// The connection ended first.
    Ended,
    /// The hub answered with an error.
    Refused(String),
}
use Unanswered::{Ended, Refused};

impl Link {
    /// Sends a request and waits for its answer. Dropped before the answer (the call that asked
    /// was aborted), it tells the hub it is no longer needed.
    async fn request(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, Unanswered> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().insert(id, tx);
        let mut pending = Pending {
            link: self.clone(),
            id,
            answered: false,
        };
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&line).await.map_err(|_| Ended)?;
        let answer = rx.await;
        pending.answered = true;
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(why)) => Err(Refused(why)),
            Err(_) => Err(Ended),
        }
    }

    async fn send(&self, message: &Value) -> std::io::Result<()> {
        let mut write = self.write.lock().await;
        write.write_all(format!("{message}\n").as_bytes()).await?;
        write.flush().await
    }

    /// A message from the hub: the answer to one of this process's requests.
    fn take(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return;
        };
        let Some(tx) = self.waiting.lock().remove(&id) else {
            return;
        };
        let answer = match message.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(message["error"]["message"]
                .as_str()
                .unwrap_or("the hub answered with an error")
                .to_string()),
        };
        let _ = tx.send(answer);
    }
}

/// A request of the [`Link`] waiting for its answer.
struct Pending {
    link: Arc<Link>,
    id: u64,
    answered: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.answered || self.link.waiting.lock().remove(&self.id).is_none() {
            return;
        }
        let (link, id) = (self.link.clone(), self.id);
        tokio::spawn(async move {
            let cancelled = json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": id, "reason": "no longer needed" },
            });
            let _ = link.send(&cancelled).await;
        });
    }
}

/// Says who it is to the hub at `address`: the hub's answer, the connection kept open while the
/// process lives, and what resolves once the hub ends it.
async fn hello(
    address: &Address,
    token: &Token,
) -> Result<(Joined, Arc<Link>, BoxFuture<'static, ()>), String> {
    let stream = dial(address).await?;
    let (read, mut write) = tokio::io::split(stream);
    let pid = std::process::id();
    let session = SessionInfo {
        id: format!("{pid}.join"),
        pid,
        ui: false,
        label: None,
    };
    let hello = Hello::Join {
        token: token.expose().to_string(),
        session,
    };
    let capability = serde_json::to_value(hello).map_err(|e| e.to_string())?;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "experimental": { wire::CAPABILITY: capability } },
            "clientInfo": { "name": "pi-mcp-native", "version": env!("CARGO_PKG_VERSION") },
        },
    });
    let said = format!("{initialize}\n");
    write
        .write_all(said.as_bytes())
        .await
        .map_err(|e| format!("the family's hub at {} closed: {e}", address.shown()))?;
    let mut lines = BufReader::new(read).lines();
    let answer = loop {
        let line = lines.next_line().await.ok().flatten().ok_or_else(|| {
            format!(
                "the family's hub at {} closed the connection",
                address.shown()
            )
        })?;
        match serde_json::from_str::<Value>(&line) {
            Ok(message) if message["id"] == 1 => break message,
            _ => continue,
        }
    };
    if let Some(message) = answer["error"]["message"].as_str() {
        return Err(format!("the family's hub refused this process: {message}"));
    }
    let joined: Joined = serde_json::from_value(answer["result"]["joined"].clone())
        .map_err(|_| format!("{} does not answer as a family's hub", address.shown()))?;
    let ours = env!("CARGO_PKG_VERSION");
    if major_minor(&joined.version) != major_minor(ours) {
        return Err(format!(
            "the family's hub runs pi-mcp-native {}, this process {ours}",
            joined.version
        ));
    }
    let link = Arc::new(Link {
        write: tokio::sync::Mutex::new(write),
        waiting: Mutex::default(),
        next: AtomicU64::new(2),
    });
    let reading = link.clone();
    let rest = Box::pin(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                reading.take(&message);
            }
        }
        // Whatever waits for an answer now has none.
        reading.waiting.lock().clear();
    });
    Ok((joined, link, rest))
}

fn major_minor(version: &str) -> &str {
    match version.match_indices('.').nth(1) {
        Some((at, _)) => &version[..at],
        None => version,
    }
}

/// The hub as a member process reaches it.
pub struct Remote(pub Arc<Member>);

impl Hub for Remote {
    fn dial(&self) -> BoxFuture<'static, Result<Stream, String>> {
        let member = self.0.clone();
        Box::pin(async move {
            member.join().await?;
            let address = member.address.clone().ok_or("no address")?;
            dial(&address).await
        })
    }

    fn refused(&self, why: String) {
        self.0.turn_off(why);
    }

    fn lost(&self, server: &str) -> String {
        let pid = self
            .0
            .hub_pid()
            .map_or_else(String::new, |pid| format!(" (pid {pid})"));
        self.0.turn_off(format!("the family's hub{pid} exited"));
        format!("the MCP servers of this session's family ran in pi{pid}, which exited; this call was lost. This session starts {server} itself from now on")
    }

    fn runs_in(&self) -> String {
        match self.0.hub_pid() {
            Some(pid) => format!("pi (pid {pid})"),
            None => "the family's hub".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_32_random_bytes_and_names_an_address_that_does_not_show_it() {
        let token = Token::new().unwrap();
        assert_eq!(token.expose().len(), 3 + 43);
        assert_eq!(Token::parse(token.expose()), Ok(token.clone()));
        assert_ne!(Token::new().unwrap(), token);
        for bad in [
            "",
            "v1.",
            "v2.abc",
            "v1.short",
            &format!("{}x", token.expose()),
        ] {
            assert!(
                Token::parse(bad).unwrap_err().contains("malformed"),
                "{bad}"
            );
        }
        let env = HashMap::new();
        let address = Address::of(&token, &env).unwrap();
        let name = token.name();
        assert_eq!(name.len(), 32);
        match &address {
            Address::Abstract(abstract_name) => assert!(abstract_name.ends_with(&name)),
            Address::Path(path) => assert!(path.ends_with(format!("f-{name}.sock"))),
            Address::Pipe(pipe) => assert!(pipe.ends_with(&name)),
        }
        assert!(!format!("{address:?}").contains(&token.expose()[3..]));
        let in_dir = HashMap::from([(FAMILY_DIR.to_string(), "/run/x".to_string())]);
        if cfg!(unix) {
            assert_eq!(
                Address::of(&token, &in_dir).unwrap(),
                Address::Path(PathBuf::from(format!("/run/x/f-{name}.sock")))
            );
            let deep = HashMap::from([(FAMILY_DIR.to_string(), "/d".repeat(60))]);
            assert!(Address::of(&token, &deep)
                .unwrap_err()
                .contains("shorter directory"));
        }
        assert!(address.shown().ends_with('…'));
    }

    #[test]
    fn versions_match_by_major_and_minor() {
        assert_eq!(major_minor("0.1.0"), "0.1");
        assert_eq!(major_minor("1.2"), "1.2");
        assert_ne!(major_minor("0.2.0"), major_minor("0.1.9"));
    }
}
