//! The session's answers to what servers ask: roots are the session's directory, log messages go
//! to `<agentDir>/mcp.log`, and questions for a person or a model go to the front end (Pi's
//! dialogs and model, a terminal) when one is attached; without one nobody can be asked. The
//! credentials of Pi's providers (`auth.provider`) come from the session too, when Pi gives them.

use crate::pool::{Asker, Host, Question, Reply, Root};
use crate::secret::Secret;
use crate::server_log::{LogMessage, ServerLog};
use futures::future::BoxFuture;
use parking_lot::RwLock;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a person or a model answers: implemented by the Pi extension and the command line.
pub trait FrontEnd: Send + Sync + 'static {
    /// `None` when nobody can be asked (no UI, no terminal).
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>>;
    /// A `CreateMessageResult`, or why not.
    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// Asks Pi for the credential of one of its providers; `None` when it has none.
pub type CredentialSource = Arc<dyn Fn(String) -> BoxFuture<'static, Option<Secret>> + Send + Sync>;

pub struct SessionHost {
    cwd: RwLock<PathBuf>,
    log: ServerLog,
    front_end: RwLock<Option<Arc<dyn FrontEnd>>>,
    credentials: RwLock<Option<CredentialSource>>,
}

impl SessionHost {
    pub fn new(cwd: &Path, agent_dir: &Path) -> SessionHost {
        SessionHost {
            cwd: RwLock::new(cwd.to_path_buf()),
            log: ServerLog::new(agent_dir.join("mcp.log")),
            front_end: RwLock::new(None),
            credentials: RwLock::new(None),
        }
    }

    pub fn attach(&self, front_end: Arc<dyn FrontEnd>) {
        *self.front_end.write() = Some(front_end);
    }

    fn front_end(&self) -> Option<Arc<dyn FrontEnd>> {
        self.front_end.read().clone()
    }

    pub fn set_credentials(&self, source: CredentialSource) {
        *self.credentials.write() = Some(source);
    }

    /// Asks Pi for its credential for `provider` now (never kept); `None` when Pi gave no way
    /// to ask (outside Pi).
    pub fn provider_credential(
        &self,
        provider: &str,
    ) -> Option<BoxFuture<'static, Option<Secret>>> {
        let source = self.credentials.read().clone()?;
        Some(source(provider.to_string()))
    }
}

impl Host for SessionHost {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        match self.front_end() {
            Some(front_end) => front_end.elicit(asker, question),
            None => Box::pin(async { None }),
        }
    }

    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        match self.front_end() {
            Some(front_end) => front_end.sample(asker, params),
            None => {
                let why = format!(
                    "{} asked the model (sampling), but no model is available here",
                    asker.server
                );
                Box::pin(async move { Err(why) })
            }
        }
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        Root::directory(&self.cwd.read()).into_iter().collect()
    }

    fn log(&self, server: &str, message: &LogMessage) {
        // Best effort: a log that cannot be written never fails a call.
        let _ = self.log.append(server, message);
    }
}
