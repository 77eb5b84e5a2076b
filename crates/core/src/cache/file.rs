//! Updating the cache file when several Pi processes may write it at once: an advisory lock
//! around read-merge-write, and a rename so readers never see half a file.

use super::{CacheEntry, VERSION};
use pi_mcp_connection::atomic_file::{self, sibling};
use pi_mcp_connection::bounded_read::{self, FileLimits};
use serde_json::{json, Map, Value};
use std::io;
use std::path::Path;

/// Stores `entries` (by server name) in the cache file, keeping every other server and every
/// field this version does not know.
pub fn write_entries(path: &Path, entries: &[(String, CacheEntry)]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        atomic_file::create_private_dir(dir)?;
    }
    let lock = atomic_file::open_lock(&sibling(path, ".lock"))?;
    lock.lock()?; // released when `lock` is dropped
    let mut root = current_root(path);
    let servers = root.entry("servers").or_insert_with(|| json!({}));
    if !servers.is_object() {
        *servers = json!({});
    }
    if let Value::Object(servers) = servers {
        for (name, entry) in entries {
            let slot = servers.entry(name.clone()).or_insert_with(|| json!({}));
            if !slot.is_object() {
                *slot = json!({});
            }
            if let Value::Object(slot) = slot {
                entry.write_into(slot);
            }
        }
    }
    root.insert("version".into(), json!(VERSION));
    atomic_file::write(path, &serde_json::to_vec(&Value::Object(root))?)
}

/// The file's root object to merge into. A corrupt (or oversize, or not regular) file starts
/// over; a file of another version is first kept as `<file>.bak-<epoch ms>`.
fn current_root(path: &Path) -> Map<String, Value> {
    let Ok(bytes) = bounded_read::found(path, FileLimits::default().cache_bytes) else {
        return Map::new();
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(root)) if root.get("version").and_then(Value::as_u64) == Some(VERSION) => {
            root
        }
        Ok(Value::Object(root)) if root.contains_key("version") => {
            let millis = pi_mcp_connection::unix_time::now_ms();
            let _ = atomic_file::write(&sibling(path, &format!(".bak-{millis}")), &bytes);
            Map::new()
        }
        _ => Map::new(),
    }
}
