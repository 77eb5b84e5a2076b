//! Reading MCP resources for the model: URI templates filled from `args` (RFC 6570, levels 1–3),
//! what a read gives back (text as text, images as images, other binary saved to a private file
//! whose path the model gets), and which resources are MCP Apps user interfaces (`ui://`), left
//! out of what the model sees.

use crate::output_guard::save_private;
use crate::render::content::{text_block, Block};
use base64::Engine;
use pi_mcp_connection::clean;
use serde_json::{Map, Value};

/// Whether a listed resource or template is an MCP App's user interface.
pub fn is_app(item: &Value) -> bool {
    let uri = item
        .get("uri")
        .or_else(|| item.get("uriTemplate"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
    uri.starts_with("ui://")
        || mime
            .replace(' ', "")
            .to_ascii_lowercase()
            .contains("profile=mcp-app")
}

/// The variables of a URI template, in order.
pub fn template_variables(template: &str) -> Vec<String> {
    expressions(template)
        .flat_map(|(_, body)| names(operator(body).1))
        .collect()
}

/// The variable names of an expression's list (`a,b*,c:3` → a, b, c).
fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|n| n.trim_end_matches('*').split(':').next().unwrap_or(""))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// The variables a template cannot do without: those of `{var}`, `{+var}` and `{/var}` (query
/// and other forms leave out what is not given).
pub fn required_variables(template: &str) -> Vec<String> {
    expressions(template)
        .filter(|(_, body)| matches!(operator(body).0, Op::Simple | Op::Reserved | Op::Path))
        .flat_map(|(_, body)| names(operator(body).1))
        .collect()
}

/// `template` with its variables filled from `args`; the error names the required variables
/// `args` lacks.
pub fn expand(template: &str, args: &Map<String, Value>) -> Result<String, String> {
    let missing: Vec<String> = required_variables(template)
        .into_iter()
        .filter(|name| args.get(name).is_none_or(Value::is_null))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the template {template} needs {} in `args`",
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&expand_expression(&rest[start + 1..start + len], args));
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryMore,
}

fn operator(body: &str) -> (Op, &str) {
    let op = match body.chars().next() {
        Some('+') => Op::Reserved,
        Some('#') => Op::Fragment,
        Some('.') => Op::Label,
        Some('/') => Op::Path,
        Some(';') => Op::PathParam,
        Some('?') => Op::Query,
        Some('&') => Op::QueryMore,
        _ => return (Op::Simple, body),
    };
    (op, &body[1..])
}

/// The `{…}` expressions of a template: (offset, body).
fn expressions(template: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + template[at..].find('{')?;
        let end = start + template[start..].find('}')?;
        at = end + 1;
        Some((start, &template[start + 1..end]))
    })
}

fn expand_expression(body: &str, args: &Map<String, Value>) -> String {
    let (op, names) = operator(body);
    let (first, separator, named, reserved) = match op {
        Op::Simple => ("", ",", false, false),
        Op::Reserved => ("", ",", false, true),
        Op::Fragment => ("#", ",", false, true),
        Op::Label => (".", ".", false, false),
        Op::Path => ("/", "/", false, false),
        Op::PathParam => (";", ";", true, false),
        Op::Query => ("?", "&", true, false),
        Op::QueryMore => ("&", "&", true, false),
    };
    let parts: Vec<String> = names
        .split(',')
        .filter_map(|spec| {
            let name = spec.trim_end_matches('*');
            let (name, limit) = match name.split_once(':') {
                Some((n, l)) => (n, l.parse::<usize>().ok()),
                None => (name, None),
            };
            let clip = |v: String| -> String {
                match limit {
                    Some(n) => v.chars().take(n).collect(),
                    None => v,
                }
            };
            let value = match args.get(name)? {
                Value::Null => return None,
                Value::Array(items) => items
                    .iter()
                    .map(|item| encode(&clip(scalar(item)), reserved))
                    .collect::<Vec<_>>()
                    .join(","),
                other => encode(&clip(scalar(other)), reserved),
            };
            Some(match named {
                true if value.is_empty() && op == Op::PathParam => name.to_string(),
                true => format!("{name}={value}"),
                false => value,
            })
        })
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!("{first}{}", parts.join(separator)),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Percent-encodes all but unreserved characters (and, for `+`/`#`, the reserved ones too).
fn encode(value: &str, keep_reserved: bool) -> String {
    const RESERVED: &str = ":/?#[]@!$&'()*+,;=%";
    let mut out = String::new();
    for c in value.chars() {
        let unreserved = c.is_ascii_alphanumeric() || "-._~".contains(c);
        if unreserved || (keep_reserved && RESERVED.contains(c)) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// A `resources/read` result for the model: text as text, images as images, other binary saved
/// to a private file (0600) that the text names.
pub fn read_result(raw: &Value) -> Vec<Block> {
    let contents: Vec<&Value> = raw
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let several = contents.len() > 1;
    let mut blocks = Vec::new();
    for item in contents {
        let uri = item.get("uri").and_then(Value::as_str).unwrap_or("?");
        let mime = item.get("mimeType").and_then(Value::as_str);
        if let Some(text) = item.get("text").and_then(Value::as_str) {
            blocks.push(match several {
                true => text_block(format!("[Resource: {}]\n{text}", clean::line(uri))),
                false => text_block(text),
            });
        } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
            match mime.filter(|m| m.starts_with("image/")) {
                Some(image) => {
                    if several {
                        blocks.push(text_block(format!("[Resource: {}]", clean::line(uri))));
                    }
                    blocks.push(Block::image(blob, image));
                }
                None => blocks.push(text_block(saved(uri, mime, blob))),
            }
        }
    }
    if blocks.is_empty() {
        blocks.push(text_block("(empty resource)"));
    }
    blocks
}

/// Saves a binary resource and says where: named after the end of its URI, with the extension
/// there if it is a plain one, else one for its MIME type.
fn saved(uri: &str, mime: Option<&str>, blob: &str) -> String {
    let kind = clean::line(mime.unwrap_or("unknown type"));
    let shown_uri = clean::line(uri);
    let bytes = match base64::engine::general_purpose::STANDARD.decode(blob.trim()) {
        Ok(bytes) => bytes,
        Err(e) => {
            return format!(
                "[Resource: {shown_uri} ({kind}): its content is not valid base64 ({e})]"
            )
        }
    };
    let name = uri
        .rsplit(['/', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or("resource");
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, ext)) if plain_extension(ext) => (stem, ext.to_string()),
        _ => (name, extension_of(mime)),
    };
    match save_private(stem, &extension, &bytes) {
        Ok(path) => format!(
            "[Resource: {shown_uri} ({kind}), {} bytes of binary content saved to {}]",
            bytes.len(),
            path.display()
        ),
        Err(e) => format!(
            "[Resource: {shown_uri} ({kind}), {} bytes of binary content, not saved: {e}]",
            bytes.len()
        ),
    }
}

fn extension_of(mime: Option<&str>) -> String {
    let sub = mime
        .and_then(|m| m.split(';').next())
        .and_then(|m| m.split('/').nth(1))
        .unwrap_or("bin");
    match sub {
        "octet-stream" => "bin".into(),
        "gzip" | "x-gzip" => "gz".into(),
        "plain" => "txt".into(),
        other if plain_extension(other) => other.to_string(),
        _ => "bin".into(),
    }
}

/// 1 to 8 ASCII letters and digits.
fn plain_extension(ext: &str) -> bool {
    (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests;
