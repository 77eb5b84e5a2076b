//! The client side of a connection (capabilities, roots, elicitation, sampling, logging) against
//! server-everything, which offers its tools for these only to clients that advertise them, and
//! against the fault server for what no real server sends.

use super::tests::{bounds, everything_script, opts};
use super::*;
use crate::elicitation::Content;
use crate::server_log::{LogLevel, LogMessage};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// A host that answers from a script and remembers what it was asked.
#[derive(Default)]
struct Scripted {
    reply: Mutex<Option<Reply>>,
    questions: Mutex<Vec<(Asker, Question)>>,
    samples: Mutex<Vec<Value>>,
    logs: Mutex<Vec<(String, LogMessage)>>,
    /// Never answers: only a void question ends.
    hold: bool,
}

impl Host for Scripted {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        self.questions.lock().push((asker.clone(), question));
        let reply = self.reply.lock().clone();
        let hold = self.hold;
        Box::pin(async move {
            if hold {
                asker.void.cancelled().await;
                return Some(Reply::Accept(Content::new()));
            }
            reply
        })
    }

    fn sample(&self, _: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let text = params["messages"][0]["content"]["text"].clone();
        self.samples.lock().push(params);
        Box::pin(async move {
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": format!("model says hi to {text}") },
                "model": "test-model",
                "stopReason": "endTurn"
            }))
        })
    }

    fn roots(&self) -> Vec<Root> {
        vec![Root {
            uri: "file:///work/project".into(),
            name: Some("project".into()),
        }]
    }

    fn log(&self, server: &str, message: &LogMessage) {
        self.logs.lock().push((server.to_string(), message.clone()));
    }
}

fn all_features(elicitation: ElicitationPolicy) -> ClientFeatures {
    ClientFeatures {
        elicitation,
        sampling: true,
        roots: true,
        log_level: LogLevel::Info,
    }
}

fn node_server(name: &str, args: Vec<String>, client: ClientFeatures) -> ConnectSpec {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    ConnectSpec {
        server: name.into(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: "node".into(),
            args,
            env: std::env::vars().collect(),
            cwd: root,
        }),
        protocol: Protocol::Initialize,
        timeout: Duration::from_secs(30),
        debug: false,
        client,
    }
}

fn everything(client: ClientFeatures) -> ConnectSpec {
    node_server(
        "everything",
        vec![everything_script(), "stdio".into()],
        client,
    )
}

fn fault(client: ClientFeatures) -> ConnectSpec {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("__test__/fixtures/fault-server.mjs");
    node_server(
        "fault",
        vec![script.display().to_string(), "asks".into()],
        client,
    )
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// server-everything with `host`, once it has registered the tools it offers for what we
/// advertise (it says so with `notifications/tools/list_changed`).
async fn everything_with(
    host: Arc<dyn Host>,
    client: ClientFeatures,
) -> (Arc<Pool>, Arc<Connection>) {
    let (pool, mut notices) = Pool::with_host(host);
    let conn = pool.connect(everything(client)).await.unwrap();
    let announced = async {
        while let Some(notice) = notices.recv().await {
            if matches!(notice, Notice::ListChanged { .. }) {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), announced)
        .await
        .expect("server-everything announces its tools");
    (pool, conn)
}

async fn call(conn: &Connection, tool: &str, args: Value) -> String {
    let mut options = opts(Duration::from_secs(20));
    options.caller = Some("call-1".into());
    let params = json!({ "name": tool, "arguments": args });
    let result = conn.request("tools/call", params, options).await.unwrap();
    text(&result)
}

async fn tool_names(conn: &Connection) -> Vec<String> {
    let listing = conn.relist(&bounds(Duration::from_secs(10))).await.unwrap();
    listing
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_see_what_we_offer() {
    let (pool, _) = Pool::new();
    let bare = pool
        .connect(everything(ClientFeatures::none()))
        .await
        .unwrap();
    let names = tool_names(&bare).await;
    assert!(!names.iter().any(|n| n == "trigger-elicitation-request"));
    pool.close_all().await;

    let host = Arc::new(Scripted::default());
    let (pool, conn) = everything_with(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let names = tool_names(&conn).await;
    for offered in [
        "get-roots-list",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
        "trigger-sampling-request",
    ] {
        assert!(names.iter().any(|n| n == offered), "{offered} in {names:?}");
    }
    let roots = call(&conn, "get-roots-list", json!({})).await;
    assert!(roots.contains("URI: file:///work/project"), "{roots}");
    // server-everything logs the roots it was given.
    let logged =
        host.logs.lock().iter().any(|(server, m)| {
            server == "everything" && m.data.to_string().contains("Roots updated")
        });
    assert!(logged, "{:?}", host.logs.lock());
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_is_accepted_declined_and_cancelled() {
    let host = Arc::new(Scripted::default());
    let (pool, conn) = everything_with(host.clone(), all_features(ElicitationPolicy::Ask)).await;

    let mut content = Content::new();
    content.insert("name".into(), json!("Ada"));
    content.insert(
        "untitledMultipleSelectEnum".into(),
        json!(["Piano", "Drums"]),
    );
    *host.reply.lock() = Some(Reply::Accept(content));
    let accepted = call(&conn, "trigger-elicitation-request", json!({})).await;
    assert!(accepted.contains("- Name: Ada"), "{accepted}");
    // Omitted fields come back with the schema's defaults.
    assert!(accepted.contains("- Favorite Integer: 42"), "{accepted}");
    assert!(accepted.contains("\"Piano\""), "{accepted}");
    let (asker, question) = host.questions.lock()[0].clone();
    assert_eq!(asker.server, "everything");
    assert_eq!(asker.callers, vec![Caller::from("call-1")]);
    let Question::Form { form, message } = question else {
        panic!("a form");
    };
    assert!(message.contains("Please provide inputs"));
    assert!(form.field("titledMultipleSelectEnum").is_some());

    *host.reply.lock() = Some(Reply::Decline);
    let declined = call(&conn, "trigger-elicitation-request", json!({})).await;
    assert!(declined.contains("User declined"), "{declined}");
    *host.reply.lock() = Some(Reply::Cancel);
    let cancelled = call(&conn, "trigger-elicitation-request", json!({})).await;
    assert!(cancelled.contains("User cancelled"), "{cancelled}");

    // An answer that does not fit the form never reaches the server.
    let mut bad = Content::new();
    bad.insert("name".into(), json!("Ada"));
    bad.insert("integer".into(), json!(1000));
    *host.reply.lock() = Some(Reply::Accept(bad));
    let refused = call(&conn, "trigger-elicitation-request", json!({})).await;
    assert!(
        refused.contains("`integer`: must be at most 100"),
        "{refused}"
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_anyone_to_ask_the_policy_decides() {
    // Nobody to ask (NoHost): "ask" declines; "defaults" declines too, because `name` is
    // required without a default.
    for policy in [
        ElicitationPolicy::Ask,
        ElicitationPolicy::Defaults,
        ElicitationPolicy::Decline,
    ] {
        let (pool, conn) = everything_with(Arc::new(NoHost), all_features(policy)).await;
        let answer = call(&conn, "trigger-elicitation-request", json!({})).await;
        assert!(answer.contains("User declined"), "{policy:?}: {answer}");
        pool.close_all().await;
    }
    // A form whose required fields all have defaults is accepted with them.
    let (pool, _) = Pool::new();
    let conn = pool
        .connect(fault(all_features(ElicitationPolicy::Defaults)))
        .await
        .unwrap();
    let schema = json!({
        "type": "object",
        "properties": { "size": { "type": "integer", "default": 3 } },
        "required": ["size"]
    });
    let params = json!({ "message": "How many?", "requestedSchema": schema });
    let answer = call(
        &conn,
        "ask",
        json!({ "method": "elicitation/create", "params": params }),
    )
    .await;
    assert_eq!(
        answer,
        r#"answer: {"action":"accept","content":{"size":3}}"#
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_questions_get_clear_errors() {
    let host = Arc::new(Scripted::default());
    let (pool, _) = Pool::with_host(host.clone());
    let conn = pool
        .connect(fault(all_features(ElicitationPolicy::Ask)))
        .await
        .unwrap();
    let capabilities = call(&conn, "capabilities", json!({})).await;
    let capabilities: Value = serde_json::from_str(&capabilities).unwrap();
    assert_eq!(capabilities["roots"], json!({ "listChanged": true }));
    assert_eq!(
        capabilities["elicitation"],
        json!({ "form": {}, "url": {} })
    );
    assert!(capabilities["sampling"].is_object());

    let nested = json!({
        "message": "Where?",
        "requestedSchema": {
            "type": "object",
            "properties": { "address": { "type": "object", "properties": { "city": { "type": "string" } } } }
        }
    });
    let answer = call(
        &conn,
        "ask",
        json!({ "method": "elicitation/create", "params": nested }),
    )
    .await;
    assert!(
        answer.starts_with("error -32602: elicitation refused: requestedSchema is not a flat form: property `address` is an object"),
        "{answer}"
    );
    assert!(host.questions.lock().is_empty(), "nobody was asked");

    let big =
        json!({ "method": "sampling/createMessage", "params": { "maxTokens": 10 }, "padMB": 10 });
    let answer = call(&conn, "ask", big).await;
    assert!(
        answer.contains(
            "sampling request refused: its messages weigh 10.0 MiB, over the 4 MiB limit"
        ),
        "{answer}"
    );
    assert!(host.samples.lock().is_empty());
    pool.close_all().await;

    // Asked for what we did not offer.
    let (pool, _) = Pool::with_host(host.clone());
    let conn = pool.connect(fault(ClientFeatures::none())).await.unwrap();
    let form =
        json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
    let answer = call(
        &conn,
        "ask",
        json!({ "method": "elicitation/create", "params": form }),
    )
    .await;
    assert_eq!(
        answer,
        "error -32601: fault asked for user input (elicitation), but the client did not offer it: `elicitation` is false for this server"
    );
    let answer = call(&conn, "ask", json!({ "method": "roots/list" })).await;
    assert!(
        answer.contains("`roots` is false for this server"),
        "{answer}"
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_runs_on_the_hosts_model() {
    let host = Arc::new(Scripted::default());
    let (pool, conn) = everything_with(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let answer = call(
        &conn,
        "trigger-sampling-request",
        json!({ "prompt": "the test" }),
    )
    .await;
    assert!(answer.contains("model says hi to"), "{answer}");
    assert!(answer.contains("test-model"), "{answer}");
    let params = host.samples.lock()[0].clone();
    assert_eq!(params["systemPrompt"], "You are a helpful test server.");
    assert_eq!(params["maxTokens"], 100);
    pool.close_all().await;

    // Without a model (NoHost) the server hears why.
    let (pool, conn) =
        everything_with(Arc::new(NoHost), all_features(ElicitationPolicy::Ask)).await;
    let mut options = opts(Duration::from_secs(20));
    options.caller = Some("call-1".into());
    let params = json!({ "name": "trigger-sampling-request", "arguments": { "prompt": "x" } });
    let result = conn.request("tools/call", params, options).await.unwrap();
    assert!(
        text(&result).contains("no model is available to answer everything's sampling request"),
        "{result}"
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_holds_its_calls_timeout_and_ends_with_it() {
    let host = Arc::new(Scripted {
        hold: true,
        ..Scripted::default()
    });
    let (pool, _) = Pool::with_host(host.clone());
    let conn = pool
        .connect(fault(all_features(ElicitationPolicy::Ask)))
        .await
        .unwrap();
    let form =
        json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
    let params =
        json!({ "name": "ask", "arguments": { "method": "elicitation/create", "params": form } });
    let cancel = CancellationToken::new();
    let options = RequestOptions {
        timeout: Duration::from_millis(300),
        cancel: cancel.clone(),
        on_progress: None,
        caller: Some("call-9".into()),
    };
    let request = conn.request("tools/call", params, options);
    let abort_later = async {
        // Well past the timeout: the open question holds it.
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert_eq!(host.questions.lock().len(), 1);
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(request, abort_later);
    assert_eq!(result, Err(RequestError::Aborted));
    let (asker, _) = host.questions.lock()[0].clone();
    tokio::time::timeout(Duration::from_secs(2), asker.void.cancelled())
        .await
        .expect("the question is void once its call was aborted");
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_level_and_roots_changes_reach_the_server() {
    let host = Arc::new(Scripted::default());
    let (pool, _) = Pool::with_host(host.clone());
    let mut features = all_features(ElicitationPolicy::Ask);
    features.log_level = LogLevel::Warning;
    let conn = pool.connect(fault(features)).await.unwrap();
    for (level, data) in [
        ("info", "chatty"),
        ("error", "disk full"),
        ("warning", "slow"),
    ] {
        let params = json!({ "level": level, "logger": "db", "data": data });
        call(&conn, "log", json!({ "params": params })).await;
    }
    conn.roots_changed().await;
    let seen = call(&conn, "seen", json!({})).await;
    assert!(seen.contains("logging/setLevel"), "{seen}");
    assert!(seen.contains("notifications/roots/list_changed"), "{seen}");
    let logged: Vec<_> = host.logs.lock().iter().map(|(_, m)| m.text()).collect();
    assert_eq!(logged, ["disk full", "slow"]);
    assert_eq!(
        conn.recent_log().as_deref(),
        Some("error db: disk full\nwarning db: slow")
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_names_the_last_logged_errors() {
    let (pool, _) = Pool::new();
    let conn = pool.connect(fault(ClientFeatures::none())).await.unwrap();
    let params = json!({ "level": "critical", "data": "lost the database" });
    call(&conn, "log", json!({ "params": params })).await;
    let params = json!({ "name": "crash", "arguments": {} });
    let error = conn
        .request("tools/call", params, opts(Duration::from_secs(10)))
        .await;
    let Err(RequestError::Closed(why)) = error else {
        panic!("{error:?}");
    };
    assert!(why.contains("exited with code 3"), "{why}");
    assert!(
        why.ends_with("Its last logged warnings and errors:\ncritical lost the database"),
        "{why}"
    );
    pool.close_all().await;
}
