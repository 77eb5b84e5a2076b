//! `envFile`: a dotenv file whose variables a stdio server gets (Cursor and VS Code write it).
//! `KEY=value` lines, `export ` allowed, `#` comments, single or double quotes.

/// The variables of a dotenv text, in order; the error names the first malformed line.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut vars = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected KEY=value", index + 1));
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "line {}: \"{key}\" is not a variable name",
                index + 1
            ));
        }
        vars.push((key.to_string(), value_of(value.trim())));
    }
    Ok(vars)
}

fn value_of(raw: &str) -> String {
    let quoted = |q: char| {
        raw.strip_prefix(q)
            .and_then(|rest| rest.rfind(q).map(|end| &rest[..end]))
    };
    if let Some(inner) = quoted('"') {
        inner
            .replace("\\n", "\n")
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    } else if let Some(inner) = quoted('\'') {
        inner.to_string()
    } else {
        // An unquoted value ends at a ` #` comment.
        raw.split(" #")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_lines() {
        let text = "# comment\nA=1\nexport B = two words # note\nC=\"quoted # kept\\nnext\"\nD='single $x'\nE=\n";
        let vars = parse(text).unwrap();
        let expected = [
            ("A", "1"),
            ("B", "two words"),
            ("C", "quoted # kept\nnext"),
            ("D", "single $x"),
            ("E", ""),
        ];
        assert_eq!(vars, expected.map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(
            parse("A=1\nnot a line\n").unwrap_err(),
            "line 2: expected KEY=value"
        );
        assert_eq!(
            parse("MY-KEY=1").unwrap_err(),
            "line 1: \"MY-KEY\" is not a variable name"
        );
    }
}
