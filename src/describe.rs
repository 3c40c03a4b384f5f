//! Description hygiene (PI-1): what a tool's description may carry into a prompt.
//!
//! A description comes from a server the user may not control, and it goes
//! straight into the model's context. Characters a person reviewing the tool list
//! cannot see are removed: bidirectional controls, zero-width characters, Unicode
//! tag characters, variation selectors, invisible fillers and every other control
//! or format character. Ordinary newlines and tabs stay. The result is capped at
//! [`MAX_DESCRIPTION_BYTES`] on a character boundary.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The largest description sent to a model, in bytes of UTF-8 (4 KiB).
pub const MAX_DESCRIPTION_BYTES: usize = 4096;

/// Whether `c` is invisible in a rendered description and must not reach a model.
pub fn is_invisible(c: char) -> bool {
    if c == '\n' || c == '\t' {
        return false;
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
/// Returns the input unchanged (borrowed) when there is nothing to do.
pub fn sanitize_description(text: &str) -> Cow<'_, str> {
    let clean = if text.chars().any(is_invisible) {
        Cow::Owned(text.chars().filter(|&c| !is_invisible(c)).collect())
    } else {
        Cow::Borrowed(text)
    };
    if clean.len() <= MAX_DESCRIPTION_BYTES {
        return clean;
    }
    let mut end = MAX_DESCRIPTION_BYTES;
    while !clean.is_char_boundary(end) {
        end -= 1;
    }
    match clean {
        Cow::Borrowed(s) => Cow::Borrowed(&s[..end]),
        Cow::Owned(mut s) => {
            s.truncate(end);
            Cow::Owned(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn borrows_clean_input() {
        assert!(matches!(sanitize_description("clean"), Cow::Borrowed(_)));
    }
}
