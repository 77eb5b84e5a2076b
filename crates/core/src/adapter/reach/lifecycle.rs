//! Keeping each server in the state its `lifecycle` asks for: start-up (eager and keep-alive
//! servers, the first-run cache fill), a health loop on the native runtime (it never keeps Node
//! alive) that reconnects dropped keep-alive servers and stops idle ones, and shutdown; and,
//! from start-up on, what connections report (re-listed, or told to JS).

use super::Need;
use crate::adapter::Kernel;
use crate::config::{Lifecycle, ServerConfig, Transport};
use crate::events::Event;
use crate::render;
use futures::StreamExt;
use parking_lot::Mutex;
use pi_mcp_connection::pool::{ListBounds, Notice};
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// Eager and keep-alive servers connected at once by start-up and health work.
pub const PARALLEL_CONNECTS: usize = 10;
/// How long `shutdown` waits for everything else (servers to stop, cache writes).
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(8);
/// Coalesces bursts of `list_changed` notifications into one re-listing.
const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(250);

/// The lifecycle's clocks; tests shorten them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// How often keep-alive servers are checked and idle ones stopped.
    pub health_interval: Duration,
    /// How long a server that failed to connect is left alone.
    pub failure_backoff: Duration,
    /// How long `shutdown` lets listings under way finish (and be written), so that a fill
    /// that started pays off even in a short run.
    pub fill_grace: Duration,
    /// How long a request that needs servers listed (a first search over uncached servers)
    /// waits for them before it answers from what is listed by then.
    pub list_wait: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            health_interval: Duration::from_secs(30),
            failure_backoff: Duration::from_secs(60),
            fill_grace: Duration::from_secs(2),
            list_wait: Duration::from_secs(5),
        }
    }
}

/// How much of each server the gateway keeps, and how many servers the cache fill starts at
/// once. Options can lower the defaults (tests do), never raise them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Tools (and resources, and prompts) of one server.
    pub max_server_tools: usize,
    /// Bytes of one server's tools, resources and prompts (as JSON).
    pub max_server_metadata: usize,
    /// Servers listed at once by the first-run cache fill and every other listing the model
    /// did not name (see `unlisted`).
    pub fill_concurrency: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Bounds {
            max_server_tools: ListBounds::MOST_ITEMS,
            max_server_metadata: ListBounds::MOST_BYTES,
            fill_concurrency: cores.clamp(1, 4),
        }
    }
}

impl Bounds {
    /// These bounds, none above the default, none zero.
    pub fn lowered_from_default(self) -> Bounds {
        let default = Bounds::default();
        let lower = |given: usize, default: usize| given.clamp(1, default);
        Bounds {
            max_server_tools: lower(self.max_server_tools, default.max_server_tools),
            max_server_metadata: lower(self.max_server_metadata, default.max_server_metadata),
            fill_concurrency: lower(self.fill_concurrency, default.fill_concurrency),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartOptions {
    /// Start the first-run cache fill at the first `execute` (the model's first use of `mcp`),
    /// not now: for one-shot runs (Pi's print and JSON modes), which mostly end before a fill
    /// could finish and where the lazy path lists what the model needs anyway.
    pub defer_fill: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FillState {
    NotStarted,
    /// `start` deferred it to the first `execute`.
    Deferred,
    /// An `execute` came before `start` did: `start` fills at once.
    Wanted,
    Started,
}

/// What `start` sets going.
pub(crate) struct Startup {
    /// The pool's notices, until `start` takes them (so it runs once).
    notices: Mutex<Option<UnboundedReceiver<Notice>>>,
    fill: Mutex<FillState>,
}

impl Startup {
    pub fn new(notices: UnboundedReceiver<Notice>) -> Startup {
        Startup {
            notices: Mutex::new(Some(notices)),
            fill: Mutex::new(FillState::NotStarted),
        }
    }
}

impl Kernel {
    /// Background start-up, never awaited by Pi: connects `eager` and `keep-alive` servers, fills
    /// the cache with the servers it lacks (all of them on the very first run; now or at the
    /// first `execute`), and runs the health loop. Calling it again (or after shutdown) does
    /// nothing.
    pub fn start(self: &Arc<Self>, opts: StartOptions) {
        if self.closing.is_cancelled() {
            return;
        }
        let Some(notices) = self.startup.notices.lock().take() else {
            return;
        };
        self.tasks
            .spawn(Kernel::watch_notices(Arc::downgrade(self), notices));
        let stdio =
            |s: &ServerConfig| !s.disabled && matches!(s.transport, Transport::Stdio { .. });
        if self.servers.configs().any(stdio) {
            pi_mcp_connection::pool::watchdog::start_in_background(); // before any server: off a call's path
        }
        let eager: Vec<String> = self
            .servers
            .configs()
            .filter(|s| !s.disabled && s.lifecycle.connects_at_start())
            .map(|s| s.name.clone())
            .collect();
        let this = self.clone();
        self.tasks.spawn(async move {
            futures::stream::iter(eager)
                .for_each_concurrent(PARALLEL_CONNECTS, |name| {
                    let this = this.clone();
                    async move {
                        let _ = this.ready(&name, Need::Upkeep).await;
                    }
                })
                .await;
        });
        let deferred = {
            let mut state = self.startup.fill.lock();
            let defer = opts.defer_fill && *state == FillState::NotStarted;
            if defer {
                *state = FillState::Deferred;
            }
            defer
        };
        if !deferred {
            self.fill_cache();
        }
        self.tasks.spawn(Kernel::health_loop(
            Arc::downgrade(self),
            self.timing.health_interval,
        ));
    }

    /// Reacts to what connections report until shutdown (or until the adapter is dropped).
    async fn watch_notices(this: Weak<Self>, mut notices: UnboundedReceiver<Notice>) {
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

    /// Starts a deferred cache fill (the model's first use of `mcp`), or has `start` fill at
    /// once when it has not run yet.
    pub(crate) fn begin_deferred_fill(self: &Arc<Self>) {
        let deferred = {
            let mut state = self.startup.fill.lock();
            if *state == FillState::NotStarted {
                *state = FillState::Wanted;
            }
            *state == FillState::Deferred
        };
        if deferred {
            self.fill_cache();
        }
    }

    /// Queues the lazy servers the cache lacks for listing (see `unlisted`).
    fn fill_cache(self: &Arc<Self>) {
        {
            let mut state = self.startup.fill.lock();
            if *state == FillState::Started {
                return;
            }
            *state = FillState::Started;
        }
        let missing: Vec<String> = self
            .servers
            .configs()
            .filter(|s| !s.disabled && !s.lifecycle.connects_at_start())
            .filter(|s| !self.servers.has_meta(&s.name))
            .map(|s| s.name.clone())
            .collect();
        self.queue(&missing);
    }

    /// Cancels running calls and closes every server (bounded in time). Listings under way get
    /// a short grace first; nothing starts any more.
    pub async fn shutdown(&self) {
        self.closing.cancel(); // every call's token is a child of it
        self.apps.close().await;
        self.listings.tasks.close();
        let _ = tokio::time::timeout(self.timing.fill_grace, self.listings.tasks.wait()).await;
        self.tasks.close();
        let stopped = futures::future::join(self.pool.close_all(), self.tasks.wait());
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, stopped).await;
        self.host.server_log().flushed().await;
    }

    /// Whether the health loop brings `server` back when it is down: keep-alive servers, and
    /// lazy-keep-alive ones once they have been used.
    fn kept_alive(&self, server: &ServerConfig) -> bool {
        match server.lifecycle {
            Lifecycle::KeepAlive => true,
            Lifecycle::LazyKeepAlive => self.servers.is_used(&server.name),
            Lifecycle::Lazy | Lifecycle::Eager => false,
        }
    }

    /// Runs until shutdown (or until the adapter is dropped): a check every `interval`.
    async fn health_loop(this: Weak<Self>, interval: Duration) {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await; // the first tick is immediate; start-up work covers it
        loop {
            let Some(closing) = this.upgrade().map(|a| a.closing.clone()) else {
                return;
            };
            tokio::select! {
                _ = ticks.tick() => {}
                _ = closing.cancelled() => return,
            }
            let Some(adapter) = this.upgrade() else {
                return;
            };
            adapter.reconnect_kept().await;
            adapter.stop_idle().await;
        }
    }

    /// Reconnects keep-alive servers that are down (honouring the failure backoff), refreshing
    /// their metadata and cache.
    async fn reconnect_kept(self: &Arc<Self>) {
        let down: Vec<String> = self
            .servers
            .configs()
            .filter(|s| !s.disabled && self.kept_alive(s))
            .filter(|s| !self.pool.is_live(&s.name) && !self.pool.is_connecting(&s.name))
            .filter(|s| {
                self.servers
                    .backoff(&s.name, self.timing.failure_backoff)
                    .is_none()
            })
            .map(|s| s.name.clone())
            .collect();
        futures::stream::iter(down)
            .for_each_concurrent(PARALLEL_CONNECTS, |name| async move {
                let _ = self.ready(&name, Need::Upkeep).await;
            })
            .await;
    }

    /// Stops servers unused for longer than their idle limit, when nothing is in flight; their
    /// metadata stays searchable.
    async fn stop_idle(self: &Arc<Self>) {
        for server in self.servers.configs().filter(|s| !s.disabled) {
            let Some(limit) = self.idle_limit(server) else {
                continue;
            };
            if self.pool.close_if_idle(&server.name, limit).await {
                self.events.emit(Event::IdleShutdown {
                    server: server.name.clone(),
                    idle_minutes: limit.as_secs_f64() / 60.0,
                });
            }
        }
    }
}
