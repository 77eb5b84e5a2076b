use super::super::in_memory::{open, Scripted};
use super::*;
use crate::pool::host::NoHost;

fn tools(listing: &Listing) -> Vec<&str> {
    listing
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn every_page_is_listed_once_and_taken_by_all_who_wait() {
    let server = Scripted {
        tools: 250,
        page: 100,
        ..Scripted::default()
    };
    let (conn, served, _) = open(server, Arc::new(NoHost), false).await;
    assert_eq!(conn.instructions.as_deref(), Some("in memory"));
    assert!(!conn.is_listed());
    let bounds = ListBounds::widest(Duration::from_secs(5));
    let (first, second) = tokio::join!(conn.listed(&bounds), conn.listed(&bounds));
    let (first, second) = (first.unwrap(), second.unwrap());
    assert!(Arc::ptr_eq(&first, &second), "one listing for both");
    assert_eq!(first.tools.len(), 250);
    assert_eq!(tools(&first)[249], "tool-249");
    assert_eq!((first.dropped, first.cut), (0, None));
    assert!(conn.is_listed());
    assert!(Arc::ptr_eq(&conn.listing(), &first));
    assert!(served.seen.calls.lock().is_empty());
    conn.close().await;
}

#[tokio::test]
async fn the_bounds_cut_a_listing_and_say_which() {
    let server = Scripted {
        tools: 250,
        page: 100,
        ..Scripted::default()
    };
    let (conn, _served, _) = open(server, Arc::new(NoHost), false).await;
    let items = ListBounds {
        items: 120,
        ..ListBounds::widest(Duration::from_secs(5))
    };
    let cut = conn.relist(&items).await.unwrap();
    assert_eq!((cut.tools.len(), cut.cut), (120, Some(Cut::Items(120))));
    let one_tool = json_size(&conn.listing().tools[0]);
    let bytes = ListBounds {
        bytes: one_tool * 3,
        ..ListBounds::widest(Duration::from_secs(5))
    };
    let cut = conn.relist(&bytes).await.unwrap();
    assert_eq!(cut.tools.len(), 3);
    assert_eq!(cut.cut, Some(Cut::Bytes(one_tool * 3)));
    conn.close().await;
}

#[test]
fn entries_without_what_identifies_them_are_not_valid() {
    assert_eq!(valid_tool(&json!({ "name": "a" })), Some("a"));
    assert_eq!(valid_tool(&json!({ "name": "" })), None);
    assert_eq!(valid_tool(&json!({ "name": "a", "inputSchema": 3 })), None);
    assert_eq!(valid_prompt(&json!({ "name": "p" })), Some("p"));
    let template = json!({ "name": "t", "uriTemplate": "file:///{path}" });
    assert_eq!(valid_template(&template), Some("file:///{path}"));
    assert_eq!(valid_template(&json!({ "uriTemplate": "x" })), None);
    assert_eq!(valid_resource(&json!({ "name": "r", "uri": "" })), None);
    assert_eq!(
        json_size(&json!({ "a": [1, "é"] })),
        r#"{"a":[1,"é"]}"#.len()
    );
}
