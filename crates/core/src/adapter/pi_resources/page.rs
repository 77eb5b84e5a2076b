//! Pages of Pi's resource listings: at most [`PAGE_SIZE`] entries and a byte budget each, so a
//! page is always whole JSON within the output guard, and an opaque cursor to the next one.
//! Entries run server by server (servers by name, each in its own order); a cursor says where
//! the next page starts (which listing, of which server filter, at which server's entry), so a
//! listing that changes between pages loses or repeats entries of that server only.

use super::listed;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use pi_mcp_connection::clean::clip;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Entries in one page at most.
pub const PAGE_SIZE: usize = 100;
/// The longest description an entry keeps, in characters (clipped with `…`).
pub const MAX_DESCRIPTION: usize = 1000;
/// The most an entry weighs once its description is clipped: a larger one keeps only its
/// server, URI (or URI template) and name, and one still larger is left out and counted.
pub const MAX_ENTRY_BYTES: usize = 8 * 1024;

/// Where a page starts: entry `index` of `server`'s listing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub server: String,
    pub index: usize,
}

/// What a cursor says: the tool, its `server` filter, and where the next page starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    pub tool: String,
    pub server: Option<String>,
    pub at: Position,
}

impl Cursor {
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default())
    }

    /// `None`: not a cursor this module wrote.
    pub fn decode(text: &str) -> Option<Cursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// One page of a listing.
#[derive(Debug, PartialEq)]
pub struct Page {
    pub entries: Vec<Value>,
    /// Where the next page starts; `None` on the last.
    pub next: Option<Position>,
    /// Entries too large to give even without their details, on this page's stretch.
    pub omitted: usize,
    /// Where this page's first entry is among all (0-based), and how many there are.
    pub first: usize,
    pub total: usize,
}

/// The page of `listing` (each server's items as it listed them, servers in order) that starts
/// at `from` (the start when `None`), within `budget` bytes of JSON (entries and their commas).
/// Only the page's items become entries ([`listed`]).
pub fn page(listing: &[(String, Vec<&Value>)], from: Option<&Position>, budget: usize) -> Page {
    let total = listing.iter().map(|(_, items)| items.len()).sum();
    // Entries before the start: those of servers before the cursor's, and its first `index`.
    let first = match from {
        None => 0,
        Some(at) => listing
            .iter()
            .map(
                |(server, items)| match server.as_str().cmp(at.server.as_str()) {
                    std::cmp::Ordering::Less => items.len(),
                    std::cmp::Ordering::Equal => at.index.min(items.len()),
                    std::cmp::Ordering::Greater => 0,
                },
            )
            .sum(),
    };
    let mut page = Page {
        entries: Vec::new(),
        next: None,
        omitted: 0,
        first,
        total,
    };
    let mut used = 2; // the array's brackets
    let positions = listing.iter().flat_map(|(server, items)| {
        items
            .iter()
            .enumerate()
            .map(move |(index, item)| (server, index, item))
    });
    for (server, index, item) in positions.skip(first) {
        let here = Position {
            server: server.clone(),
            index,
        };
        if page.entries.len() == PAGE_SIZE {
            page.next = Some(here);
            break;
        }
        let Some((entry, bytes)) = fitted(&listed(server, item)) else {
            page.omitted += 1;
            continue;
        };
        if !page.entries.is_empty() && used + bytes + 1 > budget {
            page.next = Some(here);
            break;
        }
        used += bytes + 1;
        page.entries.push(entry);
    }
    page
}

/// `entry` within [`MAX_ENTRY_BYTES`] with its JSON size: its description clipped, else only its
/// server, URI and name; `None` when even those are too large.
fn fitted(entry: &Value) -> Option<(Value, usize)> {
    let (item, mut entry) = (entry, entry.clone());
    if let Some(description) = entry.get("description").and_then(Value::as_str) {
        entry["description"] = Value::String(clip(description, MAX_DESCRIPTION - 1));
    }
    let size = |v: &Value| serde_json::to_vec(v).map_or(usize::MAX, |b| b.len());
    let bytes = size(&entry);
    if bytes <= MAX_ENTRY_BYTES {
        return Some((entry, bytes));
    }
    let mut bare = serde_json::Map::new();
    for key in ["server", "uri", "uriTemplate", "name"] {
        if let Some(value) = item.get(key) {
            bare.insert(key.into(), value.clone());
        }
    }
    let bare = Value::Object(bare);
    let bytes = size(&bare);
    (bytes <= MAX_ENTRY_BYTES).then_some((bare, bytes))
}

#[cfg(test)]
mod tests;
