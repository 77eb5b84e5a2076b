//! Keeps huge tool results out of the model's context: text past the limits is cut to a head
//! preview, and the whole text is saved to a private file the model can read in pieces. Images
//! pass through untouched and do not count.

use crate::render::content::Block;
use pi_mcp_connection::clean::file_part;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_lines: usize,
}

/// The limits Pi's own tools use: 50 KB or 2,000 lines.
pub const DEFAULT_LIMITS: Limits = Limits {
    max_bytes: 50 * 1024,
    max_lines: 2000,
};

/// `content` as shown to the model: unchanged when its text fits `limits`, otherwise one text
/// block with the head of the text and a note naming the file `save` wrote the whole text to.
pub fn guard(
    content: Vec<Block>,
    limits: Limits,
    save: impl FnOnce(&str) -> io::Result<PathBuf>,
) -> Vec<Block> {
    let texts: Vec<&str> = content.iter().filter_map(Block::text).collect();
    let bytes: usize = texts
        .iter()
        .map(|t| t.len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    let lines: usize = texts.iter().map(|t| line_count(t)).sum();
    if bytes <= limits.max_bytes && lines <= limits.max_lines {
        return content;
    }
    let full = texts.join("\n");
    let preview = head(&full, limits);
    let shown_lines = line_count(preview);
    let place = match save(&full) {
        Ok(path) => format!(
            "The full text is in {} — read it in parts with the read tool (offset/limit) or search it with grep.",
            path.display()
        ),
        Err(e) => format!("The full text could not be saved ({e})."),
    };
    let note = format!(
        "[Output cut: showing {shown_lines} of {lines} lines ({} of {}). {place}]",
        size(preview.len()),
        size(full.len())
    );
    let mut guarded = vec![Block::Text(format!("{preview}\n\n{note}"))];
    guarded.extend(content.into_iter().filter(|b| b.text().is_none()));
    guarded
}

/// The longest start of `text` within `limits`, ending at a line break when there is one.
fn head(text: &str, limits: Limits) -> &str {
    let mut end = text.len().min(limits.max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() && !text[end..].starts_with('\n') {
        if let Some(i) = text[..end].rfind('\n').filter(|i| *i > 0) {
            end = i;
        }
    }
    if let Some((i, _)) = text[..end].match_indices('\n').nth(limits.max_lines - 1) {
        end = i;
    }
    &text[..end]
}

fn line_count(text: &str) -> usize {
    text.lines().count().max(1)
}

fn size(bytes: usize) -> String {
    if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Saves `text` as a new file (mode 0600) in this process's private temp dir (mode 0700),
/// named after `label` (e.g. the tool) so a listing of the dir says what each file holds.
pub fn spill(label: &str, text: &str) -> io::Result<PathBuf> {
    save_private(label, "txt", text.as_bytes())
}

/// Saves `bytes` as a new private file `<label>-<n>.<extension>` in this process's private temp
/// dir; label and extension are made plain file-name parts (`clean::file_part`).
pub fn save_private(label: &str, extension: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let dir = DIR
        .get_or_init(|| private_dir(&std::env::temp_dir()).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(format!("no private temp dir: {e}")))?;
    let (label, extension) = (file_part(label, 60), file_part(extension, 8));
    let path = dir.join(format!(
        "{label}-{}.{extension}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    write_private(&path, bytes)?;
    Ok(path)
}

/// A new directory under `parent` that only this user can enter; never an existing one.
fn private_dir(parent: &Path) -> io::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    #[cfg_attr(not(unix), allow(unused_mut, reason = "only Unix sets a mode"))]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    for attempt in 0..16u32 {
        let path = parent.join(format!(
            "pi-mcp-output-{}-{:08x}",
            std::process::id(),
            nanos.wrapping_add(attempt.wrapping_mul(0x9e37_79b9))
        ));
        match builder.create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("every candidate name was taken"))
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(path)
        .and_then(|mut file| file.write_all(bytes));
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Block {
        Block::Text(t.into())
    }

    fn image() -> Block {
        Block::image(&"A".repeat(200_000), "image/png")
    }

    const SMALL: Limits = Limits {
        max_bytes: 100,
        max_lines: 5,
    };

    #[test]
    fn small_results_and_images_pass() {
        let content = vec![text("short"), image(), text("also short")];
        let never = |_: &str| -> io::Result<PathBuf> { panic!("nothing to save") };
        assert_eq!(guard(content.clone(), SMALL, never), content);
    }

    #[test]
    fn many_lines_are_cut_at_the_line_limit() {
        let long: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let mut saved = String::new();
        let out = guard(vec![image(), text(&long)], SMALL, |full| {
            saved = full.to_string();
            Ok(PathBuf::from("/tmp/x/t-1.txt"))
        });
        assert_eq!(saved, long);
        let shown = out[0].text().unwrap();
        assert!(shown.starts_with(
            "line 1\nline 2\nline 3\nline 4\nline 5\n\n[Output cut: showing 5 of 12 lines"
        ));
        assert!(
            shown.contains("/tmp/x/t-1.txt — read it in parts"),
            "{shown}"
        );
        assert_eq!(out[1], image(), "images are kept after the text");
    }

    #[test]
    fn long_text_is_cut_at_a_line_break_within_the_bytes() {
        let long = format!("{}\n{}\n{}", "a".repeat(60), "b".repeat(30), "c".repeat(40));
        let out = guard(vec![text(&long)], SMALL, |_| {
            Err(io::Error::other("disk full"))
        });
        let shown = out[0].text().unwrap();
        assert!(shown.starts_with(&format!(
            "{}\n{}\n\n[Output cut: showing 2 of 3 lines",
            "a".repeat(60),
            "b".repeat(30)
        )));
        assert!(shown.ends_with("The full text could not be saved (disk full).]"));
    }

    #[test]
    fn one_endless_line_is_cut_on_a_char_boundary() {
        let long = "é".repeat(80); // 160 bytes
        let out = guard(vec![text(&long)], SMALL, |_| Ok(PathBuf::from("f")));
        let shown = out[0].text().unwrap();
        assert!(shown.starts_with(&"é".repeat(50)));
        assert!(shown.contains("showing 1 of 1 lines (0.1 KB of 0.2 KB)"));
    }

    #[test]
    fn spilled_files_are_private() {
        let first = spill("server_tool/../x", "one").unwrap();
        let second = spill("server_tool", "two").unwrap();
        assert_eq!(first.parent(), second.parent());
        assert_eq!(fs::read_to_string(&first).unwrap(), "one");
        assert!(first
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("server_tool____x-"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&first), 0o600);
            assert_eq!(mode(first.parent().unwrap()), 0o700);
        }
    }
}
