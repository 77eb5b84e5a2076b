//! What the broker tests share: a broker on a private directory (in this process), sessions of
//! it, the cargo-built test server as a shared server, and waiting for things to happen.

use futures::future::BoxFuture;
use parking_lot::Mutex;
use pi_mcp_connection::broker::{Broker, Listener, Options};
use pi_mcp_connection::pool::shared::control;
use pi_mcp_connection::pool::shared::place::{current_uid, Place};
use pi_mcp_connection::pool::{
    Asker, Broker as Session, ClientFeatures, ConnectSpec, Connection, ElicitationPolicy, Host,
    NoHost, Notice, Progress, Protocol, Question, Reply, RequestOptions, Root, SharedSpec,
    StdioSpec, TransportSpec,
};
use pi_mcp_connection::server_log::LogMessage;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

/// The MCP test server cargo built for these tests.
pub use pi_mcp_test_support::test_server;
/// The helper executable the broker runs as.
pub const HELPER: &str = env!("CARGO_BIN_EXE_pi-mcp-native-helper");

/// A private agent dir (removed on drop).
pub struct Dir {
    pub root: PathBuf,
    pub agent: PathBuf,
}

impl Dir {
    pub fn new(name: &str) -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "pi-mcp-broker-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let agent = root.join("agent");
        std::fs::create_dir_all(&agent).unwrap();
        Dir { root, agent }
    }

    pub fn place(&self) -> Place {
        Place::choose(&self.agent, &HashMap::new(), current_uid()).unwrap()
    }

    /// A session of this agent dir that starts the broker with `helper` (or cannot start one).
    pub fn session(&self, helper: Option<&str>) -> Arc<Session> {
        Arc::new(Session::new(
            &self.agent,
            &HashMap::new(),
            helper.map(PathBuf::from),
            None,
        ))
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // A failed test leaves no broker behind (its watchdog stops its servers).
        for pid in brokers_of(self) {
            // SAFETY: kill(2) of a broker this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A broker serving in this process.
pub struct Running {
    pub dir: Dir,
    pub broker: Arc<Broker>,
    served: JoinHandle<()>,
}

impl Running {
    pub async fn start(name: &str) -> Running {
        let dir = Dir::new(name);
        let place = dir.place();
        place.prepare().unwrap();
        let listener = Listener::bind(&place).unwrap();
        let options = Options {
            linger: Duration::from_secs(60),
            accept_uid: current_uid(),
        };
        let broker = Broker::new(place, dir.agent.clone(), options);
        let served = tokio::spawn({
            let broker = broker.clone();
            async move { broker.serve(listener).await }
        });
        Running {
            dir,
            broker,
            served,
        }
    }

    pub fn session(&self) -> Arc<Session> {
        self.dir.session(None)
    }

    pub async fn stop(self) {
        self.broker.stop();
        self.served.await.unwrap();
    }
}

/// The test server (with `args`) as a shared server of `session`, under `identity`.
pub fn shared(session: &Arc<Session>, identity: &str, args: &[&str]) -> ConnectSpec {
    ConnectSpec {
        server: "test".into(),
        transport: TransportSpec::Shared(SharedSpec {
            stdio: StdioSpec {
                command: test_server(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: std::env::vars().collect(),
                cwd: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            },
            identity: identity.into(),
            idle: None,
            broker: session.clone(),
            family: None,
        }),
        protocol: Protocol::Initialize,
        timeout: Duration::from_secs(30),
        debug: false,
        client: ClientFeatures::none(),
        keeper: None,
    }
}

pub async fn open(spec: &ConnectSpec) -> Arc<Connection> {
    let (notices, _) = tokio::sync::mpsc::unbounded_channel();
    Connection::open(spec, notices, Arc::new(NoHost), Arc::default())
        .await
        .unwrap()
}

/// A connection whose questions `host` answers, and what the connection reports.
pub async fn open_with(
    spec: &ConnectSpec,
    host: Arc<dyn Host>,
) -> (Arc<Connection>, UnboundedReceiver<Notice>) {
    let (notices, heard) = tokio::sync::mpsc::unbounded_channel();
    let conn = Connection::open(spec, notices, host, Arc::default())
        .await
        .unwrap();
    (conn, heard)
}

/// Client features with elicitation and roots on.
pub fn asking() -> ClientFeatures {
    ClientFeatures {
        elicitation: ElicitationPolicy::Ask,
        roots: true,
        ..ClientFeatures::none()
    }
}

/// A session's person: accepts every form with `{"who": <name>}` and counts the questions.
pub struct Person {
    pub name: &'static str,
    pub asked: AtomicUsize,
}

impl Person {
    pub fn new(name: &'static str) -> Arc<Person> {
        Arc::new(Person {
            name,
            asked: AtomicUsize::new(0),
        })
    }
}

impl Host for Person {
    fn elicit(&self, _: Asker, _: Question) -> BoxFuture<'static, Option<Reply>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let content = json!({ "who": self.name }).as_object().unwrap().clone();
        Box::pin(async move { Some(Reply::Accept(content)) })
    }

    fn sample(&self, _: Asker, _: Value) -> BoxFuture<'static, Result<Value, String>> {
        Box::pin(async { Err("no model".to_string()) })
    }

    fn roots(&self, _: &str) -> Vec<Root> {
        Root::directory(std::path::Path::new("/the/session/cwd"))
            .into_iter()
            .collect()
    }

    fn log(&self, _: &str, _: &LogMessage) {}
}

/// Options for a call of `tool` whose progress is collected in `seen`.
pub fn with_progress(seen: &Arc<Mutex<Vec<Progress>>>) -> RequestOptions {
    let seen = seen.clone();
    RequestOptions {
        on_progress: Some(Arc::new(move |p| seen.lock().push(p))),
        ..plain()
    }
}

/// Calls `tool` with `arguments`; the text of its result, or the error.
pub async fn call(
    conn: &Connection,
    tool: &str,
    arguments: Value,
    opts: RequestOptions,
) -> Result<String, String> {
    let params = json!({ "name": tool, "arguments": arguments });
    match conn.request("tools/call", params, opts).await {
        Ok(result) => Ok(result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The broker's state through its controls, as `pi-mcp broker status` reads it.
pub async fn status_of(dir: &Dir) -> Option<pi_mcp_connection::pool::shared::wire::BrokerStatus> {
    control::status(&dir.place()).await.unwrap()
}

/// Stops the broker of `dir` (started by a session, as its own process) and checks it is gone.
pub async fn stop_broker(dir: &Dir) {
    let pid = status_of(dir).await.map(|s| s.pid);
    control::stop(&dir.place()).await.unwrap();
    if let Some(pid) = pid {
        until("the broker exited", || !alive(pid)).await;
    }
}

pub fn plain() -> RequestOptions {
    RequestOptions::new(Duration::from_secs(10))
}

/// `echo`'s text.
pub async fn echo(conn: &Connection, text: &str) -> String {
    let args = json!({ "name": "echo", "arguments": { "text": text } });
    let result: Value = conn.request("tools/call", args, plain()).await.unwrap();
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let limit = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn until_async<F: std::future::Future<Output = bool>>(
    what: &str,
    mut done: impl FnMut() -> F,
) {
    let limit = Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(Instant::now() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn alive(pid: u32) -> bool {
    pi_mcp_connection::pool::process::alive(pid as i32)
}

/// Broker processes of `dir` (by their command line).
pub fn brokers_of(dir: &Dir) -> Vec<u32> {
    let agent = dir.agent.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            args.contains(&&b"broker"[..]) && args.contains(&agent.as_bytes())
        })
        .filter(|&pid| alive(pid))
        .collect()
}
