//! Sign-in: the credentials of remote servers and the OAuth sign-ins that get them. The kernel
//! holds one [`SignIn`] and calls it on the connect path alone: what a server's `auth` sends
//! ([`SignIn::credentials`]), a refusal to remember ([`SignIn::refused`]) and whether a sign-in
//! came meanwhile ([`SignIn::signed_in_again`]). What people ask for (login, logout, the pasted
//! redirect, `/mcp-auth`) and the autoAuth retry are the [`SignIns`] service (flows.rs).
//!
//! Each server's credentials, last refusal and waiting sign-in live here, one record per server.

mod flows;

pub use flows::SignIns;

use super::host::SessionHost;
use super::Adapter;
use crate::config::{self, Config, Env, HttpAuth, LoadOptions, ServerConfig, Transport};
use crate::oauth::{self, AuthStatus};
use crate::render;
use parking_lot::Mutex;
use pi_mcp_connection::pool::{AuthNeed, ConnectError, Protocol, SharedCredentials};
use pi_mcp_connection::secret::Secret;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a remote server sends: a fixed `Authorization` value, or credentials asked for at each
/// request.
type Sent = (Option<Secret>, Option<SharedCredentials>);

/// Sign-in as this session has it.
pub(super) struct SignIn {
    /// `autoAuth` (or `--auth`): sign in when a server asks, then retry.
    auto: AtomicBool,
    /// Someone can see the authorization URL (a terminal, Pi's UI).
    interactive: AtomicBool,
    /// Opened by `pi-mcp`: texts name its commands.
    cli: bool,
    /// Where credentials are read and stored, and Pi's providers' credentials.
    place: Place,
    /// One record per configured server.
    servers: HashMap<String, Mutex<Record>>,
    /// The gateway `add` tries a new server with, while it runs: a sign-in it shows takes the
    /// pasted redirect through this adapter.
    trial: Mutex<Option<Arc<Adapter>>>,
}

/// Where the session's credentials come from.
struct Place {
    agent_dir: PathBuf,
    cwd: PathBuf,
    env: Env,
    token_file_bytes: u64,
    host: Arc<SessionHost>,
}

/// An OAuth server's credentials and sign-in.
#[derive(Default)]
struct Record {
    /// Its credentials (made on first use), shared by its connections.
    access: Option<Arc<oauth::Access>>,
    /// Its last refusal: the challenge drives the next sign-in.
    refusal: Option<AuthNeed>,
    /// The sign-in waiting for its browser step.
    waiting: Option<WaitingSignIn>,
    /// One sign-in at a time.
    turn: Arc<tokio::sync::Mutex<()>>,
}

/// A sign-in waiting for its browser step: where pasted text goes, and what ends it.
#[derive(Clone)]
struct WaitingSignIn {
    paste: mpsc::Sender<String>,
    cancel: CancellationToken,
}

impl SignIn {
    /// Sign-in for the servers of `config`, loaded as `load` says (its credentials are kept in
    /// the agent dir, its `!command` values run in the cwd); `auto`: `autoAuth` (or `--auth`).
    pub fn new(
        config: &Config,
        load: &LoadOptions,
        auto: bool,
        cli: bool,
        host: &Arc<SessionHost>,
    ) -> SignIn {
        SignIn {
            auto: AtomicBool::new(auto),
            interactive: AtomicBool::new(cli),
            cli,
            place: Place {
                agent_dir: load.agent_dir.clone(),
                cwd: load.cwd.clone(),
                env: load.env.clone(),
                token_file_bytes: load.limits.token_file_bytes,
                host: host.clone(),
            },
            servers: config
                .servers
                .iter()
                .map(|s| (s.name.clone(), Mutex::default()))
                .collect(),
            trial: Mutex::new(None),
        }
    }

    /// Whether someone can see the authorization URL.
    pub fn interactive(&self) -> bool {
        self.interactive.load(Ordering::SeqCst)
    }

    /// Whether a refused request may be followed by a sign-in and a retry at all.
    pub fn may_retry(&self) -> bool {
        self.auto.load(Ordering::SeqCst)
    }

    /// Pasted text and a cancelled sign-in go to `trial` too while `add` tries a server.
    pub fn through_trial(&self, trial: Option<Arc<Adapter>>) {
        *self.trial.lock() = trial;
    }

    fn record<T>(&self, name: &str, f: impl FnOnce(&mut Record) -> T) -> Option<T> {
        self.servers.get(name).map(|r| f(&mut r.lock()))
    }

    /// What `server`'s `auth` asks to send (a `bearerToken` that is a `!command` runs now, Pi
    /// is asked for a provider's credential); `NeedsAuth` when a configured credential is
    /// missing.
    pub async fn credentials(
        &self,
        server: &ServerConfig,
        auth: &HttpAuth,
    ) -> Result<Sent, ConnectError> {
        match auth {
            HttpAuth::None => Ok((None, None)),
            HttpAuth::Bearer { token, env_var } => {
                let from_env = env_var
                    .as_ref()
                    .and_then(|var| self.place.env.get(var))
                    .filter(|v| !v.trim().is_empty())
                    .map(Secret::new);
                let configured = match token {
                    Some(value) => {
                        let ctx = config::RunContext {
                            env: &self.place.env,
                            cwd: &self.place.cwd,
                        };
                        let resolved = value.resolve("bearerToken", &ctx).await;
                        Some(resolved.map_err(|e| ConnectError::Failed(e.to_string()))?)
                    }
                    None => None,
                };
                match configured.filter(|t| !t.is_empty()).or(from_env) {
                    Some(token) => Ok((
                        Some(Secret::new(format!("Bearer {}", token.expose()))),
                        None,
                    )),
                    None => Err(ConnectError::NeedsAuth(AuthNeed::missing(match env_var {
                        Some(var) => format!("`bearerTokenEnv` names {var}, which is not set"),
                        None => "no bearer token is configured".to_string(),
                    }))),
                }
            }
            HttpAuth::OAuth(_) => {
                let access = self.oauth(server).map_err(ConnectError::Failed)?;
                // A sign-in that cannot be read (an oversized token file, say) stops here,
                // before any request goes out without it.
                if let Err(e) = access.server().tokens() {
                    return Err(ConnectError::NeedsAuth(AuthNeed::missing(e.to_string())));
                }
                Ok((None, Some(SharedCredentials(access))))
            }
            HttpAuth::Provider(provider) => {
                Ok((Some(self.provider_authorization(provider).await?), None))
            }
        }
    }

    /// The OAuth credentials of `server`: one per server for the adapter's life, so that its
    /// connections share the token in memory and renew it once.
    fn oauth(&self, server: &ServerConfig) -> Result<Arc<oauth::Access>, String> {
        self.record(&server.name, |r| match &r.access {
            Some(access) => Ok(access.clone()),
            None => {
                let access = self.new_access(server)?;
                r.access = Some(access.clone());
                Ok(access)
            }
        })
        .unwrap_or_else(|| Err(format!("server \"{}\" is not configured", server.name)))
    }

    fn access(&self, name: &str) -> Option<Arc<oauth::Access>> {
        self.record(name, |r| r.access.clone()).flatten()
    }

    fn new_access(&self, server: &ServerConfig) -> Result<Arc<oauth::Access>, String> {
        let Transport::Http {
            url,
            auth: HttpAuth::OAuth(config),
            ca_file,
            ..
        } = &server.transport
        else {
            return Err(format!("\"{}\" does not use OAuth", server.name));
        };
        let protocol = match server.protocol {
            Protocol::Modern => "2026-07-28",
            _ => "2025-11-25",
        };
        let context = oauth::Server::new(
            &server.name,
            url,
            config,
            oauth::Place {
                agent_dir: &self.place.agent_dir,
                cwd: &self.place.cwd,
                env: &self.place.env,
                ca_file: ca_file.as_deref(),
                file_limit: self.place.token_file_bytes,
            },
            protocol,
        )?;
        Ok(Arc::new(oauth::Access::new(Arc::new(context))))
    }

    /// `Authorization: Bearer` with the credential Pi holds for `provider` now (never kept).
    async fn provider_authorization(&self, provider: &str) -> Result<Secret, ConnectError> {
        let Some(asked) = self.place.host.provider_credential(provider) else {
            return Err(ConnectError::Failed(format!(
                "its credential is Pi's for the provider \"{provider}\" (`auth.provider`), so it can be used only inside Pi"
            )));
        };
        match asked.await {
            Some(credential) if !credential.is_empty() => {
                Ok(Secret::new(format!("Bearer {}", credential.expose())))
            }
            _ => Err(ConnectError::NeedsAuth(AuthNeed::missing(format!(
                "Pi has no credential for the provider \"{provider}\""
            )))),
        }
    }

    /// `server` refused our credentials: its challenge is kept for the next sign-in; the reason
    /// completed with how to fix it.
    pub fn refused(&self, server: &ServerConfig, need: &AuthNeed) -> String {
        self.record(&server.name, |r| r.refusal = Some(need.clone()));
        self.auth_fix(server, need)
    }

    fn refusal(&self, name: &str) -> Option<AuthNeed> {
        self.record(name, |r| r.refusal.clone()).flatten()
    }

    /// A needs-auth reason completed with how to fix it for this server's `auth`.
    fn auth_fix(&self, server: &ServerConfig, need: &AuthNeed) -> String {
        let problem = self
            .access(&server.name)
            .and_then(|access| access.problem());
        let why = match problem {
            Some(problem) => format!("{}; {problem}", need.message),
            None => need.message.clone(),
        };
        render::needs_auth(&server.name, &why, &self.auth_kind(server))
    }

    fn auth_kind(&self, server: &ServerConfig) -> render::AuthKind {
        match &server.transport {
            Transport::Stdio { .. } | Transport::Socket { .. } => render::AuthKind::Local,
            Transport::Http { auth, .. } => match auth {
                HttpAuth::None => render::AuthKind::None,
                HttpAuth::Bearer { env_var, .. } => render::AuthKind::Bearer {
                    env_var: env_var.clone(),
                },
                HttpAuth::OAuth(_) => render::AuthKind::OAuth {
                    login: self.login_command(&server.name),
                    store: self.place.agent_dir.join(oauth::STORE_FILE),
                },
                HttpAuth::Provider(provider) => render::AuthKind::Provider(provider.clone()),
            },
        }
    }

    /// The command that signs in to `name` where this adapter runs.
    fn login_command(&self, name: &str) -> String {
        if self.cli {
            format!("pi-mcp auth {name}")
        } else {
            format!("/mcp login {name}")
        }
    }

    /// Whether `name`, refused before, has a sign-in now (made by another process, Pi
    /// included): then it is tried again at once instead of after the backoff.
    pub fn signed_in_again(&self, name: &str) -> bool {
        self.access(name).is_some_and(|a| {
            a.reload();
            matches!(a.server().status(), Ok(AuthStatus::SignedIn { .. }))
        })
    }

    /// `server`'s sign-in as status shows it; `None` for servers without OAuth.
    fn sign_in_state(&self, server: &ServerConfig) -> Option<String> {
        if !matches!(
            &server.transport,
            Transport::Http {
                auth: HttpAuth::OAuth(_),
                ..
            }
        ) {
            return None;
        }
        let status = self.oauth(server).ok()?.server().status().ok()?;
        let now = super::now_ms();
        Some(match status {
            AuthStatus::SignedOut => render::sign_in_state(false, None, false),
            AuthStatus::Expired => render::sign_in_state(true, Some(0), false),
            AuthStatus::SignedIn {
                expires_at,
                refreshable,
            } => render::sign_in_state(
                true,
                expires_at.map(|at| ((at - now) / 1000.0) as i64),
                refreshable,
            ),
        })
    }

    /// The sign-in status shows: for servers signed in, and for `auth: "oauth"` ones.
    pub fn shown(&self, server: &ServerConfig) -> Option<String> {
        let state = self.sign_in_state(server)?;
        (is_explicit(server) || state != render::sign_in_state(false, None, false)).then_some(state)
    }
}

fn is_explicit(server: &ServerConfig) -> bool {
    matches!(&server.transport, Transport::Http { auth: HttpAuth::OAuth(c), .. } if c.explicit)
}
