//! Pi's OAuth credential store, `<agentDir>/mcp-auth.json`, in Pi 1.5.2's format, so that one
//! sign-in serves Pi's built-in MCP and us: a JSON object of per-server states under the key
//! `mcp__<name>|<server url>` (older Pi versions used the URL alone), each
//! `{ serverUrl, tokens, tokensExpireAt, clientInformation, discovery, … }`. Every change is a
//! read-modify-write under Pi's lock on the file; fields we do not know are kept.

use super::lock::{self, LockError};
use pi_mcp_connection::secret::Secret;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use url::Url;

pub const FILE_NAME: &str = "mcp-auth.json";
/// Past this the file is not a credential store (a symlink to `/dev/zero`, say): not read.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// Where one server's state lives in the store, and its refresh lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerKey {
    pub key: String,
    /// The URL alone: the key older Pi versions wrote.
    legacy: String,
    /// The URL as Pi serializes it (WHATWG), stored as the state's `serverUrl`.
    pub server_url: String,
}

impl ServerKey {
    pub fn new(name: &str, url: &str) -> Result<ServerKey, String> {
        let server_url = Url::parse(url)
            .map_err(|e| format!("the server URL is not valid ({e})"))?
            .to_string();
        Ok(ServerKey {
            key: format!("mcp__{}|{server_url}", name.replace('-', "_")),
            legacy: server_url.clone(),
            server_url,
        })
    }

    /// `<agentDir>/mcp-auth-refresh-<first 16 hex digits of sha256(key)>`, Pi's per-server lock.
    pub fn refresh_lock(&self, agent_dir: &Path) -> PathBuf {
        let digest = Sha256::digest(self.key.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        agent_dir.join(format!("mcp-auth-refresh-{hex}"))
    }
}

/// Tokens as stored (Pi's `tokens` plus `tokensExpireAt`).
#[derive(Clone, Debug, PartialEq)]
pub struct Tokens {
    pub access: Secret,
    pub refresh: Option<Secret>,
    /// The granted scope (the requested one when the server did not say).
    pub scope: Option<String>,
    /// Epoch milliseconds.
    pub expires_at: Option<f64>,
    /// How long the access token was issued for (ms), when the server said.
    pub lifetime: Option<f64>,
}

impl Tokens {
    /// Whether the access token expires within `skew_ms` of `now_ms`.
    pub fn expiring(&self, now_ms: f64, skew_ms: f64) -> bool {
        self.expires_at.is_some_and(|at| at - skew_ms <= now_ms)
    }

    pub fn bearer(&self) -> Secret {
        Secret::new(format!("Bearer {}", self.access.expose()))
    }
}

/// A token endpoint's answer, as much of it as is stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Issued {
    pub access: Secret,
    pub token_type: String,
    pub expires_in: Option<f64>,
    pub scope: Option<String>,
    pub refresh: Option<Secret>,
    pub id_token: Option<Secret>,
}

/// One server's state: Pi's object, accessed by field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State(Map<String, Value>);

impl State {
    fn new(server_url: &str) -> State {
        let mut map = Map::new();
        map.insert("serverUrl".into(), json!(server_url));
        State(map)
    }

    pub fn tokens(&self) -> Option<Tokens> {
        let tokens = self.0.get("tokens")?.as_object()?;
        let text = |key: &str| {
            tokens
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        Some(Tokens {
            access: Secret::new(text("access_token")?),
            refresh: text("refresh_token").map(Secret::new),
            scope: text("scope").map(str::to_string),
            expires_at: self.0.get("tokensExpireAt").and_then(Value::as_f64),
            lifetime: tokens
                .get("expires_in")
                .and_then(Value::as_f64)
                .map(|s| s * 1000.0),
        })
    }

    /// Stores what the token endpoint issued at `now_ms`. Without a new refresh token or scope
    /// the previous ones stay (a refresh need not repeat them); `requested_scope` stands in for
    /// a scope the server did not state.
    pub fn set_tokens(&mut self, issued: &Issued, requested_scope: Option<&str>, now_ms: f64) {
        let previous = self.tokens();
        let mut tokens = Map::new();
        tokens.insert("access_token".into(), json!(issued.access.expose()));
        tokens.insert("token_type".into(), json!(issued.token_type));
        if let Some(seconds) = issued.expires_in {
            tokens.insert("expires_in".into(), json!(seconds));
        }
        let scope = issued
            .scope
            .clone()
            .or_else(|| requested_scope.map(str::to_string))
            .or_else(|| previous.as_ref().and_then(|p| p.scope.clone()));
        if let Some(scope) = scope {
            tokens.insert("scope".into(), json!(scope));
        }
        let refresh = issued
            .refresh
            .clone()
            .or_else(|| previous.and_then(|p| p.refresh));
        if let Some(refresh) = refresh {
            tokens.insert("refresh_token".into(), json!(refresh.expose()));
        }
        if let Some(id) = &issued.id_token {
            tokens.insert("id_token".into(), json!(id.expose()));
        }
        self.0.insert("tokens".into(), Value::Object(tokens));
        match issued.expires_in {
            Some(seconds) => {
                self.0
                    .insert("tokensExpireAt".into(), json!(now_ms + seconds * 1000.0));
            }
            None => {
                self.0.remove("tokensExpireAt");
            }
        }
    }

    pub fn clear_tokens(&mut self) {
        self.0.remove("tokens");
        self.0.remove("tokensExpireAt");
    }

    /// The registered client (a dynamic registration's answer, or a Client ID Metadata
    /// Document's URL as `client_id`).
    pub fn client(&self) -> Option<&Map<String, Value>> {
        self.0.get("clientInformation")?.as_object()
    }

    pub fn set_client(&mut self, client: Map<String, Value>) {
        self.0
            .insert("clientInformation".into(), Value::Object(client));
    }

    pub fn clear_client(&mut self) {
        self.0.remove("clientInformation");
    }

    /// Pi's cached discovery: `{ authorizationServerUrl, authorizationServerMetadata,
    /// resourceMetadata, resourceMetadataUrl? }`.
    pub fn discovery(&self) -> Option<&Map<String, Value>> {
        self.0.get("discovery")?.as_object()
    }

    pub fn set_discovery(&mut self, discovery: Map<String, Value>) {
        self.0.insert("discovery".into(), Value::Object(discovery));
    }

    /// The issuer of the authorization server the stored client and tokens belong to.
    pub fn issuer(&self) -> Option<&str> {
        self.discovery()?
            .get("authorizationServerMetadata")?
            .get("issuer")?
            .as_str()
    }
}

#[derive(Debug)]
pub enum StoreError {
    /// The file is not a JSON object: never overwritten.
    Corrupt(PathBuf, String),
    Io(PathBuf, io::Error),
    Lock(LockError),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Corrupt(path, why) => write!(
                f,
                "{} is not a valid credential store ({why}); fix or delete it, then sign in again",
                path.display()
            ),
            StoreError::Io(path, e) => write!(f, "cannot use {}: {e}", path.display()),
            StoreError::Lock(e) => e.fmt(f),
        }
    }
}

/// `<agentDir>/mcp-auth.json`.
#[derive(Clone, Debug)]
pub struct Store {
    agent_dir: PathBuf,
}

impl Store {
    pub fn new(agent_dir: &Path) -> Store {
        Store {
            agent_dir: agent_dir.to_path_buf(),
        }
    }

    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    pub fn path(&self) -> PathBuf {
        self.agent_dir.join(FILE_NAME)
    }

    /// The server's state (under its key, else the legacy one); `None` when there is none or it
    /// belongs to another URL.
    pub fn load(&self, key: &ServerKey) -> Result<Option<State>, StoreError> {
        if !self.path().exists() {
            return Ok(None);
        }
        self.locked(|states| Ok((own(states, key).map(|(_, s)| s), false)))
    }

    /// Changes the server's state (a fresh one when there is none) and writes it back; a state
    /// found under the legacy key moves to the server's key, as Pi does.
    pub fn update<R>(
        &self,
        key: &ServerKey,
        change: impl FnOnce(&mut State) -> R,
    ) -> Result<R, StoreError> {
        self.locked(|states| {
            let (found_under, mut state) =
                own(states, key).unwrap_or_else(|| (None, State::new(&key.server_url)));
            let result = change(&mut state);
            if found_under.as_deref() == Some(key.legacy.as_str()) {
                states.remove(&key.legacy);
            }
            states.insert(key.key.clone(), Value::Object(state.0));
            Ok((result, true))
        })
    }

    /// Deletes the server's state; returns what was there.
    pub fn remove(&self, key: &ServerKey) -> Result<Option<State>, StoreError> {
        if !self.path().exists() {
            return Ok(None);
        }
        self.locked(|states| {
            let found = own(states, key);
            if let Some((Some(under), _)) = &found {
                states.remove(under);
            }
            let changed = found.is_some();
            Ok((found.map(|(_, s)| s), changed))
        })
    }

    /// The file's modification time and size: a cheap way to notice a write by another process.
    pub fn stamp(&self) -> Option<(std::time::SystemTime, u64)> {
        let meta = std::fs::metadata(self.path()).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// Runs `f` on the parsed file under Pi's lock; writes the result back when `f` says so.
    fn locked<R>(
        &self,
        f: impl FnOnce(&mut Map<String, Value>) -> Result<(R, bool), StoreError>,
    ) -> Result<R, StoreError> {
        let path = self.path();
        let io_error = |e| StoreError::Io(path.clone(), e);
        pi_mcp_connection::atomic_file::create_private_dir(&self.agent_dir).map_err(io_error)?;
        if !path.exists() {
            // Pi creates it empty before locking it; its lock is on the resolved path.
            match pi_mcp_connection::atomic_file::open_private(&path) {
                Ok(mut file) => io::Write::write_all(&mut file, b"{}").map_err(io_error)?,
                Err(e) => return Err(io_error(e)),
            }
        }
        let real = std::fs::canonicalize(&path).map_err(io_error)?;
        let _lock = lock::acquire_blocking(&real, lock::STORE).map_err(StoreError::Lock)?;
        let bytes = pi_mcp_connection::bounded_read::found(&real, MAX_FILE)
            .map_err(|e| StoreError::Corrupt(path.clone(), e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        let mut states = parse(&text).map_err(|why| StoreError::Corrupt(path.clone(), why))?;
        let (result, write) = f(&mut states)?;
        if write {
            let mut text = serde_json::to_string_pretty(&Value::Object(states))
                .map_err(|e| io_error(io::Error::other(e)))?;
            text.push('\n');
            pi_mcp_connection::atomic_file::write(&real, text.as_bytes()).map_err(io_error)?;
        }
        Ok(result)
    }
}

fn parse(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            pi_mcp_connection::value_kind::value_kind(&other)
        )),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// The server's state and the key it was found under. A state whose `serverUrl` names another
/// URL is not the server's (Pi ignores it too).
fn own(states: &Map<String, Value>, key: &ServerKey) -> Option<(Option<String>, State)> {
    let under = [&key.key, &key.legacy]
        .into_iter()
        .find(|k| states.get(k.as_str()).is_some_and(Value::is_object))?;
    let state = states.get(under.as_str())?.as_object()?;
    if state
        .get("serverUrl")
        .and_then(Value::as_str)
        .is_some_and(|url| url != key.server_url)
    {
        return None;
    }
    Some((Some(under.clone()), State(state.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pi-mcp-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn issued(access: &str, refresh: Option<&str>, expires_in: Option<f64>) -> Issued {
        Issued {
            access: Secret::new(access),
            token_type: "Bearer".into(),
            expires_in,
            scope: None,
            refresh: refresh.map(Secret::new),
            id_token: None,
        }
    }

    #[test]
    fn keys_are_pis() {
        let key = ServerKey::new("my-server", "HTTPS://Example.com:443/mcp").unwrap();
        assert_eq!(key.key, "mcp__my_server|https://example.com/mcp");
        assert_eq!(key.server_url, "https://example.com/mcp");
        let key = ServerKey::new("s", "http://127.0.0.1:3000").unwrap();
        assert_eq!(key.key, "mcp__s|http://127.0.0.1:3000/");
        // sha256("mcp__s|http://127.0.0.1:3000/"), first 16 hex digits, as Pi computes it.
        let lock = key.refresh_lock(Path::new("/a"));
        let name = lock.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("mcp-auth-refresh-") && name.len() == 33,
            "{name}"
        );
    }

    #[test]
    fn written_in_pis_format_and_others_kept() {
        let dir = scratch("format");
        let store = Store::new(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            store.path(),
            r#"{"mcp__other|https://o.example/": {"serverUrl":"https://o.example/","tokens":{"access_token":"o"}}}"#,
        )
        .unwrap();
        let key = ServerKey::new("s", "https://h.example/mcp").unwrap();
        store
            .update(&key, |s| {
                s.set_tokens(
                    &issued("at-1", Some("rt-1"), Some(3600.0)),
                    Some("a b"),
                    1000.0,
                )
            })
            .unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
        assert_eq!(
            written[&key.key],
            json!({
                "serverUrl": "https://h.example/mcp",
                "tokens": {"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600.0,
                           "scope": "a b", "refresh_token": "rt-1"},
                "tokensExpireAt": 3_601_000.0
            })
        );
        assert_eq!(
            written["mcp__other|https://o.example/"]["tokens"]["access_token"],
            "o"
        );
        // A refresh without a new refresh token or scope keeps the old ones.
        store
            .update(&key, |s| {
                s.set_tokens(&issued("at-2", None, None), None, 5.0)
            })
            .unwrap();
        let tokens = store.load(&key).unwrap().unwrap().tokens().unwrap();
        assert_eq!(tokens.access.expose(), "at-2");
        assert_eq!(tokens.refresh.unwrap().expose(), "rt-1");
        assert_eq!(tokens.scope.as_deref(), Some("a b"));
        assert_eq!(tokens.expires_at, None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn legacy_keys_move_and_other_urls_are_not_ours() {
        let dir = scratch("legacy");
        let store = Store::new(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let key = ServerKey::new("s", "https://h.example/mcp").unwrap();
        std::fs::write(
            store.path(),
            r#"{"https://h.example/mcp": {"tokens":{"access_token":"old"}}}"#,
        )
        .unwrap();
        let state = store.load(&key).unwrap().unwrap();
        assert_eq!(state.tokens().unwrap().access.expose(), "old");
        store.update(&key, |_| ()).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
        assert!(written.get("https://h.example/mcp").is_none());
        assert_eq!(written[&key.key]["tokens"]["access_token"], "old");
        // A state recorded for another URL under this key is not used.
        let moved = ServerKey::new("s", "https://h.example/other").unwrap();
        std::fs::write(
            store.path(),
            format!(
                r#"{{"{}": {{"serverUrl":"https://h.example/mcp","tokens":{{"access_token":"x"}}}}}}"#,
                moved.key
            ),
        )
        .unwrap();
        assert_eq!(store.load(&moved).unwrap(), None);
        assert!(store.remove(&key).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_store_is_reported_and_left_alone() {
        let dir = scratch("corrupt");
        let store = Store::new(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(store.path(), "{ not json").unwrap();
        let key = ServerKey::new("s", "https://h.example/mcp").unwrap();
        let err = store.update(&key, |_| ()).unwrap_err().to_string();
        assert!(
            err.contains("mcp-auth.json is not a valid credential store"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{ not json");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
