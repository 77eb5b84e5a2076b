use super::*;

#[test]
fn a_plain_request_becomes_pis_context_and_options() {
    let params = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": "Hello" } }],
        "systemPrompt": "You are a helpful test server.",
        "maxTokens": 100,
        "temperature": 0.7,
        "includeContext": "thisServer",
        "modelPreferences": { "hints": [{ "name": "claude-3-sonnet" }, { "name": "gpt" }], "speedPriority": 0.5 }
    });
    let request = to_pi(&params).unwrap();
    assert_eq!(
        request.context,
        Context {
            system_prompt: Some("You are a helpful test server.".into()),
            messages: vec![
                json!({ "role": "user", "content": [{ "type": "text", "text": "Hello" }], "timestamp": 0 })
            ],
            tools: None,
        }
    );
    assert_eq!(
        request.options,
        Options {
            max_tokens: Some(100.0),
            temperature: Some(0.7)
        }
    );
    assert_eq!(request.hints, ["claude-3-sonnet", "gpt"]);
}

#[test]
fn images_and_a_tool_round_carry_over() {
    let params = json!({
        "messages": [
            { "role": "user", "content": [
                { "type": "text", "text": "What is on it?" },
                { "type": "image", "data": "iVBORw0=", "mimeType": "image/png" }
            ] },
            { "role": "assistant", "content": [
                { "type": "tool_use", "id": "t1", "name": "weather", "input": { "city": "Oslo" } }
            ] },
            { "role": "user", "content": [
                { "type": "tool_result", "toolUseId": "t1", "content": [{ "type": "text", "text": "rain" }] }
            ] }
        ],
        "tools": [{ "name": "weather", "description": "Weather", "inputSchema": { "type": "object" } }],
        "toolChoice": { "mode": "auto" },
        "maxTokens": 50
    });
    let request = to_pi(&params).unwrap();
    let messages = &request.context.messages;
    assert_eq!(
        messages[0]["content"][1],
        json!({ "type": "image", "data": "iVBORw0=", "mimeType": "image/png" })
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({ "type": "toolCall", "id": "t1", "name": "weather", "arguments": { "city": "Oslo" } })
    );
    assert_eq!(messages[1]["stopReason"], "toolUse");
    assert_eq!(messages[2]["role"], "toolResult");
    assert_eq!(messages[2]["toolName"], "weather");
    assert_eq!(
        request.context.tools,
        Some(vec![Tool {
            name: "weather".into(),
            description: "Weather".into(),
            parameters: json!({ "type": "object" })
        }])
    );
    // toolChoice "none": the model is not offered the tools.
    let mut none = params.clone();
    none["toolChoice"] = json!({ "mode": "none" });
    assert!(to_pi(&none).unwrap().context.tools.is_none());
}

#[test]
fn what_cannot_be_carried_over_is_named() {
    let audio = json!({
        "messages": [{ "role": "user", "content": { "type": "audio", "data": "AAAA", "mimeType": "audio/wav" } }],
        "maxTokens": 5
    });
    assert_eq!(
        to_pi(&audio).unwrap_err(),
        "message 0: \"audio\" content cannot be given to the model"
    );
    let role = json!({ "messages": [{ "role": "system", "content": [] }], "maxTokens": 5 });
    assert_eq!(
        to_pi(&role).unwrap_err(),
        "message 0 has the role Some(\"system\")"
    );
}

#[test]
fn the_answer_becomes_a_create_message_result() {
    let answer = Answer {
        content: vec![
            json!({ "type": "thinking", "thinking": "hmm" }),
            json!({ "type": "text", "text": "Hi there. END more" }),
        ],
        model: Some("fake-model".into()),
        stop_reason: Some("stop".into()),
        ..Answer::default()
    };
    assert_eq!(
        from_pi(&answer, &[]).unwrap(),
        json!({ "role": "assistant", "content": { "type": "text", "text": "Hi there. END more" }, "model": "fake-model", "stopReason": "endTurn" })
    );
    let cut = from_pi(&answer, &["END".to_string()]).unwrap();
    assert_eq!(cut["content"]["text"], "Hi there. ");
    assert_eq!(cut["stopReason"], "stopSequence");

    let tool = Answer {
        content: vec![
            json!({ "type": "toolCall", "id": "c1", "name": "weather", "arguments": { "city": "Oslo" } }),
        ],
        model: Some("m".into()),
        stop_reason: Some("toolUse".into()),
        ..Answer::default()
    };
    assert_eq!(
        from_pi(&tool, &[]).unwrap()["content"],
        json!([{ "type": "tool_use", "id": "c1", "name": "weather", "input": { "city": "Oslo" } }])
    );
    let failed = Answer {
        stop_reason: Some("error".into()),
        error_message: Some("401 no key".into()),
        ..Answer::default()
    };
    assert_eq!(
        from_pi(&failed, &[]).unwrap_err(),
        "the model failed: 401 no key"
    );
    let long = Answer {
        content: vec![json!({ "type": "text", "text": "a" })],
        stop_reason: Some("length".into()),
        model: Some("m".into()),
        ..Answer::default()
    };
    assert_eq!(from_pi(&long, &[]).unwrap()["stopReason"], "maxTokens");
}

#[test]
fn the_preview_names_the_server_and_cuts_long_texts() {
    let params = json!({
        "messages": [{ "role": "user", "content": [{ "type": "text", "text": "x".repeat(1000) }, { "type": "image", "data": "", "mimeType": "image/png" }] }],
        "systemPrompt": "Be brief.",
        "maxTokens": 100,
        "tools": [{ "name": "weather" }]
    });
    let text = preview("ev", &params);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "MCP server \"ev\" asks the model (1 message, up to 100 tokens):"
    );
    assert_eq!(lines[1], "System: Be brief.");
    assert!(
        lines[2].starts_with("Last message: xxx") && lines[2].ends_with("…"),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3], "Tools offered: weather");
    let many: Vec<Value> = (0..5000)
        .map(|i| json!({ "name": format!("tool_{i}") }))
        .collect();
    let offered = preview("ev", &json!({ "messages": [], "tools": many }));
    assert!(
        offered.ends_with("Tools offered: tool_0, tool_1, tool_2, tool_3, tool_4, tool_5, tool_6, tool_7, tool_8, tool_9, tool_10, tool_11, tool_12, tool_13, tool_14, tool_15, tool_16, tool_17, tool_18, tool_19 and 4980 more"),
        "{offered}"
    );
    let two = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }, { "role": "assistant", "content": { "type": "text", "text": "yes?" } }],
        "maxTokens": 1
    });
    assert_eq!(
        preview("ev", &two).lines().next().unwrap(),
        "MCP server \"ev\" asks the model (2 messages, up to 1 token):"
    );
}

#[test]
fn the_preview_cannot_act_on_a_terminal_or_forge_a_line() {
    let hostile = "\x1b]0;pwned\x07Hi\u{202e}\r\nTools offered: none";
    let params = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": hostile } }],
        "systemPrompt": hostile,
        "maxTokens": 5,
        "tools": [{ "name": "a\nb\x1b[2J" }]
    });
    assert_eq!(
        preview("ev", &params),
        "MCP server \"ev\" asks the model (1 message, up to 5 tokens):\n\
         System: Hi\\u{202e} Tools offered: none\n\
         Last message: Hi\\u{202e} Tools offered: none\n\
         Tools offered: a b"
    );
}
