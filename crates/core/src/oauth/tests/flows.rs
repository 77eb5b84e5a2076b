//! Sign-in flows end to end: discovery, registration, the browser (or pasted) response, the
//! checks, the exchange, and what lands in Pi's store.

use super::server::{Iss, Knobs, TestServer};
use super::*;
use crate::config::{Grant, OAuthConfig};
use crate::oauth::{sign_out, Access, AuthStatus, BrowserStep};
use serde_json::Value;
use std::sync::Arc;

fn stored(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("mcp-auth.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn registers_signs_in_and_stores_in_pis_format() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-dcr");
    let context = context(&server, OAuthConfig::default(), &dir);
    let signed = sign_in_browsing(&context, Some(challenge(&server).await))
        .await
        .unwrap();
    assert!(signed.expires_at.is_some());
    server.seen(|seen| {
        let registration = &seen.registrations[0];
        assert_eq!(registration["application_type"], "native");
        assert_eq!(registration["token_endpoint_auth_method"], "none");
        assert!(registration["grant_types"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "refresh_token"));
        let redirect = registration["redirect_uris"][0].as_str().unwrap();
        assert!(
            redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
            "{redirect}"
        );
        let authorize = &seen.authorize[0];
        assert_eq!(authorize["code_challenge_method"], "S256");
        assert_eq!(authorize["resource"], server.mcp_url());
        assert_eq!(authorize["state"].len(), 43);
        let token = &seen.token[0];
        assert_eq!(token["resource"], server.mcp_url());
        assert_eq!(token["code_verifier"].len(), 43);
    });
    let file = stored(&dir);
    let state = &file[format!("mcp__srv|{}", server.mcp_url())];
    assert_eq!(state["serverUrl"], server.mcp_url());
    assert!(state["tokens"]["access_token"]
        .as_str()
        .unwrap()
        .starts_with("at-"));
    assert!(state["tokens"]["refresh_token"]
        .as_str()
        .unwrap()
        .starts_with("rt-"));
    assert!(state["tokensExpireAt"].as_f64().unwrap() > 0.0);
    assert!(state["clientInformation"]["client_id"]
        .as_str()
        .unwrap()
        .starts_with("client-"));
    assert_eq!(
        state["discovery"]["authorizationServerMetadata"]["issuer"],
        server.issuer()
    );
    // The stored token is what connections send.
    let access = Arc::new(Access::new(Arc::new(context)));
    let sent = access.current().await.unwrap().unwrap();
    assert_eq!(
        sent.expose(),
        format!(
            "Bearer {}",
            state["tokens"]["access_token"].as_str().unwrap()
        )
    );
    // A second sign-in reuses the registered client (its redirect port is free again).
    let context = super::context(&server, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    server.seen(|seen| assert_eq!(seen.registrations.len(), 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_pasted_redirect_completes_the_sign_in() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-paste");
    sign_in_pasting(&context(&server, OAuthConfig::default(), &dir))
        .await
        .unwrap();
    server.seen(|seen| assert_eq!(seen.grants("authorization_code"), 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_refused_paste_keeps_the_sign_in_waiting_and_cancelling_ends_it() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-cancel");
    let context = context(&server, OAuthConfig::default(), &dir);
    let (paste, pasted) = mpsc::channel(1);
    let (shown, mut steps) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let request = SignIn {
        challenge: None,
        pasted: Some(pasted),
        open_browser: false,
        cancel: cancel.clone(),
        show_url: Box::new(move |_, step| shown.send(step).unwrap()),
    };
    let user = async {
        let first = steps.recv().await.unwrap();
        assert_eq!(first, BrowserStep::NotOpened("not asked to".into()));
        paste.send("the code is x".into()).await.unwrap();
        let again = steps.recv().await.unwrap();
        assert!(matches!(&again, BrowserStep::PasteRefused(why) if why.contains("just the code")));
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(sign_in(&context, request), user);
    assert!(matches!(result, Err(OAuthError::Cancelled)), "{result:?}");
    server.seen(|seen| assert_eq!(seen.grants("authorization_code"), 0));
    assert_eq!(context.status().unwrap(), AuthStatus::SignedOut);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn iss_is_checked_as_the_spec_tabulates() {
    for (iss, supported, ok) in [
        (Iss::Correct, true, true),
        (Iss::Omitted, false, true),
        (Iss::Omitted, true, false),
        (Iss::Wrong, true, false),
        (Iss::Wrong, false, false),
    ] {
        let server = TestServer::start(Knobs {
            iss,
            iss_supported: supported,
            ..Knobs::default()
        })
        .await;
        let dir = agent_dir("flow-iss");
        let result = sign_in_browsing(&context(&server, OAuthConfig::default(), &dir), None).await;
        assert_eq!(result.is_ok(), ok, "{iss:?} {supported}: {result:?}");
        if !ok {
            let text = result.unwrap_err().to_string();
            assert!(
                text.contains("RFC 9207") && text.contains("the code was not used"),
                "{text}"
            );
            server.seen(|seen| assert_eq!(seen.grants("authorization_code"), 0));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[tokio::test]
async fn scopes_come_from_the_challenge_and_step_up_keeps_the_granted_ones() {
    let server = TestServer::start(Knobs {
        challenge_scope: Some("files:read"),
        scopes_supported: Some(vec!["other"]),
        as_scopes_supported: Some(vec!["files:read", "files:write", "offline_access"]),
        ..Knobs::default()
    })
    .await;
    let dir = agent_dir("flow-scope");
    let context = context(
        &server,
        OAuthConfig {
            scope: Some("extra".into()),
            ..OAuthConfig::default()
        },
        &dir,
    );
    sign_in_browsing(&context, Some(challenge(&server).await))
        .await
        .unwrap();
    let forbidden = Challenge {
        scope: Some("files:write".into()),
        error: Some("insufficient_scope".into()),
        ..challenge(&server).await
    };
    sign_in_browsing(&context, Some(forbidden)).await.unwrap();
    server.seen(|seen| {
        assert_eq!(
            seen.authorize[0]["scope"],
            "files:read extra offline_access"
        );
        assert_eq!(seen.authorize[0]["prompt"], "consent");
        assert_eq!(
            seen.authorize[1]["scope"],
            "files:read extra offline_access files:write"
        );
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn scope_is_omitted_when_nothing_names_one() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-noscope");
    sign_in_browsing(
        &context(&server, OAuthConfig::default(), &dir),
        Some(challenge(&server).await),
    )
    .await
    .unwrap();
    server.seen(|seen| assert!(!seen.authorize[0].contains_key("scope")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_preregistered_client_authenticates_with_basic_and_a_command_secret() {
    let server = TestServer::start(Knobs {
        registration: false,
        preregistered: Some(("pre", "pre-secret")),
        auth_methods: vec!["client_secret_basic"],
        ..Knobs::default()
    })
    .await;
    let dir = agent_dir("flow-pre");
    let config = OAuthConfig {
        client_id: Some("pre".into()),
        client_secret: Some(crate::config::CommandPolicy::default().value(
            "!printf pre-secret",
            Path::new("/cfg/mcp.json"),
            str::to_string,
        )),
        callback_url: Some("http://127.0.0.1/callback".into()),
        ..OAuthConfig::default()
    };
    sign_in_browsing(&context(&server, config, &dir), None)
        .await
        .unwrap();
    server.seen(|seen| {
        assert!(seen.registrations.is_empty());
        assert!(seen.token_auth[0].as_deref().unwrap().starts_with("Basic "));
        assert!(!seen.token[0].contains_key("client_secret"));
    });
    let state = &stored(&dir)[format!("mcp__srv|{}", server.mcp_url())];
    assert!(
        state.get("clientInformation").is_none(),
        "a configured client is not stored"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn our_client_metadata_document_only_where_supported() {
    let document = "https://client.example/pi-mcp.json";
    for (supported, registration) in [(true, 0), (false, 1)] {
        let server = TestServer::start(Knobs {
            cimd: supported,
            ..Knobs::default()
        })
        .await;
        let dir = agent_dir("flow-cimd");
        let config = OAuthConfig {
            client_metadata_url: Some(document.into()),
            ..OAuthConfig::default()
        };
        sign_in_browsing(&context(&server, config, &dir), None)
            .await
            .unwrap();
        server.seen(|seen| {
            assert_eq!(seen.registrations.len(), registration);
            assert_eq!(seen.authorize[0]["client_id"] == document, supported);
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[tokio::test]
async fn a_resource_that_moved_to_another_authorization_server_registers_again() {
    let first = TestServer::start(Knobs::default()).await;
    let second = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-migrate");
    let context = context(&first, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    let old_client = first.seen(|s| s.authorize[0]["client_id"].clone());
    first.knobs.lock().authorization_server = Some(second.issuer());
    sign_in_browsing(&context, None).await.unwrap();
    second.seen(|seen| {
        assert_eq!(seen.registrations.len(), 1);
        assert_ne!(seen.authorize[0]["client_id"], old_client);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn client_credentials_need_no_browser_and_renew_silently() {
    let server = TestServer::start(Knobs {
        preregistered: Some(("machine", "m-secret")),
        auth_methods: vec!["client_secret_basic"],
        ..Knobs::default()
    })
    .await;
    let dir = agent_dir("flow-cc");
    let config = OAuthConfig {
        grant: Grant::ClientCredentials,
        client_id: Some("machine".into()),
        client_secret: Some(crate::config::ConfigValue::text("m-secret")),
        scope: Some("jobs".into()),
        ..OAuthConfig::default()
    };
    let context = context(&server, config, &dir);
    sign_in(
        &context,
        SignIn {
            challenge: None,
            pasted: None,
            open_browser: false,
            cancel: CancellationToken::new(),
            show_url: Box::new(|_, _| panic!("no browser for a machine client")),
        },
    )
    .await
    .unwrap();
    let access = Arc::new(Access::new(Arc::new(context)));
    let first = access.current().await.unwrap().unwrap();
    let renewed = access.rejected(Some(&first)).await.unwrap().unwrap();
    assert_ne!(first, renewed);
    server.seen(|seen| {
        assert_eq!(seen.grants("client_credentials"), 2);
        assert!(seen.authorize.is_empty());
        assert_eq!(seen.token[0]["scope"], "jobs");
        assert!(seen.token_auth[0].as_deref().unwrap().starts_with("Basic "));
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn signing_out_revokes_and_forgets() {
    let server = TestServer::start(Knobs::default()).await;
    let dir = agent_dir("flow-out");
    let context = context(&server, OAuthConfig::default(), &dir);
    sign_in_browsing(&context, None).await.unwrap();
    let out = sign_out(&context).await.unwrap();
    assert!(out.removed);
    assert_eq!(out.revocation, Some(Ok(())));
    server.seen(|seen| {
        let hints: Vec<&str> = seen
            .revoked
            .iter()
            .map(|f| f["token_type_hint"].as_str())
            .collect();
        assert_eq!(hints, ["refresh_token", "access_token"]);
    });
    assert!(stored(&dir).as_object().unwrap().is_empty());
    let again = sign_out(&context).await.unwrap();
    assert_eq!((again.removed, again.revocation), (false, None));
    std::fs::remove_dir_all(&dir).unwrap();
}
