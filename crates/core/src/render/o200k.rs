//! o200k tokens (the tokenizer of OpenAI's current models): an upper bound for a line of text that
//! needs only a small part of the tokenizer's 200,000 entries, and the longest start of a line
//! within a budget.
//!
//! o200k cuts a text into pre-tokens by an expression and encodes each on its own: a pre-token
//! that is an entry of the vocabulary is one token; any other is merged byte pair by byte pair,
//! neighbouring parts whose concatenation is an entry first (lowest rank first), until no two
//! neighbours concatenate to an entry. The tables, written by scripts/o200k-tables.mjs from the
//! tokenizer's: `SHORT`, every entry of 2 or 3 printable ASCII bytes; `WORDS`, the 8,000 most
//! common entries that are an ASCII word of 4 letters or more (with the space before it or not).
//! The bound of an ASCII pre-token: 1 when it is in a table, else the most parts a cut of its
//! bytes can have where no two neighbours of 3 bytes or fewer together form an entry of `SHORT`
//! (its real tokens are one such cut). Where pre-tokens depend on Unicode categories (a word
//! with a character outside ASCII, from its last ASCII pre-token on), each byte counts as a
//! token, which no text exceeds.
//!
//! English comes out at about a bound token per 3.5 bytes, where o200k's tokens hold 4 to 6:
//! the bound is safe, not tight.

use crate::sorted_lines;
use std::borrow::Cow;

/// Every o200k entry of 2 or 3 printable ASCII bytes, as sorted 3-byte records (a 2-byte entry
/// ends in a 0 byte).
static SHORT: &[u8] = include_bytes!("o200k_short.bin");
/// Common o200k entries that are a word (see the module's comment), sorted, one a line.
static WORDS: &str = include_str!("o200k_words.txt");

/// The most bytes a token of the bound covers: a table entry counts 1 for up to 16 bytes (a test
/// checks the tables); any other pre-token of n bytes has a cut into n/5 parts or more that no
/// entry of `SHORT` constrains (parts of 3 to 5 bytes, or the pre-token whole). So no line
/// longer than this many bytes per token fits a budget.
const MOST_BYTES_PER_TOKEN: usize = 16;

/// The `…` that ends a cut line, and what it counts: its 3 bytes (it is a pre-token of its own
/// after a letter or digit, which `clip_to_tokens` makes sure of).
const ELLIPSIS: &str = "…";

/// At least as many o200k tokens as `line` has. `line` is as `pi_mcp_connection::clean::one_line` leaves it (words
/// separated by single spaces, none at either end, no control characters); another text counts
/// a token per byte.
pub fn bound(line: &str) -> usize {
    let bytes = line.as_bytes();
    let normal = !line.starts_with(' ')
        && !line.ends_with(' ')
        && !line.contains("  ")
        && !line
            .chars()
            .any(|c| c != ' ' && (c.is_whitespace() || c.is_control()));
    if !normal {
        return bytes.len();
    }
    // A space always starts a pre-token here, so each word with the space before it is cut on
    // its own.
    let mut total = 0;
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes[start + 1..]
            .iter()
            .position(|&b| b == b' ')
            .map_or(bytes.len(), |at| start + 1 + at);
        total += word_bound(&bytes[start..end]);
        start = end;
    }
    total
}

/// `line` (as `pi_mcp_connection::clean::one_line` leaves it) within `budget` tokens by `bound`: whole, or cut and
/// ended with `…`, at a word boundary where that keeps at least half of what a cut anywhere keeps.
/// A cut never splits a character shown as `\u{…}` (the one rule's visible form), nor drops the
/// closing bracket or quote of what it keeps.
pub fn clip_to_tokens(line: &str, budget: usize) -> Cow<'_, str> {
    let longest = MOST_BYTES_PER_TOKEN * budget;
    if line.len() <= longest && bound(line) <= budget {
        return Cow::Borrowed(line);
    }
    let fits = |end: usize| {
        let kept = line[..end].trim_end_matches(|c: char| {
            c.is_ascii() && !c.is_ascii_alphanumeric() && !matches!(c, ')' | ']' | '}' | '"' | '\'')
        });
        let split_escape = kept
            .rfind("\\u{")
            .is_some_and(|at| !kept[at..].contains('}'));
        (!kept.is_empty() && !split_escape && bound(kept) + ELLIPSIS.len() <= budget)
            .then_some(kept)
    };
    let ends = (1..=line.len().min(longest))
        .rev()
        .filter(|&end| line.is_char_boundary(end));
    let anywhere = ends.clone().find_map(fits).unwrap_or_default();
    let at_word = ends
        .filter(|&end| line.as_bytes().get(end) == Some(&b' '))
        .find_map(fits)
        .filter(|kept| 2 * kept.len() >= anywhere.len());
    Cow::Owned(format!("{}{ELLIPSIS}", at_word.unwrap_or(anywhere)))
}

/// The bound of one word (with the space before it): exact pre-tokens up to its first byte
/// outside ASCII; from the last of them on, a token per byte.
fn word_bound(word: &[u8]) -> usize {
    let ascii = word
        .iter()
        .position(|b| !b.is_ascii())
        .unwrap_or(word.len());
    let mut total = 0;
    let mut start = 0;
    while start < ascii {
        let end = pre_token_end(&word[..ascii], start);
        if end == ascii && ascii < word.len() {
            break; // the pre-token may run on past ASCII
        }
        total += pre_token_bound(&word[start..end]);
        start = end;
    }
    total + (word.len() - start)
}

/// Where the pre-token starting at `i` ends, by o200k's expression restricted to ASCII text
/// without line breaks (its alternatives in order, the first that matches wins):
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+'s?` | `[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*'s?` |
/// `\p{N}{1,3}` | ` ?[^\s\p{L}\p{N}]+[\r\n/]*` | `\s+` (`'s?`: an English contraction).
fn pre_token_end(s: &[u8], i: usize) -> usize {
    // The optional first character: anything but a letter, a digit or a line break.
    let prefixed = !s[i].is_ascii_alphanumeric() && !matches!(s[i], b'\r' | b'\n');
    let letters_from = if prefixed { i + 1 } else { i };
    if let Some(end) = letters(s, letters_from, true).or_else(|| letters(s, letters_from, false)) {
        return end;
    }
    let digits = s[i..]
        .iter()
        .take(3)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits > 0 {
        return i + digits;
    }
    let symbol = |b: &u8| !b.is_ascii_whitespace() && !b.is_ascii_alphanumeric();
    let from = if s[i] == b' ' && s.get(i + 1).is_some_and(symbol) {
        i + 1
    } else {
        i
    };
    let symbols = s[from..].iter().take_while(|b| symbol(b)).count();
    if symbols > 0 {
        let end = from + symbols;
        return end
            + s[end..]
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n' | b'/'))
                .count();
    }
    i + s[i..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
        .max(1)
}

/// Letters from `j`: uppercase then lowercase ones, at least one lowercase (`needs_lower`) or
/// one uppercase, then a contraction; the end, or None when they do not match.
fn letters(s: &[u8], j: usize, needs_lower: bool) -> Option<usize> {
    let count = |from: usize, f: fn(&u8) -> bool| {
        s.get(from..)
            .map_or(0, |r| r.iter().take_while(|b| f(b)).count())
    };
    let upper = count(j, u8::is_ascii_uppercase);
    let lower = count(j + upper, u8::is_ascii_lowercase);
    if (needs_lower && lower == 0) || (!needs_lower && upper == 0) {
        return None;
    }
    let end = j + upper + lower;
    let contraction = match s.get(end..) {
        Some([b'\'', a, b, ..])
            if matches!(
                [a.to_ascii_lowercase(), b.to_ascii_lowercase()],
                [b'l', b'l'] | [b'v' | b'r', b'e']
            ) =>
        {
            3
        }
        Some([b'\'', a, ..]) if matches!(a.to_ascii_lowercase(), b's' | b'd' | b'm' | b't') => 2,
        _ => 0,
    };
    Some(end + contraction)
}

/// The bound of an ASCII pre-token: one token when it is an entry, else `most_parts`.
fn pre_token_bound(piece: &[u8]) -> usize {
    let entry = match piece.len() {
        2 | 3 => in_short(piece),
        _ => std::str::from_utf8(piece)
            .is_ok_and(|word| sorted_lines::find(WORDS, word, |line| line).is_some()),
    };
    if entry {
        1
    } else {
        most_parts(piece)
    }
}

/// The most parts a cut of `piece` can have where no two neighbours of 3 bytes or fewer together
/// form an entry of `SHORT`. Parts of 6 bytes or more need not be tried: cut into parts of 3 to
/// 5 bytes they give more parts under no new constraint.
fn most_parts(piece: &[u8]) -> usize {
    // best[i][k]: the most parts covering piece[..i] whose last part is k bytes (k = 3: 3 or
    // more; k = 0: no part yet, at i = 0).
    let mut best = vec![[None::<usize>; 4]; piece.len() + 1];
    best[0][0] = Some(0);
    for i in 0..piece.len() {
        for last in 0..4 {
            let Some(parts) = best[i][last] else { continue };
            for len in (1..=5).take_while(|len| i + len <= piece.len()) {
                let neighbours = (1..=2).contains(&last) && last + len <= 3;
                if neighbours && in_short(&piece[i - last..i + len]) {
                    continue;
                }
                let slot = &mut best[i + len][len.min(3)];
                *slot = (*slot).max(Some(parts + 1));
            }
        }
    }
    best[piece.len()]
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(0)
}

fn in_short(entry: &[u8]) -> bool {
    let mut key = [0u8; 3];
    key[..entry.len()].copy_from_slice(entry);
    SHORT.as_chunks::<3>().0.binary_search(&key).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_and_in_shape() {
        let (records, rest) = SHORT.as_chunks::<3>();
        assert!(rest.is_empty());
        assert!(records.len() > 10_000, "{}", records.len());
        assert!(records.windows(2).all(|w| w[0] < w[1]));
        assert!(records
            .iter()
            .all(|r| r[..2].iter().all(|b| (0x20..0x7f).contains(b))
                && (r[2] == 0 || (0x20..0x7f).contains(&r[2]))));
        assert!(in_short(b"th") && in_short(b" th") && in_short(b"ing"));
        let words: Vec<&str> = WORDS.lines().collect();
        assert_eq!(words.len(), 8000);
        assert!(words.windows(2).all(|w| w[0] < w[1]));
        assert!(words
            .iter()
            .all(|w| (4..=MOST_BYTES_PER_TOKEN).contains(&w.len())));
        assert!(words.contains(&" operations") && words.contains(&"Server"));
        assert!(!in_short(b"qz"));
    }

    /// The pre-tokens of an ASCII line, cut as the `regex` crate cuts it with o200k's expression
    /// (its lookahead alternative matches no line without double or edge spaces).
    fn by_regex<'a>(re: &regex::Regex, line: &'a str) -> Vec<&'a str> {
        re.find_iter(line).map(|m| m.as_str()).collect()
    }

    fn o200k_expression() -> regex::Regex {
        let contraction = r"(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?";
        let pattern = format!(
            r"[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]*[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]+{contraction}|[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]+[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]*{contraction}|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+"
        );
        regex::Regex::new(&pattern).unwrap()
    }

    fn by_us(line: &str) -> Vec<&str> {
        let (mut out, mut start) = (vec![], 0);
        while start < line.len() {
            let end = pre_token_end(line.as_bytes(), start);
            out.push(&line[start..end]);
            start = end;
        }
        out
    }

    #[test]
    fn ascii_pre_tokens_are_o200k_s() {
        let fixed = [
            "Filesystem operations: read, write and search files",
            "getHTTPServer ABCdefGHI don't we'LL it's X'Re (a) [x]: 12345 a1b2 v1.2.3",
            "e.g. (see https://example.com/a/b?c=d#e) -- #tag @user $HOME ~/x ...",
            "aGVsbG8gd29ybGQ= QUJD+/== I'm I'M you're YOU'VE a's 'sa ''s",
        ];
        // And 2,000 lines of random printable ASCII words (a fixed-seed generator).
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let alphabet = b"aAbZz09'.,:;!?/-_()[]{}#@$%^&*+=<>|~`\"\\sStTlLvVeE";
        let random: Vec<String> = (0..2000)
            .map(|_| {
                let words: Vec<String> = (0..1 + next(6))
                    .map(|_| {
                        (0..1 + next(9))
                            .map(|_| alphabet[next(alphabet.len() as u64) as usize] as char)
                            .collect()
                    })
                    .collect();
                words.join(" ")
            })
            .collect();
        let re = o200k_expression();
        for line in fixed
            .iter()
            .copied()
            .chain(random.iter().map(String::as_str))
        {
            assert_eq!(by_us(line), by_regex(&re, line), "{line:?}");
        }
    }

    #[test]
    fn bounds_of_known_texts() {
        assert_eq!(bound(""), 0);
        assert_eq!(bound("a"), 1);
        // "th" is an entry: one part, not two.
        assert_eq!(most_parts(b"th"), 1);
        assert_eq!(most_parts(b"qz"), 2);
        // Non-ASCII words count their bytes: 3 per CJK character, 4 per emoji.
        assert_eq!(bound("日本語"), 9);
        assert_eq!(bound("ok 🙂"), 1 + 5);
        // Not one line: a token per byte.
        assert_eq!(bound("two  spaces"), 11);
        assert_eq!(bound("a\nb"), 3);
        let english =
            "Filesystem operations: read, write and search files in the allowed directories";
        // A bound token per 3.6 bytes of this English; o200k has 13 tokens there.
        assert_eq!(bound(english), 22);
    }

    #[test]
    fn a_cut_keeps_characters_shown_as_escapes_whole() {
        let line = "Red alert: \\u{202e}exe.txt\\u{202c} and \\u{9b}31mC1\\u{7} bells\\u{8}\\u{0}";
        let cut = clip_to_tokens(line, 20);
        assert!(bound(&cut) <= 20, "{cut}");
        let kept = cut.strip_suffix(ELLIPSIS).expect("cut");
        assert!(line.starts_with(kept), "{cut}");
        assert_eq!(
            kept.matches("\\u{").count(),
            kept.matches('}').count(),
            "{cut}"
        );
        assert!(kept.starts_with("Red alert: \\u{202e}exe.txt"), "{cut}");
        for budget in 4..30 {
            let cut = clip_to_tokens(line, budget);
            let kept = cut.strip_suffix(ELLIPSIS).unwrap_or(&cut);
            assert_eq!(
                kept.matches("\\u{").count(),
                kept.matches('}').count(),
                "{budget}: {cut}"
            );
        }
    }

    #[test]
    fn clip_keeps_within_the_budget_and_cuts_at_words() {
        let short = "Knowledge graph memory";
        assert_eq!(clip_to_tokens(short, 20), short);
        let long = "Filesystem operations: read, write and search files in the allowed directories";
        let cut = clip_to_tokens(long, 20);
        assert!(
            cut.ends_with('…') && long.starts_with(cut.trim_end_matches('…')),
            "{cut}"
        );
        assert!(bound(cut.trim_end_matches('…')) + 3 <= 20, "{cut}");
        assert!(!cut.contains(":…") && !cut.contains(",…"), "{cut}");
        let kept = cut.trim_end_matches('…');
        assert!(
            !long.as_bytes()[kept.len()].is_ascii_alphanumeric(),
            "cut at a word: {cut}"
        );
        // One long word is cut inside it; so are CJK and emoji, at a character.
        let base64 = "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgZW5jb2RlZCB0ZXh0IHRoYXQgZ29lcyBvbg";
        assert!(clip_to_tokens(base64, 20).len() > 10);
        assert_eq!(
            clip_to_tokens("日本語のテキストはここで切られます", 20),
            "日本語のテ…"
        );
        assert_eq!(clip_to_tokens("🙂🙂🙂🙂🙂🙂", 20), "🙂🙂🙂🙂…");
        // Far past the budget: a megabyte of one word.
        let huge = "x".repeat(1 << 20);
        let cut = clip_to_tokens(&huge, 20);
        assert!(
            bound(cut.trim_end_matches('…')) + 3 <= 20 && cut.len() < 100,
            "{}",
            cut.len()
        );
    }
}
