//! Keeping each server in the state its `lifecycle` asks for: a health loop on the native runtime
//! (it never keeps Node alive) that reconnects dropped keep-alive servers and stops idle ones.

use super::Adapter;
use crate::config::{Lifecycle, ServerConfig};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Idle minutes of a lazy server when neither the server nor the settings say.
const DEFAULT_IDLE_MINUTES: f64 = 10.0;
/// Servers connected at once by start-up and health work.
pub const PARALLEL_CONNECTS: usize = 10;

/// The lifecycle's clocks; tests shorten them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// How often keep-alive servers are checked and idle ones stopped.
    pub health_interval: Duration,
    /// How long a server that failed to connect is left alone.
    pub failure_backoff: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            health_interval: Duration::from_secs(30),
            failure_backoff: Duration::from_secs(60),
        }
    }
}

impl Adapter {
    /// How long `server` may sit unused before it is stopped; `None`: never. Lazy servers (and
    /// lazy-keep-alive ones not used yet) use their own `idleTimeout`, else `settings.idleTimeout`,
    /// else 10 minutes; eager ones only their own; keep-alive ones never stop.
    pub(super) fn idle_limit(&self, server: &ServerConfig) -> Option<Duration> {
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

    /// Whether the health loop brings `server` back when it is down: keep-alive servers, and
    /// lazy-keep-alive ones once they have been used.
    fn kept_alive(&self, server: &ServerConfig) -> bool {
        match server.lifecycle {
            Lifecycle::KeepAlive => true,
            Lifecycle::LazyKeepAlive => self.servers.is_used(&server.name),
            Lifecycle::Lazy | Lifecycle::Eager => false,
        }
    }

    /// Runs until shutdown: a check every `health_interval`.
    pub(super) async fn health_loop(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(self.timing.health_interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await; // the first tick is immediate; start-up work covers it
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = self.closing.cancelled() => return,
            }
            self.reconnect_kept().await;
            self.stop_idle().await;
        }
    }

    /// Reconnects keep-alive servers that are down (honouring the failure backoff), refreshing
    /// their metadata and cache, and tells JS with `reconnected`.
    async fn reconnect_kept(self: &Arc<Self>) {
        let down: Vec<String> = self
            .servers
            .configs()
            .filter(|s| !s.disabled && self.kept_alive(s))
            .filter(|s| !self.pool.is_live(&s.name) && !self.pool.is_connecting(&s.name))
            .filter(|s| self.backoff(&s.name).is_none())
            .map(|s| s.name.clone())
            .collect();
        futures::stream::iter(down)
            .for_each_concurrent(PARALLEL_CONNECTS, |name| async move {
                let _ = self.connect_now(&name, "reconnected").await;
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
                let minutes = limit.as_secs_f64() / 60.0;
                self.events.emit(
                    "idle-shutdown",
                    json!({ "server": server.name, "idleMinutes": minutes }),
                );
            }
        }
    }
}
