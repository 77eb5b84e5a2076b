//! Signing in to and out of OAuth servers: on request (`pi-mcp auth`, `/mcp login`,
//! `/mcp-auth`), or by itself when a server refuses a request and `autoAuth` is on. The browser
//! step is shown through `auth-url` events; text the user pastes arrives through `paste`. Each
//! server's credentials, last refusal and waiting sign-in live in its registry record.

use super::connect::Need;
use super::details::*;
use super::servers::WaitingSignIn;
use super::Mode;
use super::{ErrorCode, Kernel, Outcome, Unavailable};
use crate::config::{Grant, HttpAuth, ServerConfig, Transport};
use crate::events::Event;
use crate::oauth::{self, AuthStatus, Challenge, OAuthError, SignIn};
use crate::render;
use crate::render::content::text_block;
use pi_mcp_connection::pool::AuthNeed;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Sign-ins one refused request may start (a step-up can follow a first sign-in).
const SIGN_INS_PER_REQUEST: usize = 2;

/// When sign-ins may start by themselves.
pub(super) struct AutoSignIn {
    /// `autoAuth` (or `--auth`): sign in when a server asks, then retry.
    auto: AtomicBool,
    /// Someone can see the authorization URL (a terminal, Pi's UI).
    interactive: AtomicBool,
}

impl AutoSignIn {
    pub fn new(auto: bool, interactive: bool) -> AutoSignIn {
        AutoSignIn {
            auto: AtomicBool::new(auto),
            interactive: AtomicBool::new(interactive),
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
}

/// Sign-ins people ask for: login, logout, the pasted redirect, `/mcp-auth` (auth.rs).
pub struct SignIns<'a> {
    pub(super) kernel: &'a Arc<Kernel>,
}

impl<'a> From<&'a Arc<Kernel>> for SignIns<'a> {
    fn from(kernel: &'a Arc<Kernel>) -> Self {
        SignIns { kernel }
    }
}

impl SignIns<'_> {
    /// Whether someone can see a sign-in (Pi's UI, a terminal).
    pub fn set_interactive(&self, interactive: bool) {
        self.kernel
            .sign_ins
            .interactive
            .store(interactive, Ordering::SeqCst);
        self.kernel.broker.set_ui(interactive);
    }

    /// Text the user pasted for the sign-in to `name` waiting in its browser step; false when
    /// none waits.
    pub fn paste(&self, name: &str, text: &str) -> bool {
        if let Some(trial) = self.kernel.trial.lock().clone() {
            if trial.paste(name, text) {
                return true;
            }
        }
        let waiting = self.kernel.servers.waiting(name);
        waiting.is_some_and(|w| w.paste.try_send(text.to_string()).is_ok())
    }

    /// Ends the sign-in to `name` waiting in its browser step (the user gave up, e.g. Esc at
    /// the paste prompt); false when none waits.
    pub fn cancel_sign_in(&self, name: &str) -> bool {
        if let Some(trial) = self.kernel.trial.lock().clone() {
            if trial.cancel_sign_in(name) {
                return true;
            }
        }
        let waiting = self.kernel.servers.waiting(name);
        waiting.map(|w| w.cancel.cancel()).is_some()
    }

    /// `pi-mcp auth <server>`, `/mcp login <server>`: signs in unless the server already
    /// accepts us, then connects (a second sign-in when the server still refuses, e.g. for more
    /// scope or a new authorization server).
    pub async fn login(&self, name: &str) -> Outcome {
        let server = match self.oauth_server(Mode::Login, name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        self.kernel.servers.clear_failure(name);
        let mut need = match self.kernel.ready(name, Need::Listed).await {
            Ok(_) => match self.already(server) {
                Some(outcome) => return outcome,
                None => None,
            },
            Err(why) if why.needs_auth() => self.kernel.servers.refusal(name),
            Err(why) => return not_signed_in(name, ErrorCode::ConnectFailed, &why),
        };
        for attempt in 1..=SIGN_INS_PER_REQUEST {
            if let Err(e) = self.kernel.sign_in(server, need).await {
                return sign_in_failed(Mode::Login, name, &e);
            }
            self.kernel.servers.clear_failure(name);
            match self.kernel.ready(name, Need::Listed).await {
                Ok(_) => return self.signed_in(server),
                Err(why) if why.needs_auth() && attempt < SIGN_INS_PER_REQUEST => {
                    need = self.kernel.servers.refusal(name);
                }
                Err(why) => {
                    let code = match why.needs_auth() {
                        true => ErrorCode::AuthRequired,
                        false => ErrorCode::ConnectFailed,
                    };
                    return not_signed_in(name, code, &why);
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// The answer of a login to a server that accepted us without a new sign-in; `None` when
    /// one is wanted anyway (`auth: "oauth"` without a stored sign-in).
    fn already(&self, server: &ServerConfig) -> Option<Outcome> {
        let name = &server.name;
        let signed_in = self
            .kernel
            .oauth(server)
            .ok()
            .map(|a| a.server().status())
            .is_some_and(|s| matches!(s, Ok(AuthStatus::SignedIn { .. })));
        let text = if signed_in {
            format!("\"{name}\" is {}.", self.kernel.sign_in_state(server)?)
        } else if !is_explicit(server) {
            format!("\"{name}\" accepted the connection without a sign-in; it needs none.")
        } else {
            return None;
        };
        Some(Outcome::text(Mode::Login, text).with_server(name.as_str()))
    }

    fn signed_in(&self, server: &ServerConfig) -> Outcome {
        let name = &server.name;
        let tools = self.kernel.servers.view().server_tools(name).len();
        let expires = self
            .kernel
            .oauth(server)
            .ok()
            .and_then(|a| a.server().tokens().ok().flatten())
            .and_then(|t| t.expires_at)
            .map(|at| ((at - super::now_ms()) / 1000.0).max(0.0) as u64);
        Outcome::text(Mode::Login, render::signed_in(name, expires, tools))
            .with_server(name.as_str())
            .with_part(LoginDetails { tools })
    }

    /// `pi-mcp logout <server>`, `/mcp logout <server>`: revokes and deletes the sign-in.
    pub async fn logout(&self, name: &str) -> Outcome {
        let server = match self.oauth_server(Mode::Logout, name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        let access = match self.kernel.oauth(server) {
            Ok(access) => access,
            Err(why) => return Outcome::error(Mode::Logout, ErrorCode::SignInFailed, why),
        };
        self.kernel.pool.close(name).await;
        match oauth::sign_out(access.server()).await {
            Ok(out) => {
                access.reload();
                self.kernel.servers.clear_failure(name);
                if out.removed {
                    // Status says so until the next sign-in (the server's refusal and its
                    // challenge stay for that one).
                    let need = AuthNeed::missing(render::signed_out_reason());
                    let fix = self.kernel.auth_fix(server, &need);
                    self.kernel.fail(
                        name,
                        Unavailable::NeedsAuth {
                            why: need.message,
                            fix,
                        },
                    );
                }
                let text = render::signed_out(name, out.removed, out.revocation.as_ref());
                let revocation_failed = matches!(out.revocation, Some(Err(_))).then_some(true);
                Outcome::text(Mode::Logout, text)
                    .with_server(name)
                    .with_part(LogoutDetails { revocation_failed })
            }
            Err(e) => sign_in_failed(Mode::Logout, name, &e),
        }
    }

    /// The server `name` if it may sign in with OAuth, else the answer saying why not.
    fn oauth_server(&self, mode: Mode, name: &str) -> Result<&ServerConfig, Outcome> {
        let server = self.kernel.enabled_server(mode, name)?;
        let why = match &server.transport {
            Transport::Http {
                auth: HttpAuth::OAuth(_),
                ..
            } => return Ok(server),
            Transport::Stdio { .. } => {
                "is a local (stdio) server; it takes credentials through `env`"
            }
            Transport::Socket { .. } => {
                "is reached over a Unix socket; it takes credentials where it was started"
            }
            Transport::Http {
                auth: HttpAuth::Bearer { .. },
                ..
            } => "sends a bearer token (`auth: \"bearer\"`); OAuth sign-in does not apply",
            Transport::Http { .. } => {
                "does not use OAuth (`oauth: false`, `auth: false`, or an `Authorization` header in its config)"
            }
        };
        Err(
            Outcome::error(mode, ErrorCode::SignInFailed, format!("\"{name}\" {why}."))
                .with_server(name),
        )
    }
}

impl Kernel {
    /// The command that signs in to `name` where this adapter runs.
    pub(super) fn login_command(&self, name: &str) -> String {
        if self.cli {
            format!("pi-mcp auth {name}")
        } else {
            format!("/mcp login {name}")
        }
    }

    /// Runs the sign-in (one per server at a time), showing its URL through `auth-url` events.
    async fn sign_in(
        self: &Arc<Self>,
        server: &ServerConfig,
        need: Option<AuthNeed>,
    ) -> Result<oauth::SignedIn, OAuthError> {
        let access = self.oauth(server).map_err(OAuthError::Failed)?;
        let name = server.name.clone();
        let turn = self
            .servers
            .sign_in_turn(&name)
            .ok_or_else(|| OAuthError::Failed(format!("server \"{name}\" is not configured")))?;
        let _turn = turn.lock().await;
        let challenge = need
            .and_then(|n| n.challenge)
            .map(|header| Challenge::parse(&header, &access.server().url));
        let (paste, pasted) = mpsc::channel(4);
        let cancel = self.closing.child_token();
        let waiting = WaitingSignIn {
            paste,
            cancel: cancel.clone(),
        };
        self.servers.set_waiting(&name, Some(waiting));
        let (this, shown) = (self.clone(), name.clone());
        let request = SignIn {
            challenge,
            pasted: Some(pasted),
            open_browser: true,
            cancel,
            show_url: Box::new(move |url, step| {
                this.events.emit(Event::AuthUrl {
                    server: shown.clone(),
                    url: url.as_str().to_string(),
                    text: render::sign_in_url(&shown, url, &step),
                    prompt: render::paste_prompt(&shown),
                });
            }),
        };
        let result = oauth::sign_in(access.server(), request).await;
        self.servers.set_waiting(&name, None);
        access.reload();
        self.events.emit(Event::AuthDone {
            server: name,
            signed_in: result.is_ok(),
            error: result.as_ref().err().map(OAuthError::to_string),
        });
        result
    }

    /// Runs `attempt`; when it fails for want of a sign-in and `autoAuth` allows, signs in and
    /// runs it again (twice at most: a step-up may follow a first sign-in).
    pub(super) async fn with_sign_in<F, Fut>(self: &Arc<Self>, attempt: F) -> Outcome
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Outcome>,
    {
        let mut outcome = attempt().await;
        for _ in 0..SIGN_INS_PER_REQUEST {
            let Some(name) = auth_required(&outcome) else {
                break;
            };
            let Some(server) = self
                .server(&name)
                .filter(|_| self.may_sign_in_by_itself(&name))
            else {
                break;
            };
            let signed_in = self.sign_in(server, self.servers.refusal(&name)).await;
            if let Err(e) = signed_in {
                outcome.content.push(text_block(format!(
                    "Signing in by itself (autoAuth) did not work: {e}"
                )));
                break;
            }
            self.servers.clear_failure(&name);
            outcome = attempt().await;
        }
        outcome
    }

    fn may_sign_in_by_itself(&self, name: &str) -> bool {
        let machine = matches!(
            self.server(name).map(|s| &s.transport),
            Some(Transport::Http { auth: HttpAuth::OAuth(c), .. }) if c.grant == Grant::ClientCredentials
        );
        self.sign_ins.may_retry() && (machine || self.sign_ins.interactive.load(Ordering::SeqCst))
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
    pub(super) fn shown_sign_in(&self, server: &ServerConfig) -> Option<String> {
        let state = self.sign_in_state(server)?;
        (is_explicit(server) || state != render::sign_in_state(false, None, false)).then_some(state)
    }

    /// Whether `name` failed for want of a sign-in and has one now (made by another process,
    /// Pi included): then it is tried again at once instead of after the backoff.
    pub(super) fn signed_in_since_refusal(&self, name: &str) -> bool {
        if !self.needs_auth(name) {
            return false;
        }
        self.servers.access(name).is_some_and(|a| {
            a.reload();
            matches!(a.server().status(), Ok(AuthStatus::SignedIn { .. }))
        })
    }
}

fn is_explicit(server: &ServerConfig) -> bool {
    matches!(&server.transport, Transport::Http { auth: HttpAuth::OAuth(c), .. } if c.explicit)
}

/// The server of an `auth_required` outcome.
fn auth_required(outcome: &Outcome) -> Option<String> {
    match outcome.details.error {
        Some(ErrorCode::AuthRequired) => outcome.details.server.clone(),
        _ => None,
    }
}

fn not_signed_in(name: &str, code: ErrorCode, why: &Unavailable) -> Outcome {
    Outcome::error(
        Mode::Login,
        code,
        format!("Not signed in to \"{name}\": {}", why.reason(name)),
    )
    .with_server(name)
}

fn sign_in_failed(mode: Mode, name: &str, e: &OAuthError) -> Outcome {
    let (code, text) = match e {
        OAuthError::Cancelled => (ErrorCode::Aborted, render::sign_in_cancelled(name)),
        OAuthError::SignInRequired(_) => (
            ErrorCode::AuthRequired,
            format!("Signing in to \"{name}\" failed: {e}"),
        ),
        _ => (
            ErrorCode::SignInFailed,
            format!("Signing in to \"{name}\" failed: {e}"),
        ),
    };
    Outcome::error(mode, code, text).with_server(name)
}
