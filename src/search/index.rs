//! An inverted index over the catalog, built once per catalog change, so that a query costs
//! only the postings of its words: BM25 over weighted fields (name, MCP name, parameter names,
//! server, description), with stems, word prefixes and synonyms at reduced weight.

use super::words::{stem, synonyms, words};
use crate::catalog::ToolInfo;
use serde_json::Value;
use std::collections::HashMap;

/// Field weights: a word in a tool's name counts most.
const NAME_WEIGHT: f32 = 3.0;
const ORIGINAL_WEIGHT: f32 = 1.5;
const PARAM_WEIGHT: f32 = 1.5;
const SERVER_WEIGHT: f32 = 1.0;
const TEXT_WEIGHT: f32 = 1.0;
/// How much a word counts when it only starts a word of the tool, or is a synonym of one.
const PREFIX_FACTOR: f64 = 0.5;
const SYNONYM_FACTOR: f64 = 0.4;
/// BM25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How much more a tool counts when its name starts with the query's action (a verb of the
/// query or a synonym): "save text to a file" wants `write_file` over `read_text_file`.
const VERB_FACTOR: f64 = 1.3;
/// Bonuses that put exact and prefix name matches above any relevance score.
const EXACT_NAME: f64 = 1000.0;
const NAME_PREFIX: f64 = 500.0;

#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Stemmed word → (tool index, weighted frequency).
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Every stemmed word, sorted, for prefix matches.
    vocabulary: Vec<String>,
    lengths: Vec<f32>,
    average_length: f64,
    /// Display and MCP names, lowercase with `-` as `_`.
    names: Vec<[String; 2]>,
    /// Per tool, the stemmed first word of its MCP name (usually its action), `api` skipped.
    verbs: Vec<String>,
    /// Per tool, the fields a regex searches, lowercase, one per line: display name, MCP name,
    /// description, parameter names.
    haystacks: Vec<String>,
}

impl SearchIndex {
    pub fn build(tools: &[ToolInfo]) -> SearchIndex {
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let mut weights: HashMap<String, f32> = HashMap::new();
            let mut add = |text: &str, weight: f32| {
                for word in words(text) {
                    *weights.entry(stem(&word)).or_default() += weight;
                }
            };
            add(&tool.name, NAME_WEIGHT);
            add(&tool.original, ORIGINAL_WEIGHT);
            add(&tool.server, SERVER_WEIGHT);
            add(&tool.description, TEXT_WEIGHT);
            for param in parameter_names(tool) {
                add(param, PARAM_WEIGHT);
            }
            lengths.push(weights.values().sum());
            for (word, weight) in weights {
                postings.entry(word).or_default().push((i as u32, weight));
            }
        }
        let mut vocabulary: Vec<String> = postings.keys().cloned().collect();
        vocabulary.sort();
        let average_length = (lengths.iter().map(|l| f64::from(*l)).sum::<f64>()
            / tools.len().max(1) as f64)
            .max(1.0);
        let names = tools
            .iter()
            .map(|t| [loose(&t.name), loose(&t.original)])
            .collect();
        let haystacks = tools.iter().map(haystack).collect();
        let verbs = tools.iter().map(|t| verb(&t.original)).collect();
        SearchIndex {
            postings,
            vocabulary,
            lengths,
            average_length,
            names,
            verbs,
            haystacks,
        }
    }

    /// The text a regex is matched against for tool `i` (one field per line).
    pub fn haystack(&self, i: usize) -> &str {
        &self.haystacks[i]
    }

    /// The `want` best tools (indexes, best first) among those that match `query` and pass
    /// `keep`, and how many match in all. Only the best are sorted: a query over 10,000 tools
    /// costs its postings, not a full sort.
    pub fn rank(
        &self,
        query: &str,
        keep: impl Fn(usize) -> bool,
        want: usize,
    ) -> (Vec<usize>, usize) {
        let n = self.lengths.len();
        let mut scores = vec![0.0f64; n];
        let mut terms: Vec<String> = words(query).iter().map(|w| stem(w)).collect();
        terms.sort();
        terms.dedup();
        for term in &terms {
            for (word, factor) in self.expand(term) {
                let Some(list) = self.postings.get(&word) else {
                    continue;
                };
                let df = list.len() as f64;
                let idf = (1.0 + (n as f64 - df + 0.5) / (df + 0.5)).ln();
                for &(doc, tf) in list {
                    let (tf, len) = (f64::from(tf), f64::from(self.lengths[doc as usize]));
                    let norm =
                        tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.average_length));
                    scores[doc as usize] += factor * idf * norm;
                }
            }
        }
        let actions: Vec<String> = terms
            .iter()
            .flat_map(|t| synonyms(t).into_iter().chain([t.clone()]))
            .collect();
        for (score, verb) in scores.iter_mut().zip(&self.verbs) {
            if *score > 0.0 && actions.contains(verb) {
                *score *= VERB_FACTOR;
            }
        }
        let whole = loose(query);
        for (doc, names) in self.names.iter().enumerate() {
            if names.contains(&whole) {
                scores[doc] += EXACT_NAME;
            } else if scores[doc] > 0.0
                && names
                    .iter()
                    .any(|n| n.starts_with(&whole) || n.ends_with(&whole))
            {
                scores[doc] += NAME_PREFIX;
            }
        }
        let mut hits: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(doc, s)| *s > 0.0 && keep(*doc))
            .collect();
        let total = hits.len();
        let best_first =
            |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if want < hits.len() {
            hits.select_nth_unstable_by(want, best_first);
            hits.truncate(want);
        }
        hits.sort_by(best_first);
        (hits.into_iter().map(|(doc, _)| doc).collect(), total)
    }

    /// The indexed words a query word stands for, with how much each counts: itself, the words
    /// it starts (three letters or more), and its synonyms.
    fn expand(&self, term: &str) -> Vec<(String, f64)> {
        let mut out = vec![(term.to_string(), 1.0)];
        if term.len() >= 3 {
            let start = self.vocabulary.partition_point(|w| w.as_str() < term);
            out.extend(
                self.vocabulary[start..]
                    .iter()
                    .take_while(|w| w.starts_with(term))
                    .filter(|w| w.as_str() != term)
                    .map(|w| (w.clone(), PREFIX_FACTOR)),
            );
        }
        out.extend(synonyms(term).into_iter().map(|w| (w, SYNONYM_FACTOR)));
        out
    }
}

/// Names of a tool's top-level parameters.
fn parameter_names(tool: &ToolInfo) -> impl Iterator<Item = &str> {
    tool.input_schema()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|props| props.keys().map(String::as_str))
}

/// Lowercase with `-` and `_` alike.
pub fn loose(name: &str) -> String {
    name.trim().to_lowercase().replace('-', "_")
}

fn haystack(tool: &ToolInfo) -> String {
    let mut lines = vec![
        tool.name.clone(),
        tool.original.clone(),
        tool.description.replace(['\n', '\r'], " "),
    ];
    lines.extend(parameter_names(tool).map(str::to_string));
    lines.join("\n").to_lowercase()
}

fn verb(name: &str) -> String {
    words(name)
        .into_iter()
        .find(|w| w != "api")
        .map(|w| stem(&w))
        .unwrap_or_default()
}
