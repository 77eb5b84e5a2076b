//! The system prompt's `mcp_servers` section: the servers whose tools are not declared to the
//! model, each with a one-line summary, so that the model knows what it can reach before it
//! searches. Made from the config and the metadata cache only, sorted by name, so the same config
//! and cache give the same bytes whatever runs or failed (prompt caches keep their prefix).

use super::o200k;
use pi_mcp_connection::clean::one_line;

/// Servers the section names; the others are counted.
pub const SECTION_SERVERS: usize = 30;
/// o200k tokens a server's summary may take (by `o200k::bound`, never below the real count).
pub const SUMMARY_TOKENS: usize = 20;
/// Characters of a description's or instructions' first line looked at: far more than a summary
/// keeps (at most 16 bytes per token, 320 in all).
const FIRST_LINE_CHARS: usize = 4096;

/// A server the section names.
pub struct SectionServer<'a> {
    pub name: &'a str,
    /// The config's `description`.
    pub description: Option<&'a str>,
    /// The instructions it gave when it was listed (from the metadata cache).
    pub instructions: Option<&'a str>,
}

/// The section's text, or None without servers.
pub fn servers_section(mut servers: Vec<SectionServer>) -> Option<String> {
    if servers.is_empty() {
        return None;
    }
    servers.sort_by(|a, b| a.name.cmp(b.name));
    let mut out = String::from(
        "MCP servers whose tools you reach through the `mcp` tool (search, describe, call):",
    );
    for server in servers.iter().take(SECTION_SERVERS) {
        out.push_str("\n- ");
        out.push_str(&one_line(server.name));
        let summary = summary(server.description, server.instructions);
        if !summary.is_empty() {
            out.push_str(": ");
            out.push_str(&summary);
        }
    }
    if let Some(more) = servers
        .len()
        .checked_sub(SECTION_SERVERS)
        .filter(|n| *n > 0)
    {
        out.push_str(&format!(
            "\n+{more} more: `mcp` without arguments lists them all."
        ));
    }
    Some(out)
}

/// The first line of `description`, else of `instructions`, cleaned and within SUMMARY_TOKENS.
pub fn summary(description: Option<&str>, instructions: Option<&str>) -> String {
    [description, instructions]
        .into_iter()
        .flatten()
        .map(|text| {
            let first = text
                .trim_start()
                .split(is_line_break)
                .next()
                .unwrap_or_default();
            let head: String = first.chars().take(FIRST_LINE_CHARS).collect();
            o200k::clip_to_tokens(&one_line(&head), SUMMARY_TOKENS).into_owned()
        })
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server<'a>(
        name: &'a str,
        description: Option<&'a str>,
        instructions: Option<&'a str>,
    ) -> SectionServer<'a> {
        SectionServer {
            name,
            description,
            instructions,
        }
    }

    #[test]
    fn sorted_with_the_first_line_of_the_description_else_of_the_instructions() {
        let section = servers_section(vec![
            server("memory", None, Some("\n\nKnowledge graph memory.\nMore.")),
            server(
                "everything",
                Some("Every feature of MCP\nsecond line"),
                Some("ignored"),
            ),
            server("bare", None, None),
            server("blank", Some(" \u{1b}[0m "), Some("From its instructions")),
        ])
        .unwrap();
        assert_eq!(
            section,
            "MCP servers whose tools you reach through the `mcp` tool (search, describe, call):\n\
             - bare\n\
             - blank: From its instructions\n\
             - everything: Every feature of MCP\n\
             - memory: Knowledge graph memory."
        );
        assert_eq!(servers_section(vec![]), None);
    }

    #[test]
    fn thirty_servers_then_a_count() {
        let names: Vec<String> = (0..300).map(|i| format!("s{i:03}")).collect();
        let section = |n: usize| {
            servers_section(
                names[..n]
                    .iter()
                    .map(|name| server(name, Some("d"), None))
                    .collect(),
            )
            .unwrap()
        };
        // At the bound: every server, no count.
        let thirty = section(SECTION_SERVERS);
        assert_eq!(thirty.lines().count(), 1 + 30);
        assert!(!thirty.contains("more:"));
        // Far past it: 30 named, the rest counted.
        let many = section(300);
        assert_eq!(many.lines().count(), 1 + 30 + 1);
        assert!(
            many.contains("\n- s029: d\n+270 more: `mcp` without arguments lists them all."),
            "{many}"
        );
        assert!(!many.contains("s030"));
    }

    #[test]
    fn hostile_text_is_cleaned_and_bounded() {
        let hostile = format!(
            "\u{1b}]0;pwned\u{7}\u{1b}[2JDrop \u{202e}tables\u{202c} now {}",
            "A".repeat(1 << 20)
        );
        let line = summary(Some(&hostile), None);
        // The escape sequences gone, the bidi controls shown as text (`pi_mcp_connection::clean`'s rule).
        assert!(
            line.starts_with(r"Drop \u{202e}tables\u{202c} now"),
            "{line}"
        );
        assert!(!line
            .chars()
            .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)));
        assert!(
            o200k::bound(line.trim_end_matches('…')) + 3 <= SUMMARY_TOKENS,
            "{line}"
        );
        let section =
            servers_section(vec![server("evil\u{1b}[31m\nname", Some(&hostile), None)]).unwrap();
        assert_eq!(section.lines().count(), 2, "{section}");
        assert!(section.contains("\n- evil name: Drop "), "{section}");
    }
}
