//! A session's family inside one process: its sessions share one process per server, the first to
//! start it owning it; many starting at once start one; a session that ends while another uses its
//! server hands it over to the hub, mid-call; a question during another session's call goes to the
//! family's UI, saying for whom.

use crate::support::*;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use pi_mcp_connection::elicitation::present::Question as Shown;
use pi_mcp_connection::pool::Reply;
use pi_mcp_core::adapter::{FrontEnd, Outcome, SharingEntry, StartOptions};
use pi_mcp_core::approval::present::{ApprovalAnswer, Question as ApprovalQuestion};
use pi_mcp_core::events::Event;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A process has one family, whose hub runs on the runtime of the session that made it, as on the
/// addon's one runtime: the cases run in order on one runtime, not as tests of their own (the
/// other tests of this binary keep out of the family, see `Home::with`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_family_in_one_process() {
    sessions_of_one_process_share_a_server_the_first_one_runs().await;
    many_sessions_starting_at_once_start_one_process().await;
    a_session_that_ends_mid_call_of_another_hands_its_server_over().await;
    a_question_during_a_headless_sessions_call_goes_to_the_familys_ui().await;
    a_headless_sessions_gated_call_is_asked_in_the_familys_ui().await;
}

fn family_home(servers: Value) -> Home {
    Home::with(servers, json!({ "shareWithSubagents": true }))
}

/// The `shared` status details of `server` in `session`.
async fn sharing(session: &Session, server: &str) -> Option<SharingEntry> {
    let status = session.execute(json!({})).await;
    let found = part!(status, Status)
        .servers
        .iter()
        .find(|s| s.name == server);
    found.and_then(|s| s.shared.clone())
}

async fn sessions_of_one_process_share_a_server_the_first_one_runs() {
    let home = family_home(json!({ "s": counted(&[]) }));
    let (owner, guest) = (home.open(), home.open());
    assert_eq!(
        text(&owner.call("s_echo", json!({ "text": "a" })).await),
        "echo: a"
    );
    assert_eq!(
        text(&guest.call("s_echo", json!({ "text": "b" })).await),
        "echo: b"
    );
    assert_eq!(home.starts(), 1, "one process for both sessions");
    assert_eq!(home.processes().len(), 1);
    let owned = sharing(&owner, "s").await.unwrap();
    assert_eq!(owned.text, "used by this session and 1 other in its family");
    let guested = sharing(&guest, "s").await.unwrap();
    assert_eq!(
        guested.text,
        "used by this session and 1 other in its family; runs in another session of this process"
    );
    // A change the owner's connection hears reaches both sessions (once started).
    for session in [&owner, &guest] {
        session.adapter.start(StartOptions { defer_fill: true });
    }
    guest.call("s_grow", json!({})).await;
    for session in [&owner, &guest] {
        let grown = |e: &Event| matches!(e, Event::CatalogChanged { tools: 9, .. });
        session.event("the grown catalog", grown).await;
    }
    guest.adapter.shutdown().await;
    let until = Instant::now() + Duration::from_secs(10);
    while sharing(&owner, "s").await.is_some() {
        assert!(Instant::now() < until, "the owner never alone again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    finish(owner, &home).await;
}

async fn many_sessions_starting_at_once_start_one_process() {
    let home = family_home(json!({ "s": counted(&[]) }));
    let sessions: Vec<Session> = (0..8).map(|_| home.open()).collect();
    let calls = sessions.iter().enumerate().map(|(i, session)| async move {
        let said = session
            .call("s_echo", json!({ "text": i.to_string() }))
            .await;
        assert_eq!(text(&said), format!("echo: {i}"));
    });
    futures::future::join_all(calls).await;
    assert_eq!(home.starts(), 1);
    for session in sessions {
        session.adapter.shutdown().await;
    }
    wait_for("every server to stop", || {
        home.processes().is_empty().then_some(())
    })
    .await;
}

async fn a_session_that_ends_mid_call_of_another_hands_its_server_over() {
    let home = family_home(json!({ "s": counted(&[]) }));
    let (owner, guest) = (home.open(), home.open());
    owner.call("s_echo", json!({ "text": "first" })).await;
    let slow = {
        let adapter = guest.adapter.clone();
        tokio::spawn(async move {
            let args = json!({ "text": "still here", "delayMs": 1500 });
            let args = args.as_object().cloned().unwrap_or_default();
            adapter.call("s_echo", args, Default::default()).await
        })
    };
    // The guest's call reached the server through the hub (a fixed wait was not always enough
    // under load: the owner then stopped a server no one else used yet).
    let until = Instant::now() + Duration::from_secs(10);
    while sharing(&owner, "s").await.and_then(|s| s.sessions) != Some(2) {
        assert!(Instant::now() < until, "the guest never attached");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    owner.adapter.shutdown().await;
    drop(owner);
    assert_eq!(text(&slow.await.unwrap()), "echo: still here");
    let after = guest.call("s_echo", json!({ "text": "after" })).await;
    assert_eq!(text(&after), "echo: after");
    assert_eq!(home.starts(), 1, "the same process throughout");
    let left = Instant::now();
    guest.adapter.shutdown().await;
    wait_for("the handed-over server to stop", || {
        home.processes().is_empty().then_some(())
    })
    .await;
    assert!(
        left.elapsed() < Duration::from_secs(8),
        "{:?}",
        left.elapsed()
    );
}

/// A front end whose person answers every question with `{"who": "parent"}` and approval
/// questions with the next of `choices` (`"hold"`: once `release` is notified, allowing once),
/// keeping the titles shown.
#[derive(Default)]
struct Person {
    shown: Mutex<Vec<String>>,
    choices: Mutex<Vec<&'static str>>,
    release: Arc<tokio::sync::Notify>,
}

impl FrontEnd for Person {
    fn elicit(&self, question: Shown) -> BoxFuture<'static, Option<Reply>> {
        self.shown.lock().push(question.title);
        let mut content = serde_json::Map::new();
        content.insert("who".into(), json!("parent"));
        Box::pin(async { Some(Reply::Accept(content)) })
    }

    fn sample(
        &self,
        _: pi_mcp_core::sampling::Request,
    ) -> BoxFuture<'static, Option<pi_mcp_core::sampling::Answer>> {
        Box::pin(async { None })
    }

    fn withdraw(&self, _: u64) {}

    fn approve(&self, question: ApprovalQuestion) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        self.shown.lock().push(question.title);
        let choice = self.choices.lock().remove(0);
        let release = self.release.clone();
        Box::pin(async move {
            if choice == "hold" {
                release.notified().await;
            }
            let choice = if choice == "hold" { "once" } else { choice };
            Some(ApprovalAnswer::named(Some(choice)))
        })
    }
}

async fn a_question_during_a_headless_sessions_call_goes_to_the_familys_ui() {
    let home = family_home(
        json!({ "s": { "command": test_server(), "args": ["asks"], "elicitation": "ask" } }),
    );
    let (owner, guest) = (home.open(), home.open());
    let person = Arc::new(Person::default());
    owner.adapter.attach_front_end(person.clone());
    owner.adapter.set_interactive(true);
    owner.call("s_echo", json!({ "text": "first" })).await;
    let form = json!({
        "method": "elicitation/create",
        "params": { "mode": "form", "message": "Who?", "requestedSchema": { "type": "object", "properties": { "who": { "type": "string" } } } }
    });
    let answer = text(&guest.call("s_ask", form).await);
    assert!(answer.contains(r#""who":"parent""#), "{answer}");
    let shown = person.shown.lock().clone();
    assert_eq!(shown.len(), 1);
    let title = &shown[0];
    let pid = std::process::id();
    assert!(
        title.starts_with(&format!(
            "MCP server \"s\" asks for another session (pid {pid}):"
        )),
        "{title}"
    );
    guest.adapter.shutdown().await;
    finish(owner, &home).await;
}

/// `own_echo` of `session` with `text`, running meanwhile.
fn echo_in_background(session: &Session, text: &str) -> tokio::task::JoinHandle<Outcome> {
    let adapter = session.adapter.clone();
    let args = json!({ "text": text })
        .as_object()
        .cloned()
        .unwrap_or_default();
    tokio::spawn(async move { adapter.call("own_echo", args, Default::default()).await })
}

/// A headless session's gated calls (a server shared with the family, one of its own) are asked
/// in the family's UI, naming it; a session grant given there covers its next call and the UI
/// session's own; without a UI in the family, nobody is asked.
async fn a_headless_sessions_gated_call_is_asked_in_the_familys_ui() {
    let gated = |mut entry: Value, shared: Option<bool>| {
        entry["approveTools"] = json!(true);
        if let Some(shared) = shared {
            entry["shared"] = json!(shared);
        }
        entry
    };
    let home = family_home(json!({
        "s": gated(counted(&[]), None),
        "own": gated(json!({ "command": test_server() }), Some(false)),
    }));
    let (owner, guest) = (home.open(), home.open());
    let alone = guest.call("s_echo", json!({ "text": "a" })).await;
    assert_eq!(code(&alone), "approval_required", "no UI in the family yet");
    assert!(
        text(&alone).contains("and no session with one started it"),
        "{}",
        text(&alone)
    );

    let person = Arc::new(Person::default());
    *person.choices.lock() = vec!["deny", "once", "tool", "once"];
    owner.adapter.attach_front_end(person.clone());
    owner.adapter.set_interactive(true);
    let denied = guest.call("s_echo", json!({ "text": "b" })).await;
    assert_eq!(code(&denied), "approval_denied", "{}", text(&denied));
    let once = guest
        .call("s_echo", json!({ "text": "c", "api_key": "k-123" }))
        .await;
    assert_eq!(text(&once), "echo: c");
    let title = person.shown.lock()[1].clone();
    let pid = std::process::id();
    assert!(
        title.starts_with(&format!(
            "MCP server \"s\" wants to run echo\nAsked for another session (pid {pid}) in "
        )),
        "{title}"
    );
    assert!(
        title.contains("  api_key: (hidden)") && !title.contains("k-123"),
        "{title}"
    );
    // A grant for the tool: the guest's next call and the owner's own go unasked; a server the
    // guest runs itself asks the same way.
    let calls = [
        (&guest, "s", "d"),
        (&guest, "s", "e"),
        (&owner, "s", "f"),
        (&guest, "own", "g"),
    ];
    for (session, server, said) in calls {
        let outcome = session
            .call(&format!("{server}_echo"), json!({ "text": said }))
            .await;
        assert_eq!(text(&outcome), format!("echo: {said}"));
    }
    assert_eq!(person.shown.lock().len(), 4, "deny, once, tool, own's once");
    // While the owner's own dialog is open, the guest's question waits its turn.
    *person.choices.lock() = vec!["hold", "once"];
    let owners = echo_in_background(&owner, "h");
    wait_for("the owner's dialog", || {
        (person.shown.lock().len() == 5).then_some(())
    })
    .await;
    let guests = echo_in_background(&guest, "i");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(person.shown.lock().len(), 5, "the guest's question waits");
    person.release.notify_one();
    assert_eq!(text(&owners.await.unwrap()), "echo: h");
    assert_eq!(text(&guests.await.unwrap()), "echo: i");
    let shown = person.shown.lock().clone();
    assert!(!shown[4].contains("Asked for"));
    assert!(shown[5].contains("Asked for another session"));
    assert!(person.choices.lock().is_empty());
    guest.adapter.shutdown().await;
    finish(owner, &home).await;
}
