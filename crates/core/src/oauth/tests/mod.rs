//! The OAuth client against a loopback authorization server written for these tests.

mod flows;
mod hostile;
mod refresh;
pub mod server;

use super::{sign_in, Challenge, OAuthError, Server, SignIn, SignedIn};
use crate::config::{Env, OAuthConfig};
use pi_mcp_connection::secret::Secret;
use server::{browse, TestServer};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// An empty agent directory of its own.
pub fn agent_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pi-mcp-oauth-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn place<'a>(dir: &'a Path, env: &'a Env) -> super::Place<'a> {
    super::Place {
        agent_dir: dir,
        cwd: dir,
        env,
        ca_file: None,
        file_limit: 1024 * 1024,
    }
}

pub fn context(server: &TestServer, config: OAuthConfig, dir: &Path) -> Server {
    let env: Env = [(
        "PATH".to_string(),
        std::env::var("PATH").unwrap_or_default(),
    )]
    .into_iter()
    .collect();
    Server::new(
        "srv",
        &Secret::new(server.mcp_url()),
        &config,
        place(dir, &env),
        "2025-11-25",
    )
    .unwrap()
}

/// The challenge the MCP endpoint answers without a token.
pub async fn challenge(server: &TestServer) -> Challenge {
    let client =
        pi_mcp_connection::pool::http_client_builder(None, std::time::Duration::from_secs(5))
            .unwrap()
            .build()
            .unwrap();
    let answer = client
        .post(server.mcp_url())
        .body("{}")
        .send()
        .await
        .unwrap();
    let header = answer.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    Challenge::parse(&header, &url::Url::parse(&server.mcp_url()).unwrap())
}

/// Signs in with a browser that approves at once.
pub async fn sign_in_browsing(
    context: &Server,
    challenge: Option<Challenge>,
) -> Result<SignedIn, OAuthError> {
    sign_in(
        context,
        SignIn {
            challenge,
            pasted: None,
            open_browser: false,
            cancel: CancellationToken::new(),
            show_url: Box::new(|url, _| {
                tokio::spawn(browse(url.as_str().to_string()));
            }),
        },
    )
    .await
}

/// Signs in by pasting the redirected URL (no browser reaches the listener).
pub async fn sign_in_pasting(context: &Server) -> Result<SignedIn, OAuthError> {
    let (paste, pasted) = mpsc::channel(1);
    sign_in(
        context,
        SignIn {
            challenge: None,
            pasted: Some(pasted),
            open_browser: false,
            cancel: CancellationToken::new(),
            show_url: Box::new(move |url, _| {
                let (url, paste) = (url.as_str().to_string(), paste.clone());
                tokio::spawn(async move {
                    let client = pi_mcp_connection::pool::http_client_builder(
                        None,
                        std::time::Duration::from_secs(5),
                    )
                    .unwrap()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap();
                    let answer = client.get(&url).send().await.unwrap();
                    let location = answer.headers()["location"].to_str().unwrap().to_string();
                    let _ = paste.send(format!("  {location}\n")).await;
                });
            }),
        },
    )
    .await
}
