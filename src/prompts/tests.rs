use super::*;
use serde_json::json;

fn args() -> Vec<Argument> {
    arguments(&json!({
        "name": "args-prompt",
        "arguments": [
            { "name": "city", "description": "A city", "required": true },
            { "name": "state", "required": false }
        ]
    }))
}

#[test]
fn commands_are_named_like_pi_mcp_adapters() {
    assert_eq!(
        command_name("everything", "args-prompt"),
        "mcp__everything__args-prompt"
    );
    assert_eq!(command_name("my server", "a.b/c"), "mcp__my_server__a_b_c");
}

#[test]
fn arguments_by_position_or_name_with_quotes() {
    let parse = |text| parse_arguments("mcp__ev__args-prompt", &args(), text);
    assert_eq!(
        Value::Object(parse("Paris").unwrap()),
        json!({ "city": "Paris" })
    );
    assert_eq!(
        Value::Object(parse("\"New York\" NY").unwrap()),
        json!({ "city": "New York", "state": "NY" })
    );
    assert_eq!(
        Value::Object(parse("state=CA city='San Jose'").unwrap()),
        json!({ "state": "CA", "city": "San Jose" })
    );
    assert_eq!(
        Value::Object(parse("state=CA Fresno").unwrap()),
        json!({ "state": "CA", "city": "Fresno" })
    );
    assert_eq!(
        Value::Object(parse(r#""say \"hi\"" x=1"#).unwrap()),
        json!({ "city": "say \"hi\"", "state": "x=1" })
    );
    assert_eq!(
        parse("").unwrap_err(),
        "Missing required argument(s): city.\nUsage: /mcp__ev__args-prompt <city> [state]"
    );
    assert_eq!(
        parse("a b c").unwrap_err(),
        "Too many arguments: \"c\" has no place.\nUsage: /mcp__ev__args-prompt <city> [state]"
    );
    assert_eq!(parse("\"open").unwrap_err(), "A quote is not closed.");
}

#[test]
fn the_argument_being_typed() {
    let args = args();
    let at = |text| argument_at_end(&args, text).map(|(a, prefix)| (a.name.clone(), prefix));
    assert_eq!(at(""), Some(("city".into(), String::new())));
    assert_eq!(at("Par"), Some(("city".into(), "Par".into())));
    assert_eq!(at("Paris "), Some(("state".into(), String::new())));
    assert_eq!(at("city=Paris st"), Some(("state".into(), "st".into())));
    assert_eq!(at("state=C"), Some(("state".into(), "C".into())));
    assert_eq!(at("a b "), None);
}

#[test]
fn prompt_messages_become_one_user_message() {
    let one =
        json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "Hi" } }] });
    assert_eq!(
        prompt_messages(&one),
        vec![json!({ "type": "text", "text": "Hi" })]
    );
    let several = json!({ "messages": [
        { "role": "user", "content": { "type": "text", "text": "Look:" } },
        { "role": "user", "content": { "type": "resource", "resource": { "uri": "demo://r/1", "text": "body" } } },
        { "role": "assistant", "content": { "type": "image", "data": "AAAA", "mimeType": "image/png" } }
    ] });
    assert_eq!(
        prompt_messages(&several),
        vec![
            json!({ "type": "text", "text": "[user] Look:" }),
            json!({ "type": "text", "text": "[user] [Resource: demo://r/1]\nbody" }),
            json!({ "type": "text", "text": "[assistant]" }),
            json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" }),
        ]
    );
    assert_eq!(
        prompt_messages(&json!({})),
        vec![json!({ "type": "text", "text": "(the prompt is empty)" })]
    );
}
