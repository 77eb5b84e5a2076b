//! What an answer says of servers whose tools are still being listed.

/// Servers named; the rest are counted.
pub const NAMES_SHOWN: usize = 3;

/// "2 MCP servers are still being listed (a, b)", "40 … (a, b, c and 37 more)".
pub fn still_listing(pending: &[String]) -> String {
    let shown = pending.len().min(NAMES_SHOWN);
    let mut names = pending[..shown].join(", ");
    if pending.len() > shown {
        names.push_str(&format!(" and {} more", pending.len() - shown));
    }
    match pending.len() {
        1 => format!("1 MCP server is still being listed ({names})"),
        n => format!("{n} MCP servers are still being listed ({names})"),
    }
}

/// The line a search adds while servers are still being listed.
pub fn search_still_listing(pending: &[String]) -> String {
    format!(
        "({}: their tools are not in these results yet; search again in a moment.)",
        still_listing(pending)
    )
}

/// The line a tool name not found adds while servers are still being listed.
pub fn lookup_still_listing(pending: &[String]) -> String {
    format!(
        "({}: the tool may be one of theirs; try again in a moment.)",
        still_listing(pending)
    )
}

/// What the user is told when Pi's first request waited `wait` in vain for servers whose tools
/// it declares.
pub fn declared_still_listing(pending: &[String], wait: std::time::Duration) -> String {
    let (them, their) = match pending.len() {
        1 => ("it", "its"),
        _ => ("them", "their"),
    };
    format!(
        "{}: Pi's first request waited {} s for {them}; {their} tools are declared once listed, in this session or the next run.",
        still_listing(pending),
        wait.as_secs_f32()
    )
}

/// The line `status` adds while servers are being listed in the background.
pub fn status_still_listing(pending: &[String]) -> String {
    format!("{} in the background.", still_listing(pending))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn a_few_names_and_a_count() {
        assert_eq!(
            still_listing(&names(1)),
            "1 MCP server is still being listed (s0)"
        );
        assert_eq!(
            still_listing(&names(3)),
            "3 MCP servers are still being listed (s0, s1, s2)"
        );
        assert_eq!(
            still_listing(&names(300)),
            "300 MCP servers are still being listed (s0, s1, s2 and 297 more)"
        );
    }
}
