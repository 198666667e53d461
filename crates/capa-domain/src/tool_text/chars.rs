//! Characters a person cannot see, or that act on a terminal instead of being shown, and the one
//! visible form they take wherever the hub shows upstream text to a person: `\u{…}` with the
//! code point in lower-case hex (`\u{202e}`, `\u{1b}[2J`), the form Rust's `escape_default`
//! writes, so the CLI and the UI show the same thing.

use std::borrow::Cow;

/// What a character does to a reader when it is shown raw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharKind {
    /// Shown as is.
    Plain,
    /// A line break or a tab in text of several lines.
    Layout,
    /// A C0/C1 control other than a line break or tab: `ESC` starts terminal escape sequences
    /// (colours, clearing the screen, OSC 52 clipboard writes), `CR` paints over a line.
    Control,
    /// Reorders what is shown (bidirectional marks, embeddings, overrides and isolates).
    Bidi,
    /// Takes no room on screen: zero-width spaces and joiners, the word joiner and invisible
    /// operators, the BOM, fillers, invisible variation selectors.
    Invisible,
    /// A Unicode tag character (U+E0000–U+E007F): each spells an ASCII character to a model and
    /// nothing to a person, a hidden message.
    Tag,
}

impl CharKind {
    /// The kind of `c`.
    pub fn of(c: char) -> Self {
        kind(c)
    }
}

/// The kind of `c`.
pub(super) fn kind(c: char) -> CharKind {
    match c {
        '\n' | '\t' => CharKind::Layout,
        '\u{e0000}'..='\u{e007f}' => CharKind::Tag,
        '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => CharKind::Bidi,
        '\u{00ad}'
        | '\u{034f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{180b}'..='\u{180f}'
        | '\u{200b}'..='\u{200d}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{2060}'..='\u{2065}'
        | '\u{206a}'..='\u{206f}'
        | '\u{3164}'
        | '\u{feff}'
        | '\u{ffa0}'
        | '\u{fff0}'..='\u{fff8}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0080}'..='\u{e0fff}' => CharKind::Invisible,
        c if c.is_control() => CharKind::Control,
        _ => CharKind::Plain,
    }
}

/// Whether `c` must be escaped before a person sees it (everything but plain text and layout).
fn hides(c: char) -> bool {
    !matches!(kind(c), CharKind::Plain | CharKind::Layout)
}

/// `text` as a person may be shown it, on several lines: every control, bidi, invisible and tag
/// character written as `\u{…}`; line breaks and tabs kept.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, hides)
}

/// [`visible`] for one line (a table cell, a log line): line breaks and tabs escaped too
/// (`\n`, `\t`), so that nothing upstream starts a line of its own.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape(text, |c| hides(c) || kind(c) == CharKind::Layout)
}

fn escape(text: &str, needs: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&needs) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs(c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// `text` without its tag characters, and how many there were.
pub(super) fn without_tags(text: &str) -> (Cow<'_, str>, usize) {
    let count = text.chars().filter(|c| kind(*c) == CharKind::Tag).count();
    if count == 0 {
        return (Cow::Borrowed(text), 0);
    }
    let kept = text.chars().filter(|c| kind(*c) != CharKind::Tag).collect();
    (Cow::Owned(kept), count)
}

/// What the tag characters in `text` spell (a model reads U+E0041 as `A`), those without an
/// ASCII letter (the language tag's start and end) left out.
pub(super) fn tag_message(text: &str) -> String {
    text.chars()
        .filter(|c| kind(*c) == CharKind::Tag)
        .filter_map(|c| char::from_u32(u32::from(c) - 0xe0000))
        .filter(|c| (' '..='~').contains(c))
        .collect()
}

/// `text` as a model reads it, for phrase rules: tag characters as the ASCII they spell, and
/// invisible and bidi characters dropped (so `ig\u{200b}nore` still reads `ignore`).
pub(super) fn as_model_reads(text: &str) -> String {
    text.chars()
        .filter_map(|c| match kind(c) {
            CharKind::Tag => char::from_u32(u32::from(c) - 0xe0000),
            CharKind::Invisible | CharKind::Bidi => None,
            _ => Some(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_and_bidi_are_shown_escaped() {
        assert_eq!(
            visible("ok\u{1b}[2J\u{1b}]52;c;aGk=\u{7} a\u{202e}b"),
            "ok\\u{1b}[2J\\u{1b}]52;c;aGk=\\u{7} a\\u{202e}b"
        );
        assert_eq!(
            visible("two\nlines\tand — naïve 😀"),
            "two\nlines\tand — naïve 😀"
        );
        assert_eq!(visible_line("two\nlines\r"), "two\\nlines\\r");
        assert_eq!(visible("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(visible("tag\u{e0041}"), "tag\\u{e0041}");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn tags_are_removed_counted_and_read() {
        let hidden: String = "hi!"
            .chars()
            .map(|c| char::from_u32(0xe0000 + u32::from(c)).unwrap_or(c))
            .collect();
        let text = format!("Adds.\u{e0001}{hidden}\u{e007f}");
        let (kept, count) = without_tags(&text);
        assert_eq!((kept.as_ref(), count), ("Adds.", 5));
        assert_eq!(tag_message(&text), "hi!");
        assert_eq!(as_model_reads("ig\u{200b}nore \u{202e}x"), "ignore x");
    }
}
