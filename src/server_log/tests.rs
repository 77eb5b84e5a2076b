use super::*;
use serde_json::json;
use std::collections::HashSet;
use std::process::Command;
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pi-mcp-log-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn time_stamps_match_javascript() {
    assert_eq!(iso_time(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    // new Date(1763893234567).toISOString()
    let at = UNIX_EPOCH + Duration::from_millis(1_763_893_234_567);
    assert_eq!(iso_time(at), "2025-11-23T10:20:34.567Z");
    // A leap day.
    let at = UNIX_EPOCH + Duration::from_millis(951_782_400_000);
    assert_eq!(iso_time(at), "2000-02-29T00:00:00.000Z");
}

#[test]
fn lines_have_pi_15s_format() {
    let at = UNIX_EPOCH + Duration::from_millis(1_763_893_234_567);
    let message = LogMessage::from_params(&json!({
        "level": "warning", "logger": "db", "data": "slow query\nover 2 s"
    }));
    assert_eq!(
        message.line("memory", at),
        "2025-11-23T10:20:34.567Z [memory] warning db: slow query\n    over 2 s\n"
    );
    let message = LogMessage::from_params(&json!({ "level": "nonsense", "data": { "n": 1 } }));
    assert_eq!(
        message.line("ev", at),
        "2025-11-23T10:20:34.567Z [ev] info {\"n\":1}\n"
    );
}

#[test]
fn a_servers_escape_sequences_never_reach_the_file() {
    let at = UNIX_EPOCH + Duration::from_millis(1_763_893_234_567);
    let message = LogMessage::from_params(&json!({
        "level": "error", "logger": "d\x1b[2Jb\n", "data": "\x1b]0;pwned\x07bad\u{202e}\r\ndone\u{9b}"
    }));
    assert_eq!(
        message.line("h", at),
        "2025-11-23T10:20:34.567Z [h] error db\\n: bad\\u{202e}\n    done\\x9b\n"
    );
    let structured = LogMessage::from_params(&json!({ "data": { "said": "\u{202e}\x1b" } }));
    assert_eq!(
        structured.line("h", at),
        "2025-11-23T10:20:34.567Z [h] info {\"said\":\"\\u202e\\u001b\"}\n"
    );
}

#[test]
fn levels_are_ordered_by_severity() {
    assert!(LogLevel::Debug < LogLevel::Info);
    assert!(LogLevel::Warning < LogLevel::Error);
    assert_eq!(LogLevel::parse("critical"), Some(LogLevel::Critical));
    assert_eq!(LogLevel::parse("loud"), None);
}

#[cfg(unix)]
#[test]
fn the_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("private");
    let log = ServerLog::new(dir.join("mcp.log"));
    log.append("s", &LogMessage::from_params(&json!({ "data": "hi" })))
        .unwrap();
    let mode = fs::metadata(log.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_file_is_rotated_once() {
    let dir = temp_dir("rotate");
    let log = ServerLog::new(dir.join("mcp.log"));
    fs::create_dir_all(&dir).unwrap();
    fs::write(log.path(), vec![b'x'; ROTATE_BYTES as usize - 10]).unwrap();
    log.append_line("a line that does not fit any more\n")
        .unwrap();
    log.append_line("next\n").unwrap();
    assert_eq!(
        fs::read_to_string(log.path()).unwrap(),
        "a line that does not fit any more\nnext\n"
    );
    assert_eq!(
        fs::metadata(dir.join("mcp.log.1")).unwrap().len(),
        ROTATE_BYTES - 10
    );
    fs::remove_dir_all(&dir).unwrap();
}

const CHILD_PATH: &str = "PI_MCP_LOG_TEST_PATH";
const CHILD_ID: &str = "PI_MCP_LOG_TEST_WRITER";
const LINES_PER_WRITER: usize = 4000;

/// Run by `two_processes_lose_no_line` in child processes; does nothing otherwise.
#[test]
fn writer_child() {
    let (Ok(path), Ok(id)) = (std::env::var(CHILD_PATH), std::env::var(CHILD_ID)) else {
        return;
    };
    let log = ServerLog::new(PathBuf::from(path));
    let padding = "p".repeat(900);
    for n in 0..LINES_PER_WRITER {
        let message = LogMessage::from_params(&json!({ "data": format!("{id}-{n} {padding}") }));
        log.append(&id, &message).unwrap();
    }
}

#[test]
fn two_processes_lose_no_line() {
    let dir = temp_dir("two");
    let path = dir.join("mcp.log");
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|id| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "server_log::tests::writer_child", "--quiet"])
                .env(CHILD_PATH, &path)
                .env(CHILD_ID, id)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success());
    }
    // 8,000 lines of ~960 bytes: one rotation past 5 MB, well short of a second.
    let mut seen = HashSet::new();
    for file in [dir.join("mcp.log.1"), path.clone()] {
        for line in fs::read_to_string(&file).unwrap().lines() {
            let message = line.split(" info ").nth(1).expect(line);
            let key = message.split(' ').next().unwrap().to_string();
            assert!(seen.insert(key), "a line twice: {line}");
        }
    }
    assert_eq!(seen.len(), 2 * LINES_PER_WRITER);
    assert!(fs::metadata(dir.join("mcp.log.1")).unwrap().len() <= ROTATE_BYTES);
    fs::remove_dir_all(&dir).unwrap();
}
