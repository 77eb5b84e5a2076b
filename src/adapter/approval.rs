//! The approval gate: every tool call, resource read and prompt passes it before its server is
//! started or reached, whoever asks (the `mcp` tool, Pi's tools of ours, `pi-mcp`, the native
//! API). `approveTools` says which uses ask; a session grant or `pi-mcp call --yes` lets one
//! through, else the person answers the front end's dialog. Nobody to ask is a refusal.

use super::{Adapter, ErrorCode, Outcome};
use crate::approval::present::{self, Refusal};
use crate::approval::{Answer, Grant, Subject};
use serde_json::Value;
use std::sync::Arc;

impl Adapter {
    /// Whether `subject` (with `args`) may go ahead; the refusal is the answer of `mode`.
    pub(super) async fn approved(
        self: &Arc<Self>,
        mode: &str,
        subject: Subject<'_>,
        args: &Value,
    ) -> Result<(), Outcome> {
        self.approved_for(mode, subject, args, None).await
    }

    /// [`Adapter::approved`] for a use that `asker` asks for, not the model (an MCP App); the
    /// dialog says who.
    pub(super) async fn approved_for(
        self: &Arc<Self>,
        mode: &str,
        subject: Subject<'_>,
        args: &Value,
        asker: Option<&str>,
    ) -> Result<(), Outcome> {
        let Some(server) = self.server(subject.server()) else {
            return Ok(());
        };
        if !subject.asks(server) || self.grants.covers(server, &subject) {
            return Ok(());
        }
        let home = self.home();
        let refuse = |refusal: Refusal, code: ErrorCode| {
            let text = present::refusal(&refusal, &subject, server, &home);
            let outcome = Outcome::error(mode, code, text).with("server", server.name.clone());
            Err(match subject {
                Subject::Tool(tool) => outcome.with("tool", tool.name.clone()),
                Subject::Read { uri, .. } => outcome.with("uri", uri),
                Subject::Prompt { name, .. } => outcome.with("prompt", name),
            })
        };
        if self.assume_yes {
            return match self.yes_allowed() {
                true => Ok(()),
                false => refuse(Refusal::YesInsidePi, ErrorCode::ApprovalRequired),
            };
        }
        let wait = self.config.settings.approval_timeout;
        let question = |id| present::question(id, &subject, server, args, &home, wait, asker);
        match self.host.approve(question, wait).await {
            None => refuse(Refusal::NobodyToAsk, ErrorCode::ApprovalRequired),
            Some(Answer::Picked(choice)) => match (choice.as_str(), subject) {
                ("once", _) => Ok(()),
                ("tool", Subject::Tool(tool)) => {
                    self.grants.add(Grant::tool(server, tool));
                    Ok(())
                }
                ("server", _) => {
                    self.grants.add(Grant::server(server));
                    Ok(())
                }
                _ => refuse(Refusal::Denied, ErrorCode::ApprovalDenied),
            },
            Some(Answer::Closed) => refuse(Refusal::Denied, ErrorCode::ApprovalDenied),
            Some(Answer::Unanswered) => {
                refuse(Refusal::Unanswered(wait), ErrorCode::ApprovalDenied)
            }
        }
    }

    /// The session's grants are the ones its entries hold (`[{ customType, data }]`, other
    /// entries among them are passed over): it started, resumed, reloaded or moved to another
    /// branch.
    pub fn restore_grants(&self, entries: &[Value]) {
        self.grants.restore(entries);
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
