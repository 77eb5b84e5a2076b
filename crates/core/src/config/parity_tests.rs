//! pi-mcp-adapter's keys read with the meaning they have there (issue 28, item 6), and what doctor
//! says of the ones that are not.

use super::test_tree::{messages, Tree};
use super::{ConfigValue, HttpAuth, Level, Transport};
use pi_mcp_connection::pool::Protocol;
use serde_json::json;
use std::time::Duration;

#[test]
fn server_keys() {
    let tree = Tree::new();
    tree.write(".pi/agent/mcp.json", &json!({
        "mcpServers": {
            "mux": { "socket": "~/run/${TOKEN}.sock", "trace": true, "protocolVersion": "legacy",
                     "searchKeywords": { "create_*": ["new", "add"], "bad": "word" } },
            "signed": { "url": "https://gw.example/mcp", "bearerToken": "!pass show gw",
                        "requestHeadersCommand": { "command": "sign-${TOKEN}", "args": ["--key", "${TOKEN}"],
                                                   "env": { "K": "${TOKEN}" }, "timeoutMs": 90000 } },
            "escaped": { "url": "https://h.example/mcp", "bearerToken": "!!literal", "env": { "A": "!!x" } },
            "both": { "socket": "/s", "url": "https://h.example" }
        }
    }).to_string());
    let config = tree.load();
    let server = |name: &str| config.servers.iter().find(|s| s.name == name).unwrap();
    let mux = server("mux");
    assert_eq!(
        mux.transport,
        Transport::Socket {
            path: tree.home.join("run/t0k.sock")
        }
    );
    assert_eq!(
        (mux.trace, mux.protocol),
        (Some(true), Protocol::Initialize)
    );
    assert_eq!(
        mux.search_keywords,
        [(
            "create_*".to_string(),
            vec!["new".to_string(), "add".to_string()]
        )]
    );
    let Transport::Http {
        auth: HttpAuth::Bearer { token, .. },
        request_headers,
        ..
    } = &server("signed").transport
    else {
        panic!("a url server");
    };
    assert!(matches!(token, Some(ConfigValue::Command(_))), "{token:?}");
    let command = request_headers.as_ref().unwrap();
    assert_eq!(
        (command.command.as_str(), command.args.as_slice()),
        ("sign-t0k", &["--key".to_string(), "t0k".to_string()][..])
    );
    assert_eq!(command.env, [("K".to_string(), "t0k".to_string())]);
    assert_eq!(command.timeout, Duration::from_secs(60), "at most 60 s");
    assert!(!command.untrusted, "the user's own file");
    let Transport::Http {
        auth: HttpAuth::Bearer { token, .. },
        ..
    } = &server("escaped").transport
    else {
        panic!("a url server");
    };
    assert_eq!(
        token,
        &Some(ConfigValue::text("!literal")),
        "`!!` escapes `!`"
    );
    assert!(config.servers.iter().all(|s| s.name != "both"));
    let said = messages(&config, &tree);
    let said: Vec<&str> = said.iter().map(String::as_str).collect();
    assert!(
        said.iter()
            .any(|m| m.contains("`searchKeywords.bad`: must be a list of strings")),
        "{said:?}"
    );
    assert!(said
        .iter()
        .any(|m| m.contains("`requestHeadersCommand.timeoutMs`: is at most 60000")));
    assert!(said
        .iter()
        .any(|m| m.contains("\"both\", field `socket`: is set beside `command` or `url`")));
    assert!(
        !said.iter().any(|m| m.contains("protocolVersion")),
        "\"legacy\" is the default: {said:?}"
    );
}

#[test]
fn request_headers_command_runs_only_where_commands_may() {
    let tree = Tree::new();
    let entry =
        json!({ "url": "https://gw.example/mcp", "requestHeadersCommand": { "command": "sign" } });
    tree.write(
        "project/.mcp.json",
        &json!({ "mcpServers": { "p": entry } }).to_string(),
    );
    // Trusted only because no decision is saved: a project's program does not run.
    let config = tree.load();
    let Transport::Http {
        request_headers, ..
    } = &config.servers[0].transport
    else {
        panic!("a url server");
    };
    let command = request_headers.as_ref().unwrap();
    assert!(command.untrusted);
    assert!(command
        .refusal()
        .contains("no trust decision is saved for this project"));
    let mut opts = tree.opts();
    opts.project_trusted = Some(true);
    let Transport::Http {
        request_headers, ..
    } = &super::load(&opts).servers[0].transport
    else {
        panic!("a url server");
    };
    assert!(!request_headers.as_ref().unwrap().untrusted);
}

#[test]
fn settings_keys_and_what_to_use_instead() {
    let tree = Tree::new();
    tree.write(".pi/agent/mcp.json", &json!({
        "settings": {
            "disableProxyTool": true, "warnOnLargeDirectTools": false,
            "trace": { "enabled": true, "file": "t.jsonl", "maxBytes": 1000, "maxEvents": 5, "colour": 1 },
            "outputGuard": { "maxBytes": 100, "detailsMaxBytes": 10 },
            "hostConfigDiscovery": "on", "oauthCredentialStore": "encrypted-file"
        },
        "mcpServers": { "s": { "command": "x", "bearerTokenStore": true } }
    }).to_string());
    let config = tree.load();
    let settings = &config.settings;
    assert!(settings.disable_proxy_tool && !settings.warn_on_large_direct_tools);
    assert_eq!(
        (
            settings.trace.enabled,
            settings.trace.file.as_deref(),
            settings.trace.max_bytes,
            settings.trace.max_events
        ),
        (true, Some(std::path::Path::new("t.jsonl")), 1000, 5)
    );
    let notes: Vec<String> = config
        .diagnostics
        .iter()
        .filter(|d| d.level == Level::Note)
        .map(|d| d.to_string())
        .collect();
    let said = |key: &str, words: &str| {
        assert!(
            notes.iter().any(|n| n.contains(key) && n.contains(words)),
            "no note on {key} saying {words}: {notes:?}"
        )
    };
    said(
        "`settings.outputGuard.detailsMaxBytes`",
        "keeps no raw result",
    );
    said("`settings.hostConfigDiscovery`", "`\"imports\"");
    said("`settings.oauthCredentialStore`", "sign in once per server");
    said("`bearerTokenStore`", "`bearerTokenEnv`");
    assert!(config
        .diagnostics
        .iter()
        .any(|d| d.field.as_deref() == Some("settings.trace.colour")));
}
