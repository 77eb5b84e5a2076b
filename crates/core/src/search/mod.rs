//! Finding tools: ranked word search (exact and prefix name matches first, then BM25 relevance
//! over name, server, description and parameter names, with the words a request's words may
//! stand for), linear-time regex search, and "did you mean" suggestions for a name that does not
//! exist.

mod cover;
mod index;
#[cfg(test)]
mod real_catalogs;
mod related;
mod request;
mod script;
mod twins;
mod weak;
mod words;

pub use index::{SearchIndex, ServerText};
pub use weak::Signals;

use crate::catalog::ToolInfo;
use index::loose;
use regex::RegexBuilder;
use words::words;

/// Longest regex accepted (the engine is linear-time; this bounds compile cost and memory).
pub const MAX_REGEX_LEN: usize = 256;
/// Servers suggested with a weak match.
const SUGGESTED_SERVERS: usize = 3;

#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    pub regex: bool,
    pub server: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

/// A tool found, and the same tool on other servers, found with it.
#[derive(Debug)]
pub struct Hit<'a> {
    pub tool: &'a ToolInfo,
    pub also: Vec<&'a ToolInfo>,
}

impl<'a> Hit<'a> {
    pub fn alone(tool: &'a ToolInfo) -> Hit<'a> {
        Hit {
            tool,
            also: Vec::new(),
        }
    }
}

/// One page of hits, best first.
#[derive(Debug)]
pub struct Page<'a> {
    pub hits: Vec<Hit<'a>>,
    /// Matches before paging.
    pub total: usize,
    pub offset: usize,
    /// Set when no tool matches a word search well: the servers whose description fits the
    /// request (name, what it is for), best first; possibly none.
    pub weak: Option<Vec<(String, String)>>,
    /// For a word search, how well the request was matched.
    pub signals: Option<Signals>,
}

/// Searches `tools` (indexed by `index`, built from the same slice).
pub fn search<'a>(
    tools: &'a [ToolInfo],
    index: &SearchIndex,
    query: &str,
    opts: &SearchOptions,
) -> Result<Page<'a>, String> {
    let in_scope = |t: &&ToolInfo| opts.server.as_deref().is_none_or(|s| t.server == s);
    let query = query.trim();
    let want = opts.offset + opts.limit.max(1);
    let mut weak = None;
    let mut signals = None;
    let (ranked, total): (Vec<Hit>, usize) = if query.is_empty() {
        if opts.server.is_none() {
            return Err("The search query is empty: give words to look for, e.g. mcp({ search: \"read file\" }), or a `server` to list its tools.".into());
        }
        let mut all: Vec<&ToolInfo> = tools.iter().filter(in_scope).collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        let total = all.len();
        (all.into_iter().map(Hit::alone).collect(), total)
    } else if opts.regex {
        let scoped = tools.iter().enumerate().filter(|(_, t)| in_scope(t));
        let all = regex_matches(scoped, index, query)?;
        let total = all.len();
        (all.into_iter().map(Hit::alone).collect(), total)
    } else {
        let ranked = index.rank(query, |i| in_scope(&&tools[i]), want);
        signals = Some(ranked.signals);
        if ranked.signals.weak(ranked.needs) {
            weak = Some(match opts.server {
                Some(_) => Vec::new(),
                None => index
                    .servers_for(query, SUGGESTED_SERVERS)
                    .into_iter()
                    .map(|(name, about)| (name.to_string(), about.to_string()))
                    .collect(),
            });
        }
        let mut also = ranked.also;
        let hits = ranked
            .hits
            .into_iter()
            .map(|i| Hit {
                tool: &tools[i],
                also: also
                    .remove(&i)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|j| &tools[j])
                    .collect(),
            })
            .collect();
        (hits, ranked.total)
    };
    let hits = ranked
        .into_iter()
        .skip(opts.offset)
        .take(opts.limit.max(1))
        .collect();
    Ok(Page {
        hits,
        total,
        offset: opts.offset,
        weak,
        signals,
    })
}

/// Tools whose name, description or a parameter name matches `pattern` (`^`/`$` per field):
/// name matches first; case-insensitive. Matching lowercase text, a pattern without capitals
/// needs no case folding, which lets the engine use its fast literal search.
fn regex_matches<'a>(
    tools: impl Iterator<Item = (usize, &'a ToolInfo)>,
    index: &SearchIndex,
    pattern: &str,
) -> Result<Vec<&'a ToolInfo>, String> {
    let chars = pattern.chars().count();
    if chars > MAX_REGEX_LEN {
        return Err(format!(
            "The regex is too long ({chars} characters; at most {MAX_REGEX_LEN})."
        ));
    }
    let re = RegexBuilder::new(pattern)
        .case_insensitive(pattern.chars().any(char::is_uppercase))
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| {
            format!(
                "Invalid regex {pattern:?}: {}",
                e.to_string()
                    .lines()
                    .last()
                    .unwrap_or("syntax error")
                    .trim()
            )
        })?;
    let (mut by_name, mut by_text): (Vec<&ToolInfo>, Vec<&ToolInfo>) = (vec![], vec![]);
    for (i, tool) in tools {
        let text = index.haystack(i);
        if !re.is_match(text) {
            continue;
        }
        if text.splitn(3, '\n').take(2).any(|name| re.is_match(name)) {
            by_name.push(tool);
        } else {
            by_text.push(tool);
        }
    }
    by_name.sort_by(|a, b| a.name.cmp(&b.name));
    by_text.sort_by(|a, b| a.name.cmp(&b.name));
    by_name.extend(by_text);
    Ok(by_name)
}

/// "Did you mean" for a tool name that does not exist (on `server`, if given): close spellings
/// first, then the best hits of the name's words under the ranking `search` uses.
pub fn did_you_mean(
    tools: &[ToolInfo],
    index: &SearchIndex,
    name: &str,
    server: Option<&str>,
    n: usize,
) -> Vec<String> {
    let in_scope = |t: &ToolInfo| server.is_none_or(|s| t.server == s);
    let mut names = suggest(tools.iter().filter(|t| in_scope(t)), name, n);
    if names.len() < n {
        let best = index.rank(name, |i| in_scope(&tools[i]), n).hits;
        for tool in best.into_iter().map(|i| &tools[i]) {
            if names.len() < n && !names.contains(&tool.name) {
                names.push(tool.name.clone());
            }
        }
    }
    names
}

/// Up to `n` tool names close to `name`, closest first: by spelling, then by shared words. A
/// name typed with a server's prefix is compared with that server's MCP names without it.
fn suggest<'a>(tools: impl Iterator<Item = &'a ToolInfo>, name: &str, n: usize) -> Vec<String> {
    let wanted = loose(name);
    let mut scored: Vec<(f64, &str)> = tools
        .filter_map(|tool| {
            let prefix = tool
                .name
                .strip_suffix(&tool.original)
                .map(loose)
                .filter(|p| !p.is_empty());
            let (typed, against) = match prefix.as_deref().and_then(|p| wanted.strip_prefix(p)) {
                Some(rest) => (rest.to_string(), vec![loose(&tool.original)]),
                None => (
                    wanted.clone(),
                    vec![loose(&tool.name), loose(&tool.original)],
                ),
            };
            let spelling = against
                .iter()
                .map(|c| similarity(&typed, c))
                .fold(0.0, f64::max);
            let typed_words = words(&typed);
            let shared = words(&tool.original)
                .iter()
                .filter(|w| w.len() > 2 && typed_words.contains(w))
                .count();
            let score = spelling + 0.25 * shared as f64;
            (spelling >= 0.5 || shared > 0).then_some((score, tool.name.as_str()))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(n)
        .map(|(_, name)| name.to_string())
        .collect()
}

/// 1 for equal strings, falling towards 0 with the edit distance.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    1.0 - row[b.len()] as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{build_server_tools, ToolPrefix};
    use serde_json::{json, Value};
    use std::sync::Arc;

    fn catalog() -> Vec<ToolInfo> {
        let mut tools = build_server_tools(
            "everything",
            ToolPrefix::Server,
            &[
                json!({"name": "echo", "description": "Echoes back the input"}),
                json!({"name": "get-sum", "description": "Returns the sum of two numbers",
                       "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}}),
                json!({"name": "getTinyImage", "description": "Returns a tiny image"}),
                json!({"name": "printEnv", "description": "Prints environment variables, echo style"}),
            ].map(Arc::new),
            &[], &[],
            true,
        );
        tools.extend(build_server_tools(
            "fs",
            ToolPrefix::Server,
            &[
                json!({"name": "read_file", "description": "Read a file from disk",
                       "inputSchema": {"type": "object", "properties": {"path": {}}}}),
                json!({"name": "write_file", "description": "Write a file", "inputSchema": {"type": "object", "properties": {"path": {}, "content": {}}}}),
            ].map(Arc::new),
            &[], &[],
            true,
        ));
        tools
    }

    fn find<'a>(
        tools: &'a [ToolInfo],
        query: &str,
        opts: &SearchOptions,
    ) -> Result<Page<'a>, String> {
        search(tools, &SearchIndex::build(tools, &[]), query, opts)
    }

    fn names(page: &Page) -> Vec<String> {
        page.hits.iter().map(|h| h.tool.name.clone()).collect()
    }

    fn opts() -> SearchOptions {
        SearchOptions {
            limit: 12,
            ..Default::default()
        }
    }

    #[test]
    fn exact_and_prefix_names_come_first() {
        let tools = catalog();
        let page = find(&tools, "echo", &opts()).unwrap();
        assert_eq!(names(&page), ["everything_echo", "everything_printEnv"]);
        let page = find(&tools, "everything_get", &opts()).unwrap();
        let mut first_two = names(&page)[..2].to_vec();
        first_two.sort();
        assert_eq!(first_two, ["everything_get-sum", "everything_getTinyImage"]);
    }

    #[test]
    fn words_are_ored_and_ranked() {
        let tools = catalog();
        let page = find(&tools, "file write", &opts()).unwrap();
        assert_eq!(names(&page)[..2], ["fs_write_file", "fs_read_file"]);
        assert!(page.weak.is_none());
        let page = find(&tools, "path", &opts()).unwrap();
        assert_eq!(page.total, 2, "parameter names are searched");
        let page = find(&tools, "image", &opts()).unwrap();
        assert_eq!(names(&page), ["everything_getTinyImage"]);
        assert_eq!(find(&tools, "zzz", &opts()).unwrap().total, 0);
    }

    /// Tools of three servers described in their configs, for requests in other words.
    fn described() -> (Vec<ToolInfo>, SearchIndex) {
        let server = |name: &str, tools: &[Value]| {
            let tools: Vec<Arc<Value>> = tools.iter().cloned().map(Arc::new).collect();
            build_server_tools(name, ToolPrefix::Server, &tools, &[], &[], true)
        };
        let mut tools = server(
            "memory",
            &[
                json!({"name": "add_observations", "description": "Add observations to entities"}),
                json!({"name": "delete_entities", "description": "Delete entities from the graph"}),
            ],
        );
        tools.extend(server(
            "fs",
            &[
                json!({"name": "create_directory", "description": "Create a new directory"}),
                json!({"name": "list_directory", "description": "List the entries of a directory"}),
            ],
        ));
        tools.extend(server(
            "k8s-tools",
            &[json!({"name": "kubectl_get", "description": "Get Kubernetes resources"})],
        ));
        let texts = [
            (
                "memory",
                "A knowledge graph that remembers facts about the user",
            ),
            ("fs", "Files and folders on this machine"),
            ("k8s-tools", "Manages a Kubernetes cluster"),
        ];
        let servers: Vec<ServerText> = texts
            .iter()
            .map(|(name, description)| ServerText {
                name,
                description: Some(description),
                instructions: None,
            })
            .collect();
        let index = SearchIndex::build(&tools, &servers);
        (tools, index)
    }

    #[test]
    fn requests_in_other_words() {
        let (tools, index) = described();
        let first = |query: &str| {
            let page = search(&tools, &index, query, &opts()).unwrap();
            page.hits
                .first()
                .map(|h| h.tool.name.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            first("make a new folder"),
            "fs_create_directory",
            "synonyms"
        );
        assert_eq!(
            first("forget the old client"),
            "memory_delete_entities",
            "intents"
        );
        assert_eq!(
            first("what's in the folder"),
            "fs_list_directory",
            "question words"
        );
        assert_eq!(
            first("k8s resources"),
            "k8s-tools_kubectl_get",
            "abbreviations"
        );
        let page = search(&tools, &index, "the entities", &opts()).unwrap();
        assert!(
            page.hits.iter().all(|h| h.tool.server == "memory"),
            "`the` is left out"
        );
        let page = search(&tools, &index, "the", &opts()).unwrap();
        assert!(page.total > 0, "unless nothing else is asked");
    }

    #[test]
    fn weak_matches_say_so_and_name_fitting_servers() {
        let (tools, index) = described();
        let page = search(&tools, &index, "create a directory", &opts()).unwrap();
        assert!(page.weak.is_none(), "every word matched: a strong match");
        let page = search(&tools, &index, "jot down what the user said", &opts()).unwrap();
        let servers = page.weak.expect("a weak match");
        assert_eq!(servers.first().map(|s| s.0.as_str()), Some("memory"));
        assert!(servers.len() <= SUGGESTED_SERVERS);
        let scoped = SearchOptions {
            server: Some("fs".into()),
            ..opts()
        };
        let page = search(&tools, &index, "jot down what the user said", &scoped).unwrap();
        assert_eq!(
            page.weak,
            Some(Vec::new()),
            "no other server is suggested within one"
        );
        let regex = SearchOptions {
            regex: true,
            ..opts()
        };
        assert!(search(&tools, &index, "jot", &regex)
            .unwrap()
            .weak
            .is_none());
    }

    #[test]
    fn server_filter_paging_and_empty_queries() {
        let tools = catalog();
        let page = find(
            &tools,
            "",
            &SearchOptions {
                server: Some("fs".into()),
                limit: 1,
                offset: 1,
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(
            (names(&page), page.total, page.offset),
            (vec!["fs_write_file".to_string()], 2, 1)
        );
        assert!(find(&tools, " ", &opts()).unwrap_err().contains("empty"));
        let page = find(
            &tools,
            "file",
            &SearchOptions {
                server: Some("everything".into()),
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(page.total, 0);
    }

    #[test]
    fn regex_search() {
        let tools = catalog();
        let re = SearchOptions {
            regex: true,
            ..opts()
        };
        let page = find(&tools, "^fs_.*_file$", &re).unwrap();
        assert_eq!(names(&page), ["fs_read_file", "fs_write_file"]);
        let page = find(&tools, "ECHO", &re).unwrap();
        assert_eq!(
            names(&page),
            ["everything_echo", "everything_printEnv"],
            "name matches before text matches"
        );
        assert!(find(&tools, "(unclosed", &re)
            .unwrap_err()
            .starts_with("Invalid regex"));
        assert!(find(&tools, &"a".repeat(300), &re)
            .unwrap_err()
            .contains("too long"));
        // Patterns that backtrack exponentially elsewhere are linear here.
        let evil = format!("^(a+)+{}$", "");
        assert!(find(&tools, &evil, &re).is_ok());
    }

    #[test]
    fn suggestions() {
        let tools = catalog();
        assert_eq!(
            suggest(tools.iter(), "everything_ecko", 3),
            ["everything_echo"]
        );
        assert_eq!(suggest(tools.iter(), "read-file", 3)[0], "fs_read_file");
        assert_eq!(suggest(tools.iter(), "fs_file", 5).len(), 2);
        assert!(suggest(tools.iter(), "qqqqqqqq", 5).is_empty());
        let index = SearchIndex::build(&tools, &[]);
        let meant = did_you_mean(&tools, &index, "fs_print_environment", None, 3);
        assert!(
            meant.contains(&"everything_printEnv".to_string()),
            "{meant:?}"
        );
        let scoped = did_you_mean(&tools, &index, "ecko", Some("fs"), 3);
        assert!(scoped.iter().all(|t| t.starts_with("fs_")), "{scoped:?}");
    }
}
