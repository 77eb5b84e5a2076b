use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const LIMIT: u64 = 64 << 20;

fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "pi-mcp-cache-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entry(tool: &str) -> CacheEntry {
    CacheEntry {
        templates: vec![],
        config_hash: "h".into(),
        tools: vec![json!({"name": tool, "inputSchema": {"type": "object"}})],
        resources: vec![],
        prompts: None,
        instructions: Some("use it".into()),
        left_out: vec!["tool \"deep\": its definition nests 200 levels".into()],
        cached_at: 1_700_000_000_000.0,
        ttl_ms: None,
        transport: Some("sse".into()),
    }
}

#[test]
fn validity() {
    let e = entry("a");
    let now = e.cached_at + 1000.0;
    assert!(e.is_valid("h", now));
    assert!(!e.is_valid("other", now));
    assert!(!e.is_valid("h", e.cached_at + MAX_AGE_MS + 1.0));
    assert!(!CacheEntry {
        ttl_ms: Some(0.0),
        ..e.clone()
    }
    .is_valid("h", now));
    assert!(!CacheEntry {
        ttl_ms: Some(500.0),
        ..e.clone()
    }
    .is_valid("h", now));
    assert!(CacheEntry {
        ttl_ms: Some(5000.0),
        ..e.clone()
    }
    .is_valid("h", now));
    assert!(!CacheEntry {
        cached_at: f64::NAN,
        ..e
    }
    .is_valid("h", now));
}

#[test]
fn load_reports_unusable_files() {
    let dir = temp_dir();
    let path = cache_path(&dir);
    assert_eq!(load(&path, LIMIT), Loaded::Missing);
    for (text, why) in [
        ("{not json", "is not valid JSON"),
        ("{\"version\": 2, \"servers\": {}}", "has version 2"),
        ("{\"version\": 1}", "has no `servers` object"),
    ] {
        std::fs::write(&path, text).unwrap();
        match load(&path, LIMIT) {
            Loaded::Unusable { warning } => assert!(warning.contains(why), "{warning}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    match load(&path, 10) {
        Loaded::Unusable { warning } => assert!(
            warning.ends_with(
                "is 14 bytes, over the 10 bytes limit; it is ignored and will be rewritten"
            ),
            "{warning}"
        ),
        other => panic!("oversize: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn writes_merge_and_keep_what_others_wrote() {
    let dir = temp_dir();
    let path = cache_path(&dir);
    std::fs::write(
        &path,
        json!({"version": 1, "servers": {
            "theirs": {"configHash": "x", "tools": [], "resources": [], "cachedAt": 5, "cacheScope": "public"},
            "ours": {"configHash": "old", "tools": [], "resources": [], "cachedAt": 1, "uiHint": true, "ttlMs": 0}
        }, "extra": "kept"})
        .to_string(),
    )
    .unwrap();
    write_entries(&path, &[("ours".into(), entry("echo"))]).unwrap();
    let root: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(root["extra"], "kept");
    assert_eq!(root["servers"]["theirs"]["cacheScope"], "public");
    let ours = &root["servers"]["ours"];
    assert_eq!(ours["configHash"], "h");
    assert_eq!(ours["tools"][0]["name"], "echo");
    assert_eq!(ours["instructions"], "use it");
    assert_eq!(ours["cachedAt"], 1_700_000_000_000u64);
    assert_eq!(ours["uiHint"], true);
    assert_eq!(ours["transport"], "sse");
    assert!(ours.get("ttlMs").is_none() && ours.get("prompts").is_none());

    let Loaded::Ok(cache) = load(&path, LIMIT) else {
        panic!("unreadable")
    };
    assert_eq!(cache.servers["ours"], entry("echo"));
    assert_eq!(cache.servers.len(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_of_another_version_is_backed_up_before_it_is_replaced() {
    let dir = temp_dir();
    let path = cache_path(&dir);
    std::fs::write(&path, "{\"version\": 9, \"servers\": {}}").unwrap();
    write_entries(&path, &[("s".into(), entry("t"))]).unwrap();
    let backups: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("mcp-cache.json.bak-")
        })
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(
        std::fs::read_to_string(backups[0].path()).unwrap(),
        "{\"version\": 9, \"servers\": {}}"
    );
    assert!(matches!(load(&path, LIMIT), Loaded::Ok(c) if c.servers.contains_key("s")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = temp_dir();
    let path = cache_path(&dir);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    write_entries(&path, &[(format!("s{t}-{i}"), entry("x"))]).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let Loaded::Ok(cache) = load(&path, LIMIT) else {
        panic!("unreadable")
    };
    assert_eq!(cache.servers.len(), 200);
    let leftovers = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    assert_eq!(leftovers, 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// Set in the environment of the child processes of `two_processes_lose_nothing`: `<path>|<prefix>`.
const WRITER_CHILD: &str = "PI_MCP_NATIVE_CACHE_WRITER";
const UPDATES_PER_PROCESS: usize = 200;

/// The body of the child processes of `two_processes_lose_nothing` (does nothing otherwise).
#[test]
fn cache_writer_child() {
    let Ok(job) = std::env::var(WRITER_CHILD) else {
        return;
    };
    let (path, prefix) = job.split_once('|').unwrap();
    for i in 0..UPDATES_PER_PROCESS {
        write_entries(Path::new(path), &[(format!("{prefix}-{i}"), entry("x"))]).unwrap();
    }
}

#[test]
fn two_processes_lose_nothing() {
    let started = std::time::Instant::now();
    let dir = temp_dir();
    let path = cache_path(&dir);
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["first", "second"]
        .iter()
        .map(|prefix| {
            std::process::Command::new(&exe)
                .args([
                    "cache::tests::cache_writer_child",
                    "--exact",
                    "--test-threads=1",
                ])
                .env(WRITER_CHILD, format!("{}|{prefix}", path.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let Loaded::Ok(cache) = load(&path, LIMIT) else {
        panic!("the final file is not a valid cache")
    };
    assert_eq!(cache.servers.len(), 2 * UPDATES_PER_PROCESS);
    pi_mcp_test_support::report::record(
        "11",
        "two processes × 200 cache updates at once",
        started,
        &format!(
            "{} of 400 entries in the final file, valid JSON",
            cache.servers.len()
        ),
    );
    let _ = std::fs::remove_dir_all(dir);
}
