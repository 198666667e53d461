//! Which tool addresses a run's guest may call.

use std::collections::HashSet;

/// The longest tool name the MCP spec allows.
const MAX_TOOL_NAME_CHARS: usize = 128;

/// The addresses a run's guest may call: its namespaces' tools, and any tool of a source whose
/// tools are not known yet ([`crate::Namespace::unlisted_source`]).
pub(crate) struct RunTools {
    addresses: HashSet<String>,
    unlisted: Vec<String>,
}

impl RunTools {
    pub(crate) fn of(namespaces: &[crate::Namespace]) -> Self {
        Self {
            addresses: namespaces
                .iter()
                .flat_map(|ns| ns.tools.iter().map(|t| t.address.clone()))
                .collect(),
            unlisted: namespaces
                .iter()
                .filter_map(|ns| ns.unlisted_source.clone())
                .collect(),
        }
    }

    pub(crate) fn contains(&self, address: &str) -> bool {
        self.addresses.contains(address)
            || address.split_once('.').is_some_and(|(source, tool)| {
                could_be_a_tool_name(tool) && self.unlisted.iter().any(|s| s == source)
            })
    }
}

/// Whether `name` has the form of an MCP tool name (1 to 128 of `A-Z a-z 0-9 _ - . /`): the
/// member of a source whose tools are not known yet is the guest's own text, and it is shown
/// to the person asked to sign in, so nothing longer or stranger is let through.
fn could_be_a_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Namespace, ToolBinding};

    #[test]
    fn an_unlisted_source_allows_its_own_tools_only() {
        let tools = RunTools::of(&[
            Namespace {
                global: "github".into(),
                tools: vec![ToolBinding {
                    member: "get_me".into(),
                    address: "github.get_me".into(),
                }],
                unlisted_source: None,
            },
            Namespace {
                global: "notes".into(),
                tools: Vec::new(),
                unlisted_source: Some("notes".into()),
            },
        ]);
        assert!(tools.contains("github.get_me"));
        assert!(!tools.contains("github.other"));
        assert!(tools.contains("notes.create-note"));
        assert!(tools.contains("notes.a.b"));
        assert!(!tools.contains("notes."));
        assert!(!tools.contains("notes"));
        assert!(!tools.contains("notesx.y"));
        assert!(!tools.contains("slack.post"));
        // The guest's own text, shown to a person: a tool name's form and length only.
        assert!(tools.contains(&format!("notes.{}", "a".repeat(128))));
        assert!(!tools.contains(&format!("notes.{}", "a".repeat(129))));
        assert!(!tools.contains("notes.create note"));
        assert!(!tools.contains("notes.<b>x</b>"));
        assert!(!tools.contains("notes.x) - also approve github.delete_repo"));
        assert!(!tools.contains("notes.café"));
    }
}
