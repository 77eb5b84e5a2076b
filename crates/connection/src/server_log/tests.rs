use super::*;
use serde_json::json;
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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
    log.append("s", &LogMessage::from_params(&json!({ "data": "hi" })));
    log.flush(Duration::from_secs(10));
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
    for data in ["a line that does not fit any more", "next"] {
        log.append("s", &LogMessage::from_params(&json!({ "data": data })));
        log.flush(Duration::from_secs(10));
    }
    let lines = fs::read_to_string(log.path()).unwrap();
    let texts: Vec<&str> = lines
        .lines()
        .map(|l| l.split(" info ").nth(1).unwrap())
        .collect();
    assert_eq!(texts, ["a line that does not fit any more", "next"]);
    assert_eq!(
        fs::metadata(dir.join("mcp.log.1")).unwrap().len(),
        ROTATE_BYTES - 10
    );
    fs::remove_dir_all(&dir).unwrap();
}

const CHILD_PATH: &str = "PI_MCP_LOG_TEST_PATH";
const CHILD_ID: &str = "PI_MCP_LOG_TEST_WRITER";
const CHILD_LINES: &str = "PI_MCP_LOG_TEST_LINES";
const LINES_PER_WRITER: usize = 4000;

/// Run by the tests below in child processes; does nothing otherwise. Two threads each write
/// `CHILD_LINES` lines of about 1 KB, `<writer><thread>-<n>`.
#[test]
fn writer_child() {
    let (Ok(path), Ok(id)) = (std::env::var(CHILD_PATH), std::env::var(CHILD_ID)) else {
        return;
    };
    let lines = std::env::var(CHILD_LINES).map_or(LINES_PER_WRITER, |n| n.parse().unwrap());
    let log = ServerLog::new(PathBuf::from(path));
    std::thread::scope(|scope| {
        for thread in 0..2 {
            let (log, id) = (&log, format!("{id}{thread}"));
            scope.spawn(move || {
                let padding = "p".repeat(900);
                for n in 0..lines / 2 {
                    let data = format!("{id}-{n:06} {padding}");
                    log.append(&id, &LogMessage::from_params(&json!({ "data": data })));
                    if n % 500 == 499 {
                        // Within the queue's bound (see `a_flood_past_the_queue_is_counted`).
                        log.flush(Duration::from_secs(20));
                    }
                }
            });
        }
    });
    log.flush(Duration::from_secs(20));
}

/// Runs one writer child per id, writing `lines` lines each, and waits for them.
fn write_from_processes(path: &Path, ids: &[&str], lines: usize) {
    let writers: Vec<_> = ids
        .iter()
        .map(|id| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "server_log::tests::writer_child", "--quiet"])
                .env(CHILD_PATH, path)
                .env(CHILD_ID, id)
                .env(CHILD_LINES, lines.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success());
    }
}

/// The lines of `files` (oldest first), once they hold at least `count`.
fn wait_for_lines(files: &[PathBuf], count: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let lines: Vec<String> = files
            .iter()
            .flat_map(|file| {
                fs::read_to_string(file)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        if lines.len() >= count {
            return lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {count} lines written",
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A line's time stamp and its `<writer>-<n>` key.
fn stamp_and_key(line: &str) -> (&str, &str) {
    let message = line.split(" info ").nth(1).expect(line);
    (&line[..24], message.split(' ').next().unwrap())
}

/// How many lines have an earlier time stamp than the line before them.
fn stamps_going_back(lines: &[String]) -> usize {
    let stamps: Vec<&str> = lines.iter().map(|l| stamp_and_key(l).0).collect();
    stamps.windows(2).filter(|w| w[0] > w[1]).count()
}

#[test]
fn two_processes_lose_no_line() {
    let dir = temp_dir("two");
    let path = dir.join("mcp.log");
    write_from_processes(&path, &["a", "b"], LINES_PER_WRITER);
    // 8,000 lines of ~960 bytes: one rotation past 5 MB, well short of a second.
    let mut seen = HashSet::new();
    let lines = wait_for_lines(&[dir.join("mcp.log.1"), path.clone()], 2 * LINES_PER_WRITER);
    for line in &lines {
        assert!(seen.insert(stamp_and_key(line).1), "a line twice: {line}");
    }
    assert_eq!(seen.len(), 2 * LINES_PER_WRITER);
    assert!(fs::metadata(dir.join("mcp.log.1")).unwrap().len() <= ROTATE_BYTES);
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 26, item 13: eight threads of one process append at once; the file has each thread's
/// lines in the order it appended them, and its time stamps never go back.
#[test]
fn threads_of_one_process_write_in_order() {
    let started = Instant::now();
    let dir = temp_dir("threads");
    let log = ServerLog::new(dir.join("mcp.log"));
    let (threads, per_thread) = (8, 1500);
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let log = &log;
            scope.spawn(move || {
                for n in 0..per_thread {
                    let message =
                        LogMessage::from_params(&json!({ "data": format!("t{thread}-{n:06}") }));
                    log.append("s", &message);
                }
            });
        }
    });
    let lines = wait_for_lines(&[log.path().to_path_buf()], threads * per_thread);
    assert_eq!(lines.len(), threads * per_thread);
    for thread in 0..threads {
        let prefix = format!("t{thread}-");
        let mine: Vec<&str> = lines
            .iter()
            .map(|l| stamp_and_key(l).1)
            .filter(|k| k.starts_with(&prefix))
            .collect();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "thread {thread}'s lines out of order"
        );
    }
    let back = stamps_going_back(&lines);
    assert_eq!(
        back, 0,
        "{back} lines stamped earlier than the line before them"
    );
    pi_mcp_test_support::report::record(
        "F13",
        "eight threads of one process append 12,000 lines at once",
        started,
        "every thread's lines in its order; time stamps never go back",
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 26, item 13: two processes of two threads each write 17 MB, three rotations past 5 MB;
/// what is kept (`mcp.log.1`, then `mcp.log`) is the newest: time stamps never go back across
/// both files, and each writer's kept lines are its last ones, none missing among them.
#[test]
fn two_processes_rotating_keep_the_newest_lines() {
    let started = Instant::now();
    let dir = temp_dir("newest");
    let path = dir.join("mcp.log");
    let lines_per_writer = 9000;
    write_from_processes(&path, &["a", "b"], lines_per_writer);
    let kept = wait_for_lines(&[dir.join("mcp.log.1"), path.clone()], 1);
    let back = stamps_going_back(&kept);
    assert_eq!(
        back, 0,
        "{back} kept lines stamped earlier than the line before them"
    );
    let mut by_writer: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for line in &kept {
        let (writer, n) = stamp_and_key(line).1.split_once('-').unwrap();
        by_writer
            .entry(writer)
            .or_default()
            .push(n.parse().unwrap());
    }
    // A writer that finished early may have had all its lines rotated away: they were older.
    assert!(!by_writer.is_empty());
    for (writer, kept) in &by_writer {
        let last = lines_per_writer / 2 - 1;
        let first = kept[0];
        assert_eq!(
            kept,
            &(first..=last).collect::<Vec<_>>(),
            "{writer} kept {first}..={last} with gaps or out of order"
        );
    }
    for file in [dir.join("mcp.log.1"), path.clone()] {
        assert!(fs::metadata(&file).unwrap().len() <= ROTATE_BYTES);
    }
    pi_mcp_test_support::report::record(
        "F13",
        "two processes of two threads write 17 MB to one mcp.log, three rotations",
        started,
        &format!(
            "{} lines kept, the newest of each writer, none out of order",
            kept.len()
        ),
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// While another process holds the file's lock, 6 MB are appended: the queue keeps 5 MB, and
/// the file says how many messages were left out.
#[test]
fn a_flood_past_the_queue_is_counted() {
    let dir = temp_dir("flood");
    let log = ServerLog::new(dir.join("mcp.log"));
    fs::create_dir_all(&dir).unwrap();
    let held = atomic_file::open_private(&sibling(log.path(), ".lock")).unwrap();
    held.lock().unwrap();
    let padding = "p".repeat(1000);
    for n in 0..6000 {
        log.append(
            "s",
            &LogMessage::from_params(&json!({ "data": format!("{n} {padding}") })),
        );
    }
    drop(held);
    log.flush(Duration::from_secs(20));
    let lines = wait_for_lines(&[dir.join("mcp.log.1"), log.path().to_path_buf()], 1);
    let note = lines.last().unwrap();
    let left_out = 6000 - (lines.len() - 1);
    assert!(
        note.ends_with(&format!("[pi-mcp-native] warning {left_out} log messages were left out: servers sent them faster than this file could be written")),
        "{note}"
    );
    // The writer took what was queued before it waited for the lock: up to twice the bound fit.
    assert!(left_out > 0 && lines.len() > 4900, "{left_out} left out");
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 26, item 14: `mcp.log` planted as a link to a file outside, its lock file as a link to
/// a file that does not exist, `mcp.log` as a FIFO and as a directory, `mcp.log.1` as a link:
/// nothing is written or created through them, nothing waits, and the log says why.
#[cfg(unix)]
#[test]
fn a_planted_link_or_other_file_is_never_written_through() {
    use std::os::unix::fs::symlink;
    let started = Instant::now();
    let dir = temp_dir("planted");
    let agent = dir.join("agent");
    fs::create_dir_all(&agent).unwrap();
    let outside = dir.join("outside.txt");
    fs::write(&outside, "kept as it was\n").unwrap();
    let log = ServerLog::new(agent.join("mcp.log"));
    let lock = sibling(log.path(), ".lock");
    let write = |data: &str| {
        log.append("s", &LogMessage::from_params(&json!({ "data": data })));
        log.flush(Duration::from_secs(10));
        log.trouble().unwrap_or_default()
    };

    symlink(&outside, log.path()).unwrap();
    let seen = log.check().unwrap_or_default();
    assert!(
        seen.contains("mcp.log is a symbolic link"),
        "doctor's warning: {seen}"
    );
    let why = write("through the link");
    assert!(
        why.contains(&format!("{} is a symbolic link", log.path().display())),
        "{why}"
    );
    assert!(why.contains("remove it"), "{why}");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "kept as it was\n");

    fs::remove_file(log.path()).unwrap();
    fs::remove_file(&lock).unwrap();
    let created = dir.join("created-by-the-lock");
    symlink(&created, &lock).unwrap();
    let why = write("through the lock");
    assert!(why.contains("mcp.log.lock is a symbolic link"), "{why}");
    assert!(!created.exists(), "no file created through the lock's link");
    assert!(!log.path().exists());

    fs::remove_file(&lock).unwrap();
    let fifo = std::ffi::CString::new(log.path().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let at = Instant::now();
    let why = write("into the FIFO");
    assert!(
        why.contains("mcp.log is a FIFO (named pipe), not a regular file"),
        "{why}"
    );
    assert!(
        at.elapsed() < Duration::from_secs(5),
        "no wait for a reader"
    );

    fs::remove_file(log.path()).unwrap();
    fs::create_dir(log.path()).unwrap();
    let why = write("into the directory");
    assert!(why.contains("mcp.log is a directory"), "{why}");

    // A link planted where the rotation moves the file is replaced, not followed.
    fs::remove_dir(log.path()).unwrap();
    symlink(&outside, sibling(log.path(), ".1")).unwrap();
    fs::write(log.path(), vec![b'x'; ROTATE_BYTES as usize]).unwrap();
    assert_eq!(write("rotated"), "", "written");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "kept as it was\n");
    assert!(!fs::symlink_metadata(sibling(log.path(), ".1"))
        .unwrap()
        .is_symlink());
    pi_mcp_test_support::report::record(
        "F14",
        "mcp.log planted as a link to a file outside, its lock as a link, mcp.log as a FIFO and a directory, mcp.log.1 as a link",
        started,
        "the outside file unchanged, nothing created through the lock's link, no wait on the FIFO; each refusal names the file and says to remove it",
    );
    fs::remove_dir_all(&dir).unwrap();
}
