//! A server's refusal of credentials, as a failed connect or request reports it.

use std::fmt;

/// A server's refusal of our credentials (HTTP 401, or 403 for too little scope).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthNeed {
    pub message: String,
    /// The `WWW-Authenticate` header, when the server sent one.
    pub challenge: Option<String>,
    /// HTTP 403: the credentials were valid but lacked scope.
    pub forbidden: bool,
}

impl AuthNeed {
    pub fn new(status: u16, challenge: Option<String>) -> AuthNeed {
        let message = match status {
            401 => "the server answered HTTP 401 Unauthorized",
            _ => "the server answered HTTP 403 Forbidden",
        };
        AuthNeed {
            message: message.to_string(),
            challenge,
            forbidden: status == 403,
        }
    }

    /// Credentials known to be missing before any request.
    pub fn missing(message: String) -> AuthNeed {
        AuthNeed {
            message,
            challenge: None,
            forbidden: false,
        }
    }
}

impl fmt::Display for AuthNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
