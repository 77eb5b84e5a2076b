//! What the adapter tests share: a private home with an agent dir and a project, the cargo-built
//! test server as the servers it configures, and an adapter on it that records its events.

use parking_lot::Mutex;
use pi_mcp_core::adapter::{Adapter, Bounds, CallOptions, OpenOptions, Outcome, Timing};
use pi_mcp_core::events::Event;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The MCP test server cargo built for these tests.
pub use pi_mcp_test_support::test_server;

/// Short clocks, so backoff and health work show within a test.
pub fn fast() -> Timing {
    Timing {
        health_interval: Duration::from_millis(100),
        failure_backoff: Duration::from_millis(800),
        fill_grace: Duration::from_secs(2),
        ..Timing::default()
    }
}

/// A private home (removed on drop): `agent` holds mcp.json and the cache, servers run in `cwd`.
pub struct Home {
    pub root: PathBuf,
    pub agent: PathBuf,
    pub cwd: PathBuf,
}

impl Home {
    /// A home whose mcp.json has `servers` (`{ name: entry }`) and `settings`; out of the
    /// process's family unless `settings` say (`shareWithSubagents`): the tests of this binary
    /// run on runtimes of their own, and a family's hub lives on the runtime that made it.
    pub fn with(servers: Value, mut settings: Value) -> Home {
        if settings.get("shareWithSubagents").is_none() {
            settings["shareWithSubagents"] = json!(false);
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "pi-mcp-adapter-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let (agent, cwd) = (root.join(".pi").join("agent"), root.join("project"));
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        let home = Home { root, agent, cwd };
        let config = json!({ "mcpServers": home.resolve(servers), "settings": settings });
        std::fs::write(home.agent.join("mcp.json"), config.to_string()).unwrap();
        home
    }

    pub fn new(servers: Value) -> Home {
        Home::with(servers, json!({}))
    }

    /// Entries get the project as their cwd unless they have one; `{home}` in their strings
    /// becomes the home's path.
    fn resolve(&self, servers: Value) -> Value {
        let text = servers
            .to_string()
            .replace("{home}", &self.root.display().to_string());
        let mut servers: Value = serde_json::from_str(&text).unwrap();
        if let Value::Object(map) = &mut servers {
            for entry in map.values_mut() {
                if entry.get("cwd").is_none() {
                    entry["cwd"] = json!(self.cwd);
                }
            }
        }
        servers
    }

    pub fn open(&self) -> Session {
        self.open_with(fast(), Bounds::default())
    }

    pub fn open_with(&self, timing: Timing, bounds: Bounds) -> Session {
        self.open_in(timing, bounds, &[])
    }

    /// An adapter whose environment has `vars` besides `HOME`.
    pub fn open_in(&self, timing: Timing, bounds: Bounds, vars: &[(&str, &str)]) -> Session {
        let home = ("HOME", self.root.display().to_string());
        let env = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain([(home.0.to_string(), home.1)])
            .collect();
        let adapter = Adapter::open(OpenOptions {
            cwd: self.cwd.clone(),
            agent_dir: Some(self.agent.clone()),
            env: Some(env),
            timing,
            bounds,
            project_trusted: Some(true),
            ..OpenOptions::default()
        });
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        adapter.on_event(Arc::new(move |e| sink.lock().push(e)));
        Session { adapter, events }
    }

    /// The metadata cache as written, or `null`.
    pub fn cache(&self) -> Value {
        std::fs::read_to_string(self.agent.join("mcp-cache.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null)
    }

    /// The servers running now (found by their working directory).
    pub fn processes(&self) -> Vec<u32> {
        processes_in(&self.cwd)
    }

    /// How many servers made with [`counted`] have started.
    pub fn starts(&self) -> usize {
        std::fs::read_to_string(self.root.join("starts"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A test server entry with these scenario arguments.
pub fn server(args: &[&str]) -> Value {
    json!({ "command": test_server(), "args": args })
}

/// A test server entry that counts its starts in `<home>/starts` ([`Home::starts`]).
pub fn counted(args: &[&str]) -> Value {
    json!({ "command": test_server(), "args": args, "env": { "TEST_STARTS": "{home}/starts" } })
}

/// An adapter and the events it emitted.
pub struct Session {
    pub adapter: Arc<Adapter>,
    pub events: Arc<Mutex<Vec<Event>>>,
}

impl Session {
    /// Calls `tool` with `args` (an object) as the model would, without a call id.
    pub async fn call(&self, tool: &str, args: Value) -> Outcome {
        let args = args.as_object().cloned().unwrap_or_default();
        self.adapter.call(tool, args, CallOptions::default()).await
    }

    /// Runs the `mcp` tool with `params`.
    pub async fn execute(&self, params: Value) -> Outcome {
        self.adapter.execute(&params, None).await
    }

    /// How many events `matches`.
    pub fn count(&self, matches: impl Fn(&Event) -> bool) -> usize {
        self.events.lock().iter().filter(|e| matches(e)).count()
    }

    /// Waits (up to 10 s) for an event that `matches`.
    pub async fn event(&self, what: &str, matches: impl Fn(&Event) -> bool) -> Event {
        let found = || self.events.lock().iter().find(|e| matches(e)).cloned();
        wait_for(what, found).await
    }
}

/// Polls `check` every 20 ms until it gives a value; panics after 10 s naming `what`.
pub async fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// All text of an outcome.
pub fn text(outcome: &Outcome) -> String {
    outcome.joined_text()
}

/// The fields only the outcome's mode sets, as `Part::$variant` holds them.
macro_rules! part {
    ($outcome:expr, $variant:ident) => {
        match $outcome.details.part.as_ref() {
            Some(pi_mcp_core::adapter::Part::$variant(part)) => part,
            other => panic!("not {} details: {other:?}", stringify!($variant)),
        }
    };
}
pub(crate) use part;

/// The outcome's `details.error`, or "" when it succeeded.
pub fn code(outcome: &Outcome) -> &str {
    outcome.details.error.map_or("", |e| e.as_str())
}

/// Live processes whose working directory is `dir`.
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        })
        .collect()
}

/// Shuts `session` down and checks that no server of `home` is left.
pub async fn finish(session: Session, home: &Home) {
    session.adapter.shutdown().await;
    wait_for("every server to stop", || {
        home.processes().is_empty().then_some(())
    })
    .await;
}
