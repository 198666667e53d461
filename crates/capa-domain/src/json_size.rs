//! Sizes of JSON as the hub sends it (compact, `serde_json`'s escaping), counted without building
//! the text: a value's length, a string's escaped width, and the longest prefix of a string
//! that fits a byte budget. The sandbox (its result and logs within `inlineResultBytes`, a
//! call's argument bytes), the upstream bounds (tool list and schema sizes) and the MCP front
//! (direct results within the inline limit) all measure with these, so their counts agree.

use serde::Serialize;

/// Bytes of `value` as compact JSON, counted as `serde_json` writes it, without holding the
/// text. Nothing the hub measures fails to serialise (string keys, finite numbers); a value that
/// did would count as `usize::MAX / 2`, over any budget yet far from overflowing a sum.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX / 2,
    }
}

/// Bytes `c` takes inside a JSON string as `serde_json` writes it: two for the short escapes
/// (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`), six for another control character (`\u00XX`),
/// else its UTF-8 length.
pub fn escaped_char_width(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes of `s` inside a JSON string, escapes counted, quotes not.
pub fn escaped_width(s: &str) -> usize {
    s.chars().map(escaped_char_width).sum()
}

/// Bytes of `s` as a JSON string literal: its [`escaped_width`] and the two quotes.
pub fn json_str_len(s: &str) -> usize {
    2 + escaped_width(s)
}

/// How a string's bytes are counted against a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// As UTF-8: the string's own length.
    Utf8,
    /// As the inside of a JSON string ([`escaped_char_width`] per character).
    JsonEscaped,
}

/// The longest prefix of `s` that ends on a character boundary and takes at most `budget` bytes
/// counted by `measure`: `s` itself when it fits, `""` when its first character does not. Reads
/// only as much of `s` as it keeps, and one character more.
pub fn prefix_within(s: &str, budget: usize, measure: Measure) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let width = match measure {
            Measure::Utf8 => c.len_utf8(),
            Measure::JsonEscaped => escaped_char_width(c),
        };
        if used + width > budget {
            return &s[..i];
        }
        used += width;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Strings with every kind of character `serde_json` writes differently.
    const STRINGS: &[&str] = &[
        "",
        "plain",
        "a\"quote\"",
        "back\\slash",
        "line\nfeed\r\ttab\u{8}\u{c}",
        "\u{0}\u{1}\u{1f}",
        "\u{7f}",
        "é",
        "日本語",
        "😀 emoji",
        "mixed \"é\"\\\n\u{1}😀",
    ];

    fn serialised(value: &impl Serialize) -> usize {
        serde_json::to_string(value).map_or(0, |s| s.len())
    }

    #[test]
    fn json_len_is_the_length_serde_json_writes() {
        let value = json!({
            "a": [1, 2.5, -3e40, null, true, false, STRINGS],
            "nested": {"c": "", "d": [[], {}]},
        });
        assert_eq!(json_len(&value), serialised(&value));
        for s in STRINGS {
            assert_eq!(json_len(s), serialised(s), "{s:?}");
        }
        assert_eq!(json_len(&Vec::<u8>::new()), 2);
    }

    #[test]
    fn a_value_that_cannot_serialise_is_over_any_budget() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        assert_eq!(json_len(&Refuses), usize::MAX / 2);
    }

    #[test]
    fn escaped_width_counts_quotes_backslashes_control_and_multibyte_chars() {
        for s in STRINGS {
            assert_eq!(json_str_len(s), serialised(s), "{s:?}");
            assert_eq!(escaped_width(s) + 2, serialised(s), "{s:?}");
        }
        assert_eq!(escaped_char_width('"'), 2);
        assert_eq!(escaped_char_width('\\'), 2);
        assert_eq!(escaped_char_width('\n'), 2);
        assert_eq!(escaped_char_width('\u{1}'), 6);
        assert_eq!(escaped_char_width('\u{7f}'), 1);
        assert_eq!(escaped_char_width('é'), 2);
        assert_eq!(escaped_char_width('😀'), 4);
    }

    #[test]
    fn a_utf8_prefix_is_the_longest_that_fits_on_a_character_boundary() {
        assert_eq!(prefix_within("hello", 10, Measure::Utf8), "hello");
        assert_eq!(prefix_within("hello", 3, Measure::Utf8), "hel");
        assert_eq!(prefix_within("hello", 0, Measure::Utf8), "");
        // "é" is two bytes: three bytes hold one of them, not a half of the second.
        assert_eq!(prefix_within("éé", 3, Measure::Utf8), "é");
        assert_eq!(prefix_within("😀a", 3, Measure::Utf8), "");
        // Escapes count as one byte each in UTF-8.
        assert_eq!(prefix_within("a\"\u{1}b", 3, Measure::Utf8), "a\"\u{1}");
    }

    #[test]
    fn an_escaped_prefix_counts_each_character_as_json_writes_it() {
        assert_eq!(prefix_within("plain", 5, Measure::JsonEscaped), "plain");
        // `a` (1) and `\"` (2) fit in 3; `\\` would make 5.
        assert_eq!(prefix_within("a\"\\b", 3, Measure::JsonEscaped), "a\"");
        assert_eq!(prefix_within("a\"\\b", 4, Measure::JsonEscaped), "a\"");
        assert_eq!(prefix_within("a\"\\b", 5, Measure::JsonEscaped), "a\"\\");
        // A control character is six bytes.
        assert_eq!(
            prefix_within("\u{1}\u{1}", 11, Measure::JsonEscaped),
            "\u{1}"
        );
        assert_eq!(
            prefix_within("\u{1}\u{1}", 12, Measure::JsonEscaped),
            "\u{1}\u{1}"
        );
        assert_eq!(prefix_within("日本", 5, Measure::JsonEscaped), "日");
        // Every prefix found fits its budget as serialised, and one character more would not.
        for s in STRINGS {
            for budget in 0..=escaped_width(s) + 1 {
                let prefix = prefix_within(s, budget, Measure::JsonEscaped);
                assert!(s.starts_with(prefix));
                assert!(serialised(&prefix) - 2 <= budget, "{s:?} {budget}");
                if let Some(next) = s[prefix.len()..].chars().next() {
                    assert!(escaped_width(prefix) + escaped_char_width(next) > budget);
                }
            }
        }
    }
}
