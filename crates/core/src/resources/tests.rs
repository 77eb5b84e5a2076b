use super::*;
use crate::render::content::Block;
use serde_json::json;

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[test]
fn templates_are_filled_as_rfc_6570_says() {
    let a = args(
        json!({ "resourceId": 7, "path": "a/b c", "q": "x y", "list": ["red", "green"], "empty": "" }),
    );
    let cases = [
        (
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/text/7",
        ),
        ("file:///{path}", "file:///a%2Fb%20c"),
        ("file:///{+path}", "file:///a/b%20c"),
        ("http://x{/path}", "http://x/a%2Fb%20c"),
        ("http://x/s{?q,missing}", "http://x/s?q=x%20y"),
        ("http://x/s?a=1{&q}", "http://x/s?a=1&q=x%20y"),
        ("x{#path}", "x#a/b%20c"),
        ("{list}", "red,green"),
        ("x{.resourceId}", "x.7"),
        ("m{;empty}", "m;empty"),
        ("{q:1}", "x"),
    ];
    for (template, want) in cases {
        assert_eq!(expand(template, &a).unwrap(), want, "{template}");
    }
    assert_eq!(
        expand("demo://{kind}/{id}", &args(json!({ "kind": "x" }))).unwrap_err(),
        "the template demo://{kind}/{id} needs `id` in `args`"
    );
    assert_eq!(
        template_variables("http://x/{a}{?b,c*}{/d:3}"),
        ["a", "b", "c", "d"]
    );
}

#[test]
fn apps_are_recognized() {
    assert!(is_app(&json!({ "uri": "ui://widget/1" })));
    assert!(is_app(
        &json!({ "uri": "https://x", "mimeType": "text/html; profile=mcp-app" })
    ));
    assert!(!is_app(
        &json!({ "uriTemplate": "demo://{id}", "mimeType": "text/plain" })
    ));
}

#[test]
fn reads_give_text_images_and_saved_files() {
    assert_eq!(
        read_result(&json!({ "contents": [{ "uri": "demo://t", "text": "hello" }] })),
        vec![Block::Text("hello".into())]
    );
    let image = read_result(
        &json!({ "contents": [{ "uri": "demo://i", "mimeType": "image/png", "blob": "iVBORw0KGgo=" }] }),
    );
    assert_eq!(image, vec![Block::image("iVBORw0KGgo=", "image/png")]);
    let blob = read_result(
        &json!({ "contents": [{ "uri": "demo://resource/dynamic/blob/3", "mimeType": "application/octet-stream", "blob": "aGVsbG8gYmxvYg==" }] }),
    );
    let text = blob[0].text().unwrap();
    let path = text
        .split("saved to ")
        .nth(1)
        .unwrap()
        .trim_end_matches(']');
    assert!(text.starts_with("[Resource: demo://resource/dynamic/blob/3 (application/octet-stream), 10 bytes of binary content saved to "), "{text}");
    assert!(path.ends_with(".bin"), "{path}");
    assert_eq!(std::fs::read(path).unwrap(), b"hello blob");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    std::fs::remove_file(path).unwrap();
    let bad = read_result(&json!({ "contents": [{ "uri": "demo://b", "blob": "!!" }] }));
    assert!(bad[0].text().unwrap().contains("not valid base64"));
}

#[test]
fn a_saved_files_name_holds_nothing_of_the_uri_but_plain_characters() {
    let blob = read_result(&json!({ "contents": [
        { "uri": "res://h/data.\x1b[2J\x07", "mimeType": "application/octet-stream", "blob": "aGk=" },
        { "uri": "res://h/pic.\u{202e}gnp", "mimeType": "application/pdf\x1b]0;x\x07", "blob": "aGk=" },
    ] }));
    for (block, extension) in blob.iter().zip(["bin", "bin"]) {
        let text = block.text().unwrap();
        assert!(
            !text.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text:?}"
        );
        let path = text
            .split("saved to ")
            .nth(1)
            .unwrap()
            .trim_end_matches(']');
        let name = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "{name}"
        );
        assert!(name.ends_with(&format!(".{extension}")), "{name}");
        std::fs::remove_file(path).unwrap();
    }
    assert!(blob[0]
        .text()
        .unwrap()
        .starts_with("[Resource: res://h/data.\\x07 (application/octet-stream)"));
}
