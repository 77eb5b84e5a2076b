//! The `Mcp-Param-*` headers of a `tools/call` over Streamable HTTP (SEP-2243, 2026-07-28): each
//! argument whose input-schema property carries an `x-mcp-header` annotation goes also as a
//! header, so that proxies can route on it without reading the body (and servers refuse a call
//! without it).
//!
//! rmcp learns the annotations only from a `tools/list` it saw on the same connection, and a call
//! of a tool known from the metadata cache goes before any listing. So the call carries the tool
//! as the caller knows it ([`CalledTool`], in the request's extensions, never serialized) and its
//! headers are made from that definition, by the rules rmcp applies to a listing: a tool whose
//! annotations are invalid is not called at all (a live listing drops it).

use crate::value_kind::scalar_text;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The tool a `tools/call` calls, as the caller knows it (its definition from a listing or the
/// cache).
#[derive(Clone, Debug)]
pub struct CalledTool(pub Arc<Value>);

/// The `data` field of our refusal to send a call whose tool's annotations are invalid.
pub const INVALID_ANNOTATION_FIELD: &str = "piMcpNativeInvalidHeaderAnnotation";

const ANNOTATION: &str = "x-mcp-header";
const PARAM_PREFIX: &str = "mcp-param-";
const BASE64_OPEN: &str = "=?base64?";
const BASE64_CLOSE: &str = "?=";

/// Sets the `Mcp-Param-*` headers of `message` from the tool it carries, replacing any rmcp made
/// (they would come from an older listing, or none). Only for a `tools/call` that carries its
/// tool and on a connection where rmcp sends the standard headers (`Mcp-Method` is there: the
/// negotiated revision has SEP-2243). `Err`: the tool's annotations are invalid, and why.
pub fn mirror(
    message: &ClientJsonRpcMessage,
    headers: &mut HashMap<HeaderName, HeaderValue>,
) -> Result<(), String> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return Ok(());
    };
    let ClientRequest::CustomRequest(call) = &request.request else {
        return Ok(());
    };
    let Some(CalledTool(tool)) = call.extensions.get::<CalledTool>() else {
        return Ok(());
    };
    let standard = headers.contains_key(&HeaderName::from_static("mcp-method"));
    if call.method != "tools/call" || !standard {
        return Ok(());
    }
    let schema = tool.get("inputSchema").and_then(Value::as_object);
    let annotated = schema.map_or(Ok(vec![]), annotated).map_err(|why| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        format!(
            "`{name}` is not called: its input schema has an invalid `x-mcp-header` annotation \
             ({why}), and SEP-2243 forbids calling such a tool; nothing was sent. The server's \
             maintainers must fix the annotation"
        )
    })?;
    headers.retain(|name, _| !name.as_str().starts_with(PARAM_PREFIX));
    let arguments = call.params.as_ref().and_then(|p| p.get("arguments"));
    for (path, header) in annotated {
        let value = arguments.and_then(|args| path.iter().try_fold(args, |v, key| v.get(*key)));
        // Null, objects and arrays get no header.
        let Some(text) = value.and_then(scalar_text) else {
            continue;
        };
        let name = HeaderName::try_from(format!("{PARAM_PREFIX}{header}"));
        let value = HeaderValue::try_from(header_value(&text));
        if let (Ok(name), Ok(value)) = (name, value) {
            headers.insert(name, value);
        }
    }
    Ok(())
}

/// Every `x-mcp-header` annotation of `schema` as (property path, header name), or why they are
/// invalid: each must name a header (an HTTP token), no other whatever its case, and sit on a
/// `string`, `integer` or `boolean` property reached from the root through `properties` alone.
fn annotated(schema: &Map<String, Value>) -> Result<Vec<(Vec<&str>, &str)>, String> {
    if schema.contains_key(ANNOTATION) {
        return Err("it is on the schema root, not on a property".into());
    }
    if annotated_off_the_chain(schema, true) {
        return Err("one is elsewhere than on a property reached through `properties`".into());
    }
    let mut found = Vec::new();
    collect(schema, &mut Vec::new(), &mut found);
    let mut seen = std::collections::HashSet::new();
    let mut annotated = Vec::with_capacity(found.len());
    for (path, property) in found {
        let shown = path.join(".");
        let Some(header) = property.get(ANNOTATION).and_then(Value::as_str) else {
            return Err(format!(
                "property `{shown}`: the annotation is not a string"
            ));
        };
        if header.is_empty() || !header.chars().all(is_token_char) {
            return Err(format!(
                "property `{shown}`: `{header}` is not an HTTP header name"
            ));
        }
        if !seen.insert(header.to_ascii_lowercase()) {
            return Err(format!(
                "property `{shown}`: `{header}` names another property's header too"
            ));
        }
        let kind = property.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "property `{shown}`: only a string, integer or boolean property may have one"
            ));
        }
        annotated.push((path, header));
    }
    Ok(annotated)
}

/// The annotated properties along `properties` chains from `schema`, with their paths.
fn collect<'a>(
    schema: &'a Map<String, Value>,
    path: &mut Vec<&'a str>,
    found: &mut Vec<(Vec<&'a str>, &'a Map<String, Value>)>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let Some(property) = property.as_object() else {
            continue;
        };
        path.push(name);
        if property.contains_key(ANNOTATION) {
            found.push((path.clone(), property));
        }
        collect(property, path, found);
        path.pop();
    }
}

/// Whether an annotation is in `schema` anywhere but on a `properties` chain from the root
/// (`on_chain`: `schema` is the root or on such a chain).
fn annotated_off_the_chain(schema: &Map<String, Value>, on_chain: bool) -> bool {
    schema.iter().any(|(key, value)| match key.as_str() {
        ANNOTATION => !on_chain,
        "properties" => subschemas(value).any(|s| annotated_off_the_chain(s, on_chain)),
        // Values, not schemas.
        "default" | "const" | "enum" | "examples" => false,
        _ => nested(value).any(|s| annotated_off_the_chain(s, false)),
    })
}

/// The schemas of a name-to-schema map.
fn subschemas(map: &Value) -> impl Iterator<Item = &Map<String, Value>> {
    map.as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_object)
}

/// Every object inside `value` (a schema, an array of them, a map of them, at any depth).
fn nested(value: &Value) -> Box<dyn Iterator<Item = &Map<String, Value>> + '_> {
    match value {
        Value::Object(map) => Box::new(std::iter::once(map)),
        Value::Array(items) => Box::new(items.iter().flat_map(nested)),
        _ => Box::new(std::iter::empty()),
    }
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// `text` as a header value: as it is when it is plain visible ASCII without surrounding blanks,
/// else Base64 in `=?base64?…?=` (so is a text that looks like that form itself).
fn header_value(text: &str) -> String {
    use base64::Engine;
    let blank_edge = [text.chars().next(), text.chars().last()]
        .iter()
        .any(|c| matches!(c, Some(' ' | '\t')));
    let unsafe_char = text.chars().any(|c| !(' '..='~').contains(&c));
    let looks_wrapped = text.starts_with(BASE64_OPEN) && text.ends_with(BASE64_CLOSE);
    match blank_edge || unsafe_char || looks_wrapped {
        true => format!(
            "{BASE64_OPEN}{}{BASE64_CLOSE}",
            base64::engine::general_purpose::STANDARD.encode(text)
        ),
        false => text.to_string(),
    }
}

/// Our error answer to request `id`, whose tool's annotations are invalid (`why`).
pub fn refusal(id: Value, why: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32602, "message": why, "data": { INVALID_ANNOTATION_FIELD: true } },
    })
}

#[cfg(test)]
mod tests;
