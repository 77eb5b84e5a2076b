//! The test server over HTTP on one port: Streamable HTTP at `/mcp` (each request answered as an
//! event stream, sessions by `Mcp-Session-Id`, 404 for a session it does not know, as after a
//! restart) and the legacy HTTP+SSE transport at `/sse` (the stream) and `/message` (the posts).
//! Just enough HTTP/1.1 for the client under test.

use crate::server::{Out, Scenarios, Server};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

struct Sessions {
    args: Vec<String>,
    /// Streamable HTTP sessions.
    streamable: Mutex<HashMap<String, Arc<Server>>>,
    /// Legacy SSE sessions: the server and its stream.
    sse: Mutex<HashMap<String, (Arc<Server>, Out)>>,
    next: AtomicU64,
}

impl Sessions {
    fn new_server(&self) -> (String, Arc<Server>) {
        let id = format!(
            "session-{}-{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        (id, Server::new(Scenarios::parse(&self.args)))
    }
}

struct Request {
    method: String,
    path: String,
    query: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

pub async fn serve(port: u16, args: Vec<String>) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let sessions = Arc::new(Sessions {
        args,
        streamable: Mutex::default(),
        sse: Mutex::default(),
        next: AtomicU64::new(1),
    });
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(connection(stream, sessions.clone()));
    }
}

async fn connection(stream: TcpStream, sessions: Arc<Sessions>) {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    while let Some(request) = read_request(&mut read).await {
        let keep_open = route(request, &sessions, &mut write).await;
        if !keep_open {
            return;
        }
    }
}

async fn read_request(read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Request> {
    let mut line = String::new();
    read.read_line(&mut line).await.ok().filter(|n| *n > 0)?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        read.read_line(&mut header).await.ok().filter(|n| *n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_string(), query.to_string()),
        None => (target, String::new()),
    };
    Some(Request {
        method,
        path,
        query,
        headers,
        body,
    })
}

/// Answers one request; returns whether the connection stays open for another.
async fn route(request: Request, sessions: &Arc<Sessions>, write: &mut OwnedWriteHalf) -> bool {
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/mcp") => post_streamable(request, sessions, write).await,
        ("DELETE", "/mcp") => {
            if let Some(id) = request.headers.get("mcp-session-id") {
                sessions.streamable.lock().remove(id);
            }
            respond(write, "200 OK", "", "").await
        }
        ("GET", "/sse") => {
            open_sse(sessions, write).await;
            false
        }
        ("POST", "/message") => {
            let id = request.query.strip_prefix("sessionId=").unwrap_or_default();
            let session = sessions.sse.lock().get(id).cloned();
            let Some((server, out)) = session else {
                return respond(write, "404 Not Found", "text/plain", "no such session").await;
            };
            if let Ok(message) = serde_json::from_slice::<Value>(&request.body) {
                server.handle(message, &out);
            }
            respond(write, "202 Accepted", "", "").await
        }
        _ => respond(write, "405 Method Not Allowed", "text/plain", "not here").await,
    }
}

/// A Streamable HTTP post: notifications and answers get 202; a request, an event stream of
/// what it leads to, ending with its response.
async fn post_streamable(
    request: Request,
    sessions: &Arc<Sessions>,
    write: &mut OwnedWriteHalf,
) -> bool {
    let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
        return respond(write, "400 Bad Request", "text/plain", "not JSON").await;
    };
    let initialize = message["method"] == "initialize";
    let (session, server) = match request.headers.get("mcp-session-id") {
        _ if initialize => {
            let (id, server) = sessions.new_server();
            sessions
                .streamable
                .lock()
                .insert(id.clone(), server.clone());
            (id, server)
        }
        Some(id) => {
            let known = sessions.streamable.lock().get(id).cloned();
            match known {
                Some(server) => (id.clone(), server),
                None => {
                    return respond(write, "404 Not Found", "text/plain", "no such session").await
                }
            }
        }
        None => return respond(write, "400 Bad Request", "text/plain", "no session").await,
    };
    let id = message
        .get("id")
        .cloned()
        .filter(|_| message.get("method").is_some());
    let (out, mut messages) = mpsc::unbounded_channel();
    server.handle(message, &out);
    let Some(id) = id else {
        return respond(write, "202 Accepted", "", "").await;
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    if write.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    while let Some(message) = messages.recv().await {
        let last = message.get("id") == Some(&id) && message.get("method").is_none();
        let event = format!("event: message\ndata: {message}\n\n");
        if write.write_all(event.as_bytes()).await.is_err() || last {
            break;
        }
    }
    false
}

/// The legacy transport's stream: the endpoint to post to, then every message of the session.
async fn open_sse(sessions: &Arc<Sessions>, write: &mut OwnedWriteHalf) {
    let (id, server) = sessions.new_server();
    let (out, mut messages) = mpsc::unbounded_channel();
    sessions.sse.lock().insert(id.clone(), (server, out));
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let endpoint = format!("event: endpoint\ndata: /message?sessionId={id}\n\n");
    if write.write_all(head.as_bytes()).await.is_ok()
        && write.write_all(endpoint.as_bytes()).await.is_ok()
    {
        while let Some(message) = messages.recv().await {
            let event = format!("event: message\ndata: {message}\n\n");
            if write.write_all(event.as_bytes()).await.is_err() {
                break;
            }
        }
    }
    sessions.sse.lock().remove(&id);
}

/// Writes a whole response; returns whether the connection stays open.
async fn respond(write: &mut OwnedWriteHalf, status: &str, content_type: &str, body: &str) -> bool {
    let kind = match content_type {
        "" => String::new(),
        kind => format!("Content-Type: {kind}\r\n"),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\n{kind}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    write.write_all(response.as_bytes()).await.is_ok()
}
