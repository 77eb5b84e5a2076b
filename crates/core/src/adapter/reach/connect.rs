//! Connecting: the one way to a live connection ([`Kernel::ready`], and [`Kernel::reconnect`]),
//! how a server is opened (its `!command` values run, launched, remote, shared with the user or
//! the family), and a failure recorded and told ([`Kernel::fail`], [`Kernel::refused`]).

use super::{Need, Ready};
use crate::adapter::servers::Adopted;
use crate::adapter::{Kernel, Unavailable};
use crate::config::{self, HeadersCommand, ServerConfig, Sharing, Transport};
use crate::events::Event;
use futures::future::BoxFuture;
use pi_mcp_connection::broker::family::{family, Reach};
use pi_mcp_connection::pool::shared::identity;
use pi_mcp_connection::pool::shared::wire::FamilyAttach;
use pi_mcp_connection::pool::{
    launch, AuthNeed, ClientFeatures, ConnectError, ConnectSpec, Connection, HeadersProgram,
    Keeping, RemoteSpec, RequestError, SharedSpec, StdioSpec, TransportSpec,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a server whose request timed out gets to answer a ping before it is restarted
/// (or its request timeout, when shorter).
const PING_LIMIT: Duration = Duration::from_secs(2);
/// How often a listing is tried again on the connection that replaced the one it was taken on.
const LISTING_RETRIES: usize = 2;

impl Kernel {
    /// A live connection to `name`: reuses the live one (restarting it first when a request
    /// timed out and it does not answer a ping either), else connects, unless the server failed
    /// less than the backoff ago; unless the need is [`Need::Handshake`], also its listing. It
    /// counts as the model wanting the server, but for the gateway's upkeep ([`Need::Upkeep`]).
    pub(crate) async fn ready(
        self: &Arc<Self>,
        name: &str,
        need: Need,
    ) -> Result<Ready, Unavailable> {
        if need != Need::Upkeep {
            self.servers.mark_wanted(name);
        }
        let server = self.servers.enabled(name)?;
        if self.closing.is_cancelled() {
            return Err(Unavailable::ShutDown);
        }
        let conn = match self.pool.get(name) {
            Some(conn) => self.answering(server, conn).await?,
            None => {
                if self.servers.needs_auth(name) && self.sign_in.signed_in_again(name) {
                    self.servers.clear_failure(name);
                }
                if let Some(why) = self.servers.backoff(name, self.timing.failure_backoff) {
                    return Err(why);
                }
                self.connect_to(server, Opening::Reuse).await?
            }
        };
        // The warm path: the listing is there, and taking it again is a check under a lock.
        if let Some(listing) = conn.first_listing() {
            let refreshed = self.take_listing(&conn, &listing) != Adopted::Same;
            return Ok(Ready { conn, refreshed });
        }
        match need {
            Need::Handshake => Ok(Ready {
                conn,
                refreshed: false,
            }),
            Need::Listed | Need::Upkeep => self.listed(conn).await,
        }
    }

    /// Connects `name` afresh, now, ignoring the backoff: the live connection is replaced (and
    /// stopped), and reconnects of one server that overlap share one new connection. It does
    /// not count as the model wanting the server (doctor's check; `connect` marks it wanted).
    pub(crate) async fn reconnect(self: &Arc<Self>, name: &str) -> Result<Ready, Unavailable> {
        let server = self.servers.enabled(name)?;
        if self.closing.is_cancelled() {
            return Err(Unavailable::ShutDown);
        }
        self.servers.clear_failure(name);
        let conn = self.connect_to(server, Opening::Replace).await?;
        self.listed(conn).await
    }

    /// `conn` if it still answers; otherwise it is stopped and the server started again.
    async fn answering(
        self: &Arc<Self>,
        server: &ServerConfig,
        conn: Arc<Connection>,
    ) -> Result<Arc<Connection>, Unavailable> {
        let limit = self.request_timeout(server).min(PING_LIMIT);
        if conn.responsive(limit).await {
            return Ok(conn);
        }
        self.pool.close_stale(&conn).await;
        let reason = format!(
            "a request timed out and the server did not answer a ping within {} s either; restarting it",
            limit.as_secs_f32()
        );
        self.events.emit(Event::Disconnected {
            server: server.name.clone(),
            reason,
        });
        self.connect_to(server, Opening::Reuse).await
    }

    /// Starts or reaches the server and runs the opening handshake. Boxed: every future that
    /// may connect (each call's) would otherwise carry the size of a whole start-up.
    fn connect_to<'a>(
        self: &'a Arc<Self>,
        server: &'a ServerConfig,
        how: Opening,
    ) -> BoxFuture<'a, Result<Arc<Connection>, Unavailable>> {
        Box::pin(self.open_connection(server, how))
    }

    async fn open_connection(
        self: &Arc<Self>,
        server: &ServerConfig,
        how: Opening,
    ) -> Result<Arc<Connection>, Unavailable> {
        let name = &server.name;
        // Made only when a new connection is opened (it may run `!command` values).
        let spec = {
            let (this, server) = (self.clone(), server.clone());
            async move { this.connect_spec(&server).await }
        };
        let opened = match how {
            Opening::Reuse => self.pool.connect_with(name, spec).await,
            Opening::Replace => self.pool.replace_with(name, spec).await,
        };
        if server.sharing == Sharing::Family {
            self.tell_family_off();
        }
        match opened {
            Ok(conn) => {
                if let Some(kind) = conn.remote_kind() {
                    self.servers.set_remote_kind(name, kind);
                }
                Ok(conn)
            }
            Err(_) if self.closing.is_cancelled() => Err(Unavailable::ShutDown),
            Err(ConnectError::Closed) => Err(Unavailable::ShutDown),
            Err(ConnectError::NeedsAuth(need)) => Err(self.refused(server, need)),
            Err(ConnectError::Failed(why)) => Err(self.fail(name, Unavailable::StartFailed(why))),
        }
    }

    /// Waits for the first listing of `conn` and takes it as the server's metadata (registry,
    /// cache, an event for JS) unless it already was. A listing lost because the connection was
    /// replaced meanwhile is taken from the connection that replaced it; a server that cannot be
    /// listed is stopped.
    async fn listed(self: &Arc<Self>, mut conn: Arc<Connection>) -> Result<Ready, Unavailable> {
        let name = conn.server.clone();
        let server = self.servers.enabled(&name)?;
        let mut retries = 0;
        loop {
            let error = match conn.listed(&self.list_bounds(server)).await {
                Ok(listing) => {
                    let refreshed = self.take_listing(&conn, &listing) != Adopted::Same;
                    return Ok(Ready { conn, refreshed });
                }
                Err(RequestError::NeedsAuth(need)) => return Err(self.refused(server, need)),
                Err(error) => error,
            };
            if self.closing.is_cancelled() {
                return Err(Unavailable::ShutDown);
            }
            if conn.was_stopped() && retries < LISTING_RETRIES {
                retries += 1;
                conn = self.connect_to(server, Opening::Reuse).await?;
                continue;
            }
            self.pool.close_stale(&conn).await;
            conn.close().await;
            return Err(self.fail(&name, Unavailable::ListingFailed(error)));
        }
    }

    /// Records that `server` refused our credentials (with its challenge, for the next sign-in).
    pub(crate) fn refused(&self, server: &ServerConfig, need: AuthNeed) -> Unavailable {
        let fix = self.sign_in.refused(server, &need);
        self.fail(
            &server.name,
            Unavailable::NeedsAuth {
                why: need.message,
                fix,
            },
        )
    }

    /// Records that `name` could not be used (for the backoff and `status`), tells JS, and
    /// returns why.
    pub(crate) fn fail(&self, name: &str, cause: Unavailable) -> Unavailable {
        self.servers.record_failure(name, cause.clone());
        self.events.emit(Event::Failed {
            server: name.to_string(),
            error: pi_mcp_connection::clean::text(&cause.reason(name)).into_owned(),
            needs_auth: cause.needs_auth(),
        });
        cause
    }

    /// How to open `server`, its `!command` values run.
    async fn connect_spec(&self, server: &ServerConfig) -> Result<ConnectSpec, ConnectError> {
        let ctx = config::RunContext {
            env: &self.env,
            cwd: &self.cwd,
        };
        let failed = |e: config::ValueError| ConnectError::Failed(e.to_string());
        let client = self.config.client_settings(server).features();
        let mut keeper = None;
        let transport = match &server.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let env: Vec<(String, String)> = config::resolve_all("env", env, &ctx)
                    .await
                    .map_err(failed)?
                    .into_iter()
                    .map(|(name, value)| (name, value.expose().to_string()))
                    .collect();
                let stdio = self.stdio_spec(server, command, args, &env, cwd.as_ref());
                match &server.sharing {
                    Sharing::User { env: matched } => TransportSpec::Shared(SharedSpec {
                        identity: identity::Launch {
                            stdio: &stdio,
                            declared: &env.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>(),
                            matched,
                            session_env: &self.env,
                            protocol: server.protocol,
                            client: &client,
                        }
                        .identity(),
                        stdio,
                        idle: self.idle_limit(server),
                        broker: self.broker.clone(),
                        family: None,
                    }),
                    Sharing::Family => {
                        let (transport, tie) = self.in_family(server, stdio, &client).await;
                        keeper = tie;
                        transport
                    }
                    Sharing::Own => TransportSpec::Stdio(stdio),
                }
            }
            Transport::Http {
                url,
                headers,
                auth,
                ca_file,
                request_headers,
            } => {
                let (authorization, credentials) = self.sign_in.credentials(server, auth).await?;
                TransportSpec::Remote(RemoteSpec {
                    url: url.clone(),
                    headers: config::resolve_all("header", headers, &ctx)
                        .await
                        .map_err(failed)?,
                    authorization,
                    credentials,
                    ca_file: ca_file.clone(),
                    prefer: self.servers.remote_kind(&server.name),
                    signer: match request_headers {
                        Some(command) => Some(self.headers_program(command)?),
                        None => None,
                    },
                })
            }
            Transport::Socket { path } => TransportSpec::Socket(path.clone()),
        };
        Ok(ConnectSpec {
            server: server.name.clone(),
            transport,
            protocol: server.protocol,
            timeout: self.request_timeout(server),
            debug: server.debug,
            client,
            keeper,
        })
    }

    /// How to reach `server`, shared with the family, launched as `stdio`: through the hub when
    /// another connection runs it, else started here (and bound to the family by the keeping).
    async fn in_family(
        &self,
        server: &ServerConfig,
        stdio: StdioSpec,
        client: &ClientFeatures,
    ) -> (TransportSpec, Option<Keeping>) {
        let roots = client.roots.then(|| self.cwd.clone());
        let identity = identity::family(
            &server.name,
            &stdio,
            server.protocol,
            client,
            &self.agent_dir,
            roots.as_deref(),
        );
        let attach = FamilyAttach {
            token: None,
            agent_dir: self.agent_dir.clone(),
            roots_cwd: roots,
        };
        match family()
            .reach(identity.clone(), &self.in_family, attach)
            .await
        {
            Reach::Guest(reach) => {
                let shared = SharedSpec {
                    stdio,
                    identity,
                    idle: self.idle_limit(server),
                    broker: self.broker.clone(),
                    family: Some(reach),
                };
                (TransportSpec::Shared(shared), None)
            }
            Reach::Own(keeping) => (TransportSpec::Stdio(stdio), Some(keeping)),
        }
    }

    /// How to run a server's `requestHeadersCommand`: in the session's directory with Pi's
    /// environment plus its own; not at all from a project nobody trusted by a decision.
    fn headers_program(&self, command: &HeadersCommand) -> Result<HeadersProgram, ConnectError> {
        if command.untrusted {
            return Err(ConnectError::Failed(command.refusal()));
        }
        Ok(HeadersProgram {
            spec: StdioSpec {
                command: command.command.clone(),
                args: command.args.clone(),
                env: config::server_env(&self.env, true, &command.env),
                cwd: self.cwd.clone(),
            },
            timeout: command.timeout,
        })
    }

    /// How to start a stdio server: Pi's environment plus the server's, the session's cwd unless
    /// it has its own, and `npx`/`uvx` replaced by the binary they would run when it is known.
    fn stdio_spec(
        &self,
        server: &ServerConfig,
        command: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&PathBuf>,
    ) -> StdioSpec {
        let cwd = cwd.cloned().unwrap_or_else(|| self.cwd.clone());
        let env = config::server_env(&self.env, server.inherit_env, env);
        let lookup = launch::Lookup {
            cwd: &cwd,
            env: &env,
        };
        let (command, args) = match launch::resolve(command, args, &lookup, &self.launch_memo) {
            Some(direct) => (direct.command, direct.args),
            None => (command.to_string(), args.to_vec()),
        };
        StdioSpec {
            command,
            args,
            env,
            cwd,
        }
    }

    /// Says once, after a connect, that this process runs its own servers, not its family's.
    fn tell_family_off(&self) {
        if let Some(text) = family().take_warning() {
            self.events.emit(Event::FamilyOff { text });
        }
    }
}

/// Whether opening reuses a live connection (and joins an attempt under way) or replaces it.
#[derive(Clone, Copy)]
enum Opening {
    Reuse,
    Replace,
}
