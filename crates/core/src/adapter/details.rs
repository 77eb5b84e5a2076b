//! `Outcome.details`, what an answer is about for programs: the fields any mode may set, and
//! each mode's own. Serialized, it is one flat object (`details.mode`, `details.server`,
//! `details.totalTools`, …); the binding mirrors it for JavaScript.

use super::{ErrorCode, Mode};
use crate::search::Signals;
use serde::Serialize;
use serde_json::Value;

/// `Outcome.details`: the fields every mode may set, typed, and what only some modes set.
/// Serialized, it is the flat object programs read (`details.mode`, `details.server`, …).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The resource an answer (or a refusal to read it) is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The prompt an answer (or a refusal to get it) is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Servers still being listed when the answer was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<Listing>,
    /// A tool call's time in the core, from the call to its answer (ms, one decimal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// Where the whole text went when the output guard cut it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The fields only one mode sets.
    #[serde(flatten)]
    pub part: Option<Part>,
}

impl Details {
    pub fn of(mode: Mode) -> Self {
        Details {
            mode,
            error: None,
            server: None,
            tool: None,
            uri: None,
            prompt: None,
            listing: None,
            elapsed_ms: None,
            full_output_path: None,
            part: None,
        }
    }

    /// The flat JSON object programs read.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("details serialize")
    }
}

/// `details.listing`: how many servers were still being listed, and the first few.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listing {
    pub pending: usize,
    pub servers: Vec<String>,
}

impl Listing {
    pub fn of(pending: &[String]) -> Self {
        let shown = pending.len().min(crate::render::NAMES_SHOWN);
        Listing {
            pending: pending.len(),
            servers: pending[..shown].to_vec(),
        }
    }
}

macro_rules! parts {
    ($($variant:ident($details:ident),)*) => {
        /// The fields only one mode sets (flattened into `details`).
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Part {
            $($variant($details),)*
        }

        $(impl From<$details> for Part {
            fn from(details: $details) -> Self {
                Part::$variant(details)
            }
        })*
    };
}

parts! {
    List(ListDetails),
    Search(SearchDetails),
    Describe(DescribeDetails),
    Status(StatusDetails),
    Tools(ToolsDetails),
    Call(CallDetails),
    Prompts(PromptsDetails),
    Login(LoginDetails),
    Logout(LogoutDetails),
    Auth(AuthDetails),
    Doctor(DoctorDetails),
    Add(AddDetails),
    SetupPlan(SetupPlanDetails),
    SetupDone(SetupDoneDetails),
    Broker(BrokerDetails),
    BrokerStopped(BrokerStoppedDetails),
}

/// `list`: a page of one server's tools.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ListDetails {
    /// The server's tools in all.
    pub tools: usize,
    pub offset: usize,
}

/// `search`: the page of hits.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchDetails {
    pub query: String,
    pub matches: Vec<SearchMatch>,
    /// Hits in all.
    pub total: usize,
    pub offset: usize,
    /// Set when nothing matched well; `servers` then names the likeliest servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weak: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// What "No strong match" is decided on, for scripts/fit-weak.mjs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signals: Option<Signals>,
}

/// A hit: a tool, and the tools of other servers with the same name and description.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchMatch {
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<ToolRef>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

/// `describe`: the tool's input schema exactly as the server sent it (left out when over the
/// metadata byte limit; it is in the saved text then).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeDetails {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

/// `status`: every server's state.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    pub servers: Vec<Value>,
    /// The enabled servers' tools in all.
    pub total_tools: usize,
    /// The config's problems, one line each.
    pub problems: Vec<String>,
    /// This session's part in a family of Pi sessions sharing servers, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<Value>,
}

/// `tools`: every server's tools.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsDetails {
    pub total_tools: usize,
}

/// `call` refused for arguments that do not fit the tool's schema.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallDetails {
    /// What does not fit, one line each.
    pub problems: Vec<String>,
}

/// `prompts`: the prompts' slash commands.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PromptsDetails {
    pub prompts: Vec<ListedPrompt>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ListedPrompt {
    pub server: String,
    pub prompt: String,
    /// The slash command's name, without the slash.
    pub command: String,
}

/// `login`: signed in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoginDetails {
    /// The server's tools now known.
    pub tools: usize,
}

/// `logout`: signed out.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogoutDetails {
    /// Set when the server refused to revoke the tokens (they are deleted here all the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revocation_failed: Option<bool>,
}

/// `auth`: how a server is signed in to.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthDetails {
    pub needs_auth: bool,
    pub oauth: bool,
}

/// `doctor`: the config, its sources, each server's check and the diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorDetails {
    pub trust: Value,
    pub sources: Vec<Value>,
    pub servers: Vec<Value>,
    pub diagnostics: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_warning: Option<String>,
}

/// `add`: a server added (or, on a dry run, what would be).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AddDetails {
    /// The config file written (or that would be).
    pub file: String,
    /// The server's entry as saved.
    pub entry: Value,
    /// The tools the trial connection listed.
    pub tools: usize,
    pub saved: bool,
}

/// `setup` without a choice: what it found and offers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetupPlanDetails {
    pub file: String,
    pub exists: bool,
    /// Other agents' configs found to import.
    pub found: Vec<Value>,
    /// Well-known servers on offer.
    pub well_known: Vec<Value>,
}

/// `setup` with a choice: the change to the config file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetupDoneDetails {
    pub file: String,
    /// The change as a diff of lines.
    pub preview: String,
    pub written: bool,
}

/// `broker status`: the broker serving this agent dir (null when none runs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BrokerDetails {
    pub broker: Value,
}

/// `broker stop`: the broker stopped (null when none ran).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BrokerStoppedDetails {
    pub stopped: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn details_serialize_flat_with_only_what_is_set() {
        let mut details = Details::of(Mode::List);
        details.server = Some("s".into());
        details.listing = Some(Listing::of(&["a".into(), "b".into()]));
        details.part = Some(
            ListDetails {
                tools: 3,
                offset: 0,
            }
            .into(),
        );
        assert_eq!(
            details.to_json(),
            json!({ "mode": "list", "server": "s", "tools": 3, "offset": 0, "listing": { "pending": 2, "servers": ["a", "b"] } })
        );
        let mut failed = Details::of(Mode::Logout);
        failed.error = Some(ErrorCode::SignInFailed);
        failed.part = Some(
            LogoutDetails {
                revocation_failed: None,
            }
            .into(),
        );
        assert_eq!(
            failed.to_json(),
            json!({ "mode": "logout", "error": "sign_in_failed" })
        );
    }
}
