//! Routing through the broker: a call's progress and cancellation stay with its session, list
//! changes reach every session, a question goes to the session it belongs to (or is refused
//! when that cannot be told), and `roots/list` answers the server's launch directory.

use crate::support::*;
use parking_lot::Mutex;
use pi_mcp_connection::pool::Notice;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_goes_to_the_caller_and_cancellation_to_the_server() {
    let running = Running::start("progress").await;
    let (a, b) = (running.session(), running.session());
    let first = open(&shared(&a, "one", &[])).await;
    let second = open(&shared(&b, "one", &[])).await;
    let (seen_a, seen_b) = (Arc::default(), Arc::default());
    // Different step counts tell the calls' progress apart; the last step may come after the
    // answer and be dropped, as with any server.
    let (done_a, done_b) = tokio::join!(
        call(
            &first,
            "slow",
            json!({ "steps": 3, "delayMs": 20 }),
            with_progress(&seen_a)
        ),
        call(
            &second,
            "slow",
            json!({ "steps": 6, "delayMs": 20 }),
            with_progress(&seen_b)
        ),
    );
    assert_eq!(done_a.unwrap(), "slow done after 3 steps");
    assert_eq!(done_b.unwrap(), "slow done after 6 steps");
    let steps = |seen: &Arc<Mutex<Vec<pi_mcp_connection::pool::Progress>>>| {
        seen.lock()
            .iter()
            .map(|p| p.progress as u32)
            .collect::<Vec<_>>()
    };
    let (steps_a, steps_b) = (steps(&seen_a), steps(&seen_b));
    assert!(
        steps_a.starts_with(&[1, 2]) && steps_a.len() <= 3,
        "only its own: {steps_a:?}"
    );
    assert!(
        steps_b.starts_with(&[1, 2, 3, 4, 5]) && steps_b.len() <= 6,
        "{steps_b:?}"
    );

    let cancel = CancellationToken::new();
    let heard = Arc::new(Mutex::new(vec![]));
    let long = tokio::spawn({
        let (first, cancel) = (first.clone(), cancel.clone());
        let opts = pi_mcp_connection::pool::RequestOptions {
            cancel,
            ..with_progress(&heard)
        };
        async move { call(&first, "slow", json!({ "steps": 500, "delayMs": 20 }), opts).await }
    });
    until("the long call under way", || !heard.lock().is_empty()).await;
    cancel.cancel();
    assert!(long.await.unwrap().is_err(), "cancelled");
    until_async("the server told of the cancellation", || async {
        let seen = call(&second, "seen", json!({}), plain()).await.unwrap();
        seen.contains("notifications/cancelled")
    })
    .await;
    assert_eq!(echo(&second, "still there").await, "echo: still there");

    first.close().await;
    second.close().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_reaches_every_session() {
    let running = Running::start("listchanged").await;
    let (a, b) = (running.session(), running.session());
    let (first, _) = open_with(
        &shared(&a, "grows", &[]),
        Arc::new(pi_mcp_connection::pool::NoHost),
    )
    .await;
    let (second, mut heard) = open_with(
        &shared(&b, "grows", &[]),
        Arc::new(pi_mcp_connection::pool::NoHost),
    )
    .await;
    let before = now_tools(&second).await;
    let grown = call(&first, "grow", json!({}), plain()).await.unwrap();
    assert_eq!(grown, format!("now {} tools", before + 1));
    let notice = tokio::time::timeout(std::time::Duration::from_secs(10), heard.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(notice, Notice::ListChanged { ref server, .. } if server == "test"),
        "{notice:?}"
    );
    first.close().await;
    second.close().await;
    running.stop().await;
}

/// How many tools the server lists now.
async fn now_tools(conn: &pi_mcp_connection::pool::Connection) -> usize {
    let listed: serde_json::Value = conn
        .request("tools/list", json!({}), plain())
        .await
        .unwrap();
    listed["tools"].as_array().unwrap().len()
}

/// Alice's and Bob's sessions of one shared server that asks (`asks`), each with its person.
struct Asked {
    running: Running,
    bob_session: Arc<pi_mcp_connection::pool::Broker>,
    alice: Arc<Person>,
    bob: Arc<Person>,
    first: Arc<pi_mcp_connection::pool::Connection>,
    second: Arc<pi_mcp_connection::pool::Connection>,
}

impl Asked {
    async fn start(name: &str) -> Asked {
        let running = Running::start(name).await;
        let (a, b) = (running.session(), running.session());
        let (alice, bob) = (Person::new("alice"), Person::new("bob"));
        let (first, _) = open_with(&Self::spec(&a), alice.clone()).await;
        let (second, _) = open_with(&Self::spec(&b), bob.clone()).await;
        Asked {
            running,
            bob_session: b,
            alice,
            bob,
            first,
            second,
        }
    }

    fn spec(
        session: &Arc<pi_mcp_connection::pool::Broker>,
    ) -> pi_mcp_connection::pool::ConnectSpec {
        let mut spec = shared(session, "asks", &["asks"]);
        spec.client = asking();
        spec
    }

    fn asked(&self) -> (usize, usize) {
        (
            self.alice.asked.load(Ordering::SeqCst),
            self.bob.asked.load(Ordering::SeqCst),
        )
    }

    /// Alice's call asks while Bob's session has a call in flight too: whose question is it?
    async fn ask_while_bob_is_busy(&self) -> String {
        // Boxed: two requests at once are past `large_futures`' bound.
        let bobs_call = Box::pin(call(
            &self.second,
            "slow",
            json!({ "steps": 100, "delayMs": 20 }),
            plain(),
        ));
        let alices_call = async {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            call(&self.first, "ask", form(), plain()).await.unwrap()
        };
        tokio::select! {
            answer = alices_call => answer,
            _ = bobs_call => panic!("the slow call ended first"),
        }
    }

    async fn stop(self) {
        self.first.close().await;
        self.second.close().await;
        self.running.stop().await;
    }
}

fn form() -> serde_json::Value {
    json!({
        "method": "elicitation/create",
        "params": { "mode": "form", "message": "Who?", "requestedSchema": { "type": "object", "properties": { "who": { "type": "string" } } } }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_goes_to_its_callers_session() {
    let asked = Asked::start("elicit").await;
    let answer = call(&asked.second, "ask", form(), plain()).await.unwrap();
    assert!(answer.contains(r#""who":"bob""#), "{answer}");
    assert_eq!(asked.asked(), (0, 1), "the other session is not asked");

    let roots = json!({ "method": "roots/list", "params": {} });
    let answer = call(&asked.first, "ask", roots, plain()).await.unwrap();
    let launch_dir = url::Url::from_file_path(env!("CARGO_MANIFEST_DIR")).unwrap();
    assert!(
        answer.contains(launch_dir.as_str()),
        "the launch cwd, not a session's: {answer}"
    );
    assert!(!answer.contains("/the/session/cwd"), "{answer}");
    asked.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_about_a_task_goes_to_the_session_that_started_it() {
    let asked = Asked::start("task").await;
    let started = call(&asked.second, "ask", json!({ "task": "t-1" }), plain()).await;
    assert!(started.is_ok(), "{started:?}");
    // Alice's call is the one in flight when the server asks, but the question names Bob's task.
    let mut question = form();
    question["params"]["_meta"] =
        json!({ "io.modelcontextprotocol/related-task": { "taskId": "t-1" } });
    let answer = call(&asked.first, "ask", question, plain()).await.unwrap();
    assert!(answer.contains(r#""who":"bob""#), "{answer}");
    assert_eq!(asked.asked(), (0, 1));
    asked.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_several_callers_the_latest_with_a_ui_is_asked_else_nobody() {
    let mut asked = Asked::start("ambiguous").await;
    let refused = asked.ask_while_bob_is_busy().await;
    assert!(refused.contains("none with a UI"), "{refused}");
    assert_eq!(asked.asked(), (0, 0), "nobody was asked");

    // A session says whether it has a UI when it attaches: Bob's session reattaches with one.
    asked.bob_session.set_ui(true);
    asked.second.close().await;
    asked.second = open_with(&Asked::spec(&asked.bob_session), asked.bob.clone())
        .await
        .0;
    let answer = asked.ask_while_bob_is_busy().await;
    assert!(
        answer.contains(r#""who":"bob""#),
        "the caller with a UI: {answer}"
    );
    assert_eq!(asked.asked(), (0, 1));
    asked.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_reach_the_subscribed_sessions_and_the_server_is_subscribed_once() {
    let running = Running::start("subscribe").await;
    let sessions = [running.session(), running.session(), running.session()];
    let mut opened = vec![];
    for session in &sessions {
        let spec = shared(session, "subscribes", &["subscribe"]);
        opened.push(open_with(&spec, Arc::new(pi_mcp_connection::pool::NoHost)).await);
    }
    let [(first, mut heard_first), (second, mut heard_second), (third, mut heard_third)] =
        <[_; 3]>::try_from(opened).ok().unwrap();
    let uri = json!({ "uri": "file:///watched" });
    for conn in [&first, &second, &first] {
        let _: serde_json::Value = conn
            .request("resources/subscribe", uri.clone(), plain())
            .await
            .unwrap();
    }
    assert_eq!(
        call(&third, "touch", uri.clone(), plain()).await.unwrap(),
        "touched"
    );
    for heard in [&mut heard_first, &mut heard_second] {
        let update = next_update(heard).await;
        assert_eq!(update, "file:///watched");
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        std::iter::from_fn(|| heard_third.try_recv().ok())
            .all(|n| !matches!(n, Notice::ResourceUpdated { .. })),
        "the session not subscribed hears nothing"
    );
    let methods = |seen: String, method: &str| seen.matches(method).count();
    let seen = call(&third, "seen", json!({}), plain()).await.unwrap();
    assert_eq!(methods(seen, "resources/subscribe"), 1, "subscribed once");

    let _: serde_json::Value = first
        .request("resources/unsubscribe", uri.clone(), plain())
        .await
        .unwrap();
    second.close().await; // the last subscriber leaves: the server is unsubscribed
    until_async("the server unsubscribed once", || async {
        let seen = call(&third, "seen", json!({}), plain()).await.unwrap();
        methods(seen, "resources/unsubscribe") == 1
    })
    .await;
    first.close().await;
    third.close().await;
    running.stop().await;
}

/// The URI of the next resource update `heard` reports.
async fn next_update(heard: &mut tokio::sync::mpsc::UnboundedReceiver<Notice>) -> String {
    loop {
        let notice = tokio::time::timeout(std::time::Duration::from_secs(10), heard.recv())
            .await
            .unwrap()
            .unwrap();
        if let Notice::ResourceUpdated { uri, .. } = notice {
            return uri;
        }
    }
}
