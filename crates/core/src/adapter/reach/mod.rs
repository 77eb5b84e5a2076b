//! Reaching a server, as one module: connecting (`connect`), listing the servers whose tools
//! are not known (`unlisted`), keeping each in the state its lifecycle asks for and watching what
//! connections report (`lifecycle`), and the family's variable (`family`). The rest of the
//! adapter uses this API only, each item crate-visible: [`Kernel::ready`] (the one way to a
//! connection, with its [`Need`] and [`Ready`]), [`Kernel::reconnect`] (the explicit one),
//! [`Kernel::fail`] and [`Kernel::refused`] (a failure recorded and told),
//! [`Kernel::list_unknown`], [`Kernel::being_listed`] and [`Kernel::stop_if_unwanted`] (servers
//! whose tools are not known, and the `Purpose` and [`Listed`] of a listing),
//! [`Kernel::listed_on`] and [`Kernel::cache_known_as`] (the listing and its cache),
//! [`Kernel::begin_deferred_fill`]; the kernel holds its state as `Startup` and `ListQueue`.
//!
//! What the files share is here, private to the module: each server's metadata (registry and
//! cache) kept in step with what it lists (a listing taken, a re-listing after `list_changed`,
//! the cache writes), the list bounds and the idle limit. Failures are recorded in the registry
//! (for the backoff and `status`) and told to JS (`connect`).

mod connect;
mod family;
mod lifecycle;
mod unlisted;

pub use lifecycle::{Bounds, StartOptions, Timing};
pub use unlisted::DeclaredListing;
pub(crate) use {
    lifecycle::Startup,
    unlisted::{ListQueue, Purpose},
};

use super::servers::Adopted;
use super::{now_ms, Kernel, ServerMeta};
use crate::cache::{self, CacheEntry};
use crate::config::{Lifecycle, ServerConfig};
use crate::events::Event;
use pi_mcp_connection::pool::{Connection, ListBounds, Listing};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

/// Idle minutes of a lazy server when neither the server nor the settings say.
const DEFAULT_IDLE_MINUTES: f64 = 10.0;

/// What the caller needs of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// A connection that has done its opening handshake (a call of a tool known from the cache
    /// goes at once; the listing follows). Once the server has listed, its listing is taken too.
    Handshake,
    /// ... and whose tools are listed and taken as the server's metadata.
    Listed,
    /// Listed, for the gateway's own upkeep (start-up, the health loop, a listing to learn what
    /// a server has): it does not count as the model wanting the server.
    Upkeep,
}

/// A connection as [`Kernel::ready`] hands it out.
pub(crate) struct Ready {
    pub conn: Arc<Connection>,
    /// The server's metadata changed on the way (a new listing was taken): names resolved
    /// before may mean other tools now.
    pub refreshed: bool,
}

impl Kernel {
    /// How much of a server's listing is kept.
    fn list_bounds(&self, server: &ServerConfig) -> ListBounds {
        ListBounds {
            timeout: self.request_timeout(server),
            items: self.bounds.max_server_tools,
            bytes: self.bounds.max_server_metadata,
        }
    }

    /// How long `server` may sit unused before it is stopped; `None`: never. Lazy servers (and
    /// lazy-keep-alive ones not used yet) use their own `idleTimeout`, else `settings.idleTimeout`,
    /// else 10 minutes; eager ones only their own; keep-alive ones never stop.
    fn idle_limit(&self, server: &ServerConfig) -> Option<Duration> {
        let minutes = match server.lifecycle {
            Lifecycle::KeepAlive => return None,
            Lifecycle::LazyKeepAlive if self.servers.is_used(&server.name) => return None,
            Lifecycle::Eager => server.idle_timeout_min?,
            Lifecycle::Lazy | Lifecycle::LazyKeepAlive => server
                .idle_timeout_min
                .or(self.config.settings.idle_timeout_min)
                .unwrap_or(DEFAULT_IDLE_MINUTES),
        };
        (minutes > 0.0).then(|| Duration::from_secs_f64(minutes * 60.0))
    }

    /// Takes `listing` of `conn` as its server's metadata unless it already was; a new one is
    /// written to the cache (in the background) and told to JS.
    fn take_listing(self: &Arc<Self>, conn: &Connection, listing: &Listing) -> Adopted {
        let name = conn.server.as_str();
        let adopted = self.servers.adopt(name, conn.id, || meta_of(conn, listing));
        if adopted == Adopted::Same {
            return adopted;
        }
        self.save_metadata(name);
        let (server, tools) = (name.to_string(), self.tool_count(name));
        self.events.emit(match adopted {
            Adopted::First => Event::Connected { server, tools },
            _ => Event::Reconnected { server, tools },
        });
        adopted
    }

    /// The number of the server's tools in the catalog.
    fn tool_count(&self, name: &str) -> u32 {
        let tools = self.servers.view().server_tools(name).len();
        u32::try_from(tools).unwrap_or(u32::MAX)
    }

    /// Persists the server's metadata in the background (off the call's path); `shutdown`
    /// waits for it.
    fn save_metadata(self: &Arc<Self>, name: &str) {
        let (this, name) = (self.clone(), name.to_string());
        self.tasks.spawn(async move {
            this.write_cache(&name).await;
        });
    }

    /// Persists the server's current metadata (read-merge-write under the cache lock).
    async fn write_cache(&self, name: &str) {
        let Some(entry) = self
            .servers
            .config(name)
            .and_then(|server| self.cache_entry(name, &server.entry))
        else {
            return;
        };
        let (path, name) = (self.cache_path.clone(), name.to_string());
        let written =
            tokio::task::spawn_blocking(move || cache::write_entries(&path, &[(name, entry)]))
                .await;
        if let Ok(Err(e)) = written {
            self.cache_write_failed(&e);
        }
    }

    /// The cache entry of the server's current metadata, for a server configured as `entry`.
    fn cache_entry(&self, name: &str, entry: &Value) -> Option<CacheEntry> {
        let meta = self.servers.meta(name)?;
        Some(CacheEntry {
            config_hash: cache::config_hash(entry, &self.env),
            tools: meta.tools.iter().map(|t| Value::clone(t)).collect(),
            resources: meta.resources.clone(),
            templates: meta.templates.clone(),
            prompts: meta.prompts.clone(),
            instructions: meta.instructions.clone(),
            left_out: meta.left_out.clone(),
            cached_at: now_ms(),
            ttl_ms: None,
            transport: self
                .servers
                .remote_kind(name)
                .map(|kind| kind.name().to_string()),
        })
    }

    fn cache_write_failed(&self, e: &std::io::Error) {
        tracing::warn!("could not write {}: {e}", self.cache_path.display());
    }

    /// Takes the listing of exactly `conn` (not of whatever connection is live by then).
    pub(crate) async fn listed_on(self: &Arc<Self>, conn: Arc<Connection>) -> Option<Adopted> {
        let server = self.servers.config(&conn.server)?;
        let listing = conn.listed(&self.list_bounds(server)).await.ok()?;
        Some(self.take_listing(&conn, &listing))
    }

    /// Writes the metadata known of each of `servers` to the cache under the config entry given
    /// with it (a server whose config changed in a way that leaves what it lists alone).
    pub(crate) fn cache_known_as(&self, servers: &[(&str, &Value)]) {
        let entries: Vec<_> = servers
            .iter()
            .filter_map(|(name, entry)| Some((name.to_string(), self.cache_entry(name, entry)?)))
            .collect();
        if entries.is_empty() {
            return;
        }
        if let Err(e) = cache::write_entries(&self.cache_path, &entries) {
            self.cache_write_failed(&e);
        }
    }

    /// Re-lists a connected server that announced a change at `announced`, and updates registry
    /// and cache.
    async fn relist(self: &Arc<Self>, name: &str, announced: Instant) {
        let (Some(conn), Some(server)) = (self.pool.peek(name), self.servers.config(name)) else {
            return;
        };
        if conn.first_listing_covers(announced) {
            return;
        }
        let before = conn.listing();
        if let Ok(listing) = conn.relist(&self.list_bounds(server)).await {
            // Many servers announce a change while starting up, before the first listing.
            if listing == before {
                return;
            }
            self.servers.replace(name, meta_of(&conn, &listing));
            self.write_cache(name).await;
            self.events.emit(Event::CatalogChanged {
                server: name.to_string(),
                tools: self.tool_count(name),
            });
        }
    }
}

/// The metadata `listing` of `conn` gives its server.
fn meta_of(conn: &Connection, listing: &Listing) -> ServerMeta {
    ServerMeta {
        tools: listing.tools.iter().cloned().map(Arc::new).collect(),
        resources: listing.resources.clone(),
        templates: listing.templates.clone(),
        prompts: conn.has_prompts().then(|| listing.prompts.clone()),
        instructions: conn.instructions.clone(),
        live_connection: Some(conn.id),
        cut: listing.cut,
        left_out: listing.left_out.clone(),
    }
}
