use super::super::in_memory::{open, Ada, Scripted};
use super::super::RequestOptions;
use super::*;
use crate::pool::handler::Notice;
use crate::pool::host::NoHost;
use serde_json::json;
use std::sync::Arc;

async fn call(conn: &Connection, tool: &str) -> Result<Value, RequestError> {
    let params = json!({ "name": tool, "arguments": {} });
    let opts = RequestOptions::new(Duration::from_secs(5));
    conn.request("tools/call", params, opts).await
}

#[tokio::test]
async fn a_server_error_keeps_its_code_and_message() {
    let (conn, _served, _) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let refused = call(&conn, "refuse").await;
    let expected = RequestError::Mcp {
        code: -32602,
        message: "no such thing".into(),
    };
    assert_eq!(refused, Err(expected));
    conn.close().await;
}

#[tokio::test]
async fn pages_to_visit_first_are_shown_and_said_which_were_opened() {
    let ada = Arc::new(Ada::default());
    let (conn, _served, _) = open(Scripted::default(), ada.clone(), false).await;
    let steps = vec![BrowserStep {
        url: "https://example.com/consent".into(),
        message: "Consent".into(),
        opened: true,
    }];
    assert_eq!(
        call(&conn, "visit").await,
        Err(RequestError::BrowserSteps(steps))
    );
    assert_eq!(*ada.asked.lock(), ["https://example.com/consent"]);
    conn.close().await;
}

#[tokio::test]
async fn a_session_the_server_ends_fails_its_requests_and_is_reported_lost() {
    let (conn, served, mut notices) = open(Scripted::default(), Arc::new(NoHost), false).await;
    let hanging = call(&conn, "stuck");
    let ending = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        served.end.cancel();
    };
    let (failed, ()) = tokio::join!(hanging, ending);
    assert_eq!(
        failed,
        Err(RequestError::Closed(
            "the server ended the connection".into()
        ))
    );
    let lost = tokio::time::timeout(Duration::from_secs(5), notices.recv()).await;
    let Ok(Some(Notice::Lost { server, why })) = lost else {
        panic!("no notice that the server was lost");
    };
    assert_eq!(
        (server.as_str(), why.as_str()),
        ("mem", "the server ended the connection")
    );
    assert!(!conn.is_alive());
    assert!(!conn.was_stopped(), "we did not end it");
}

#[test]
fn only_a_url_elicitation_error_names_pages_and_only_its_well_formed_ones() {
    let data = json!({ "elicitations": [
        { "url": "https://a.example", "message": "A" },
        { "url": "https://b.example" },
        { "message": "no url" },
    ]});
    let error = rmcp::ErrorData::new(rmcp::model::ErrorCode(-32042), "visit", Some(data));
    let urls: Vec<_> = browser_steps(&error)
        .into_iter()
        .map(|s| (s.url, s.message, s.opened))
        .collect();
    assert_eq!(
        urls,
        [
            ("https://a.example".to_string(), "A".to_string(), false),
            ("https://b.example".to_string(), String::new(), false),
        ]
    );
    let plain = rmcp::ErrorData::invalid_params("x", None);
    assert!(browser_steps(&plain).is_empty());
    assert_eq!(stand_in(&plain, TOO_LARGE_FIELD), None);
}
