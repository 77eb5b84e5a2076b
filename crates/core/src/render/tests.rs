use super::*;
use crate::catalog::{build_server_tools, ToolPrefix};
use crate::search::{self, SearchOptions};
use std::sync::Arc;

fn tools() -> Vec<ToolInfo> {
    build_server_tools(
        "everything",
        ToolPrefix::Server,
        &[
            json!({"name": "echo", "description": "Echoes back the input.\nSecond line.",
                   "inputSchema": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}}, "required": ["message"]}}),
            json!({"name": "get-sum", "description": "Returns the sum of two numbers",
                   "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}),
            json!({"name": "noop"}),
        ].map(Arc::new),
        &[json!({"uri": "demo://doc", "name": "Doc", "description": "A document"})], &[],
        true,
    )
}

#[test]
fn status_text() {
    let servers = [
        ServerStatus {
            name: "everything".into(),
            state: ServerState::Connected,
            tool_count: 4,
            description: Some("Everything, for tests\nsecond line".into()),
            sign_in: None,
            left_out: 0,
            sharing: Some("shared with 2 other sessions".into()),
        },
        ServerStatus {
            name: "memory".into(),
            state: ServerState::Cached,
            tool_count: 1,
            description: None,
            sign_in: None,
            left_out: 2,
            sharing: None,
        },
        ServerStatus {
            name: "broken".into(),
            state: ServerState::Failed {
                ago_secs: 12,
                reason: "cannot start `x`: command not found\nstderr…".into(),
            },
            tool_count: 0,
            description: None,
            sign_in: None,
            left_out: 0,
            sharing: None,
        },
        ServerStatus {
            name: "web".into(),
            state: ServerState::NeedsAuth {
                reason: needs_auth(
                    "web",
                    "the server answered HTTP 401 Unauthorized",
                    &AuthKind::Bearer {
                        env_var: Some("WEB_TOKEN".into()),
                    },
                ),
            },
            tool_count: 0,
            description: None,
            sign_in: None,
            left_out: 0,
            sharing: None,
        },
        ServerStatus {
            name: "old".into(),
            state: ServerState::Disabled,
            tool_count: 7,
            description: None,
            sign_in: None,
            left_out: 0,
            sharing: None,
        },
    ];
    assert_eq!(
        status(&servers, &["warning: x".into()]),
        "MCP: 1/4 servers connected, 5 tools\n\
         ✓ everything: connected, 4 tools — Everything, for tests [shared with 2 other sessions]\n\
         ○ memory: 1 tool (cached; starts on first use); 2 left out, unreadable (mcp({ server: \"memory\" }) says which)\n\
         ✗ broken: failed 12 s ago: cannot start `x`: command not found\n\
         🔒 web: needs authentication: the server answered HTTP 401 Unauthorized. Set WEB_TOKEN to a valid token, then mcp({ connect: \"web\" }); /mcp-auth web shows how.\n\
         ⊘ old: disabled\n\n\
         mcp({ server: \"name\" }) lists a server's tools; mcp({ search: \"words\" }) finds tools.\n\n\
         Configuration problems:\n\
         - warning: x"
    );
    assert_eq!(
        footer(&servers).unwrap(),
        "MCP 1/4 connected, 1 failed, 1 needs auth"
    );
    let files = [
        (
            "~/.pi/agent/mcp.json".to_string(),
            false,
            vec!["everything", "memory"],
        ),
        ("/work/app/.mcp.json".to_string(), true, vec!["broken"]),
    ];
    assert_eq!(
        config_sources(&files),
        "Servers are defined in:\n\
         - ~/.pi/agent/mcp.json: everything, memory\n\
         - /work/app/.mcp.json (project file: it can launch commands): broken"
    );
    assert!(status(&[], &[]).contains("No MCP servers are configured"));
    assert_eq!(footer(&[]), None);
}

#[test]
fn list_text() {
    let tools = tools();
    let refs: Vec<&ToolInfo> = tools.iter().collect();
    let long = "Use echo for testing. ".repeat(20);
    let page = |server, state, tools, instructions| Listed {
        server,
        state,
        tools,
        offset: 0,
        limit: 100,
        instructions,
        cut: None,
        left_out: &[],
    };
    let text = list(&page(
        "everything",
        &ServerState::Connected,
        &refs,
        Some(&long),
    ));
    assert!(
        text.starts_with(
            "everything: 4 tools (connected)\n\
         - everything_echo: Echoes back the input.\n\
         - everything_get-sum: Returns the sum of two numbers\n\
         - everything_noop\n\
         - everything_get_doc: A document\n\nInstructions: Use echo"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("… (all of it: mcp({ instructions: \"everything\" }))"),
        "{text}"
    );
    assert_eq!(
        list(&page("x", &ServerState::Cached, &[], None)),
        "Server \"x\" has no tools (from cache, not running)."
    );
    let left_out = ["tool \"deep\": its definition nests 140 levels".to_string()];
    let one = Listed {
        left_out: &left_out,
        ..page("x", &ServerState::Connected, &refs[..1], None)
    };
    assert_eq!(
        list(&one),
        "x: 1 tool (connected)\n\
         - everything_echo: Echoes back the input.\n\n\
         Left out of the server's listing, because they could not be read:\n\
         - tool \"deep\": its definition nests 140 levels"
    );
}

#[test]
fn search_text() {
    let tools = tools();
    let opts = SearchOptions {
        limit: 2,
        server: Some("everything".into()),
        ..Default::default()
    };
    let page = search::search(&tools, &search::SearchIndex::build(&tools, &[]), "", &opts).unwrap();
    assert_eq!(
        search("", Some("everything"), &page, true),
        "4 tools on server \"everything\":\n\
         everything_echo: Echoes back the input.\n  { message: string }\n\
         everything_get-sum: Returns the sum of two numbers\n  { a: number; b: number }\n\n\
         2 of 4 — offset 2 for more."
    );
    let page = search::search(
        &tools,
        &search::SearchIndex::build(&tools, &[]),
        "doc noop",
        &SearchOptions {
            limit: 12,
            ..Default::default()
        },
    )
    .unwrap();
    let text = search("doc noop", None, &page, true);
    assert!(
        text.contains("everything_get_doc: A document\n  reads resource demo://doc; no parameters"),
        "{text}"
    );
    assert!(text.contains("everything_noop\n  no parameters"), "{text}");
    assert_eq!(
        search("doc noop", None, &page, false),
        "2 tools match \"doc noop\", best first:\neverything_noop\neverything_get_doc: A document"
    );
    let none = search::search(
        &tools,
        &search::SearchIndex::build(&tools, &[]),
        "zzz",
        &opts,
    )
    .unwrap();
    assert!(search("zzz", Some("everything"), &none, true)
        .starts_with("No tools match \"zzz\" on server \"everything\"."));
}

#[test]
fn a_search_quotes_its_request_briefly() {
    let tools = tools();
    let index = search::SearchIndex::build(&tools, &[]);
    let base64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let blob: String = (0..1_000_000u32)
        .map(|i| char::from(base64[(i.wrapping_mul(2_654_435_761) >> 26) as usize]))
        .collect();
    let lines: Vec<&str> = blob
        .as_bytes()
        .chunks(76)
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect();
    let opts = SearchOptions {
        limit: 12,
        ..Default::default()
    };
    for query in [
        format!("echo this image back {blob} please"),
        format!("echo {}", lines.join("\n")),
    ] {
        let page = search::search(&tools, &index, &query, &opts).unwrap();
        let text = search(&query, None, &page, true);
        assert!(text.len() < 1_000, "{} bytes: {text}", text.len());
        let quoted = text.split('"').nth(1).unwrap();
        assert!(
            quoted.chars().count() <= 101 && quoted.ends_with('…'),
            "{text}"
        );
        assert!(text.contains("everything_echo"), "{text}");
    }
}

#[test]
fn the_same_tool_on_two_servers_shares_a_line() {
    let tools = tools();
    let mut twins = tools.clone();
    for tool in &mut twins {
        tool.server = "everything2".into();
        tool.name = tool.name.replacen("everything", "everything2", 1);
    }
    let mut both = tools.clone();
    both.extend(twins);
    let page = search::search(
        &both,
        &search::SearchIndex::build(&both, &[]),
        "echo",
        &SearchOptions {
            limit: 12,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        search("echo", None, &page, true),
        "1 tool match \"echo\", best first:\n\
         everything_echo (also on everything2: everything2_echo): Echoes back the input.\n  \
         { message: string }"
    );
}

#[test]
fn weak_search_text() {
    let tools = tools();
    let weather = (
        "weather".to_string(),
        "Forecasts, current conditions and alerts".to_string(),
    );
    let page = search::Page {
        hits: vec![search::Hit::alone(&tools[0])],
        total: 1,
        offset: 0,
        weak: Some(vec![weather, ("time".to_string(), String::new())]),
        signals: None,
    };
    assert_eq!(
        search("umbrella tomorrow", None, &page, false),
        "No strong match for \"umbrella tomorrow\": 1 tool shares some of its words, closest first:\n\
         everything_echo: Echoes back the input.\n\
         Servers whose description fits: weather (Forecasts, current conditions and alerts); time. \
         mcp({ server: \"name\" }) lists a server's tools."
    );
    let none = search::Page {
        hits: vec![],
        total: 0,
        offset: 0,
        weak: Some(vec![("time".to_string(), String::new())]),
        signals: None,
    };
    assert!(search("zzz", None, &none, true).ends_with(
        "Servers whose description fits: time. mcp({ server: \"name\" }) lists a server's tools."
    ));
}

#[test]
fn hints_for_people_and_the_model() {
    let hinted = build_server_tools(
        "fs",
        ToolPrefix::None,
        &[
            json!({"name": "read", "annotations": {"readOnlyHint": true, "idempotentHint": true},
                   "icons": [{"src": "https://example.com/read.svg", "mimeType": "image/svg+xml"}]}),
            json!({"name": "wipe", "annotations": {"destructiveHint": true, "openWorldHint": false},
                   "icons": [{"src": "data:image/png;base64,iVBORw0KGgo="}]}),
            json!({"name": "plain", "annotations": {"title": "Plain"}}),
        ]
        .map(Arc::new),
        &[],
        &[],
        false,
    );
    let model = describe(&hinted[0], Audience::Model);
    assert!(
        model.starts_with("read (server \"fs\") [read-only]\n"),
        "{model}"
    );
    assert!(
        describe(&hinted[1], Audience::Model).starts_with("wipe (server \"fs\") [destructive]\n")
    );
    assert!(describe(&hinted[2], Audience::Model).starts_with("plain (server \"fs\")\n"));
    let person = describe(&hinted[0], Audience::Person);
    assert!(
        person.starts_with("read (server \"fs\")\nHints: read-only, idempotent.\nIcon: https://example.com/read.svg\n"),
        "{person}"
    );
    let groups = [("fs".to_string(), hinted.iter().collect::<Vec<_>>())];
    assert_eq!(
        tools_overview(&groups),
        "MCP tools: 3\n\nfs (3 tools)\n- read (read-only, idempotent · icon https://example.com/read.svg)\n- wipe (destructive · icon inline image/png (29 bytes))\n- plain"
    );
    let all: Vec<&ToolInfo> = hinted.iter().collect();
    assert_eq!(
        hints::summary(&all).as_deref(),
        Some("1 read-only, 1 idempotent, 2 with icons, 1 destructive")
    );
}

#[test]
fn describe_text() {
    let tools = tools();
    assert_eq!(
        describe(&tools[0], Audience::Model),
        "everything_echo (server \"everything\", MCP name \"echo\")\nEchoes back the input.\nSecond line.\n\n\
         Parameters:\n- message (string, required): Message to echo"
    );
    assert_eq!(
        describe(&tools[2], Audience::Model),
        "everything_noop (server \"everything\", MCP name \"noop\")\n\nNo parameters."
    );
    assert!(describe(&tools[3], Audience::Model)
        .ends_with("Reads the resource demo://doc; takes no parameters."));
}

#[test]
fn errors_point_to_the_next_step() {
    assert_eq!(
        not_found("ecko", Some("everything"), &["everything_echo".into()]),
        "Tool \"ecko\" not found on server \"everything\". Did you mean: everything_echo?"
    );
    assert!(not_found("x", None, &[]).contains("mcp({ search: \"words\" })"));
    let tools = tools();
    let text = ambiguous("echo", &[&tools[0], &tools[1]]);
    assert!(
        text.contains("everything_echo (server \"everything\")") && text.ends_with("add server.")
    );
}

#[test]
fn tool_definition_is_small_and_stable() {
    let servers = [("everything", None), ("memory", None)];
    let description = tool_description(&servers);
    assert_eq!(description, tool_description(&servers));
    assert!(description.contains("(everything, memory)"));
    let described = tool_description(&[
        (
            "docs",
            Some("Search and read the product documentation of every release, v1 to v9"),
        ),
        ("memory", None),
    ]);
    assert!(
        described.contains("(docs: Search and read the product documentation of…; memory)"),
        "{described}"
    );
    let bytes = description.len() + tool_parameters().to_string().len();
    assert!(
        bytes < 1400,
        "the mcp tool definition grew to {bytes} bytes"
    );
}

#[test]
fn progress_lines() {
    assert_eq!(
        progress("s_t", 2.0, Some(5.0), Some(" copying ")),
        "s_t: 2/5 (copying)"
    );
    assert_eq!(progress("s_t", 0.5, None, None), "s_t: 0.5");
}

#[test]
fn a_long_list_is_paged_and_says_what_a_bound_cut() {
    let tools = tools();
    let refs: Vec<&ToolInfo> = tools.iter().collect();
    let listed = Listed {
        server: "everything",
        state: &ServerState::Connected,
        tools: &refs,
        offset: 1,
        limit: 2,
        instructions: None,
        cut: Some(Cut::Items(4)),
        left_out: &[],
    };
    assert_eq!(
        list(&listed),
        "everything: 4 tools (connected)\n\
         - everything_get-sum: Returns the sum of two numbers\n\
         - everything_noop\n\n\
         2–3 of 4 — mcp({ server: \"everything\", offset: 3 }) for more.\n\n\
         The server lists more than 4 tools; only the first 4 are kept (the bound per server)."
    );
    let past = Listed {
        offset: 9,
        cut: Some(Cut::Bytes(64 * 1024)),
        ..listed
    };
    let text = list(&past);
    assert!(text.contains("None after offset 9."), "{text}");
    assert!(
        text.ends_with("passes 64 KiB; only the first 4 tools, within that bound, are kept."),
        "{text}"
    );
}

#[test]
fn a_task_status_is_progress_without_a_count() {
    assert_eq!(
        progress("t", 0.0, None, Some("Gathering sources...")),
        "t: Gathering sources..."
    );
    assert_eq!(progress("t", 0.0, None, None), "t: 0");
}

/// What a hostile server writes: terminal escapes, a C1 CSI, DEL, a lone CR, a bidi override
/// and a line of its own.
const HOSTILE: &str =
    "\x1b]0;pwned\x07\x1b[2J\u{202e}evil\u{9b}31m\x7f\r✓ forged: line\n✓ forged too";

fn no_raw(text: &str) {
    let raw = |c: char| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c);
    assert!(!text.chars().any(raw), "{text:?}");
}

#[test]
fn a_servers_text_cannot_act_on_a_terminal_or_forge_a_line() {
    let tools = build_server_tools(
        "h",
        ToolPrefix::Server,
        &[Arc::new(json!({
            "name": format!("run{HOSTILE}"),
            "description": HOSTILE,
            "inputSchema": {"type": "object", "properties": {HOSTILE: {"type": "string", "description": HOSTILE, "enum": [HOSTILE]}}},
            "icons": [{"src": format!("https://x/{HOSTILE}")}]
        }))],
        &[],
        &[],
        false,
    );
    let refs: Vec<&ToolInfo> = tools.iter().collect();
    let left_out = [format!("tool \"{HOSTILE}\": too deep")];
    let listed = list(&Listed {
        server: "h",
        state: &ServerState::Connected,
        tools: &refs,
        offset: 0,
        limit: 100,
        instructions: Some(HOSTILE),
        cut: None,
        left_out: &left_out,
    });
    let failed = ServerStatus {
        name: "h".into(),
        state: ServerState::Failed {
            ago_secs: 1,
            reason: HOSTILE.into(),
        },
        tool_count: 1,
        description: None,
        sign_in: None,
        left_out: 0,
        sharing: None,
    };
    let texts = [
        listed,
        status(&[failed], &[]),
        describe(&tools[0], Audience::Person),
        progress("h_run", 1.0, Some(2.0), Some(HOSTILE)),
        not_found(HOSTILE, None, &[]),
    ];
    for (i, text) in texts.iter().enumerate() {
        no_raw(text);
        // A description may run over lines; nothing else here may.
        assert!(i == 2 || !text.contains("\n✓ forged"), "{text}");
    }
    // The name the model calls is the name shown; describe spells out its MCP name.
    assert!(texts[0].contains("- h_run_1b_]0;pwned_7__1b_[2J_202e_evil_9b_31m_7f__d_✓ forged: line_a_✓ forged too: \\u{202e}evil\\x7f ✓ forged: line\n"), "{}", texts[0]);
    assert!(
        texts[2].contains("MCP name \"run\\u{202e}evil\\x7f\\r✓ forged: line\\n✓ forged too\""),
        "{}",
        texts[2]
    );
    assert!(
        texts[2].contains("\nIcon: https://x/\\u{202e}evil\\x7f\\r✓ forged: line\\n✓ forged too"),
        "{}",
        texts[2]
    );
    assert!(texts[1].ends_with("✗ h: failed 1 s ago: \\u{202e}evil\\x7f\\r✓ forged: line\n\nmcp({ server: \"name\" }) lists a server's tools; mcp({ search: \"words\" }) finds tools."), "{}", texts[1]);
}
