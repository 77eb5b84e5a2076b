//! How many tokens a text costs a model, estimated without a tokenizer: a real o200k tokenizer
//! in Rust would add 3–4 MB to the addon for one number in the `/mcp` panel. The text is read
//! as the pieces a BPE tokenizer cuts it into: runs of ASCII letters (one token each, a little
//! more for long or rare words), a capital inside a run (camelCase splits there), runs of
//! digits, ASCII punctuation (JSON's `":` and `{"` merge into few tokens), CJK characters and
//! other non-ASCII characters. The weights were fitted to gpt-tokenizer's o200k counts of the
//! tool declarations of the 52 real catalogs in `__test__/fixtures/catalogs`; a test there
//! keeps the error within its bound (README "Exposure in the panel").

/// Weights per piece, in tokens.
const WORD: f64 = 1.2;
const HUMP: f64 = 1.3;
const DIGITS: f64 = 2.3;
const PUNCTUATION: f64 = 0.28;
const WIDE: f64 = 0.75;
const OTHER: f64 = 2.0;

/// The estimated o200k token count of `text`.
pub fn estimate(text: &str) -> u32 {
    let mut total = 0.0;
    let mut previous = ' ';
    for c in text.chars() {
        total += if c.is_ascii_alphabetic() {
            match previous {
                p if !p.is_ascii_alphabetic() => WORD,
                p if p.is_ascii_lowercase() && c.is_ascii_uppercase() => HUMP,
                _ => 0.0,
            }
        } else if c.is_ascii_digit() {
            if previous.is_ascii_digit() {
                0.0
            } else {
                DIGITS
            }
        } else if c.is_ascii_whitespace() {
            0.0
        } else if c.is_ascii() {
            PUNCTUATION
        } else if is_wide(c) {
            WIDE
        } else {
            OTHER
        };
        previous = c;
    }
    total.round() as u32
}

/// CJK ideographs, kana, hangul and full-width forms: about one token each, or less.
fn is_wide(c: char) -> bool {
    matches!(c as u32, 0x2e80..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff | 0xff00..=0xffef)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_pieces_a_tokenizer_cuts() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("   \n"), 0);
        // Five words: 6 tokens.
        assert_eq!(estimate("read the file it names"), 6);
        // camelCase splits: get + Issue + Comments.
        assert_eq!(estimate("getIssueComments"), 4);
        assert_eq!(estimate("2026-11-27"), 7);
        assert_eq!(estimate("{\"a\":1}"), 5);
        assert_eq!(estimate("将一个高德经纬度坐标"), 8);
        assert_eq!(estimate("→ ⚠"), 4);
    }
}
