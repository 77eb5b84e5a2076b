use super::super::in_memory::{eventually, open, Ada, Scripted};
use super::*;
use crate::pool::host::NoHost;

fn call(tool: &str, arguments: Value) -> Value {
    json!({ "name": tool, "arguments": arguments })
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn an_answer_comes_back_and_the_request_no_longer_counts_in_flight() {
    let (conn, served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let answer = conn
        .request(
            "tools/call",
            call("echo", json!({ "text": "hi" })),
            RequestOptions::new(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(text(&answer), "hi");
    assert_eq!(conn.in_flight(), 0);
    assert_eq!(served.seen.calls.lock().len(), 1);
    conn.close().await;
}

#[tokio::test]
async fn without_an_answer_in_time_the_request_is_cancelled_and_the_server_pinged_next() {
    let (conn, served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let limit = Duration::from_millis(200);
    let asked = conn.request(
        "tools/call",
        call("hang", json!({})),
        RequestOptions::new(limit),
    );
    assert_eq!(asked.await, Err(RequestError::Timeout(limit)));
    let seen = served.seen.clone();
    assert!(
        eventually(|| seen.cancelled.lock().len() == 1).await,
        "the server is told (notifications/cancelled)"
    );
    // A timeout makes the server suspect: the next check pings it, and it answers.
    assert!(conn.responsive(Duration::from_secs(5)).await);
    assert_eq!(conn.in_flight(), 0);
    conn.close().await;
}

#[tokio::test]
async fn cancelling_a_request_aborts_it_and_tells_the_server() {
    let (conn, served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let opts = RequestOptions::new(Duration::from_secs(30));
    let cancel = opts.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let asked = conn.request("tools/call", call("hang", json!({})), opts);
    assert_eq!(asked.await, Err(RequestError::Aborted));
    let seen = served.seen.clone();
    assert!(eventually(|| seen.cancelled.lock().len() == 1).await);
    conn.close().await;
}

#[tokio::test]
async fn the_total_bounds_the_whole_request_however_patient_its_timeout() {
    let (conn, served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let total = Duration::from_millis(300);
    let opts = RequestOptions {
        total: Some(total),
        ..RequestOptions::new(Duration::from_secs(30))
    };
    let asked = conn.request("tools/call", call("hang", json!({})), opts);
    assert_eq!(asked.await, Err(RequestError::CallTimeout(total)));
    let seen = served.seen.clone();
    assert!(eventually(|| seen.cancelled.lock().len() == 1).await);
    conn.close().await;
}

#[tokio::test]
async fn progress_reaches_the_caller_in_order_and_keeps_a_slow_request_alive() {
    let (conn, _served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let heard = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let sink: ProgressSink = {
        let heard = heard.clone();
        Arc::new(move |progress: Progress| heard.lock().push(progress.progress))
    };
    // 12 steps 100 ms apart outlast the 1 s timeout: only the progress keeps the request.
    let opts = RequestOptions {
        on_progress: Some(sink),
        ..RequestOptions::new(Duration::from_secs(1))
    };
    let steps = json!({ "steps": 12, "delayMs": 100 });
    let answer = conn
        .request("tools/call", call("progress", steps), opts)
        .await;
    assert_eq!(text(&answer.unwrap()), "done");
    let expected: Vec<f64> = (1..=12).map(f64::from).collect();
    assert_eq!(*heard.lock(), expected);
    assert!(
        conn.progress.lock().is_empty(),
        "the route goes with the request"
    );
    conn.close().await;
}

#[tokio::test]
async fn input_required_rounds_are_answered_and_the_request_sent_again_with_its_state() {
    let ada = Arc::new(Ada::default());
    let (conn, served, _) = open(Scripted::default(), ada.clone(), true).await;
    assert!(conn.is_modern());
    let answer = conn
        .request(
            "tools/call",
            call("ask", json!({})),
            RequestOptions::new(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(text(&answer), r#"hello "Ada""#);
    assert_eq!(*ada.asked.lock(), ["Your name?"]);
    let calls = served.seen.calls.lock().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["inputResponses"], Value::Null);
    assert_eq!(calls[1]["requestState"], "s1");
    assert_eq!(calls[1]["inputResponses"]["name"]["action"], "accept");
    conn.close().await;
}

#[tokio::test]
async fn a_server_that_keeps_asking_for_input_is_stopped_after_the_last_round() {
    let (conn, served, _) = open(Scripted::default(), Arc::new(Ada::default()), true).await;
    let asked = conn
        .request(
            "tools/call",
            call("ask_forever", json!({})),
            RequestOptions::new(Duration::from_secs(5)),
        )
        .await;
    let Err(RequestError::Protocol(why)) = asked else {
        panic!("{asked:?}");
    };
    assert!(why.contains("after 16 rounds"), "{why}");
    assert_eq!(served.seen.calls.lock().len(), MAX_INPUT_ROUNDS);
    conn.close().await;
}
