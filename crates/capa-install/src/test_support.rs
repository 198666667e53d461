//! Shared by the format modules' unit tests: one `capa` entry and the text an edit writes.

use crate::entry::{CapaEntry, Edit};

pub(crate) fn entry() -> CapaEntry {
    CapaEntry {
        command: "/bin/capa".into(),
        args: vec!["mcp".into(), "--project".into(), "/p".into()],
        client_key: None,
    }
}

pub(crate) fn written(edit: Edit) -> String {
    match edit {
        Edit::Write(text) => text,
        other => panic!("expected a write, got {other:?}"),
    }
}
