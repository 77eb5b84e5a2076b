//! Credentials of remote servers: what each `auth` mode sends (a bearer token from the config or
//! the environment, or OAuth credentials kept in Pi's store), what to do when a server wants
//! credentials, and the `/mcp-auth` instructions.

use super::details::*;
use super::sign_in::SignIns;
use super::Mode;
use super::{CredentialSource, ErrorCode, Kernel, Outcome};
use crate::config::{self, HttpAuth, ServerConfig, Transport};
use crate::oauth;
use crate::render;
use pi_mcp_connection::pool::{AuthNeed, ConnectError, Protocol, SharedCredentials};
use pi_mcp_connection::secret::Secret;
use std::sync::Arc;

/// What a remote server sends: a fixed `Authorization` value, or credentials asked for at each
/// request.
pub(super) type Sent = (Option<Secret>, Option<SharedCredentials>);

impl Kernel {
    /// What `auth` asks to send (a `bearerToken` that is a `!command` runs now); `NeedsAuth`
    /// when a configured credential is missing.
    pub(super) async fn credentials(
        &self,
        server: &ServerConfig,
        auth: &HttpAuth,
    ) -> Result<Sent, ConnectError> {
        match auth {
            HttpAuth::None => Ok((None, None)),
            HttpAuth::Bearer { token, env_var } => {
                let from_env = env_var
                    .as_ref()
                    .and_then(|var| self.env.get(var))
                    .filter(|v| !v.trim().is_empty())
                    .map(Secret::new);
                let configured = match token {
                    Some(value) => {
                        let ctx = config::RunContext {
                            env: &self.env,
                            cwd: &self.cwd,
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
            // Asked of Pi at each connect: `provider_authorization`.
            HttpAuth::Provider(_) => Ok((None, None)),
        }
    }

    /// The OAuth credentials of `server`: one per server for the adapter's life, so that its
    /// connections share the token in memory and renew it once.
    pub(super) fn oauth(&self, server: &ServerConfig) -> Result<Arc<oauth::Access>, String> {
        self.servers
            .access_or(&server.name, || self.new_access(server))
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
                agent_dir: &self.agent_dir,
                cwd: &self.cwd,
                env: &self.env,
                ca_file: ca_file.as_deref(),
                file_limit: self.file_limits.token_file_bytes,
            },
            protocol,
        )?;
        Ok(Arc::new(oauth::Access::new(Arc::new(context))))
    }

    /// `Authorization: Bearer` with the credential Pi holds for `provider` now (never kept).
    pub(super) async fn provider_authorization(
        &self,
        provider: &str,
    ) -> Result<Secret, ConnectError> {
        let Some(asked) = self.host.provider_credential(provider) else {
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

    /// Where credentials of Pi's providers come from (the Pi extension sets it).
    pub fn set_credentials(&self, source: CredentialSource) {
        self.host.set_credentials(source);
    }

    /// A needs-auth reason completed with how to fix it for this server's `auth`.
    pub(super) fn auth_fix(&self, server: &ServerConfig, need: &AuthNeed) -> String {
        let problem = self
            .servers
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
                    store: self.agent_dir.join(oauth::STORE_FILE),
                },
                HttpAuth::Provider(provider) => render::AuthKind::Provider(provider.clone()),
            },
        }
    }

    /// Whether `name` last failed for want of (valid) credentials.
    pub(super) fn needs_auth(&self, name: &str) -> bool {
        self.servers
            .failure(name)
            .is_some_and(|(_, why)| why.needs_auth())
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
                .map(|s| (s.name.as_str(), self.kernel.needs_auth(&s.name)))
                .collect();
            return Outcome::error(
                Mode::Auth,
                ErrorCode::ServerRequired,
                render::auth_usage(&remote),
            );
        }
        let server = match self.kernel.enabled_server(Mode::Auth, name) {
            Ok(server) => server,
            Err(outcome) => return outcome,
        };
        let state = self
            .kernel
            .servers
            .failure(name)
            .filter(|(_, cause)| cause.needs_auth())
            .map(|(_, cause)| cause.reason(name));
        let kind = self.kernel.auth_kind(server);
        let oauth = matches!(kind, render::AuthKind::OAuth { .. });
        Outcome::text(Mode::Auth, render::auth_help(name, &kind, state.as_deref()))
            .with_server(name)
            .with_part(AuthDetails {
                needs_auth: state.is_some(),
                oauth,
            })
    }
}
