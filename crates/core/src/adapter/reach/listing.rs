//! Keeping each server's metadata (registry and cache) in step with what it lists: the listing
//! of exactly one connection, re-listings after `list_changed`, and a config change that keeps
//! the cache entry. (A listing taken and its cache write are shared, in `reach` itself.)

use super::meta_of;
use crate::adapter::servers::Adopted;
use crate::adapter::Kernel;
use crate::cache;
use crate::events::Event;
use crate::render;
use pi_mcp_connection::pool::{Connection, Notice};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

/// Coalesces bursts of `list_changed` notifications into one re-listing.
const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(250);

impl Kernel {
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
