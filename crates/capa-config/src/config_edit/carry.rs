//! What an edit from the Sources form keeps of a server's entry. The form edits the entry's
//! `description` and `def`; every other key a person wrote there — `expose`, `tools`,
//! `disabled`, `connection`, … — is carried over verbatim, its nested lines and comments with it,
//! so saving the form never loosens an `expose` policy or turns a source back on.

use super::indent_of;

/// The keys the form writes itself ([`super::NewServer::render`]).
const REPLACED: &[&str] = &["id", "type", "description", "def"];

/// The lines of the entry `lines[first..=last]` (its `- ` at `indent`) that belong to keys the
/// form does not write, re-indented for an entry whose `- ` is at `indent` too.
pub(super) fn kept_lines(lines: &[&str], first: usize, last: usize, indent: usize) -> Vec<String> {
    let column = indent + 2;
    let mut kept = Vec::new();
    let mut keeping = false;
    for (at, line) in lines.iter().enumerate().take(last + 1).skip(first) {
        let trimmed = line.trim_start();
        let own_key = if at == first {
            // `- key: value`: the item's first key sits after the dash.
            trimmed.strip_prefix("- ").map(str::trim_start)
        } else if indent_of(line) == column && !trimmed.starts_with('#') && !trimmed.is_empty() {
            Some(trimmed)
        } else {
            None
        };
        if let Some(entry) = own_key {
            let key = entry.split(':').next().unwrap_or_default().trim();
            keeping = !REPLACED.contains(&key);
            if keeping {
                kept.push(format!("{}{entry}", " ".repeat(column)));
            }
            continue;
        }
        if keeping && (trimmed.is_empty() || indent_of(line) > column) {
            kept.push((*line).to_owned());
        }
    }
    // A trailing blank line belongs between entries, not to the kept key.
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_the_form_does_not_write_are_kept_with_their_lines() {
        let text = "servers:\n  - id: gh\n    type: mcp\n    expose: except\n    tools:\n      - delete_repo # never\n      - force_push\n    disabled: true\n    def:\n      url: https://x/mcp\n    connection: work\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            kept_lines(&lines, 1, lines.len() - 1, 2),
            [
                "    expose: except",
                "    tools:",
                "      - delete_repo # never",
                "      - force_push",
                "    disabled: true",
                "    connection: work",
            ]
        );
    }

    #[test]
    fn a_first_key_after_the_dash_is_kept_too() {
        let text =
            "servers:\n  - expose: only\n    id: a\n    type: mcp\n    def:\n      command: x\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            kept_lines(&lines, 1, lines.len() - 1, 2),
            ["    expose: only"]
        );
    }
}
