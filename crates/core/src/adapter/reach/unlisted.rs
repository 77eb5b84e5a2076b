//! Servers whose tools are not known yet (never listed, nothing cached), and the one way they
//! are listed. Every listing of servers the model did not name goes through one queue: the
//! first-run fill, a search or a resource or prompt listing across servers, a tool name that no
//! server's prefix matches, the servers Pi's first request declares. The queue lists at most
//! [`Bounds::fill_concurrency`](crate::adapter::Bounds) servers at once, in the order asked, each server
//! once however many ask for it, and stops each lazy server it started once it is listed, unless
//! the model wanted it meanwhile. A request waits for its servers up to a bound and answers from
//! what is listed by then, saying which are still being listed; the queue goes on in the
//! background and later requests see what it listed.
//!
//! A server the model names (`list`, `instructions`, a search or `describe` of that server, a
//! tool name with its prefix) is listed at once, beside the queue: it never waits behind
//! hundreds of others. Looking at it does not keep it running; calling it does.

use super::Need;
use crate::adapter::{Kernel, Unavailable};
use crate::catalog::{lookup, Lookup};
use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::{FuturesUnordered, StreamExt};
use parking_lot::Mutex;
use pi_mcp_connection::broker::FAMILY_GRACE;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::task::TaskTracker;

/// A queued listing, shared by everyone waiting for it: how it ended (`None`: listed).
type Queued = Shared<BoxFuture<'static, Option<Unavailable>>>;

/// The listing queue's state.
pub(crate) struct ListQueue {
    /// One per listing under way.
    permits: Arc<Semaphore>,
    /// Servers queued or being listed, with their listing.
    queued: Mutex<HashMap<String, Queued>>,
    /// Tool names that calls wait to find through the queue (one entry per call): the server
    /// found to have one is not stopped once listed, since the call is about to use it.
    sought: Mutex<Vec<String>>,
    /// The queue's tasks: `shutdown` gives the listings under way
    /// [`Timing::fill_grace`](crate::adapter::Timing) to finish (and be written).
    pub tasks: TaskTracker,
}

impl ListQueue {
    pub fn new(at_once: usize) -> ListQueue {
        ListQueue {
            permits: Arc::new(Semaphore::new(at_once)),
            queued: Mutex::new(HashMap::new()),
            sought: Mutex::default(),
            tasks: TaskTracker::new(),
        }
    }

    /// Waits for a listing's turn under the queue's bound (for listings outside the queue,
    /// such as doctor's connection check); `None` once the semaphore is closed.
    pub async fn turn(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().acquire_owned().await.ok()
    }

    /// Marks `tool` as sought by a call until the returned guard drops.
    fn seek(&self, tool: &str) -> Seeking<'_> {
        self.sought.lock().push(tool.to_string());
        Seeking {
            sought: &self.sought,
            tool: tool.to_string(),
        }
    }
}

/// A call's search for a tool through the queue, ended when dropped.
struct Seeking<'a> {
    sought: &'a Mutex<Vec<String>>,
    tool: String,
}

impl Drop for Seeking<'_> {
    fn drop(&mut self) {
        let mut sought = self.sought.lock();
        if let Some(at) = sought.iter().position(|t| *t == self.tool) {
            sought.swap_remove(at);
        }
    }
}

/// The servers a request needs listed.
struct Unlisted {
    pub servers: Vec<String>,
    /// The request named them (a server, or a tool name with their prefix): listed at once.
    pub named: bool,
}

/// What the model does with what is listed: a call keeps its server running (the model wants
/// it), looking at its tools does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Look,
    Call,
}

/// How a listing stood when the request answered.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    /// The servers whose tools were not known, as asked (see `list_unknown`).
    pub asked: Vec<String>,
    /// Servers that could not be listed, and why, in the order asked.
    pub failed: Vec<(String, Unavailable)>,
    /// Servers still being listed, in the order asked.
    pub pending: Vec<String>,
}

impl Listed {
    pub fn failure(&self, server: &str) -> Option<&Unavailable> {
        self.failed
            .iter()
            .find(|(name, _)| name == server)
            .map(|(_, why)| why)
    }
}

/// How the servers whose tools Pi declares stood when its first request went.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeclaredListing {
    pub pending: Vec<String>,
    pub notice: Option<String>,
}

impl Kernel {
    /// Enabled servers (or just `server`) whose tools are not known; for a tool name, the
    /// servers whose prefix it starts with, when there are any (then named).
    fn unlisted(&self, server: Option<&str>, tool: Option<&str>) -> Unlisted {
        let missing: Vec<&str> = self
            .servers
            .configs()
            .filter(|s| !s.disabled && server.is_none_or(|n| s.name == n))
            .filter(|s| !self.servers.has_meta(&s.name))
            .map(|s| s.name.as_str())
            .collect();
        let prefixed: Vec<&str> = match tool {
            Some(tool) => missing
                .iter()
                .copied()
                .filter(|s| tool.starts_with(&format!("{s}_")))
                .collect(),
            None => vec![],
        };
        let named = server.is_some() || !prefixed.is_empty();
        let chosen = if prefixed.is_empty() {
            missing
        } else {
            prefixed
        };
        Unlisted {
            servers: chosen.into_iter().map(str::to_string).collect(),
            named,
        }
    }

    /// Lists what a request of the model needs (the servers `unlisted` gives for `server` and
    /// `tool`): a call through the queue marks `tool` sought meanwhile, so that the server found
    /// to have it keeps running for the call.
    pub(crate) async fn list_unknown(
        self: &Arc<Self>,
        server: Option<&str>,
        tool: Option<&str>,
        purpose: Purpose,
    ) -> Listed {
        let unlisted = self.unlisted(server, tool);
        if unlisted.servers.is_empty() {
            return Listed::default();
        }
        let _seeking = match tool {
            Some(tool) if purpose == Purpose::Call && !unlisted.named => {
                Some(self.listings.seek(tool))
            }
            _ => None,
        };
        let listed = self.list_for(&unlisted, purpose).await;
        Listed {
            asked: unlisted.servers,
            ..listed
        }
    }

    /// Lists what a request of the model needs: servers it named at once, the others through
    /// the queue, waiting up to [`Timing::list_wait`](crate::adapter::Timing).
    async fn list_for(self: &Arc<Self>, unlisted: &Unlisted, purpose: Purpose) -> Listed {
        if unlisted.named {
            self.list_now(&unlisted.servers, purpose).await
        } else {
            self.list_queued(&unlisted.servers, self.timing.list_wait)
                .await
        }
    }

    /// Lists those of `servers` whose tools are not known through the queue, waiting up to
    /// [`Timing::list_wait`](crate::adapter::Timing): for Pi's tools that reach other tools (codemode,
    /// tool_search) before they run. Returns the servers still being listed.
    pub async fn list_servers(self: &Arc<Self>, servers: &[String]) -> Vec<String> {
        let unknown: Vec<String> = servers
            .iter()
            .filter(|s| self.servers.enabled(s).is_ok() && !self.servers.has_meta(s))
            .cloned()
            .collect();
        self.list_queued(&unknown, self.timing.list_wait)
            .await
            .pending
    }

    /// Lists the servers whose tools Pi declares to the model and that are not known yet,
    /// through the queue; with `wait`, waits for them up to `settings.startupWaitMs` (10 s, Pi's
    /// rule), as Pi's first request does. One not listed by then is declared once it is (its
    /// listing goes on), or in the next run from the cache entry it writes.
    pub async fn list_declared(self: &Arc<Self>, wait: bool) -> DeclaredListing {
        let wait = match wait {
            true => self.config.settings.startup_wait,
            false => Duration::ZERO,
        };
        let declared = self.declared_unlisted();
        let pending = self.list_queued(&declared, wait).await.pending;
        let notice = (!wait.is_zero() && !pending.is_empty())
            .then(|| crate::render::declared_still_listing(&pending, wait));
        DeclaredListing { pending, notice }
    }

    /// Lists `servers` now, beside the queue (joining a listing of the queue under way).
    async fn list_now(self: &Arc<Self>, servers: &[String], purpose: Purpose) -> Listed {
        let attempts = servers.iter().map(|name| async move {
            let reached = match purpose {
                Purpose::Call => self.ready(name, Need::Listed).await,
                Purpose::Look => self.ready(name, Need::Upkeep).await,
            };
            match reached {
                Ok(_) => {
                    self.stop_if_unwanted(name).await;
                    None
                }
                Err(why) => Some((name.clone(), why)),
            }
        });
        let failed = futures::future::join_all(attempts).await;
        Listed {
            failed: failed.into_iter().flatten().collect(),
            ..Listed::default()
        }
    }

    /// Queues `servers` (each not queued yet goes to the end) and waits until they are listed or
    /// `wait` has passed.
    async fn list_queued(self: &Arc<Self>, servers: &[String], wait: Duration) -> Listed {
        let mut listings: FuturesUnordered<_> = self
            .queue(servers)
            .into_iter()
            .map(|(name, listing)| async move { (name, listing.await) })
            .collect();
        let mut ended: HashMap<String, Option<Unavailable>> = HashMap::new();
        let deadline = tokio::time::sleep(wait);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                next = listings.next() => match next {
                    Some((name, failed)) => { ended.insert(name, failed); }
                    None => break,
                },
                _ = &mut deadline => break,
            }
        }
        let mut listed = Listed::default();
        for name in servers {
            match ended.remove(name) {
                Some(Some(why)) => listed.failed.push((name.clone(), why)),
                Some(None) => {}
                None => listed.pending.push(name.clone()),
            }
        }
        listed
    }

    /// Queues each of `servers` not queued or being listed yet; returns each one's listing.
    pub(super) fn queue(self: &Arc<Self>, servers: &[String]) -> Vec<(String, Queued)> {
        let mut queued = self.listings.queued.lock();
        servers
            .iter()
            .map(|name| {
                let listing = queued
                    .entry(name.clone())
                    .or_insert_with(|| self.queued_listing(name))
                    .clone();
                (name.clone(), listing)
            })
            .collect()
    }

    /// The listing of `name` once the queue lets it run; its task drives it whoever waits.
    fn queued_listing(self: &Arc<Self>, name: &str) -> Queued {
        let (this, name) = (Arc::downgrade(self), name.to_string());
        let permits = self.listings.permits.clone();
        let closing = self.closing.clone();
        let listing = async move {
            let permit = tokio::select! {
                permit = permits.acquire_owned() => permit.ok(),
                _ = closing.cancelled() => None,
            };
            let Some(this) = this.upgrade() else {
                return Some(Unavailable::ShutDown);
            };
            let failed = match permit {
                None => Some(Unavailable::ShutDown),
                Some(_) if this.servers.has_meta(&name) => None,
                Some(_) => match this.ready(&name, Need::Upkeep).await {
                    Ok(_) => {
                        this.stop_if_unwanted(&name).await;
                        None
                    }
                    Err(why) => Some(why),
                },
            };
            this.listings.queued.lock().remove(&name);
            failed
        }
        .boxed()
        .shared();
        self.listings.tasks.spawn(listing.clone());
        listing
    }

    /// Servers queued or being listed now, in config order.
    pub(crate) fn being_listed(&self) -> Vec<String> {
        let queued = self.listings.queued.lock();
        self.servers
            .configs()
            .filter(|s| queued.contains_key(&s.name))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Stops a lazy server a listing started once it is listed, unless the model wants it or
    /// a call waits to use one of its tools.
    pub(crate) async fn stop_if_unwanted(self: &Arc<Self>, name: &str) {
        if self.hosts_family_of(name) {
            // Members of the family may be listing or calling it as it is listed (subagents
            // starting at once): it stays the family's grace, as the hub keeps one a member left,
            // so that they use this process instead of starting another.
            let (this, name) = (Arc::downgrade(self), name.to_string());
            let closing = self.closing.clone();
            self.tasks.spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep(FAMILY_GRACE) => {}
                    _ = closing.cancelled() => return,
                }
                if let Some(this) = this.upgrade() {
                    this.stop_now_if_unwanted(&name).await;
                }
            });
            return;
        }
        self.stop_now_if_unwanted(name).await;
    }

    /// Whether `name` is shared with a family this process hosts.
    fn hosts_family_of(&self, name: &str) -> bool {
        pi_mcp_connection::broker::family::family().hosts()
            && self
                .servers
                .config(name)
                .is_some_and(|s| s.sharing == crate::config::Sharing::Family)
    }

    async fn stop_now_if_unwanted(&self, name: &str) {
        let lazy = self
            .servers
            .config(name)
            .is_some_and(|s| !s.lifecycle.connects_at_start());
        if !lazy || self.servers.is_wanted(name) || self.sought_on(name) {
            return;
        }
        if self.pool.close_if_idle(name, Duration::ZERO).await {
            self.events.emit(crate::events::Event::IdleShutdown {
                server: name.to_string(),
                idle_minutes: 0.0,
            });
        }
    }

    /// Whether a tool a call is looking for is one of `server`'s.
    fn sought_on(&self, server: &str) -> bool {
        let sought = self.listings.sought.lock();
        if sought.is_empty() {
            return false;
        }
        let catalog = self.servers.view();
        sought
            .iter()
            .any(|tool| match lookup(catalog.tools(), tool, None) {
                Lookup::Found(found) => found.server == server,
                Lookup::Ambiguous(found) => found.iter().any(|t| t.server == server),
                Lookup::NotFound => false,
            })
    }
}
