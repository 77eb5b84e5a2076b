//! Bad input from servers stops the sign-in promptly, says what was wrong, and sends nothing
//! secret anywhere.

use super::server::{Knobs, TestServer};
use super::*;
use serde_json::json;
use std::time::{Duration, Instant};

async fn refused(knobs: Knobs, config: OAuthConfig) -> (String, TestServer) {
    let server = TestServer::start(knobs).await;
    let dir = agent_dir("hostile");
    let started = Instant::now();
    let result = sign_in_browsing(&context(&server, config, &dir), None).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let text = result.unwrap_err().to_string();
    server.seen(|seen| {
        assert!(seen.token.is_empty(), "a token request was made: {text}");
        assert!(seen.authorize.is_empty(), "the browser was sent: {text}");
    });
    (text, server)
}

#[tokio::test]
async fn a_resource_naming_another_server_is_refused() {
    let knobs = Knobs {
        resource_override: Some("https://evil.example/mcp".into()),
        ..Knobs::default()
    };
    let (text, _) = refused(knobs, OAuthConfig::default()).await;
    assert!(
        text.contains("is for https://evil.example/mcp, not for this server"),
        "{text}"
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused() {
    let knobs = Knobs {
        issuer_override: Some("https://honest.example".into()),
        ..Knobs::default()
    };
    let (text, _) = refused(knobs, OAuthConfig::default()).await;
    assert!(
        text.contains("names the issuer \"https://honest.example\"") && text.contains("RFC 8414"),
        "{text}"
    );
}

#[tokio::test]
async fn a_plain_http_authorization_endpoint_elsewhere_is_refused() {
    let server = TestServer::start(Knobs::default()).await;
    let issuer = server.issuer();
    *server.knobs.lock() = Knobs {
        metadata_override: Some(json!({
            "issuer": issuer,
            "authorization_endpoint": "http://evil.example/authorize",
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        })),
        ..Knobs::default()
    };
    let dir = agent_dir("hostile-http");
    let result = sign_in_browsing(&context(&server, OAuthConfig::default(), &dir), None).await;
    let text = result.unwrap_err().to_string();
    assert!(
        text.contains("http://evil.example/authorize is plain HTTP on another host"),
        "{text}"
    );
    server.seen(|seen| assert!(seen.registrations.is_empty() && seen.token.is_empty()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_huge_document_and_a_redirect_loop_fail_fast() {
    let server = TestServer::start(Knobs::default()).await;
    for (path, expected) in [
        ("big", "answered with more than 1024 KiB"),
        ("loop", "redirected more than 5 times"),
    ] {
        let config = OAuthConfig {
            auth_server_metadata_url: Some(format!("{}{path}", server.base)),
            ..OAuthConfig::default()
        };
        let dir = agent_dir("hostile-doc");
        let started = Instant::now();
        let result = sign_in_browsing(&context(&server, config, &dir), None).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{path}: {:?}",
            started.elapsed()
        );
        let text = result.unwrap_err().to_string();
        assert!(text.contains(expected), "{path}: {text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    server.seen(|seen| assert!(seen.token.is_empty() && seen.authorize.is_empty()));
}

#[tokio::test]
async fn an_authorization_endpoint_with_control_characters_is_refused() {
    let server = TestServer::start(Knobs::default()).await;
    let issuer = server.issuer();
    server.knobs.lock().metadata_override = Some(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize\x1b]0;pwned\x07"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    }));
    let dir = agent_dir("hostile-endpoint");
    let text = sign_in_browsing(&context(&server, OAuthConfig::default(), &dir), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("`authorization_endpoint` is refused: it holds the control character \\x1b"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "{text:?}");
    server.seen(|seen| assert!(seen.authorize.is_empty() && seen.token.is_empty()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn metadata_without_pkce_s256_is_refused() {
    let server = TestServer::start(Knobs::default()).await;
    let issuer = server.issuer();
    server.knobs.lock().metadata_override = Some(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "response_types_supported": ["code"],
    }));
    let dir = agent_dir("hostile-pkce");
    let text = sign_in_browsing(&context(&server, OAuthConfig::default(), &dir), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(text.contains("PKCE"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn credentials_never_follow_a_redirect_to_another_origin() {
    use pi_mcp_connection::pool::{
        ConnectSpec, Pool, Protocol, RemoteSpec, SharedCredentials, TransportSpec,
    };
    use std::sync::Arc;
    // Signed in to the server the redirect points at: the token would be accepted there.
    let elsewhere = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("hostile-redirect");
    let context = context(&elsewhere, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    let access = Arc::new(crate::oauth::Access::new(Arc::new(context)));
    let before = elsewhere.seen(|s| s.paths.len());
    for status in [307, 308] {
        let redirect = super::server::redirector(elsewhere.mcp_url(), status).await;
        let (pool, _notices) = Pool::new();
        let spec = ConnectSpec {
            server: "srv".into(),
            transport: TransportSpec::Remote(RemoteSpec {
                url: Secret::new(redirect.url.as_str()),
                headers: vec![("X-Api-Key".into(), Secret::new("configured-secret"))],
                authorization: None,
                credentials: Some(SharedCredentials(access.clone())),
                ca_file: None,
                prefer: None,
                signer: None,
            }),
            protocol: Protocol::Initialize,
            timeout: Duration::from_secs(10),
            debug: false,
            client: pi_mcp_connection::pool::ClientFeatures::none(),
            keeper: None,
        };
        assert!(
            pool.connect(spec).await.is_err(),
            "{status}: connected through another origin"
        );
    }
    elsewhere.seen(|s| assert_eq!(s.paths.len(), before, "a request reached the other origin"));
    std::fs::remove_dir_all(&dir).unwrap();
}
