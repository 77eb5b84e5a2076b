use super::*;
use serde_json::json;

/// The form of the conformance suite's `elicitation-sep1034-client-defaults`.
fn defaults_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "score": { "type": "number", "default": 95.5 },
            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "default": true }
        },
        "required": []
    })
}

fn form(schema: Value) -> Form {
    Form::from_schema(&schema).unwrap()
}

fn schema_error(schema: Value) -> String {
    Form::from_schema(&schema).unwrap_err().to_string()
}

#[test]
fn every_kind_of_field_is_read_in_order() {
    let form = form(json!({
        "type": "object",
        "properties": {
            "email": { "type": "string", "format": "email", "title": "E-mail", "maxLength": 50 },
            "n": { "type": "integer", "minimum": 1, "maximum": 10 },
            "ok": { "type": "boolean" },
            "color": { "type": "string", "oneOf": [{ "const": "r", "title": "Red" }, { "const": "g", "title": "Green" }] },
            "old": { "type": "string", "enum": ["a", "b"], "enumNames": ["Aye", "Bee"] },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["x", "y", "z"] }, "minItems": 1, "maxItems": 2 },
            "titled": { "type": "array", "items": { "anyOf": [{ "const": "p", "title": "Pea" }] } }
        },
        "required": ["email", "tags"]
    }));
    let names: Vec<_> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["email", "n", "ok", "color", "old", "tags", "titled"]
    );
    assert_eq!(form.fields[0].label(), "E-mail");
    assert!(form.fields[0].required && !form.fields[1].required);
    let Kind::Choice { options } = &form.field("old").unwrap().kind else {
        panic!("a choice");
    };
    assert_eq!(options[1].label(), "Bee");
    assert_eq!(
        form.field("tags").unwrap().kind,
        Kind::Choices {
            options: ["x", "y", "z"]
                .map(|v| Choice {
                    value: v.into(),
                    title: None
                })
                .to_vec(),
            min_items: Some(1),
            max_items: Some(2),
        }
    );
}

#[test]
fn forms_that_are_not_flat_are_refused_with_the_property_named() {
    let nested = schema_error(json!({
        "type": "object",
        "properties": { "address": { "type": "object", "properties": { "city": { "type": "string" } } } }
    }));
    assert!(
        nested.contains("property `address` is an object (nested objects are not allowed)"),
        "{nested}"
    );
    assert!(
        nested.contains("requestedSchema is not a flat form"),
        "{nested}"
    );
    let array_of_objects = schema_error(json!({
        "type": "object",
        "properties": { "people": { "type": "array", "items": { "type": "object" } } }
    }));
    assert!(
        array_of_objects.contains("property `people` is an array whose items are not enum strings"),
        "{array_of_objects}"
    );
    assert!(schema_error(json!({ "type": "array" })).contains("its type is \"array\""));
    assert!(schema_error(json!("form")).contains("it is a string"));
    assert!(schema_error(
        json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["b"] })
    )
    .contains("\"required\" names `b`"));
    assert!(schema_error(
        json!({ "type": "object", "properties": { "a": { "type": "string", "format": "phone" } } })
    )
    .contains("unknown format \"phone\""));
    assert!(schema_error(
        json!({ "type": "object", "properties": { "a": { "type": "integer", "default": "x" } } })
    )
    .contains("property `a` has a default that does not fit it"));
}

#[test]
fn omitted_fields_get_their_defaults() {
    let form = form(defaults_form());
    let content = form.complete(Content::new()).unwrap();
    assert_eq!(
        Value::Object(content),
        json!({ "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true })
    );
    let mut given = Content::new();
    given.insert("age".into(), json!(41));
    assert_eq!(form.complete(given).unwrap()["age"], json!(41));
    assert!(form.defaults_only().is_some());
}

#[test]
fn a_required_field_without_default_cannot_be_left_out() {
    let form = form(json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "n": { "type": "integer", "default": 2 } },
        "required": ["name", "n"]
    }));
    assert_eq!(form.defaults_only(), None);
    let error = form.complete(Content::new()).unwrap_err();
    assert_eq!(error.to_string(), "`name`: is required and has no default");
}

#[test]
fn answers_are_checked_against_the_form() {
    let form = form(json!({
        "type": "object",
        "properties": {
            "email": { "type": "string", "format": "email" },
            "when": { "type": "string", "format": "date" },
            "at": { "type": "string", "format": "date-time" },
            "site": { "type": "string", "format": "uri" },
            "n": { "type": "integer", "minimum": 1, "maximum": 10 },
            "short": { "type": "string", "maxLength": 3 },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["x", "y"] }, "maxItems": 1 }
        }
    }));
    let check = |name: &str, value: Value| form.field(name).unwrap().check(&value);
    assert!(check("email", json!("a@b.io")).is_ok());
    assert_eq!(
        check("email", json!("nobody")),
        Err("is not a valid email".into())
    );
    assert!(check("when", json!("2024-02-29")).is_ok());
    assert!(check("when", json!("2023-02-29")).is_err());
    assert!(check("at", json!("2026-11-23T10:00:00Z")).is_ok());
    assert!(check("at", json!("2026-11-23 25:00")).is_err());
    assert!(check("site", json!("https://example.com/x")).is_ok());
    assert!(check("site", json!("not a uri")).is_err());
    assert_eq!(check("n", json!(11)), Err("must be at most 10".into()));
    assert_eq!(check("n", json!(2.5)), Err("must be a whole number".into()));
    assert_eq!(
        check("n", json!("2")),
        Err("expects an integer, got \"2\"".into())
    );
    assert_eq!(
        check("short", json!("four")),
        Err("allows at most 3 characters".into())
    );
    assert_eq!(
        check("tags", json!(["x", "y"])),
        Err("allows at most 1 chosen".into())
    );
    assert_eq!(
        check("tags", json!(["q"])),
        Err("\"q\" is not one of the options".into())
    );
    let mut extra = Content::new();
    extra.insert("nope".into(), json!(1));
    assert_eq!(
        form.complete(extra).unwrap_err().field.as_deref(),
        Some("nope")
    );
}

#[test]
fn typed_text_becomes_the_fields_value() {
    let form = form(json!({
        "type": "object",
        "properties": {
            "n": { "type": "integer" },
            "x": { "type": "number" },
            "ok": { "type": "boolean" },
            "c": { "type": "string", "oneOf": [{ "const": "r", "title": "Red" }] },
            "many": { "type": "array", "items": { "type": "string", "enum": ["a", "b"] } }
        }
    }));
    let parse = |name: &str, text: &str| form.field(name).unwrap().parse_text(text);
    assert_eq!(parse("n", " 42 "), Ok(Some(json!(42))));
    assert_eq!(parse("n", "4.5"), Err("must be a whole number".into()));
    assert_eq!(parse("x", "4.5"), Ok(Some(json!(4.5))));
    assert_eq!(parse("x", "lots"), Err("\"lots\" is not a number".into()));
    assert_eq!(parse("ok", "Yes"), Ok(Some(json!(true))));
    assert_eq!(parse("c", "Red"), Ok(Some(json!("r"))));
    assert_eq!(parse("many", "a, b"), Ok(Some(json!(["a", "b"]))));
    assert_eq!(parse("n", "  "), Ok(None));
}

#[test]
fn front_end_answers_are_taken_field_by_field() {
    let form = form(json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "title": "Name", "description": "Your full name" },
            "n": { "type": "integer", "minimum": 1, "maximum": 100, "default": 42 },
            "ok": { "type": "boolean" },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b"] }, "maxItems": 1 }
        },
        "required": ["name"]
    }));
    let take = |name: &str, answer: Value| form.field(name).unwrap().take(&answer);
    assert_eq!(take("name", json!("")), Err("is required".into()));
    assert_eq!(take("n", json!("")), Ok(None), "left for its default");
    assert_eq!(take("n", json!("7")), Ok(Some(json!(7))));
    assert_eq!(take("ok", json!(false)), Ok(Some(json!(false))));
    assert_eq!(
        take("tags", json!(["a", "b"])),
        Err("allows at most 1 chosen".into())
    );

    let shown = present::form(7, "ev", None, "Who are you?", &form);
    assert_eq!(shown.id, 7);
    assert_eq!(shown.title, "MCP server \"ev\" asks:\n\nWho are you?");
    let present::Asks::Form { fields } = &shown.asks else {
        panic!("a form: {shown:?}")
    };
    assert_eq!(fields[0].prompt, "Name (text; required)\nYour full name");
    assert_eq!(
        fields[1].prompt,
        "n (whole number from 1 to 100; default 42)"
    );
    assert_eq!(fields[1].placeholder, "42");
    let options: Vec<(Value, &str)> = fields[2]
        .options
        .iter()
        .flatten()
        .map(|o| (o.value.clone(), o.label.as_str()))
        .collect();
    assert_eq!(options, [(json!(true), "Yes"), (json!(false), "No")]);
    assert_eq!(fields[3].kind, present::KindName::Choices);
    assert_eq!(fields[3].max_items, Some(1));
}

#[test]
fn a_question_shows_the_servers_text_cleaned_and_a_look_alike_host_beside_its_ascii_form() {
    let hostile = "\x1b]0;pwned\x07Pay\u{202e}lap\r\nnow";
    let link = crate::clean::Link::parse("https://\u{430}pple.com/pay").unwrap();
    let present::Asks::Url { message, url } = present::url(3, "ev", None, hostile, &link).asks
    else {
        panic!("a URL question")
    };
    assert_eq!(
        message,
        "Page: https://\u{430}pple.com/pay (host in ASCII: xn--pple-43d.com)\n\nThe server's message:\n  Pay\\u{202e}lap\n  now\n\nOpen it in your browser?"
    );
    assert_eq!(url, "https://xn--pple-43d.com/pay", "what is opened");
    let form = Form::from_schema(&json!({"type": "object", "properties": {
        "pick": {"type": "string", "title": "Pick\nOne\x1b[2J", "description": hostile, "default": "a",
                 "oneOf": [{"const": "a", "title": "A\u{9b}1m\n✓ forged"}]}
    }}))
    .unwrap();
    let shown = present::form(4, "ev", None, hostile, &form);
    assert_eq!(
        shown.title,
        "MCP server \"ev\" asks:\n\nPay\\u{202e}lap\nnow"
    );
    let present::Asks::Form { fields } = &shown.asks else {
        panic!("a form: {shown:?}")
    };
    let field = &fields[0];
    let option = &field.options.as_ref().unwrap()[0];
    assert_eq!(
        field.prompt,
        "Pick\\nOne (one of the options; default A\\n✓ forged)\nPay\\u{202e}lap\nnow"
    );
    assert_eq!(option.label, "A\\n✓ forged");
    assert_eq!(option.value, "a", "handed back as it is");
}
