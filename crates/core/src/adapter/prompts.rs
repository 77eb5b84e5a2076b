//! Servers' prompts for people: each a slash command `/mcp__<server>__<prompt> [args]` (known
//! from the cache, so registered before any server starts), run into the user message it
//! expands to, with completion of argument names and, where the server offers
//! `completion/complete`, of values; and the listing `pi-mcp prompts` and `/mcp prompts` show.

use super::details::*;
use super::reach::Need;
use super::reach::Purpose;
use super::Kernel;
use super::Mode;
use super::{ErrorCode, Outcome};
use crate::approval::Subject;
use crate::prompts::{self, Argument};
use pi_mcp_connection::pool::{Connection, RequestError, RequestOptions};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long completing a value may take (a person is typing).
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(3);
/// Completions offered at once, of names and of values each.
const MAX_COMPLETIONS: usize = 50;

/// A prompt as a command to register.
/// JavaScript gets it as its mirror in the binding (`src/binding/mirror.rs`), which documents
/// each field.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptCommand {
    pub name: String,
    pub server: String,
    pub prompt: String,
    pub description: String,
}

/// A completion of what was typed after a command: the whole new text, and what to show.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    pub value: String,
    pub label: String,
}

/// Servers' prompts: the commands, running and completing them, the listing.
pub struct Prompts<'a> {
    kernel: &'a Arc<Kernel>,
}

super::borrows_kernel!(Prompts);

/// A prompt a server lists, found by its command.
struct Found {
    server: String,
    prompt: String,
    arguments: Vec<Argument>,
}

impl Prompts<'_> {
    /// Every prompt of every enabled server whose prompts are known, as a command.
    pub fn prompt_commands(&self) -> Vec<PromptCommand> {
        let mut commands = Vec::new();
        for server in self.kernel.servers.names(false) {
            let Some(meta) = self.kernel.servers.meta(server) else {
                continue;
            };
            for prompt in meta.prompts.iter().flatten() {
                let Some(name) = prompt.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let command = prompts::command_name(server, name);
                let description = prompts::description(
                    server,
                    &command,
                    prompt.get("description").and_then(Value::as_str),
                    &prompts::arguments(prompt),
                );
                commands.push(PromptCommand {
                    name: command,
                    server: server.to_string(),
                    prompt: name.to_string(),
                    description,
                });
            }
        }
        commands
    }

    fn find_prompt(&self, command: &str) -> Option<Found> {
        self.kernel
            .servers
            .names(false)
            .into_iter()
            .find_map(|server| {
                let meta = self.kernel.servers.meta(server)?;
                let prompt = meta.prompts.iter().flatten().find(|p| {
                    p.get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| prompts::command_name(server, n) == command)
                })?;
                Some(Found {
                    server: server.to_string(),
                    prompt: prompt.get("name")?.as_str()?.to_string(),
                    arguments: prompts::arguments(prompt),
                })
            })
    }

    /// Runs command `command` with what was typed after it: the user message the prompt
    /// expands to, or why not (its usage, or that the server no longer offers it).
    pub async fn run_prompt(&self, command: &str, text: &str) -> Outcome {
        let Some(found) = self.find_prompt(command) else {
            return Outcome::error(
                Mode::Prompt,
                ErrorCode::ToolNotFound,
                format!("/{command}: its server no longer offers this prompt (it withdrew it, or its config changed)."),
            );
        };
        match prompts::parse_arguments(command, &found.arguments, text) {
            Ok(args) => self.get_prompt(&found.server, &found.prompt, args).await,
            Err(why) => {
                Outcome::error(Mode::Prompt, ErrorCode::InvalidArgs, why).with_server(found.server)
            }
        }
    }

    /// `prompts/get`: the prompt's messages as one user message.
    pub async fn get_prompt(&self, server: &str, name: &str, args: Map<String, Value>) -> Outcome {
        // Prompt arguments are strings.
        let args: Map<String, Value> = args
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(_) => (k, v),
                other => (k, Value::String(other.to_string())),
            })
            .collect();
        let subject = Subject::Prompt { server, name };
        let shown = Value::Object(args.clone());
        if let Err(outcome) = self
            .kernel
            .approved(Mode::Prompt, subject, &shown, None)
            .await
        {
            return outcome;
        }
        let conn = match self.kernel.ready(server, Need::Handshake).await {
            Ok(ready) => ready.conn,
            Err(why) => return why.outcome(Mode::Prompt, server),
        };
        let params = json!({ "name": name, "arguments": args });
        let outcome = match conn
            .request("prompts/get", params, self.kernel.plain_request(server))
            .await
        {
            Ok(raw) => {
                let mut outcome = Outcome::text(Mode::Prompt, "");
                outcome.content = prompts::prompt_messages(&raw);
                outcome
            }
            Err(e) => Outcome::error(
                Mode::Prompt,
                ErrorCode::from(&e),
                format!("Cannot get prompt {name} of {server}: {e}"),
            ),
        };
        outcome.with_server(server).with_prompt(name)
    }

    /// Completions of what was typed after `command`: argument names (`name=`) and, where the
    /// server completes values, values of the argument being typed.
    pub async fn complete_prompt(&self, command: &str, text: &str) -> Vec<Completion> {
        let Some(found) = self.find_prompt(command) else {
            return vec![];
        };
        let Some((argument, typed)) = prompts::argument_at_end(&found.arguments, text) else {
            return vec![];
        };
        let cut = text.len() - typed.len();
        let (before, current) = text.split_at(cut);
        let naming = !current.contains('=') && !text.ends_with(char::is_whitespace);
        let mut out: Vec<Completion> = Vec::new();
        if naming || current.is_empty() {
            out.extend(
                found
                    .arguments
                    .iter()
                    .filter(|a| {
                        a.name.starts_with(current) && !before.contains(&format!("{}=", a.name))
                    })
                    .take(MAX_COMPLETIONS)
                    .map(|a| Completion {
                        value: format!("{before}{}=", a.name),
                        label: format!("{}=", a.name),
                    }),
            );
        }
        let values = tokio::time::timeout(
            COMPLETION_TIMEOUT,
            self.complete_value(&found, &argument.name, &typed, text),
        )
        .await
        .unwrap_or_default();
        out.extend(values.into_iter().map(|v| Completion {
            value: format!("{before}{}", quote(&v)),
            label: v,
        }));
        out
    }

    /// `completion/complete` for one argument, where the server offers it.
    async fn complete_value(
        &self,
        found: &Found,
        argument: &str,
        typed: &str,
        text: &str,
    ) -> Vec<String> {
        let Ok(ready) = self.kernel.ready(&found.server, Need::Handshake).await else {
            return vec![];
        };
        if !ready.conn.completes() {
            return vec![];
        }
        let given = prompts::assign("", &found.arguments, text).unwrap_or_default();
        completions(
            &ready.conn,
            found,
            argument,
            typed,
            given,
            self.kernel.plain_request(&found.server),
        )
        .await
        .unwrap_or_default()
    }
}

async fn completions(
    conn: &Connection,
    found: &Found,
    argument: &str,
    typed: &str,
    given: Map<String, Value>,
    opts: RequestOptions,
) -> Result<Vec<String>, RequestError> {
    let params = json!({
        "ref": { "type": "ref/prompt", "name": found.prompt },
        "argument": { "name": argument, "value": typed },
        "context": { "arguments": given },
    });
    let raw = conn.request("completion/complete", params, opts).await?;
    Ok(raw
        .pointer("/completion/values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .take(MAX_COMPLETIONS)
        .collect())
}

/// A value as it must be typed: quoted when it holds white space or quotes.
fn quote(value: &str) -> String {
    match value.contains(char::is_whitespace) || value.contains(['"', '\'']) {
        true => format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\"")),
        false => value.to_string(),
    }
}

impl Prompts<'_> {
    /// Every prompt of `server` (or of every enabled server) as the command that runs it;
    /// servers not known yet are listed first (every server's under the listing bound).
    pub async fn prompts(&self, server: Option<&str>) -> Outcome {
        let names: Vec<String> = match server {
            Some(name) => match self.kernel.servers.enabled(name) {
                Ok(_) => vec![name.to_string()],
                Err(why) => return why.outcome(Mode::Prompts, name),
            },
            None => self
                .kernel
                .servers
                .names(false)
                .into_iter()
                .map(str::to_string)
                .collect(),
        };
        let mut lines = Vec::new();
        let mut listed = Vec::new();
        let listing = self.kernel.list_unknown(server, None, Purpose::Look).await;
        for name in &names {
            if let Some(why) = listing.failure(name) {
                lines.push(format!("{name}: {}", why.reason(name)));
                continue;
            }
            if listing.pending.contains(name) {
                lines.push(format!("{name}: still being listed; ask again in a moment"));
                continue;
            }
            let commands: Vec<PromptCommand> = self
                .prompt_commands()
                .into_iter()
                .filter(|c| &c.server == name)
                .collect();
            lines.push(match commands.len() {
                0 => format!("{name}: no prompts"),
                1 => format!("{name}: 1 prompt"),
                n => format!("{name}: {n} prompts"),
            });
            lines.extend(
                commands
                    .iter()
                    .map(|c| format!("- /{}: {}", c.name, c.description)),
            );
            listed.extend(commands.iter().map(|c| ListedPrompt {
                server: c.server.clone(),
                prompt: c.prompt.clone(),
                command: c.name.clone(),
            }));
        }
        if lines.is_empty() {
            lines.push("No MCP servers are configured.".into());
        }
        Outcome::text(Mode::Prompts, lines.join("\n")).with_part(PromptsDetails { prompts: listed })
    }
}
