//! Whose question it is. A shared server's question (elicitation, sampling) goes to one session:
//!
//! 1. where the protocol links it to a call — the call whose 2026-07-28 `input_required` result
//!    carried it, or the task its `related-task` names — to that call's session;
//! 2. otherwise, when one session has calls in flight on the server, to that session;
//! 3. with several, to the one whose latest call is the most recent among those with a UI;
//! 4. else it is refused, with an error saying why.
//!
//! `roots/list` is the broker's to answer: a shared server's root is the directory it was
//! launched in. Its log messages go to the agent dir's `mcp.log`, once.
//!
//! Inside a family ([`target`]) no question is refused for want of a UI: one a caller without a
//! UI would get goes to the family's UI (a session of the hub's process that has one), saying
//! for whom, and without that to the caller, whose own policy answers it.

use super::hop::Hop;
use super::Broker;
use crate::pool::{Asker, Host, Question, Reply, Root};
use crate::server_log::LogMessage;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

/// A session that may be asked.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub ui: bool,
    /// When its latest call on the server started.
    pub last_call: Option<Instant>,
}

/// Which of `candidates` (the sessions with calls in flight on `server`, no two alike) is asked
/// (rules 2 to 4 above), or why none is.
pub fn choose(server: &str, candidates: &[Candidate]) -> Result<usize, String> {
    match candidates {
        [] => Err(format!(
            "{server} (a shared server) asked while no session had a call in flight on it, so it cannot be told whose question it is; nobody was asked"
        )),
        [_] => Ok(0),
        _ => candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.ui)
            .max_by_key(|(_, c)| c.last_call)
            .map(|(i, _)| i)
            .ok_or_else(|| {
                format!(
                    "{server} is shared by several sessions and asked while {} of them had calls in flight on it, none with a UI to show the question; nobody was asked",
                    candidates.len()
                )
            }),
    }
}

/// Who answers a question of a family's server.
#[derive(Debug, PartialEq)]
pub enum Target {
    /// The caller at this index: in its UI, or by its own policy when it has none.
    Caller(usize),
    /// The family's UI, for the callers at these indexes.
    Ui {
        on_behalf: Vec<usize>,
    },
    Refuse(String),
}

/// Which of `candidates` (the sessions with calls in flight on a family's `server`; `linked`:
/// the one the protocol links the question to) answers, given whether the family has a UI:
/// the linked caller, else the only one, else the latest with a UI; one without a UI is
/// answered for in the family's UI; several without a UI, all of them there.
pub fn target(
    server: &str,
    candidates: &[Candidate],
    linked: Option<usize>,
    family_ui: bool,
) -> Target {
    let latest = |with_ui: bool| {
        candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.ui || !with_ui)
            .max_by_key(|(_, c)| c.last_call)
            .map(|(i, _)| i)
    };
    let chosen = match (linked, candidates.len()) {
        (Some(i), _) => i,
        (None, 0) => return Target::Refuse(format!(
            "{server} asked while no session of its family had a call in flight on it, so it cannot be told whose question it is; nobody was asked"
        )),
        (None, 1) => 0,
        (None, n) => match latest(true) {
            Some(i) => return Target::Caller(i),
            None if family_ui => return Target::Ui { on_behalf: (0..n).collect() },
            None => latest(false).unwrap_or(0),
        },
    };
    match candidates.get(chosen) {
        Some(c) if !c.ui && family_ui => Target::Ui {
            on_behalf: vec![chosen],
        },
        _ => Target::Caller(chosen),
    }
}

/// Who answers one question of a shared server.
pub enum Answerer {
    /// The session whose connection got it (the server's owner), as it would alone.
    Local,
    /// A session connected to the broker.
    Hop(Arc<Hop>),
    /// A session's UI, for another session of its family (`on_behalf` says which), naming the
    /// server as the sessions' config does (`server`).
    Ui {
        host: Arc<dyn Host>,
        server: String,
        on_behalf: String,
    },
    Refused(String),
}

impl Answerer {
    /// Asks `question`; `local` is the host of the connection that got it, if it has one.
    pub fn elicit(
        self,
        local: Option<&Arc<dyn Host>>,
        asker: Asker,
        question: Question,
    ) -> BoxFuture<'static, Option<Reply>> {
        match self {
            Answerer::Local => match local {
                Some(host) => host.elicit(asker, question),
                None => Box::pin(async { None }),
            },
            Answerer::Hop(hop) => {
                let params = elicitation_params(&question);
                Box::pin(async move {
                    match hop.ask("elicitation/create", params, asker.void).await? {
                        Ok(result) => Some(reply(&result)),
                        Err(message) => Some(Reply::Refused(message)),
                    }
                })
            }
            Answerer::Ui {
                host,
                server,
                on_behalf,
            } => host.elicit(
                Asker {
                    server,
                    on_behalf: Some(on_behalf),
                    ..asker
                },
                question,
            ),
            Answerer::Refused(why) => Box::pin(async move { Some(Reply::Refused(why)) }),
        }
    }

    /// Runs a sampling request (its params) where it is to be answered.
    pub fn sample(
        self,
        local: Option<&Arc<dyn Host>>,
        asker: Asker,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        match self {
            Answerer::Local => match local {
                Some(host) => host.sample(asker, params),
                None => Box::pin(async { Err("nobody can answer here".to_string()) }),
            },
            Answerer::Hop(hop) => Box::pin(async move {
                match hop.ask("sampling/createMessage", params, asker.void).await {
                    Some(answer) => answer,
                    None => Err("the sampling request was cancelled".to_string()),
                }
            }),
            Answerer::Ui {
                host,
                server,
                on_behalf,
            } => host.sample(
                Asker {
                    server,
                    on_behalf: Some(on_behalf),
                    ..asker
                },
                params,
            ),
            Answerer::Refused(why) => Box::pin(async move { Err(why) }),
        }
    }
}

/// The broker's answers to what shared servers ask.
#[derive(Default)]
pub struct BrokerHost {
    broker: OnceLock<Weak<Broker>>,
}

impl BrokerHost {
    pub fn serve(&self, broker: Weak<Broker>) {
        let _ = self.broker.set(broker);
    }

    fn broker(&self) -> Option<std::sync::Arc<Broker>> {
        self.broker.get()?.upgrade()
    }
}

impl Host for BrokerHost {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        let Some(broker) = self.broker() else {
            return Box::pin(async { None });
        };
        let answerer = broker.answerer(&asker.server, &asker, None);
        answerer.elicit(None, asker, question)
    }

    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let Some(broker) = self.broker() else {
            return Box::pin(async { Err("the broker is stopping".to_string()) });
        };
        let answerer = broker.answerer(&asker.server, &asker, None);
        answerer.sample(None, asker, params)
    }

    fn roots(&self, server: &str) -> Vec<Root> {
        self.broker()
            .and_then(|broker| broker.roots_dir(server))
            .and_then(|dir| Root::directory(&dir))
            .into_iter()
            .collect()
    }

    fn log(&self, server: &str, message: &LogMessage) {
        if let Some(broker) = self.broker() {
            broker.log_message(server, message);
        }
    }

    /// Each session follows the tasks it starts, through its hop: a session's abort cancels
    /// its own task only.
    fn follows_tasks(&self) -> bool {
        false
    }
}

/// The `elicitation/create` params of `question`, as the server sent them.
fn elicitation_params(question: &Question) -> Value {
    match question {
        Question::Form {
            message, schema, ..
        } => json!({ "mode": "form", "message": message, "requestedSchema": schema }),
        Question::Url { message, url, id } => {
            let mut params = json!({ "mode": "url", "message": message, "url": url.as_str() });
            if let Some(id) = id {
                params["elicitationId"] = json!(id);
            }
            params
        }
    }
}

/// A session's `ElicitResult` as a reply.
fn reply(result: &Value) -> Reply {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => Reply::Accept(
            result
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("decline") => Reply::Decline,
        _ => Reply::Cancel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> Option<Instant> {
        Some(Instant::now() - Duration::from_secs(100) + Duration::from_secs(secs))
    }

    #[test]
    fn one_caller_is_asked_whatever_its_ui() {
        let one = [Candidate {
            ui: false,
            last_call: at(1),
        }];
        assert_eq!(choose("s", &one), Ok(0));
    }

    #[test]
    fn of_several_the_latest_caller_with_a_ui() {
        let three = [
            Candidate {
                ui: true,
                last_call: at(1),
            },
            Candidate {
                ui: false,
                last_call: at(9),
            },
            Candidate {
                ui: true,
                last_call: at(5),
            },
        ];
        assert_eq!(choose("s", &three), Ok(2));
    }

    #[test]
    fn several_without_a_ui_or_none_at_all_is_refused() {
        let headless = [
            Candidate {
                ui: false,
                last_call: at(1),
            },
            Candidate {
                ui: false,
                last_call: at(2),
            },
        ];
        let why = choose("memory", &headless).unwrap_err();
        assert!(why.contains("2 of them had calls in flight"), "{why}");
        assert!(why.contains("memory"));
        assert!(choose("memory", &[])
            .unwrap_err()
            .contains("no session had a call"));
    }

    #[test]
    fn in_a_family_a_caller_without_a_ui_is_answered_for_in_the_familys() {
        let (ui, headless) = (
            Candidate {
                ui: true,
                last_call: at(1),
            },
            Candidate {
                ui: false,
                last_call: at(5),
            },
        );
        let target = |c: &[Candidate], linked, family_ui| super::target("s", c, linked, family_ui);
        assert_eq!(
            target(&[ui], None, true),
            Target::Caller(0),
            "it asks its own"
        );
        assert_eq!(
            target(&[headless], None, true),
            Target::Ui { on_behalf: vec![0] }
        );
        assert_eq!(
            target(&[headless], None, false),
            Target::Caller(0),
            "no UI anywhere: its own policy"
        );
        assert_eq!(
            target(&[ui, headless], None, true),
            Target::Caller(0),
            "of several, the one with a UI"
        );
        assert_eq!(
            target(&[ui, headless], Some(1), true),
            Target::Ui { on_behalf: vec![1] },
            "the linked caller, answered for in the family's UI"
        );
        assert_eq!(
            target(&[headless, headless], None, true),
            Target::Ui {
                on_behalf: vec![0, 1]
            },
            "several without a UI: all of them"
        );
        assert_eq!(
            target(&[headless, headless], None, false),
            Target::Caller(1),
            "else the latest"
        );
        assert!(matches!(target(&[], None, true), Target::Refuse(_)));
    }

    #[test]
    fn questions_go_back_as_the_server_asked_them() {
        let form = Question::Form {
            message: "Name?".into(),
            form: crate::elicitation::Form::from_schema(
                &json!({"type": "object", "properties": {"n": {"type": "string"}}}),
            )
            .unwrap(),
            schema: json!({"type": "object", "properties": {"n": {"type": "string"}}}),
        };
        assert_eq!(
            elicitation_params(&form),
            json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}})
        );
        let url = Question::Url {
            message: "Pay".into(),
            url: crate::clean::Link::parse("https://example.com/pay").unwrap(),
            id: Some("e1".into()),
        };
        assert_eq!(elicitation_params(&url)["elicitationId"], "e1");
        assert_eq!(
            reply(&json!({"action": "accept", "content": {"n": "x"}})),
            Reply::Accept(json!({"n": "x"}).as_object().unwrap().clone())
        );
        assert_eq!(reply(&json!({"action": "decline"})), Reply::Decline);
        assert_eq!(reply(&json!({})), Reply::Cancel);
    }
}
