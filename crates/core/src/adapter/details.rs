//! `Outcome.details`, what an answer is about for programs: the fields any mode may set, and
//! each mode's own. The binding mirrors it for JavaScript as one flat object (`details.mode`,
//! `details.server`, `details.totalTools`, …).

use super::detail_entries::*;
use super::{ErrorCode, Mode};
use crate::search::Signals;
use pi_mcp_connection::broker::family::Role;
use pi_mcp_connection::pool::shared::wire::BrokerStatus;
use serde_json::Value;

/// `Outcome.details`: the fields every mode may set, typed, and what only some modes set.
#[derive(Clone, Debug, PartialEq)]
pub struct Details {
    pub mode: Mode,
    pub error: Option<ErrorCode>,
    pub server: Option<String>,
    pub tool: Option<String>,
    /// The resource an answer (or a refusal to read it) is about.
    pub uri: Option<String>,
    /// The prompt an answer (or a refusal to get it) is about.
    pub prompt: Option<String>,
    /// Servers still being listed when the answer was given.
    pub listing: Option<Listing>,
    /// A tool call's time in the core, from the call to its answer (ms, one decimal).
    pub elapsed_ms: Option<f64>,
    /// Where the whole text went when the output guard cut it.
    pub full_output_path: Option<String>,
    /// The fields only one mode sets.
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
}

/// `details.listing`: how many servers were still being listed, and the first few. Pi's resource
/// tools also write it into their JSON answer (serialized there).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
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
        /// The fields only one mode sets (the binding flattens them into `details`).
        #[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct ListDetails {
    /// The server's tools in all.
    pub tools: usize,
    pub offset: usize,
}

/// `search`: the page of hits.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchDetails {
    pub query: String,
    pub matches: Vec<SearchMatch>,
    /// Hits in all.
    pub total: usize,
    pub offset: usize,
    /// Set when nothing matched well; `servers` then names the likeliest servers.
    pub weak: Option<bool>,
    pub servers: Option<Vec<String>>,
    /// What "No strong match" is decided on, for scripts/fit-weak.mjs.
    pub signals: Option<Signals>,
}

/// A hit: a tool, and the tools of other servers with the same name and description.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchMatch {
    pub server: String,
    pub tool: String,
    pub also: Vec<ToolRef>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

/// `describe`: the tool's input schema exactly as the server sent it (left out when over the
/// metadata byte limit; it is in the saved text then).
#[derive(Clone, Debug, PartialEq)]
pub struct DescribeDetails {
    pub input_schema: Option<Value>,
}

/// `status`: every server's state.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusDetails {
    pub servers: Vec<StatusServer>,
    /// The enabled servers' tools in all.
    pub total_tools: usize,
    /// The config's problems, one line each.
    pub problems: Vec<String>,
    /// This session's part in a family of Pi sessions sharing servers, when it has one.
    pub family: Option<Role>,
}

/// `tools`: every server's tools.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolsDetails {
    pub total_tools: usize,
}

/// `call` refused for arguments that do not fit the tool's schema.
#[derive(Clone, Debug, PartialEq)]
pub struct CallDetails {
    /// What does not fit, one line each.
    pub problems: Vec<String>,
}

/// `prompts`: the prompts' slash commands.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptsDetails {
    pub prompts: Vec<ListedPrompt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ListedPrompt {
    pub server: String,
    pub prompt: String,
    /// The slash command's name, without the slash.
    pub command: String,
}

/// `login`: signed in.
#[derive(Clone, Debug, PartialEq)]
pub struct LoginDetails {
    /// The server's tools now known.
    pub tools: usize,
}

/// `logout`: signed out.
#[derive(Clone, Debug, PartialEq)]
pub struct LogoutDetails {
    /// Set when the server refused to revoke the tokens (they are deleted here all the same).
    pub revocation_failed: Option<bool>,
}

/// `auth`: how a server is signed in to.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthDetails {
    pub needs_auth: bool,
    pub oauth: bool,
}

/// `doctor`: the config, its sources, each server's check and the diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct DoctorDetails {
    pub trust: TrustEntry,
    pub sources: Vec<SourceEntry>,
    pub servers: Vec<DoctorServer>,
    pub diagnostics: Vec<DiagnosticEntry>,
    pub cache_warning: Option<String>,
    pub log_warning: Option<String>,
}

/// `add`: a server added (or, on a dry run, what would be).
#[derive(Clone, Debug, PartialEq)]
pub struct AddDetails {
    /// The config file written (or that would be).
    pub file: String,
    /// The server's entry as saved (JSON of the config's shape).
    pub entry: Value,
    /// The tools the trial connection listed.
    pub tools: usize,
    pub saved: bool,
}

/// `setup` without a choice: what it found and offers.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupPlanDetails {
    pub file: String,
    pub exists: bool,
    /// Other agents' configs found to import.
    pub found: Vec<FoundEntry>,
    /// Well-known servers on offer.
    pub well_known: Vec<WellKnownEntry>,
}

/// `setup` with a choice: the change to the config file.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupDoneDetails {
    pub file: String,
    /// The change as a diff of lines.
    pub preview: String,
    pub written: bool,
}

/// `broker status`: the broker serving this agent dir (`None` when none runs).
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerDetails {
    pub broker: Option<BrokerStatus>,
}

/// `broker stop`: the broker stopped (`None` when none ran).
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerStoppedDetails {
    pub stopped: Option<BrokerStatus>,
}
