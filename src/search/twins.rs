//! The same tool on several servers (two accounts of one service, a server and its fork): the
//! same MCP name, the same arguments (names, types, which are required) and close descriptions.
//! A search shows them as one line naming each, so that they take one of its first places.

use super::words::{stem, words};
use crate::catalog::ToolInfo;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Descriptions are close when this share of the shorter one's words are in the other.
const CLOSE_DESCRIPTIONS: f64 = 0.6;

/// For each tool, the first tool of its group of twins (itself if it is the first); `None` for
/// a tool without twins.
#[derive(Debug, Default)]
pub struct Twins(Vec<Option<u32>>);

impl Twins {
    pub fn find(tools: &[ToolInfo]) -> Twins {
        let mut alike: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let key = (tool.original.to_lowercase(), arguments(tool));
            alike.entry(key).or_default().push(i);
        }
        let mut first = vec![None; tools.len()];
        for members in alike.values().filter(|m| m.len() > 1) {
            let described: Vec<HashSet<String>> = members
                .iter()
                .map(|&i| {
                    words(&tools[i].description)
                        .iter()
                        .map(|w| stem(w))
                        .collect()
                })
                .collect();
            for (k, &i) in members.iter().enumerate() {
                let twin = (0..k).find(|&j| {
                    tools[members[j]].server != tools[i].server
                        && close(&described[j], &described[k])
                });
                if let Some(j) = twin {
                    let group = *first[members[j]].get_or_insert(members[j] as u32);
                    first[i] = Some(group);
                }
            }
        }
        Twins(first)
    }

    /// Keeps the best-scoring member of each group of twins among `hits` (tool, score; any
    /// order); returns, for each member kept, its twins among them, best first.
    pub fn collapse(&self, hits: &mut Vec<(usize, f64)>) -> HashMap<usize, Vec<usize>> {
        let mut groups: HashMap<u32, Vec<(usize, f64)>> = HashMap::new();
        hits.retain(|&hit| match self.0[hit.0] {
            Some(group) => {
                groups.entry(group).or_default().push(hit);
                false
            }
            None => true,
        });
        let mut also = HashMap::new();
        for mut group in groups.into_values() {
            group.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            hits.push(group[0]);
            if group.len() > 1 {
                also.insert(group[0].0, group[1..].iter().map(|(doc, _)| *doc).collect());
            }
        }
        also
    }
}

/// A tool's arguments as a comparable text: each parameter's name and type, sorted, and the
/// required ones.
fn arguments(tool: &ToolInfo) -> String {
    let schema = tool.input_schema();
    let mut parameters: Vec<String> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, p)| format!("{name}:{}", p.get("type").unwrap_or(&Value::Null)))
                .collect()
        })
        .unwrap_or_default();
    parameters.sort();
    let mut required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    required.sort();
    format!("{}|{}", parameters.join(","), required.join(","))
}

fn close(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    let (shorter, longer) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if shorter.is_empty() {
        return true;
    }
    let shared = shorter.iter().filter(|w| longer.contains(*w)).count();
    shared as f64 / shorter.len() as f64 >= CLOSE_DESCRIPTIONS
}
