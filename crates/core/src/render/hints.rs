//! What a tool's MCP `annotations` and `icons` say (both kept in the cache with its definition):
//! every hint and the icon for a person, one word for the model.

use crate::catalog::ToolInfo;
use serde_json::Value;

fn field<'a>(tool: &'a ToolInfo, key: &str) -> Option<&'a Value> {
    tool.definition.as_deref()?.get(key)
}

fn hint(tool: &ToolInfo, key: &str) -> Option<bool> {
    field(tool, "annotations")?.get(key)?.as_bool()
}

/// The hints the server set, as words: read-only, destructive, idempotent, open world.
pub fn words(tool: &ToolInfo) -> Vec<&'static str> {
    words_of(field(tool, "annotations"))
}

/// [`words`] of a tool's MCP `annotations`.
pub fn words_of(annotations: Option<&Value>) -> Vec<&'static str> {
    [
        ("readOnlyHint", "read-only"),
        ("destructiveHint", "destructive"),
        ("idempotentHint", "idempotent"),
        ("openWorldHint", "open world"),
    ]
    .into_iter()
    .filter(|(key, _)| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
            == Some(true)
    })
    .map(|(_, word)| word)
    .collect()
}

/// The word the model gets: `read-only`, or `destructive` for a tool that may change things.
pub fn for_model(tool: &ToolInfo) -> Option<&'static str> {
    if hint(tool, "readOnlyHint") == Some(true) {
        Some("read-only")
    } else if hint(tool, "destructiveHint") == Some(true) {
        Some("destructive")
    } else {
        None
    }
}

/// The tool's first icon: its URL, or for an inline one (`data:`) its type and size.
pub fn icon(tool: &ToolInfo) -> Option<String> {
    let first = field(tool, "icons")?.as_array()?.first()?;
    let src = first.get("src")?.as_str()?;
    let shown = match src.strip_prefix("data:") {
        Some(data) => {
            let kind = data.split([';', ',']).next().filter(|k| !k.is_empty());
            format!("inline {} ({} bytes)", kind.unwrap_or("image"), data.len())
        }
        None => super::clip(src, 200),
    };
    Some(pi_mcp_connection::clean::line(&shown).into_owned())
}

/// `read-only, idempotent · icon https://…`, or `None` when the server said neither.
pub fn for_people(tool: &ToolInfo) -> Option<String> {
    let mut parts = Vec::new();
    let words = words(tool);
    if !words.is_empty() {
        parts.push(words.join(", "));
    }
    if let Some(icon) = icon(tool) {
        parts.push(format!("icon {icon}"));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A server's tools by hint, for doctor: `2 read-only, 1 destructive, 3 with icons`.
pub fn summary(tools: &[&ToolInfo]) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for tool in tools {
        let icon = icon(tool).map(|_| "with icons");
        for word in words(tool).into_iter().chain(icon) {
            match counts.iter_mut().find(|(w, _)| w == word) {
                Some((_, n)) => *n += 1,
                None => counts.push((word.to_string(), 1)),
            }
        }
    }
    let parts: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}
