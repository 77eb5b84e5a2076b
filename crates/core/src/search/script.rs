//! Which writing system a letter or a text is in, as far as search needs to know: Chinese,
//! Japanese and Korean text is written without spaces between words and is searched in
//! character pairs, and a request in one script finds a tool described in another only by the
//! words they share (mostly the tool's name).

/// A writing system, by Unicode block. Han and kana are one: Chinese and Japanese share Han.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Script {
    Latin,
    Greek,
    Cyrillic,
    Hebrew,
    Arabic,
    Indic,
    Thai,
    HanKana,
    Hangul,
    Other,
}

/// The script of a letter (`None` for anything else: digits, punctuation, marks).
pub fn of_char(c: char) -> Option<Script> {
    if c.is_ascii() {
        return c.is_ascii_alphabetic().then_some(Script::Latin);
    }
    if !c.is_alphabetic() {
        return None;
    }
    Some(match u32::from(c) {
        0x00C0..=0x024F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF => Script::Latin,
        0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Script::Latin,
        0x0370..=0x03FF | 0x1F00..=0x1FFF => Script::Greek,
        0x0400..=0x052F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        0x0590..=0x05FF | 0xFB1D..=0xFB4F => Script::Hebrew,
        0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF => Script::Arabic,
        0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Script::Arabic,
        0x0900..=0x0DFF => Script::Indic,
        0x0E00..=0x0EFF => Script::Thai,
        0x3005..=0x3007 | 0x303B | 0x3040..=0x30FF | 0x31F0..=0x31FF => Script::HanKana,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F => Script::HanKana,
        0x20000..=0x3134F => Script::HanKana,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7FF => Script::Hangul,
        0xFFA0..=0xFFDC => Script::Hangul,
        _ => Script::Other,
    })
}

/// The kinds of characters of text written without spaces between words (Chinese, Japanese,
/// Korean), which search splits into overlapping pairs of characters. Where Japanese changes
/// from one kind to another a word mostly ends (`ユーザー情報を取得`: katakana, Han, a particle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paired {
    Han,
    Hiragana,
    Katakana,
    Hangul,
}

/// The kind of `c` when it is written without spaces between words.
pub fn paired(c: char) -> Option<Paired> {
    match of_char(c)? {
        Script::Hangul => Some(Paired::Hangul),
        Script::HanKana => Some(match u32::from(c) {
            0x3040..=0x309F => Paired::Hiragana,
            0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Paired::Katakana,
            _ => Paired::Han,
        }),
        _ => None,
    }
}

/// The script most of `text`'s words are in: each run of letters of one script is a word,
/// except that every Han or kana character counts as one (`None` without letters).
pub fn of_text(text: &str) -> Option<Script> {
    let mut counts: Vec<(Script, usize)> = Vec::new();
    let mut previous = None;
    for c in text.chars() {
        let script = of_char(c);
        if let Some(s) = script {
            if script != previous || s == Script::HanKana {
                match counts.iter_mut().find(|(seen, _)| *seen == s) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((s, 1)),
                }
            }
        }
        previous = script;
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map(|(script, _)| script)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_of_letters_and_texts() {
        assert_eq!(of_char('a'), Some(Script::Latin));
        assert_eq!(of_char('é'), Some(Script::Latin));
        assert_eq!(of_char('7'), None);
        assert_eq!(of_char('地'), Some(Script::HanKana));
        assert_eq!(
            of_char('ー'),
            Some(Script::HanKana),
            "the prolonged sound mark"
        );
        assert_eq!(of_char('한'), Some(Script::Hangul));
        assert_eq!(of_char('ж'), Some(Script::Cyrillic));
        assert_eq!(paired('の'), Some(Paired::Hiragana));
        assert_eq!(paired('ー'), Some(Paired::Katakana));
        assert_eq!(paired('取'), Some(Paired::Han));
        assert_eq!(paired('한'), Some(Paired::Hangul));
        assert_eq!((paired('a'), paired('。')), (None, None));
        assert_eq!(of_text("Read a file"), Some(Script::Latin));
        assert_eq!(
            of_text("将一个高德经纬度坐标 (GPS) 转换为 address"),
            Some(Script::HanKana),
            "each Han character counts as a word"
        );
        assert_eq!(
            of_text("現在のユーザー情報を取得 (詳細ガイドはfreee-api-skill skillを参照)"),
            Some(Script::HanKana)
        );
        assert_eq!(of_text("Прочитать файл"), Some(Script::Cyrillic));
        assert_eq!(of_text("42 — !"), None);
    }
}
