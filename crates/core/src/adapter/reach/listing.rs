//! Keeping each server's metadata (registry and cache) in step with what it lists: the first
//! listing of a connection, re-listings after `list_changed`, and the cache writes.

use crate::adapter::servers::Adopted;
use crate::adapter::{now_ms, Kernel, ServerMeta};
use crate::cache::{self, CacheEntry};
use crate::events::Event;
use crate::render;
use pi_mcp_connection::pool::{Connection, Listing, Notice};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

/// Coalesces bursts of `list_changed` notifications into one re-listing.
const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(250);

impl Kernel {
    /// Takes `listing` of `conn` as its server's metadata unless it already was; a new one is
    /// written to the cache (in the background) and told to JS.
    pub(super) fn take_listing(self: &Arc<Self>, conn: &Connection, listing: &Listing) -> Adopted {
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

    /// Takes the listing of exactly `conn` (not of whatever connection is live by then).
    pub(crate) async fn listed_on(self: &Arc<Self>, conn: Arc<Connection>) -> Option<Adopted> {
        let server = self.servers.config(&conn.server)?;
        let listing = conn.listed(&self.list_bounds(server)).await.ok()?;
        Some(self.take_listing(&conn, &listing))
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

    /// Reacts to what connections report until shutdown (or until the adapter is dropped).
    pub(super) async fn watch_notices(this: Weak<Self>, mut notices: UnboundedReceiver<Notice>) {
        // Per server, when the latest change still to be re-listed was announced.
        let pending = Arc::new(parking_lot::Mutex::new(HashMap::new()));
        loop {
            let Some(closing) = this.upgrade().map(|a| a.closing.clone()) else {
                return;
            };
            let notice = tokio::select! {
                notice = notices.recv() => notice,
                _ = closing.cancelled() => None,
            };
            let (Some(notice), Some(adapter)) = (notice, this.upgrade()) else {
                return;
            };
            match notice {
                Notice::ListChanged { server, at } => {
                    if pending.lock().insert(server.clone(), at).is_none() {
                        let (weak, pending) = (this.clone(), pending.clone());
                        adapter.tasks.spawn(async move {
                            tokio::time::sleep(LIST_CHANGED_DEBOUNCE).await;
                            let announced = pending.lock().remove(&server);
                            if let (Some(announced), Some(adapter)) = (announced, weak.upgrade()) {
                                adapter.relist(&server, announced).await;
                            }
                        });
                    }
                }
                Notice::ResourceUpdated { server, uri } => {
                    let (text, note) = render::resource_updated(&server, &uri);
                    adapter.events.emit(Event::ResourceUpdated {
                        server,
                        uri: pi_mcp_connection::clean::line(&uri).into_owned(),
                        text,
                        note,
                    });
                }
                Notice::Connecting { server } => adapter.events.emit(Event::Connecting { server }),
                Notice::Opened { server } => adapter.events.emit(Event::Opened { server }),
                Notice::Lost { server, why } => {
                    adapter.events.emit(Event::Disconnected {
                        server,
                        reason: pi_mcp_connection::clean::text(&why).into_owned(),
                    });
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
        templates: listing.templates.clone(),
        prompts: conn.has_prompts().then(|| listing.prompts.clone()),
        instructions: conn.instructions.clone(),
        live_connection: Some(conn.id),
        cut: listing.cut,
        left_out: listing.left_out.clone(),
    }
}
