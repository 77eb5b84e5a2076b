//! The server registry: for each configured server, one record of what this session knows about
//! it — its metadata (from the cache or a live listing), its last failure, the remote transport
//! that answered, whether the model used it, and its calls that JS may cancel by id. The flattened tool
//! catalog and its search index are a view derived from the records' metadata ([`View`]).
//!
//! Each record has its own lock, so a call on one server never waits for another's; the view has
//! one lock, taken before a record's when both are needed. Per-server state of one feature
//! lives with that feature (sign-in's in `sign_in`).

use super::catalog_view::View;
use super::Unavailable;
use crate::catalog::ToolPrefix;
use crate::config::ServerConfig;
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use pi_mcp_connection::pool::{Cut, RemoteKind};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What a server offers, as listed (or as cached from an earlier listing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerMeta {
    /// Shared with the catalog's entries, which point at their definitions.
    pub tools: Vec<Arc<Value>>,
    pub resources: Vec<Value>,
    /// Resource templates (`resources/templates/list`).
    pub templates: Vec<Value>,
    pub prompts: Option<Vec<Value>>,
    pub instructions: Option<String>,
    /// Entries of the listing left out because they could not be read, one line each.
    pub left_out: Vec<String>,
    /// The id of the connection that listed it; `None` while it comes from the cache.
    pub live_connection: Option<u64>,
    /// The bound the listing ran into, when the server listed more than is kept.
    pub cut: Option<Cut>,
}

/// What the cache knew of a server when the session opened.
pub struct Cached {
    /// `None` when the entry is stale or its config changed.
    pub meta: Option<ServerMeta>,
    /// The transport that answered last time, while the config is unchanged.
    pub remote_kind: Option<RemoteKind>,
}

/// The outcome of taking a listing as a server's metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adopted {
    /// The metadata already came from this connection.
    Same,
    /// Taken: the first connection listed this session, or a later one.
    First,
    Again,
}

struct Failure {
    at: Instant,
    cause: Unavailable,
}

/// A call of the model on a server, from its start (before the server is reached) to its end.
struct PendingCall {
    key: u64,
    id: String,
    cancel: CancellationToken,
}

#[derive(Default)]
struct RecordState {
    meta: Option<Arc<ServerMeta>>,
    failure: Option<Failure>,
    remote_kind: Option<RemoteKind>,
    /// The model has called one of its tools this session (lazy-keep-alive servers stay up then).
    used: bool,
    /// A request of the model needed the server this session (the cache fill leaves it running).
    wanted: bool,
    calls: Vec<PendingCall>,
    /// Connections whose listing was taken this session.
    listed_connections: u32,
}

struct Record {
    config: ServerConfig,
    state: Mutex<RecordState>,
}

pub(super) struct Servers {
    /// In config order, disabled ones included.
    records: Vec<Record>,
    prefix: ToolPrefix,
    view: RwLock<View>,
}

impl Servers {
    pub fn new(
        configs: Vec<ServerConfig>,
        prefix: ToolPrefix,
        mut cached: HashMap<String, Cached>,
    ) -> Servers {
        let records: Vec<Record> = configs
            .into_iter()
            .map(|config| {
                let cached = cached.remove(&config.name);
                let state = RecordState {
                    meta: cached.as_ref().and_then(|c| c.meta.clone()).map(Arc::new),
                    remote_kind: cached.and_then(|c| c.remote_kind),
                    ..RecordState::default()
                };
                Record {
                    config,
                    state: Mutex::new(state),
                }
            })
            .collect();
        let view = View::build(Self::metas(&records), prefix);
        Servers {
            records,
            prefix,
            view: RwLock::new(view),
        }
    }

    /// Every configured server, in config order (disabled ones included).
    pub fn configs(&self) -> impl Iterator<Item = &ServerConfig> {
        self.records.iter().map(|r| &r.config)
    }

    pub fn config(&self, name: &str) -> Option<&ServerConfig> {
        self.record(name).map(|r| &r.config)
    }

    /// Names of the enabled servers (with `include_disabled`, of all), in config order.
    pub fn names(&self, include_disabled: bool) -> Vec<&str> {
        self.configs()
            .filter(|s| include_disabled || !s.disabled)
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The server's config, unless it is not configured or disabled.
    pub fn enabled(&self, name: &str) -> Result<&ServerConfig, Unavailable> {
        match self.config(name) {
            Some(server) if server.disabled => Err(Unavailable::Disabled {
                source: server.source.clone(),
            }),
            Some(server) => Ok(server),
            None => Err(self.not_configured()),
        }
    }

    pub fn not_configured(&self) -> Unavailable {
        Unavailable::NotConfigured {
            configured: self.names(false).into_iter().map(str::to_string).collect(),
        }
    }

    /// The catalog and its search index, as known now.
    pub fn view(&self) -> RwLockReadGuard<'_, View> {
        self.view.read()
    }

    pub fn meta(&self, name: &str) -> Option<Arc<ServerMeta>> {
        self.state(name, |s| s.meta.clone()).flatten()
    }

    pub fn has_meta(&self, name: &str) -> bool {
        self.state(name, |s| s.meta.is_some()).unwrap_or(false)
    }

    /// Takes what `make` builds (called only when needed) as the metadata of `name` listed by
    /// connection `conn_id`, unless the metadata already came from that connection.
    pub fn adopt(&self, name: &str, conn_id: u64, make: impl FnOnce() -> ServerMeta) -> Adopted {
        let same = |s: &RecordState| {
            s.meta
                .as_ref()
                .is_some_and(|m| m.live_connection == Some(conn_id))
        };
        // Every call on a listed server comes by here: the check takes only the record's lock.
        if self.state(name, |s| same(s)).unwrap_or(true) {
            return Adopted::Same;
        }
        let meta = make();
        let mut view = self.view.write();
        let Some(record) = self.record(name) else {
            return Adopted::Same;
        };
        let mut state = record.state.lock();
        if same(&state) {
            return Adopted::Same;
        }
        state.meta = Some(Arc::new(meta));
        state.failure = None;
        state.listed_connections += 1;
        let adopted = match state.listed_connections {
            1 => Adopted::First,
            _ => Adopted::Again,
        };
        drop(state);
        *view = View::build(Self::metas(&self.records), self.prefix);
        adopted
    }

    /// Replaces the metadata of `name` (a re-listing of the live connection).
    pub fn replace(&self, name: &str, meta: ServerMeta) {
        let mut view = self.view.write();
        if let Some(record) = self.record(name) {
            record.state.lock().meta = Some(Arc::new(meta));
            *view = View::build(Self::metas(&self.records), self.prefix);
        }
    }

    /// Records why `name` could not be used (for the backoff and `status`).
    pub fn record_failure(&self, name: &str, cause: Unavailable) {
        self.state(name, |s| {
            s.failure = Some(Failure {
                at: Instant::now(),
                cause,
            })
        });
    }

    pub fn clear_failure(&self, name: &str) {
        self.state(name, |s| s.failure = None);
    }

    /// Why `name` is left alone for now: it failed less than `backoff` ago.
    pub fn backoff(&self, name: &str, backoff: Duration) -> Option<Unavailable> {
        self.state(name, |s| {
            let failure = s.failure.as_ref()?;
            let ago = failure.at.elapsed();
            (ago < backoff).then(|| Unavailable::BackingOff {
                ago,
                backoff,
                cause: Box::new(failure.cause.clone()),
            })
        })
        .flatten()
    }

    /// How long ago `name` last failed, and why.
    pub fn failure(&self, name: &str) -> Option<(Duration, Unavailable)> {
        self.state(name, |s| {
            s.failure
                .as_ref()
                .map(|f| (f.at.elapsed(), f.cause.clone()))
        })
        .flatten()
    }

    /// Whether `name` last failed for want of (valid) credentials.
    pub fn needs_auth(&self, name: &str) -> bool {
        self.failure(name).is_some_and(|(_, why)| why.needs_auth())
    }

    pub fn remote_kind(&self, name: &str) -> Option<RemoteKind> {
        self.state(name, |s| s.remote_kind).flatten()
    }

    pub fn set_remote_kind(&self, name: &str, kind: RemoteKind) {
        self.state(name, |s| s.remote_kind = Some(kind));
    }

    pub fn mark_used(&self, name: &str) {
        self.state(name, |s| s.used = true);
    }

    pub fn is_used(&self, name: &str) -> bool {
        self.state(name, |s| s.used).unwrap_or(false)
    }

    pub fn mark_wanted(&self, name: &str) {
        self.state(name, |s| s.wanted = true);
    }

    pub fn is_wanted(&self, name: &str) -> bool {
        self.state(name, |s| s.wanted).unwrap_or(false)
    }

    /// Registers call `id` of the model on `name` until the returned guard is dropped, so that
    /// [`Servers::cancel_call`] finds it. (Shutdown cancels every call through the token that
    /// `cancel` is a child of: calls without an id are not registered.)
    pub fn call_started(
        &self,
        name: &str,
        id: &str,
        cancel: &CancellationToken,
    ) -> Option<impl Sized + '_> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let key = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let record = self.record(name)?;
        record.state.lock().calls.push(PendingCall {
            key,
            id: id.to_string(),
            cancel: cancel.clone(),
        });
        Some(CallGuard { record, key })
    }

    /// Cancels the call started with `id`, on whichever server it runs.
    pub fn cancel_call(&self, id: &str) {
        for record in &self.records {
            for call in &record.state.lock().calls {
                if call.id == id {
                    call.cancel.cancel();
                }
            }
        }
    }

    fn record(&self, name: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.config.name == name)
    }

    /// Runs `f` on the state of `name` under its lock; `None` if it is not configured.
    fn state<T>(&self, name: &str, f: impl FnOnce(&mut RecordState) -> T) -> Option<T> {
        self.record(name).map(|r| f(&mut r.state.lock()))
    }

    fn metas(records: &[Record]) -> Vec<(&ServerConfig, Option<Arc<ServerMeta>>)> {
        records
            .iter()
            .map(|r| (&r.config, r.state.lock().meta.clone()))
            .collect()
    }
}

/// Keeps a call registered with its server while it runs.
struct CallGuard<'a> {
    record: &'a Record,
    key: u64,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.record.state.lock().calls.retain(|c| c.key != self.key);
    }
}
