//! `includeTools` and `excludeTools`: which of a server's tools its config lets through, by
//! `*`/`?` globs over a tool's MCP name or its prefixed name.

use super::ServerConfig;

impl ServerConfig {
    /// Whether `includeTools` and `excludeTools` let the tool through (`original`: its MCP
    /// name, `name`: its prefixed name).
    pub fn lets_through(&self, original: &str, name: &str) -> bool {
        let listed = |globs: &Option<Vec<String>>| {
            globs
                .as_ref()
                .map(|globs| globs.iter().any(|g| names(g, original, name)))
        };
        listed(&self.include_tools).unwrap_or(true) && !listed(&self.exclude_tools).unwrap_or(false)
    }

    /// The `excludeTools` entries that leave the tool out.
    pub fn excluded_by(&self, original: &str, name: &str) -> Vec<&str> {
        self.exclude_tools
            .iter()
            .flatten()
            .filter(|g| names(g, original, name))
            .map(String::as_str)
            .collect()
    }
}

/// Whether `glob` matches the tool's MCP or prefixed name.
fn names(glob: &str, original: &str, name: &str) -> bool {
    glob_match(glob, original) || glob_match(glob, name)
}

/// `*` (any run) and `?` (one character) globs.
fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
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

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("get_*", "get_sum"));
        assert!(glob_match("*sum", "get_sum"));
        assert!(glob_match("g?t_*m", "get_sum"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("get_*", "echo"));
        assert!(!glob_match("a*b", "acbd"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
    }
}
