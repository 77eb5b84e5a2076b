//! Renewing tokens: before they expire, when the server refuses them, once for several
//! processes, and a refused refresh that asks for a new sign-in.

use super::server::{Knobs, TestServer};
use super::*;
use crate::oauth::Access;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const CHILD_DIR: &str = "PI_MCP_OAUTH_CHILD_DIR";
const CHILD_URL: &str = "PI_MCP_OAUTH_CHILD_URL";

/// Makes the stored access token of `server` expire in 5 s, as if time had passed.
fn expire_soon(dir: &Path, server: &TestServer) {
    let path = dir.join("mcp-auth.json");
    let mut stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let key = format!("mcp__srv|{}", server.mcp_url());
    stored[&key]["tokensExpireAt"] = (super::super::now_ms() + 5_000.0).into();
    std::fs::write(&path, stored.to_string()).unwrap();
}

#[tokio::test]
async fn renewed_before_expiry_and_when_refused() {
    let server = TestServer::start(Knobs {
        expires_in: 20, // half of it is the margin: not renewed at once
        ..Knobs::default()
    })
    .await;
    let dir = agent_dir("refresh");
    let context = context(&server, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    let access = Arc::new(Access::new(Arc::new(context)));
    let issued = access.current().await.unwrap().unwrap();
    server.seen(|seen| assert_eq!(seen.grants("refresh_token"), 0));
    expire_soon(&dir, &server);
    let first = access.current().await.unwrap().unwrap();
    assert_ne!(issued, first);
    server.seen(|seen| assert_eq!(seen.grants("refresh_token"), 1));
    let second = access.rejected(Some(&first)).await.unwrap().unwrap();
    assert_ne!(first, second);
    assert_eq!(access.current().await.unwrap().unwrap(), second);
    server.seen(|seen| assert_eq!(seen.grants("refresh_token"), 2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_refused_refresh_asks_for_a_sign_in_and_clears_the_tokens() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("refresh-refused");
    let context = context(&server, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    let access = Arc::new(Access::new(Arc::new(context)));
    let sent = access.current().await.unwrap().unwrap();
    // Rotate the refresh token away behind our back (another client used it).
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mcp-auth.json")).unwrap()).unwrap();
    let key = format!("mcp__srv|{}", server.mcp_url());
    let mut edited = stored.clone();
    edited[&key]["tokens"]["refresh_token"] = "rt-gone".into();
    std::fs::write(dir.join("mcp-auth.json"), edited.to_string()).unwrap();
    let err = access.rejected(Some(&sent)).await.unwrap_err();
    assert!(matches!(err, OAuthError::SignInRequired(_)), "{err:?}");
    assert!(
        err.to_string().contains("invalid_grant") && err.to_string().contains("sign in again"),
        "{err}"
    );
    assert_eq!(access.current().await.unwrap(), None);
    assert_eq!(
        access.rejected(None).await.unwrap(),
        None,
        "nothing to renew"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Run by `two_processes_refresh_once` as a child process: prints the token it ends up with.
#[tokio::test(flavor = "multi_thread")]
async fn refresh_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_URL)) else {
        return;
    };
    let env: crate::config::Env = Default::default();
    let context = Server::new(
        "srv",
        &Secret::new(url),
        &OAuthConfig::default(),
        place(Path::new(&dir), &env),
        "2025-11-25",
    )
    .unwrap();
    let access = Arc::new(Access::new(Arc::new(context)));
    let token = access.current().await.unwrap().unwrap();
    println!("TOKEN={}", token.expose());
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_refresh_once() {
    let server = TestServer::start(Knobs {
        token_delay: Duration::from_millis(300),
        ..Knobs::default()
    })
    .await;
    let dir = agent_dir("refresh-race");
    sign_in_browsing(&context(&server, OAuthConfig::default(), &dir), None)
        .await
        .unwrap();
    expire_soon(&dir, &server);
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "oauth::tests::refresh::refresh_child",
                    "--nocapture",
                ])
                .env(CHILD_DIR, &dir)
                .env(CHILD_URL, server.mcp_url())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut tokens = Vec::new();
    for child in children {
        let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let token = text
            .lines()
            .find_map(|l| l.strip_prefix("TOKEN="))
            .unwrap_or_else(|| panic!("no token from a child: {text}"))
            .to_string();
        tokens.push(token);
    }
    assert_eq!(tokens[0], tokens[1], "both use the one refreshed token");
    server.seen(|seen| assert_eq!(seen.grants("refresh_token"), 1));
    let locks: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(locks.is_empty(), "locks left behind: {locks:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
