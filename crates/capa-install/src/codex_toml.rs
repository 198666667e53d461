//! Codex's `config.toml`: MCP servers are `[mcp_servers.<name>]` tables with `command` and `args`.
//!
//! Edited with `toml_edit`, so comments, blank lines, key order and every other table survive.
//! Inside `[mcp_servers.capa]` only `command` and `args` are set, and only when they differ, so an
//! up-to-date file is left byte for byte and a user's `env` or timeouts there stay.

use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table, TableLike, value};

use crate::entry::{CLIENT_KEY_ENV, CapaEntry, ENTRY_NAME, Edit, removable};
use crate::error::InstallError;

const SERVERS_KEY: &str = "mcp_servers";

/// Puts `entry` in `[mcp_servers.capa]`.
pub fn register(path: &Path, old: Option<&str>, entry: &CapaEntry) -> Result<Edit, InstallError> {
    let mut doc = parse(path, old.unwrap_or(""))?;
    let root = doc.as_table_mut();
    if !root.contains_key(SERVERS_KEY) {
        let mut servers = Table::new();
        servers.set_implicit(true);
        root.insert(SERVERS_KEY, Item::Table(servers));
    }
    let servers = root
        .get_mut(SERVERS_KEY)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| not_a_table(path))?;
    match servers.get_mut(ENTRY_NAME) {
        Some(existing) => match existing.as_table_like_mut() {
            Some(table) => set_entry(table, entry),
            None => *existing = fresh(entry),
        },
        None => {
            servers.insert(ENTRY_NAME, fresh(entry));
        }
    }
    let text = doc.to_string();
    if old == Some(text.as_str()) {
        return Ok(Edit::Unchanged);
    }
    Ok(Edit::Write(text))
}

/// Takes out `[mcp_servers.capa]` if capa wrote it (and, with `only_args`, only when it has these
/// arguments). An `[mcp_servers]` table left empty goes too when the file never spelled it out.
pub fn unregister(
    path: &Path,
    old: &str,
    only_args: Option<&[String]>,
) -> Result<Edit, InstallError> {
    let mut doc = parse(path, old)?;
    let root = doc.as_table_mut();
    let Some(servers) = root.get_mut(SERVERS_KEY) else {
        return Ok(Edit::Unchanged);
    };
    let implicit = servers.as_table().is_some_and(Table::is_implicit);
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| not_a_table(path))?;
    let Some(existing) = servers.get(ENTRY_NAME) else {
        return Ok(Edit::Unchanged);
    };
    let command = existing.get("command").and_then(Item::as_str);
    let args: Vec<&str> = existing
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if !removable(command, &args, only_args) {
        return Ok(Edit::NotOurs);
    }
    servers.remove(ENTRY_NAME);
    if servers.is_empty() && implicit {
        root.remove(SERVERS_KEY);
    }
    let text = doc.to_string();
    if text.trim().is_empty() {
        return Ok(Edit::Emptied);
    }
    Ok(Edit::Write(text))
}

/// Whether `text` has a `[mcp_servers.capa]` whose arguments are not `args` (an unreadable file
/// counts as not: planning it reports the parse error).
pub fn other_entry(text: &str, args: &[String]) -> bool {
    let Ok(doc) = text.parse::<DocumentMut>() else {
        return false;
    };
    let Some(existing) = doc.get(SERVERS_KEY).and_then(|s| s.get(ENTRY_NAME)) else {
        return false;
    };
    let found: Vec<&str> = existing
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    !found.iter().copied().eq(args.iter().map(String::as_str))
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, InstallError> {
    text.parse()
        .map_err(|e: toml_edit::TomlError| InstallError::NotToml {
            path: path.to_path_buf(),
            detail: e.message().to_owned(),
        })
}

fn not_a_table(path: &Path) -> InstallError {
    InstallError::Shape {
        path: path.to_path_buf(),
        message: format!("`{SERVERS_KEY}` is not a table, so capa cannot add its entry"),
    }
}

fn fresh(entry: &CapaEntry) -> Item {
    let mut table = Table::new();
    table.insert("command", value(entry.command.as_str()));
    table.insert("args", value(args_array(entry)));
    set_client_key(&mut table, entry);
    Item::Table(table)
}

/// `env.CAPA_CLIENT_KEY` of a paired client, beside the user's other variables (an `env` that
/// is not a table is replaced).
fn set_client_key(table: &mut dyn TableLike, entry: &CapaEntry) {
    let Some(key) = &entry.client_key else {
        return;
    };
    let is_table = table
        .get("env")
        .is_some_and(|e| e.as_table_like().is_some());
    if !is_table {
        table.insert("env", value(toml_edit::InlineTable::new()));
    }
    if let Some(env) = table.get_mut("env").and_then(Item::as_table_like_mut) {
        env.insert(CLIENT_KEY_ENV, value(key.as_str()));
    }
}

fn args_array(entry: &CapaEntry) -> Array {
    entry.args.iter().map(String::as_str).collect()
}

/// Sets `command` and `args` where they differ, leaving everything else in the table alone.
fn set_entry(table: &mut dyn TableLike, entry: &CapaEntry) {
    if table.get("command").and_then(Item::as_str) != Some(entry.command.as_str()) {
        table.insert("command", value(entry.command.as_str()));
    }
    let args: Option<Vec<Option<&str>>> = table
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().map(|v| v.as_str()).collect());
    let wanted: Vec<Option<&str>> = entry.args.iter().map(|a| Some(a.as_str())).collect();
    if args.as_ref() != Some(&wanted) {
        table.insert("args", value(args_array(entry)));
    }
    set_client_key(table, entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::{entry, written};

    const USERS: &str = "# my settings\nmodel = \"o3\"  # the best one\n\n[mcp_servers.other]\n# keep me\ncommand = \"npx\"\nargs = [\"-y\", \"other\"]\n";

    #[test]
    fn the_entry_is_added_after_the_users_and_comments_stay() {
        let text = written(register(Path::new("f"), Some(USERS), &entry()).expect("edit"));
        assert_eq!(
            text,
            format!(
                "{USERS}\n[mcp_servers.capa]\ncommand = \"/bin/capa\"\nargs = [\"mcp\", \"--project\", \"/p\"]\n"
            )
        );
        assert_eq!(
            register(Path::new("f"), Some(&text), &entry()).expect("edit"),
            Edit::Unchanged
        );
        assert_eq!(
            written(unregister(Path::new("f"), &text, None).expect("edit")),
            USERS
        );
    }

    #[test]
    fn a_new_file_holds_only_the_entry_and_empties_on_removal() {
        let text = written(register(Path::new("f"), None, &entry()).expect("edit"));
        assert_eq!(
            text,
            "[mcp_servers.capa]\ncommand = \"/bin/capa\"\nargs = [\"mcp\", \"--project\", \"/p\"]\n"
        );
        assert_eq!(
            unregister(Path::new("f"), &text, None).expect("edit"),
            Edit::Emptied
        );
    }

    #[test]
    fn only_command_and_args_change_in_an_existing_entry() {
        let old = "[mcp_servers.capa]\ncommand = \"/old/capa\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n[mcp_servers.capa.env]\nA = \"1\"\n";
        let text = written(register(Path::new("f"), Some(old), &entry()).expect("edit"));
        assert_eq!(
            text,
            "[mcp_servers.capa]\ncommand = \"/bin/capa\"\nargs = [\"mcp\", \"--project\", \"/p\"]\nstartup_timeout_sec = 20\n\n[mcp_servers.capa.env]\nA = \"1\"\n"
        );
    }

    #[test]
    fn another_projects_entry_in_the_user_file_is_left_alone() {
        let old = "[mcp_servers.capa]\ncommand = \"/bin/capa\"\nargs = [\"mcp\", \"--project\", \"/elsewhere\"]\n";
        assert_eq!(
            unregister(Path::new("f"), old, Some(&entry().args)).expect("edit"),
            Edit::NotOurs
        );
    }

    #[test]
    fn broken_toml_is_not_rewritten() {
        let error = register(Path::new("config.toml"), Some("[mcp_servers\n"), &entry())
            .expect_err("refused");
        assert!(
            error
                .to_string()
                .starts_with("config.toml is not valid TOML ("),
            "{error}"
        );
    }
}
