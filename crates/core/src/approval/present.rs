//! The approval dialog as a front end shows it (every word written here, so Pi's dialogs and a
//! terminal say the same), and what the model is told when a use is not approved. Arguments are
//! shown clipped and cleaned, and a value whose key or schema says it is a credential never is.

use super::{Entry, Request, Subject, Used};
use crate::config::ServerConfig;
use crate::named_enum::named_enum;
use crate::render::{hints, tilde};
use pi_mcp_connection::clean;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Arguments shown, at most; the rest are counted.
const SHOWN_ARGUMENTS: usize = 12;
/// Characters of one argument's value shown, at most.
const ARGUMENT_CHARS: usize = 160;
/// Parts of a key that say its value is a credential (compared without case, `-` and `_`).
const SECRET_WORDS: [&str; 12] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "authorization",
    "credential",
    "cookie",
    "bearer",
];

/// What the model is told of a use that did not run.
pub enum Refusal {
    /// Nobody can be asked here (no dialog: Pi's print or json mode, `pi-mcp` without a
    /// terminal, the native API without a front end), nor in the session's family (why not, when
    /// it has one: no dialog there either, the session that would ask is gone).
    NobodyToAsk(Option<String>),
    /// `pi-mcp call --yes` inside a Pi session, which `allowYesInsidePi` does not allow.
    YesInsidePi,
    /// The person said no.
    Denied,
    /// Nobody answered within the wait.
    Unanswered(Duration),
}

/// Who asks for a use, when it is not the model of the session whose dialog shows it.
#[derive(Clone, Copy, Debug)]
pub enum By<'a> {
    Model,
    /// An MCP App (`app "…" of …`).
    App(&'a str),
    /// A member of the session's family (`subagent "worker" (pid 4242) in ~/proj`).
    Member(&'a str),
}

/// The approval dialog as the front end shows it: a select of `options` titled `title`; unanswered
/// after `timeout`, it closes and the use is denied.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub id: u64,
    pub server: String,
    pub title: String,
    pub options: Vec<Offered>,
    pub timeout: Duration,
}

/// An option of the dialog: its label, the choice the front end hands back, and for a session
/// grant the entry that keeps it (to give back through `restore_grants`).
#[derive(Clone, Debug, PartialEq)]
pub struct Offered {
    pub label: String,
    pub choice: Choice,
    pub remember: Option<Entry>,
}

named_enum! {
    /// What an option allows: once; for the session, the tool or the whole server (the approval
    /// gate's dialog); for the app's session, or always (an MCP App's consent dialog); nothing.
    /// Its name is what the front end hands back.
    Choice {
    Once = "once",
    Tool = "tool",
    Server = "server",
    Session = "session",
    Always = "always",
    Deny = "deny",
    }
}

/// What the front end answers: the choice of the option picked, `None` when the dialog was closed
/// without one.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalAnswer {
    pub choice: Option<Choice>,
}

impl ApprovalAnswer {
    /// The answer naming `choice` (as [`Choice::as_str`] does): a name no option has denies, as
    /// picking an option the dialog did not offer does.
    pub fn named(choice: Option<&str>) -> ApprovalAnswer {
        ApprovalAnswer {
            choice: choice.map(|name| Choice::named(name).unwrap_or(Choice::Deny)),
        }
    }
}

/// The dialog asking to allow `request` (question `id`).
pub fn question(id: u64, request: &Request, wait: Duration, by: By) -> Question {
    let name = clean::line(&request.server).into_owned();
    let mut lines = vec![match &request.used {
        Used::Tool { name: tool, .. } => {
            format!("MCP server \"{name}\" wants to run {}", clean::line(tool))
        }
        Used::Read { uri } => {
            format!("MCP server \"{name}\" wants to read {}", clean::url(uri))
        }
        Used::Prompt { name: prompt } => format!(
            "MCP server \"{name}\" wants to give the prompt \"{}\"",
            clean::line(prompt)
        ),
    }];
    match by {
        By::Model => {}
        By::App(app) => lines.push(format!("Asked by {app}, not by the model.")),
        By::Member(member) => lines.push(format!(
            "Asked for {member}, in this session's family (its model's call)."
        )),
    }
    lines.push(String::new());
    if let Used::Tool { annotations, .. } = &request.used {
        lines.push(hints_line(annotations.as_ref()));
    }
    if let Some(arguments) = &request.arguments {
        lines.push(arguments.clone());
        lines.push(String::new());
    }
    lines.push(asked_because(request));
    let (whole, tool) = super::request::grants(request);
    let offer = |label: String, choice, remember| Offered {
        label,
        choice,
        remember,
    };
    let mut options = vec![offer("Allow once".into(), Choice::Once, None)];
    if let (Some(grant), Used::Tool { name: tool, .. }) = (tool, &request.used) {
        let label = format!("Allow {} for this session", clean::line(tool));
        options.push(offer(label, Choice::Tool, Some(grant.entry())));
    }
    let label = format!("Allow everything of \"{name}\" for this session");
    options.push(offer(label, Choice::Server, Some(whole.entry())));
    options.push(offer("Deny".into(), Choice::Deny, None));
    Question {
        id,
        server: request.server.clone(),
        title: lines.join("\n"),
        options,
        timeout: wait,
    }
}

/// What the approval dialog says of `request` beside its name, for a dialog that lists it among
/// other things: a tool's hints, the arguments, and why it is asked.
pub fn call_details(request: &Request) -> String {
    let mut lines = Vec::new();
    if let Used::Tool { annotations, .. } = &request.used {
        lines.push(hints_line(annotations.as_ref()));
    }
    lines.extend(request.arguments.clone());
    lines.push(asked_because(request));
    lines.join("\n")
}

fn hints_line(annotations: Option<&Value>) -> String {
    let words = hints::words_of(annotations);
    match words.is_empty() {
        true => "Hints: none (a tool without hints may change or delete things)".into(),
        false => format!("Hints (the server's own claim): {}", words.join(", ")),
    }
}

fn asked_because(request: &Request) -> String {
    format!("Asked because of {}.", request.because)
}

/// `Arguments:` and one line per argument, or `Arguments: none`.
pub fn arguments(args: &Value, schema: Option<&Value>) -> String {
    let Some(map) = args.as_object().filter(|m| !m.is_empty()) else {
        return "Arguments: none".into();
    };
    let properties = schema.and_then(|s| s.get("properties"));
    let mut lines = vec!["Arguments:".to_string()];
    for (key, value) in map.iter().take(SHOWN_ARGUMENTS) {
        let secret = is_secret(key, properties.and_then(|p| p.get(key)));
        let shown = match secret {
            true => "(hidden)".to_string(),
            false => clean::clip(&clean::json(&hidden(value)), ARGUMENT_CHARS),
        };
        lines.push(format!("  {}: {shown}", clean::line(key)));
    }
    if map.len() > SHOWN_ARGUMENTS {
        lines.push(format!("  … and {} more", map.len() - SHOWN_ARGUMENTS));
    }
    lines.join("\n")
}

/// `value` with the values of credential keys in nested objects replaced.
fn hidden(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match is_secret(k, None) {
                    true => (k.clone(), json!("(hidden)")),
                    false => (k.clone(), hidden(v)),
                })
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(hidden).collect()),
        other => other.clone(),
    }
}

/// Whether the value of `key` (with its schema, if known) is a credential.
fn is_secret(key: &str, schema: Option<&Value>) -> bool {
    let by_schema = schema.is_some_and(|s| {
        s.get("format").and_then(Value::as_str) == Some("password")
            || s.get("writeOnly").and_then(Value::as_bool) == Some(true)
    });
    let word: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_lowercase();
    by_schema || SECRET_WORDS.iter().any(|w| word.contains(w))
}

/// `approveTools in ~/.pi/agent/mcp.json`, for each file that asked.
pub fn set_by(server: &ServerConfig, home: &str) -> String {
    let parts: Vec<String> = server
        .approval
        .set_by
        .iter()
        .map(|s| format!("`{}` in {}", s.key, tilde(&s.file, home)))
        .collect();
    match parts.is_empty() {
        true => "`approveTools`".into(),
        false => parts.join(" and "),
    }
}

/// The use as the model's text names it.
fn what(subject: &Subject) -> String {
    match subject {
        Subject::Tool(tool) => format!(
            "the MCP tool \"{}\" of server \"{}\"",
            clean::line(&tool.name),
            clean::line(&tool.server)
        ),
        Subject::Read { server, uri } => format!(
            "reading {} of MCP server \"{}\"",
            clean::url(uri),
            clean::line(server)
        ),
        Subject::Prompt { server, name } => format!(
            "the prompt \"{}\" of MCP server \"{}\"",
            clean::line(name),
            clean::line(server)
        ),
    }
}

/// What the model is told of `subject`, which did not run.
pub fn refusal(refusal: &Refusal, subject: &Subject, server: &ServerConfig, home: &str) -> String {
    let what = what(subject);
    let sentence = capitalized(&what);
    let by = set_by(server, home);
    match refusal {
        Refusal::NobodyToAsk(family) => format!(
            "{sentence} needs the user's approval ({by}), and nobody can be asked here: no dialog in this run (Pi's print or json mode, pi-mcp without a terminal), {}. It did not run. Run it in an interactive Pi session, or the user can change `approveTools` for \"{}\".",
            family.as_deref().unwrap_or("and no session with one started it"),
            clean::line(&server.name)
        ),
        Refusal::YesInsidePi => format!(
            "{sentence} needs the user's approval ({by}). `pi-mcp call --yes` does not skip it inside a Pi session (PI_CODING_AGENT is set), where the model could run pi-mcp itself; answer the question on a terminal, or set `\"allowYesInsidePi\": true` in the settings of ~/.pi/agent/mcp.json. It did not run."
        ),
        Refusal::Denied => format!(
            "The user declined {what}; it did not run. Do not try it again unless the user asks for it."
        ),
        Refusal::Unanswered(wait) => format!(
            "Nobody answered the approval question for {what} within {} s; it did not run.",
            wait.as_secs()
        ),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
