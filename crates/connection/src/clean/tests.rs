use super::*;

/// Terminal escapes (title, clear, clipboard, a DCS), a C1 CSI, NUL, DEL, a lone CR, bidi
/// controls and a second line: what the hostile test server writes everywhere.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u{202e}evil\u{202c}\u{9b}31m\x00\x7f\r\u{2066}x\u{2069}\x1bP+q\x1b\\\n✓ forged: line";

/// What may never reach a person raw.
fn raw(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[test]
fn escape_sequences_are_removed_whole_and_other_controls_shown() {
    assert_eq!(
        text(HOSTILE),
        "\\u{202e}evil\\u{202c}\\x00\\x7f\n\\u{2066}x\\u{2069}\n✓ forged: line"
    );
    assert_eq!(
        line(HOSTILE),
        "\\u{202e}evil\\u{202c}\\x00\\x7f\\r\\u{2066}x\\u{2069}\\n✓ forged: line"
    );
    for cleaned in [text(HOSTILE), line(HOSTILE)] {
        assert!(!cleaned.chars().any(raw), "{cleaned:?}");
    }
    assert!(!line(HOSTILE).contains('\n'));
}

#[test]
fn every_kind_of_sequence() {
    let cases = [
        ("a\x1b[31mred\x1b[0m b", "ared b"),                     // SGR
        ("a\x1b[?1049h b", "a b"),                               // private CSI
        ("a\u{9b}2J b", "a b"),                                  // C1 CSI
        ("a\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "alink"), // OSC 8 hyperlink, ST ends
        ("a\u{9d}0;t\u{9c}b", "ab"),                             // C1 OSC and ST
        ("a\x1bPq#0\x1b\\b", "ab"),                              // DCS (sixel)
        ("a\x1b_payload\x07b", "ab"),                            // APC
        ("a\x1bcb", "ab"),                                       // reset
        ("a\x1b(Bb", "ab"),                                      // charset
        ("a\x1b]0;title\x1b[2Jb", "ab"),                         // ESC inside a string ends it
    ];
    for (input, expected) in cases {
        assert_eq!(text(input), expected, "{input:?}");
    }
}

#[test]
fn incomplete_sequences_show_their_escape() {
    assert_eq!(text("a\x1b]0;no end"), "a\\x1b]0;no end");
    assert_eq!(text("a\x1b[31"), "a\\x1b[31");
    assert_eq!(text("a\x1b"), "a\\x1b");
    assert_eq!(text("a\x1bé"), "a\\x1bé");
    assert_eq!(text("\u{9d}x"), "\\x9dx");
}

#[test]
fn newlines_and_tabs_stay_only_in_text() {
    assert_eq!(text("a\r\nb\rc\td\u{2028}e"), "a\nb\nc\td\ne");
    assert_eq!(line("a\r\nb\tc"), "a\\r\\nb\\tc");
}

#[test]
fn invisible_characters_are_shown_in_one_line_fields_only() {
    let emoji = "🧑\u{200d}💻 dev";
    assert_eq!(text(emoji), emoji);
    assert_eq!(line(emoji), "🧑\\u{200d}💻 dev");
    assert_eq!(line("git\u{ad}hub\u{200b}"), "git\\u{ad}hub\\u{200b}");
    // Tags (invisible to people, read by models) and bidi overrides: everywhere.
    assert_eq!(text("hi\u{e0041}\u{e0042}"), "hi\\u{e0041}\\u{e0042}");
    assert_eq!(text("a\u{202e}b"), "a\\u{202e}b");
    // Letters of any script and variation selectors are text.
    let plain = "Grüße, Привет, مرحبا, 你好 ✔\u{fe0f}";
    assert!(matches!(line(plain), Cow::Borrowed(_)));
}

#[test]
fn cleaning_is_idempotent_and_clean_text_is_borrowed() {
    for input in [HOSTILE, "a\x1b]0;x", "\u{9b}\u{9d}\u{90}", "x\r\r\n"] {
        for clean in [line, text] {
            let once = clean(input).into_owned();
            assert_eq!(clean(&once), once, "{input:?}");
        }
    }
    assert!(matches!(text("plain\ttext\nlines"), Cow::Borrowed(_)));
}

#[test]
fn many_unterminated_strings_are_read_once() {
    let input = "\u{9d}x".repeat(200_000);
    let started = std::time::Instant::now();
    let cleaned = text(&input);
    assert!(cleaned.starts_with("\\x9dx\\x9dx"));
    // Linear: well under a second even on a loaded machine (quadratic would take minutes).
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn file_parts() {
    assert_eq!(file_part("\x1b[2J\x07", 8), "__2J_");
    assert_eq!(file_part("my-file_2.txt", 8), "my-file_");
}

#[test]
fn links_with_hidden_characters_are_refused() {
    for (url, shown) in [
        (
            "https://example.com/\x1b]0;x\x07",
            "control character \\x1b (character 21)",
        ),
        (
            "https://example.com/a\nb",
            "control character \\n (character 22)",
        ),
        (
            "https://exa\u{200b}mple.com/",
            "invisible character \\u{200b} (character 12)",
        ),
        (
            "https://example.com/\u{202e}",
            "invisible character \\u{202e} (character 21)",
        ),
        (
            "https://example.com/\u{9b}",
            "control character \\x9b (character 21)",
        ),
    ] {
        let error = Link::parse(url).unwrap_err();
        assert!(error.to_string().contains(shown), "{url:?}: {error}");
    }
    assert!(matches!(
        Link::parse("file:///etc/passwd"),
        Err(LinkError::NotHttp(_))
    ));
    assert!(matches!(
        Link::parse("javascript:alert(1)"),
        Err(LinkError::NotHttp(_))
    ));
    assert!(matches!(
        Link::parse("https://"),
        Err(LinkError::Invalid(_))
    ));
}

#[test]
fn a_look_alike_host_is_shown_beside_its_ascii_form() {
    let link = Link::parse("https://\u{430}pple.com/login?next=/a").unwrap();
    assert_eq!(link.as_str(), "https://xn--pple-43d.com/login?next=/a");
    assert_eq!(
        link.shown(),
        "https://\u{430}pple.com/login?next=/a (host in ASCII: xn--pple-43d.com)"
    );
    // Given in punycode, it is shown in Unicode with the same note.
    assert_eq!(
        Link::parse("https://xn--pple-43d.com/").unwrap().shown(),
        "https://\u{430}pple.com/ (host in ASCII: xn--pple-43d.com)"
    );
    // An ASCII host: shown as given; the browser gets it normalized.
    let plain = Link::parse("https://user@Example.com:8443").unwrap();
    assert_eq!(plain.shown(), "https://user@Example.com:8443");
    assert_eq!(plain.as_str(), "https://user@example.com:8443/");
    assert_eq!(
        Link::parse("http://127.0.0.1:9/cb").unwrap().shown(),
        "http://127.0.0.1:9/cb"
    );
}

#[test]
fn json_stays_exact_and_valid() {
    let value = serde_json::json!({ "said": HOSTILE, "tag": "\u{e0041}" });
    let shown = json(&value);
    assert!(!shown.chars().any(raw), "{shown}");
    assert_eq!(text(&shown), shown);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
        value
    );
    assert_eq!(json(&serde_json::json!({"a": 1})), r#"{"a":1}"#);
}

#[test]
fn excerpts_are_one_cleaned_line_cut_with_an_ellipsis() {
    assert_eq!(
        excerpt("<h1>Bad\x1b[2J\ngateway</h1>\r\n", 200),
        "<h1>Bad gateway</h1>"
    );
    assert_eq!(excerpt("abcdef", 3), "abc…");
    assert_eq!(one_line("a\u{200b}b\n\tc"), "a\\u{200b}b c");
}

#[test]
fn clips_at_a_word_never_inside_a_shown_character() {
    assert_eq!(clip("short", 10), "short");
    assert_eq!(clip("one two three four five", 12), "one two…");
    assert_eq!(clip("abcdefghijklmnop", 5), "abcde…");
    assert_eq!(clip("a list, then more", 8), "a list…");
    let shown = one_line("drop\u{202e}tables");
    assert_eq!(shown, "drop\\u{202e}tables");
    assert_eq!(
        clip(&shown, 8),
        "drop…",
        "a cut inside an escape keeps none of it"
    );
    assert_eq!(clip(&shown, 12), "drop\\u{202e}…");
    assert_eq!(excerpt("日本語のテキスト", 3), "日本語…");
}
