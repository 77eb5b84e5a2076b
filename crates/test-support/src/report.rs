//! Rows of the reliability matrix that Rust tests check, written as JSON files into
//! `target/reliability/` beside the node:test rows; `scripts/reliability-report.mjs` renders
//! them all into `docs/reliability.md`.

use std::time::Instant;

/// Records that matrix `row` (`case`) passed, with the time since `started` and its figures.
pub fn record(row: &str, case: &str, started: Instant, figures: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target")
        .join("reliability");
    let slug: String = case
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let row_json = serde_json::json!({
        "row": row,
        "case": case,
        "result": "pass",
        "ms": started.elapsed().as_millis() as u64,
        "figures": figures,
        "suite": "cargo test --lib",
    });
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::write(
            dir.join(format!("rust-{row}-{slug}.json")),
            row_json.to_string(),
        )
    });
    if let Err(e) = written {
        eprintln!("could not record matrix row {row}: {e}");
    }
}
