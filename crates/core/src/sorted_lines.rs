//! Tables of sorted lines compiled into the addon, searched in place by binary search: no index
//! is built, so a lookup costs no memory.

/// The line of `table` whose key is `key`, where `key_of` gives a line's key and the lines are
/// sorted by their keys' bytes.
pub fn find<'a>(table: &'a str, key: &str, key_of: impl Fn(&str) -> &str) -> Option<&'a str> {
    let bytes = table.as_bytes();
    let line_at = |pos: usize| -> (usize, &'a str) {
        let start = bytes[..pos]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        (start, &table[start..end])
    };
    let (mut low, mut high) = (0, bytes.len());
    while low < high {
        let mid = low + (high - low) / 2;
        let (start, line) = line_at(mid);
        match key_of(line).cmp(key) {
            std::cmp::Ordering::Equal => return Some(line),
            std::cmp::Ordering::Less => low = start + line.len() + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn finds_each_line_and_nothing_else() {
        fn key(line: &str) -> &str {
            line.split('|').next().unwrap_or_default()
        }
        let table = "a|1\nb|2\n c|3\nd|4\n";
        let table_sorted = {
            let mut lines: Vec<&str> = table.lines().collect();
            lines.sort_by(|x, y| key(x).cmp(key(y)));
            lines.join("\n")
        };
        for (k, line) in [("a", "a|1"), ("b", "b|2"), (" c", " c|3"), ("d", "d|4")] {
            assert_eq!(find(&table_sorted, k, key), Some(line));
        }
        for k in ["", "c", "e", "a|1", " "] {
            assert_eq!(find(&table_sorted, k, key), None, "{k:?}");
        }
        assert_eq!(find("", "a", key), None);
    }
}
