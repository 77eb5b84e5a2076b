use super::*;
use crate::render::content::Block;
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
    assert_eq!(prompt_messages(&one), vec![Block::Text("Hi".into())]);
    let several = json!({ "messages": [
        { "role": "user", "content": { "type": "text", "text": "Look:" } },
        { "role": "user", "content": { "type": "resource", "resource": { "uri": "demo://r/1", "text": "body" } } },
        { "role": "assistant", "content": { "type": "image", "data": "AAAA", "mimeType": "image/png" } }
    ] });
    assert_eq!(
        prompt_messages(&several),
        vec![
            Block::Text("[user] Look:".into()),
            Block::Text("[user] [Resource: demo://r/1]\nbody".into()),
            Block::Text("[assistant]".into()),
            Block::image("AAAA", "image/png"),
        ]
    );
    assert_eq!(
        prompt_messages(&json!({})),
        vec![Block::Text("(the prompt is empty)".into())]
    );
}

fn many(count: usize, name: impl Fn(usize) -> String) -> Vec<Argument> {
    (0..count)
        .map(|i| Argument {
            name: name(i),
            description: None,
            required: true,
        })
        .collect()
}

#[test]
fn a_huge_argument_list_is_named_in_part_and_counted() {
    let wide = many(50_000, |i| format!("a{i}"));
    let described = description("s", "mcp__s__p", Some("Does it all"), &wide);
    assert_eq!(
        described,
        "Does it all — /mcp__s__p <a0> <a1> <a2> <a3> <a4> <a5> <a6> <a7> <a8> <a9> … and 49990 more"
    );
    let error = parse_arguments("mcp__s__p", &wide, "x").unwrap_err();
    assert_eq!(
        error,
        "Missing required argument(s): a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 and 49989 more.\nUsage: /mcp__s__p <a0> <a1> <a2> <a3> <a4> <a5> <a6> <a7> <a8> <a9> … and 49990 more"
    );
    assert_eq!(
        description("s", "mcp__s__p", None, &args()),
        "MCP prompt of s — /mcp__s__p <city> [state]"
    );
}

#[test]
fn long_names_and_descriptions_stay_within_the_caps() {
    let long = many(12, |i| format!("{i}{}", "n".repeat(5000)));
    let described = description("s", "mcp__s__p", Some(&"d ".repeat(100_000)), &long);
    assert!(
        described.chars().count() <= MAX_DESCRIPTION_CHARS,
        "{described}"
    );
    assert!(described.ends_with('…'), "{described}");
    let short = description("s", "mcp__s__p", Some(&"word ".repeat(1000)), &args());
    assert!(short.chars().count() <= MAX_DESCRIPTION_CHARS, "{short}");
    assert!(
        short.ends_with("… — /mcp__s__p <city> [state]"),
        "the usage is kept whole: {short}"
    );
    let error = parse_arguments("mcp__s__p", &long, "").unwrap_err();
    assert!(error.chars().count() <= MAX_ERROR_CHARS, "{error}");
    assert!(
        error.starts_with("Missing required argument(s): 0nnn"),
        "{error}"
    );
}
