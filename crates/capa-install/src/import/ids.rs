//! Source ids for imported entries: the client's name made valid (`[a-z][a-z0-9_-]{0,63}`, not
//! reserved), and a free one when it is taken.

use capa_config::{RESERVED_IDS, is_source_id};

/// A valid source id made from a client's server name: lower-case, other characters become `-`,
/// a leading non-letter gets `mcp-` before it, reserved ids get `-server` after them.
pub fn source_id_for(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            id.push(c);
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    let mut id = id.trim_matches('-').to_owned();
    if !id.starts_with(|c: char| c.is_ascii_lowercase()) {
        id = format!("mcp-{id}");
        id.truncate(id.trim_end_matches('-').len());
    }
    id.truncate(56);
    let mut id = id.trim_end_matches('-').to_owned();
    if RESERVED_IDS.contains(&id.as_str()) {
        id.push_str("-server");
    }
    id
}

/// `wanted`, or `wanted-2`, `wanted-3`, … : the first that `taken` says is free and is valid.
pub fn unique_id(wanted: &str, taken: impl Fn(&str) -> bool) -> String {
    let base = if is_source_id(wanted) && !RESERVED_IDS.contains(&wanted) {
        wanted.to_owned()
    } else {
        source_id_for(wanted)
    };
    if !taken(&base) {
        return base;
    }
    let mut stem = base.clone();
    stem.truncate(58);
    // Bounded: a hub has far fewer sources than this.
    (2..10_000)
        .map(|n| format!("{stem}-{n}"))
        .find(|id| !taken(id))
        .unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_valid_ids() {
        assert_eq!(source_id_for("github"), "github");
        assert_eq!(source_id_for("Brave Search"), "brave-search");
        assert_eq!(source_id_for("@scope/pkg.v2"), "scope-pkg-v2");
        assert_eq!(source_id_for("123"), "mcp-123");
        assert_eq!(source_id_for("ü"), "mcp");
        assert_eq!(source_id_for("capa"), "capa-server");
        assert_eq!(source_id_for("demo"), "demo-server");
        assert!(is_source_id(&source_id_for(&"x".repeat(500))));
        for name in ["", "---", "Ünïcødé", "a b c", "_x", "9lives", "a.b/c"] {
            assert!(is_source_id(&source_id_for(name)), "{name:?}");
        }
    }

    #[test]
    fn a_taken_id_gets_a_number() {
        let taken = ["files", "files-2"];
        assert_eq!(unique_id("files", |id| taken.contains(&id)), "files-3");
        assert_eq!(unique_id("other", |id| taken.contains(&id)), "other");
        assert_eq!(unique_id("Bad Id", |_| false), "bad-id");
    }
}
