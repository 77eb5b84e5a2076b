//! A session's family (README "Shared servers"): the session, every process it starts that
//! inherits its environment, and the other sessions of its process share their stdio servers.
//! Each server has one owner, the session whose pool started it (its own calls go straight to
//! it, as without a family), else the hub. The hub is the broker in family mode, inside the
//! process of the session that hosts the family: the others reach a server through it, the
//! sessions of its own process over in-process duplexes, and, once its socket is bound, the
//! processes that inherited the family's token. Layout: `registry` (which connection runs each
//! server) · `tie` (a connection's bond to the family: its questions, its notices, its handover
//! to the hub when its session ends) · this file (the process's family, its sessions, the hub).

mod registry;
mod tie;

use super::{hop::Hop, Broker, Mode, Notes};
use crate::family_approval::{Answerer, Ask, Verdict};
use crate::pool::shared::family::{Address, Member, Remote, Token};
use crate::pool::shared::identity;
use crate::pool::shared::wire::{Attach, FamilyAttach, Joined, SessionInfo, FAMILY_VAR};
use crate::pool::shared::{Broker as Session, FamilyReach, Hub, Stream};
use crate::pool::{Connection, Host, Keeping};
use crate::server_log::ServerLog;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use registry::{Registry, Reserved};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, OnceLock, Weak};

/// Bytes a duplex to the hub buffers each way.
const DUPLEX_BUFFER: usize = 64 * 1024;

/// The family of this process: its sessions, the connection that runs each of its servers, and
/// its hub, made when a second session needs a server.
pub struct Family {
    registry: Arc<Registry>,
    hub: Mutex<Option<Arc<Broker>>>,
    sessions: Mutex<Vec<Weak<LocalSession>>>,
    /// This process inherited a family's token (read from the first session's environment).
    member: OnceLock<Arc<Member>>,
    /// The family this process hosts, once its hub listens (or why it cannot).
    hosted: OnceLock<Result<Hosted, String>>,
}

static FAMILY: LazyLock<Family> = LazyLock::new(|| Family {
    registry: Arc::default(),
    hub: Mutex::default(),
    sessions: Mutex::default(),
    member: OnceLock::new(),
    hosted: OnceLock::new(),
});

/// The family this process hosts: its token, and where its hub listens.
struct Hosted {
    token: Token,
    address: Address,
}

/// What this process is in its family, for status.
#[derive(Clone, Debug, PartialEq)]
pub struct Role {
    pub role: RoleName,
    /// Processes of the family connected to its hub (a host's).
    pub members: Option<usize>,
    /// Where the hub listens (the start of its name).
    pub endpoint: Option<String>,
    /// The hub's process (a member's).
    pub hub_pid: Option<u32>,
    /// Why it runs its own servers, or cannot host.
    pub why: Option<String>,
}

/// What a process is in its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleName {
    /// Its hub listens for the processes it starts.
    Host,
    /// It inherited a family's token.
    Member,
    /// It inherited one, but runs its own servers.
    Off,
    Alone,
}

impl RoleName {
    pub const ALL: [RoleName; 4] = [
        RoleName::Host,
        RoleName::Member,
        RoleName::Off,
        RoleName::Alone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RoleName::Host => "host",
            RoleName::Member => "member",
            RoleName::Off => "off",
            RoleName::Alone => "alone",
        }
    }
}

/// This process's family.
pub fn family() -> &'static Family {
    &FAMILY
}

/// A session of this process, as its family knows it.
pub struct LocalSession {
    /// Who it is (its id, whether it has a UI, its label).
    pub info: Arc<Session>,
    /// Where its questions are asked (its person, its model).
    pub host: Arc<dyn Host>,
    /// Answers the approval questions of the family's members without a UI, when it has one.
    pub answerer: Arc<dyn Answerer>,
}

/// How a session reaches one of its family's servers.
pub enum Reach {
    /// Another connection runs it: through the hub.
    Guest(FamilyReach),
    /// None does: the session starts it, bound to the family.
    Own(Keeping),
}

impl Family {
    /// `session` belongs to the family for as long as it is kept.
    pub fn enter(&self, session: LocalSession) -> Arc<LocalSession> {
        let session = Arc::new(session);
        let mut sessions = self.sessions.lock();
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        session
    }

    /// Takes the token in a session's environment (`env`), if any: this process is a member
    /// of that family, unless it is the token this process hosts (a session opened again).
    pub fn inherit(&self, env: &HashMap<String, String>) {
        let Some(value) = env.get(FAMILY_VAR) else {
            return;
        };
        let hosting = self.hosted.get().and_then(|h| h.as_ref().ok());
        if hosting.is_some_and(|hosted| hosted.token.expose() == value) {
            return;
        }
        self.member.get_or_init(|| Member::inherit(value, env));
    }

    /// A member that still reaches its hub.
    fn joining(&self) -> Option<&Arc<Member>> {
        self.member.get().filter(|member| member.off().is_none())
    }

    /// The token the processes this one starts inherit: in a member, the one it inherited (its
    /// children join the same family); else this process's own, its hub listening from now on
    /// (bound once; sessions of `agent_dir`, addresses from `env`).
    pub fn token(&self, agent_dir: &Path, env: &HashMap<String, String>) -> Result<String, String> {
        if let Some(member) = self.member.get() {
            return match member.token() {
                Some(token) => Ok(token.expose().to_string()),
                None => Err(member.off().unwrap_or_default()),
            };
        }
        let hosted = self.hosted.get_or_init(|| self.bind(agent_dir, env));
        hosted
            .as_ref()
            .map(|hosted| hosted.token.expose().to_string())
            .map_err(Clone::clone)
    }

    /// A new token, and the hub listening at its address (in a runtime).
    fn bind(&self, agent_dir: &Path, env: &HashMap<String, String>) -> Result<Hosted, String> {
        let token = Token::new()?;
        let address = Address::of(&token, env)?;
        let listener = super::Listener::family(&address)
            .map_err(|e| format!("the family's hub cannot listen at {}: {e}", address.shown()))?;
        let hub = self.hub(agent_dir);
        if let Some(family) = hub.family() {
            family.listening(token.expose(), address.shown());
        }
        if let Address::Path(socket) = &address {
            crate::pool::watchdog::remove_at_exit(socket);
        }
        tokio::spawn(async move { super::listen::accept(&hub, listener).await });
        Ok(Hosted { token, address })
    }

    /// Whether this process hosts a family (its hub listens for the processes it starts).
    pub fn hosts(&self) -> bool {
        matches!(self.hosted.get(), Some(Ok(_)))
    }

    /// What this process is in its family.
    pub fn role(&self) -> Role {
        let alone = Role {
            role: RoleName::Alone,
            members: None,
            endpoint: None,
            hub_pid: None,
            why: None,
        };
        if let Some(member) = self.member.get() {
            return Role {
                role: if member.off().is_some() {
                    RoleName::Off
                } else {
                    RoleName::Member
                },
                endpoint: member.address().map(Address::shown),
                hub_pid: member.hub_pid(),
                why: member.off(),
                ..alone
            };
        }
        match self.hosted.get() {
            Some(Ok(hosted)) => Role {
                role: RoleName::Host,
                members: Some(self.current_hub().map_or(0, |hub| hub.members())),
                endpoint: Some(hosted.address.shown()),
                ..alone
            },
            Some(Err(why)) => Role {
                why: Some(why.clone()),
                ..alone
            },
            None => alone,
        }
    }

    /// The warning that this process runs its own servers, the first time it is asked.
    pub fn take_warning(&self) -> Option<String> {
        self.member.get()?.take_warning()
    }

    /// How `session` reaches the server `identity` names (waiting for a start under way): in a
    /// member, through the hub of the family it inherited, unless a session of this process
    /// runs the server already.
    pub async fn reach(
        &'static self,
        identity: String,
        session: &Arc<LocalSession>,
        mut attach: FamilyAttach,
    ) -> Reach {
        if let Some(member) = self.joining() {
            if self.registry.live(&identity).is_none() {
                attach.token = member.token().map(|t| t.expose().to_string());
                return Reach::Guest(FamilyReach {
                    hub: Arc::new(Remote(member.clone())),
                    attach,
                });
            }
        }
        match self.registry.reserve(&identity).await {
            Reserved::Live(_) => {
                let hub = self.hub(&attach.agent_dir);
                Reach::Guest(FamilyReach {
                    hub: Arc::new(InProcess(Arc::downgrade(&hub))),
                    attach,
                })
            }
            Reserved::Claimed(claim) => Reach::Own(tie::Tie::owned(identity, session, claim)),
        }
    }

    /// The hub, made now (its notes going to `agent_dir`'s `mcp.log`) when there is none. One
    /// whose runtime is gone (a test's) is replaced.
    fn hub(&self, agent_dir: &Path) -> Arc<Broker> {
        let mut hub = self.hub.lock();
        match &*hub {
            Some(running) if running.is_running() => running.clone(),
            _ => hub.insert(Broker::hub(agent_dir)).clone(),
        }
    }

    /// The hub, if there is one.
    fn current_hub(&self) -> Option<Arc<Broker>> {
        self.hub.lock().clone().filter(|hub| hub.is_running())
    }

    /// The session of this process that answers questions for the others: the latest with a UI.
    pub fn ui_session(&self) -> Option<Arc<LocalSession>> {
        let sessions = self.sessions.lock();
        sessions
            .iter()
            .rev()
            .filter_map(Weak::upgrade)
            .find(|s| s.info.session().ui)
    }

    /// Asks the family's UI whether the use `ask` names, which `session` has nobody to ask
    /// about, may go ahead: another session of this process with a UI, else the hub's process
    /// when this one is a member. `None` when `session` is in no family with others.
    pub async fn approve(&self, session: &Arc<LocalSession>, ask: Ask) -> Option<Verdict> {
        let here = self.ui_session().filter(|ui| !Arc::ptr_eq(ui, session));
        if let Some(ui) = here {
            return Some(ui.answerer.answer(ask, Some(std::process::id())).await);
        }
        Some(self.member.get()?.approve(&ask).await)
    }

    /// The sessions using `conn` (which this session's pool runs): this one and the family's
    /// through the hub.
    pub fn sessions_using(&self, conn: &Arc<Connection>) -> usize {
        1 + self.current_hub().map_or(0, |hub| hub.guests_of(conn))
    }
}

/// Who a session is, for a question asked in another's UI: `subagent "worker" (pid 4242)`.
pub fn who(session: &SessionInfo) -> String {
    let label = session.label.as_deref().unwrap_or("another session");
    format!("{} (pid {})", crate::clean::line(label), session.pid)
}

/// What a broker in family mode knows besides its table of servers.
pub struct FamilyMode {
    /// The family's token, once the hub listens for other processes.
    token: OnceLock<String>,
    /// Where it listens, as status shows it.
    endpoint: OnceLock<String>,
    /// The servers' log messages go to their session's agent dir's `mcp.log`.
    logs: Mutex<HashMap<PathBuf, ServerLog>>,
}

impl FamilyMode {
    /// The hub listens for the processes that inherit `token`, at `endpoint` (as shown).
    fn listening(&self, token: &str, endpoint: String) {
        let _ = self.token.set(token.to_string());
        let _ = self.endpoint.set(endpoint);
    }

    pub fn endpoint(&self) -> String {
        self.endpoint
            .get()
            .cloned()
            .unwrap_or_else(|| "in this process".into())
    }

    /// Whether the hub serves `attach`: from its own process, or with the family's token; and
    /// only under the identity its launch has, so a member reaches no process whose whole
    /// launch (secrets included) it cannot state.
    pub fn admits(&self, in_process: bool, attach: &Attach) -> Result<(), String> {
        let Some(family) = &attach.family else {
            return Err("this is a family's hub; it serves the family's servers only".into());
        };
        if !in_process && !self.token_is(family.token.as_deref().unwrap_or_default()) {
            return Err("the family's token does not match".into());
        }
        let launch = identity::family(
            &attach.name,
            &attach.launch,
            attach.protocol,
            &attach.client,
            &family.agent_dir,
            family.roots_cwd.as_deref(),
        );
        match launch == attach.identity {
            true => Ok(()),
            false => Err(format!(
                "{}: the launch does not match the identity it was asked under",
                attach.name
            )),
        }
    }

    fn token_is(&self, given: &str) -> bool {
        self.token
            .get()
            .is_some_and(|token| same_secret(token.as_bytes(), given.as_bytes()))
    }

    pub fn log(&self, agent_dir: &Path) -> ServerLog {
        self.logs
            .lock()
            .entry(agent_dir.to_path_buf())
            .or_insert_with(|| ServerLog::new(agent_dir.join("mcp.log")))
            .clone()
    }
}

impl Broker {
    /// The connection to the family's server `identity`: the one running (a session's of this
    /// process, or the hub's), else one the hub's own pool starts (`spec`).
    pub(super) async fn reach(
        self: &Arc<Self>,
        identity: &str,
        mut spec: crate::pool::ConnectSpec,
    ) -> Result<Arc<Connection>, crate::pool::ConnectError> {
        match family().registry.reserve(identity).await {
            Reserved::Live(conn) => {
                self.watch_upstream(identity, &conn);
                Ok(conn)
            }
            Reserved::Claimed(claim) => {
                spec.keeper = Some(tie::Tie::hub(identity.to_string(), claim));
                self.pool.connect(spec).await
            }
        }
    }

    /// Tells the sessions using `conn` (run by a session of this process) when it ends, however
    /// it ends: its session stopped it (idle, restarted) or it was lost.
    fn watch_upstream(self: &Arc<Self>, identity: &str, conn: &Arc<Connection>) {
        {
            let mut shares = self.shares.lock();
            let Some(share) = shares.servers.get_mut(identity) else {
                return;
            };
            if share.watched == Some(conn.id) || self.pool.peek(identity).is_some() {
                return;
            }
            share.watched = Some(conn.id);
        }
        let (this, identity, ended) = (Arc::downgrade(self), identity.to_string(), conn.ended());
        tokio::spawn(async move {
            ended.await;
            if let Some(hub) = this.upgrade() {
                let why = "the session of the family that ran the server stopped it; the next use starts it again";
                hub.lost(&identity, why);
            }
        });
    }

    /// Whether the hops of `share` use a connection a session of this process runs (not the
    /// hub's own, nor one it took over).
    pub(super) fn owned_elsewhere(&self, identity: &str, share: &super::Share) -> bool {
        let upstream = share.hops.iter().find_map(|hop| hop.attached());
        upstream.is_some_and(|a| {
            self.family().is_some()
                && !share
                    .held
                    .as_ref()
                    .is_some_and(|held| Arc::ptr_eq(held, &a.upstream))
                && !self
                    .pool
                    .peek(identity)
                    .is_some_and(|own| Arc::ptr_eq(&own, &a.upstream))
        })
    }

    /// How many sessions of the family use `conn` through the hub.
    pub(super) fn guests_of(&self, conn: &Arc<Connection>) -> usize {
        let shares = self.shares.lock();
        shares
            .servers
            .values()
            .filter(|share| {
                share.hops.iter().any(|hop| {
                    hop.attached()
                        .is_some_and(|a| Arc::ptr_eq(&a.upstream, conn))
                })
            })
            .map(|share| share.sessions())
            .sum()
    }

    /// The session that runs `conn` ends: while other sessions use it, or one is attaching to it
    /// (it reached it in the registry), the hub keeps it running (it stops once they have left,
    /// as the hub's own servers do). Whether it did.
    pub(super) fn keep(&self, identity: &str, conn: &Arc<Connection>) -> bool {
        let mut shares = self.shares.lock();
        let Some(share) = shares.servers.get_mut(identity) else {
            return false;
        };
        let used = share.attaching > 0
            || share.hops.iter().any(|hop| {
                hop.attached()
                    .is_some_and(|a| Arc::ptr_eq(&a.upstream, conn))
            });
        if used {
            share.held = Some(conn.clone());
            let name = share.name.clone();
            drop(shares);
            self.note(&format!(
                "took over {name} ({identity}): the session that ran it ended while others use it"
            ));
        }
        used
    }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

impl Broker {
    /// A family's hub, inside this process; its own notes go to `agent_dir`'s `mcp.log`.
    pub fn hub(agent_dir: &Path) -> Arc<Broker> {
        let family = FamilyMode {
            token: OnceLock::new(),
            endpoint: OnceLock::new(),
            logs: Mutex::default(),
        };
        let notes = Notes::Log(family.log(agent_dir));
        Broker::with_mode(Mode::Family(family), notes)
    }

    /// Processes of the family that joined its hub.
    pub fn members(&self) -> usize {
        let shares = self.shares.lock();
        shares.hops.values().filter(|hop| hop.joined()).count()
    }

    /// Whether it still serves: its upkeep runs.
    pub fn is_running(&self) -> bool {
        !self.running.is_cancelled()
    }

    /// A connection to the hub from a session of its own process.
    pub fn in_process(self: &Arc<Self>) -> Stream {
        let (ours, theirs) = tokio::io::duplex(DUPLEX_BUFFER);
        tokio::spawn(super::hop::serve(
            self.clone(),
            theirs,
            super::hop::Peer::InProcess,
        ));
        Stream::new(ours)
    }

    /// A process that inherited the family's token joins: the hub's version and pid.
    pub(super) fn join_family(
        &self,
        hop: &Hop,
        token: &str,
        session: &SessionInfo,
    ) -> Result<Value, String> {
        let family = self.family().ok_or("not a family's hub")?;
        if !family.token_is(token) {
            return Err("the family's token does not match".into());
        }
        hop.join();
        let who = session
            .label
            .as_deref()
            .map_or_else(String::new, |label| format!(" ({label})"));
        self.note(&format!("pid {}{who} joined the family", hop.peer_pid()));
        let joined = Joined {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
        };
        Ok(json!({
            "capabilities": {},
            "serverInfo": { "name": "pi-mcp-native-family", "version": joined.version },
            "joined": joined,
        }))
    }
}

/// The hub as the sessions of its own process reach it.
pub struct InProcess(pub Weak<Broker>);

impl Hub for InProcess {
    fn dial(&self) -> BoxFuture<'static, Result<Stream, String>> {
        let hub = self.0.upgrade();
        Box::pin(async move {
            hub.map(|hub| hub.in_process())
                .ok_or_else(|| "the family's hub is gone".to_string())
        })
    }

    fn refused(&self, _why: String) {}

    fn lost(&self, server: &str) -> String {
        format!("the family's hub in this process ended the connection; this session starts {server} itself from now on")
    }

    fn runs_in(&self) -> String {
        "another session of this process".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"v1.abc", b"v1.abc"));
        assert!(!same_secret(b"v1.abc", b"v1.abd"));
        assert!(!same_secret(b"v1.abc", b"v1.ab"));
        assert!(!same_secret(b"", b"x"));
    }
}
