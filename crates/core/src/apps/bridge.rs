//! The app's requests, as the host page forwards them, and what each may do: tools and
//! resources of its own server only (tools the app may call), the conversation after the
//! user's consent, at the pace and size the policy allows, links after the user says so, log
//! messages to its server's log.
//! Answers are JSON-RPC's `result` or `error`.

use super::host::{AppHost, Ask, Grant, ToConversation};
use super::meta::Visibility;
use super::policy::message_text;
use super::registry::AppSession;
use pi_mcp_connection::clean::{self, Link};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The methods of ext-apps 2.x this host refuses, each with why.
pub const REFUSED: &[(&str, &str)] = &[
    ("ui/download-file", "downloads are not offered"),
    (
        "sampling/createMessage",
        "the app cannot ask the model directly",
    ),
    ("prompts/list", "prompts are not offered to apps"),
];

const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// Refused by the host's policy or the user.
const REFUSED_CODE: i64 = -32000;
/// The key of the user's "no" to an app's links in its session's consents.
const LINKS: &str = "links";
/// The key of the user's answer to the app calling its server's tools.
pub(super) const TOOLS: &str = "tools";
/// The most asks one dialog lists; more wait for the next (after the answer, which may decide
/// them: "for this app session", or a "no" to links).
pub const MAX_ASKS: usize = 8;
/// How long a dialog waits for the app's other asks before it shows: the requests an app sends
/// together (a message and a call, several calls) reach the core a few milliseconds apart.
const GATHER: Duration = Duration::from_millis(200);

fn error(code: i64, message: impl Into<String>) -> Value {
    json!({ "error": { "code": code, "message": message.into() } })
}

/// Answers one request of the app of `session`.
pub async fn answer(session: &Arc<AppSession>, host: &Arc<dyn AppHost>, request: &Value) -> Value {
    let method = request["method"].as_str().unwrap_or_default();
    let params = request.get("params").cloned().unwrap_or(json!({}));
    let outcome = match method {
        "tools/call" => call_tool(session, host, &params).await,
        "resources/read" | "resources/list" | "resources/templates/list" => {
            let method = match method {
                "resources/read" => "resources/read",
                "resources/list" => "resources/list",
                _ => "resources/templates/list",
            };
            host.resources(&session.app, method, params)
                .await
                .map_err(|why| error(REFUSED_CODE, why))
        }
        "ui/message" => to_conversation(session, host, ToConversation::Message, &params).await,
        "ui/update-model-context" => {
            to_conversation(session, host, ToConversation::Context, &params).await
        }
        "ui/open-link" => open_link(session, host, &params).await,
        "notifications/message" => {
            host.log(&session.app, &params);
            Ok(json!({}))
        }
        "ping" => Ok(json!({})),
        _ => Err(match REFUSED.iter().find(|(m, _)| *m == method) {
            Some((_, why)) => error(METHOD_NOT_FOUND, format!("{method} is refused: {why}")),
            None => error(
                METHOD_NOT_FOUND,
                format!("{} is not supported", clean::line(method)),
            ),
        }),
    };
    match outcome {
        Ok(result) => json!({ "result": result }),
        Err(error) => error,
    }
}

async fn call_tool(
    session: &AppSession,
    host: &Arc<dyn AppHost>,
    params: &Value,
) -> Result<Value, Value> {
    let app = &session.app;
    let name = params["name"].as_str().unwrap_or_default();
    let Some(definition) = host.tool(&app.server, name) else {
        let message = format!(
            "\"{}\" is not a tool of MCP server \"{}\"; an app may call its own server's tools only",
            clean::line(name),
            app.server
        );
        return Err(error(INVALID_PARAMS, message));
    };
    if !Visibility::of(&definition).app {
        let message = format!("\"{name}\" is for the model alone (its `_meta.ui.visibility`)");
        return Err(error(REFUSED_CODE, message));
    }
    let args = match &params["arguments"] {
        Value::Null => Default::default(),
        Value::Object(args) => args.clone(),
        _ => return Err(error(INVALID_PARAMS, "`arguments` must be an object")),
    };
    // Asked once: the approval gate's question when it asks, else the app's own consent.
    let (name, args_shown) = (name.to_string(), Value::Object(args.clone()));
    let gated = host.approval_asks(app, &name);
    let ask = match gated {
        true => Ask::Gated {
            name: name.clone(),
            args: args_shown,
        },
        false => Ask::Tools {
            name: name.clone(),
            args: args_shown,
        },
    };
    if !consented(session, host, ask).await {
        let message = match gated {
            true => format!(
                "the user did not approve this call of {}",
                clean::line(&name)
            ),
            false => "the user did not let this app call its server's tools".into(),
        };
        return Err(error(REFUSED_CODE, message));
    }
    host.call_tool(app, &name, args, gated)
        .await
        .map_err(|why| error(REFUSED_CODE, why))
}

async fn to_conversation(
    session: &AppSession,
    host: &Arc<dyn AppHost>,
    kind: ToConversation,
    params: &Value,
) -> Result<Value, Value> {
    let text = message_text(params).map_err(|why| error(INVALID_PARAMS, why))?;
    if !consented(session, host, Ask::Conversation(text.clone())).await {
        return Err(error(
            REFUSED_CODE,
            "the user did not let this app write to the conversation",
        ));
    }
    if let Err(wait) = session.pace.lock().admit(Instant::now()) {
        let message = format!("one message a second: try again in {} ms", wait.as_millis());
        return Err(error(REFUSED_CODE, message));
    }
    host.to_conversation(&session.app, kind, text);
    Ok(json!({}))
}

/// Whether the app may do what `ask` asks: "always" before, this app session's answer, else
/// the user's answer now (asked once per app session; "once" asks again next time; a link is
/// asked each time until the user denies one). What the app asks while another of its
/// requests is about to ask, or is asking, waits: one dialog lists all that waits together.
async fn consented(session: &AppSession, host: &Arc<dyn AppHost>, ask: Ask) -> bool {
    if let Some(decided) = decided(session, host, &ask) {
        return decided;
    }
    let (answer, mut answered) = oneshot::channel();
    session.waiting.lock().push((ask, answer));
    loop {
        tokio::select! {
            biased;
            allowed = &mut answered => return allowed.unwrap_or(false),
            _turn = session.asking.lock() => {
                if !session.waiting.lock().is_empty() {
                    // The app's other requests sent with this one are on their way.
                    tokio::time::sleep(GATHER).await;
                    ask_waiting(session, host).await;
                }
            }
        }
    }
}

/// What the user's answers so far decide of `ask`, if they do.
fn decided(session: &AppSession, host: &Arc<dyn AppHost>, ask: &Ask) -> Option<bool> {
    let consents = session.consents.lock();
    let key = match ask {
        // The approval gate asks before each call, until the user says no to one: then the app
        // calls no more, as after a "no" to its calls.
        Ask::Gated { .. } => return (consents.get(TOOLS) == Some(&Grant::Deny)).then_some(false),
        // Asked each time, until the user says no once: then the app asks no more.
        Ask::Link(_) => return (consents.get(LINKS) == Some(&Grant::Deny)).then_some(false),
        Ask::Conversation(_) | Ask::Tools { .. } => ask.grant_key()?,
    };
    match consents.get(key) {
        Some(Grant::Session | Grant::Always) => Some(true),
        Some(Grant::Deny) => Some(false),
        Some(Grant::Once) | None => host
            .granted_always(&session.app.server, ask)
            .then_some(true),
    }
}

/// Asks the user, in one dialog, what waits that earlier answers do not decide (the first
/// [`MAX_ASKS`]; the rest wait for the next dialog), and gives each its answer.
async fn ask_waiting(session: &AppSession, host: &Arc<dyn AppHost>) {
    let waiting = std::mem::take(&mut *session.waiting.lock());
    let mut batch = Vec::new();
    let mut later = Vec::new();
    for (ask, answer) in waiting {
        match decided(session, host, &ask) {
            Some(allowed) => {
                let _ = answer.send(allowed);
            }
            // Its request is gone (the page went away): nobody to answer.
            None if answer.is_closed() => {}
            None if batch.len() < MAX_ASKS => batch.push((ask, answer)),
            None => later.push((ask, answer)),
        }
    }
    session.waiting.lock().splice(0..0, later);
    if batch.is_empty() {
        return;
    }
    let asks = batch.iter().map(|(ask, _)| ask.clone()).collect();
    let grant = host.ask(&session.app, asks).await;
    let mut consents = session.consents.lock();
    for (ask, answer) in batch {
        let key = match (&ask, grant) {
            (Ask::Link(_), Grant::Deny) => Some(LINKS),
            (Ask::Gated { .. }, Grant::Deny) => Some(TOOLS),
            _ => ask.grant_key(),
        };
        if let Some(key) = key {
            consents.insert(key, grant);
        }
        let _ = answer.send(grant.allows());
    }
}

async fn open_link(
    session: &AppSession,
    host: &Arc<dyn AppHost>,
    params: &Value,
) -> Result<Value, Value> {
    let raw = params["url"].as_str().unwrap_or_default();
    let link =
        Link::parse(raw).map_err(|why| error(INVALID_PARAMS, format!("not opened: {why}")))?;
    if !consented(session, host, Ask::Link(link.shown())).await {
        return Err(error(REFUSED_CODE, "the user did not open the link"));
    }
    host.open_link(&link)
        .map(|()| json!({}))
        .map_err(|why| error(REFUSED_CODE, why))
}
