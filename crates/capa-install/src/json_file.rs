//! Claude Code's `.mcp.json`, Cursor's `.cursor/mcp.json` and VS Code's `.vscode/mcp.json`: a JSON
//! object whose `mcpServers` (VS Code: `servers`) maps names to entries.
//!
//! Merge rules: every other key, at every level, stays with its value and in its place (the
//! workspace builds `serde_json` with `preserve_order`); inside the `capa` entry only `type`,
//! `command` and `args` are set, so a user's `env` there survives too. A file that already holds
//! the entry is left byte for byte. A changed file is written with 2-space indentation and a final
//! newline.

use std::path::Path;

use serde_json::{Map, Value};

use crate::entry::{CapaEntry, ENTRY_NAME, Edit, removable};
use crate::error::InstallError;

/// Puts `entry` under `servers_key`, adding the key (and the file) when missing.
pub fn register(
    path: &Path,
    old: Option<&str>,
    servers_key: &'static str,
    typed: bool,
    entry: &CapaEntry,
) -> Result<Edit, InstallError> {
    let hint = || {
        format!(
            "Fix the file, or add this under \"{servers_key}\" yourself: \"{ENTRY_NAME}\": {}",
            Value::Object(entry.to_json(typed))
        )
    };
    let mut root = parse(path, old.unwrap_or(""), hint)?;
    let before = root.clone();
    let servers = root
        .entry(servers_key)
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(not_an_object(path, servers_key));
    };
    let wanted = entry.to_json(typed);
    match servers.get_mut(ENTRY_NAME) {
        Some(Value::Object(existing)) => {
            for (key, value) in wanted {
                existing.insert(key, value);
            }
        }
        Some(other) => *other = Value::Object(wanted),
        None => {
            servers.insert(ENTRY_NAME.into(), Value::Object(wanted));
        }
    }
    if old.is_some() && root == before {
        return Ok(Edit::Unchanged);
    }
    Ok(Edit::Write(render(root)))
}

/// Takes out the `capa` entry if capa wrote it (and, with `only_args`, only when it has these
/// arguments).
pub fn unregister(
    path: &Path,
    old: &str,
    servers_key: &'static str,
    only_args: Option<&[String]>,
) -> Result<Edit, InstallError> {
    let hint = || format!("Fix the file, or take out its \"{ENTRY_NAME}\" entry yourself.");
    let mut root = parse(path, old, hint)?;
    let Some(servers) = root.get_mut(servers_key) else {
        return Ok(Edit::Unchanged);
    };
    let Value::Object(servers) = servers else {
        return Err(not_an_object(path, servers_key));
    };
    let Some(existing) = servers.get(ENTRY_NAME) else {
        return Ok(Edit::Unchanged);
    };
    let command = existing.get("command").and_then(Value::as_str);
    let args: Vec<&str> = existing
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !removable(command, &args, only_args) {
        return Ok(Edit::NotOurs);
    }
    servers.shift_remove(ENTRY_NAME);
    if servers.is_empty() && root.len() == 1 {
        return Ok(Edit::Emptied);
    }
    Ok(Edit::Write(render(root)))
}

fn parse(
    path: &Path,
    text: &str,
    hint: impl FnOnce() -> String,
) -> Result<Map<String, Value>, InstallError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(InstallError::Shape {
            path: path.to_path_buf(),
            message: "the file is not a JSON object".into(),
        }),
        Err(e) => Err(InstallError::NotJson {
            path: path.to_path_buf(),
            detail: e.to_string(),
            hint: hint(),
        }),
    }
}

fn not_an_object(path: &Path, servers_key: &str) -> InstallError {
    InstallError::Shape {
        path: path.to_path_buf(),
        message: format!("`{servers_key}` is not a JSON object, so capa cannot add its entry"),
    }
}

fn render(root: Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::{entry, written};

    #[test]
    fn the_entry_joins_other_servers_and_unknown_keys_in_place() {
        let old = r#"{"z": 1, "mcpServers": {"other": {"command": "x", "env": {"A": "1"}}}, "a": [1, 2]}"#;
        let text = written(
            register(Path::new("f"), Some(old), "mcpServers", false, &entry()).expect("edit"),
        );
        assert_eq!(
            text,
            r#"{
  "z": 1,
  "mcpServers": {
    "other": {
      "command": "x",
      "env": {
        "A": "1"
      }
    },
    "capa": {
      "command": "/bin/capa",
      "args": [
        "mcp",
        "--project",
        "/p"
      ]
    }
  },
  "a": [
    1,
    2
  ]
}
"#
        );
        assert_eq!(
            register(Path::new("f"), Some(&text), "mcpServers", false, &entry()).expect("edit"),
            Edit::Unchanged
        );
    }

    #[test]
    fn vscode_entries_say_stdio_and_keep_the_users_keys() {
        let old = r#"{"servers": {"capa": {"env": {"X": "1"}, "command": "/old/capa", "args": ["mcp"]}}}"#;
        let text =
            written(register(Path::new("f"), Some(old), "servers", true, &entry()).expect("edit"));
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(
            value["servers"]["capa"],
            serde_json::json!({"env": {"X": "1"}, "command": "/bin/capa", "args": ["mcp", "--project", "/p"], "type": "stdio"})
        );
    }

    #[test]
    fn removal_takes_only_capas_entry_and_keeps_the_order() {
        let old = r#"{"mcpServers": {"a": {}, "capa": {"command": "/bin/capa", "args": ["mcp"]}, "b": {}}}"#;
        let text = written(unregister(Path::new("f"), old, "mcpServers", None).expect("edit"));
        assert_eq!(
            text,
            "{\n  \"mcpServers\": {\n    \"a\": {},\n    \"b\": {}\n  }\n}\n"
        );
        let only = r#"{"mcpServers": {"capa": {"command": "/bin/capa", "args": ["mcp"]}}}"#;
        assert_eq!(
            unregister(Path::new("f"), only, "mcpServers", None).expect("edit"),
            Edit::Emptied
        );
        let foreign = r#"{"mcpServers": {"capa": {"command": "npx", "args": ["capa-server"]}}}"#;
        assert_eq!(
            unregister(Path::new("f"), foreign, "mcpServers", None).expect("edit"),
            Edit::NotOurs
        );
    }

    #[test]
    fn json_with_comments_is_refused_with_the_entry_to_add_by_hand() {
        let old = "{\n  // mine\n  \"servers\": {}\n}\n";
        let error = register(
            Path::new(".vscode/mcp.json"),
            Some(old),
            "servers",
            true,
            &entry(),
        )
        .expect_err("refused");
        assert_eq!(
            error.to_string(),
            ".vscode/mcp.json is not plain JSON (key must be a string at line 2 column 3); capa does not \
             rewrite it, so nothing of yours is lost. Fix the file, or add this under \"servers\" \
             yourself: \"capa\": {\"type\":\"stdio\",\"command\":\"/bin/capa\",\"args\":[\"mcp\",\"--project\",\"/p\"]}"
        );
    }
}
