//! The metadata cache `<agentDir>/mcp-cache.json`, shared with pi-mcp-adapter: the tools,
//! resources, prompts and instructions of each server, so that search, list and describe work
//! without starting servers.

mod file;
mod hash;

pub use file::write_entries;
pub use hash::{config_hash, stable_hash};

use pi_mcp_connection::bounded_read;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const VERSION: u64 = 1;
/// Entries older than this are stale.
const MAX_AGE_MS: f64 = 7.0 * 24.0 * 3600.0 * 1000.0;

pub fn cache_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("mcp-cache.json")
}

/// One server's cached metadata. MCP names, never prefixed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheEntry {
    pub config_hash: String,
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    /// Resource templates: our field (`resourceTemplates`); pi-mcp-adapter ignores it.
    pub templates: Vec<Value>,
    pub prompts: Option<Vec<Value>>,
    pub instructions: Option<String>,
    /// Entries the server listed that could not be read, one line each (our field `leftOut`;
    /// pi-mcp-adapter ignores it).
    pub left_out: Vec<String>,
    /// Epoch milliseconds; `NaN` when the file had no usable value.
    pub cached_at: f64,
    pub ttl_ms: Option<f64>,
    /// The transport a remote server answered on (`streamable-http` or `sse`), so a new session
    /// skips the probe. Our field; pi-mcp-adapter ignores it.
    pub transport: Option<String>,
}

impl CacheEntry {
    /// Usable for a server whose config hashes to `hash`, at time `now_ms`.
    pub fn is_valid(&self, hash: &str, now_ms: f64) -> bool {
        let max_age = self.ttl_ms.map_or(MAX_AGE_MS, |ttl| ttl.min(MAX_AGE_MS));
        self.config_hash == hash && self.cached_at.is_finite() && now_ms - self.cached_at < max_age
    }

    /// Takes the entry's lists out of `value` (a 10,000-tool cache is megabytes of JSON: moved,
    /// never copied).
    fn from_json(mut value: Value) -> CacheEntry {
        let mut list = |key: &str| match value.get_mut(key).map(Value::take) {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        };
        let (tools, resources, prompts) = (list("tools"), list("resources"), list("prompts"));
        let left_out = list("leftOut")
            .into_iter()
            .flatten()
            .filter_map(|line| line.as_str().map(str::to_string))
            .collect();
        let templates = list("resourceTemplates");
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        CacheEntry {
            config_hash: text("configHash").unwrap_or_default(),
            tools: tools.unwrap_or_default(),
            resources: resources.unwrap_or_default(),
            templates: templates.unwrap_or_default(),
            prompts,
            instructions: text("instructions"),
            left_out,
            cached_at: value
                .get("cachedAt")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN),
            ttl_ms: value.get("ttlMs").and_then(Value::as_f64),
            transport: text("transport"),
        }
    }

    /// Writes this entry's fields over `target`, keeping fields other tools put there.
    fn write_into(&self, target: &mut Map<String, Value>) {
        target.insert("configHash".into(), json!(self.config_hash));
        target.insert("tools".into(), json!(self.tools));
        target.insert("resources".into(), json!(self.resources));
        target.insert("cachedAt".into(), json!(self.cached_at as u64));
        let optional = [
            ("prompts", self.prompts.as_ref().map(|p| json!(p))),
            (
                "resourceTemplates",
                (!self.templates.is_empty()).then(|| json!(self.templates)),
            ),
            ("instructions", self.instructions.as_ref().map(|i| json!(i))),
            ("ttlMs", self.ttl_ms.map(|t| json!(t))),
            ("transport", self.transport.as_ref().map(|t| json!(t))),
            (
                "leftOut",
                Some(json!(self.left_out)).filter(|_| !self.left_out.is_empty()),
            ),
        ];
        for (key, value) in optional {
            match value {
                Some(v) => target.insert(key.into(), v),
                None => target.remove(key),
            };
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cache {
    pub servers: HashMap<String, CacheEntry>,
}

#[derive(Debug, PartialEq)]
pub enum Loaded {
    Missing,
    Ok(Cache),
    /// The file exists but cannot be used; it is replaced at the next write.
    Unusable {
        warning: String,
    },
}

/// Reads the cache file, at most `limit` bytes (fast: one read and one parse).
pub fn load(path: &Path, limit: u64) -> Loaded {
    let text = match bounded_read::found(path, limit) {
        Ok(text) => text,
        Err(e) if e.is_missing() => return Loaded::Missing,
        Err(e) => return unusable(path, &e.to_string()),
    };
    let root: Value = match serde_json::from_slice(&text) {
        Ok(root) => root,
        Err(e) => return unusable(path, &format!("is not valid JSON ({e})")),
    };
    match parse(root) {
        Ok(cache) => Loaded::Ok(cache),
        Err(why) => unusable(path, &why),
    }
}

fn unusable(path: &Path, why: &str) -> Loaded {
    Loaded::Unusable {
        warning: format!(
            "metadata cache {} {why}; it is ignored and will be rewritten",
            path.display()
        ),
    }
}

fn parse(mut root: Value) -> Result<Cache, String> {
    match root.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "has version {v}, this version reads version {VERSION}"
            ))
        }
        None => return Err("has no `version`".into()),
    }
    let Some(Value::Object(servers)) = root.get_mut("servers").map(Value::take) else {
        return Err("has no `servers` object".into());
    };
    Ok(Cache {
        servers: servers
            .into_iter()
            .filter(|(_, entry)| entry.is_object())
            .map(|(name, entry)| (name, CacheEntry::from_json(entry)))
            .collect(),
    })
}

#[cfg(test)]
mod tests;
