//! The keys a config may hold. Anything else is tolerated: reported as a note (shown by
//! `pi-mcp doctor`), or as a warning when it looks like a misspelt key.

use super::server::describe;
use super::Level;
use crate::search::similarity;
use serde_json::{Map, Value};
use std::time::Duration;

/// The keys of one kind of object: those this version reads, and those pi-mcp-adapter reads
/// that this version does not use.
pub struct Vocabulary {
    pub used: &'static [&'static str],
    /// Also read here: the keys servers and settings share.
    shared: &'static [&'static str],
    adapter_only: &'static [&'static str],
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
];

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
    adapter_only: &["claudePlugins"],
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
        "headers",
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
        "socket",
        "shared",
        "sharedEnv",
        "approveTools",
    ],
    shared: CLIENT,
    adapter_only: &[
        "requestHeadersCommand",
        "bearerTokenStore",
        "searchKeywords",
        "trace",
        "httpTransport",
        "pluginDataDir",
        "literalEnv",
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
    ],
    shared: CLIENT,
    adapter_only: &[
        "showStatusIcon",
        "mcpFooterStatus",
        "notifyOnStartupConnect",
        "hostConfigDiscovery",
        "ancestorConfigRoots",
        "agentPluginPaths",
        "namespaceProxyTools",
        "strictDirectToolArguments",
        "directToolResultDetails",
        "warnOnLargeDirectTools",
        "freezeDirectTools",
        "disableProxyTool",
        "scriptMode",
        "jev",
        "toolResultRendering",
        "collapsedResultLines",
        "authRequiredMessage",
        "trace",
        "oauthCredentialStore",
        "oauthDir",
        "exposeResources",
        "projectServers",
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
        if self.adapter_only.contains(&key) {
            return Some((
                Level::Note,
                "a pi-mcp-adapter option that pi-mcp-native does not use; ignored".into(),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_adapter_only_misspelt_and_unknown_keys() {
        assert_eq!(SERVER.check("command"), None);
        assert_eq!(SERVER.check("caFile"), None);
        assert_eq!(
            SERVER.check("requestHeadersCommand").unwrap().0,
            Level::Note
        );
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
