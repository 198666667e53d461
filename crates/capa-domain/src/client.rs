//! The client of a call as a person reads it: the name and version it introduced itself with
//! (MCP `initialize`'s `clientInfo`, or on 2026-07-28 the request's
//! `_meta["io.modelcontextprotocol/clientInfo"]`), made safe to show.
//!
//! Both strings come from the client, so they are hostile: any length, control characters
//! (a newline or an ANSI escape that would forge a line at a terminal), and Unicode format
//! characters (a right-to-left override that would show "evil" as "live"). The label keeps
//! printable characters only, collapses runs of white space, and caps the name and the version
//! apart, so that a long name cannot hide the version.

/// At most this many characters of the client's name.
pub const MAX_CLIENT_NAME: usize = 64;
/// At most this many characters of its version.
pub const MAX_CLIENT_VERSION: usize = 32;
/// At most this many characters of a whole label ("name version"), as stored.
pub const MAX_CLIENT_LABEL: usize = MAX_CLIENT_NAME + 1 + MAX_CLIENT_VERSION;

/// "name version" (or the name alone when the version is empty); none when the name has no
/// printable character.
pub fn client_label(name: &str, version: &str) -> Option<String> {
    let name = clean(name, MAX_CLIENT_NAME)?;
    Some(match clean(version, MAX_CLIENT_VERSION) {
        Some(version) => format!("{name} {version}"),
        None => name,
    })
}

/// A label read back (from the store, or written before labels were cleaned), cleaned again.
pub fn clean_client_label(label: &str) -> Option<String> {
    clean(label, MAX_CLIENT_LABEL)
}

/// Printable characters of `text`, white space collapsed to single spaces, at most `max`
/// characters (the last one `…` when cut); none when nothing printable is left.
fn clean(text: &str, max: usize) -> Option<String> {
    let mut out = String::new();
    let mut count = 0usize;
    let mut space = false;
    // Looks at no more than this many characters of a hostile string.
    for c in text.chars().take(max.saturating_mul(16)) {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if !printable(c) {
            continue;
        }
        if space {
            out.push(' ');
            count += 1;
            space = false;
        }
        out.push(c);
        count += 1;
        if count > max {
            break;
        }
    }
    if count > max {
        let cut: String = out.chars().take(max.saturating_sub(1)).collect();
        out = format!("{}…", cut.trim_end());
    }
    (!out.is_empty()).then_some(out)
}

/// Not a control character, nor one of Unicode's invisible format characters (zero-width
/// spaces and joiners, bidirectional marks, embeddings, overrides and isolates, the BOM,
/// interlinear annotation, tags).
fn printable(c: char) -> bool {
    !c.is_control()
        && !matches!(c,
            '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_client_is_its_name_and_version() {
        assert_eq!(
            client_label("claude-code", "2.1.3").as_deref(),
            Some("claude-code 2.1.3")
        );
        assert_eq!(client_label("Cursor", "").as_deref(), Some("Cursor"));
        assert_eq!(
            client_label("  Claude   Desktop ", " 0.9 ").as_deref(),
            Some("Claude Desktop 0.9")
        );
    }

    #[test]
    fn control_and_format_characters_are_dropped() {
        assert_eq!(
            client_label("evil\u{1b}[31m\nclient\r\0", "1\u{7}.0").as_deref(),
            Some("evil[31m client 1.0")
        );
        // A right-to-left override and zero-width characters would change what a person reads.
        assert_eq!(
            client_label("\u{202E}gnp.exe\u{200B}\u{2066}", "\u{FEFF}1").as_deref(),
            Some("gnp.exe 1")
        );
    }

    #[test]
    fn a_name_of_nothing_printable_is_no_client() {
        assert_eq!(client_label("", "1.0"), None);
        assert_eq!(client_label("\u{0}\u{1b}\u{202E} \n", "1.0"), None);
    }

    #[test]
    fn long_names_and_versions_are_cut_apart() {
        let label = client_label(&"n".repeat(10_000), &"v".repeat(10_000)).expect("label");
        let (name, version) = label.split_once(' ').expect("two parts");
        assert_eq!(name.chars().count(), MAX_CLIENT_NAME);
        assert!(name.ends_with('…'), "{name}");
        assert_eq!(version.chars().count(), MAX_CLIENT_VERSION);
        assert!(version.ends_with('…'), "{version}");
        assert!(label.chars().count() <= MAX_CLIENT_LABEL);
        // Exactly the cap is kept whole.
        let name = "x".repeat(MAX_CLIENT_NAME);
        assert_eq!(
            client_label(&name, "1").expect("label"),
            format!("{name} 1")
        );
    }

    #[test]
    fn a_stored_label_is_cleaned_again_and_stays_the_same_when_clean() {
        let label = client_label("claude-code", "2.1.3").expect("label");
        assert_eq!(clean_client_label(&label), Some(label));
        let hostile = format!("{}\u{1b}", "a".repeat(500));
        let cleaned = clean_client_label(&hostile).expect("label");
        assert_eq!(cleaned.chars().count(), MAX_CLIENT_LABEL);
        assert!(!cleaned.contains('\u{1b}'));
    }
}
