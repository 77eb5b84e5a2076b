use super::*;
use serde_json::json;

#[test]
fn only_the_listener_s_own_name_is_a_host() {
    let head = |host: &str| format!("GET / HTTP/1.1\r\nHost: {host}");
    assert!(host_is(&head("127.0.0.1:4000"), 4000));
    for other in [
        "127.0.0.1:4001",
        "localhost:4000",
        "attacker.example:4000",
        "127.0.0.1",
        "[::1]:4000",
        "127.0.0.1:4000.attacker.example",
    ] {
        assert!(!host_is(&head(other), 4000), "{other}");
    }
    assert!(!host_is("GET / HTTP/1.1", 4000), "no Host");
    let twice = "GET / HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nHost: evil:4000";
    assert!(!host_is(twice, 4000), "Host twice");
}

#[test]
fn the_token_comes_from_the_header_or_the_first_load_s_query() {
    let token = crate::loopback::random_token();
    let in_header = format!("POST /x HTTP/1.1\r\nX-Pi-Mcp-Token: {token}");
    assert!(token_is(token_of(&in_header, None), &token));
    let query = format!("a=1&t={token}");
    assert!(token_is(token_of("GET / HTTP/1.1", Some(&query)), &token));
    assert!(!token_is(token_of("GET / HTTP/1.1", Some("t=")), &token));
    assert!(!token_is(token_of("GET / HTTP/1.1", None), &token));
    let other = crate::loopback::random_token();
    assert!(!token_is(Some(&other), &token));
}

#[test]
fn the_csp_allows_what_the_resource_declares_and_nothing_else() {
    let none = Csp::of(None);
    for directive in [
        "default-src 'none'",
        "connect-src 'none'",
        "frame-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "script-src 'unsafe-inline'",
    ] {
        assert!(
            none.header.contains(directive),
            "{directive} in {}",
            none.header
        );
    }
    assert!(!none.header.contains("'self'") && !none.header.contains("127.0.0.1"));

    let ui = json!({ "csp": {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com/lib/"],
        "frameDomains": ["https://player.example.com"],
        "baseUriDomains": ["https://base.example.com"],
    }});
    let declared = Csp::of(Some(&ui));
    assert!(declared.dropped.is_empty(), "{:?}", declared.dropped);
    let h = &declared.header;
    assert!(
        h.contains("connect-src https://api.example.com wss://live.example.com:8443;"),
        "{h}"
    );
    assert!(
        h.contains("script-src 'unsafe-inline' https://*.cdn.example.com/lib/;"),
        "{h}"
    );
    assert!(h.contains("frame-src https://player.example.com;"), "{h}");
    assert!(h.contains("base-uri https://base.example.com;"), "{h}");

    // What would break out of the header, or open everything, is left out and said.
    let hostile = json!({ "csp": { "connectDomains": [
        "*", "https:", "'unsafe-eval'", "https://a.example; script-src *", "data:",
        "javascript:alert(1)", "https://ok.example", 7, "http://x.example\r\nSet-Cookie: a=b",
    ]}});
    let csp = Csp::of(Some(&hostile));
    assert!(
        csp.header.contains("connect-src https://ok.example;"),
        "{}",
        csp.header
    );
    assert_eq!(csp.dropped.len(), 8, "{:?}", csp.dropped);
    assert!(!csp.header.contains('\n') && !csp.header.contains('\r'));
    assert_eq!(csp.header.matches("script-src").count(), 1);
}

#[test]
fn one_message_a_second() {
    let mut pace = Pace::default();
    let start = Instant::now();
    assert_eq!(pace.admit(start), Ok(()));
    let early = pace.admit(start + Duration::from_millis(300));
    assert_eq!(early, Err(Duration::from_millis(700)));
    assert_eq!(pace.admit(start + MESSAGE_INTERVAL), Ok(()));
    // A burst far past the bound (200 a second for 5 s, after the one at 1 s): one a second.
    let admitted = (0..1000)
        .filter(|ms| {
            pace.admit(start + MESSAGE_INTERVAL + Duration::from_millis(ms * 5))
                .is_ok()
        })
        .count();
    assert_eq!(admitted, 4, "at 2, 3, 4 and 5 s");
}

#[test]
fn messages_are_cleaned_bounded_and_never_empty() {
    let message = json!({ "role": "user", "content": [
        { "type": "text", "text": "pick\u{1b}[2J the red one\u{202e}" },
        { "type": "image", "data": "AAAA", "mimeType": "image/png" },
    ]});
    let text = message_text(&message).unwrap();
    assert!(text.starts_with("pick the red one\\u{202e}"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains("[a image block, not shown]"), "{text}");

    let context = json!({ "structuredContent": { "selected": 3 } });
    assert_eq!(message_text(&context).unwrap(), r#"{"selected":3}"#);

    let at_bound = "x".repeat(MAX_MESSAGE - 100);
    assert!(message_text(&json!({ "content": [{ "type": "text", "text": at_bound }] })).is_ok());
    let far_past = "x".repeat(MAX_MESSAGE * 16);
    let refused = message_text(&json!({ "content": [{ "type": "text", "text": far_past }] }));
    assert!(refused.unwrap_err().contains("at most 65536"));
    assert!(message_text(&json!({ "content": [] })).is_err());
    assert!(message_text(&json!({ "content": [{ "type": "text", "text": "  " }] })).is_err());
}

#[test]
fn the_frame_gets_the_permissions_an_app_may_ask_for_and_nothing_else() {
    let frame = Frame::of(Some(&json!({
        "permissions": { "clipboardWrite": {}, "camera": {}, "microphone": false, "usb": {}, "geolocation": "yes" },
        "prefersBorder": false,
        "domain": "a904794854a047f6.claudemcpcontent.com",
    })));
    assert_eq!(
        frame.allow,
        ["camera", "clipboard-write"],
        "in ext-apps' order"
    );
    assert_eq!(frame.border, Some(false));
    assert_eq!(frame.policy(), "microphone=(), geolocation=()");
    assert_eq!(
        frame.granted(),
        json!({ "camera": {}, "clipboardWrite": {} })
    );
    let ignored = frame.ignored.join("\n");
    assert!(
        ignored.contains("permissions.usb: not a permission an app may ask for"),
        "{ignored}"
    );
    assert!(
        ignored.contains("permissions.geolocation: not an object"),
        "{ignored}"
    );
    assert!(
        ignored.contains("domain \"a904794854a047f6.claudemcpcontent.com\": a host on 127.0.0.1 has no dedicated origins"),
        "{ignored}"
    );
    assert_eq!(frame.ignored.len(), 3, "{ignored}");

    let none = Frame::of(None);
    assert!(none.allow.is_empty() && none.border.is_none() && none.ignored.is_empty());
    assert_eq!(
        none.policy(),
        "camera=(), microphone=(), geolocation=(), clipboard-write=()"
    );
    for bad in [
        json!({ "permissions": ["camera"] }),
        json!({ "prefersBorder": "yes" }),
    ] {
        let frame = Frame::of(Some(&bad));
        assert!(frame.allow.is_empty() && frame.border.is_none(), "{bad}");
        assert_eq!(frame.ignored.len(), 1, "{bad}");
    }
}

#[test]
fn an_app_cannot_declare_its_way_to_the_user_s_own_machine() {
    let started = Instant::now();
    // A remote server's app would otherwise reach, from the user's browser, services that listen
    // on the user's machine or network (ours among them).
    let local = [
        "http://127.0.0.1:*",
        "http://127.0.0.1:8080",
        "https://127.8.9.10",
        "http://localhost:3000",
        "ws://localhost",
        "http://LOCALHOST",
        "http://dev.localhost",
        "http://*.localhost",
        "http://0.0.0.0:8000",
        "http://10.1.2.3",
        "http://192.168.1.1",
        "http://172.16.0.1",
        "http://169.254.169.254",
        "http://2130706433",
        "http://127.1",
        "http://0x7f.0.0.1",
    ];
    let mut sources: Vec<&str> = local.to_vec();
    sources.extend([
        "https://api.example.com",
        "https://172.32.0.1",
        "https://1password.com",
    ]);
    for key in [
        "connectDomains",
        "resourceDomains",
        "frameDomains",
        "baseUriDomains",
    ] {
        let csp = Csp::of(Some(&json!({ "csp": { key: sources } })));
        assert_eq!(csp.dropped.len(), local.len(), "{key}: {:?}", csp.dropped);
        for source in local {
            assert!(
                !csp.header.contains(source),
                "{key}: {source} in {}",
                csp.header
            );
        }
        for kept in [
            "https://api.example.com",
            "https://172.32.0.1",
            "https://1password.com",
        ] {
            assert!(csp.header.contains(kept), "{key}: {kept} in {}", csp.header);
        }
    }
    pi_mcp_test_support::report::record(
        "A1",
        "an app's CSP naming the user's machine or network",
        started,
        &format!(
            "{} loopback, private, link-local and numeric sources left out of each of the 4 lists; 3 public kept",
            local.len()
        ),
    );
}
