//! Getting a live connection to a server, and keeping its metadata (catalog and cache) in step
//! with what the server lists.

use super::servers::Adopted;
use super::{now_ms, Adapter, ServerMeta, Unavailable};
use crate::cache::{self, CacheEntry};
use crate::config::{self, ServerConfig, Transport};
use crate::pool::{
    launch, ConnectError, ConnectSpec, Connection, Listing, Notice, RemoteSpec, StdioSpec,
    TransportSpec,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a server that answered a call before it was listed must be idle before it is.
const LIST_WHEN_IDLE: Duration = Duration::from_millis(200);
/// Coalesces bursts of `list_changed` notifications into one re-listing.
const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(250);
/// How long a server whose request timed out gets to answer a ping before it is restarted
/// (or its request timeout, when shorter).
const PING_LIMIT: Duration = Duration::from_secs(2);

impl Adapter {
    /// The live connection to `name`, listed and its listing taken as the server's metadata;
    /// connects when there is none, unless the server failed recently (then the error says
    /// since when and why). A server that let a request time out and does not answer a ping
    /// either is restarted.
    pub(super) async fn connected(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<Arc<Connection>, Unavailable> {
        let (conn, event) = self.handshaken(name).await?;
        self.take_listing(&conn, event).await?;
        Ok(conn)
    }

    /// Like [`Adapter::connected`], but returns as soon as the opening handshake is done, with
    /// the event (`connected` or `reconnected`) that [`Adapter::take_listing`] is to emit.
    pub(super) async fn handshaken(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<(Arc<Connection>, &'static str), Unavailable> {
        if let Some(conn) = self.pool.get(name) {
            let limit = self
                .server(name)
                .map_or(PING_LIMIT, |s| self.request_timeout(s).min(PING_LIMIT));
            if conn.responsive(limit).await {
                return Ok((conn, "connected"));
            }
            self.pool.close_stale(&conn).await;
            let reason = format!(
                "a request timed out and the server did not answer a ping within {} s either; restarting it",
                limit.as_secs_f32()
            );
            self.events
                .emit("disconnected", json!({ "server": name, "reason": reason }));
            return self.reach(name, "reconnected").await;
        }
        if let Some(why) = self.backoff(name) {
            return Err(why);
        }
        self.reach(name, "connected").await
    }

    /// Connects `name` regardless of backoff; `event` (`connected` or `reconnected`) tells JS
    /// when the connection brought new metadata.
    pub(super) async fn connect_now(
        self: &Arc<Self>,
        name: &str,
        event: &'static str,
    ) -> Result<Arc<Connection>, Unavailable> {
        let (conn, event) = self.reach(name, event).await?;
        self.take_listing(&conn, event).await?;
        Ok(conn)
    }

    /// Starts or reaches `name` and runs the opening handshake; a failure is recorded (for the
    /// backoff and `status`) and reported.
    async fn reach(
        self: &Arc<Self>,
        name: &str,
        event: &'static str,
    ) -> Result<(Arc<Connection>, &'static str), Unavailable> {
        let server = self
            .server(name)
            .ok_or_else(|| self.servers.not_configured())?;
        // Made only when a new connection is opened (it may run `!command` values).
        let spec = {
            let (this, server) = (self.clone(), server.clone());
            async move { this.connect_spec(&server).await }
        };
        let connected = self.pool.connect_with(name, spec).await;
        match connected {
            Ok(conn) => {
                if let Some(kind) = conn.remote_kind() {
                    self.servers.set_remote_kind(name, kind);
                }
                Ok((conn, event))
            }
            Err(ConnectError::NeedsAuth(why)) => {
                let fix = self.auth_fix(server, &why);
                Err(self.fail(name, Unavailable::NeedsAuth { why, fix }))
            }
            Err(ConnectError::Failed(why)) => Err(self.fail(name, Unavailable::StartFailed(why))),
        }
    }

    /// Waits for the first listing of `conn` and, the first time, takes it as the server's
    /// metadata (catalog, cache, `event` for JS). A server that cannot be listed is closed.
    pub(super) async fn take_listing(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        event: &str,
    ) -> Result<(), Unavailable> {
        let name = conn.server.as_str();
        let Some(server) = self.server(name) else {
            return Err(self.servers.not_configured());
        };
        match conn.listed(self.request_timeout(server)).await {
            Ok(listing) => {
                if self.adopt(server, conn, &listing) != Adopted::Same {
                    self.save_metadata(name);
                    let tools = self.servers.view().server_tools(name).len();
                    self.events
                        .emit(event, json!({ "server": name, "tools": tools }));
                }
                Ok(())
            }
            Err(e) => {
                self.pool.close_stale(conn).await;
                conn.close().await;
                Err(self.fail(name, Unavailable::ListingFailed(e)))
            }
        }
    }

    /// [`Adapter::take_listing`] in the background once `conn` has been idle for a moment, so
    /// that it holds up no call (`shutdown` waits for it).
    pub(super) fn take_listing_when_idle(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        event: &'static str,
    ) {
        let (this, conn) = (self.clone(), conn.clone());
        self.background.spawn(async move {
            tokio::select! {
                _ = conn.until_idle(LIST_WHEN_IDLE) => {}
                _ = this.closing.cancelled() => return,
            }
            if conn.is_alive() {
                let _ = this.take_listing(&conn, event).await;
            }
        });
    }

    /// Records that `name` could not be used (for the backoff and `status`), tells JS, and
    /// returns why.
    fn fail(&self, name: &str, cause: Unavailable) -> Unavailable {
        self.servers.record_failure(name, cause.clone());
        self.events.emit(
            "failed",
            json!({ "server": name, "error": cause.reason(name), "needsAuth": cause.needs_auth() }),
        );
        cause
    }

    /// Why `name` is skipped for now, if it failed less than the backoff ago.
    pub(super) fn backoff(&self, name: &str) -> Option<Unavailable> {
        self.servers.backoff(name, self.timing.failure_backoff)
    }

    /// How to open `server`, its `!command` values run.
    async fn connect_spec(&self, server: &ServerConfig) -> Result<ConnectSpec, ConnectError> {
        let ctx = config::RunContext {
            env: &self.env,
            cwd: &self.cwd,
        };
        let failed = |e: config::ValueError| ConnectError::Failed(e.to_string());
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
                TransportSpec::Stdio(self.stdio_spec(server, command, args, &env, cwd.as_ref()))
            }
            Transport::Http {
                url,
                headers,
                auth,
                ca_file,
            } => TransportSpec::Remote(RemoteSpec {
                url: url.clone(),
                headers: config::resolve_all("header", headers, &ctx)
                    .await
                    .map_err(failed)?,
                authorization: self.authorization(&server.name, auth)?,
                ca_file: ca_file.clone(),
                prefer: self.servers.remote_kind(&server.name),
            }),
        };
        Ok(ConnectSpec {
            server: server.name.clone(),
            transport,
            protocol: server.protocol,
            timeout: self.request_timeout(server),
            debug: server.debug,
            client: self.config.client_settings(server).features(),
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

    /// Takes `listing` from `conn` as the server's metadata, unless it already came from `conn`.
    fn adopt(&self, server: &ServerConfig, conn: &Connection, listing: &Listing) -> Adopted {
        self.servers
            .adopt(&server.name, conn.id, || meta_of(conn, listing))
    }

    /// Persists the server's metadata in the background (off the call's path); `shutdown`
    /// waits for it.
    fn save_metadata(self: &Arc<Self>, name: &str) {
        let (this, name) = (self.clone(), name.to_string());
        self.background.spawn(async move {
            if let Some(server) = this.server(&name) {
                this.write_cache(server).await;
            }
        });
    }

    /// Persists the server's current metadata (read-merge-write under the cache lock).
    async fn write_cache(&self, server: &ServerConfig) {
        let Some(meta) = self.servers.meta(&server.name) else {
            return;
        };
        let entry = CacheEntry {
            config_hash: cache::config_hash(&server.entry, &self.env),
            tools: meta.tools.iter().map(|t| Value::clone(t)).collect(),
            resources: meta.resources.clone(),
            prompts: meta.prompts.clone(),
            instructions: meta.instructions.clone(),
            cached_at: now_ms(),
            ttl_ms: None,
            transport: self
                .servers
                .remote_kind(&server.name)
                .map(|kind| kind.name().to_string()),
        };
        let (path, name) = (self.cache_path.clone(), server.name.clone());
        let written =
            tokio::task::spawn_blocking(move || cache::write_entries(&path, &[(name, entry)]))
                .await;
        if let Ok(Err(e)) = written {
            eprintln!(
                "pi-mcp-native: could not write {}: {e}",
                self.cache_path.display()
            );
        }
    }

    /// Re-lists a connected server that announced a change at `announced`, and updates catalog
    /// and cache.
    async fn relist(self: &Arc<Self>, name: &str, announced: Instant) {
        let (Some(conn), Some(server)) = (self.pool.peek(name), self.server(name)) else {
            return;
        };
        if conn.first_listing_covers(announced) {
            return;
        }
        let before = conn.listing();
        if let Ok(listing) = conn.relist(self.request_timeout(server)).await {
            // Many servers announce a change while starting up, before the first listing.
            if listing == before {
                return;
            }
            self.servers.replace(name, meta_of(&conn, &listing));
            self.write_cache(server).await;
            let tools = self.servers.view().server_tools(name).len();
            self.events
                .emit("catalog-changed", json!({ "server": name, "tools": tools }));
        }
    }

    /// Reacts to what connections report until shutdown.
    pub(super) async fn watch_notices(self: Arc<Self>, mut notices: UnboundedReceiver<Notice>) {
        // Per server, when the latest change still to be re-listed was announced.
        let pending = Arc::new(parking_lot::Mutex::new(HashMap::new()));
        loop {
            let notice = tokio::select! {
                notice = notices.recv() => notice,
                _ = self.closing.cancelled() => None,
            };
            match notice {
                None => return,
                Some(Notice::ListChanged { server, at }) => {
                    if pending.lock().insert(server.clone(), at).is_none() {
                        let (this, pending) = (self.clone(), pending.clone());
                        tokio::spawn(async move {
                            tokio::time::sleep(LIST_CHANGED_DEBOUNCE).await;
                            let announced = pending.lock().remove(&server);
                            if let Some(announced) = announced {
                                this.relist(&server, announced).await;
                            }
                        });
                    }
                }
                Some(Notice::Lost { server, why }) => {
                    self.events
                        .emit("disconnected", json!({ "server": server, "reason": why }));
                }
            }
        }
    }
}

/// The metadata `listing` of `conn` gives its server.
fn meta_of(conn: &Connection, listing: &Listing) -> ServerMeta {
    ServerMeta {
        tools: listing.tools.iter().cloned().map(Arc::new).collect(),
        resources: listing.resources.clone(),
        prompts: conn.has_prompts().then(|| listing.prompts.clone()),
        instructions: conn.instructions.clone(),
        live_connection: Some(conn.id),
    }
}
