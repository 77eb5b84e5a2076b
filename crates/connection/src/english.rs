//! Lists in prose.

/// `a`, `a and b`, `a, b and c`.
pub fn listed(items: impl IntoIterator<Item = String>) -> String {
    let mut items: Vec<String> = items.into_iter().collect();
    match items.pop() {
        Some(last) if items.is_empty() => last,
        Some(last) => format!("{} and {last}", items.join(", ")),
        None => String::new(),
    }
}
