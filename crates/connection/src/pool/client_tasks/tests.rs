use super::wire::{lifted, TaskCapability, AS_TASK};
use super::*;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, InitializeRequest, RequestId};
use tokio::sync::oneshot;

fn table(limits: Limits) -> (Arc<ClientTasks>, CancellationToken) {
    let closed = CancellationToken::new();
    (ClientTasks::new(limits, closed.clone()), closed)
}

fn quick() -> Limits {
    Limits {
        poll_interval: Duration::from_millis(100),
        ..Limits::default()
    }
}

/// A job that ends with what is sent on the returned channel, and says when it was stopped.
fn waiting_job() -> (
    Job,
    oneshot::Sender<Result<Value, ErrorData>>,
    CancellationToken,
) {
    let (tx, rx) = oneshot::channel();
    let stopped = CancellationToken::new();
    let seen = stopped.clone();
    let job: Job = Box::new(move |stop: CancellationToken| {
        Box::pin(async move {
            tokio::select! {
                answer = rx => answer.unwrap_or_else(|_| Err(ErrorData::internal_error("dropped", None))),
                _ = stop.cancelled() => {
                    seen.cancel();
                    Err(ErrorData::internal_error("stopped", None))
                }
            }
        })
    });
    (job, tx, stopped)
}

/// Collects the status notifications.
fn sink() -> (StatusSink, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    (Arc::new(move |task| keep.lock().push(task)), seen)
}

fn task_id(created: &Value) -> String {
    created["task"]["taskId"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_its_result_is_fetched_once() {
    let (tasks, _closed) = table(quick());
    let (job, answer, _) = waiting_job();
    let (notify, notes) = sink();
    let created = tasks
        .start(Some(60_000), "asking the user", job, notify)
        .unwrap();
    let id = task_id(&created);
    assert_eq!(id.len(), 32, "128 random bits");
    let task = &created["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["statusMessage"], "asking the user");
    assert_eq!(task["ttl"], 60_000);
    assert_eq!(task["pollInterval"], 100);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));

    let waiting = {
        let (tasks, id) = (tasks.clone(), id.clone());
        tokio::spawn(async move { tasks.result(&id).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished(), "tasks/result waits for the end");
    assert_eq!(tasks.get(&id).unwrap()["status"], "working");

    answer
        .send(Ok(
            json!({ "action": "accept", "content": { "name": "Ada" } }),
        ))
        .unwrap();
    let result = waiting.await.unwrap().unwrap().unwrap();
    assert_eq!(result["content"]["name"], "Ada");
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id.as_str());
    let done = tasks.get(&id).unwrap();
    assert_eq!(done["status"], "completed");
    assert!(done.get("pollInterval").is_none());
    assert_eq!(notes.lock().last().unwrap()["status"], "completed");
    assert_eq!(
        tasks.result(&id).await,
        Err(TaskError::Fetched(id.clone())),
        "dropped once fetched"
    );
}

#[tokio::test]
async fn a_failed_job_is_a_failed_task_whose_result_is_its_error() {
    let (tasks, _closed) = table(quick());
    let (job, answer, _) = waiting_job();
    let (notify, _) = sink();
    let id = task_id(&tasks.start(None, "asking the model", job, notify).unwrap());
    answer
        .send(Err(ErrorData::new(
            ErrorCode(-1),
            "the user declined",
            None,
        )))
        .unwrap();
    let error = tasks.result(&id).await.unwrap().unwrap_err();
    assert_eq!(
        (error.code, error.message.as_ref()),
        (ErrorCode(-1), "the user declined")
    );
    let task = tasks.get(&id).unwrap();
    assert_eq!(
        (task["status"].as_str(), task["statusMessage"].as_str()),
        (Some("failed"), Some("the user declined"))
    );
    assert_eq!(
        task["ttl"],
        Limits::default().default_ttl.as_millis() as u64
    );
}

#[tokio::test]
async fn cancel_stops_the_job_once_and_leaves_no_result() {
    let (tasks, _closed) = table(quick());
    let (job, _answer, stopped) = waiting_job();
    let (notify, notes) = sink();
    let id = task_id(&tasks.start(None, "asking the user", job, notify).unwrap());
    let cancelled = tasks.cancel(&id).unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    tokio::time::timeout(Duration::from_secs(2), stopped.cancelled())
        .await
        .expect("the job was stopped");
    assert_eq!(notes.lock().last().unwrap()["status"], "cancelled");
    let again = ErrorData::from(tasks.cancel(&id).unwrap_err());
    assert_eq!(again.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        again.message,
        format!("cannot cancel task {id}: it has already ended (cancelled)")
    );
    assert_eq!(
        tasks.result(&id).await,
        Err(TaskError::NoResult(id.clone()))
    );
    let unknown = ErrorData::from(tasks.get("nope").unwrap_err());
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn a_task_and_its_result_go_when_its_ttl_runs_out() {
    let limits = Limits {
        max_ttl: Duration::from_millis(150),
        ..quick()
    };
    let (tasks, _closed) = table(limits);
    let (notify, _) = sink();
    let (running, _answer, stopped) = waiting_job();
    let asked_for_long = tasks
        .start(Some(86_400_000), "asking the user", running, notify.clone())
        .unwrap();
    assert_eq!(asked_for_long["task"]["ttl"], 150, "capped");
    let (done, answer, _) = waiting_job();
    let finished = task_id(
        &tasks
            .start(Some(100), "asking the model", done, notify)
            .unwrap(),
    );
    answer.send(Ok(json!({}))).unwrap();
    tokio::time::timeout(Duration::from_secs(2), stopped.cancelled())
        .await
        .expect("a running task is stopped at its ttl");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(tasks.len(), 0);
    assert_eq!(
        tasks.get(&finished),
        Err(TaskError::NotFound(finished.clone()))
    );
    assert_eq!(
        tasks.result(&finished).await,
        Err(TaskError::NotFound(finished))
    );
}

#[tokio::test]
async fn the_table_is_bounded_and_finished_tasks_make_room() {
    let limits = Limits {
        max_tasks: 2,
        ..quick()
    };
    let (tasks, _closed) = table(limits);
    let (notify, _) = sink();
    let (a, answer_a, _) = waiting_job();
    let (b, _answer_b, _) = waiting_job();
    let first = task_id(&tasks.start(None, "x", a, notify.clone()).unwrap());
    tasks.start(None, "x", b, notify.clone()).unwrap();
    let (c, _, _) = waiting_job();
    let full = tasks.start(None, "x", c, notify.clone()).unwrap_err();
    assert_eq!(full, TaskError::Full(2));
    assert_eq!(ErrorData::from(full).code, ErrorCode::INTERNAL_ERROR);
    answer_a.send(Ok(json!({}))).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (c, _, _) = waiting_job();
    tasks
        .start(None, "x", c, notify)
        .expect("the finished task made room");
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks.get(&first), Err(TaskError::NotFound(first)));
}

#[tokio::test]
async fn tasks_are_listed_oldest_first_page_by_page() {
    let limits = Limits { page: 2, ..quick() };
    let (tasks, _closed) = table(limits);
    let (notify, _) = sink();
    let mut ids = vec![];
    let mut answers = vec![];
    for _ in 0..3 {
        let (job, answer, _) = waiting_job();
        answers.push(answer);
        ids.push(task_id(
            &tasks.start(None, "x", job, notify.clone()).unwrap(),
        ));
    }
    let first = tasks.list(None).unwrap();
    let listed: Vec<&str> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[0].as_str(), ids[1].as_str()]);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = tasks.list(Some(cursor)).unwrap();
    assert_eq!(second["tasks"][0]["taskId"], ids[2].as_str());
    assert!(second.get("nextCursor").is_none());
    assert_eq!(
        tasks.list(Some("abc")),
        Err(TaskError::BadCursor("abc".into()))
    );
}

#[tokio::test]
async fn closing_the_connection_ends_every_task() {
    let (tasks, closed) = table(quick());
    let (notify, _) = sink();
    let (job, _answer, stopped) = waiting_job();
    let id = task_id(&tasks.start(None, "x", job, notify.clone()).unwrap());
    let waiting = {
        let (tasks, id) = (tasks.clone(), id.clone());
        tokio::spawn(async move { tasks.result(&id).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    closed.cancel();
    tokio::time::timeout(Duration::from_secs(2), stopped.cancelled())
        .await
        .expect("stopped");
    assert_eq!(waiting.await.unwrap(), Err(TaskError::Closed));
    let (job, _, _) = waiting_job();
    assert_eq!(
        tasks.start(None, "x", job, notify).unwrap_err(),
        TaskError::Closed
    );
}

#[test]
fn only_task_augmented_questions_are_marked_on_the_wire() {
    let augmented = r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"task":{"ttl":300000},"messages":[],"maxTokens":5}}"#;
    let marked: Value = serde_json::from_str(&lifted(augmented).unwrap()).unwrap();
    assert_eq!(marked["method"], format!("{AS_TASK}sampling/createMessage"));
    assert_eq!(marked["params"]["task"]["ttl"], 300000);
    assert_eq!(marked["id"], 7);
    for untouched in [
        r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"no task here"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","task":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"task\" sampling/createMessage"}]}}"#,
        r#"{"jsonrpc":"2.0","method":"elicitation/create","params":{"task":{}}}"#,
    ] {
        assert_eq!(lifted(untouched), None, "{untouched}");
    }
}

#[test]
fn initialize_declares_the_task_capability_with_its_id() {
    let tasks =
        json!({ "list": {}, "cancel": {}, "requests": { "sampling": { "createMessage": {} } } });
    let initialize = ClientJsonRpcMessage::request(
        ClientRequest::InitializeRequest(InitializeRequest::new(Default::default())),
        RequestId::Number(0),
    );
    let declared = TaskCapability::new(Some(tasks.clone()))
        .declared(&initialize)
        .unwrap();
    let sent = serde_json::to_value(&declared).unwrap();
    assert_eq!(
        (sent["id"].clone(), sent["method"].clone()),
        (json!(0), json!("initialize"))
    );
    assert_eq!(sent["params"]["capabilities"]["tasks"], tasks);
    assert!(sent["params"]["clientInfo"].is_object());
    assert!(TaskCapability::new(None).declared(&initialize).is_none());
    let ping = ClientJsonRpcMessage::request(
        ClientRequest::PingRequest(Default::default()),
        RequestId::Number(1),
    );
    assert!(TaskCapability::new(Some(tasks)).declared(&ping).is_none());
}
