//! The sign-ins people ask for (`pi-mcp auth`, `/mcp login`, `/mcp logout`, `/mcp-auth`) and
//! the ones that start by themselves when a server refuses a request and `autoAuth` is on. The
//! browser step is shown through `auth-url` events; text the user pasted arrives through
//! `paste`.

use super::{is_explicit, SignIn, WaitingSignIn};
use crate::adapter::details::*;
use crate::adapter::reach::Need;
use crate::adapter::{ErrorCode, Kernel, Mode, Outcome, Unavailable};
use crate::config::{Grant, HttpAuth, ServerConfig, Transport};
use crate::events::Event;
use crate::oauth::{self, AuthStatus, Challenge, OAuthError};
use crate::render;
use crate::render::content::text_block;
use pi_mcp_connection::pool::AuthNeed;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Sign-ins one refused request may start (a step-up can follow a first sign-in).
const SIGN_INS_PER_REQUEST: usize = 2;

/// Sign-ins people ask for, and the autoAuth retry.
pub struct SignIns<'a> {
    kernel: &'a Arc<Kernel>,
}

crate::adapter::borrows_kernel!(SignIns);

impl SignIns<'_> {
    fn state(&self) -> &SignIn {
        &self.kernel.sign_in
    }

    /// Whether someone can see a sign-in (Pi's UI, a terminal).
    pub fn set_interactive(&self, interactive: bool) {
        self.state()
            .interactive
            .store(interactive, Ordering::SeqCst);
        self.kernel.broker.set_ui(interactive);
    }

    /// Text the user pasted for the sign-in to `name` waiting in its browser step; false when
    /// none waits.
    pub fn paste(&self, name: &str, text: &str) -> bool {
        if let Some(trial) = self.state().trial.lock().clone() {
            if trial.paste(name, text) {
                return true;
            }
        }
        let waiting = self.state().record(name, |r| r.waiting.clone()).flatten();
        waiting.is_some_and(|w| w.paste.try_send(text.to_string()).is_ok())
    }

    /// Ends the sign-in to `name` waiting in its browser step (the user gave up, e.g. Esc at
    /// the paste prompt); false when none waits.
    pub fn cancel_sign_in(&self, name: &str) -> bool {
        if let Some(trial) = self.state().trial.lock().clone() {
            if trial.cancel_sign_in(name) {
                return true;
            }
        }
        let waiting = self.state().record(name, |r| r.waiting.clone()).flatten();
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
            Err(why) if why.needs_auth() => self.state().refusal(name),
            Err(why) => return not_signed_in(name, ErrorCode::ConnectFailed, &why),
        };
        for attempt in 1..=SIGN_INS_PER_REQUEST {
            if let Err(e) = self.sign_in(server, need).await {
                return sign_in_failed(Mode::Login, name, &e);
            }
            self.kernel.servers.clear_failure(name);
            match self.kernel.ready(name, Need::Listed).await {
                Ok(_) => return self.signed_in(server),
                Err(why) if why.needs_auth() && attempt < SIGN_INS_PER_REQUEST => {
                    need = self.state().refusal(name);
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
            .state()
            .oauth(server)
            .ok()
            .map(|a| a.server().status())
            .is_some_and(|s| matches!(s, Ok(AuthStatus::SignedIn { .. })));
        let text = if signed_in {
            format!("\"{name}\" is {}.", self.state().sign_in_state(server)?)
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
            .state()
            .oauth(server)
            .ok()
            .and_then(|a| a.server().tokens().ok().flatten())
            .and_then(|t| t.expires_at)
            .map(|at| ((at - crate::adapter::now_ms()) / 1000.0).max(0.0) as u64);
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
        let access = match self.state().oauth(server) {
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
                    let fix = self.state().auth_fix(server, &need);
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
        let server = self
            .kernel
            .servers
            .enabled(name)
            .map_err(|why| why.outcome(mode, name))?;
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

    /// Runs the sign-in (one per server at a time), showing its URL through `auth-url` events.
    async fn sign_in(
        &self,
        server: &ServerConfig,
        need: Option<AuthNeed>,
    ) -> Result<oauth::SignedIn, OAuthError> {
        let access = self.state().oauth(server).map_err(OAuthError::Failed)?;
        let name = server.name.clone();
        let turn = self
            .state()
            .record(&name, |r| r.turn.clone())
            .ok_or_else(|| OAuthError::Failed(format!("server \"{name}\" is not configured")))?;
        let _turn = turn.lock().await;
        let challenge = need
            .and_then(|n| n.challenge)
            .map(|header| Challenge::parse(&header, &access.server().url));
        let (paste, pasted) = mpsc::channel(4);
        let cancel = self.kernel.closing.child_token();
        let waiting = WaitingSignIn {
            paste,
            cancel: cancel.clone(),
        };
        self.state().record(&name, |r| r.waiting = Some(waiting));
        let (kernel, shown) = (self.kernel.clone(), name.clone());
        let request = oauth::SignIn {
            challenge,
            pasted: Some(pasted),
            open_browser: true,
            cancel,
            show_url: Box::new(move |url, step| {
                kernel.events.emit(Event::AuthUrl {
                    server: shown.clone(),
                    url: url.as_str().to_string(),
                    text: render::sign_in_url(&shown, url, &step),
                    prompt: render::paste_prompt(&shown),
                });
            }),
        };
        let result = oauth::sign_in(access.server(), request).await;
        self.state().record(&name, |r| r.waiting = None);
        access.reload();
        self.kernel.events.emit(Event::AuthDone {
            server: name,
            signed_in: result.is_ok(),
            error: result.as_ref().err().map(OAuthError::to_string),
        });
        result
    }

    /// Runs `attempt`; when it fails for want of a sign-in and `autoAuth` allows, signs in and
    /// runs it again (twice at most: a step-up may follow a first sign-in).
    pub async fn with_sign_in<F, Fut>(&self, attempt: F) -> Outcome
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
                .kernel
                .server(&name)
                .filter(|_| self.may_sign_in_by_itself(&name))
            else {
                break;
            };
            let signed_in = self.sign_in(server, self.state().refusal(&name)).await;
            if let Err(e) = signed_in {
                outcome.content.push(text_block(format!(
                    "Signing in by itself (autoAuth) did not work: {e}"
                )));
                break;
            }
            self.kernel.servers.clear_failure(&name);
            outcome = attempt().await;
        }
        outcome
    }

    fn may_sign_in_by_itself(&self, name: &str) -> bool {
        let machine = matches!(
            self.kernel.server(name).map(|s| &s.transport),
            Some(Transport::Http { auth: HttpAuth::OAuth(c), .. }) if c.grant == Grant::ClientCredentials
        );
        self.state().may_retry() && (machine || self.state().interactive())
    }
}

impl SignIns<'_> {
    /// `/mcp-auth <server>`: how to give the server credentials, and where it stands now.
    pub fn auth_help(&self, name: &str) -> Outcome {
        if name.is_empty() {
            let remote: Vec<(&str, bool)> = self
                .kernel
                .servers
                .configs()
                .filter(|s| !s.disabled && matches!(s.transport, Transport::Http { .. }))
                .map(|s| (s.name.as_str(), self.kernel.servers.needs_auth(&s.name)))
                .collect();
            return Outcome::error(
                Mode::Auth,
                ErrorCode::ServerRequired,
                render::auth_usage(&remote),
            );
        }
        let server = match self
            .kernel
            .servers
            .enabled(name)
            .map_err(|why| why.outcome(Mode::Auth, name))
        {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        let state = self
            .kernel
            .servers
            .failure(name)
            .filter(|(_, cause)| cause.needs_auth())
            .map(|(_, cause)| cause.reason(name));
        let kind = self.state().auth_kind(server);
        let oauth = matches!(kind, render::AuthKind::OAuth { .. });
        Outcome::text(Mode::Auth, render::auth_help(name, &kind, state.as_deref()))
            .with_server(name)
            .with_part(AuthDetails {
                needs_auth: state.is_some(),
                oauth,
            })
    }
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
