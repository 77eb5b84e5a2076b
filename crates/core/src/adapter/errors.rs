//! The adapter's typed failures: the stable codes a failed mode puts in `details.error`, and why a
//! server cannot be used right now.

use super::Mode;
use super::Outcome;
use pi_mcp_connection::pool::RequestError;
use std::path::PathBuf;
use std::time::Duration;

use crate::named_enum::named_enum;

named_enum! {
    /// The stable codes of `details.error`, the one list of them. Programs branch on these; the
    /// text beside them is for the model.
    ErrorCode {
    /// `args` is not an object, or does not fit the tool's input schema.
    InvalidArgs = "invalid_args",
    /// Gateway fields (`tool`, `search`, …) were passed inside `args`.
    NestedParams = "nested_params",
    /// The search pattern is not a valid (or is too large a) regex.
    InvalidQuery = "invalid_query",
    /// No tool of that name; the text lists the closest names.
    ToolNotFound = "tool_not_found",
    /// The name matches tools of several servers; the text lists them.
    AmbiguousTool = "ambiguous_tool",
    /// The config hides the tool (`exposure`/`toolExposure` `"hidden"`).
    ToolHidden = "tool_hidden",
    /// Pi's `--tools` / `--exclude-tools` leave the tool out of this run.
    ToolExcluded = "tool_excluded",
    /// The tool is for its server's MCP App alone (`_meta.ui.visibility: ["app"]`).
    ToolForApp = "tool_for_app",
    ServerNotFound = "server_not_found",
    ServerDisabled = "server_disabled",
    /// `/mcp-auth` without a server name.
    ServerRequired = "server_required",
    /// The server cannot be started, reached or listed now; the text says why and since when.
    ServerUnavailable = "server_unavailable",
    /// An explicit connect failed.
    ConnectFailed = "connect_failed",
    /// The server wants a (new) sign-in or other credentials; the text names the command that
    /// signs in (`/mcp login <server>`, `pi-mcp auth <server>`) or what to configure.
    AuthRequired = "auth_required",
    /// A sign-in or sign-out did not work: a check failed, the server refused, or nobody
    /// completed the browser step.
    SignInFailed = "sign_in_failed",
    /// The tool ran and reported an error (`isError` in its result).
    ToolError = "tool_error",
    /// The call was cancelled (Pi's abort signal, `cancel(callId)`).
    Aborted = "aborted",
    Timeout = "timeout",
    /// The connection ended while the call ran.
    ConnectionLost = "connection_lost",
    /// The result was over the limit of one message and was dropped.
    ResultTooLarge = "result_too_large",
    /// The result nested deeper than can be read and was dropped.
    ResultTooDeep = "result_too_deep",
    /// The server answered the call with a JSON-RPC error, or an answer that made no sense.
    CallFailed = "call_failed",
    /// The server wants the user to visit a page first (`-32042`); the text names it and whether
    /// it was opened.
    UrlElicitationRequired = "url_elicitation_required",
    /// `doctor`: a config file has an error.
    ConfigError = "config_error",
    /// The gateway has shut down (the Pi session ended); nothing is started any more.
    ShutDown = "shut_down",
    /// A command's words do not fit its syntax (`add`, `setup`); the text says how.
    BadUsage = "bad_usage",
    /// `add`: a server of that name is configured already; nothing was saved.
    ServerExists = "server_exists",
    /// A change to the project's `.pi/mcp.json` in a project Pi does not trust.
    ProjectUntrusted = "project_untrusted",
    /// `approveTools` asks the user first and nobody can be asked here (no dialog), or
    /// `pi-mcp call --yes` ran inside Pi; the text names the setting.
    ApprovalRequired = "approval_required",
    /// The user declined the use, or nobody answered the dialog in time.
    ApprovalDenied = "approval_denied",
}}

impl From<&RequestError> for ErrorCode {
    fn from(error: &RequestError) -> Self {
        match error {
            RequestError::Aborted => ErrorCode::Aborted,
            RequestError::Timeout(_) | RequestError::CallTimeout(_) => ErrorCode::Timeout,
            RequestError::Closed(_) => ErrorCode::ConnectionLost,
            RequestError::TooLarge(_) => ErrorCode::ResultTooLarge,
            RequestError::TooDeep(_) => ErrorCode::ResultTooDeep,
            RequestError::Mcp { .. }
            | RequestError::Protocol(_)
            | RequestError::InvalidHeaderAnnotation(_) => ErrorCode::CallFailed,
            RequestError::NeedsAuth(_) => ErrorCode::AuthRequired,
            RequestError::BrowserSteps(_) => ErrorCode::UrlElicitationRequired,
        }
    }
}

/// Why a server cannot be used right now.
#[derive(Clone, Debug, PartialEq)]
pub enum Unavailable {
    /// No server of that name; `configured` are the enabled ones.
    NotConfigured { configured: Vec<String> },
    /// `disabled` in the config file `source`.
    Disabled { source: PathBuf },
    /// It failed `ago`, and is left alone for `backoff` after a failure.
    BackingOff {
        ago: Duration,
        backoff: Duration,
        cause: Box<Unavailable>,
    },
    /// It wants (valid) credentials: `why`, and `fix`, the whole text with what to do.
    NeedsAuth { why: String, fix: String },
    /// It could not be started or reached, or its opening handshake failed.
    StartFailed(String),
    /// It connected, but its tools could not be listed.
    ListingFailed(RequestError),
    /// The gateway has shut down.
    ShutDown,
}

impl Unavailable {
    /// What follows `Server "<server>"` in a message.
    pub fn reason(&self, server: &str) -> String {
        match self {
            Unavailable::NotConfigured { configured } => format!(
                "not found. Configured servers: {}.",
                configured.join(", ")
            ),
            Unavailable::Disabled { source } => {
                format!("is disabled in {}.", source.display())
            }
            Unavailable::BackingOff {
                ago,
                backoff,
                cause,
            } => format!(
                "not available (failed {} s ago; retried automatically after {} s, or now with mcp({{ connect: \"{server}\" }})): {}",
                ago.as_secs(),
                backoff.as_secs(),
                cause.reason(server)
            ),
            Unavailable::NeedsAuth { fix, .. } => fix.clone(),
            Unavailable::StartFailed(why) => why.clone(),
            Unavailable::ListingFailed(e) => {
                format!("connected, but listing its tools failed: {e}")
            }
            Unavailable::ShutDown => {
                "is not available: the MCP gateway has shut down (its Pi session ended).".into()
            }
        }
    }

    /// Whether credentials are what is missing (also behind a backoff).
    pub fn needs_auth(&self) -> bool {
        match self {
            Unavailable::NeedsAuth { .. } => true,
            Unavailable::BackingOff { cause, .. } => cause.needs_auth(),
            _ => false,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Unavailable::NotConfigured { .. } => ErrorCode::ServerNotFound,
            Unavailable::Disabled { .. } => ErrorCode::ServerDisabled,
            Unavailable::ShutDown => ErrorCode::ShutDown,
            _ if self.needs_auth() => ErrorCode::AuthRequired,
            _ => ErrorCode::ServerUnavailable,
        }
    }

    /// The answer of `mode` when `server` is needed and unavailable.
    pub fn outcome(&self, mode: Mode, server: &str) -> Outcome {
        Outcome::error(
            mode,
            self.code(),
            format!("Server \"{server}\" {}", self.reason(server)),
        )
        .with_server(server)
    }

    /// The answer of an explicit connect that failed.
    pub fn connect_outcome(&self, server: &str) -> Outcome {
        let code = match self {
            Unavailable::NeedsAuth { .. } => ErrorCode::AuthRequired,
            Unavailable::StartFailed(_) | Unavailable::ListingFailed(_) => ErrorCode::ConnectFailed,
            other => return other.outcome(Mode::Connect, server),
        };
        Outcome::error(
            Mode::Connect,
            code,
            format!("Failed to connect to \"{server}\": {}", self.reason(server)),
        )
        .with_server(server)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::named_enum::names_in_case;

    #[test]
    fn codes_and_modes_are_distinct_and_each_its_name_in_snake_case() {
        names_in_case(ErrorCode::ALL, |c| c.as_str(), '_');
        names_in_case(super::super::Mode::ALL, |m| m.as_str(), '_');
    }

    #[test]
    fn a_backoff_quotes_its_cause_and_keeps_needs_auth() {
        let cause = Unavailable::NeedsAuth {
            why: "HTTP 401".into(),
            fix: "needs authentication: HTTP 401. Set T".into(),
        };
        let backing_off = Unavailable::BackingOff {
            ago: Duration::from_secs(3),
            backoff: Duration::from_secs(60),
            cause: Box::new(cause),
        };
        assert!(backing_off.needs_auth());
        let text = backing_off.reason("s");
        assert!(
            text.starts_with("not available (failed 3 s ago; retried automatically after 60 s, or now with mcp({ connect: \"s\" })): needs authentication"),
            "{text}"
        );
        let outcome = backing_off.outcome(Mode::Call, "s");
        assert_eq!(
            outcome.details.error.map(|e| e.as_str()),
            Some("auth_required")
        );
        let failed = Unavailable::StartFailed("cannot start `x`".into()).connect_outcome("s");
        assert_eq!(
            failed.details.error.map(|e| e.as_str()),
            Some("connect_failed")
        );
        assert_eq!(
            failed.joined_text(),
            "Failed to connect to \"s\": cannot start `x`"
        );
    }
}
