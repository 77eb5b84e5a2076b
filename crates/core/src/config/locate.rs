//! Finding the line of a key in a config file, so that messages can say where to look.
//! Only run when there is something to report.

/// The line (1-based) of the deepest key of `path` found in `text` (JSON, comments allowed):
/// `["mcpServers", "github", "env", "TOKEN"]` gives the line of `"TOKEN"`, or of `"env"` when
/// there is no such variable, and so on.
pub fn json_line(text: &str, path: &[&str]) -> Option<usize> {
    let stripped = super::jsonc::strip(text);
    let mut scanner = Scanner {
        bytes: stripped.as_bytes(),
        at: 0,
    };
    let mut found = None;
    for key in path {
        match scanner.find_key(key) {
            Some(offset) => found = Some(offset),
            None => break,
        }
    }
    found.map(|offset| line_at(&stripped, offset))
}

/// The line of a `[mcp_servers.<name>]` table in a TOML file, or of `key = ` inside it when
/// `key` is given and set there.
pub fn toml_line(text: &str, table: &str, name: &str, key: Option<&str>) -> Option<usize> {
    let headers = [
        format!("[{table}.{name}]"),
        format!("[{table}.\"{name}\"]"),
        format!("[{table}.'{name}']"),
    ];
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| {
        let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        headers.iter().any(|h| l.starts_with(h.as_str()))
    })?;
    let in_table = lines[start + 1..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with('['))
        .position(|l| {
            key.is_some_and(|k| {
                l.trim_start()
                    .strip_prefix(k)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
            })
        });
    Some(start + 1 + in_table.map_or(0, |i| i + 1))
}

/// The 1-based line of a byte offset.
pub fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The members of the object whose `{` is at `open` in `text` (comments already blanked), with
/// where each key and value is; `None` when there is no object there.
pub fn members(text: &str, open: usize) -> Option<Members> {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        at: open,
    };
    if scanner.peek()? != b'{' {
        return None;
    }
    scanner.at += 1;
    let mut items = vec![];
    loop {
        scanner.skip_space();
        match scanner.peek()? {
            b'}' => {
                return Some(Members {
                    open,
                    close: scanner.at,
                    items,
                })
            }
            b',' => scanner.at += 1,
            b'"' => {
                let key_start = scanner.at;
                let key = scanner.string()?;
                scanner.skip_space();
                if scanner.peek()? != b':' {
                    return None;
                }
                scanner.at += 1;
                scanner.skip_space();
                let start = scanner.at;
                scanner.skip_value()?;
                let value = start..text[..scanner.at].trim_end().len();
                items.push(Member {
                    key,
                    key_start,
                    value,
                });
            }
            _ => return None,
        }
    }
}

/// An object's braces and members in a text.
pub struct Members {
    /// Byte offsets of `{` and `}`.
    pub open: usize,
    pub close: usize,
    pub items: Vec<Member>,
}

pub struct Member {
    pub key: String,
    /// Byte offset of the key's opening quote.
    pub key_start: usize,
    pub value: std::ops::Range<usize>,
}

impl Members {
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.items.iter().find(|m| m.key == key)
    }
}

/// Walks JSON text (comments already blanked) one object level at a time.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    /// Inside the value at the cursor (an object), finds `key` and leaves the cursor on its value;
    /// returns the key's offset.
    fn find_key(&mut self, key: &str) -> Option<usize> {
        self.skip_space();
        if self.peek()? != b'{' {
            return None;
        }
        self.at += 1;
        loop {
            self.skip_space();
            match self.peek()? {
                b'}' => return None,
                b',' => self.at += 1,
                b'"' => {
                    let start = self.at;
                    let name = self.string()?;
                    self.skip_space();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    if name == key {
                        return Some(start);
                    }
                    self.skip_value()?;
                }
                _ => return None,
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// Reads the string literal at the cursor, escapes decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.at + 1;
        let mut i = start;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'"' => {
                    self.at = i + 1;
                    let raw = std::str::from_utf8(&self.bytes[start..i]).ok()?;
                    return Some(
                        serde_json::from_str(&format!("\"{raw}\"")).unwrap_or(raw.to_string()),
                    );
                }
                _ => i += 1,
            }
        }
        None
    }

    /// Moves the cursor past the value at it.
    fn skip_value(&mut self) -> Option<()> {
        self.skip_space();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']'))
                {
                    self.at += 1;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
  // servers
  "settings": {"toolPrefix": "x"},
  "mcpServers": {
    "a": {"command": "x", "args": ["{", "}"]},
    "b": {
      "command": "y",
      "env": {
        "K": 1
      }
    }
  }
}"#;

    #[test]
    fn json_keys() {
        assert_eq!(json_line(FILE, &["mcpServers"]), Some(4));
        assert_eq!(json_line(FILE, &["mcpServers", "b", "env", "K"]), Some(9));
        assert_eq!(json_line(FILE, &["mcpServers", "b", "cwd"]), Some(6));
        assert_eq!(json_line(FILE, &["mcpServers", "a", "args"]), Some(5));
        assert_eq!(json_line(FILE, &["settings", "toolPrefix"]), Some(3));
        assert_eq!(json_line(FILE, &["nothing"]), None);
        assert_eq!(json_line("[1, 2]", &["a"]), None);
    }

    #[test]
    fn toml_tables() {
        let text = "model = \"x\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = 1\n\n[mcp_servers.\"my-http\"]\nurl = 5\n";
        assert_eq!(toml_line(text, "mcp_servers", "docs", None), Some(3));
        assert_eq!(
            toml_line(text, "mcp_servers", "docs", Some("args")),
            Some(5)
        );
        assert_eq!(toml_line(text, "mcp_servers", "docs", Some("url")), Some(3));
        assert_eq!(
            toml_line(text, "mcp_servers", "my-http", Some("url")),
            Some(8)
        );
        assert_eq!(toml_line(text, "mcp_servers", "none", None), None);
    }
}
