//! Names as people see them on a terminal.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character that does not print shown as a visible escape, for messages to
/// people: the name of a record, entry or file comes from whoever made the folder or archive, and
/// an ESC or a bidi override in it would otherwise reach the terminal raw (an entry named
/// `"\x1b]0;pwned\x07a.sgf"` sets the window's title; `"\u{202e}fgs.exe"` shows as `exe.sgf`).
///
/// Escaped are the characters that Rust's `{:?}` escapes as not printable: C0 controls, DEL and
/// C1 controls (Unicode's `Cc`; `\t`, `\n`, `\r` and `\0` as such, others as `\u{1b}`), format
/// characters (`Cf`: the bidi embeddings and overrides U+202A–U+202E and isolates U+2066–U+2069,
/// the marks U+200E, U+200F and U+061C, zero-width characters, the soft hyphen, U+FEFF),
/// separators other than the space (`Zs`, `Zl`, `Zp`: U+00A0, U+2028, ...), private-use and
/// unassigned code points. Everything else, the backslash and quotes included, is shown as is:
/// the result is for reading, not for parsing back (JSON output escapes through serde instead).
///
/// ```
/// use zertz_archive::printable;
/// assert_eq!(printable("games/a.sgf"), "games/a.sgf");
/// assert_eq!(printable("\x1b]0;pwned\x07a.sgf"), r"\u{1b}]0;pwned\u{7}a.sgf");
/// assert_eq!(printable("b\u{202e}fgs.exe"), r"b\u{202e}fgs.exe");
/// assert_eq!(printable("tab\there é"), r"tab\there é");
/// ```
pub fn printable(text: &str) -> Cow<'_, str> {
    if text.chars().all(prints) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if prints(c) {
            shown.push(c);
        } else {
            // Cannot fail: writing to a String.
            let _ = write!(shown, "{}", c.escape_debug());
        }
    }
    Cow::Owned(shown)
}

/// Whether `c` prints: what `str::escape_debug` leaves alone after a first character (so that a
/// combining accent, printable after a letter, stays), and the quotes and the backslash.
fn prints(c: char) -> bool {
    if c == ' ' || c.is_ascii_graphic() {
        return true;
    }
    if c.is_ascii() {
        return false;
    }
    let mut pair = [0u8; 5];
    pair[0] = b'a';
    let len = 1 + c.encode_utf8(&mut pair[1..]).len();
    match std::str::from_utf8(&pair[..len]) {
        Ok(pair) => pair.escape_debug().nth(1) == Some(c),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn controls_and_invisible_characters_are_escaped() {
        for c in (0u32..0x20).chain([0x7f]).chain(0x80..0xa0) {
            let c = char::from_u32(c).unwrap();
            let shown = printable(&format!("a{c}b")).into_owned();
            assert!(!shown.contains(c) && shown.contains('\\'), "{c:?} shown as {shown:?}");
        }
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}', '\u{200b}', '\u{feff}',
            '\u{2028}', '\u{2029}', '\u{00ad}', '\u{00a0}', '\u{e000}',
        ] {
            let shown = printable(&format!("a{c}b")).into_owned();
            assert_eq!(shown, format!("a\\u{{{:x}}}b", c as u32));
        }
        assert_eq!(printable("a\nb\tc\rd\0"), r"a\nb\tc\rd\0");
    }

    #[test]
    fn printable_text_is_left_alone() {
        for text in ["games/a.sgf", "C:\\games\\\"a\" 'b'.sgf", "é e\u{301} ZÈRTZ 棋譜 ♟"] {
            assert!(matches!(printable(text), std::borrow::Cow::Borrowed(t) if t == text));
        }
    }
}
