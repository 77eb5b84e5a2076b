//! A server given in Pi's own `pi mcp add` syntax (`<name> [options] --url <url>` or
//! `<name> [options] -- <command> [args…]`), turned into the entry Pi writes for it: the same
//! keys in the same order, so that a file means the same to Pi and to us.

use super::fields as key;
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
        self.entry.get(key::URL.name).and_then(Value::as_str)
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

/// The options given, with their values, in order.
struct Options<'w>(Vec<(&'w str, &'w str)>);

impl<'w> Options<'w> {
    fn all(&self, option: &str) -> Vec<&'w str> {
        self.0
            .iter()
            .filter(|(o, _)| *o == option)
            .map(|(_, v)| *v)
            .collect()
    }

    /// The last value given for `option`.
    fn one(&self, option: &str) -> Option<&'w str> {
        self.all(option).last().copied()
    }
}

/// The words split into the server's name, `--local`, the options and the command after `--`.
type Words<'w> = (Option<String>, bool, Options<'w>, Option<&'w [String]>);

/// Reads the words after `add`. An error says what is wrong with them, in Pi's words where Pi
/// has some.
pub fn parse(words: &[String]) -> Result<AddRequest, String> {
    let (name, local, options, command) = split(words)?;
    let name = name.ok_or("The server needs a name.")?;
    if !names::pi_accepts(&name) {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let mut entry = match (options.one("--url"), command.filter(|c| !c.is_empty())) {
        (None, Some(words)) => stdio_entry(words, &options)?,
        (Some(url), None) => remote_entry(&name, url, &options)?,
        _ => return Err("Give either --url <url> or -- <command> [args…].".into()),
    };
    if let Some(exposure) = options.one("--exposure") {
        if !EXPOSURES.contains(&exposure) {
            return Err(format!(
                "server \"{name}\": exposure must be one of {}",
                quoted(&EXPOSURES)
            ));
        }
        entry.insert(key::EXPOSURE.name.into(), json!(exposure));
    }
    if let Some(description) = options.one("--description") {
        entry.insert(key::DESCRIPTION.name.into(), json!(description));
    }
    Ok(AddRequest { name, local, entry })
}

fn split(words: &[String]) -> Result<Words<'_>, String> {
    let (mut name, mut local, mut options, mut command) = (None, false, vec![], None);
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
                options.push((word, value.as_str()));
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
    Ok((name, local, Options(options), command))
}

fn stdio_entry(words: &[String], options: &Options) -> Result<Map<String, Value>, String> {
    let remote_only = VALUE_OPTIONS.iter().filter(|o| o.starts_with("--oauth"));
    for option in ["--header", "--bearer-token-env-var"]
        .iter()
        .chain(remote_only)
    {
        if options.one(option).is_some() {
            return Err(format!("{option} only applies to remote servers (--url)."));
        }
    }
    let mut entry = Map::new();
    entry.insert(key::COMMAND.name.into(), json!(words[0]));
    if words.len() > 1 {
        entry.insert(key::ARGS.name.into(), json!(words[1..]));
    }
    let env = pairs("--env", &options.all("--env"))?;
    if !env.is_empty() {
        entry.insert(key::ENV.name.into(), Value::Object(env));
    }
    if let Some(cwd) = options.one("--cwd") {
        entry.insert(key::CWD.name.into(), json!(cwd));
    }
    Ok(entry)
}

fn remote_entry(name: &str, url: &str, options: &Options) -> Result<Map<String, Value>, String> {
    for option in ["--env", "--cwd"] {
        if options.one(option).is_some() {
            return Err(format!("{option} only applies to stdio servers."));
        }
    }
    let mut entry = Map::new();
    entry.insert(key::URL.name.into(), json!(url));
    let mut headers = pairs("--header", &options.all("--header"))?;
    if let Some(var) = options.one("--bearer-token-env-var") {
        headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
    }
    if !headers.is_empty() {
        entry.insert(key::HEADERS.name.into(), Value::Object(headers));
    }
    let oauth = oauth(name, options)?;
    if !oauth.is_empty() {
        entry.insert(key::OAUTH.name.into(), Value::Object(oauth));
    }
    Ok(entry)
}

/// The `oauth` object of Pi's `--oauth-…` options.
fn oauth(name: &str, options: &Options) -> Result<Map<String, Value>, String> {
    let one = |option: &str| options.one(option);
    let mut oauth = Map::new();
    let text = |key: &str, option: &str, oauth: &mut Map<String, Value>| {
        if let Some(value) = one(option) {
            oauth.insert(key.into(), json!(value));
        }
    };
    text(key::CLIENT_ID.name, "--oauth-client-id", &mut oauth);
    text(key::CLIENT_SECRET.name, "--oauth-client-secret", &mut oauth);
    if let Some(port) = one("--oauth-callback-port") {
        let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
            format!("server \"{name}\": oauth.callbackPort must be a port number")
        })?;
        oauth.insert(key::CALLBACK_PORT.name.into(), json!(port));
    }
    text(key::CLIENT_NAME.name, "--oauth-client-name", &mut oauth);
    if let Some(mode) = one("--oauth-client-registration") {
        if !REGISTRATIONS.contains(&mode) {
            return Err(format!(
                "server \"{name}\": oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\""
            ));
        }
        let named = [key::CLIENT_ID.name, key::CLIENT_NAME.name];
        if mode == "cimd" && named.iter().any(|k| oauth.contains_key(*k)) {
            return Err(format!("server \"{name}\": oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName"));
        }
        oauth.insert(key::CLIENT_REGISTRATION.name.into(), json!(mode));
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
