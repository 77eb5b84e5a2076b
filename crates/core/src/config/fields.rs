//! The keys a config may hold. Anything else is tolerated: reported as a note (shown by
//! `pi-mcp doctor`), or as a warning when it looks like a misspelt key.

use super::server::describe;
use super::Level;
use crate::search::similarity;
use serde_json::{Map, Value};
use std::time::Duration;

/// The keys of one kind of object: those this version reads, and those pi-mcp-adapter reads
/// that this version does not use, each with what to use instead.
pub struct Vocabulary {
    pub used: &'static [&'static str],
    /// Also read here: the keys servers and settings share.
    shared: &'static [&'static str],
    adapter_only: &'static [(&'static str, &'static str)],
}

/// The client-side keys, a global setting and a per-server field each (see `client`).
const CLIENT: &[&str] = &[
    "elicitation",
    "sampling",
    "samplingAutoApprove",
    "roots",
    "logLevel",
    "tasks",
    "callTimeoutMs",
    "ui",
];

/// What to use instead of pi-mcp-adapter's Agent Plugins.
const NO_PLUGINS: &str =
    "Agent Plugins are not loaded here; copy the servers they declare into `mcpServers`";

pub const ROOT: Vocabulary = Vocabulary {
    used: &[
        "mcpServers",
        "mcp-servers",
        "imports",
        "settings",
        "autoEnableCodemode",
        "$schema",
    ],
    shared: &[],
    adapter_only: &[(
        "claudePlugins",
        "Claude plugin bundles are not loaded here; copy the servers of the plugin's `.mcp.json` into `mcpServers` (its skills are not loaded)",
    )],
};

pub const SERVER: Vocabulary = Vocabulary {
    used: &[
        "command",
        "args",
        "env",
        "envFile",
        "cwd",
        "inheritEnv",
        "type",
        "url",
        "socket",
        "headers",
        "requestHeadersCommand",
        "auth",
        "bearerToken",
        "bearerTokenEnv",
        "oauth",
        "caFile",
        "lifecycle",
        "idleTimeout",
        "requestTimeoutMs",
        "protocolVersion",
        "disabled",
        "enabled",
        "timeout",
        "exposure",
        "toolExposure",
        "debug",
        "exposeResources",
        "directTools",
        "includeTools",
        "excludeTools",
        "toolPrefix",
        "description",
        "shared",
        "sharedEnv",
        "approveTools",
        "searchKeywords",
        "trace",
    ],
    shared: CLIENT,
    adapter_only: &[
        ("bearerTokenStore", "the OS keyring's tokens are not read here; use `bearerTokenEnv`, or a `bearerToken` of `!<command that prints the token>`"),
        ("httpTransport", "not needed: a `url` server's transport is found by itself (Streamable HTTP, then the legacy SSE transport) and remembered"),
        ("pluginDataDir", NO_PLUGINS),
        ("literalEnv", "`env` values are read as everywhere else (`${VAR}` expanded, `!command` run); write `!!` for a value that starts with `!`"),
    ],
};

pub const SETTINGS: Vocabulary = Vocabulary {
    used: &[
        "toolPrefix",
        "requestTimeoutMs",
        "idleTimeout",
        "directTools",
        "outputGuard",
        "exposure",
        "autoAuth",
        "sharedServers",
        "shareWithSubagents",
        "startupWaitMs",
        "approveTools",
        "approvalTimeoutMs",
        "allowYesInsidePi",
        "disableProxyTool",
        "warnOnLargeDirectTools",
        "trace",
    ],
    shared: CLIENT,
    adapter_only: &[
        ("showStatusIcon", "the footer (`MCP 2/3 connected`) has no icon; ignored"),
        ("mcpFooterStatus", "the footer is `MCP 2/3 connected`, and absent without servers; ignored"),
        ("notifyOnStartupConnect", "no notice is posted when servers connect (the footer says it), as with `false`; ignored"),
        ("hostConfigDiscovery", "other tools' configs are read when listed: add `\"imports\": [\"cursor\", …]`, or run `/mcp setup`"),
        ("ancestorConfigRoots", "only the session directory's `.mcp.json` and `.pi/mcp.json` are read; start Pi in the project's root, or pass `--mcp-config <file>`"),
        ("agentPluginPaths", NO_PLUGINS),
        ("namespaceProxyTools", "there are no per-server proxy tools; the `mcp` tool takes `server`, and `exposure: \"direct\"` gives a server's tools Pi tools of their own"),
        ("strictDirectToolArguments", "not needed: arguments are always checked against the tool's schema, and converted where that is safe"),
        ("directToolResultDetails", "results carry no raw MCP result in `details`; the native API gives `structuredContent` as `structured`"),
        ("freezeDirectTools", "not needed: a Pi tool of ours is registered again only when its definition changes"),
        ("scriptMode", "there is no `mcpScript` tool; on Pi ≥ 0.99 `exposure: \"codemode\"` gives Pi's `codemode` scripts a server's tools"),
        ("jev", "semantic search (Jev) is not offered; the search finds related words offline"),
        ("toolResultRendering", "tool results are shown as Pi shows any tool's; ignored"),
        ("collapsedResultLines", "tool results are shown as Pi shows any tool's; ignored"),
        ("authRequiredMessage", "the message when a server needs a sign-in is ours (it names `/mcp login <server>`); ignored"),
        ("oauthCredentialStore", "sign-ins are kept in Pi's `mcp-auth.json` (0600, shared with Pi), not the OS keyring: sign in once per server with `/mcp login <server>`"),
        ("oauthDir", "pi-mcp-adapter's token files are read from `<agentDir>/mcp-oauth/` only; sign in again with `/mcp login <server>`"),
        ("exposeResources", "set `exposeResources` on each server"),
        ("projectServers", "not read here; ignored"),
    ],
};

/// The keys of a server's `oauth` object (pi-mcp-adapter's and Pi 1.5's).
pub const OAUTH: Vocabulary = Vocabulary {
    used: &[
        "grantType",
        "clientId",
        "clientSecret",
        "clientMetadataUrl",
        "clientRegistration",
        "clientName",
        "clientUri",
        "logoUri",
        "scope",
        "authorizationParams",
        "callbackPort",
        "callbackUrl",
        "redirectUri",
        "authServerMetadataUrl",
        "skipIssuerMetadataValidation",
    ],
    shared: &[],
    adapter_only: &[],
};

impl Vocabulary {
    /// What to report about `key`; `None` for a key this version reads.
    pub fn check(&self, key: &str) -> Option<(Level, String)> {
        if self.used.contains(&key) || self.shared.contains(&key) {
            return None;
        }
        if let Some((_, instead)) = self.adapter_only.iter().find(|(k, _)| *k == key) {
            return Some((
                Level::Note,
                format!("a pi-mcp-adapter option that pi-mcp-native does not use: {instead}"),
            ));
        }
        let known: Vec<&str> = self.used.iter().chain(self.shared).copied().collect();
        match closest(key, &known) {
            Some(known) => Some((
                Level::Warning,
                format!("unknown key; did you mean `{known}`? It is ignored as written"),
            )),
            None => Some((Level::Note, "unknown key; ignored".into())),
        }
    }
}

/// The candidate `word` is most likely a misspelling of, if any is close enough.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(|c| (similarity(&word, &c.to_lowercase()), *c))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Where a [`Reader`] reports, boxed.
pub type Report<'r> = Box<dyn FnMut(Level, &str, String) + 'r>;

/// Reads typed values from one object (`settings`, a server entry): a value of the wrong kind is
/// reported once, as a warning that says what is used instead. `null` counts as absent.
pub struct Reader<'a, R: FnMut(Level, &str, String)> {
    object: &'a Map<String, Value>,
    report: R,
}

impl<'a, R: FnMut(Level, &str, String)> Reader<'a, R> {
    pub fn new(object: &'a Map<String, Value>, report: R) -> Self {
        Reader { object, report }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    pub fn report(&mut self, level: Level, key: &str, message: String) {
        (self.report)(level, key, message);
    }

    fn wrong(&mut self, key: &str, expected: &str, got: &Value, using: &str) {
        let message = format!("must be {expected}, got {}; {using}", describe(got));
        self.report(Level::Warning, key, message);
    }

    /// `true` or `false`; `default` when absent or of another kind.
    pub fn flag(&mut self, key: &str, default: bool) -> bool {
        match self.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.wrong(key, "true or false", other, &format!("using {default}"));
                default
            }
        }
    }

    /// A number of milliseconds of at least 1.
    pub fn millis(&mut self, key: &str, default: Duration) -> Duration {
        match self.get(key) {
            None => default,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|ms| ms >= 1.0) => {
                Duration::from_millis(n.as_f64().unwrap_or_default() as u64)
            }
            Some(other) => {
                let using = format!("using {}", default.as_millis());
                self.wrong(key, "a number of milliseconds above 0", other, &using);
                default
            }
        }
    }

    /// A whole number of at least 1.
    pub fn count(&mut self, key: &str, default: u64) -> u64 {
        match self.get(key) {
            None => default,
            Some(value) => match value.as_u64().filter(|n| *n > 0) {
                Some(n) => n,
                None => {
                    let using = format!("using {default}");
                    self.wrong(key, "a positive whole number", value, &using);
                    default
                }
            },
        }
    }

    /// A string; `None` when absent or of another kind.
    pub fn string(&mut self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                self.wrong(key, "a string", other, "ignored");
                None
            }
        }
    }

    /// A list of strings; `None` when absent or of another kind.
    pub fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        let value = self.get(key)?;
        let items = strings(value);
        if items.is_none() {
            self.wrong(key, "a list of strings", value, "ignored");
        }
        items
    }

    /// An object whose values are lists of strings (`{"create_*": ["new", "add"]}`); an entry
    /// of another kind is left out with a warning.
    pub fn lists(&mut self, key: &str) -> Vec<(String, Vec<String>)> {
        let Some(value) = self.get(key) else {
            return vec![];
        };
        let Some(map) = value.as_object() else {
            let expected = "an object of lists of words, like {\"create_*\": [\"new\"]}";
            self.wrong(key, expected, value, "ignored");
            return vec![];
        };
        let mut out = vec![];
        for (name, words) in map {
            match strings(words) {
                Some(list) => out.push((name.clone(), list)),
                None => self.wrong(
                    &format!("{key}.{name}"),
                    "a list of strings",
                    words,
                    "ignored",
                ),
            }
        }
        out
    }
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_adapter_only_misspelt_and_unknown_keys() {
        assert_eq!(SERVER.check("command"), None);
        assert_eq!(SERVER.check("caFile"), None);
        let (level, message) = SERVER.check("bearerTokenStore").unwrap();
        assert_eq!(level, Level::Note);
        assert!(message.contains("use `bearerTokenEnv`"), "{message}");
        let (level, message) = SERVER.check("comand").unwrap();
        assert_eq!(level, Level::Warning);
        assert!(message.contains("did you mean `command`?"), "{message}");
        assert!(SERVER.check("envfile").unwrap().1.contains("`envFile`"));
        assert_eq!(
            SERVER.check("x-vendor-extension").unwrap(),
            (Level::Note, "unknown key; ignored".to_string())
        );
        assert_eq!(SETTINGS.check("outputGuard"), None);
        assert_eq!(SETTINGS.check("freezeDirectTools").unwrap().0, Level::Note);
        assert_eq!(closest("cursr", &["cursor", "codex"]), Some("cursor"));
        assert_eq!(closest("zed", &["cursor", "codex"]), None);
    }
}
