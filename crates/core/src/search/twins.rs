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
/// a tool without twins. And each group's members, by its first tool.
#[derive(Debug, Default)]
pub struct Twins {
    first: Vec<Option<u32>>,
    members: HashMap<u32, Vec<usize>>,
}

impl Twins {
    pub fn find(tools: &[ToolInfo]) -> Twins {
        let mut alike: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let key = (tool.original.to_lowercase(), arguments(tool));
            alike.entry(key).or_default().push(i);
        }
        let mut first = vec![None; tools.len()];
        // Catalogs repeat their words: each is stemmed once.
        let mut stems: HashMap<String, String> = HashMap::new();
        for members in alike.values().filter(|m| m.len() > 1) {
            // A description's words, made when one differs from another's text.
            let mut described: Vec<Option<HashSet<String>>> = vec![None; members.len()];
            for (k, &i) in members.iter().enumerate() {
                let twin = (0..k).find(|&j| {
                    let other = &tools[members[j]];
                    if other.server == tools[i].server {
                        return false;
                    }
                    if other.description == tools[i].description {
                        return true;
                    }
                    for m in [j, k] {
                        if described[m].is_none() {
                            let text = &tools[members[m]].description;
                            described[m] = Some(stemmed_words(text, &mut stems));
                        }
                    }
                    match (&described[j], &described[k]) {
                        (Some(a), Some(b)) => close(a, b),
                        _ => false,
                    }
                });
                if let Some(j) = twin {
                    let group = *first[members[j]].get_or_insert(members[j] as u32);
                    first[i] = Some(group);
                }
            }
        }
        let mut members: HashMap<u32, Vec<usize>> = HashMap::new();
        for (i, group) in first.iter().enumerate() {
            if let Some(group) = group {
                members.entry(*group).or_default().push(i);
            }
        }
        Twins { first, members }
    }

    /// Keeps the best-scoring member of each group of twins among `hits` (tool, score; any
    /// order). Costs two passes over the hits, however many are twins.
    pub fn collapse(&self, hits: &mut Vec<(usize, f64)>) {
        if self.members.is_empty() {
            return;
        }
        let mut best = vec![(f64::NEG_INFINITY, usize::MAX); self.first.len()];
        for &(doc, score) in hits.iter() {
            if let Some(group) = self.first[doc] {
                let best = &mut best[group as usize];
                if score > best.0 || (score == best.0 && doc < best.1) {
                    *best = (score, doc);
                }
            }
        }
        hits.retain(|&(doc, _)| self.first[doc].is_none_or(|group| best[group as usize].1 == doc));
    }

    /// The twins of `hit` that `score` gives a score (those that matched), best first.
    pub fn of(&self, hit: usize, score: impl Fn(usize) -> Option<f64>) -> Vec<usize> {
        let Some(group) = self.first[hit] else {
            return Vec::new();
        };
        let mut twins: Vec<(usize, f64)> = self.members[&group]
            .iter()
            .filter(|&&doc| doc != hit)
            .filter_map(|&doc| score(doc).map(|s| (doc, s)))
            .collect();
        twins.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        twins.into_iter().map(|(doc, _)| doc).collect()
    }
}

/// The stems of `text`'s words, each stemmed once across calls through `stems`.
fn stemmed_words(text: &str, stems: &mut HashMap<String, String>) -> HashSet<String> {
    words(text)
        .into_iter()
        .map(|w| stems.entry(w).or_insert_with_key(|w| stem(w)).clone())
        .collect()
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
