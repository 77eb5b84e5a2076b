//! The client side of a connection (capabilities, roots, elicitation, sampling, logging) against
//! the test server's `ask`, `log` and `capabilities` tools, which send what a server may send.

use crate::support::*;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use pi_mcp_connection::elicitation::Content;
use pi_mcp_connection::pool::{
    Asker, Caller, ClientFeatures, ConnectSpec, Connection, ElicitationPolicy, Host, NoHost, Pool,
    Progress, Question, Reply, RequestError, RequestOptions, Root,
};
use pi_mcp_connection::server_log::{LogLevel, LogMessage, ServerLog};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
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

    fn roots(&self, _: &str) -> Vec<Root> {
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
        tasks: true,
        log_level: LogLevel::Info,
        apps: true,
    }
}

/// The test server with the tools that ask the client.
fn asking(client: ClientFeatures) -> ConnectSpec {
    stdio_server("test", &["asks"], client)
}

/// A form like the one server-everything asks for: a required name without a default, a
/// bounded integer and two multiple-choice fields with defaults.
fn everything_form() -> Value {
    json!({
        "message": "Please provide inputs for the following fields:",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": { "title": "String", "type": "string", "description": "Your full, legal name" },
                "integer": { "title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42 },
                "untitledMultipleSelectEnum": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": { "type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"] },
                    "default": ["Guitar"]
                },
                "titledMultipleSelectEnum": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": { "anyOf": [{ "const": "fish-1", "title": "Tuna" }, { "const": "fish-2", "title": "Salmon" }] },
                    "default": ["fish-1"]
                }
            },
            "required": ["name"]
        }
    })
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

async fn call(conn: &Connection, tool: &str, args: Value) -> String {
    let mut options = opts(Duration::from_secs(20));
    options.caller = Some("call-1".into());
    let params = json!({ "name": tool, "arguments": args });
    let result = conn.request("tools/call", params, options).await.unwrap();
    text(&result)
}

async fn ask(conn: &Connection, method: &str, params: Value) -> String {
    call(conn, "ask", json!({ "method": method, "params": params })).await
}

async fn connected(host: Arc<dyn Host>, client: ClientFeatures) -> (Arc<Pool>, Arc<Connection>) {
    let (pool, _) = Pool::with_host(host);
    let conn = pool.connect(asking(client)).await.unwrap();
    (pool, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_see_what_we_offer() {
    let (pool, bare) = connected(Arc::new(NoHost), ClientFeatures::none()).await;
    let offered: Value =
        serde_json::from_str(&call(&bare, "capabilities", json!({})).await).unwrap();
    for feature in ["roots", "elicitation", "sampling", "extensions"] {
        assert!(offered.get(feature).is_none(), "{feature} in {offered}");
    }
    pool.close_all().await;

    let host = Arc::new(Scripted::default());
    let (pool, conn) = connected(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let offered: Value =
        serde_json::from_str(&call(&conn, "capabilities", json!({})).await).unwrap();
    assert_eq!(offered["roots"], json!({ "listChanged": true }));
    assert_eq!(offered["elicitation"], json!({ "form": {}, "url": {} }));
    assert_eq!(offered["sampling"], json!({ "tools": {} }));
    let apps = &offered["extensions"]["io.modelcontextprotocol/ui"];
    assert_eq!(apps, &json!({ "mimeTypes": ["text/html;profile=mcp-app"] }));
    let roots = ask(&conn, "roots/list", json!({})).await;
    assert!(roots.contains("file:///work/project"), "{roots}");
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_is_accepted_declined_and_cancelled() {
    let host = Arc::new(Scripted::default());
    let (pool, conn) = connected(host.clone(), all_features(ElicitationPolicy::Ask)).await;

    let mut content = Content::new();
    content.insert("name".into(), json!("Ada"));
    content.insert(
        "untitledMultipleSelectEnum".into(),
        json!(["Piano", "Drums"]),
    );
    *host.reply.lock() = Some(Reply::Accept(content));
    let accepted = ask(&conn, "elicitation/create", everything_form()).await;
    let answer: Value = serde_json::from_str(accepted.strip_prefix("answer: ").unwrap()).unwrap();
    assert_eq!(answer["action"], "accept", "{accepted}");
    assert_eq!(answer["content"]["name"], "Ada");
    // Omitted fields come back with the schema's defaults.
    assert_eq!(answer["content"]["integer"], 42);
    assert_eq!(
        answer["content"]["untitledMultipleSelectEnum"],
        json!(["Piano", "Drums"])
    );
    let (asker, question) = host.questions.lock()[0].clone();
    assert_eq!(asker.server, "test");
    assert_eq!(asker.callers, vec![Caller::from("call-1")]);
    let Question::Form { form, message, .. } = question else {
        panic!("a form");
    };
    assert!(message.contains("Please provide inputs"));
    assert!(form.field("titledMultipleSelectEnum").is_some());

    *host.reply.lock() = Some(Reply::Decline);
    let declined = ask(&conn, "elicitation/create", everything_form()).await;
    assert_eq!(declined, r#"answer: {"action":"decline"}"#);
    *host.reply.lock() = Some(Reply::Cancel);
    let cancelled = ask(&conn, "elicitation/create", everything_form()).await;
    assert_eq!(cancelled, r#"answer: {"action":"cancel"}"#);

    // An answer that does not fit the form never reaches the server.
    let mut bad = Content::new();
    bad.insert("name".into(), json!("Ada"));
    bad.insert("integer".into(), json!(1000));
    *host.reply.lock() = Some(Reply::Accept(bad));
    let refused = ask(&conn, "elicitation/create", everything_form()).await;
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
        let (pool, conn) = connected(Arc::new(NoHost), all_features(policy)).await;
        let answer = ask(&conn, "elicitation/create", everything_form()).await;
        assert_eq!(answer, r#"answer: {"action":"decline"}"#, "{policy:?}");
        pool.close_all().await;
    }
    // A form whose required fields all have defaults is accepted with them.
    let (pool, conn) = connected(Arc::new(NoHost), all_features(ElicitationPolicy::Defaults)).await;
    let schema = json!({
        "type": "object",
        "properties": { "size": { "type": "integer", "default": 3 } },
        "required": ["size"]
    });
    let params = json!({ "message": "How many?", "requestedSchema": schema });
    let answer = ask(&conn, "elicitation/create", params).await;
    assert_eq!(
        answer,
        r#"answer: {"action":"accept","content":{"size":3}}"#
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_questions_get_clear_errors() {
    let host = Arc::new(Scripted::default());
    let (pool, conn) = connected(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let nested = json!({
        "message": "Where?",
        "requestedSchema": {
            "type": "object",
            "properties": { "address": { "type": "object", "properties": { "city": { "type": "string" } } } }
        }
    });
    let answer = ask(&conn, "elicitation/create", nested).await;
    assert!(
        answer.starts_with("error -32602: elicitation refused: requestedSchema is not a flat form: property `address` is an object"),
        "{answer}"
    );
    assert!(host.questions.lock().is_empty(), "nobody was asked");

    let text = "x".repeat(10 * 1024 * 1024);
    let big = json!({ "maxTokens": 10, "messages": [{ "role": "user", "content": { "type": "text", "text": text } }] });
    let answer = ask(&conn, "sampling/createMessage", big).await;
    assert!(
        answer.contains(
            "error -32005: sampling request refused: it weighs 10.0 MiB, over the 4 MiB limit"
        ),
        "{answer}"
    );
    assert!(host.samples.lock().is_empty());
    pool.close_all().await;

    // Asked for what we did not offer.
    let (pool, conn) = connected(host.clone(), ClientFeatures::none()).await;
    let form =
        json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
    let answer = ask(&conn, "elicitation/create", form).await;
    assert_eq!(
        answer,
        "error -32601: test asked for user input (elicitation), but the client did not offer it: `elicitation` is false for this server"
    );
    let answer = ask(&conn, "roots/list", json!({})).await;
    assert!(
        answer.contains("`roots` is false for this server"),
        "{answer}"
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_runs_on_the_hosts_model() {
    let request = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": "the test" } }],
        "systemPrompt": "You are a helpful test server.",
        "maxTokens": 100
    });
    let host = Arc::new(Scripted::default());
    let (pool, conn) = connected(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let answer = ask(&conn, "sampling/createMessage", request.clone()).await;
    assert!(answer.contains("model says hi to"), "{answer}");
    assert!(answer.contains("test-model"), "{answer}");
    let params = host.samples.lock()[0].clone();
    assert_eq!(params["systemPrompt"], "You are a helpful test server.");
    assert_eq!(params["maxTokens"], 100);
    pool.close_all().await;

    // Without a model (NoHost) the server hears why.
    let (pool, conn) = connected(Arc::new(NoHost), all_features(ElicitationPolicy::Ask)).await;
    let answer = ask(&conn, "sampling/createMessage", request).await;
    assert!(
        answer.contains("no model is available to answer test's sampling request"),
        "{answer}"
    );
    pool.close_all().await;
}

/// A connection whose host never answers (its questions end only when void), and the params
/// of a call of `tool` that asks it for a form.
async fn never_answered(tool: &str) -> (Arc<Scripted>, Arc<Pool>, Arc<Connection>, Value) {
    let host = Arc::new(Scripted {
        hold: true,
        ..Scripted::default()
    });
    let (pool, conn) = connected(host.clone(), all_features(ElicitationPolicy::Ask)).await;
    let form =
        json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
    let params =
        json!({ "name": tool, "arguments": { "method": "elicitation/create", "params": form } });
    (host, pool, conn, params)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_holds_its_calls_timeout_and_ends_with_it() {
    let (host, pool, conn, params) = never_answered("ask").await;
    let cancel = CancellationToken::new();
    let options = RequestOptions {
        timeout: Duration::from_millis(300),
        cancel: cancel.clone(),
        on_progress: None,
        caller: Some("call-9".into()),
        total: None,
        tool: None,
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
async fn the_calls_limit_ends_a_question_asked_inside_its_result() {
    let (host, pool, conn, params) = never_answered("ask_inline").await;
    let limit = Duration::from_millis(600);
    let mut options = opts(Duration::from_secs(20));
    options.caller = Some("call-9".into());
    options.total = Some(limit);
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        conn.request("tools/call", params, options),
    )
    .await
    .expect("the call's limit stops it while its question is open");
    assert_eq!(result, Err(RequestError::CallTimeout(limit)));
    let (asker, _) = host.questions.lock()[0].clone();
    tokio::time::timeout(Duration::from_secs(2), asker.void.cancelled())
        .await
        .expect("the question is void once its call was stopped");
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_level_and_roots_changes_reach_the_server() {
    let host = Arc::new(Scripted::default());
    let mut features = all_features(ElicitationPolicy::Ask);
    features.log_level = LogLevel::Warning;
    let (pool, conn) = connected(host.clone(), features).await;
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
    let (pool, conn) = connected(Arc::new(NoHost), ClientFeatures::none()).await;
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

/// Options of a call for `call-1` that reports its progress into `seen`.
fn task_opts(total: Duration, seen: &Arc<Mutex<Vec<String>>>) -> RequestOptions {
    let seen = seen.clone();
    let mut options = opts(Duration::from_secs(20));
    options.caller = Some("call-1".into());
    options.total = Some(total);
    options.on_progress = Some(Arc::new(move |p: Progress| {
        seen.lock().extend(p.message);
    }));
    options
}

// (A task that runs to its end, with a question on the way, is server-everything's
// simulate-research-query in __test__/client-side.test.mjs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_never_ends_is_stopped_by_the_calls_limit_or_an_abort() {
    let (pool, conn) = connected(Arc::new(NoHost), all_features(ElicitationPolicy::Ask)).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let params = json!({ "name": "forever", "arguments": {} });
    let error = conn
        .request(
            "tools/call",
            params.clone(),
            task_opts(Duration::from_millis(700), &seen),
        )
        .await
        .unwrap_err();
    assert_eq!(error, RequestError::CallTimeout(Duration::from_millis(700)));
    assert!(
        seen.lock().iter().any(|m| m.starts_with("still working")),
        "{:?}",
        seen.lock()
    );

    let cancel = CancellationToken::new();
    let mut options = task_opts(Duration::from_secs(60), &seen);
    options.cancel = cancel.clone();
    let aborted = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(conn.request("tools/call", params, options), aborted);
    assert_eq!(result, Err(RequestError::Aborted));
    let seen = call(&conn, "seen", json!({})).await;
    assert_eq!(seen.matches("tasks/cancel").count(), 2, "{seen}");
    pool.close_all().await;
}

/// A session's log: what servers log goes to a real `mcp.log`; nothing else is answered.
struct FileLog(ServerLog);

impl Host for FileLog {
    fn elicit(&self, asker: Asker, question: Question) -> BoxFuture<'static, Option<Reply>> {
        NoHost.elicit(asker, question)
    }

    fn sample(&self, asker: Asker, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        NoHost.sample(asker, params)
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        vec![]
    }

    fn log(&self, server: &str, message: &LogMessage) {
        self.0.append(server, message);
    }
}

/// Issue 26, item 13: three servers each send 3,000 log messages at once, as fast as they can;
/// `mcp.log` has every server's messages in the order it sent them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_of_log_messages_are_written_in_the_order_sent() {
    const BURST: usize = 3000;
    let dir = std::env::temp_dir().join(format!("pi-mcp-log-burst-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("mcp.log");
    let (pool, _) = Pool::with_host(Arc::new(FileLog(ServerLog::new(path.clone()))));
    let names = ["one", "two", "three"];
    let bursts = names.map(|name| {
        let pool = pool.clone();
        async move {
            let spec = stdio_server(name, &["asks"], ClientFeatures::none());
            let conn = pool.connect(spec).await.unwrap();
            let params = json!({ "level": "info", "data": "n" });
            call(&conn, "log", json!({ "params": params, "count": BURST })).await
        }
    });
    futures::future::join_all(bursts).await;
    let lines = || std::fs::read_to_string(&path).unwrap_or_default();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while lines().lines().count() < names.len() * BURST {
        assert!(
            std::time::Instant::now() < deadline,
            "every message written"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for name in names {
        let tag = format!(" [{name}] info n ");
        let sent: Vec<usize> = lines()
            .lines()
            .filter_map(|line| line.split_once(&tag)?.1.parse().ok())
            .collect();
        let out_of_order = sent.windows(2).filter(|w| w[0] > w[1]).count();
        assert_eq!(sent.len(), BURST, "{name}");
        assert_eq!(
            out_of_order, 0,
            "{name}: {out_of_order} messages written before an earlier one"
        );
    }
    pool.close_all().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
