//! A short list of well-known MCP servers, with their real install commands, for the Import
//! page's one-click add. Data in Rust (not in the UI) so that the hub checks what a person fills
//! in and builds the source the same way for the page and for the command line.

use std::collections::BTreeMap;

use capa_config::config_edit::NewServer;
use serde::Serialize;

/// A value the person fills in; it replaces the argument written `{key}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Param {
    pub key: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
    pub example: &'static str,
}

/// A secret the server needs: the `NAME` of the `${secret:NAME}` its definition holds, stored
/// as a field of the source's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NeededSecret {
    pub field: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
}

/// One server of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WellKnown {
    /// Its key in the list, and the source id it gets unless the person picks another.
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// What must be installed for it to start (`Node.js (npx)`, `uv (uvx)`), or nothing.
    pub requires: &'static str,
    pub command: Option<&'static str>,
    pub args: &'static [&'static str],
    pub url: Option<&'static str>,
    pub env: &'static [(&'static str, &'static str)],
    pub headers: &'static [(&'static str, &'static str)],
    pub params: &'static [Param],
    pub secrets: &'static [NeededSecret],
}

const NODE: &str = "Node.js (npx)";
const UV: &str = "uv (uvx)";

const fn stdio(
    key: &'static str,
    name: &'static str,
    description: &'static str,
    requires: &'static str,
    command: &'static str,
    args: &'static [&'static str],
) -> WellKnown {
    WellKnown {
        key,
        name,
        description,
        requires,
        command: Some(command),
        args,
        url: None,
        env: &[],
        headers: &[],
        params: &[],
        secrets: &[],
    }
}

/// The list, in the order the page shows it.
pub const WELL_KNOWN: &[WellKnown] = &[
    WellKnown {
        params: &[Param {
            key: "dir",
            label: "Directory",
            hint: "The directory the server may read and change (nothing outside it).",
            example: "/home/me/notes",
        }],
        ..stdio(
            "filesystem",
            "Filesystem",
            "Read, write, search and move files inside one directory.",
            NODE,
            "npx",
            &["-y", "@modelcontextprotocol/server-filesystem", "{dir}"],
        )
    },
    WellKnown {
        params: &[Param {
            key: "repository",
            label: "Repository",
            hint: "The path of a local Git repository.",
            example: "/home/me/src/project",
        }],
        ..stdio(
            "git",
            "Git",
            "Read and change a local Git repository: status, diff, log, commit, branches.",
            UV,
            "uvx",
            &["mcp-server-git", "--repository", "{repository}"],
        )
    },
    stdio(
        "fetch",
        "Fetch",
        "Fetch a web page and hand it over as Markdown.",
        UV,
        "uvx",
        &["mcp-server-fetch"],
    ),
    stdio(
        "memory",
        "Memory",
        "A knowledge graph of entities and relations kept in a local file across sessions.",
        NODE,
        "npx",
        &["-y", "@modelcontextprotocol/server-memory"],
    ),
    stdio(
        "time",
        "Time",
        "The current time in any time zone, and conversions between zones.",
        UV,
        "uvx",
        &["mcp-server-time"],
    ),
    stdio(
        "sequential-thinking",
        "Sequential thinking",
        "A tool for step-by-step problem solving that can revise and branch its steps.",
        NODE,
        "npx",
        &["-y", "@modelcontextprotocol/server-sequential-thinking"],
    ),
    stdio(
        "playwright",
        "Playwright",
        "Drive a web browser: open pages, click, type, read the page's accessibility tree.",
        NODE,
        "npx",
        &["-y", "@playwright/mcp@latest"],
    ),
    stdio(
        "everything",
        "Everything (reference)",
        "The MCP reference server with a tool, prompt and resource of every kind, for trying things out.",
        NODE,
        "npx",
        &["-y", "@modelcontextprotocol/server-everything"],
    ),
    WellKnown {
        key: "github",
        name: "GitHub",
        description: "GitHub's own remote server: issues, pull requests, code search, Actions.",
        requires: "",
        command: None,
        args: &[],
        url: Some("https://api.githubcopilot.com/mcp/"),
        env: &[],
        headers: &[("Authorization", "Bearer ${secret:GITHUB_TOKEN}")],
        params: &[],
        secrets: &[NeededSecret {
            field: "GITHUB_TOKEN",
            label: "GitHub token",
            hint: "A personal access token (github.com → Settings → Developer settings); it goes to the OS keychain.",
        }],
    },
];

/// The entry with this key.
pub fn find(key: &str) -> Option<&'static WellKnown> {
    WELL_KNOWN.iter().find(|w| w.key == key)
}

/// Longest value a person fills in.
const MAX_PARAM_BYTES: usize = 4096;

impl WellKnown {
    /// The source `id` with the person's `values` in place of the `{key}` arguments. Every
    /// parameter is required; unknown keys are refused.
    pub fn fill(&self, id: &str, values: &BTreeMap<String, String>) -> Result<NewServer, String> {
        if let Some(unknown) = values
            .keys()
            .find(|k| !self.params.iter().any(|p| p.key == *k))
        {
            return Err(format!("{} takes no value `{unknown}`", self.name));
        }
        let mut filled = BTreeMap::new();
        for param in self.params {
            let value = values.get(param.key).map_or("", |v| v.trim());
            if value.is_empty() {
                return Err(format!(
                    "{} needs a value for {} ({})",
                    self.name,
                    param.label,
                    param.hint.trim_end_matches('.')
                ));
            }
            if value.len() > MAX_PARAM_BYTES || value.contains(['\n', '\r', '\0']) {
                return Err(format!(
                    "{} must be one line of at most {MAX_PARAM_BYTES} bytes",
                    param.label
                ));
            }
            filled.insert(format!("{{{}}}", param.key), value.to_owned());
        }
        let pairs = |list: &[(&str, &str)]| -> BTreeMap<String, String> {
            list.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        Ok(NewServer {
            id: id.to_owned(),
            description: Some(self.description.to_owned()),
            command: self.command.map(str::to_owned),
            args: self
                .args
                .iter()
                .map(|a| filled.get(*a).cloned().unwrap_or_else(|| (*a).to_owned()))
                .collect(),
            env: pairs(self.env),
            cwd: None,
            url: self.url.map(str::to_owned),
            headers: pairs(self.headers),
            openapi: None,
        })
    }

    /// The command line as the page shows it (`npx -y @modelcontextprotocol/server-filesystem <dir>`).
    pub fn shown(&self) -> String {
        if let Some(url) = self.url {
            return url.to_owned();
        }
        let args: Vec<String> = self
            .args
            .iter()
            .map(
                |a| match a.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
                    Some(key) => format!("<{key}>"),
                    None => (*a).to_owned(),
                },
            )
            .collect();
        format!("{} {}", self.command.unwrap_or_default(), args.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_consistent() {
        for w in WELL_KNOWN {
            assert!(capa_config::is_source_id(w.key), "{}", w.key);
            assert!(w.command.is_some() != w.url.is_some(), "{}", w.key);
            for p in w.params {
                assert!(
                    w.args.contains(&format!("{{{}}}", p.key).as_str()),
                    "{}",
                    w.key
                );
            }
            let values: Vec<String> = w
                .env
                .iter()
                .chain(w.headers)
                .map(|(_, v)| (*v).to_owned())
                .collect();
            let refs = capa_config::secret_ref::referenced(&values);
            let needed: std::collections::BTreeSet<String> =
                w.secrets.iter().map(|s| s.field.to_owned()).collect();
            assert_eq!(refs, needed, "{}", w.key);
        }
    }

    #[test]
    fn filling_puts_the_values_in_place_and_checks_them() {
        let fs = find("filesystem").expect("filesystem");
        let values = BTreeMap::from([("dir".to_owned(), " /tmp/notes ".to_owned())]);
        let server = fs.fill("files", &values).expect("filled");
        assert_eq!(server.command.as_deref(), Some("npx"));
        assert_eq!(
            server.args,
            [
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "/tmp/notes"
            ]
        );
        assert!(
            fs.fill("files", &BTreeMap::new())
                .expect_err("required")
                .contains("Directory")
        );
        let bad = BTreeMap::from([("dir".to_owned(), "a\nb".to_owned())]);
        assert!(fs.fill("files", &bad).is_err());
        let unknown = BTreeMap::from([("x".to_owned(), "1".to_owned())]);
        assert!(fs.fill("files", &unknown).is_err());
        assert_eq!(
            fs.shown(),
            "npx -y @modelcontextprotocol/server-filesystem <dir>"
        );
        let github = find("github")
            .expect("github")
            .fill("github", &BTreeMap::new())
            .expect("filled");
        assert_eq!(
            github.headers["Authorization"],
            "Bearer ${secret:GITHUB_TOKEN}"
        );
    }
}
