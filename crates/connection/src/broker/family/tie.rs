//! A connection's bond to the family that shares its server ([`Tie`], the pool's `Keeper`):
//! once open it is the family's server (the registry); its questions for calls the hub
//! forwarded are asked where the family's rules say (`Broker::answerer`); its notices reach the
//! hub too (changed lists, updated resources, a crash); and when its session ends while other
//! sessions use it, the hub keeps it running instead (the handover).

use super::registry::Claim;
use super::{family, LocalSession};
use crate::pool::shared::wire::FAMILY_CALLER;
use crate::pool::{Asker, Connection, Host, Keeper, Keeping, Notice, Question, Reply, Root};
use crate::server_log::LogMessage;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::{Arc, Weak};
use tokio::sync::mpsc::{self, UnboundedSender};

pub struct Tie {
    identity: String,
    /// The session whose pool runs it; `None`: the hub's own pool.
    owner: Option<Weak<LocalSession>>,
    /// Held until the connection opens.
    claim: Mutex<Option<Claim>>,
}

impl Tie {
    /// For a server `session`'s pool starts.
    pub fn owned(identity: String, session: &Arc<LocalSession>, claim: Claim) -> Keeping {
        Keeping(Arc::new(Tie {
            identity,
            owner: Some(Arc::downgrade(session)),
            claim: Mutex::new(Some(claim)),
        }))
    }

    /// For a server the hub's own pool starts.
    pub fn hub(identity: String, claim: Claim) -> Keeping {
        Keeping(Arc::new(Tie {
            identity,
            owner: None,
            claim: Mutex::new(Some(claim)),
        }))
    }
}

impl Keeper for Tie {
    fn wrap(
        &self,
        host: Arc<dyn Host>,
        notices: UnboundedSender<Notice>,
    ) -> (Arc<dyn Host>, UnboundedSender<Notice>) {
        // The hub's own servers ask and report through the hub already.
        let Some(owner) = &self.owner else {
            return (host, notices);
        };
        let host = Arc::new(OwnerHost {
            identity: self.identity.clone(),
            local: host,
            owner: owner.clone(),
        });
        (host, tee(self.identity.clone(), notices))
    }

    fn opened(&self, conn: &Arc<Connection>) {
        family().registry.opened(&self.identity, conn);
        self.claim.lock().take();
    }

    fn keep(&self, conn: &Arc<Connection>) -> bool {
        self.owner.is_some()
            && family()
                .current_hub()
                .is_some_and(|hub| hub.keep(&self.identity, conn))
    }
}

/// Passes a connection's notices to its session's pool, and to the hub.
fn tee(identity: String, pool: UnboundedSender<Notice>) -> UnboundedSender<Notice> {
    let (notices, mut heard) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(notice) = heard.recv().await {
            if let Some(hub) = family().current_hub() {
                hub.heard(&identity, &notice);
            }
            let _ = pool.send(notice);
        }
    });
    notices
}

/// The host of a connection a session's pool runs for the family: a question during the
/// session's own calls only is its own, as without a family; one during calls the hub
/// forwarded is the family's.
struct OwnerHost {
    identity: String,
    local: Arc<dyn Host>,
    owner: Weak<LocalSession>,
}

impl OwnerHost {
    fn family_asks(&self, asker: &Asker) -> bool {
        asker.callers.iter().any(|c| c.starts_with(FAMILY_CALLER))
    }

    fn answerer(&self, asker: &Asker) -> crate::broker::route::Answerer {
        let owner = self.owner.upgrade();
        match family().current_hub() {
            Some(hub) => hub.answerer(&self.identity, asker, owner.as_deref()),
            None => crate::broker::route::Answerer::Local,
        }
    }
}

impl Host for OwnerHost {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        if !self.family_asks(&asker) {
            return self.local.elicit(asker, question);
        }
        self.answerer(&asker)
            .elicit(Some(&self.local), asker, question)
    }

    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        if !self.family_asks(&asker) {
            return self.local.sample(asker, params);
        }
        self.answerer(&asker)
            .sample(Some(&self.local), asker, params)
    }

    fn roots(&self, server: &str) -> Vec<Root> {
        self.local.roots(server)
    }

    fn log(&self, server: &str, message: &LogMessage) {
        self.local.log(server, message);
    }

    fn follows_tasks(&self) -> bool {
        self.local.follows_tasks()
    }
}
