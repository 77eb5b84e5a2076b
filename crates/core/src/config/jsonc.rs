//! JSON with comments (`//`, `/* */`) and trailing commas, as editors write MCP configs.
//! Stripped text keeps every newline, so parse errors still point at the right line.

/// Blanks out comments and trailing commas; strings are left untouched.
pub fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    // Index in `out` of a comma that only whitespace or comments have followed so far.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                pending_comma = None;
                let end = string_end(bytes, i);
                out.extend_from_slice(&bytes[i..end]);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.extend_from_slice(b"  ");
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
                let closing = (bytes.len() - i).min(2);
                out.extend(std::iter::repeat_n(b' ', closing));
                i += closing;
            }
            b',' => {
                pending_comma = Some(out.len());
                out.push(b',');
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
                out.push(b);
                i += 1;
            }
            _ => {
                if !b.is_ascii_whitespace() {
                    pending_comma = None;
                }
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, and multi-byte sequences were copied
    // whole (they never contain quote, slash or comma bytes), so this is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Index just past the string literal starting at `start` (or the end of the text).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// True when the text holds nothing but whitespace and comments (treated as an absent file).
pub fn is_blank(text: &str) -> bool {
    strip(text).trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(text: &str) -> Value {
        serde_json::from_str(&strip(text)).unwrap()
    }

    #[test]
    fn comments_and_trailing_commas() {
        let text = r#"{
            // line comment
            "a": "http://x//y", /* block
            comment */ "b": [1, 2,],
            "c": {"d": "/* not a comment */",},
        }"#;
        assert_eq!(
            parse(text),
            json!({"a": "http://x//y", "b": [1, 2], "c": {"d": "/* not a comment */"}})
        );
    }

    #[test]
    fn escapes_and_unicode() {
        assert_eq!(
            parse(r#"{"a": "q\"uo,]te", "é": "☃", } // end"#),
            json!({"a": "q\"uo,]te", "é": "☃"})
        );
    }

    #[test]
    fn keeps_lines_for_errors() {
        let text = "{\n/* one\ntwo */\n\"a\": x\n}";
        let err = serde_json::from_str::<Value>(&strip(text)).unwrap_err();
        assert_eq!(err.line(), 4);
    }

    #[test]
    fn blank_files() {
        assert!(is_blank("  // nothing\n/* here */\n"));
        assert!(!is_blank("{}"));
    }
}
