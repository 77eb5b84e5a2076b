//! The index of the WordNet table search reads.

fn main() {
    wordnet_prefixes();
}

/// Where the lines of each two-byte key prefix start in src/search/wordnet.txt (a key of one
/// byte pads with 0), as a Rust array: a lookup then reads the few pages of its prefix's lines
/// instead of probing the whole table (every page a process touches stays in its memory).
fn wordnet_prefixes() {
    println!("cargo:rerun-if-changed=src/search/wordnet.txt");
    let text = std::fs::read("src/search/wordnet.txt").expect("src/search/wordnet.txt is readable");
    let mut entries = String::new();
    let (mut last, mut at) = (None, 0);
    for line in text.split(|&b| b == b'\n') {
        let key = line.split(|&b| b == b'|').next().unwrap_or_default();
        let prefix = [
            key.first().copied().unwrap_or(0),
            key.get(1).copied().unwrap_or(0),
        ];
        if !line.is_empty() && last != Some(prefix) {
            entries.push_str(&format!("({prefix:?}, {at}),"));
            last = Some(prefix);
        }
        at += line.len() + 1;
    }
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("wordnet_prefixes.rs");
    std::fs::write(out, format!("&[{entries}]")).expect("OUT_DIR is writable");
}
