//! A loopback authorization server with a protected MCP endpoint, for the OAuth tests: RFC 9728
//! and RFC 8414 metadata, dynamic registration, an authorization endpoint that approves at once
//! (redirecting to the client), a token endpoint (authorization code with PKCE, refresh, client
//! credentials), revocation, and `/mcp` answering JSON-RPC only with a valid token. Knobs make
//! it misbehave; everything it saw is recorded.

use crate::loopback::{read_head, request_line};
use base64::Engine;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iss {
    Correct,
    Omitted,
    Wrong,
}

#[derive(Clone, Debug)]
pub struct Knobs {
    /// Serve the protected resource metadata (else the server is a 2025-03-26 one).
    pub resource_metadata: bool,
    pub resource_override: Option<String>,
    /// The authorization server the resource names (default: this server).
    pub authorization_server: Option<String>,
    pub issuer_override: Option<String>,
    pub iss: Iss,
    pub iss_supported: bool,
    pub registration: bool,
    pub cimd: bool,
    pub expires_in: u64,
    pub refresh_tokens: bool,
    pub scopes_supported: Option<Vec<&'static str>>,
    pub as_scopes_supported: Option<Vec<&'static str>>,
    pub challenge_scope: Option<&'static str>,
    /// Scope `tools/call` needs (403 `insufficient_scope` without it).
    pub call_scope: Option<&'static str>,
    pub auth_methods: Vec<&'static str>,
    /// A client the server knows without registration: (id, secret).
    pub preregistered: Option<(&'static str, &'static str)>,
    /// How long the token endpoint takes.
    pub token_delay: Duration,
    /// The authorization server metadata, replaced wholesale.
    pub metadata_override: Option<Value>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            resource_metadata: true,
            resource_override: None,
            authorization_server: None,
            issuer_override: None,
            iss: Iss::Correct,
            iss_supported: true,
            registration: true,
            cimd: false,
            expires_in: 3600,
            refresh_tokens: true,
            scopes_supported: None,
            as_scopes_supported: None,
            challenge_scope: None,
            call_scope: None,
            auth_methods: vec!["none", "client_secret_basic", "client_secret_post"],
            preregistered: None,
            token_delay: Duration::ZERO,
            metadata_override: None,
        }
    }
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub authorize: Vec<HashMap<String, String>>,
    pub token: Vec<HashMap<String, String>>,
    /// `Authorization` headers of token requests.
    pub token_auth: Vec<Option<String>>,
    pub registrations: Vec<Value>,
    pub revoked: Vec<HashMap<String, String>>,
    pub mcp_auth: Vec<Option<String>>,
    pub paths: Vec<String>,
}

impl Seen {
    pub fn grants(&self, grant: &str) -> usize {
        self.token
            .iter()
            .filter(|f| f.get("grant_type").map(String::as_str) == Some(grant))
            .count()
    }
}

struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scope: Option<String>,
}

struct Issued {
    scope: Option<String>,
    expires: Instant,
}

#[derive(Default)]
struct Inner {
    seen: Seen,
    codes: HashMap<String, Grant>,
    access: HashMap<String, Issued>,
    refresh: HashMap<String, Option<String>>,
    clients: HashMap<String, Option<String>>,
    counter: u64,
}

pub struct TestServer {
    pub base: Url,
    pub knobs: Arc<Mutex<Knobs>>,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    pub async fn start(knobs: Knobs) -> TestServer {
        let socket = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = Url::parse(&format!(
            "http://127.0.0.1:{}",
            socket.local_addr().unwrap().port()
        ))
        .unwrap();
        let knobs = Arc::new(Mutex::new(knobs));
        let inner = Arc::new(Mutex::new(Inner::default()));
        let (k, i, b) = (knobs.clone(), inner.clone(), base.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = socket.accept().await {
                let (k, i, b) = (k.clone(), i.clone(), b.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, &b, &k, &i).await;
                });
            }
        });
        TestServer {
            base,
            knobs,
            inner,
            task,
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}mcp", self.base)
    }

    pub fn issuer(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    pub fn seen<R>(&self, f: impl FnOnce(&Seen) -> R) -> R {
        f(&self.inner.lock().seen)
    }
}

struct Request {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Request {
    fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(&self.body)
            .into_owned()
            .collect()
    }
}

async fn read(stream: &mut TcpStream) -> Option<Request> {
    let (head, mut body) = read_head(stream).await.ok()??;
    let (method, target) = request_line(&head)?;
    let url = Url::parse(&format!("http://x{target}")).ok()?;
    let headers: HashMap<String, String> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    while body.len() < length {
        let mut chunk = vec![0u8; length - body.len()];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        method: method.to_string(),
        path: url.path().to_string(),
        query: url.query_pairs().into_owned().collect(),
        headers,
        body,
    })
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
    }
}

async fn serve(
    mut stream: TcpStream,
    base: &Url,
    knobs: &Mutex<Knobs>,
    inner: &Mutex<Inner>,
) -> std::io::Result<()> {
    let Some(request) = read(&mut stream).await else {
        return Ok(());
    };
    inner.lock().seen.paths.push(request.path.clone());
    let knobs = knobs.lock().clone();
    if request.path == "/token" && !knobs.token_delay.is_zero() {
        tokio::time::sleep(knobs.token_delay).await;
    }
    let reply = route(&request, base, &knobs, inner);
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&reply.body).await?;
    stream.shutdown().await
}

fn issuer(base: &Url, knobs: &Knobs) -> String {
    knobs
        .issuer_override
        .clone()
        .unwrap_or_else(|| base.as_str().trim_end_matches('/').to_string())
}

fn route(request: &Request, base: &Url, knobs: &Knobs, inner: &Mutex<Inner>) -> Reply {
    let at = |path: &str| format!("{}{path}", base.as_str().trim_end_matches('/'));
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") if knobs.resource_metadata => {
            let mut prm = json!({
                "resource": knobs.resource_override.clone().unwrap_or_else(|| at("/mcp")),
                "authorization_servers": [knobs.authorization_server.clone().unwrap_or_else(|| at(""))],
            });
            if let Some(scopes) = &knobs.scopes_supported {
                prm["scopes_supported"] = json!(scopes);
            }
            json_reply(200, prm)
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            if let Some(doc) = &knobs.metadata_override {
                return json_reply(200, doc.clone());
            }
            let mut doc = json!({
                "issuer": issuer(base, knobs),
                "authorization_endpoint": at("/authorize"),
                "token_endpoint": at("/token"),
                "revocation_endpoint": at("/revoke"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": knobs.auth_methods,
                "authorization_response_iss_parameter_supported": knobs.iss_supported,
                "client_id_metadata_document_supported": knobs.cimd,
            });
            if knobs.registration {
                doc["registration_endpoint"] = json!(at("/register"));
            }
            if let Some(scopes) = &knobs.as_scopes_supported {
                doc["scopes_supported"] = json!(scopes);
            }
            json_reply(200, doc)
        }
        ("GET", "/big") => Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: vec![b' '; 10 * 1024 * 1024],
        },
        ("GET", "/loop") => Reply {
            status: 302,
            headers: vec![("Location".into(), "/loop".into())],
            body: vec![],
        },
        ("GET", "/authorize") => authorize(request, base, knobs, inner),
        ("POST", "/token") => token(request, knobs, inner),
        ("POST", "/register") if knobs.registration => register(request, inner),
        ("POST", "/revoke") => {
            inner.lock().seen.revoked.push(request.form());
            Reply {
                status: 200,
                headers: vec![],
                body: vec![],
            }
        }
        ("POST", "/mcp") => mcp(request, base, knobs, inner),
        _ => json_reply(404, json!({"error": "not_found"})),
    }
}

fn authorize(request: &Request, base: &Url, knobs: &Knobs, inner: &Mutex<Inner>) -> Reply {
    let q = &request.query;
    let mut inner = inner.lock();
    inner.seen.authorize.push(q.clone());
    inner.counter += 1;
    let code = format!("code-{}", inner.counter);
    inner.codes.insert(
        code.clone(),
        Grant {
            client_id: q.get("client_id").cloned().unwrap_or_default(),
            redirect_uri: q.get("redirect_uri").cloned().unwrap_or_default(),
            challenge: q.get("code_challenge").cloned().unwrap_or_default(),
            scope: q.get("scope").cloned(),
        },
    );
    let mut to = Url::parse(
        q.get("redirect_uri")
            .map_or("http://invalid", String::as_str),
    )
    .unwrap();
    {
        let mut pairs = to.query_pairs_mut();
        pairs.append_pair("code", &code);
        if let Some(state) = q.get("state") {
            pairs.append_pair("state", state);
        }
        match knobs.iss {
            Iss::Correct => {
                pairs.append_pair("iss", &issuer(base, knobs));
            }
            Iss::Wrong => {
                pairs.append_pair("iss", "https://evil.example");
            }
            Iss::Omitted => {}
        }
    }
    Reply {
        status: 302,
        headers: vec![("Location".into(), to.to_string())],
        body: vec![],
    }
}

/// The client a token request authenticates as, if its credentials are right.
fn client_of(
    request: &Request,
    form: &HashMap<String, String>,
    inner: &Inner,
    knobs: &Knobs,
) -> Option<String> {
    let (id, secret) = match request.headers.get("authorization") {
        Some(basic) if basic.starts_with("Basic ") => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(basic.trim_start_matches("Basic "))
                .ok()?;
            let text = String::from_utf8(decoded).ok()?;
            let (id, secret) = text.split_once(':')?;
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
            };
            (decode(id)?, decode(secret))
        }
        _ => (
            form.get("client_id")?.clone(),
            form.get("client_secret").cloned(),
        ),
    };
    if let Some((pre_id, pre_secret)) = knobs.preregistered {
        if id == pre_id {
            return (secret.as_deref() == Some(pre_secret)).then_some(id);
        }
    }
    if id.starts_with("https://") {
        return Some(id); // a Client ID Metadata Document
    }
    match inner.clients.get(&id)? {
        Some(expected) => (secret.as_ref() == Some(expected)).then_some(id),
        None => Some(id),
    }
}

fn token(request: &Request, knobs: &Knobs, inner: &Mutex<Inner>) -> Reply {
    let form = request.form();
    let mut inner = inner.lock();
    inner.seen.token.push(form.clone());
    inner
        .seen
        .token_auth
        .push(request.headers.get("authorization").cloned());
    let refuse = |code: &str| {
        json_reply(
            400,
            json!({"error": code, "error_description": format!("test server: {code}")}),
        )
    };
    let Some(client) = client_of(request, &form, &inner, knobs) else {
        return json_reply(401, json!({"error": "invalid_client"}));
    };
    let scope = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some(grant) = form.get("code").and_then(|c| inner.codes.remove(c)) else {
                return refuse("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(verifier.as_bytes()));
            if challenge != grant.challenge
                || Some(&grant.redirect_uri) != form.get("redirect_uri")
                || grant.client_id != client
            {
                return refuse("invalid_grant");
            }
            grant.scope
        }
        Some("refresh_token") => {
            let Some(scope) = form
                .get("refresh_token")
                .and_then(|r| inner.refresh.remove(r))
            else {
                return refuse("invalid_grant");
            };
            scope
        }
        Some("client_credentials") => form.get("scope").cloned(),
        _ => return refuse("unsupported_grant_type"),
    };
    inner.counter += 1;
    let n = inner.counter;
    let access = format!("at-{n}");
    inner.access.insert(
        access.clone(),
        Issued {
            scope: scope.clone(),
            expires: Instant::now() + Duration::from_secs(knobs.expires_in),
        },
    );
    let mut answer = Map::new();
    answer.insert("access_token".into(), json!(access));
    answer.insert("token_type".into(), json!("Bearer"));
    answer.insert("expires_in".into(), json!(knobs.expires_in));
    if let Some(scope) = &scope {
        answer.insert("scope".into(), json!(scope));
    }
    if knobs.refresh_tokens
        && form.get("grant_type").map(String::as_str) != Some("client_credentials")
    {
        let refresh = format!("rt-{n}");
        inner.refresh.insert(refresh.clone(), scope);
        answer.insert("refresh_token".into(), json!(refresh));
    }
    json_reply(200, Value::Object(answer))
}

fn register(request: &Request, inner: &Mutex<Inner>) -> Reply {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let mut inner = inner.lock();
    inner.seen.registrations.push(body.clone());
    // Unique across servers: a client id seen at another server is a reused one.
    static CLIENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    inner.counter += 1;
    let id = format!(
        "client-{}",
        CLIENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let method = body["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    let secret = (method != "none").then(|| format!("secret-{}", inner.counter));
    inner.clients.insert(id.clone(), secret.clone());
    let mut answer = json!({
        "client_id": id,
        "client_name": body["client_name"],
        "redirect_uris": body["redirect_uris"],
        "token_endpoint_auth_method": method,
    });
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
    }
    json_reply(201, answer)
}

fn mcp(request: &Request, base: &Url, knobs: &Knobs, inner: &Mutex<Inner>) -> Reply {
    let mut inner = inner.lock();
    let auth = request.headers.get("authorization").cloned();
    inner.seen.mcp_auth.push(auth.clone());
    let prm = format!("{}.well-known/oauth-protected-resource/mcp", base);
    let challenge = |error: Option<&str>, scope: Option<&str>| {
        let mut value = format!("Bearer resource_metadata=\"{prm}\"");
        if let Some(scope) = scope {
            value.push_str(&format!(", scope=\"{scope}\""));
        }
        if let Some(error) = error {
            value.push_str(&format!(", error=\"{error}\""));
        }
        value
    };
    let token = auth.as_deref().and_then(|a| a.strip_prefix("Bearer "));
    let valid = token
        .and_then(|t| inner.access.get(t))
        .filter(|issued| issued.expires > Instant::now());
    let Some(issued) = valid else {
        let mut reply = json_reply(401, json!({"error": "invalid_token"}));
        reply.headers.push((
            "WWW-Authenticate".into(),
            challenge(None, knobs.challenge_scope),
        ));
        return reply;
    };
    let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("");
    if method == "tools/call" {
        if let Some(needed) = knobs.call_scope {
            let granted = issued.scope.as_deref().unwrap_or("");
            if !granted.split_whitespace().any(|s| s == needed) {
                let mut reply = json_reply(403, json!({"error": "insufficient_scope"}));
                reply.headers.push((
                    "WWW-Authenticate".into(),
                    challenge(Some("insufficient_scope"), Some(needed)),
                ));
                return reply;
            }
        }
    }
    let Some(id) = message.get("id").cloned() else {
        return Reply {
            status: 202,
            headers: vec![],
            body: vec![],
        };
    };
    let result = match method {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-test", "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            json!({"content": [{"type": "text", "text": format!("token {}", token.unwrap_or(""))}]})
        }
        _ => json!({}),
    };
    json_reply(200, json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A browser that approves: follows the authorization redirect to the client's listener and
/// returns the status of the page it shows.
pub async fn browse(url: String) -> u16 {
    let client = pi_mcp_connection::pool::http_client_builder(None, Duration::from_secs(5))
        .unwrap()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = client.get(&url).send().await.unwrap();
    let Some(location) = answer.headers().get("location") else {
        return answer.status().as_u16();
    };
    let location = location.to_str().unwrap().to_string();
    client
        .get(location)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// A server answering every request with `status` (a redirect) to `to`; stops when dropped.
pub struct Redirector {
    pub url: Url,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Redirector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn redirector(to: String, status: u16) -> Redirector {
    let socket = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!(
        "http://127.0.0.1:{}/mcp",
        socket.local_addr().unwrap().port()
    ))
    .unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = socket.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let _ = read(&mut stream).await;
                let head = format!("HTTP/1.1 {status} Redirect\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    Redirector { url, task }
}
