//! Approval asked in a family's UI (README "Tool approval"): a member of a session's family with
//! no dialog of its own (a subagent run with `-p`) sends its gated use, as its dialog would show
//! it ([`Ask`]), to the family's session with a UI, which answers ([`Verdict`]): from a grant of
//! its own session when one covers the use, else in its dialog, naming the member. The member's
//! config alone decides what is gated; the session only answers. It keeps the session grants its
//! person gives (they cover its own and its family's later uses under the same hash), and the
//! member keeps none: no grant outlives the session that holds it.

use crate::clean;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a member asks its family's UI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    pub request: Request,
    /// Who the member is (`subagent "worker"`, `pi -p`): its own word, cleaned where shown.
    pub label: Option<String>,
    /// Its directory.
    pub cwd: Option<String>,
}

/// The family's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "verdict")]
pub enum Verdict {
    /// A session grant of the session that answers covers the use: nobody was asked.
    Granted,
    /// The person picked an option (its `value`: `once`, `tool`, `server`, `deny`).
    Picked { choice: String },
    /// The dialog was closed without an answer.
    Closed,
    /// Nobody answered within the answering session's wait.
    #[serde(rename_all = "camelCase")]
    Unanswered { wait_ms: u64 },
    /// Nobody can be asked in the family, and why (for the model).
    Nobody { why: String },
}

impl Verdict {
    /// Whether the use may go ahead.
    pub fn allows(&self) -> bool {
        match self {
            Verdict::Granted => true,
            Verdict::Picked { choice } => matches!(choice.as_str(), "once" | "tool" | "server"),
            Verdict::Closed | Verdict::Unanswered { .. } | Verdict::Nobody { .. } => false,
        }
    }
}

/// A session that answers for the members of its family: its grants and its dialog.
pub trait Answerer: Send + Sync {
    /// Answers `ask` of the member whose process is `pid` (as its socket says, where it does).
    fn answer(&self, ask: Ask, pid: Option<u32>) -> BoxFuture<'static, Verdict>;
}

/// Lines of a request's arguments shown, at most (as `present::arguments` makes them, with its
/// first and last).
const SHOWN_LINES: usize = 14;
/// Characters of one line of a request's text shown, at most.
const LINE_CHARS: usize = 240;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// The server's name in the asking session's config.
    pub server: String,
    /// Its launch as written (hashed into grants, never shown).
    pub launch: Value,
    pub used: Used,
    /// `Arguments: …` as the dialog shows them; `None` for a read.
    pub arguments: Option<String>,
    /// What asked for approval: `` `approveTools` in ~/.pi/agent/mcp.json ``.
    pub because: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Used {
    /// A tool call: the tool's MCP name, and what its grant hashes besides.
    #[serde(rename_all = "camelCase")]
    Tool {
        name: String,
        input_schema: Option<Value>,
        annotations: Option<Value>,
    },
    Read {
        uri: String,
    },
    Prompt {
        name: String,
    },
}

impl Request {
    /// The request with its shown text made safe to show, whoever sent it: each line cleaned
    /// and clipped, and no more lines of arguments than a dialog shows.
    pub fn cleaned(mut self) -> Request {
        self.because = shown_line(&self.because);
        self.arguments = self.arguments.map(|text| {
            let mut lines: Vec<String> = text.lines().take(SHOWN_LINES).map(shown_line).collect();
            if text.lines().nth(SHOWN_LINES).is_some() {
                lines.push("  …".into());
            }
            lines.join("\n")
        });
        self
    }
}

/// One line of a request's text, cleaned and clipped.
fn shown_line(text: &str) -> String {
    clean::clip(&clean::line(text), LINE_CHARS)
}
