//! The approval gate: every tool call, resource read and prompt passes it before its server is
//! started or reached, whoever asks (the `mcp` tool, Pi's tools of ours, `pi-mcp`, the native
//! API). `approveTools` says which uses ask; a session grant or `pi-mcp call --yes` lets one
//! through, else the person answers the front end's dialog, or, in a session without one, the
//! family's UI (`approval::family`). Nobody to ask is a refusal.

use super::host::SessionHost;
use super::Mode;
use super::{ErrorCode, Kernel, Outcome};
use crate::approval::present::{self, By, Choice, Refusal};
use crate::approval::{Answer, Entry, Grants, Request, Subject};
use crate::config::ServerConfig;
use crate::render::tilde;
use futures::future::BoxFuture;
use pi_mcp_connection::broker::family::family;
use pi_mcp_connection::clean;
use pi_mcp_connection::family_approval::{Answerer, Ask, Verdict};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The session's grants and whether `--yes` answers for the person.
pub(super) struct Approval {
    /// Uses the person allowed for the rest of the session (its family's members' too).
    grants: Arc<Grants>,
    /// `pi-mcp call --yes` (see [`super::OpenOptions::assume_yes`]).
    assume_yes: bool,
}

impl Approval {
    pub fn new(assume_yes: bool) -> Approval {
        Approval {
            grants: Arc::new(Grants::default()),
            assume_yes,
        }
    }

    /// Whether a grant of this session lets `subject` of `server` through unasked.
    pub fn covers(&self, server: &ServerConfig, subject: &Subject<'_>) -> bool {
        self.grants.covers(server, subject)
    }

    /// Who answers the members of this session's family, from these grants.
    pub fn for_family(
        &self,
        host: Arc<SessionHost>,
        wait: Duration,
        home: String,
    ) -> Arc<dyn Answerer> {
        Arc::new(FamilyAnswers {
            grants: self.grants.clone(),
            host,
            wait,
            home,
        })
    }
}

impl Kernel {
    /// Whether `subject` (with `args`) may go ahead; the refusal is the answer of `mode`. The
    /// model asks, unless `asker` does (an MCP App): the dialog says who.
    pub(super) async fn approved(
        self: &Arc<Self>,
        mode: Mode,
        subject: Subject<'_>,
        args: &Value,
        asker: Option<&str>,
    ) -> Result<(), Outcome> {
        let Some(server) = self.server(subject.server()) else {
            return Ok(());
        };
        if !subject.asks(server) || self.approval.covers(server, &subject) {
            return Ok(());
        }
        let home = self.home();
        let refuse = |refusal: Refusal, code: ErrorCode| {
            let text = present::refusal(&refusal, &subject, server, &home);
            let outcome = Outcome::error(mode, code, text).with_server(server.name.clone());
            Err(match subject {
                Subject::Tool(tool) => outcome.with_tool(tool.name.clone()),
                Subject::Read { uri, .. } => outcome.with_uri(uri),
                Subject::Prompt { name, .. } => outcome.with_prompt(name),
            })
        };
        if self.approval.assume_yes {
            return match self.yes_allowed() {
                true => Ok(()),
                false => refuse(Refusal::YesInsidePi, ErrorCode::ApprovalRequired),
            };
        }
        let wait = self.config.settings.approval_timeout;
        let request = crate::approval::request::new(&subject, server, args, &home);
        let by = asker.map_or(By::Model, By::App);
        let question = |id| present::question(id, &request, wait, by);
        let verdict = match self.host.approve(question, wait).await {
            Some(answer) => kept(&self.approval.grants, &request, answer, wait),
            None => {
                let ask = Ask {
                    request: request.clone(),
                    label: self.broker.session().label,
                    cwd: Some(self.cwd.display().to_string()),
                };
                match family().approve(&self.in_family, ask).await {
                    Some(verdict) => verdict,
                    None => return refuse(Refusal::NobodyToAsk(None), ErrorCode::ApprovalRequired),
                }
            }
        };
        match verdict {
            verdict if verdict.allows() => Ok(()),
            Verdict::Nobody { why } => {
                refuse(Refusal::NobodyToAsk(Some(why)), ErrorCode::ApprovalRequired)
            }
            Verdict::Unanswered { wait_ms } => refuse(
                Refusal::Unanswered(Duration::from_millis(wait_ms)),
                ErrorCode::ApprovalDenied,
            ),
            _ => refuse(Refusal::Denied, ErrorCode::ApprovalDenied),
        }
    }

    /// The session's grants are the ones its entries hold (`[{ customType, data }]`, other
    /// entries among them are passed over): it started, resumed, reloaded or moved to another
    /// branch.
    pub fn restore_grants(&self, entries: &[Entry]) {
        self.approval.grants.restore(entries);
    }

    /// `pi-mcp call --yes` skips approval outside Pi; inside it (Pi sets `PI_CODING_AGENT` for
    /// everything it runs, the model's `bash` too) only where the user's own config allows it.
    fn yes_allowed(&self) -> bool {
        let inside_pi = self
            .env
            .get("PI_CODING_AGENT")
            .is_some_and(|v| !v.is_empty());
        !inside_pi || self.config.settings.yes_inside_pi
    }
}

/// The verdict of `answer` to the dialog about `request`; a session grant picked is kept in
/// `grants`.
fn kept(grants: &Grants, request: &Request, answer: Answer, wait: Duration) -> Verdict {
    match answer {
        Answer::Picked(choice) => {
            let (whole, tool) = crate::approval::request::grants(request);
            match (choice, tool) {
                (Choice::Tool, Some(tool)) => grants.add(tool),
                (Choice::Server, _) => grants.add(whole),
                (Choice::Once, _) => {}
                // Deny, or an option this dialog did not offer.
                _ => return Verdict::Closed,
            }
            Verdict::Picked {
                choice: choice.as_str().to_string(),
            }
        }
        Answer::Closed => Verdict::Closed,
        Answer::Unanswered => Verdict::Unanswered {
            wait_ms: wait.as_millis() as u64,
        },
    }
}

/// A session's answers for the members of its family: from its grants, else in its dialog. The
/// grants its person gives there are its own (its session entries keep them, as they keep the
/// ones given for its own calls), so they cover its members' later uses and its own.
struct FamilyAnswers {
    grants: Arc<Grants>,
    host: Arc<SessionHost>,
    wait: Duration,
    home: String,
}

impl Answerer for FamilyAnswers {
    fn answer(&self, ask: Ask, pid: Option<u32>) -> BoxFuture<'static, Verdict> {
        let request = ask.request.cleaned();
        if self.grants.cover(&request) {
            return Box::pin(async { Verdict::Granted });
        }
        let who = member(ask.label.as_deref(), pid, ask.cwd.as_deref(), &self.home);
        let wait = self.wait;
        let question = |id| present::question(id, &request, wait, By::Member(&who));
        let asked = self.host.approve(question, wait);
        let grants = self.grants.clone();
        Box::pin(async move {
            match asked.await {
                Some(answer) => kept(&grants, &request, answer, wait),
                None => Verdict::Nobody {
                    why: "and its family's session could not show the question".into(),
                },
            }
        })
    }
}

/// Who a member is in the dialog: `subagent "worker" (pid 4242) in ~/proj`.
fn member(label: Option<&str>, pid: Option<u32>, cwd: Option<&str>, home: &str) -> String {
    let label: String = clean::line(label.unwrap_or("another session"))
        .chars()
        .take(80)
        .collect();
    let pid = pid.map_or_else(|| "pid unknown".into(), |pid| format!("pid {pid}"));
    let cwd = cwd.map_or_else(String::new, |cwd| {
        let shown = tilde(Path::new(cwd), home);
        format!(" in {}", clean::clip(&clean::line(&shown), 120))
    });
    format!("{label} ({pid}){cwd}")
}
