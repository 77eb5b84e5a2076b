//! Sampling between the two vocabularies: a server's `sampling/createMessage` params as the
//! context and options Pi's model API takes (`ctx.modelRegistry.complete(model, context,
//! options)`), and the assistant message it returns as the server's `CreateMessageResult`.
//! Text, images and tool use (2025-11-25) carry over; stop sequences are applied to the answer.

use crate::render::plural;
use pi_mcp_connection::clean;
use serde_json::{json, Map, Value};

/// A server's request for the model as the front end runs it (request `id` of `server`): after
/// the user allows it (`approve`: not with `samplingAutoApprove`) in a dialog of `title` and
/// `preview`, Pi's model completes `context` with `options`.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: u64,
    pub server: String,
    pub approve: bool,
    pub title: String,
    pub preview: String,
    pub context: Context,
    pub options: Options,
    /// Model names the server would like, best first (`modelPreferences.hints`).
    pub hints: Vec<String>,
}

/// What the front end runs: Pi's `Context`, its options, and the server's model hints.
#[derive(Clone, Debug, PartialEq)]
pub struct PiRequest {
    pub context: Context,
    pub options: Options,
    pub hints: Vec<String>,
}

/// Pi's `Context`: its messages are Pi's (user, assistant and tool result messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    pub system_prompt: Option<String>,
    pub messages: Vec<Value>,
    /// The tools the model is offered (none with `toolChoice` `none`).
    pub tools: Option<Vec<Tool>>,
}

/// A tool as Pi's `Context` offers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: String,
    /// Its input's JSON Schema.
    pub parameters: Value,
}

/// The options of Pi's `complete` that a server may set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
}

/// The params as a request for Pi's model; the error says what cannot be carried over.
pub fn to_pi(params: &Value) -> Result<PiRequest, String> {
    let messages = params
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("it has no `messages` array")?;
    let mut tool_names = Map::new(); // tool_use id -> tool name, for the results that follow
    let mut out = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let blocks = content_blocks(message.get("content"));
        match message.get("role").and_then(Value::as_str) {
            Some("user") => user_messages(&blocks, &tool_names, &mut out)
                .map_err(|e| format!("message {i}: {e}"))?,
            Some("assistant") => {
                let message = assistant_message(&blocks, &mut tool_names)
                    .map_err(|e| format!("message {i}: {e}"))?;
                out.push(message);
            }
            other => return Err(format!("message {i} has the role {other:?}")),
        }
    }
    let tool_choice = params.pointer("/toolChoice/mode").and_then(Value::as_str);
    let text = |value: &Value, key: &str| {
        let text = value.get(key).and_then(Value::as_str);
        text.unwrap_or_default().to_string()
    };
    let tools = params
        .get("tools")
        .and_then(Value::as_array)
        .filter(|tools| tool_choice != Some("none") && !tools.is_empty())
        .map(|tools| {
            let tool = |t: &Value| Tool {
                name: text(t, "name"),
                description: text(t, "description"),
                parameters: t
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or(json!({ "type": "object" })),
            };
            tools.iter().map(tool).collect()
        });
    let number = |key: &str| params.get(key).and_then(Value::as_f64);
    let hints = params
        .pointer("/modelPreferences/hints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    Ok(PiRequest {
        context: Context {
            system_prompt: params
                .get("systemPrompt")
                .and_then(Value::as_str)
                .map(str::to_string),
            messages: out,
            tools,
        },
        options: Options {
            max_tokens: number("maxTokens"),
            temperature: number("temperature"),
        },
        hints,
    })
}

/// What the front end answers a sampling request with: Pi's assistant message (the parts read
/// here), or why the model did not run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    /// `declined`, `no-ui` or `no-model`: the model did not run.
    pub refused: Option<String>,
    /// The message's blocks, Pi's (`text`, `toolCall`, `thinking`, …).
    pub content: Vec<Value>,
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
    pub model: Option<String>,
}

/// Pi's assistant message as a `CreateMessageResult`; an error or aborted answer is the error.
pub fn from_pi(message: &Answer, stop_sequences: &[String]) -> Result<Value, String> {
    let reason = message.stop_reason.as_deref().unwrap_or("stop");
    if matches!(reason, "error" | "aborted") {
        let why = message.error_message.as_deref();
        let why = why.unwrap_or("the model did not answer");
        return Err(format!("the model failed: {why}"));
    }
    let blocks = &message.content;
    let mut text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("");
    let mut stop_reason = match reason {
        "length" => "maxTokens",
        "toolUse" => "toolUse",
        _ => "endTurn",
    };
    let cut = stop_sequences
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min();
    if let Some(at) = cut {
        text.truncate(at);
        stop_reason = "stopSequence";
    }
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|b| {
            json!({
                "type": "tool_use",
                "id": b.get("id").cloned().unwrap_or(json!("")),
                "name": b.get("name").cloned().unwrap_or(json!("")),
                "input": b.get("arguments").cloned().unwrap_or(json!({})),
            })
        })
        .collect();
    let content = match calls.is_empty() {
        true => json!({ "type": "text", "text": text }),
        false => {
            let mut all = Vec::new();
            if !text.is_empty() {
                all.push(json!({ "type": "text", "text": text }));
            }
            all.extend(calls);
            Value::Array(all)
        }
    };
    Ok(json!({
        "role": "assistant",
        "content": content,
        "model": message.model.as_deref().unwrap_or("unknown"),
        "stopReason": stop_reason,
    }))
}

/// Tools a sampling approval names; the rest are counted.
const PREVIEW_TOOLS: usize = 20;

/// What the user sees before approving: who asks, the system prompt and the last message (each
/// cut short), the token budget and the tools offered (the first few named).
pub fn preview(server: &str, params: &Value) -> String {
    // On one line, cleaned (`clean::line`): the server's text cannot draw lines of its own.
    let clip = |text: &str, max: usize| {
        let text = clean::one_line(text);
        match text.char_indices().nth(max) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text,
        }
    };
    let messages = params.get("messages").and_then(Value::as_array);
    let last_text = messages
        .and_then(|m| m.last())
        .map(|m| content_blocks(m.get("content")))
        .unwrap_or_default()
        .iter()
        .map(|b| match kind(b) {
            "text" => b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            other => format!("[{other}]"),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let max_tokens = params.get("maxTokens").and_then(Value::as_u64).unwrap_or(0);
    let mut lines = vec![format!(
        "MCP server \"{server}\" asks the model ({}, up to {}):",
        plural(messages.map_or(0, Vec::len), "message"),
        plural(max_tokens as usize, "token")
    )];
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        lines.push(format!("System: {}", clip(system, 300)));
    }
    lines.push(format!("Last message: {}", clip(&last_text, 800)));
    if let Some(tools) = params.get("tools").and_then(Value::as_array) {
        let names: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name")?.as_str())
            .take(PREVIEW_TOOLS)
            .map(|name| clip(name, 100))
            .collect();
        let more = match tools.len().saturating_sub(names.len()) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        lines.push(format!(
            "Tools offered: {}{more}",
            clip(&names.join(", "), 300)
        ));
    }
    lines.join("\n")
}

/// A message's content as a list (a single block is allowed too).
fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(block @ Value::Object(_)) => vec![block.clone()],
        _ => vec![],
    }
}

fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Text and images as Pi content; anything else is an error naming it.
fn pi_content(block: &Value) -> Result<Value, String> {
    match kind(block) {
        "text" => {
            Ok(json!({ "type": "text", "text": block.get("text").cloned().unwrap_or(json!("")) }))
        }
        "image" => Ok(json!({
            "type": "image",
            "data": block.get("data").cloned().unwrap_or(json!("")),
            "mimeType": block.get("mimeType").cloned().unwrap_or(json!("image/png")),
        })),
        other => Err(format!("{other:?} content cannot be given to the model")),
    }
}

/// A user turn: its text and images, and a tool result message for each `tool_result`.
fn user_messages(
    blocks: &[Value],
    tool_names: &Map<String, Value>,
    out: &mut Vec<Value>,
) -> Result<(), String> {
    let mut content = Vec::new();
    for block in blocks {
        if kind(block) == "tool_result" {
            let id = block.get("toolUseId").and_then(Value::as_str).unwrap_or("");
            let results = content_blocks(block.get("content"))
                .iter()
                .map(pi_content)
                .collect::<Result<Vec<_>, _>>()?;
            out.push(json!({
                "role": "toolResult",
                "toolCallId": id,
                "toolName": tool_names.get(id).cloned().unwrap_or(json!("")),
                "content": results,
                "isError": block.get("isError").and_then(Value::as_bool).unwrap_or(false),
                "timestamp": 0,
            }));
        } else {
            content.push(pi_content(block)?);
        }
    }
    if !content.is_empty() {
        out.push(json!({ "role": "user", "content": content, "timestamp": 0 }));
    }
    Ok(())
}

/// An earlier answer of the model: its text and tool calls.
fn assistant_message(
    blocks: &[Value],
    tool_names: &mut Map<String, Value>,
) -> Result<Value, String> {
    let mut content = Vec::new();
    for block in blocks {
        if kind(block) == "tool_use" {
            let id = block.get("id").cloned().unwrap_or(json!(""));
            let name = block.get("name").cloned().unwrap_or(json!(""));
            if let Some(id) = id.as_str() {
                tool_names.insert(id.to_string(), name.clone());
            }
            content.push(json!({
                "type": "toolCall",
                "id": id,
                "name": name,
                "arguments": block.get("input").cloned().unwrap_or(json!({})),
            }));
        } else if kind(block) == "text" {
            content.push(pi_content(block)?);
        } else {
            return Err(format!("{:?} content in an assistant message", kind(block)));
        }
    }
    let calls = content.iter().any(|c| c["type"] == "toolCall");
    Ok(json!({
        "role": "assistant",
        "content": content,
        "api": "mcp-sampling",
        "provider": "mcp-sampling",
        "model": "mcp-sampling",
        "usage": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                   "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0 } },
        "stopReason": if calls { "toolUse" } else { "stop" },
        "timestamp": 0,
    }))
}

#[cfg(test)]
mod tests;
