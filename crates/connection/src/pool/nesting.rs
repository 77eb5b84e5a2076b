//! serde_json refuses JSON nested deeper than 127 levels: its guard against a stack overflow, which
//! we keep (its `unbounded_depth` feature would lift the limit in rmcp's and reqwest's parsers too).
//! rmcp drops a message it cannot parse and goes on waiting, so a too-deep answer (a tool schema
//! nesting 62 `properties` is enough) would hang its request until the timeout. The transports
//! measure each message with a byte scan before rmcp parses it, and a too-deep one is fixed here:
//! a listing loses only its too-deep entries and names them under `_meta` (the one place of a
//! listing rmcp keeps what it does not know) as [`LEFT_OUT_FIELD`]; any other answer becomes an
//! error for its request, marked with [`TOO_DEEP_FIELD`].

use serde_json::{json, Value};
use std::borrow::Cow;
use std::ops::Range;

/// The deepest nesting serde_json parses (arrays and objects; a 128th level is refused).
pub const MAX_DEPTH: usize = 127;
/// The `data` field of our stand-in error; its value is the depth of the answer it replaces (`0`
/// when the depth is not known, only that it is too deep).
pub const TOO_DEEP_FIELD: &str = "piMcpNativeTooDeep";
/// The field we add to a pruned listing's `_meta`: one line per entry left out.
pub const LEFT_OUT_FIELD: &str = "piMcpNativeLeftOut";
/// The result fields that hold a listing's entries, and what one entry is called.
const LISTS: [(&[u8], &str); 4] = [
    (b"tools", "tool"),
    (b"resources", "resource"),
    (b"resourceTemplates", "resource template"),
    (b"prompts", "prompt"),
];

/// How deeply `bytes` nest: the most arrays and objects open at once (brackets inside strings do
/// not count). A scan of bytes, safe for any depth.
pub fn depth(bytes: &[u8]) -> usize {
    let mut walk = Walk::default();
    for &b in bytes {
        walk.step(b);
    }
    walk.max
}

/// What a message too deep to parse becomes.
#[derive(Debug, PartialEq)]
pub enum Fixed {
    /// A listing without its too-deep entries, which it names.
    Pruned(Vec<u8>),
    /// An error answer to the request, for the message that answered it.
    Refused(Vec<u8>),
    /// Not an answer to a request (a notification, a request of the server's, no usable id):
    /// there is nobody to tell.
    Dropped,
}

/// `message` (one JSON-RPC message as text, e.g. an SSE event's data) as it can be parsed: itself,
/// its fixed form, or `None` when it is to be dropped.
pub fn readable(message: &str) -> Option<Cow<'_, str>> {
    let depth = depth(message.as_bytes());
    if depth <= MAX_DEPTH {
        return Some(Cow::Borrowed(message));
    }
    match fix(message.as_bytes(), depth) {
        Fixed::Pruned(bytes) | Fixed::Refused(bytes) => {
            Some(Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()))
        }
        Fixed::Dropped => None,
    }
}

/// Fixes `message` (one JSON-RPC message, `depth` levels deep).
pub fn fix(message: &[u8], depth: usize) -> Fixed {
    let Some(top) = value_at(message, 0).and_then(|v| members(message, v.start)) else {
        return Fixed::Dropped;
    };
    let field = |name: &[u8]| top.iter().find(|(k, _)| &message[k.clone()] == name);
    let id = field(b"id")
        .and_then(|(_, v)| serde_json::from_slice::<Value>(&message[v.clone()]).ok())
        .filter(|id| id.is_number() || id.is_string());
    let Some(id) = id.filter(|_| field(b"method").is_none()) else {
        return Fixed::Dropped;
    };
    if let Some(pruned) = field(b"result").and_then(|(_, result)| prune(message, result.start)) {
        return Fixed::Pruned(pruned);
    }
    Fixed::Refused(refusal(id, Some(depth)).to_string().into_bytes())
}

/// Our error answer to request `id`, for an answer that nested `depth` levels (`None`: too many,
/// how many is not known).
pub fn refusal(id: Value, depth: Option<usize>) -> Value {
    let levels = depth.map_or_else(|| "more".to_string(), |d| d.to_string());
    let message = format!(
        "the answer nests {levels} levels of JSON, deeper than the {MAX_DEPTH} that can be read \
         (it was dropped)"
    );
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32603, "message": message, "data": { TOO_DEEP_FIELD: depth.unwrap_or(0) } },
    })
}

/// `message` with the too-deep entries of the listing whose result object opens at `result`
/// removed, or `None` when that is not enough to make it readable.
fn prune(message: &[u8], result: usize) -> Option<Vec<u8>> {
    // Entries sit under the message, the result and the list: their own depth counts from 3.
    let base = 3;
    let mut left_out = Vec::new();
    let mut lists = Vec::new();
    let mut meta = None;
    for (key, value) in members(message, result)? {
        let (key, opens) = (&message[key], message[value.start]);
        if key == b"_meta" && opens == b'{' {
            meta = Some(value.clone());
        }
        let Some((_, what)) = LISTS.iter().find(|(name, _)| *name == key) else {
            continue;
        };
        if opens != b'[' {
            continue;
        }
        let mut kept = Vec::new();
        for entry in elements(message, value.start)? {
            let entry_depth = base + depth(&message[entry.clone()]);
            if entry_depth > MAX_DEPTH {
                left_out.push(format!(
                    "{what} {}: its definition nests {entry_depth} levels of JSON, deeper than the {MAX_DEPTH} that can be read",
                    entry_name(message, &entry)
                ));
            } else {
                kept.push(entry);
            }
        }
        lists.push((value, kept));
    }
    if left_out.is_empty() {
        return None;
    }
    // Our field goes first into `_meta` (made if there is none), so it needs no comma search.
    let field = format!("\"{LEFT_OUT_FIELD}\":{}", json!(left_out));
    let (at, insert) = match meta {
        Some(meta) if members(message, meta.start).is_some_and(|m| m.is_empty()) => {
            (meta.start, field)
        }
        Some(meta) => (meta.start, format!("{field},")),
        None => (result, format!("\"_meta\":{{{field}}},")),
    };
    let mut edits: Vec<(Range<usize>, Vec<u8>)> = vec![(at + 1..at + 1, insert.into_bytes())];
    for (list, kept) in lists {
        let mut array = vec![b'['];
        for (i, entry) in kept.into_iter().enumerate() {
            if i > 0 {
                array.push(b',');
            }
            array.extend_from_slice(&message[entry]);
        }
        array.push(b']');
        edits.push((list, array));
    }
    edits.sort_by_key(|(span, _)| span.start);
    let mut out = Vec::with_capacity(message.len());
    let mut from = 0;
    for (span, bytes) in edits {
        out.extend_from_slice(&message[from..span.start]);
        out.extend_from_slice(&bytes);
        from = span.end;
    }
    out.extend_from_slice(&message[from..]);
    // Checked as rmcp will read it (depth included), in case the message was not well-formed.
    serde_json::from_slice::<serde::de::IgnoredAny>(&out)
        .is_ok()
        .then_some(out)
}

/// `"name"` (quoted), or the URI, of a listing entry; else where it was.
fn entry_name(message: &[u8], entry: &Range<usize>) -> String {
    let fields = members(message, entry.start).unwrap_or_default();
    ["name", "uri", "uriTemplate"]
        .iter()
        .find_map(|wanted| {
            let (_, value) = fields
                .iter()
                .find(|(k, _)| &message[k.clone()] == wanted.as_bytes())?;
            serde_json::from_slice::<String>(&message[value.clone()]).ok()
        })
        .map_or_else(|| "without a name".to_string(), |name| format!("{name:?}"))
}

/// Brackets and strings, followed byte by byte.
#[derive(Default)]
struct Walk {
    depth: usize,
    max: usize,
    in_string: bool,
    escaped: bool,
}

impl Walk {
    fn step(&mut self, b: u8) {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                self.max = self.max.max(self.depth);
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// The span of the JSON value that starts at or after `at` (after white space).
fn value_at(bytes: &[u8], at: usize) -> Option<Range<usize>> {
    let start = skip_space(bytes, at);
    let mut walk = Walk::default();
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        let scalar_end = walk.depth == 0
            && !walk.in_string
            && i > start
            && (matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace());
        if scalar_end {
            return Some(start..i);
        }
        walk.step(b);
        let closed = walk.depth == 0 && !walk.in_string;
        if closed && (matches!(b, b'}' | b']') || (b == b'"' && i > start)) {
            return Some(start..i + 1);
        }
    }
    (start < bytes.len() && walk.depth == 0 && !walk.in_string).then_some(start..bytes.len())
}

/// The members of the object that opens at `open`: (key without its quotes, value) spans.
fn members(bytes: &[u8], open: usize) -> Option<Vec<(Range<usize>, Range<usize>)>> {
    (bytes.get(open) == Some(&b'{')).then_some(())?;
    entries(bytes, open)?
        .into_iter()
        .map(|(key, value)| Some((key?, value)))
        .collect()
}

/// The elements of the array that opens at `open`.
fn elements(bytes: &[u8], open: usize) -> Option<Vec<Range<usize>>> {
    (bytes.get(open) == Some(&b'[')).then_some(())?;
    Some(entries(bytes, open)?.into_iter().map(|(_, v)| v).collect())
}

/// One entry of an object or array: the span of an object member's key (without its quotes), and
/// of the value.
type Entry = (Option<Range<usize>>, Range<usize>);

/// The entries of the object or array that opens at `open`.
fn entries(bytes: &[u8], open: usize) -> Option<Vec<Entry>> {
    let close = match bytes.get(open)? {
        b'{' => b'}',
        b'[' => b']',
        _ => return None,
    };
    let mut out = Vec::new();
    let mut at = skip_space(bytes, open + 1);
    if bytes.get(at) == Some(&close) {
        return Some(out);
    }
    loop {
        let mut key = None;
        if close == b'}' {
            let quoted = value_at(bytes, at).filter(|k| bytes[k.start] == b'"')?;
            at = skip_space(bytes, quoted.end);
            (bytes.get(at) == Some(&b':')).then_some(())?;
            at += 1;
            key = Some(quoted.start + 1..quoted.end - 1);
        }
        let value = value_at(bytes, at)?;
        at = skip_space(bytes, value.end);
        out.push((key, value));
        match *bytes.get(at)? {
            b',' => at += 1,
            c if c == close => return Some(out),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests;
