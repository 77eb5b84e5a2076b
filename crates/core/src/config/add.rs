//! A server given in Pi's own `pi mcp add` syntax (`<name> [options] --url <url>` or
//! `<name> [options] -- <command> [args…]`), turned into the entry Pi writes for it: the same
//! keys in the same order, so that a file means the same to Pi and to us.

use super::names;
use serde_json::{json, Map, Value};

/// What `add` was asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct AddRequest {
    pub name: String,
    /// `-l` / `--local`: the project's `.pi/mcp.json` instead of the user's file.
    pub local: bool,
    /// The entry as Pi writes it.
    pub entry: Map<String, Value>,
}

impl AddRequest {
    /// The URL of a remote server, as given.
    pub fn url(&self) -> Option<&str> {
        self.entry.get("url").and_then(Value::as_str)
    }
}

/// The options that take a value, in the order their keys are written.
const VALUE_OPTIONS: [&str; 12] = [
    "--url",
    "--env",
    "--cwd",
    "--header",
    "--bearer-token-env-var",
    "--oauth-client-id",
    "--oauth-client-secret",
    "--oauth-callback-port",
    "--oauth-client-name",
    "--oauth-client-registration",
    "--exposure",
    "--description",
];

const EXPOSURES: [&str; 4] = ["codemode", "deferred", "direct", "hidden"];
const REGISTRATIONS: [&str; 3] = ["auto", "dcr", "cimd"];

/// Reads the words after `add`. An error says what is wrong with them, in Pi's words where Pi
/// has some.
pub fn parse(words: &[String]) -> Result<AddRequest, String> {
    let mut name = None;
    let mut local = false;
    let mut options: Vec<(&str, &str)> = vec![];
    let mut command: Option<&[String]> = None;
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        match word {
            "--" => {
                command = Some(&words[i + 1..]);
                break;
            }
            "-l" | "--local" => local = true,
            _ if VALUE_OPTIONS.contains(&word) => {
                let value = words
                    .get(i + 1)
                    .filter(|v| v.as_str() != "--")
                    .ok_or_else(|| format!("{word} needs a value."))?;
                options.push((word, value));
                i += 1;
            }
            _ if word.starts_with('-') => return Err(format!("Unknown option {word}.")),
            _ if name.is_none() => name = Some(word.to_string()),
            _ => {
                return Err(format!(
                    "Unexpected argument \"{word}\": a command goes after `--`."
                ))
            }
        }
        i += 1;
    }
    let name = name.ok_or("The server needs a name.")?;
    if !names::pi_accepts(&name) {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let all = |option: &str| -> Vec<&str> {
        options
            .iter()
            .filter(|(o, _)| *o == option)
            .map(|(_, v)| *v)
            .collect()
    };
    let one = |option: &str| all(option).last().copied();
    let url = one("--url");
    let command = command.filter(|c| !c.is_empty());
    let mut entry = Map::new();
    match (url, command) {
        (Some(_), Some(_)) | (None, None) => {
            return Err("Give either --url <url> or -- <command> [args…].".into())
        }
        (None, Some(words)) => {
            for option in ["--header", "--bearer-token-env-var"].into_iter().chain(
                VALUE_OPTIONS
                    .iter()
                    .copied()
                    .filter(|o| o.starts_with("--oauth")),
            ) {
                if one(option).is_some() {
                    return Err(format!("{option} only applies to remote servers (--url)."));
                }
            }
            entry.insert("command".into(), json!(words[0]));
            if words.len() > 1 {
                entry.insert("args".into(), json!(words[1..]));
            }
            let env = pairs("--env", &all("--env"))?;
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
            if let Some(cwd) = one("--cwd") {
                entry.insert("cwd".into(), json!(cwd));
            }
        }
        (Some(url), None) => {
            for option in ["--env", "--cwd"] {
                if one(option).is_some() {
                    return Err(format!("{option} only applies to stdio servers."));
                }
            }
            entry.insert("url".into(), json!(url));
            let mut headers = pairs("--header", &all("--header"))?;
            if let Some(var) = one("--bearer-token-env-var") {
                headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
            let oauth = oauth(&name, &one)?;
            if !oauth.is_empty() {
                entry.insert("oauth".into(), Value::Object(oauth));
            }
        }
    }
    if let Some(exposure) = one("--exposure") {
        if !EXPOSURES.contains(&exposure) {
            return Err(format!(
                "server \"{name}\": exposure must be one of {}",
                quoted(&EXPOSURES)
            ));
        }
        entry.insert("exposure".into(), json!(exposure));
    }
    if let Some(description) = one("--description") {
        entry.insert("description".into(), json!(description));
    }
    Ok(AddRequest { name, local, entry })
}

/// The `oauth` object of Pi's `--oauth-…` options.
fn oauth<'a>(
    name: &str,
    one: &dyn Fn(&str) -> Option<&'a str>,
) -> Result<Map<String, Value>, String> {
    let mut oauth = Map::new();
    let text = |key: &str, option: &str, oauth: &mut Map<String, Value>| {
        if let Some(value) = one(option) {
            oauth.insert(key.into(), json!(value));
        }
    };
    text("clientId", "--oauth-client-id", &mut oauth);
    text("clientSecret", "--oauth-client-secret", &mut oauth);
    if let Some(port) = one("--oauth-callback-port") {
        let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
            format!("server \"{name}\": oauth.callbackPort must be a port number")
        })?;
        oauth.insert("callbackPort".into(), json!(port));
    }
    text("clientName", "--oauth-client-name", &mut oauth);
    if let Some(mode) = one("--oauth-client-registration") {
        if !REGISTRATIONS.contains(&mode) {
            return Err(format!(
                "server \"{name}\": oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\""
            ));
        }
        if mode == "cimd" && (oauth.contains_key("clientId") || oauth.contains_key("clientName")) {
            return Err(format!("server \"{name}\": oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName"));
        }
        oauth.insert("clientRegistration".into(), json!(mode));
    }
    Ok(oauth)
}

/// `KEY=VALUE` words as an object.
fn pairs(option: &str, words: &[&str]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    for word in words {
        match word.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                map.insert(key.to_string(), json!(value));
            }
            _ => return Err(format!("{option} expects KEY=VALUE, got \"{word}\".")),
        }
    }
    Ok(map)
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("\"{i}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Splits a command line typed after `/mcp add` into words as a shell would: spaces separate,
/// `'…'` and `"…"` quote (a backslash escapes in `"…"` and outside quotes).
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = vec![];
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("a ' quote is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => w.extend(chars.next()),
                        Some(c) => w.push(c),
                        None => return Err("a \" quote is not closed".into()),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split_words(text).unwrap()
    }

    fn entry(text: &str) -> Value {
        Value::Object(parse(&words(text)).unwrap().entry)
    }

    #[test]
    fn writes_what_pi_writes() {
        // `pi mcp add` of Pi 1.6.0 wrote these entries for the same words.
        assert_eq!(
            entry("fs --env A=1 --env 'B=${X}' --cwd ./sub --exposure direct --description \"Files here\" -- npx -y @modelcontextprotocol/server-filesystem ."),
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"A": "1", "B": "${X}"}, "cwd": "./sub", "exposure": "direct", "description": "Files here"})
        );
        assert_eq!(
            entry("docs --url https://example.com/mcp --header X-K=v --bearer-token-env-var DOCS_TOKEN"),
            json!({"url": "https://example.com/mcp", "headers": {"X-K": "v", "Authorization": "Bearer ${DOCS_TOKEN}"}})
        );
        assert_eq!(
            entry("oa --url https://example.com/mcp2 --oauth-client-id cid --oauth-client-secret '${S}' --oauth-callback-port 8765 --oauth-client-name N --oauth-client-registration dcr"),
            json!({"url": "https://example.com/mcp2", "oauth": {"clientId": "cid", "clientSecret": "${S}", "callbackPort": 8765, "clientName": "N", "clientRegistration": "dcr"}})
        );
        assert_eq!(
            entry("u --exposure hidden --description D --header A=b --oauth-client-id c --url https://x/mcp"),
            json!({"url": "https://x/mcp", "headers": {"A": "b"}, "oauth": {"clientId": "c"}, "exposure": "hidden", "description": "D"})
        );
        assert_eq!(entry("e -- echo"), json!({"command": "echo"}));
        let local = parse(&words("-l tools -- uvx tools-mcp")).unwrap();
        assert!(local.local);
        assert_eq!(local.name, "tools");
    }

    #[test]
    fn refuses_what_pi_refuses() {
        let error = |text: &str| parse(&words(text)).unwrap_err();
        assert_eq!(
            error("v --url https://x -- cmd"),
            "Give either --url <url> or -- <command> [args…]."
        );
        assert_eq!(
            error("x"),
            "Give either --url <url> or -- <command> [args…]."
        );
        assert_eq!(error("--url https://x"), "The server needs a name.");
        assert_eq!(
            error("w --env A=1 --url https://x"),
            "--env only applies to stdio servers."
        );
        assert_eq!(
            error("w --header A=1 -- x"),
            "--header only applies to remote servers (--url)."
        );
        assert_eq!(
            error("y --header A:b --url https://x"),
            "--header expects KEY=VALUE, got \"A:b\"."
        );
        assert_eq!(
            error("z --oauth-callback-port abc --url https://x"),
            "server \"z\": oauth.callbackPort must be a port number"
        );
        assert!(error("z2 --oauth-client-registration foo --url https://x")
            .contains("must be \"auto\""));
        assert!(
            error("z6 --oauth-client-registration cimd --oauth-client-id c --url https://x")
                .contains("cannot be combined")
        );
        assert_eq!(
            error("z4 --bogus --url https://x"),
            "Unknown option --bogus."
        );
        assert_eq!(
            error("e.x --url https://x"),
            "invalid server name \"e.x\" (use letters, digits, \"_\" and \"-\")"
        );
        assert!(
            error("h --exposure weird -- x").starts_with("server \"h\": exposure must be one of")
        );
        assert_eq!(error("a --url"), "--url needs a value.");
        assert_eq!(
            error("a b --url https://x"),
            "Unexpected argument \"b\": a command goes after `--`."
        );
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            words(r#"a "b c" 'd "e"' f\ g "h\"i" ''"#),
            ["a", "b c", "d \"e\"", "f g", "h\"i", ""]
        );
        assert!(split_words("a 'b").is_err());
    }
}
