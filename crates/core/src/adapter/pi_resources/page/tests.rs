use super::*;
use serde_json::json;

fn items(sizes: &[(&str, usize)]) -> Vec<(String, Vec<Value>)> {
    sizes
        .iter()
        .map(|(server, n)| {
            let items = (0..*n)
                .map(|i| json!({ "uri": format!("test://{server}/{i}"), "name": format!("r{i}") }))
                .collect();
            (server.to_string(), items)
        })
        .collect()
}

/// `items` as `page` takes them.
fn listing(items: &[(String, Vec<Value>)]) -> Vec<(String, Vec<&Value>)> {
    items
        .iter()
        .map(|(server, items)| (server.clone(), items.iter().collect()))
        .collect()
}

fn uris(page: &Page) -> Vec<String> {
    page.entries
        .iter()
        .map(|e| e["uri"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every page from the start, following each page's next position.
fn all(listing: &[(String, Vec<&Value>)], budget: usize) -> Vec<Page> {
    let mut pages = vec![page(listing, None, budget)];
    while let Some(next) = pages.last().and_then(|p| p.next.clone()) {
        pages.push(page(listing, Some(&next), budget));
        assert!(pages.len() < 10_000, "the pages end");
    }
    pages
}

#[test]
fn pages_hold_at_most_a_hundred_and_run_across_servers() {
    let items = items(&[("a", 150), ("b", 120)]);
    let pages = all(&listing(&items), usize::MAX);
    assert_eq!(
        pages.iter().map(|p| p.entries.len()).collect::<Vec<_>>(),
        [100, 100, 70]
    );
    assert_eq!(
        pages[1].entries[49]["uri"], "test://a/149",
        "the page runs on into the next server"
    );
    assert_eq!(pages[1].entries[50]["uri"], "test://b/0");
    assert_eq!(
        (pages[2].first, pages[2].total, pages[2].next.clone()),
        (200, 270, None)
    );
    let every: Vec<String> = pages.iter().flat_map(uris).collect();
    assert_eq!(every.len(), 270);
}

#[test]
fn a_page_stays_within_its_byte_budget() {
    let items = items(&[("a", 1000)]);
    let budget = 2000;
    let pages = all(&listing(&items), budget);
    for p in &pages {
        let bytes = serde_json::to_vec(&p.entries).unwrap_or_default().len();
        assert!(bytes <= budget, "{bytes} bytes");
    }
    assert_eq!(pages.iter().map(|p| p.entries.len()).sum::<usize>(), 1000);
}

#[test]
fn a_cursor_survives_another_server_and_its_own_going_away() {
    let before = items(&[("a", 150), ("c", 10)]);
    let next = page(&listing(&before), None, usize::MAX).next.unwrap();
    assert_eq!(
        next,
        Position {
            server: "a".into(),
            index: 100
        }
    );
    // A server added before it changes nothing; its own server gone, the next one starts.
    let added = items(&[("0", 5), ("a", 150), ("c", 10)]);
    assert_eq!(
        uris(&page(&listing(&added), Some(&next), usize::MAX))[0],
        "test://a/100"
    );
    let gone = items(&[("c", 10)]);
    assert_eq!(
        uris(&page(&listing(&gone), Some(&next), usize::MAX))[0],
        "test://c/0"
    );
}

#[test]
fn huge_entries_are_clipped_bared_or_left_out() {
    let items = [
        json!({ "uri": "test://a/0", "name": "long", "description": "word ".repeat(200_000) }),
        json!({ "uri": "test://a/1", "name": "odd", "annotations": { "x": "y".repeat(100_000) } }),
        json!({ "uri": format!("test://a/{}", "z".repeat(100_000)), "name": "huge" }),
        json!({ "uri": "test://a/3", "name": "fine", "_meta": { "x": 1 } }),
    ];
    let page = page(
        &[("a".to_string(), items.iter().collect())],
        None,
        usize::MAX,
    );
    assert_eq!(page.omitted, 1);
    let description = page.entries[0]["description"].as_str().unwrap_or_default();
    assert!(
        description.chars().count() <= MAX_DESCRIPTION && description.ends_with('…'),
        "{description}"
    );
    assert_eq!(
        page.entries[1],
        json!({ "server": "a", "uri": "test://a/1", "name": "odd" })
    );
    assert_eq!(
        page.entries[2],
        json!({ "server": "a", "uri": "test://a/3", "name": "fine" }),
        "its server first, no _meta"
    );
}

#[test]
fn cursors_round_trip_and_strangers_are_refused() {
    let cursor = Cursor {
        tool: "list_mcp_resources".into(),
        server: Some("a".into()),
        at: Position {
            server: "a".into(),
            index: 100,
        },
    };
    assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
    assert_eq!(Cursor::decode("not-a-cursor"), None);
    assert_eq!(Cursor::decode(""), None);
}
