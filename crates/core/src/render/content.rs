//! MCP results turned into what Pi shows the model: text and image blocks. Images pass through;
//! embedded resources, links and audio become short text; `structuredContent` is added once.
//! Every text block is cleaned (`clean::text`: newlines and tabs kept, escape sequences removed,
//! other control and bidi characters shown visibly): the model reads it, and Pi's screen and
//! `pi-mcp` show it.

use pi_mcp_connection::clean;
use serde_json::Value;
use std::borrow::Cow;

/// A block of what Pi shows the model: text (cleaned) or an image.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Text(String),
    Image { data: String, mime_type: String },
}

impl Block {
    pub fn text(&self) -> Option<&str> {
        match self {
            Block::Text(text) => Some(text),
            Block::Image { .. } => None,
        }
    }

    /// An image block; its MIME type is cleaned to one line.
    pub(crate) fn image(data: &str, mime_type: &str) -> Block {
        Block::Image {
            data: data.to_string(),
            mime_type: clean::line(mime_type).into_owned(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub content: Vec<Block>,
    pub is_error: bool,
}

/// A `tools/call` result.
pub fn call_result(raw: &Value) -> Rendered {
    call_result_of(None, raw)
}

/// A `tools/call` result of `server`'s (its resource links say how to read them from it).
pub fn call_result_of(server: Option<&str>, raw: &Value) -> Rendered {
    let mut content: Vec<Block> = raw
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| block(item, server))
        .collect();
    if let Some(structured) = raw.get("structuredContent").filter(|s| !s.is_null()) {
        if !already_shown(&content, structured) {
            let json = clean::json(structured);
            let text = if content.is_empty() {
                json
            } else {
                format!("Structured content: {json}")
            };
            content.push(text_block(text));
        }
    }
    let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
    if content.is_empty() {
        content.push(text_block(if is_error {
            "The tool failed without saying why."
        } else {
            "(empty result)"
        }));
    }
    Rendered { content, is_error }
}

/// One content block of a result as Pi shows it; a resource link says how to read it (from
/// `server`, when known).
pub(crate) fn block(item: &Value, server: Option<&str>) -> Option<Block> {
    let field = |key: &str| item.get(key).and_then(Value::as_str);
    Some(match field("type")? {
        "text" => text_block(field("text").unwrap_or_default()),
        "image" => Block::image(
            field("data").unwrap_or_default(),
            field("mimeType").unwrap_or("image/png"),
        ),
        "audio" => text_block(format!(
            "[Audio: {}, {} bytes, not shown]",
            clean::line(field("mimeType").unwrap_or("unknown type")),
            base64_len(field("data").unwrap_or_default())
        )),
        "resource" => {
            let resource = item.get("resource")?;
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => text_block(format!("[Resource: {}]\n{text}", clean::line(uri))),
                None => text_block(binary_note(resource)),
            }
        }
        "resource_link" => {
            let mut text = format!(
                "[Resource link: {}]\nURI: {}",
                clean::line(field("name").unwrap_or("unnamed")),
                clean::line(field("uri").unwrap_or("?"))
            );
            if let Some(description) = field("description").filter(|d| !d.is_empty()) {
                text.push('\n');
                text.push_str(description);
            }
            text.push_str("\nRead it: ");
            text.push_str(&read_call(field("uri").unwrap_or("?"), server));
            text_block(text)
        }
        _ => text_block(clean::json(item)),
    })
}

/// The `mcp` call that reads `uri` (of `server`, where known).
fn read_call(uri: &str, server: Option<&str>) -> String {
    let uri = clean::line(uri);
    match server {
        Some(server) => format!("mcp({{ read: \"{uri}\", server: \"{server}\" }})"),
        None => format!("mcp({{ read: \"{uri}\" }})"),
    }
}

/// A read resource changed: what the user is shown, and what the model is told.
pub fn resource_updated(server: &str, uri: &str) -> (String, String) {
    let text = format!("MCP server \"{server}\" updated {}", clean::line(uri));
    let note = format!(
        "{text}, which was read earlier in this session: what was read may be out of date. Read it again for its current contents: {}",
        read_call(uri, Some(server))
    );
    (text, note)
}

fn binary_note(resource: &Value) -> String {
    let field = |key: &str| resource.get(key).and_then(Value::as_str);
    format!(
        "[Resource: {} ({}), {} bytes of binary content, not shown]",
        clean::line(field("uri").unwrap_or("?")),
        clean::line(field("mimeType").unwrap_or("unknown type")),
        base64_len(field("blob").unwrap_or_default())
    )
}

/// Decoded size of base64 text.
fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// A text block, cleaned (`clean::text`).
pub(crate) fn text_block(text: impl Into<String>) -> Block {
    let text: String = text.into();
    let cleaned = match clean::text(&text) {
        Cow::Owned(cleaned) => Some(cleaned),
        Cow::Borrowed(_) => None,
    };
    Block::Text(cleaned.unwrap_or(text))
}

/// Whether the text blocks already carry `structured`: servers are asked to repeat structured
/// results as JSON text, and SDKs wrap a plain return value as `{"result": value}`.
fn already_shown(content: &[Block], structured: &Value) -> bool {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(Block::text)
        .map(str::trim)
        .collect();
    let shown = |value: &Value| {
        texts.iter().any(|text| match value {
            Value::String(s) => s.trim() == *text,
            other => serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *other),
        })
    };
    let json_text = texts.iter().any(|t| {
        (t.starts_with('{') || t.starts_with('[')) && serde_json::from_str::<Value>(t).is_ok()
    });
    let wrapped = structured
        .as_object()
        .filter(|fields| fields.len() == 1)
        .and_then(|fields| fields.values().next());
    json_text || shown(structured) || wrapped.is_some_and(shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(r: &Rendered) -> Vec<&str> {
        r.content.iter().filter_map(Block::text).collect()
    }

    #[test]
    fn every_block_type() {
        let raw = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAECAw==", "mimeType": "application/octet-stream"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "the c file"},
            {"type": "mystery", "x": 1}
        ]});
        let r = call_result(&raw);
        assert!(!r.is_error);
        assert_eq!(
            r.content[1],
            Block::Image {
                data: "aGk=".into(),
                mime_type: "image/jpeg".into()
            }
        );
        assert_eq!(
            texts(&r),
            [
                "hello",
                "[Audio: audio/wav, 3 bytes, not shown]",
                "[Resource: file:///a.txt]\nbody",
                "[Resource: file:///b.bin (application/octet-stream), 4 bytes of binary content, not shown]",
                "[Resource link: c]\nURI: file:///c\nthe c file\nRead it: mcp({ read: \"file:///c\" })",
                r#"{"type":"mystery","x":1}"#,
            ]
        );
    }

    #[test]
    fn structured_content_once() {
        let duplicated = json!({"content": [{"type": "text", "text": "{\"sum\": 5}"}], "structuredContent": {"sum": 5}});
        assert_eq!(texts(&call_result(&duplicated)), ["{\"sum\": 5}"]);
        let wrapped = json!({"content": [{"type": "text", "text": "[1, 2]"}], "structuredContent": {"items": [1, 2]}});
        assert_eq!(texts(&call_result(&wrapped)), ["[1, 2]"]);
        let extra = json!({"content": [{"type": "text", "text": "The sum is 5"}], "structuredContent": {"sum": 5, "terms": 2}});
        assert_eq!(
            texts(&call_result(&extra)),
            [
                "The sum is 5",
                "Structured content: {\"sum\":5,\"terms\":2}"
            ]
        );
        let result = json!({"content": [{"type": "text", "text": "py echo: hi"}], "structuredContent": {"result": "py echo: hi"}});
        assert_eq!(texts(&call_result(&result)), ["py echo: hi"]);
        let number = json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}});
        assert_eq!(texts(&call_result(&number)), ["42"]);
        let alone = json!({"content": [], "structuredContent": {"sum": 5}});
        assert_eq!(texts(&call_result(&alone)), ["{\"sum\":5}"]);
    }

    #[test]
    fn errors_and_empty_results() {
        let r = call_result(
            &json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}),
        );
        assert!(r.is_error);
        assert_eq!(texts(&r), ["bad input"]);
        assert_eq!(
            texts(&call_result(&json!({"content": []}))),
            ["(empty result)"]
        );
        assert_eq!(
            texts(&call_result(&json!({"isError": true}))),
            ["The tool failed without saying why."]
        );
    }
}
