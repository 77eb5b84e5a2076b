//! The two listeners on 127.0.0.1, two origins: the host page and its bridge on one, the app's
//! document on the other. Every request names the listener's own `Host` and carries its app
//! session's token, or gets a status and nothing of the session. Heads, bodies and the time to
//! send them are bounded; the pushes to a page stream until its tab closes or the session ends.

use super::policy::{host_is, token_is, token_of, MAX_BODY};
use super::registry::AppSession;
use super::{bridge, page, Inner};
use crate::loopback::{read_body, read_head, request_line, respond};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

/// How long a client may take to send a request.
const READ_LIMIT: Duration = Duration::from_secs(10);
/// How long a closed tab has to come back (a reload) before its app session ends.
pub const RELOAD_GRACE: Duration = Duration::from_secs(3);

const TEXT: &str = "text/plain; charset=utf-8";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Host,
    App,
}

/// Accepts connections until the apps close.
pub async fn serve(listener: TcpListener, origin: Origin, inner: Arc<Inner>) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = inner.closing.cancelled() => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let inner = inner.clone();
        inner.tasks.clone().spawn(async move {
            tokio::select! {
                _ = connection(stream, origin, &inner) => {}
                _ = inner.closing.cancelled() => {}
            }
        });
    }
}

async fn connection(
    mut stream: TcpStream,
    origin: Origin,
    inner: &Arc<Inner>,
) -> std::io::Result<()> {
    let Ok(read) = tokio::time::timeout(READ_LIMIT, read_head(&mut stream)).await else {
        return Ok(());
    };
    let Some((head, started)) = read? else {
        return Ok(());
    };
    let port = stream.local_addr()?.port();
    if !host_is(&head, port) {
        return respond(
            &mut stream,
            421,
            TEXT,
            &[],
            b"This address answers only as 127.0.0.1.",
        )
        .await;
    }
    let Some((method, target)) = request_line(&head) else {
        return respond(&mut stream, 400, TEXT, &[], b"").await;
    };
    let Ok(url) = Url::parse(&format!("http://127.0.0.1{target}")) else {
        return respond(&mut stream, 400, TEXT, &[], b"").await;
    };
    let segments: Vec<&str> = url.path().trim_start_matches('/').split('/').collect();
    let (id, what) = match (origin, segments.as_slice()) {
        (Origin::App, ["doc", id]) => (*id, Route::Document),
        (Origin::Host, ["app", id, ""]) => (*id, Route::Page),
        (Origin::Host, ["app", id, "host.js"]) => (*id, Route::Script),
        (Origin::Host, ["app", id, "rpc"]) => (*id, Route::Rpc),
        (Origin::Host, ["app", id, "events"]) => (*id, Route::Events),
        _ => return not_found(&mut stream).await,
    };
    let Some(session) = inner.registry.get(id) else {
        return not_found(&mut stream).await;
    };
    // What a URL loads (the page, its script, the document) has the token in its query; the
    // bridge takes it in the header only.
    let (expected, query) = match what {
        Route::Document => (&session.doc_token, url.query()),
        Route::Page | Route::Script => (&session.token, url.query()),
        Route::Rpc | Route::Events => (&session.token, None),
    };
    // The page also opens once with the opener's code, which it then gives up.
    let launched = || {
        let code = url.query_pairs().find(|(key, _)| key == "o");
        let page = method == "GET" && matches!(what, Route::Page);
        page && code.is_some_and(|(_, code)| session.launch_with(&code))
    };
    if !token_is(token_of(&head, query), expected) && !launched() {
        return not_found(&mut stream).await;
    }
    match (what, method) {
        (Route::Document, "GET") => document(&mut stream, &session).await,
        (Route::Page, "GET") => host_page(&mut stream, &session, inner).await,
        (Route::Script, "GET") => {
            let js = "text/javascript; charset=utf-8";
            let nosniff = [("X-Content-Type-Options", "nosniff")];
            respond(&mut stream, 200, js, &nosniff, &inner.script).await
        }
        (Route::Rpc, "POST") => rpc(&mut stream, &session, &head, started, inner).await,
        (Route::Events, "GET") => events(stream, &session, inner).await,
        _ => respond(&mut stream, 405, TEXT, &[], b"").await,
    }
}

#[derive(Clone, Copy)]
enum Route {
    Document,
    Page,
    Script,
    Rpc,
    Events,
}

/// The same answer for an unknown session, a wrong token and an unknown path: nothing tells
/// one from the other.
async fn not_found(stream: &mut TcpStream) -> std::io::Result<()> {
    respond(stream, 404, TEXT, &[], b"Not found.").await
}

async fn document(stream: &mut TcpStream, session: &AppSession) -> std::io::Result<()> {
    let document = session.document();
    let permissions = document.frame.policy();
    let mut headers = vec![
        ("Content-Security-Policy", document.csp.header.as_str()),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ];
    if !permissions.is_empty() {
        headers.push(("Permissions-Policy", permissions.as_str()));
    }
    let html = "text/html; charset=utf-8";
    respond(stream, 200, html, &headers, document.html.as_bytes()).await
}

async fn host_page(
    stream: &mut TcpStream,
    session: &AppSession,
    inner: &Inner,
) -> std::io::Result<()> {
    let app_port = inner.ports().1;
    let settings = page::settings(session, app_port, &inner.context(session));
    let html = page::html(session, &settings);
    let policy = page::policy(app_port);
    let headers = [
        ("Content-Security-Policy", policy.as_str()),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
    ];
    respond(
        stream,
        200,
        "text/html; charset=utf-8",
        &headers,
        html.as_bytes(),
    )
    .await
}

async fn rpc(
    stream: &mut TcpStream,
    session: &Arc<AppSession>,
    head: &str,
    started: Vec<u8>,
    inner: &Inner,
) -> std::io::Result<()> {
    let body = tokio::time::timeout(READ_LIMIT, read_body(stream, head, started, MAX_BODY)).await;
    let Ok(Some(body)) = body.unwrap_or(Ok(None)) else {
        let said = format!("A request must have a Content-Length of at most {MAX_BODY} bytes.");
        return respond(stream, 413, TEXT, &[], said.as_bytes()).await;
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return respond(stream, 400, TEXT, &[], b"Not JSON.").await;
    };
    if request["method"] == "ui/notifications/request-teardown" {
        inner.end(&session.app.id);
        return respond(stream, 200, "application/json", &[], b"{\"result\":{}}").await;
    }
    let answer = bridge::answer(session, &inner.host, &request).await;
    respond(
        stream,
        200,
        "application/json",
        &[],
        answer.to_string().as_bytes(),
    )
    .await
}

/// Streams the session's pushes to the page, a JSON value a line, until the page goes (its
/// tab closed: the session ends unless it comes back within [`RELOAD_GRACE`]) or the session
/// ends (the stream closes; the page tears the app down).
async fn events(
    mut stream: TcpStream,
    session: &Arc<AppSession>,
    inner: &Arc<Inner>,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let watching = session.watch();
    let (mut reader, mut writer) = stream.split();
    let mut sink = [0u8; 64];
    loop {
        tokio::select! {
            push = session.next_push() => {
                let Some(push) = push else { break };
                let line = format!("{push}\n");
                if writer.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
            read = reader.read(&mut sink) => {
                if matches!(read, Ok(0) | Err(_)) {
                    break;
                }
            }
        }
    }
    drop(watching);
    let _ = writer.shutdown().await;
    if !session.ended.is_cancelled() {
        let (inner, session) = (inner.clone(), session.clone());
        inner.tasks.clone().spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(RELOAD_GRACE) => {}
                _ = inner.closing.cancelled() => return,
            }
            if session.abandoned() {
                inner.end(&session.app.id);
            }
        });
    }
    Ok(())
}
