//! MCP prompts as Pi slash commands: `/mcp__<server>__<prompt> [args]`, arguments given by
//! position or as `name=value` (quoted when they hold spaces), the usage line a wrong call gets,
//! and the prompt's messages as the user message Pi sends. However many arguments a prompt
//! takes, its command's description and usage errors stay short: a usage line and a list of
//! missing arguments name [`MAX_NAMED_ARGUMENTS`] and count the rest, a description is at most
//! [`MAX_DESCRIPTION_CHARS`] characters and an error [`MAX_ERROR_CHARS`].

use crate::render::content::{block, text_block, Block};
use pi_mcp_connection::clean;
use pi_mcp_connection::clean::clip;
use serde_json::{Map, Value};

/// Arguments a usage line, or a list of missing ones, names; the rest are counted.
pub const MAX_NAMED_ARGUMENTS: usize = 10;
/// The longest command description: the prompt's description (clipped first) and its usage.
pub const MAX_DESCRIPTION_CHARS: usize = 300;
/// The longest usage error.
pub const MAX_ERROR_CHARS: usize = 1000;

/// The command of prompt `prompt` of `server` (pi-mcp-adapter's and Claude Code's form):
/// characters other than letters, digits, `_` and `-` become `_`.
pub fn command_name(server: &str, prompt: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(
                |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    true => c,
                    false => '_',
                },
            )
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(prompt))
}

/// One argument a prompt takes, from its `prompts/list` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// The arguments of a listed prompt.
pub fn arguments(prompt: &Value) -> Vec<Argument> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| {
            Some(Argument {
                name: a.get("name")?.as_str()?.to_string(),
                description: a
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

/// `/command <required> [optional]`, the first [`MAX_NAMED_ARGUMENTS`] arguments named.
pub fn usage(command: &str, arguments: &[Argument]) -> String {
    let mut line = format!("/{command}");
    for argument in arguments.iter().take(MAX_NAMED_ARGUMENTS) {
        match argument.required {
            true => line.push_str(&format!(" <{}>", argument.name)),
            false => line.push_str(&format!(" [{}]", argument.name)),
        }
    }
    if arguments.len() > MAX_NAMED_ARGUMENTS {
        line.push_str(&format!(
            " … and {} more",
            arguments.len() - MAX_NAMED_ARGUMENTS
        ));
    }
    line
}

/// A command's description: the prompt's `description` (or whose prompt it is), then its usage,
/// within [`MAX_DESCRIPTION_CHARS`].
pub fn description(
    server: &str,
    command: &str,
    described: Option<&str>,
    arguments: &[Argument],
) -> String {
    // Cleaned before it is measured (Pi shows it on one line, beside the command).
    let usage = clean::one_line(&usage(command, arguments));
    let about = match described.map(clean::one_line).filter(|d| !d.is_empty()) {
        Some(d) => d,
        None => format!("MCP prompt of {server}"),
    };
    // The usage first: what is left (less " — " and the cut's "…") is the description's.
    let room = MAX_DESCRIPTION_CHARS.saturating_sub(usage.chars().count() + 4);
    clip(
        &format!("{} — {usage}", clip(&about, room.max(20))),
        MAX_DESCRIPTION_CHARS - 1,
    )
}

/// A usage error: `why`, then the usage line, within [`MAX_ERROR_CHARS`].
fn usage_error(why: &str, command: &str, arguments: &[Argument]) -> String {
    let error = format!("{why}\nUsage: {}", usage(command, arguments));
    clip(&clean::text(&error), MAX_ERROR_CHARS - 1)
}

/// What was typed after the command, as the prompt's arguments: `name=value` for a named one,
/// anything else fills the next argument in order; quotes group words.
pub fn parse_arguments(
    command: &str,
    arguments: &[Argument],
    text: &str,
) -> Result<Map<String, Value>, String> {
    let given = assign(command, arguments, text)?;
    let missing: Vec<&str> = arguments
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        let mut named = missing[..missing.len().min(MAX_NAMED_ARGUMENTS)].join(", ");
        if missing.len() > MAX_NAMED_ARGUMENTS {
            named.push_str(&format!(
                " and {} more",
                missing.len() - MAX_NAMED_ARGUMENTS
            ));
        }
        let why = format!("Missing required argument(s): {named}.");
        return Err(usage_error(&why, command, arguments));
    }
    Ok(given)
}

/// The arguments given so far (required ones may still be missing).
pub fn assign(
    command: &str,
    arguments: &[Argument],
    text: &str,
) -> Result<Map<String, Value>, String> {
    let mut given = Map::new();
    let mut positional = arguments.iter();
    for word in split_words(text)? {
        let named = word
            .split_once('=')
            .filter(|(name, _)| arguments.iter().any(|a| a.name == *name));
        let (name, value) = match named {
            Some((name, value)) => (name.to_string(), value.to_string()),
            None => {
                let next = positional
                    .by_ref()
                    .find(|a| !given.contains_key(&a.name))
                    .ok_or_else(|| {
                        let why = format!("Too many arguments: \"{word}\" has no place.");
                        usage_error(&why, command, arguments)
                    })?;
                (next.name.clone(), word)
            }
        };
        given.insert(name, Value::String(value));
    }
    Ok(given)
}

/// Words separated by white space; `"…"` and `'…'` keep spaces (a backslash escapes a quote).
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), '\\') => match chars.next() {
                Some(next) if next == q || next == '\\' => word.push(next),
                Some(next) => {
                    word.push('\\');
                    word.push(next);
                }
                None => word.push('\\'),
            },
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        return Err("A quote is not closed.".into());
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

/// The argument being typed at the end of `text`, for completion: `(name, prefix so far)`.
pub fn argument_at_end<'a>(
    arguments: &'a [Argument],
    text: &str,
) -> Option<(&'a Argument, String)> {
    let words = split_words(text).ok()?;
    let ends_with_space = text.ends_with(char::is_whitespace);
    let (done, current) = match (ends_with_space, words.split_last()) {
        (false, Some((last, before))) => (before, last.clone()),
        _ => (&words[..], String::new()),
    };
    if let Some((name, value)) = current.split_once('=') {
        let argument = arguments.iter().find(|a| a.name == name)?;
        return Some((argument, value.to_string()));
    }
    let named: Vec<&str> = done
        .iter()
        .filter_map(|w| w.split_once('=').map(|(n, _)| n))
        .collect();
    let positional = done.iter().filter(|w| !w.contains('=')).count();
    let argument = arguments
        .iter()
        .filter(|a| !named.contains(&a.name.as_str()))
        .nth(positional)?;
    Some((argument, current))
}

/// A `prompts/get` result as the user message Pi sends: each message's content (text, images,
/// embedded resources as text); with several messages, each starts with its role.
pub fn prompt_messages(raw: &Value) -> Vec<Block> {
    let messages: Vec<&Value> = raw
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let several = messages.len() > 1;
    let mut content = Vec::new();
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let blocks: Vec<Block> = match message.get("content") {
            Some(Value::Array(items)) => {
                items.iter().filter_map(|item| block(item, None)).collect()
            }
            Some(item) => block(item, None).into_iter().collect(),
            None => vec![],
        };
        for (i, mut b) in blocks.into_iter().enumerate() {
            if several && i == 0 {
                match &mut b {
                    Block::Text(text) => *text = format!("[{role}] {text}"),
                    Block::Image { .. } => content.push(text_block(format!("[{role}]"))),
                }
            }
            content.push(b);
        }
    }
    if content.is_empty() {
        content.push(text_block("(the prompt is empty)"));
    }
    content
}

#[cfg(test)]
mod tests;
