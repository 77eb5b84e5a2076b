use super::*;
use rmcp::model::{CustomRequest, JsonRpcRequest, RequestId};
use serde_json::json;

/// A `tools/call` of `tool` (name `t`, input schema `schema`) with `arguments`.
fn call(schema: Value, arguments: Value) -> ClientJsonRpcMessage {
    let mut custom = CustomRequest::new(
        "tools/call",
        Some(json!({ "name": "t", "arguments": arguments })),
    );
    let tool = json!({ "name": "t", "inputSchema": schema });
    custom.extensions.insert(CalledTool(Arc::new(tool)));
    ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        RequestId::Number(1),
        ClientRequest::CustomRequest(custom),
    ))
}

/// The headers rmcp makes on a 2026-07-28 connection, before ours.
fn standard() -> HashMap<HeaderName, HeaderValue> {
    HashMap::from([(
        HeaderName::from_static("mcp-method"),
        HeaderValue::from_static("tools/call"),
    )])
}

fn params(headers: &HashMap<HeaderName, HeaderValue>) -> Vec<(String, String)> {
    let mut found: Vec<_> = headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with(PARAM_PREFIX))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_string()))
        .collect();
    found.sort();
    found
}

fn annotated_as(kind: &str, header: &str) -> Value {
    json!({ "type": kind, "x-mcp-header": header })
}

fn wrapped(text: &str) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("=?base64?{encoded}?=")
}

#[test]
fn annotated_arguments_become_headers_encoded_as_sep_2243_says() {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": annotated_as("string", "Region"),
            "priority": annotated_as("integer", "Priority"),
            "debug": annotated_as("boolean", "Debug"),
            "empty": annotated_as("string", "Empty"),
            "inside": annotated_as("string", "Inside"),
            "unicode": annotated_as("string", "Unicode"),
            "padded": annotated_as("string", "Padded"),
            "lines": annotated_as("string", "Lines"),
            "tab": annotated_as("string", "Tab"),
            "lookalike": annotated_as("string", "Lookalike"),
            "absent": annotated_as("string", "Absent"),
            "null": annotated_as("boolean", "Null"),
            "plain": { "type": "string" },
            "nested": { "type": "object", "properties": { "zone": annotated_as("string", "Zone") } },
        }
    });
    let arguments = json!({
        "region": "us-west1", "priority": 42, "debug": true, "empty": "", "inside": "us west 1",
        "unicode": "Hello, 世界", "padded": " us-west1", "lines": "a\r\nb", "tab": "\tx",
        "lookalike": "=?base64?eA==?=", "null": null, "plain": "SELECT 1",
        "nested": { "zone": "b" },
    });
    let mut headers = standard();
    mirror(&call(schema, arguments), &mut headers).unwrap();
    let expected: Vec<(String, String)> = [
        ("debug", "true".to_string()),
        ("empty", String::new()),
        ("inside", "us west 1".into()),
        ("lines", wrapped("a\r\nb")),
        ("lookalike", wrapped("=?base64?eA==?=")),
        ("padded", wrapped(" us-west1")),
        ("priority", "42".into()),
        ("region", "us-west1".into()),
        ("tab", wrapped("\tx")),
        ("unicode", wrapped("Hello, 世界")),
        ("zone", "b".into()),
    ]
    .into_iter()
    .map(|(name, value)| (format!("mcp-param-{name}"), value))
    .collect();
    assert_eq!(params(&headers), expected);
    assert!(headers.contains_key(&HeaderName::from_static("mcp-method")));
}

#[test]
fn the_called_definition_replaces_what_rmcp_made_from_an_older_listing() {
    let mut headers = standard();
    headers.insert(
        HeaderName::from_static("mcp-param-region"),
        HeaderValue::from_static("old"),
    );
    let schema = json!({ "properties": { "region": annotated_as("string", "Zone") } });
    mirror(&call(schema, json!({ "region": "eu" })), &mut headers).unwrap();
    assert_eq!(params(&headers), [("mcp-param-zone".into(), "eu".into())]);
}

#[test]
fn left_alone_without_standard_headers_or_a_definition() {
    let schema = json!({ "properties": { "region": annotated_as("string", "Region") } });
    // An older revision: rmcp sends no standard headers, and neither do we.
    let mut older = HashMap::new();
    mirror(&call(schema, json!({ "region": "eu" })), &mut older).unwrap();
    assert!(older.is_empty());
    // A call without its definition (a resource read, a caller that knows none): rmcp's headers.
    let bare = ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        RequestId::Number(2),
        ClientRequest::CustomRequest(CustomRequest::new(
            "tools/call",
            Some(json!({ "name": "t", "arguments": { "region": "eu" } })),
        )),
    ));
    let mut headers = standard();
    headers.insert(
        HeaderName::from_static("mcp-param-region"),
        HeaderValue::from_static("eu"),
    );
    mirror(&bare, &mut headers).unwrap();
    assert_eq!(params(&headers), [("mcp-param-region".into(), "eu".into())]);
}

#[test]
fn invalid_annotations_refuse_the_call_saying_which_and_why() {
    let cases = [
        (json!({ "x-mcp-header": "Root" }), "on the schema root"),
        (
            json!({ "properties": { "v": annotated_as("string", "") } }),
            "`v`: `` is not",
        ),
        (
            json!({ "properties": { "v": annotated_as("string", "My Region") } }),
            "`My Region` is not",
        ),
        (
            json!({ "properties": { "v": annotated_as("string", "Région") } }),
            "not an HTTP header",
        ),
        (
            json!({ "properties": { "v": annotated_as("string", "A\t1") } }),
            "not an HTTP header",
        ),
        (
            json!({ "properties": { "v": annotated_as("string", "a:b") } }),
            "not an HTTP header",
        ),
        (
            json!({ "properties": { "v": { "type": "string", "x-mcp-header": 7 } } }),
            "annotation is not a string",
        ),
        (
            json!({ "properties": { "v": annotated_as("number", "N") } }),
            "only a string, integer or boolean property may have one",
        ),
        (
            json!({ "properties": { "v": annotated_as("object", "O") } }),
            "only a string, integer",
        ),
        (
            json!({ "properties": { "v": annotated_as("array", "A") } }),
            "only a string, integer",
        ),
        (
            json!({ "properties": { "a": annotated_as("string", "Same"), "b": annotated_as("string", "same") } }),
            "names another property's header too",
        ),
        (
            json!({ "properties": { "a": { "type": "array", "items": annotated_as("string", "I") } } }),
            "elsewhere",
        ),
        (
            json!({ "$defs": { "d": annotated_as("string", "D") } }),
            "elsewhere",
        ),
        (
            json!({ "anyOf": [{ "properties": { "v": annotated_as("string", "V") } }] }),
            "elsewhere",
        ),
    ];
    for (schema, why) in cases {
        let mut headers = standard();
        let refused = mirror(&call(schema.clone(), json!({ "v": "x" })), &mut headers)
            .expect_err(&schema.to_string());
        assert!(refused.contains(why), "{schema}: {refused}");
        assert!(refused.starts_with("`t` is not called"), "{refused}");
    }
    // Values that merely look like annotations are not annotations.
    let schema = json!({
        "properties": { "v": { "type": "string", "default": { "x-mcp-header": "No" } } },
        "examples": [{ "x-mcp-header": "No" }],
    });
    let mut headers = standard();
    mirror(&call(schema, json!({ "v": "x" })), &mut headers).unwrap();
    assert!(params(&headers).is_empty());
}
