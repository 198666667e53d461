//! Text-level edits of a capabilities file for the local API (the UI's "add source"): a server
//! entry is appended under `servers:`, removed, or replaced in place, and every other line — the
//! user's comments, order and formatting — stays as it was. The parser's positions say which
//! lines belong to which entry. The edited text is parsed and checked again before it is
//! returned, so a file is never written in a state the hub cannot load.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{ConfigError, ConfigIssue};
use crate::file::CapabilitiesFile;
use crate::located::Position;
use crate::resolved::SourceConfig;
use crate::validate::CheckedFile;

mod carry;
mod switch;

pub use switch::set_server_disabled;

/// A server entry to write, as the API receives it (`command`, `url`, or an OpenAPI document).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewServer {
    pub id: String,
    pub description: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// Set for `type: openapi`: the document, and where requests go.
    pub openapi: Option<NewOpenApi>,
}

/// The `def` of a `type: openapi` entry beside its `headers`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewOpenApi {
    pub spec: String,
    pub base_url: Option<String>,
    pub auth: BTreeMap<String, String>,
}

/// A YAML double-quoted scalar (JSON strings are valid YAML).
fn quoted(value: &str) -> String {
    serde_json::Value::String(value.to_owned()).to_string()
}

impl NewServer {
    /// The entry as YAML lines, its `- ` at `indent` spaces.
    fn render(&self, indent: usize) -> Vec<String> {
        let pad = " ".repeat(indent);
        let mut lines = vec![
            format!("{pad}- id: {}", quoted(&self.id)),
            format!(
                "{pad}  type: {}",
                if self.openapi.is_some() {
                    "openapi"
                } else {
                    "mcp"
                }
            ),
        ];
        if let Some(description) = &self.description {
            lines.push(format!("{pad}  description: {}", quoted(description)));
        }
        lines.push(format!("{pad}  def:"));
        let map = |lines: &mut Vec<String>, key: &str, values: &BTreeMap<String, String>| {
            if values.is_empty() {
                return;
            }
            lines.push(format!("{pad}    {key}:"));
            for (k, v) in values {
                lines.push(format!("{pad}      {}: {}", quoted(k), quoted(v)));
            }
        };
        if let Some(command) = &self.command {
            lines.push(format!("{pad}    command: {}", quoted(command)));
        }
        if !self.args.is_empty() {
            let args: Vec<String> = self.args.iter().map(|a| quoted(a)).collect();
            lines.push(format!("{pad}    args: [{}]", args.join(", ")));
        }
        map(&mut lines, "env", &self.env);
        if let Some(cwd) = &self.cwd {
            lines.push(format!("{pad}    cwd: {}", quoted(cwd)));
        }
        if let Some(url) = &self.url {
            lines.push(format!("{pad}    url: {}", quoted(url)));
        }
        if let Some(openapi) = &self.openapi {
            lines.push(format!("{pad}    spec: {}", quoted(&openapi.spec)));
            if let Some(base_url) = &openapi.base_url {
                lines.push(format!("{pad}    baseUrl: {}", quoted(base_url)));
            }
            map(&mut lines, "auth", &openapi.auth);
        }
        map(&mut lines, "headers", &self.headers);
        lines
    }
}

fn invalid(file: &Path, message: String, fix: &str) -> ConfigError {
    ConfigError::Invalid(vec![ConfigIssue {
        file: file.to_path_buf(),
        position: Position::default(),
        message,
        fix: Some(fix.to_owned()),
    }])
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// The `servers:` block: the index of its key line, and the lines of its items, each as
/// (first, last) line index (0-based, inclusive), with the items' indent.
struct ServersBlock {
    key: usize,
    items: Vec<(usize, usize)>,
    indent: Option<usize>,
    /// One past the last line that belongs to the block.
    end: usize,
}

fn servers_block(file: &Path, lines: &[&str]) -> Result<Option<ServersBlock>, ConfigError> {
    let Some(key) = lines.iter().position(|l| {
        l.starts_with("servers:") && {
            let rest = l["servers:".len()..].trim();
            let rest = rest.strip_prefix("[]").map_or(rest, str::trim_start);
            rest.is_empty() || rest.starts_with('#')
        }
    }) else {
        if lines.iter().any(|l| l.starts_with("servers:")) {
            return Err(invalid(
                file,
                "`servers:` is written in flow style (`[...]`) and cannot be edited line by line"
                    .into(),
                "write each server as a `- id: …` item under `servers:`",
            ));
        }
        return Ok(None);
    };
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut indent = None;
    let mut end = key + 1;
    let mut last_content = key;
    for (i, line) in lines.iter().enumerate().skip(key + 1) {
        if is_blank_or_comment(line) {
            // Comments and blank lines after an item's content belong to what follows.
            continue;
        }
        let at = indent_of(line);
        let is_item = line.trim_start().starts_with("- ") || line.trim() == "-";
        let belongs = at > 0 || (is_item && indent.is_none_or(|ind| ind == 0));
        if !belongs {
            break;
        }
        if is_item && indent.is_none_or(|ind| ind == at) {
            indent = Some(at);
            if let Some(last) = items.last_mut() {
                last.1 = last_content;
            }
            items.push((i, i));
        }
        last_content = i;
        end = i + 1;
    }
    if let Some(last) = items.last_mut() {
        last.1 = last_content;
    }
    Ok(Some(ServersBlock {
        key,
        items,
        indent,
        end,
    }))
}

/// The item (line range) of server `id`, found through the parser's position of its `id`.
fn item_of(
    file: &Path,
    text: &str,
    block: &ServersBlock,
    id: &str,
) -> Result<(usize, usize), ConfigError> {
    let read = crate::yaml::read::<CapabilitiesFile>(file, text, crate::load::CONFIG_DOCS);
    let Some(parsed) = read.value else {
        return Err(ConfigError::Invalid(read.issues));
    };
    let entry = parsed
        .servers
        .iter()
        .find(|s| s.id.value == id)
        .ok_or_else(|| {
            invalid(
                file,
                format!("no server `{id}` in this file"),
                "check the id",
            )
        })?;
    let line = usize::try_from(entry.id.position.line).unwrap_or(usize::MAX);
    block
        .items
        .iter()
        .copied()
        .find(|(first, last)| (first + 1..=last + 1).contains(&line))
        .ok_or_else(|| {
            invalid(
                file,
                format!("cannot find the lines of server `{id}`"),
                "edit the file by hand",
            )
        })
}

fn join(lines: &[String], trailing_newline: bool) -> String {
    let mut text = lines.join("\n");
    if trailing_newline || !text.is_empty() {
        text.push('\n');
    }
    text
}

/// Checks edited text the way the hub loads it.
fn check(file: &Path, text: &str) -> Result<CheckedFile, ConfigError> {
    crate::load::parse_str(file, text)
}

/// `text` with `server` appended under `servers:` (the key is added when missing), and the
/// source it declares. Refuses an id the file declares already.
pub fn add_server(
    file: &Path,
    text: &str,
    server: &NewServer,
) -> Result<(String, SourceConfig), ConfigError> {
    let before = check(file, text)?;
    if before.declared.contains(&server.id) {
        return Err(invalid(
            file,
            format!("server `{}` is declared already", server.id),
            "pick another id, or edit the existing server",
        ));
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    if let Some(block) = servers_block(file, &lines)? {
        let indent = block.indent.unwrap_or(2);
        // `servers: []` becomes a block (a comment after it stays).
        out[block.key] = out[block.key].replacen("servers: []", "servers:", 1);
        let at = block
            .items
            .last()
            .map_or(block.key + 1, |(_, last)| last + 1);
        let at = at.max(block.key + 1).min(block.end.max(block.key + 1));
        out.splice(at..at, server.render(indent));
    } else {
        if out.last().is_some_and(|l| !l.trim().is_empty()) {
            out.push(String::new());
        }
        out.push("servers:".to_owned());
        out.extend(server.render(2));
    }
    finish(file, &out, &server.id)
}

/// `text` without server `id`'s entry (its lines, comments inside it included).
pub fn remove_server(file: &Path, text: &str, id: &str) -> Result<String, ConfigError> {
    let lines: Vec<&str> = text.lines().collect();
    let block = servers_block(file, &lines)?.ok_or_else(|| {
        invalid(
            file,
            format!("no server `{id}` in this file"),
            "check the id",
        )
    })?;
    let (first, last) = item_of(file, text, &block, id)?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out.drain(first..=last);
    if block.items.len() == 1 {
        // An empty `servers:` would be null; the list stays, empty.
        out[block.key] = out[block.key].replacen("servers:", "servers: []", 1);
    }
    let text = join(&out, true);
    check(file, &text)?;
    Ok(text)
}

/// `text` with server `server.id`'s entry replaced, at the same place.
pub fn replace_server(
    file: &Path,
    text: &str,
    server: &NewServer,
) -> Result<(String, SourceConfig), ConfigError> {
    let lines: Vec<&str> = text.lines().collect();
    let block = servers_block(file, &lines)?.ok_or_else(|| {
        invalid(
            file,
            format!("no server `{}` in this file", server.id),
            "check the id",
        )
    })?;
    let (first, last) = item_of(file, text, &block, &server.id)?;
    let indent = indent_of(lines[first]);
    let mut rendered = server.render(indent);
    // What the form does not edit stays: `expose`, `tools`, the `disabled` switch, …
    rendered.extend(carry::kept_lines(&lines, first, last, indent));
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out.splice(first..=last, rendered);
    finish(file, &out, &server.id)
}

fn finish(file: &Path, out: &[String], id: &str) -> Result<(String, SourceConfig), ConfigError> {
    let text = join(out, true);
    let checked = check(file, &text)?;
    let source = checked
        .sources
        .into_iter()
        .chain(checked.off)
        .find(|s| s.id == id)
        .ok_or_else(|| {
            invalid(
                file,
                format!("server `{id}` did not load after the edit"),
                "edit the file by hand",
            )
        })?;
    Ok((text, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: &str) -> NewServer {
        NewServer {
            id: id.to_owned(),
            command: Some("node".to_owned()),
            args: vec!["a b.js".to_owned(), "stdio".to_owned()],
            env: BTreeMap::from([("TOKEN".to_owned(), "${secret:token}".to_owned())]),
            ..NewServer::default()
        }
    }

    const FILE: &str = "# my hub\nservers:\n  # first one\n  - id: one\n    type: mcp\n    def:\n      command: echo # inline\n\noptions:\n  demo: true # keep\n";

    #[test]
    fn replacing_from_the_form_keeps_expose_tools_and_the_switch() {
        let text = "servers:\n  - id: one\n    type: mcp\n    expose: except\n    tools: [delete_all] # risky\n    disabled: true\n    def:\n      command: echo\n";
        let (edited, source) =
            replace_server(Path::new("c.yaml"), text, &server("one")).expect("replaced");
        assert!(edited.contains("    expose: except\n"), "{edited}");
        assert!(
            edited.contains("    tools: [delete_all] # risky\n"),
            "{edited}"
        );
        assert_eq!(edited.matches("disabled: true").count(), 1, "{edited}");
        assert!(edited.contains("\"a b.js\""), "{edited}");
        assert_eq!(source.id, "one");
    }

    #[test]
    fn adding_keeps_comments_and_loads() {
        let path = Path::new("/x/capabilities.yaml");
        let (text, source) = add_server(path, FILE, &server("two")).expect("add");
        assert!(text.starts_with("# my hub\nservers:\n  # first one\n  - id: one\n"));
        assert!(text.contains("demo: true # keep"));
        assert!(text.contains("command: echo # inline"));
        assert_eq!(source.id, "two");
        let removed = remove_server(path, &text, "two").expect("remove");
        assert_eq!(removed, FILE);
    }

    #[test]
    fn an_openapi_source_is_written_as_one_and_loads() {
        let path = Path::new("/x/capabilities.yaml");
        let server = NewServer {
            id: "pets".to_owned(),
            headers: BTreeMap::from([("X-Org".to_owned(), "acme".to_owned())]),
            openapi: Some(NewOpenApi {
                spec: "https://pets.example/openapi.json".to_owned(),
                base_url: Some("https://pets.example/v1".to_owned()),
                auth: BTreeMap::from([("key".to_owned(), "${secret:key}".to_owned())]),
            }),
            ..NewServer::default()
        };
        let (text, source) = add_server(path, FILE, &server).expect("add");
        assert!(text.contains("    type: openapi\n"), "{text}");
        let crate::SourceTransport::OpenApi { base_url, auth, .. } = &source.transport else {
            panic!("not openapi: {source:?}");
        };
        assert_eq!(base_url.as_deref(), Some("https://pets.example/v1"));
        assert_eq!(auth.get("key").map(String::as_str), Some("${secret:key}"));
    }

    #[test]
    fn removing_the_last_server_leaves_an_empty_list() {
        let path = Path::new("/x/capabilities.yaml");
        let text = "servers: [] # none yet\noptions:\n  demo: true\n";
        let (added, _) = add_server(path, text, &server("two")).expect("add");
        assert_eq!(remove_server(path, &added, "two").expect("remove"), text);
    }

    #[test]
    fn adding_to_a_file_without_servers_adds_the_key() {
        let path = Path::new("/x/capabilities.yaml");
        let (text, _) = add_server(path, "# empty\n", &server("two")).expect("add");
        assert!(text.starts_with("# empty\n\nservers:\n  - id: \"two\"\n"));
        let (text, _) = add_server(path, "", &server("two")).expect("add");
        assert!(text.starts_with("servers:\n"));
        let (text, _) = add_server(path, "servers: []\n", &server("two")).expect("add");
        assert!(text.starts_with("servers:\n  - id"));
    }

    #[test]
    fn replacing_keeps_the_position_and_duplicates_are_refused() {
        let path = Path::new("/x/capabilities.yaml");
        let (text, _) = add_server(path, FILE, &server("two")).expect("add");
        let mut one = server("one");
        one.description = Some("first".to_owned());
        let (replaced, source) = replace_server(path, &text, &one).expect("replace");
        assert_eq!(source.description.as_deref(), Some("first"));
        let first = replaced.find("id: \"one\"").expect("one");
        let second = replaced.find("id: \"two\"").expect("two");
        assert!(first < second);
        assert!(replaced.contains("# first one"));
        assert!(add_server(path, FILE, &server("one")).is_err());
    }
}
