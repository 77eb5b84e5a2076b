//! The bounds on what a server may list and on every answer, crossed at small scale.

use crate::support::*;
use pi_mcp_core::adapter::{Bounds, Page};
use serde_json::json;

fn lowered(tools: usize, bytes: usize) -> Bounds {
    Bounds {
        max_server_tools: tools,
        max_server_metadata: bytes,
        ..Bounds::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_past_the_tool_bound_keeps_the_first_tools_and_says_so() {
    let home = Home::new(json!({ "many": server(&["many-tools=250"]) }));
    let session = home.open_with(fast(), lowered(100, 16 << 20));
    let listed = session
        .adapter
        .list(
            "many",
            Page {
                limit: Some(10),
                offset: 90,
            },
        )
        .await;
    assert!(
        text(&listed).starts_with("many: 100 tools"),
        "{}",
        text(&listed)
    );
    assert!(
        text(&listed).contains("- many_tool_99"),
        "{}",
        text(&listed)
    );
    assert!(text(&listed).contains("91–100 of 100"), "{}", text(&listed));
    assert!(
        text(&listed).contains("only the first 100 are kept"),
        "{}",
        text(&listed)
    );
    wait_for("the cache", || {
        home.cache()["servers"]["many"]["tools"]
            .as_array()
            .map(|t| t.len())
    })
    .await;
    assert_eq!(
        home.cache()["servers"]["many"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    let seen = session.execute(json!({ "tool": "many_tool_0" })).await;
    assert_eq!(
        code(&seen),
        "tool_error",
        "the listing stopped asking for pages at the bound"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_past_the_byte_bound_keeps_what_fits() {
    let home = Home::new(json!({ "fat": server(&["many-tools=40", "tool-size=4"]) }));
    let session = home.open_with(fast(), lowered(5000, 32 * 1024));
    let listed = session.adapter.list("fat", Page::default()).await;
    let kept: usize = text(&listed).split(' ').nth(1).unwrap().parse().unwrap();
    assert!((1..40).contains(&kept), "{}", text(&listed));
    assert!(
        text(&listed).contains("metadata passes 32 KiB"),
        "{}",
        text(&listed)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_can_be_lowered_never_raised() {
    let home = Home::new(json!({ "many": server(&["many-tools=30"]) }));
    let raised = lowered(1_000_000, usize::MAX);
    let session = home.open_with(fast(), raised);
    let listed = session.adapter.list("many", Page::default()).await;
    assert!(
        text(&listed).starts_with("many: 30 tools"),
        "{}",
        text(&listed)
    );
    let defaults = Bounds::default();
    assert_eq!(
        raised.lowered_from_default().max_server_tools,
        defaults.max_server_tools
    );
    assert_eq!(
        Bounds {
            fill_concurrency: 0,
            ..defaults
        }
        .lowered_from_default()
        .fill_concurrency,
        1
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_its_answer() {
    let home = Home::new(json!({ "many": server(&["many-tools=250"]) }));
    let session = home.open();
    let first = session.execute(json!({ "server": "many" })).await;
    assert_eq!(
        text(&first).lines().filter(|l| l.starts_with("- ")).count(),
        100
    );
    assert!(
        text(&first).contains("1–100 of 250 — mcp({ server: \"many\", offset: 100 }) for more.")
    );
    let last = session
        .execute(json!({ "server": "many", "offset": 240 }))
        .await;
    assert_eq!(
        text(&last).lines().filter(|l| l.starts_with("- ")).count(),
        10
    );
    let past = session
        .execute(json!({ "server": "many", "offset": 900 }))
        .await;
    assert!(
        text(&past).contains("None after offset 900."),
        "{}",
        text(&past)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_answers_stay_within_the_output_guard() {
    let home = Home::with(
        json!({ "fat": server(&["many-tools=40", "tool-size=8"]) }),
        json!({ "outputGuard": { "maxBytes": 1024, "maxLines": 200 } }),
    );
    let session = home.open();
    for params in [
        json!({ "describe": "fat_tool_1" }),
        json!({ "search": "tool" }),
        json!({ "server": "fat" }),
    ] {
        let answer = session.adapter.execute(&params, None).await;
        assert!(
            text(&answer).len() < 1024 + 512,
            "{params}: {} bytes",
            text(&answer).len()
        );
        let full = answer
            .details
            .full_output_path
            .as_deref()
            .unwrap_or_else(|| panic!("{params}: not cut"));
        assert!(std::fs::metadata(full).unwrap().len() > 1024);
        std::fs::remove_file(full).unwrap();
    }
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_guarded_even_with_the_guard_off_for_results() {
    let home = Home::with(
        json!({ "fat": server(&["many-tools=3", "tool-size=80"]) }),
        json!({ "outputGuard": false }),
    );
    let session = home.open();
    let described = session.execute(json!({ "describe": "fat_tool_0" })).await;
    assert!(
        text(&described).len() < 60 * 1024,
        "{} bytes",
        text(&described).len()
    );
    assert!(described.details.full_output_path.is_some());
    std::fs::remove_file(described.details.full_output_path.as_deref().unwrap()).unwrap();
    finish(session, &home).await;
}
