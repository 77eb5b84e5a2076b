//! The modes of the `mcp` tool through `execute`, as the model uses them.

use crate::support::*;
use pi_mcp_core::adapter::{Page, StartOptions};
use pi_mcp_core::config::Exposure;
use pi_mcp_core::events::Event;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_mode_given_is_run() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    let run = |params| {
        let adapter = session.adapter.clone();
        async move { adapter.execute(&params, None).await }
    };
    assert_eq!(run(json!({})).await.details.mode.as_str(), "status");
    assert_eq!(
        run(json!({ "server": "s" })).await.details.mode.as_str(),
        "list"
    );
    assert_eq!(
        run(json!({ "search": "echo", "server": "s" }))
            .await
            .details
            .mode
            .as_str(),
        "search"
    );
    assert_eq!(
        run(json!({ "describe": "s_echo", "search": "x" }))
            .await
            .details
            .mode
            .as_str(),
        "describe"
    );
    assert_eq!(
        run(json!({ "instructions": "s", "search": "x" }))
            .await
            .details
            .mode
            .as_str(),
        "instructions"
    );
    let call =
        run(json!({ "tool": "s_echo", "args": "{\"text\": \"as JSON text\"}", "connect": "s" }))
            .await;
    assert_eq!(text(&call), "echo: as JSON text");
    assert_eq!(
        run(json!({ "connect": "s", "describe": "s_echo" }))
            .await
            .details
            .mode
            .as_str(),
        "connect"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistakes_in_the_parameters_are_answered_without_starting_anything() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    let nested = session.execute(json!({ "args": { "search": "x" } })).await;
    assert_eq!(code(&nested), "nested_params");
    let bad_json = session
        .execute(json!({ "tool": "s_echo", "args": "{oops" }))
        .await;
    assert_eq!(code(&bad_json), "invalid_args");
    assert!(
        text(&bad_json).contains("`args` is not valid JSON"),
        "{}",
        text(&bad_json)
    );
    let regex = session
        .adapter
        .execute(&json!({ "search": "(", "regex": true }), None)
        .await;
    assert_eq!(code(&regex), "invalid_query");
    assert!(
        home.processes().len() <= 1,
        "at most the search's listing ran"
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_do_not_fit_the_schema_are_refused_before_the_call() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    session.adapter.list("s", Page::default()).await;
    let refused = session
        .adapter
        .execute(
            &json!({ "tool": "s_echo", "args": { "text": ["not", "a", "string"] } }),
            None,
        )
        .await;
    assert_eq!(code(&refused), "invalid_args");
    assert!(text(&refused).contains("`text`"), "{}", text(&refused));
    let seen = session.execute(json!({ "tool": "s_seen" })).await;
    assert!(
        !text(&seen).contains("tools/call, tools/call"),
        "the refused call never went out: {}",
        text(&seen)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lists_the_servers_it_lacks_and_says_which_it_could_not() {
    let home = Home::new(json!({ "good": server(&[]), "bad": server(&["exit-at-start"]) }));
    let session = home.open();
    let found = session.execute(json!({ "search": "echo" })).await;
    assert!(
        text(&found).starts_with("1 tool match \"echo\""),
        "{}",
        text(&found)
    );
    assert!(text(&found).contains("good_echo"), "{}", text(&found));
    assert!(
        text(&found).contains("(Server \"bad\" was not searched: exited with code 2"),
        "{}",
        text(&found)
    );
    let first = &part!(found, Search).matches[0];
    assert_eq!(
        (first.server.as_str(), first.tool.as_str(), first.also.len()),
        ("good", "good_echo", 0)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_ambiguous_tools_get_names_to_try() {
    let home = Home::with(
        json!({ "a": server(&[]), "b": server(&[]) }),
        json!({ "toolPrefix": "none" }),
    );
    let session = home.open();
    let ambiguous = session.execute(json!({ "describe": "echo" })).await;
    assert_eq!(code(&ambiguous), "ambiguous_tool", "{}", text(&ambiguous));
    let scoped = session
        .execute(json!({ "describe": "echo", "server": "b" }))
        .await;
    assert_eq!(
        scoped.details.server.as_deref(),
        Some("b"),
        "{}",
        text(&scoped)
    );
    let unknown = session.execute(json!({ "tool": "ecko" })).await;
    assert_eq!(code(&unknown), "tool_not_found");
    assert!(text(&unknown).contains("echo"), "{}", text(&unknown));
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_shows_the_parameters_and_the_schema_for_programs() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    let described = session.execute(json!({ "describe": "s_echo" })).await;
    assert!(
        text(&described).starts_with("s_echo (server \"s\", MCP name \"echo\")"),
        "{}",
        text(&described)
    );
    assert!(text(&described).contains("text"), "{}", text(&described));
    let schema = part!(described, Describe).input_schema.as_ref().unwrap();
    assert_eq!(schema["properties"]["text"]["type"], "string");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_and_list_show_what_the_server_said() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    let instructions = session.execute(json!({ "instructions": "s" })).await;
    assert!(text(&instructions).contains("A server for tests that misbehaves on purpose."));
    let listed = session.execute(json!({ "server": "s" })).await;
    // Looking at a server's tools does not keep it running.
    assert!(
        text(&listed).starts_with("s: 8 tools (from cache, not running)"),
        "{}",
        text(&listed)
    );
    assert!(
        text(&listed).contains("Instructions: A server for tests"),
        "{}",
        text(&listed)
    );
    assert_eq!(part!(listed, List).tools, 8);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_become_tools_that_read_them() {
    let home = Home::new(
        json!({ "s": { "command": test_server(), "args": ["resources=2"], "exposeResources": true } }),
    );
    let session = home.open();
    let listed = session.adapter.list("s", Page::default()).await;
    assert!(
        text(&listed).contains("s_get_resource_1"),
        "{}",
        text(&listed)
    );
    let read = session.execute(json!({ "tool": "s_get_resource_2" })).await;
    assert_eq!(
        text(&read),
        "the contents of test://resource/2",
        "{}",
        text(&read)
    );
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_error_is_flagged_with_its_code() {
    let home = Home::new(json!({ "s": server(&["many-tools=3"]) }));
    let session = home.open();
    session.adapter.list("s", Page::default()).await;
    // Listed, but unknown to the server's call handler: it answers with isError.
    let failed = session.execute(json!({ "tool": "s_tool_1" })).await;
    assert_eq!(code(&failed), "tool_error");
    assert!(failed.is_error);
    assert_eq!(text(&failed), "unknown tool tool_1");
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_past_the_output_guard_is_cut_and_saved() {
    let home = Home::new(json!({ "s": server(&["big-result=1"]) }));
    let session = home.open();
    let big = session.execute(json!({ "tool": "s_big" })).await;
    assert!(!big.is_error, "{}", &text(&big)[..200]);
    assert!(text(&big).len() < 60 * 1024);
    assert!(
        text(&big).contains("[Output cut: showing"),
        "{}",
        &text(&big)[text(&big).len() - 300..]
    );
    let path = big.details.full_output_path.clone().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1024 * 1024);
    std::fs::remove_file(path).unwrap();
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_change_is_relisted_cached_and_announced() {
    let home = Home::new(json!({ "s": server(&[]) }));
    let session = home.open();
    // What servers report is handled once the session has started.
    session.adapter.start(StartOptions { defer_fill: true });
    let grown = session.execute(json!({ "tool": "s_grow" })).await;
    assert_eq!(text(&grown), "now 9 tools");
    let changed = session
        .event("catalog-changed", |e| {
            matches!(e, Event::CatalogChanged { .. })
        })
        .await;
    assert_eq!(
        changed,
        Event::CatalogChanged {
            server: "s".into(),
            tools: 9
        }
    );
    assert!(text(&session.adapter.list("s", Page::default()).await).contains("- s_grown_1"));
    wait_for("the cache to hold the new tool", || {
        home.cache().to_string().contains("grown_1").then_some(())
    })
    .await;
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announcement_at_start_changes_nothing() {
    let home = Home::new(json!({ "s": server(&["announce-at-start"]) }));
    let session = home.open();
    session.adapter.start(StartOptions { defer_fill: true });
    session.adapter.list("s", Page::default()).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // The announcement crosses the first listing: at most one more listing, the same tools.
    let seen = session.execute(json!({ "tool": "s_seen" })).await;
    assert!(
        text(&seen).matches("tools/list").count() <= 2,
        "{}",
        text(&seen)
    );
    assert_eq!(
        session.count(|e| matches!(e, Event::CatalogChanged { .. })),
        0
    );
    assert_eq!(session.count(|e| matches!(e, Event::Connected { .. })), 1);
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_tools_come_from_the_catalog() {
    let home = Home::new(
        json!({ "s": { "command": test_server(), "directTools": ["echo", "nonesuch"] } }),
    );
    let first = home.open();
    assert!(
        first.adapter.direct_tools().tools.is_empty(),
        "nothing known yet"
    );
    first.adapter.list("s", Page::default()).await;
    let set = first.adapter.direct_tools();
    assert_eq!(set.tools.len(), 1);
    assert_eq!(
        (set.tools[0].name.as_str(), set.tools[0].tool.as_str()),
        ("s_echo", "echo")
    );
    assert_eq!(set.tools[0].parameters["type"], "object");
    assert!(
        set.warnings[0].contains("\"nonesuch\" is not a tool of server \"s\""),
        "{:?}",
        set.warnings
    );
    finish(first, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_times_a_fresh_connection_to_each_server() {
    let home = Home::new(json!({ "good": server(&[]), "bad": server(&["exit-at-start"]) }));
    let session = home.open();
    let report = session.adapter.doctor(true).await;
    assert_eq!(code(&report), "connect_failed");
    let servers = &part!(report, Doctor).servers;
    let good = servers[0].connect.as_ref().unwrap();
    assert_eq!((good.ok, good.tools), (true, Some(8)));
    let bad = servers[1].connect.as_ref().unwrap();
    assert!(!bad.ok);
    assert!(bad.error.as_ref().unwrap().contains("exited with code 2"));
    finish(session, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pis_resource_tools_take_the_widest_exposure_of_the_servers_with_resources() {
    let with = |exposure: &str| {
        let mut entry = server(&["resources=2"]);
        entry["exposure"] = json!(exposure);
        entry
    };
    let home = Home::new(json!({
        "docs": server(&["resources=2"]),
        "plain": server(&[]),
        "secret": with("hidden"),
    }));
    let session = home.open();
    let exposures = |session: &Session| {
        let tools = session.adapter.direct_tools().resource_tools;
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        (names, tools.first().and_then(|t| t.exposure))
    };
    // Nothing known to have resources yet (no cache): no tools.
    assert_eq!(exposures(&session), (vec![], None));
    for name in ["docs", "plain", "secret"] {
        session.adapter.list(name, Page::default()).await;
    }
    // `docs` has no `exposure`: Pi's default, codemode; the hidden server does not count.
    let (names, exposure) = exposures(&session);
    assert_eq!(
        names,
        [
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource"
        ]
    );
    assert_eq!(exposure, Some(Exposure::Codemode));

    let run = |name: &'static str, params: serde_json::Value| {
        let adapter = session.adapter.clone();
        async move { adapter.pi_resource_tool(name, &params, None).await }
    };
    let all = run("list_mcp_resources", json!({})).await;
    let listed = *all.structured.clone().unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(
        listed["resources"][0],
        json!({ "server": "docs", "uri": "test://resource/1", "name": "resource 1" })
    );
    assert_eq!(text(&all), listed.to_string());
    let none = run("list_mcp_resources", json!({ "server": "plain" })).await;
    assert!(none.is_error);
    assert_eq!(
        text(&none),
        "MCP server \"plain\" has no resources. Servers with resources: docs."
    );
    let read = run(
        "read_mcp_resource",
        json!({ "server": "docs", "uri": "test://resource/2" }),
    )
    .await;
    assert!(!read.is_error, "{}", text(&read));
    let missing = run("read_mcp_resource", json!({ "server": "docs" })).await;
    assert_eq!(
        missing.details.error.map(|e| e.as_str()),
        Some("invalid_args")
    );
    finish(session, &home).await;

    // One direct server with resources makes them direct.
    let home = Home::new(json!({ "docs": server(&["resources=1"]), "near": with("direct") }));
    let session = home.open();
    for name in ["docs", "near"] {
        session.adapter.list(name, Page::default()).await;
    }
    assert_eq!(exposures(&session).1, Some(Exposure::Direct));
    finish(session, &home).await;
}
