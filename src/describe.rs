//! Description hygiene (PI-1): what a tool's description may carry into a prompt.
//!
//! A description comes from a server the user may not control, and it goes
//! straight into the model's context. Characters a person reviewing the tool list
//! cannot see are removed: bidirectional controls, zero-width characters, Unicode
//! tag characters, variation selectors, invisible fillers and every other control
//! or format character. Ordinary newlines and tabs stay. The result is capped at
//! [`MAX_DESCRIPTION_BYTES`] on a character boundary.
//!
//! # Limits
//!
//! A description is read only until 4 KiB of visible text has been kept, so a
//! 100 MB description costs what a 4 KiB one does. Only invisible characters
//! (skipped, not kept) extend the read, which never exceeds one pass over the text.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The largest description sent to a model, in bytes of UTF-8 (4 KiB).
pub const MAX_DESCRIPTION_BYTES: usize = 4096;

/// Whether `c` is invisible in a rendered description and must not reach a model.
fn is_invisible(c: char) -> bool {
    // ASCII has no format or separator characters: only its controls
    // (not a line feed or a tab) are invisible, and most text is ASCII.
    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || matches!(c,
        '\u{034F}'                      // combining grapheme joiner
        | '\u{115F}' | '\u{1160}'       // Hangul choseong/jungseong fillers
        | '\u{17B4}' | '\u{17B5}'       // Khmer inherent vowels
        | '\u{180B}'..='\u{180F}'       // Mongolian variation selectors and vowel separator
        | '\u{2800}'                    // Braille blank
        | '\u{3164}' | '\u{FFA0}'       // Hangul fillers
        | '\u{FE00}'..='\u{FE0F}'       // variation selectors
        | '\u{E0000}'..='\u{E007F}'     // tag characters
        | '\u{E0100}'..='\u{E01EF}'     // variation selectors supplement
    )
}

/// Removes invisible characters and caps the length at [`MAX_DESCRIPTION_BYTES`].
///
/// Returns the input unchanged (borrowed) when there is nothing to do. Reads
/// only as far as it needs: a description of any size costs the visible 4 KiB
/// it keeps plus the invisible characters before and between them.
pub fn sanitize_description(text: &str) -> Cow<'_, str> {
    // The longest prefix that is already clean and within the cap.
    let mut clean_end = 0;
    for (i, c) in text.char_indices() {
        if is_invisible(c) {
            break;
        }
        if i + c.len_utf8() > MAX_DESCRIPTION_BYTES {
            return Cow::Borrowed(&text[..i]);
        }
        clean_end = i + c.len_utf8();
    }
    if clean_end == text.len() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(MAX_DESCRIPTION_BYTES.min(text.len()));
    out.push_str(&text[..clean_end]);
    for c in text[clean_end..].chars().filter(|&c| !is_invisible(c)) {
        if out.len() + c.len_utf8() > MAX_DESCRIPTION_BYTES {
            break;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// The first character of `text` a person cannot see or that a terminal
/// would act on: an invisible character (as [`sanitize_description`]
/// removes) or any control character, line feeds and tabs included. A
/// name or a value the model must send back exactly cannot be cleaned, so
/// such a character is reported instead.
pub(crate) fn hidden_character(text: &str) -> Option<char> {
    text.chars().find(|&c| c.is_control() || is_invisible(c))
}

/// `text` as a terminal shows it without acting on it: every control and
/// invisible character written out (`\x1b` for an ASCII control, `\u{202e}`
/// for any other). Borrowed when there is nothing to write out.
///
/// ```
/// use mcp_adapters::toolset::escape_visible;
///
/// assert_eq!(escape_visible("ok"), "ok");
/// assert_eq!(escape_visible("red \x1b[31m"), "red \\x1b[31m");
/// assert_eq!(escape_visible("a\u{202e}b"), "a\\u{202e}b");
/// ```
pub fn escape_visible(text: &str) -> Cow<'_, str> {
    let shown = |c: char| !c.is_control() && !is_invisible(c);
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if shown(c) => out.push(c),
            c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_agrees_with_the_general_categories() {
        for byte in 0u8..=0x7F {
            let c = char::from(byte);
            let by_category = c != '\n'
                && c != '\t'
                && matches!(
                    c.general_category(),
                    GeneralCategory::Control
                        | GeneralCategory::Format
                        | GeneralCategory::LineSeparator
                        | GeneralCategory::ParagraphSeparator
                );
            assert_eq!(is_invisible(c), by_category, "{byte:#04x}");
        }
    }

    #[test]
    fn removes_invisible_and_keeps_newlines_and_tabs() {
        let cases = [
            ("plain", "plain"),
            ("a\u{202E}b\u{2066}c", "abc"),
            ("zero\u{200B}width\u{FEFF}", "zerowidth"),
            ("tag\u{E0041}\u{E0042}s", "tags"),
            ("line\nnext\ttab", "line\nnext\ttab"),
            ("cr\r\nlf\u{0007}bell", "cr\nlfbell"),
            ("soft\u{00AD}hyphen", "softhyphen"),
            ("fill\u{3164}er", "filler"),
            ("emoji \u{2764}\u{FE0F}", "emoji \u{2764}"),
            ("ünïcödé 日本", "ünïcödé 日本"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize_description(input), want, "{input:?}");
        }
    }

    #[test]
    fn caps_at_4_kib_on_a_character_boundary() {
        let long = "é".repeat(3000); // 6000 bytes
        let capped = sanitize_description(&long);
        assert_eq!(capped.len(), 4096);
        assert!(capped.chars().all(|c| c == 'é'));
        let odd = format!("a{}", "é".repeat(3000));
        assert_eq!(sanitize_description(&odd).len(), 4095);
    }

    #[test]
    fn escapes_what_a_terminal_would_act_on() {
        assert_eq!(escape_visible("plain ünï"), "plain ünï");
        assert_eq!(escape_visible("\u{1b}[2J\r\n"), "\\x1b[2J\\x0d\\x0a");
        assert_eq!(escape_visible("a\u{200b}\u{E0041}"), "a\\u{200b}\\u{e0041}");
        assert_eq!(hidden_character("name"), None);
        assert_eq!(hidden_character("na\tme"), Some('\t'));
        assert_eq!(hidden_character("na\u{202e}me"), Some('\u{202e}'));
    }

    #[test]
    fn borrows_clean_input() {
        assert!(matches!(sanitize_description("clean"), Cow::Borrowed(_)));
    }
}
