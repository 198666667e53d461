//! Turning a server off and on in the file: one `disabled: true` line in its entry, added or
//! removed, every other line as it was. A source turned off stays off across edits of its
//! definition: [`super::replace_server`] keeps the line.

use std::path::Path;

use super::{ServersBlock, check, indent_of, invalid, item_of, join, servers_block};
use crate::error::ConfigError;
use crate::file::CapabilitiesFile;

/// Whether server `id` is declared `disabled: true` in `text` (false when the text does not
/// parse or has no such server).
pub(super) fn declared_disabled(file: &Path, text: &str, id: &str) -> bool {
    crate::yaml::read::<CapabilitiesFile>(file, text, crate::load::CONFIG_DOCS)
        .value
        .is_some_and(|parsed| {
            parsed
                .servers
                .iter()
                .any(|s| s.id.value == id && s.disabled)
        })
}

/// The column the keys of the item starting at line `first` begin at (`  - id: x` → 4).
fn key_column(line: &str) -> usize {
    let at = indent_of(line);
    let rest = &line[at..];
    let after_dash = rest.strip_prefix('-').unwrap_or(rest);
    at + 1 + (after_dash.len() - after_dash.trim_start().len())
}

/// `text` with server `id` turned off (`disabled: true`) or on (the line removed). Unchanged
/// when the server is already so.
pub fn set_server_disabled(
    file: &Path,
    text: &str,
    id: &str,
    disabled: bool,
) -> Result<String, ConfigError> {
    if declared_disabled(file, text, id) == disabled {
        // Still refuse an unknown id.
        let lines: Vec<&str> = text.lines().collect();
        let block = block_of(file, &lines, id)?;
        item_of(file, text, &block, id)?;
        return Ok(text.to_owned());
    }
    let lines: Vec<&str> = text.lines().collect();
    let block = block_of(file, &lines, id)?;
    let (first, last) = item_of(file, text, &block, id)?;
    let column = key_column(lines[first]);
    let is_disabled_key =
        |line: &str| indent_of(line) == column && line.trim_start().starts_with("disabled:");
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let existing = (first + 1..=last).find(|&i| is_disabled_key(lines[i]));
    match (disabled, existing) {
        (true, Some(at)) => out[at] = format!("{}disabled: true", " ".repeat(column)),
        (true, None) => out.insert(first + 1, format!("{}disabled: true", " ".repeat(column))),
        (false, Some(at)) => {
            out.remove(at);
        }
        (false, None) => {
            return Err(invalid(
                file,
                format!("cannot find the `disabled:` line of server `{id}`"),
                "remove `disabled: true` from the server by hand",
            ));
        }
    }
    let edited = join(&out, true);
    check(file, &edited)?;
    if declared_disabled(file, &edited, id) != disabled {
        return Err(invalid(
            file,
            format!(
                "server `{id}` could not be turned {} by a line edit",
                if disabled { "off" } else { "on" }
            ),
            "set `disabled:` of the server by hand",
        ));
    }
    Ok(edited)
}

fn block_of(file: &Path, lines: &[&str], id: &str) -> Result<ServersBlock, ConfigError> {
    servers_block(file, lines)?.ok_or_else(|| {
        invalid(
            file,
            format!("no server `{id}` in this file"),
            "check the id",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_edit::{NewServer, replace_server};

    const FILE: &str = "# mine\nservers:\n  - id: one # first\n    type: mcp\n    def:\n      command: echo\n  - id: two\n    type: mcp\n    def: { command: cat }\n";

    #[test]
    fn turning_off_and_on_touches_one_line() {
        let path = Path::new("/x/capabilities.yaml");
        let off = set_server_disabled(path, FILE, "one", true).expect("off");
        assert!(off.contains("  - id: one # first\n    disabled: true\n    type: mcp\n"));
        assert!(declared_disabled(path, &off, "one"));
        assert!(!declared_disabled(path, &off, "two"));
        let checked = crate::load::parse_str(path, &off).expect("loads");
        assert_eq!(checked.off.len(), 1);
        assert_eq!(checked.off[0].id, "one");
        assert_eq!(checked.sources.len(), 1, "two still runs");
        assert_eq!(
            set_server_disabled(path, &off, "one", true).expect("again"),
            off
        );
        let on = set_server_disabled(path, &off, "one", false).expect("on");
        assert_eq!(on, FILE);
        assert!(set_server_disabled(path, FILE, "three", true).is_err());
    }

    #[test]
    fn a_false_value_is_replaced_and_an_edit_keeps_the_switch() {
        let path = Path::new("/x/capabilities.yaml");
        let text = FILE.replace(
            "    def: { command: cat }\n",
            "    disabled: false # was\n    def: { command: cat }\n",
        );
        let off = set_server_disabled(path, &text, "two", true).expect("off");
        assert!(off.contains("    disabled: true\n    def: { command: cat }\n"));
        let edit = NewServer {
            id: "two".to_owned(),
            command: Some("tac".to_owned()),
            ..NewServer::default()
        };
        let (edited, source) = replace_server(path, &off, &edit).expect("edit");
        assert_eq!(source.id, "two");
        assert!(declared_disabled(path, &edited, "two"), "{edited}");
        assert!(edited.contains("\"tac\""));
        let (edited, _) = replace_server(path, FILE, &edit).expect("edit an active one");
        assert!(!declared_disabled(path, &edited, "two"));
    }
}
