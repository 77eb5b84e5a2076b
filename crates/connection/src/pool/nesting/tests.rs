use super::*;

/// An object nesting `levels` levels: `{"a":{"a":…{}…}}`.
fn nested(levels: usize) -> String {
    format!(
        "{}{}",
        "{\"a\":".repeat(levels - 1) + "{",
        "}".repeat(levels)
    )
}

fn parses(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn depth_counts_brackets_outside_strings() {
    assert_eq!(depth(b"1"), 0);
    assert_eq!(depth(br#"{"a":[1,{"b":"[[[{{"}]}"#), 3);
    assert_eq!(depth(br#"["\"]]]", "\\", []]"#), 2);
    assert_eq!(depth(nested(MAX_DEPTH).as_bytes()), MAX_DEPTH);
    assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH)).is_ok());
    assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).is_err());
    // A hundred thousand levels: no recursion, no stack.
    assert_eq!(depth(nested(100_000).as_bytes()), 100_000);
}

#[test]
fn a_listing_loses_only_its_too_deep_entries_and_names_them() {
    let deep_schema = nested(130);
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"tools":[{{"name":"ok","inputSchema":{{}}}},{{"name":"deep","inputSchema":{deep_schema}}},{{"name":"last"}}],"nextCursor":"2"}}}}"#
    );
    let Fixed::Pruned(fixed) = fix(message.as_bytes(), depth(message.as_bytes())) else {
        panic!("not pruned");
    };
    let fixed = parses(&fixed);
    assert_eq!(fixed["id"], 7);
    let names: Vec<&str> = fixed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ok", "last"]);
    assert_eq!(fixed["result"]["nextCursor"], "2");
    assert_eq!(
        fixed["result"]["_meta"][LEFT_OUT_FIELD],
        json!(["tool \"deep\": its definition nests 134 levels of JSON, deeper than the 127 that can be read"])
    );
    // A `_meta` the server sent keeps what it had.
    for (meta, kept) in [("{}", json!(null)), (r#"{"k": 1}"#, json!(1))] {
        let message = format!(
            r#"{{"id":1,"result":{{"_meta":{meta},"prompts":[{{"name":"p","arguments":{}}}]}}}}"#,
            nested(130)
        );
        let Fixed::Pruned(fixed) = fix(message.as_bytes(), 134) else {
            panic!("not pruned: {meta}");
        };
        let fixed = parses(&fixed);
        assert_eq!(fixed["result"]["prompts"], json!([]));
        assert_eq!(fixed["result"]["_meta"]["k"], kept);
        assert!(fixed["result"]["_meta"][LEFT_OUT_FIELD][0]
            .as_str()
            .unwrap()
            .starts_with("prompt \"p\": its definition nests 134 levels"));
    }
}

#[test]
fn other_too_deep_answers_become_errors_for_their_request() {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":"c-1","result":{{"content":[],"structuredContent":{}}}}}"#,
        nested(200)
    );
    let Fixed::Refused(error) = fix(call.as_bytes(), 203) else {
        panic!("not refused");
    };
    let error = parses(&error);
    assert_eq!(error["id"], "c-1");
    assert_eq!(error["error"]["data"][TOO_DEEP_FIELD], 203);
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("the answer nests 203 levels of JSON, deeper than the 127"));
    // A listing whose too-deep part is not an entry cannot be pruned.
    let listing = format!(
        r#"{{"id":1,"result":{{"tools":[],"_meta":{}}}}}"#,
        nested(200)
    );
    assert!(matches!(fix(listing.as_bytes(), 202), Fixed::Refused(_)));
    // Not an answer: nobody to tell.
    let request = format!(r#"{{"id":1,"method":"x","params":{}}}"#, nested(200));
    assert_eq!(fix(request.as_bytes(), 201), Fixed::Dropped);
    let notification = format!(r#"{{"method":"x","params":{}}}"#, nested(200));
    assert_eq!(fix(notification.as_bytes(), 201), Fixed::Dropped);
    assert_eq!(fix(nested(200).as_bytes(), 200), Fixed::Dropped);
    assert_eq!(fix(b"[[[[", 4), Fixed::Dropped);
}

#[test]
fn readable_text_is_kept_fixed_or_dropped() {
    let fine = r#"{"id":1,"result":{"tools":[]}}"#;
    assert!(matches!(readable(fine), Some(Cow::Borrowed(text)) if text == fine));
    let deep = format!(r#"{{"id":1,"result":{}}}"#, nested(300));
    let fixed = parses(readable(&deep).unwrap().as_bytes());
    assert_eq!(fixed["error"]["data"][TOO_DEEP_FIELD], 301);
    assert_eq!(
        readable(&format!(r#"{{"method":"m","params":{}}}"#, nested(300))),
        None
    );
}
