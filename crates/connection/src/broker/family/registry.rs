//! Which connection of this process runs each of the family's servers, by identity: one opened
//! by a session's own pool (the session owns it) or by the hub's, and the starts under way.
//! Sessions that ask for a server at once wait for one start: one process per server, however
//! many ask.

use crate::pool::Connection;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use tokio::sync::Notify;

#[derive(Default)]
pub struct Registry {
    entries: Mutex<HashMap<String, Entry>>,
    next_claim: AtomicU64,
}

enum Entry {
    /// Being started; `settled` wakes those who wait once it opened or failed.
    Claimed { id: u64, settled: Arc<Notify> },
    /// Running.
    Live(Weak<Connection>),
}

/// What [`Registry::reserve`] found.
pub enum Reserved {
    Live(Arc<Connection>),
    /// Nothing runs: the caller starts it, and tells [`Registry::opened`] (or drops the claim).
    Claimed(Claim),
}

/// The right to start a server. Dropped before [`Registry::opened`] (the start failed), the next
/// one waiting starts it.
pub struct Claim {
    registry: Weak<Registry>,
    identity: String,
    id: u64,
}

impl Registry {
    /// The live connection to the server `identity` names, once a start under way settled;
    /// without one, a claim to start it.
    pub async fn reserve(self: &Arc<Self>, identity: &str) -> Reserved {
        loop {
            let settled = {
                let mut entries = self.entries.lock();
                let running = match entries.get(identity) {
                    // Registered now, so a start that settles meanwhile still wakes it.
                    Some(Entry::Claimed { settled, .. }) => Err(settled.clone().notified_owned()),
                    Some(Entry::Live(conn)) => Ok(live(conn)),
                    None => Ok(None),
                };
                match running {
                    Err(settled) => settled,
                    Ok(Some(conn)) => return Reserved::Live(conn),
                    Ok(None) => {
                        let id = self.next_claim.fetch_add(1, Ordering::Relaxed);
                        let settled = Arc::new(Notify::new());
                        entries.insert(identity.to_string(), Entry::Claimed { id, settled });
                        return Reserved::Claimed(Claim {
                            registry: Arc::downgrade(self),
                            identity: identity.to_string(),
                            id,
                        });
                    }
                }
            };
            settled.await;
        }
    }

    /// The live connection to `identity`, if there is one.
    pub fn live(&self, identity: &str) -> Option<Arc<Connection>> {
        match self.entries.lock().get(identity)? {
            Entry::Live(conn) => live(conn),
            Entry::Claimed { .. } => None,
        }
    }

    /// `conn` runs the server `identity` names from now on (its start settled).
    pub fn opened(&self, identity: &str, conn: &Arc<Connection>) {
        let entry = Entry::Live(Arc::downgrade(conn));
        if let Some(Entry::Claimed { settled, .. }) =
            self.entries.lock().insert(identity.to_string(), entry)
        {
            settled.notify_waiters();
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let mut entries = registry.entries.lock();
        if let Some(Entry::Claimed { id, .. }) = entries.get(&self.identity) {
            if *id == self.id {
                if let Some(Entry::Claimed { settled, .. }) = entries.remove(&self.identity) {
                    settled.notify_waiters();
                }
            }
        }
    }
}

fn live(conn: &Weak<Connection>) -> Option<Arc<Connection>> {
    conn.upgrade().filter(|c| c.is_alive())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_claim_at_a_time_and_a_dropped_one_passes_on() {
        let registry = Arc::new(Registry::default());
        let Reserved::Claimed(first) = registry.reserve("s").await else {
            panic!("nothing runs yet")
        };
        let waiting = tokio::spawn({
            let registry = registry.clone();
            async move { matches!(registry.reserve("s").await, Reserved::Claimed(_)) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "waits while the first start runs");
        assert!(matches!(
            registry.reserve("other").await,
            Reserved::Claimed(_)
        ));
        drop(first);
        let claimed = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert!(
            claimed.unwrap().unwrap(),
            "the failed start's claim passed on"
        );
    }
}
