//! The one glob dialect of tool names in config (`includeTools`, `excludeTools`, `toolExposure`
//! keys, `approveTools`): `*` matches any run of characters (also none), `?` one character, and
//! nothing else is special. MCP tool names never hold either, so an exact name is its own glob.

/// Whether `name` fits `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Greedy with one backtrack point: the last `*` seen and where its run started.
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether `key` is a pattern rather than an exact name.
pub fn is_pattern(key: &str) -> bool {
    key.contains(['*', '?'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("get_*", "get_sum"));
        assert!(matches("*sum", "get_sum"));
        assert!(matches("g?t_*m", "get_sum"));
        assert!(matches("*", ""));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(matches("a*b*c", "a-x-b-y-c"));
        assert!(matches("*_file", "read_file"));
        assert!(matches("a*b", "ab"));
        assert!(!matches("get_*", "echo"));
        assert!(!matches("get_*", "list_get_x"));
        assert!(!matches("a*b", "acbd"));
        assert!(!matches("a*b", "ab-"));
        assert!(!matches("exact", "exactly"));
        assert!(!matches("?", ""));
        assert!(matches("x.y*", "x.y.z"), "no regex meaning");
        assert!(!matches("x.y*", "xzy"));
        assert!(matches("読み*", "読み込み"), "characters, not bytes");
    }

    #[test]
    fn patterns_are_told_from_names() {
        assert!(is_pattern("get_*"));
        assert!(is_pattern("get_?"));
        assert!(!is_pattern("get_issue"));
    }
}
